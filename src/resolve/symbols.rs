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

/// Which of `keys` occur in some searched file under `root`.
pub(crate) fn search(root: &Path, layout: &Layout, keys: &[String]) -> Vec<bool> {
    if keys.is_empty() {
        return Vec::new();
    }
    // A contiguous NFA, never a DFA: a DFA's build is super-linear in a repetitive key's
    // length (one 1,000-byte key took 4 s, an 8,000-byte one a minute), and keys come from the
    // document.
    let Ok(automaton) = AhoCorasick::builder()
        .kind(Some(AhoCorasickKind::ContiguousNFA))
        .match_kind(MatchKind::Standard)
        .build(keys)
    else {
        return vec![false; keys.len()];
    };
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
    let found: Vec<AtomicBool> = keys.iter().map(|_| AtomicBool::new(false)).collect();
    let remaining = AtomicUsize::new(keys.len());
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
            scope.spawn(|| worker(&queue, &automaton, carry, &found, &remaining));
        }
    });
    found.iter().map(|f| f.load(Ordering::Relaxed)).collect()
}

fn worker(
    queue: &Queue,
    automaton: &AhoCorasick,
    carry: usize,
    found: &[AtomicBool],
    remaining: &AtomicUsize,
) {
    let mut buf = chunk_buffer();
    loop {
        let item = {
            let Ok(mut state) = queue.state.lock() else {
                return;
            };
            loop {
                if remaining.load(Ordering::Acquire) == 0 {
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
                scan_file(&file, automaton, carry, &mut buf, found, remaining);
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
    found: &[AtomicBool],
    remaining: &AtomicUsize,
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
            let flag = &found[m.pattern().as_usize()];
            if !flag.swap(true, Ordering::AcqRel) && remaining.fetch_sub(1, Ordering::AcqRel) == 1 {
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
