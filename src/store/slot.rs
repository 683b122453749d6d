//! Changing a slot safely (store.md §6): a per-slot advisory lock with a bounded wait, atomic
//! replacement (temp file in the same directory, fsync, rename, directory fsync), history of
//! the last 10 versions, and the `progress:` rewrite that keeps every other byte and the mtime.

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime};

use super::Store;
use crate::document::envelope::ENVELOPE_LINES;
use crate::error::Error;

/// How many versions history keeps per slot.
pub const HISTORY_KEEP: usize = 10;
/// How much of a file readers look at for its envelope.
const HEAD_BYTES: u64 = 64 * 1024;

/// Create `dir` and its missing parents with mode 0700 (existing ones are left alone).
pub fn create_private_dir(dir: &Path) -> Result<(), Error> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(dir).map_err(|e| Error::io(dir, e))
}

/// The first bytes of a file, enough for its envelope.
pub fn read_head(path: &Path) -> std::io::Result<Vec<u8>> {
    let mut buf = Vec::new();
    File::open(path)?.take(HEAD_BYTES).read_to_end(&mut buf)?;
    Ok(buf)
}

/// Read a stored handoff whole, refusing one over the gate's 4 MiB input cap (it could only
/// have been put there by hand): at most the cap and one byte are ever read.
pub fn read_capped(path: &Path) -> Result<Vec<u8>, Error> {
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    match crate::input::read_capped(file) {
        Ok(bytes) => Ok(bytes),
        Err(crate::input::InputError::TooLarge) => {
            Err(Error::TooLarge(path.to_string_lossy().into_owned()))
        }
        Err(e) => Err(Error::io(
            path,
            std::io::Error::other(e.gate_message(&path.to_string_lossy())),
        )),
    }
}

/// A held slot lock; released when dropped.
#[derive(Debug)]
pub struct SlotLock {
    _file: File,
}

/// Why a lock was not taken.
#[derive(Debug)]
pub enum LockFailure {
    Busy,
    Io(Error),
}

/// Take the exclusive lock of slot `name`, waiting at most `wait`.
pub fn lock(store: &Store, name: &str, wait: Duration) -> Result<SlotLock, LockFailure> {
    let dir = store.dir.join(".locks");
    create_private_dir(&dir).map_err(LockFailure::Io)?;
    let path = dir.join(format!("{name}.lock"));
    let mut options = OpenOptions::new();
    options.create(true).truncate(false).write(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let file = options
        .open(&path)
        .map_err(|e| LockFailure::Io(Error::io(&path, e)))?;
    let deadline = Instant::now() + wait;
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(SlotLock { _file: file }),
            Err(std::fs::TryLockError::WouldBlock) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(std::fs::TryLockError::WouldBlock) => return Err(LockFailure::Busy),
            Err(std::fs::TryLockError::Error(e)) => {
                return Err(LockFailure::Io(Error::io(&path, e)));
            }
        }
    }
}

/// The CLI's lock: 10 s, then the exact "locked by another process" error.
pub fn lock_cli(store: &Store, name: &str) -> Result<SlotLock, Error> {
    lock(store, name, Duration::from_secs(10)).map_err(|f| match f {
        LockFailure::Busy => Error::Locked(store.path_of(name).to_string_lossy().into_owned()),
        LockFailure::Io(e) => e,
    })
}

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);
static MUTATIONS: AtomicU64 = AtomicU64::new(0);

/// The test seam for crash tests: with `HANDOFF_STORE_KILL_AT=N` set, the process kills itself
/// with SIGKILL just before its Nth store mutation (a temp file created, a rename, a removal),
/// so a test can stop any operation at each of its steps. Unset, it is one env lookup.
fn kill_point() {
    let n = MUTATIONS.fetch_add(1, Ordering::Relaxed) + 1;
    if std::env::var("HANDOFF_STORE_KILL_AT").is_ok_and(|v| v.parse() == Ok(n)) {
        let _ = nix::sys::signal::raise(nix::sys::signal::Signal::SIGKILL);
    }
}

/// Remove a file the store owns, as one counted mutation.
pub fn remove(path: &Path) -> std::io::Result<()> {
    kill_point();
    std::fs::remove_file(path)
}

fn temp_name(target: &Path) -> PathBuf {
    let base = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let nanos = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos() as u64);
    let salt = nanos ^ (TEMP_COUNTER.fetch_add(1, Ordering::Relaxed) << 32);
    let name = format!(".tmp.{base}.{}.{salt:x}", std::process::id());
    target.with_file_name(name)
}

/// Atomically replace `target` with `bytes` (store.md §6.2). `mtime` is set before the rename
/// when the operation preserves it; `mode` is applied to the new file (default 0600).
pub fn replace(
    target: &Path,
    bytes: &[u8],
    mtime: Option<SystemTime>,
    mode: Option<u32>,
) -> Result<(), Error> {
    replace_from(target, &mut &bytes[..], mtime, mode)
}

/// [`replace`] with the bytes streamed from `source`, so a file of any size is copied in
/// bounded memory.
pub fn replace_from(
    target: &Path,
    source: &mut dyn Read,
    mtime: Option<SystemTime>,
    mode: Option<u32>,
) -> Result<(), Error> {
    let temp = temp_name(target);
    kill_point();
    let result = write_temp(&temp, source, mtime, mode).and_then(|()| {
        kill_point();
        std::fs::rename(&temp, target)
    });
    if let Err(e) = result {
        let _ = std::fs::remove_file(&temp);
        return Err(Error::io(target, e));
    }
    sync_dir_of(target);
    Ok(())
}

/// Make a rename or removal in `path`'s directory durable.
fn sync_dir_of(path: &Path) {
    #[cfg(unix)]
    if let Some(dir) = path.parent().and_then(|d| {
        File::open(if d.as_os_str().is_empty() {
            Path::new(".")
        } else {
            d
        })
        .ok()
    }) {
        let _ = dir.sync_all();
    }
    #[cfg(not(unix))]
    let _ = path;
}

fn write_temp(
    temp: &Path,
    source: &mut dyn Read,
    mtime: Option<SystemTime>,
    mode: Option<u32>,
) -> std::io::Result<()> {
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options.open(temp)?;
    #[cfg(unix)]
    if let Some(mode) = mode {
        use std::os::unix::fs::PermissionsExt;
        file.set_permissions(std::fs::Permissions::from_mode(mode))?;
    }
    #[cfg(not(unix))]
    let _ = mode;
    std::io::copy(source, &mut file)?;
    file.flush()?;
    file.sync_all()?;
    if let Some(t) = mtime {
        file.set_modified(t)?;
    }
    Ok(())
}

/// The permission bits of an existing file, to keep them across a rewrite.
pub fn mode_of(meta: &std::fs::Metadata) -> Option<u32> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        Some(meta.permissions().mode() & 0o7777)
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        None
    }
}

/// The pid in a temp file's name (`.tmp.<base>.<pid>.<salt>`).
fn temp_pid(file_name: &str) -> Option<i32> {
    let rest = file_name.strip_prefix(".tmp.")?;
    let mut parts = rest.rsplitn(3, '.');
    let _salt = parts.next()?;
    parts.next()?.parse().ok()
}

/// Whether a temp file is stale: over an hour old (store.md §6.2), or made by a process that
/// is gone (its pid is dead). Our own files are never stale.
fn temp_is_stale(file_name: &str, meta: &std::fs::Metadata) -> bool {
    let pid = temp_pid(file_name);
    if pid == Some(std::process::id() as i32) {
        return false;
    }
    meta.modified().is_ok_and(is_older_than_an_hour)
        || pid.is_some_and(|pid| pid > 0 && !pid_alive(pid))
}

/// Whether process `pid` exists (ESRCH is the only "gone"; EPERM means alive, not ours).
pub fn pid_alive(pid: i32) -> bool {
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None) != Err(nix::errno::Errno::ESRCH)
}

/// Remove the temp files of dead processes in the store directory and in slot `name`'s history
/// directory (called under the slot lock, before a write), so a killed writer leaves nothing
/// the next write does not clean. A live writer's file is never touched.
pub fn clean_temps(store: &Store, name: &str) {
    for dir in [store.dir.clone(), history_dir(store, name)] {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let file_name = e.file_name();
            let file_name = file_name.to_string_lossy();
            if !file_name.starts_with(".tmp.") {
                continue;
            }
            if let Ok(meta) = e.metadata()
                && meta.is_file()
                && temp_is_stale(&file_name, &meta)
            {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }
}

/// Whether a time lies more than an hour in the past.
pub fn is_older_than_an_hour(t: SystemTime) -> bool {
    SystemTime::now()
        .duration_since(t)
        .is_ok_and(|d| d > Duration::from_secs(3600))
}

/// One kept version of a slot.
#[derive(Debug, Clone)]
pub struct Version {
    pub path: PathBuf,
    pub mtime: Option<SystemTime>,
    pub size: u64,
}

/// `<store>/.history/<name>/`.
pub fn history_dir(store: &Store, name: &str) -> PathBuf {
    store.dir.join(".history").join(name)
}

/// Kept versions, newest first (mtime, then name).
pub fn versions(store: &Store, name: &str) -> Vec<Version> {
    let Ok(entries) = std::fs::read_dir(history_dir(store, name)) else {
        return Vec::new();
    };
    let mut out: Vec<(Version, String)> = entries
        .flatten()
        .filter_map(|e| {
            let fname = e.file_name().to_string_lossy().into_owned();
            let meta = std::fs::symlink_metadata(e.path()).ok()?;
            (fname.ends_with(".md") && !fname.starts_with('.') && meta.is_file()).then(|| {
                (
                    Version {
                        path: e.path(),
                        mtime: meta.modified().ok(),
                        size: meta.len(),
                    },
                    fname,
                )
            })
        })
        .collect();
    out.sort_by(|(a, an), (b, bn)| b.mtime.cmp(&a.mtime).then_with(|| an.cmp(bn)));
    out.into_iter().map(|(v, _)| v).collect()
}

/// `YYYYMMDDTHHMMSSZ` of a time, in UTC.
pub fn stamp(t: SystemTime) -> String {
    chrono::DateTime::<chrono::Utc>::from(t)
        .format("%Y%m%dT%H%M%SZ")
        .to_string()
}

/// Whether two files hold the same bytes, compared in chunks.
pub fn same_content(a: &Path, b: &Path) -> bool {
    let (Ok(mut fa), Ok(mut fb)) = (File::open(a), File::open(b)) else {
        return false;
    };
    if fa.metadata().map(|m| m.len()).ok() != fb.metadata().map(|m| m.len()).ok() {
        return false;
    }
    let (mut ba, mut bb) = (vec![0u8; 64 * 1024], vec![0u8; 64 * 1024]);
    loop {
        let n = match fa.read(&mut ba) {
            Ok(n) => n,
            Err(_) => return false,
        };
        if n == 0 {
            return fb.read(&mut bb[..1]).is_ok_and(|m| m == 0);
        }
        if fb.read_exact(&mut bb[..n]).is_err() || ba[..n] != bb[..n] {
            return false;
        }
    }
}

/// Whether `path` holds exactly `bytes`.
fn holds(path: &Path, bytes: &[u8]) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.len() == bytes.len() as u64)
        && File::open(path)
            .and_then(|f| {
                let mut buf = Vec::with_capacity(bytes.len());
                f.take(bytes.len() as u64 + 1).read_to_end(&mut buf)?;
                Ok(buf == bytes)
            })
            .unwrap_or(false)
}

/// Keep the current slot in history before it is replaced by `new_bytes` (store.md §6.3):
/// only a non-empty regular file that is not a placeholder and differs from the new bytes.
/// The copy is durable when this returns; retention is the caller's last step ([`retain`]).
pub fn keep_current(
    store: &Store,
    name: &str,
    new_bytes: Option<&[u8]>,
) -> Result<Option<PathBuf>, Error> {
    let slot = store.path_of(name);
    let Ok(meta) = std::fs::symlink_metadata(&slot) else {
        return Ok(None);
    };
    if !meta.is_file() || meta.len() == 0 {
        return Ok(None);
    }
    if new_bytes.is_some_and(|b| holds(&slot, b)) {
        return Ok(None);
    }
    let head = read_head(&slot).map_err(|e| Error::io(&slot, e))?;
    if progress_of(&head).as_deref() == Some("writing") {
        return Ok(None);
    }
    let mtime = meta.modified().map_err(|e| Error::io(&slot, e))?;
    keep_file(store, name, &slot, mtime).map(Some)
}

/// Add the file at `source` with `mtime` as a history version, unless history already holds
/// the same bytes (then that version's path is returned): identical bytes are kept once.
pub fn keep_file(
    store: &Store,
    name: &str,
    source: &Path,
    mtime: SystemTime,
) -> Result<PathBuf, Error> {
    if let Some(same) = versions(store, name)
        .into_iter()
        .find(|v| same_content(&v.path, source))
    {
        return Ok(same.path);
    }
    let dir = history_dir(store, name);
    create_private_dir(&dir)?;
    let base = stamp(mtime);
    let mut path = dir.join(format!("{base}.md"));
    let mut n = 2;
    while std::fs::symlink_metadata(&path).is_ok() {
        path = dir.join(format!("{base}-{n}.md"));
        n += 1;
    }
    let mut file = File::open(source).map_err(|e| Error::io(source, e))?;
    replace_from(&path, &mut file, Some(mtime), None)?;
    Ok(path)
}

/// Retention (store.md §6.3): the newest 10 distinct versions stay; an older copy of bytes a
/// newer version holds, and everything past the tenth, are removed. Called last, once the slot
/// is durably replaced, so no step before it can leave a version only in a deleted file.
pub fn retain(store: &Store, name: &str) {
    let mut kept: Vec<Version> = Vec::new();
    for v in versions(store, name) {
        let duplicate = kept.iter().any(|k| same_content(&k.path, &v.path));
        if duplicate || kept.len() >= HISTORY_KEEP {
            let _ = remove(&v.path);
        } else {
            kept.push(v);
        }
    }
}

/// Replace slot `name` with `bytes` (the caller holds its lock): refuse a slot that is not a
/// regular file, clean dead writers' temp files, keep the current version in history, replace,
/// and only then apply retention.
pub fn replace_slot(store: &Store, name: &str, bytes: &[u8]) -> Result<Option<PathBuf>, Error> {
    let path = store.path_of(name);
    if let Ok(meta) = std::fs::symlink_metadata(&path)
        && !meta.file_type().is_file()
    {
        return Err(Error::NotRegular(path.to_string_lossy().into_owned()));
    }
    clean_temps(store, name);
    let kept = keep_current(store, name, Some(bytes))?;
    replace(&path, bytes, None, None)?;
    retain(store, name);
    Ok(kept)
}

/// Swap history version `chosen` into slot `name` with its own mtime (the caller holds the
/// lock). The order is what keeps every version (issue: restore lost the one it restored):
/// the displaced slot is durably in history, then the chosen bytes are durably in the slot,
/// and only then does the chosen file leave history. A kill or an error between two steps
/// leaves a duplicate at worst, never a loss.
pub fn restore_version(
    store: &Store,
    name: &str,
    chosen: &Version,
    mtime: SystemTime,
) -> Result<Option<PathBuf>, Error> {
    let slot = store.path_of(name);
    clean_temps(store, name);
    let kept = if same_content(&slot, &chosen.path) {
        None
    } else {
        keep_current(store, name, None)?
    };
    let mut source = File::open(&chosen.path).map_err(|e| Error::io(&chosen.path, e))?;
    replace_from(&slot, &mut source, Some(mtime), None)?;
    if kept.as_deref() != Some(chosen.path.as_path()) {
        remove(&chosen.path).map_err(|e| Error::io(&chosen.path, e))?;
        sync_dir_of(&chosen.path);
    }
    retain(store, name);
    Ok(kept)
}

/// The envelope lines of raw bytes: (start, end-without-newline, has-newline) per line.
fn envelope_lines(bytes: &[u8]) -> Vec<(usize, usize, bool)> {
    let mut out = Vec::new();
    let mut start = 0;
    while start < bytes.len() && out.len() < ENVELOPE_LINES {
        let end = memchr::memchr(b'\n', &bytes[start..]).map_or(bytes.len(), |i| start + i);
        let line = &bytes[start..end];
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.starts_with(b"## ") {
            break;
        }
        out.push((start, end, end < bytes.len()));
        start = end + 1;
    }
    out
}

fn field_of<'a>(bytes: &'a [u8], start: usize, end: usize, name: &str) -> Option<&'a [u8]> {
    let line = &bytes[start..end];
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    line.strip_prefix(name.as_bytes())?.strip_prefix(b":")
}

/// The `progress:` value a store reader sees (trimmed; empty counts as absent).
pub fn progress_of(bytes: &[u8]) -> Option<String> {
    envelope_lines(bytes).into_iter().find_map(|(s, e, _)| {
        let v = field_of(bytes, s, e, "progress")?;
        let v = String::from_utf8_lossy(v)
            .trim_matches([' ', '\t'])
            .to_string();
        (!v.is_empty()).then_some(v)
    })
}

/// The outcome of a `progress:` rewrite.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rewrite {
    /// Neither `progress:` nor `status:` in the envelope.
    NoField,
    /// Already the requested value.
    Same,
    Changed {
        old: Option<String>,
        bytes: Vec<u8>,
    },
}

/// Rewrite every envelope `progress:` line to `value`, or insert one after the first
/// `status:` line (store.md §9.6). Every other byte is kept.
pub fn rewrite_progress(bytes: &[u8], value: &str) -> Rewrite {
    let lines = envelope_lines(bytes);
    let progress: Vec<&(usize, usize, bool)> = lines
        .iter()
        .filter(|(s, e, _)| field_of(bytes, *s, *e, "progress").is_some())
        .collect();
    let new_line = format!("progress: {value}");
    if let Some(first) = progress.first() {
        let old = field_of(bytes, first.0, first.1, "progress").map(|v| {
            String::from_utf8_lossy(v)
                .trim_matches([' ', '\t'])
                .to_string()
        });
        if old.as_deref() == Some(value) && progress.len() == 1 {
            return Rewrite::Same;
        }
        let mut out = Vec::with_capacity(bytes.len() + 16);
        let mut at = 0;
        for (s, e, _) in &progress {
            out.extend_from_slice(&bytes[at..*s]);
            out.extend_from_slice(new_line.as_bytes());
            if bytes[*s..*e].ends_with(b"\r") {
                out.push(b'\r');
            }
            at = *e;
        }
        out.extend_from_slice(&bytes[at..]);
        if out == bytes {
            return Rewrite::Same;
        }
        return Rewrite::Changed {
            old: old.filter(|o| !o.is_empty()),
            bytes: out,
        };
    }
    let Some((index, &(s, e, has_newline))) = lines
        .iter()
        .enumerate()
        .find(|(_, (s, e, _))| field_of(bytes, *s, *e, "status").is_some())
    else {
        return Rewrite::NoField;
    };
    // A line inserted after the 20th would fall outside the envelope, where no reader looks
    // (found by the property tests): then there is no place for the field.
    if index + 1 >= ENVELOPE_LINES {
        return Rewrite::NoField;
    }
    let crlf = bytes[s..e].ends_with(b"\r");
    let mut out = Vec::with_capacity(bytes.len() + 24);
    out.extend_from_slice(&bytes[..e]);
    if has_newline {
        out.push(b'\n');
        out.extend_from_slice(new_line.as_bytes());
        if crlf {
            out.push(b'\r');
        }
        out.push(b'\n');
        out.extend_from_slice(&bytes[e + 1..]);
    } else {
        // The status line ended the file without a newline: give it one, and the inserted
        // line ends without one.
        out.push(b'\n');
        out.extend_from_slice(new_line.as_bytes());
    }
    Rewrite::Changed {
        old: None,
        bytes: out,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rewritten(input: &str, value: &str) -> Rewrite {
        rewrite_progress(input.as_bytes(), value)
    }

    #[test]
    fn replaces_every_envelope_progress_line_keeping_cr() {
        let r = rewritten(
            "# H\r\nprogress: complete\r\nx\tprogress: no\r\nprogress: x\n## N\nprogress: body\n",
            "consumed",
        );
        let Rewrite::Changed { old, bytes } = r else {
            panic!("not changed")
        };
        assert_eq!(old.as_deref(), Some("complete"));
        assert_eq!(
            String::from_utf8_lossy(&bytes),
            "# H\r\nprogress: consumed\r\nx\tprogress: no\r\nprogress: consumed\n## N\nprogress: body\n"
        );
    }

    #[test]
    fn inserts_after_the_first_status_line() {
        let Rewrite::Changed { bytes, .. } = rewritten("# H\nstatus: a\nstatus: b\n", "consumed")
        else {
            panic!()
        };
        assert_eq!(bytes, b"# H\nstatus: a\nprogress: consumed\nstatus: b\n");
        let Rewrite::Changed { bytes, .. } = rewritten("# H\r\nstatus: a", "consumed") else {
            panic!()
        };
        assert_eq!(bytes, b"# H\r\nstatus: a\nprogress: consumed");
        let Rewrite::Changed { bytes, .. } = rewritten("# H\r\nstatus: a\r\nz", "consumed") else {
            panic!()
        };
        assert_eq!(bytes, b"# H\r\nstatus: a\r\nprogress: consumed\r\nz");
    }

    #[test]
    fn same_value_and_missing_fields() {
        assert_eq!(
            rewritten("# H\nprogress: consumed\n", "consumed"),
            Rewrite::Same
        );
        assert_eq!(
            rewritten("# H\n## x\nstatus: a\n", "consumed"),
            Rewrite::NoField
        );
        let late = format!("# H\n{}status: a\n", "x\n".repeat(20));
        assert_eq!(rewritten(&late, "consumed"), Rewrite::NoField);
        // Regression (property tests): a `status:` on line 20 has no room after it; the
        // inserted `progress:` on line 21 was invisible to every reader.
        let last = format!("# H\n{}status: a\n", "x\n".repeat(18));
        assert_eq!(rewritten(&last, "consumed"), Rewrite::NoField);
        let room = format!("# H\n{}status: a\n", "x\n".repeat(17));
        assert!(matches!(
            rewritten(&room, "consumed"),
            Rewrite::Changed { .. }
        ));
    }
}

/// What a `progress:` flip did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Flip {
    Changed {
        old: Option<String>,
    },
    Same,
    NoField,
    /// The file is no longer the version the caller saw.
    Replaced,
}

/// Rewrite `path`'s `progress:` to `value` atomically, keeping its mtime and permission bits.
/// With `expect`, the file's (mtime, size) must still be those; otherwise nothing is written.
/// The caller holds the slot lock when the file is a slot.
pub fn flip_progress(
    path: &Path,
    value: &str,
    expect: Option<(Option<SystemTime>, u64)>,
) -> Result<Flip, Error> {
    let meta = std::fs::symlink_metadata(path).map_err(|e| Error::io(path, e))?;
    if !meta.file_type().is_file() {
        return Err(Error::NotRegular(path.to_string_lossy().into_owned()));
    }
    if meta.len() > crate::input::MAX_BYTES {
        return Err(Error::TooLarge(path.to_string_lossy().into_owned()));
    }
    if let Some((mtime, size)) = expect
        && (meta.modified().ok() != mtime || meta.len() != size)
    {
        return Ok(Flip::Replaced);
    }
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .map_err(|e| Error::io(path, e))?;
    let mut bytes = Vec::new();
    (&mut file)
        .take(crate::input::MAX_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io(path, e))?;
    if bytes.len() as u64 > crate::input::MAX_BYTES {
        return Err(Error::TooLarge(path.to_string_lossy().into_owned()));
    }
    match rewrite_progress(&bytes, value) {
        Rewrite::NoField => Ok(Flip::NoField),
        Rewrite::Same => Ok(Flip::Same),
        Rewrite::Changed { old, bytes } => {
            let mtime = meta.modified().map_err(|e| Error::io(path, e))?;
            replace(path, &bytes, Some(mtime), mode_of(&meta))?;
            Ok(Flip::Changed { old })
        }
    }
}
