//! Atomic file operations of the store (docs/store.md §6.2): `crate::durable`'s replacement with
//! the store's errors; removal as one counted mutation; stale temp files of dead writers
//! cleaned.

use std::io::Read;
use std::path::Path;
use std::time::{Duration, SystemTime};

use super::super::Store;
use crate::error::Error;
use crate::process::kill_point;

/// Remove a file the store owns, as one counted mutation.
pub(crate) fn remove(path: &Path) -> std::io::Result<()> {
    kill_point();
    crate::fs::remove_file(path)
}

/// Atomically replace `target` with `bytes` (docs/store.md §6.2). `mtime` is set before the rename
/// when the operation preserves it; `mode` is applied to the new file (default 0600).
pub(crate) fn replace(
    target: &Path,
    bytes: &[u8],
    mtime: Option<SystemTime>,
    mode: Option<u32>,
) -> Result<(), Error> {
    replace_from(target, &mut &bytes[..], mtime, mode)
}

/// [`replace`] with the bytes streamed from `source`, so a file of any size is copied in
/// bounded memory.
pub(crate) fn replace_from(
    target: &Path,
    source: &mut dyn Read,
    mtime: Option<SystemTime>,
    mode: Option<u32>,
) -> Result<(), Error> {
    crate::durable::replace_from(target, source, mtime, mode).map_err(|e| Error::io(target, e))
}

pub(super) use crate::durable::sync_dir_of;

pub(crate) use crate::durable::mode_of;

/// The pid in a temp file's name (`.tmp.<base>.<pid>.<salt>`).
fn temp_pid(file_name: &str) -> Option<i32> {
    let rest = file_name.strip_prefix(".tmp.")?;
    let mut parts = rest.rsplitn(3, '.');
    let _salt = parts.next()?;
    parts.next()?.parse().ok()
}

/// Whether a temp file is stale: over an hour old (docs/store.md §6.2), or made by a process that
/// is gone (its pid is dead). Our own files are never stale.
fn temp_is_stale(file_name: &str, meta: &crate::fs::Metadata) -> bool {
    let pid = temp_pid(file_name);
    if pid == Some(std::process::id() as i32) {
        return false;
    }
    meta.modified().is_ok_and(is_older_than_an_hour)
        || pid.is_some_and(|pid| pid > 0 && !pid_alive(pid))
}

/// Whether process `pid` exists (ESRCH is the only "gone"; EPERM means alive, not ours).
pub(crate) fn pid_alive(pid: i32) -> bool {
    crate::process::alive(pid)
}

/// Remove the temp files of dead processes in the store directory and in slot `name`'s history
/// directory (called under the slot lock, before a write), so a killed writer leaves nothing
/// the next write does not clean. A live writer's file is never touched.
pub(crate) fn clean_temps(store: &Store, name: &str) {
    for dir in [store.dir.clone(), store.history_dir(name)] {
        let Ok(entries) = crate::fs::read_dir(&dir) else {
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
                let _ = crate::fs::remove_file(e.path());
            }
        }
    }
}

/// Whether a time lies more than an hour in the past.
pub(crate) fn is_older_than_an_hour(t: SystemTime) -> bool {
    SystemTime::now()
        .duration_since(t)
        .is_ok_and(|d| d > Duration::from_secs(3600))
}
