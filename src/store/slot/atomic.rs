//! Atomic file operations (docs/store.md §6.2): temp file in the same directory, fsync, rename,
//! directory fsync; stale temp files of dead writers cleaned; the crash-test kill seam.

use crate::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use super::super::Store;
use crate::error::Error;
use crate::process::kill_point;

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Remove a file the store owns, as one counted mutation.
pub(crate) fn remove(path: &Path) -> std::io::Result<()> {
    kill_point();
    crate::fs::remove_file(path)
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
    let temp = temp_name(target);
    kill_point();
    let result = write_temp(&temp, source, mtime, mode).and_then(|()| {
        kill_point();
        crate::fs::rename(&temp, target)
    });
    if let Err(e) = result {
        let _ = crate::fs::remove_file(&temp);
        return Err(Error::io(target, e));
    }
    sync_dir_of(target);
    Ok(())
}

/// Make a rename or removal in `path`'s directory durable.
pub(super) fn sync_dir_of(path: &Path) {
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
        use crate::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options.open(temp)?;
    #[cfg(unix)]
    if let Some(mode) = mode {
        use std::os::unix::fs::PermissionsExt;
        file.set_permissions(crate::fs::Permissions::from_mode(mode))?;
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
pub(crate) fn mode_of(meta: &crate::fs::Metadata) -> Option<u32> {
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
