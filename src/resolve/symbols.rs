//! The symbol search (docs/gate.md §3.8, §7): every distinct symbol key of a run is compiled into
//! ONE aho-corasick automaton and searched with OVERLAPPING matching (a non-overlapping search
//! hides `Foo` inside `FooBar` when both are keys). One parallel walk over the search roots and
//! top-level files reads each file at most once and stops as soon as every key is found.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};

use std::ops::ControlFlow;

use aho_corasick::{AhoCorasick, AhoCorasickKind, MatchKind};

use super::layout::Layout;
use super::scan::{BINARY_PROBE, chunk_buffer, for_each_chunk};

/// Directory names skipped at any depth.
const SKIPPED_DIRS: [&str; 3] = ["node_modules", "vendor", ".git"];

enum Work {
    Dir(PathBuf),
    File(PathBuf),
}

struct Queue {
    state: Mutex<(Vec<Work>, usize)>,
    ready: Condvar,
}

/// What a walk does with a key found in a file: note it, and say whether the walk may stop.
type OnHit<'a> = &'a (dyn Fn(usize, &Path) -> bool + Sync);

/// Which of `keys` occur in some searched file under `root`.
pub(crate) fn search(root: &Path, layout: &Layout, keys: &[String]) -> Vec<bool> {
    let found: Vec<AtomicBool> = keys.iter().map(|_| AtomicBool::new(false)).collect();
    let remaining = AtomicUsize::new(keys.len());
    walk(roots(root, layout), keys, &|key, _| {
        !found[key].swap(true, Ordering::AcqRel) && remaining.fetch_sub(1, Ordering::AcqRel) == 1
    });
    found.iter().map(|f| f.load(Ordering::Relaxed)).collect()
}

/// For each of `keys`, the one line of `files` (paths relative to `root`) holding it, or `None`
/// when no line or more than one does: where a cited line went when git says it left its file
/// (docs/gate.md §3.5). Files under a skipped directory (`vendor`, `node_modules`) are not
/// read. The walk stops once every key is in two files.
pub(crate) fn locate(root: &Path, files: &[String], keys: &[String]) -> Vec<Option<(String, u64)>> {
    let work: Vec<Work> = files
        .iter()
        .filter(|f| !f.split('/').any(|c| SKIPPED_DIRS.contains(&c)))
        .map(|f| Work::File(root.join(f)))
        .collect();
    let seen: Vec<Mutex<Vec<PathBuf>>> = keys.iter().map(|_| Mutex::new(Vec::new())).collect();
    let settled = AtomicUsize::new(0);
    walk(work, keys, &|key, path| {
        let Ok(mut seen) = seen[key].lock() else {
            return false;
        };
        if seen.len() >= 2 || seen.iter().any(|p| p == path) {
            return false;
        }
        seen.push(path.to_path_buf());
        seen.len() == 2 && settled.fetch_add(1, Ordering::AcqRel) + 1 == keys.len()
    });
    seen.into_iter()
        .zip(keys)
        .map(|(seen, key)| {
            let seen = seen.into_inner().ok()?;
            let [only] = seen.as_slice() else {
                return None;
            };
            let bytes = read_capped(only)?;
            let [line] = super::scan::lines_holding(&bytes, key, 2)[..] else {
                return None;
            };
            let rel = only.strip_prefix(root).ok()?.to_str()?.to_string();
            Some((rel, line))
        })
        .collect()
}

/// A searched file's bytes, when it is at most `git::follow::MAX_BYTES`.
fn read_capped(path: &Path) -> Option<Vec<u8>> {
    use std::io::Read;
    let file = crate::fs::FdFile::open(path).ok()?;
    let mut bytes = Vec::new();
    file.take(crate::git::follow::MAX_BYTES + 1)
        .read_to_end(&mut bytes)
        .ok()?;
    (bytes.len() as u64 <= crate::git::follow::MAX_BYTES).then_some(bytes)
}

/// The symbol search's starting points: the search roots and the top-level files.
fn roots(root: &Path, layout: &Layout) -> Vec<Work> {
    let mut work: Vec<Work> = layout
        .search_roots
        .iter()
        .map(|r| Work::Dir(root.join(r)))
        .collect();
    work.extend(
        layout
            .top_level_files
            .iter()
            .map(|f| Work::File(root.join(f))),
    );
    work
}

/// One parallel walk from `work`, each file read at most once, calling `on_hit` for every key
/// found in it until `on_hit` says the walk may stop.
fn walk(work: Vec<Work>, keys: &[String], on_hit: OnHit<'_>) {
    if keys.is_empty() {
        return;
    }
    // A contiguous NFA, never a DFA: a DFA's build is super-linear in a repetitive key's
    // length (one 1,000-byte key took 4 s, an 8,000-byte one a minute), and keys come from the
    // document.
    let Ok(automaton) = AhoCorasick::builder()
        .kind(Some(AhoCorasickKind::ContiguousNFA))
        .match_kind(MatchKind::Standard)
        .build(keys)
    else {
        return;
    };
    let done = AtomicBool::new(false);
    let queue = Queue {
        state: Mutex::new((work, 0)),
        ready: Condvar::new(),
    };
    let carry = keys.iter().map(String::len).max().unwrap_or(1) - 1;
    let threads = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .min(8);
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| worker(&queue, &automaton, carry, on_hit, &done));
        }
    });
}

fn worker(
    queue: &Queue,
    automaton: &AhoCorasick,
    carry: usize,
    on_hit: OnHit<'_>,
    done: &AtomicBool,
) {
    let mut buf = chunk_buffer();
    loop {
        let item = {
            let Ok(mut state) = queue.state.lock() else {
                return;
            };
            loop {
                if done.load(Ordering::Acquire) {
                    queue.ready.notify_all();
                    return;
                }
                if let Some(item) = state.0.pop() {
                    state.1 += 1;
                    break item;
                }
                if state.1 == 0 {
                    queue.ready.notify_all();
                    return;
                }
                state = match queue.ready.wait(state) {
                    Ok(s) => s,
                    Err(_) => return,
                };
            }
        };
        let children = match item {
            Work::Dir(dir) => list_dir(&dir),
            Work::File(file) => {
                scan_file(&file, automaton, carry, &mut buf, on_hit, done);
                Vec::new()
            }
        };
        let Ok(mut state) = queue.state.lock() else {
            return;
        };
        state.0.extend(children);
        state.1 -= 1;
        queue.ready.notify_all();
    }
}

fn list_dir(dir: &Path) -> Vec<Work> {
    let Ok(entries) = crate::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| {
            let kind = e.file_type().ok()?;
            let name = e.file_name();
            let name = name.to_string_lossy();
            if kind.is_dir() {
                (!SKIPPED_DIRS.contains(&name.as_ref())).then(|| Work::Dir(e.path()))
            } else if kind.is_file() {
                (!name.ends_with(".md")).then(|| Work::File(e.path()))
            } else {
                None // symlinks are never followed
            }
        })
        .collect()
}

/// Search one file in chunks; the window carries the last `carry` bytes (the longest key less
/// one) of the previous chunk, so a key across a chunk border is still found and memory stays
/// at one chunk whatever the file's size.
fn scan_file(
    path: &Path,
    automaton: &AhoCorasick,
    carry: usize,
    buf: &mut [u8],
    on_hit: OnHit<'_>,
    done: &AtomicBool,
) {
    // Every file of the tree may be opened here: no path copied per open (fs-err would).
    let Ok(file) = crate::fs::FdFile::open(path) else {
        return;
    };
    let mut window: Vec<u8> = Vec::new();
    let mut first = true;
    let _ = for_each_chunk(file, buf, |chunk| {
        if std::mem::take(&mut first)
            && memchr::memchr(0, &chunk[..chunk.len().min(BINARY_PROBE)]).is_some()
        {
            return ControlFlow::Break(());
        }
        // Nothing carried (a file's first chunk): search in place.
        let direct = window.is_empty();
        if !direct {
            window.extend_from_slice(chunk);
        }
        let hay: &[u8] = if direct { chunk } else { &window };
        for m in automaton.find_overlapping_iter(hay) {
            if on_hit(m.pattern().as_usize(), path) {
                done.store(true, Ordering::Release);
                return ControlFlow::Break(());
            }
        }
        let keep_from = hay.len().saturating_sub(carry);
        if direct {
            window.extend_from_slice(&chunk[keep_from..]);
        } else {
            window.drain(..keep_from);
        }
        ControlFlow::Continue(())
    });
}
