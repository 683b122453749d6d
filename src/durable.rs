//! Replacing a file so that a crash leaves either its old bytes or its new ones (docs/store.md
//! §6.2): a temp file in the same directory, written and fsynced, renamed over the target, and
//! the directory fsynced. The store's slots and history go through here, and so does
//! `verify-handoff --fix` on a file of the user's; the crash tests' kill points sit between the
//! steps.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::SystemTime;

use crate::fs::{File, OpenOptions};
use crate::process::kill_point;

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

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

/// Atomically replace `target` with the bytes of `source` (docs/store.md §6.2), streamed, so a
/// file of any size is copied in bounded memory. `mtime` is set before the rename when the
/// operation preserves it; `mode` is applied to the new file (default 0600).
pub(crate) fn replace_from(
    target: &Path,
    source: &mut dyn Read,
    mtime: Option<SystemTime>,
    mode: Option<u32>,
) -> std::io::Result<()> {
    replace_checked(target, source, mtime, mode, &|_| Ok(()))
}

/// Atomically replace `target` with `bytes` (`mode`, default 0600), its error naming the path:
/// every file we write outside the store's slots goes through here — our hooks' records, a
/// client's configuration, git's hook, the repository's config.
pub(crate) fn write(
    target: &Path,
    bytes: &[u8],
    mode: Option<u32>,
) -> Result<(), crate::error::Error> {
    replace_from(target, &mut &bytes[..], None, mode)
        .map_err(|e| crate::error::Error::io(target, e))
}

/// Replace a file of the user's that we edited (`verify-handoff --fix`): as [`replace_from`],
/// and the new file keeps the old one's mode, owner and group; `unchanged` is asked once the
/// new bytes are durable, right before the rename, and an `Err` from it (the file changed
/// meanwhile) leaves the file as it is.
pub(crate) fn replace_edited(
    target: &Path,
    bytes: &[u8],
    was: &crate::fs::Metadata,
    unchanged: &dyn Fn() -> std::io::Result<()>,
) -> std::io::Result<()> {
    use std::os::unix::fs::MetadataExt;
    let keep_owner = |temp: &Path| {
        // Root's edit must not hand the user's file to root; a user cannot give a file away,
        // and one owned by another user is refused before we get here.
        let owner = (was.uid(), was.gid());
        let now = crate::fs::symlink_metadata(temp)?;
        if (now.uid(), now.gid()) != owner {
            std::os::unix::fs::lchown(temp, Some(owner.0), Some(owner.1))?;
        }
        unchanged()
    };
    replace_checked(target, &mut &bytes[..], None, mode_of(was), &keep_owner)
}

/// The replacement itself: the temp file written and fsynced, `before_rename` asked about it,
/// then the rename and the directory's fsync; on any failure the temp file is removed.
fn replace_checked(
    target: &Path,
    source: &mut dyn Read,
    mtime: Option<SystemTime>,
    mode: Option<u32>,
    before_rename: &dyn Fn(&Path) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let temp = temp_name(target);
    kill_point();
    let result = write_temp(&temp, source, mtime, mode)
        .and_then(|()| before_rename(&temp))
        .and_then(|()| {
            kill_point();
            crate::fs::rename(&temp, target)
        });
    if let Err(e) = result {
        let _ = crate::fs::remove_file(&temp);
        return Err(e);
    }
    sync_dir_of(target);
    Ok(())
}

/// Make a rename or removal in `path`'s directory durable.
pub(crate) fn sync_dir_of(path: &Path) {
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
pub(crate) fn temp_is_stale(file_name: &str, meta: &crate::fs::Metadata) -> bool {
    let pid = temp_pid(file_name);
    if pid == Some(std::process::id() as i32) {
        return false;
    }
    meta.modified().is_ok_and(is_older_than_an_hour)
        || pid.is_some_and(|pid| pid > 0 && !crate::process::alive(pid))
}

/// Whether a time lies more than an hour in the past.
fn is_older_than_an_hour(t: SystemTime) -> bool {
    SystemTime::now()
        .duration_since(t)
        .is_ok_and(|d| d.as_secs() > 3600)
}

/// Remove what a killed replacement of `target` left beside it: `target`'s own temp files
/// (`.tmp.<its name>.<pid>.<salt>`) whose process is gone. Nothing else in the folder — it may
/// be the user's — is touched.
pub(crate) fn clean_dead_temps_of(target: &Path) {
    let (Some(dir), Some(base)) = (target.parent(), target.file_name()) else {
        return;
    };
    let prefix = format!(".tmp.{}.", base.to_string_lossy());
    let Ok(entries) = crate::fs::read_dir(if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    }) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let dead = name.starts_with(&prefix)
            && temp_pid(&name).is_some_and(|pid| {
                pid > 0 && pid != std::process::id() as i32 && !crate::process::alive(pid)
            });
        if dead && e.file_type().is_ok_and(|t| t.is_file()) {
            let _ = crate::fs::remove_file(e.path());
        }
    }
}
