//! Atomic file operations of the store (docs/store.md §6.2): `crate::durable`'s replacement with
//! the store's errors; removal as one counted mutation; stale temp files of dead writers
//! cleaned.

use std::io::Read;
use std::path::Path;
use std::time::SystemTime;

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

use crate::durable::temp_is_stale;

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
