//! Changing a slot safely (docs/store.md §6): a per-slot advisory lock with a bounded wait, and the
//! two composite operations — replace a slot, restore a version — built from the atomic file
//! operations (`atomic.rs`), history (`history.rs`) and the `progress:` rewrite (`progress.rs`).

mod atomic;
mod history;
mod progress;

pub(crate) use atomic::*;
pub(crate) use history::*;
pub use progress::*;

use crate::fs::{File, OpenOptions};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use super::Store;
use crate::document::envelope::ENVELOPE_LINES;
use crate::error::Error;

/// How many versions history keeps per slot.
pub(crate) const HISTORY_KEEP: usize = 10;
/// How much of a file readers look at for its envelope.
const HEAD_BYTES: u64 = 64 * 1024;

/// Create `dir` and its missing parents with mode 0700 (existing ones are left alone).
pub(crate) fn create_private_dir(dir: &Path) -> Result<(), Error> {
    let mut builder = crate::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(dir).map_err(|e| Error::io(dir, e))
}

/// The first bytes of a file, enough for its envelope: one 4 KiB read covers almost every
/// handoff's 20 header lines (a store of 10,000 is listed with one read per file); only when
/// those bytes end before the envelope could does it read on, up to 64 KiB.
pub(crate) fn read_head(path: &Path) -> std::io::Result<Vec<u8>> {
    read_head_from(File::open(path)?, None)
}

/// [`read_head`] on a file already open; with its `size` known, a file that fits is read with
/// exactly one `read`, without a second one to see the end.
pub(crate) fn read_head_from(mut file: File, size: Option<u64>) -> std::io::Result<Vec<u8>> {
    const FIRST: usize = 4096;
    let want = size.map_or(FIRST, |s| (s as usize).min(FIRST));
    let mut buf = vec![0u8; FIRST];
    let mut len = 0;
    while len < want {
        match file.read(&mut buf[len..]) {
            Ok(0) => break,
            Ok(n) => len += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    buf.truncate(len);
    let envelope_done = memchr::memchr_iter(b'\n', &buf).count() >= ENVELOPE_LINES
        || memchr::memmem::find(&buf, b"\n## ").is_some();
    if len == FIRST && !envelope_done {
        file.take(HEAD_BYTES - FIRST as u64).read_to_end(&mut buf)?;
    }
    Ok(buf)
}

/// Read a stored handoff whole, refusing one over the gate's 4 MiB input cap (it could only
/// have been put there by hand): at most the cap and one byte are ever read.
pub(crate) fn read_capped(path: &Path) -> Result<Vec<u8>, Error> {
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    match crate::input::read_capped(file) {
        Ok(bytes) => Ok(bytes),
        Err(crate::input::InputError::TooLarge) => Err(Error::TooLarge(path.to_path_buf())),
        Err(e) => Err(Error::io(
            path,
            std::io::Error::other(e.gate_message(&path.to_string_lossy())),
        )),
    }
}

/// A held slot lock; released when dropped.
#[derive(Debug)]
pub(crate) struct SlotLock {
    _file: File,
}

/// Why a lock was not taken.
#[derive(Debug)]
pub(crate) enum LockFailure {
    Busy,
    Io(Error),
}

/// Take the exclusive lock of slot `name`, waiting at most `wait`.
pub(crate) fn lock(store: &Store, name: &str, wait: Duration) -> Result<SlotLock, LockFailure> {
    let dir = store.dir.join(".locks");
    create_private_dir(&dir).map_err(LockFailure::Io)?;
    let path = dir.join(format!("{name}.lock"));
    let mut options = OpenOptions::new();
    options.create(true).truncate(false).write(true);
    #[cfg(unix)]
    {
        use crate::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let file = options
        .open(&path)
        .map_err(|e| LockFailure::Io(Error::io(&path, e)))?;
    let deadline = Instant::now() + wait;
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(SlotLock { _file: file }),
            Err(crate::fs::TryLockError::WouldBlock) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(crate::fs::TryLockError::WouldBlock) => return Err(LockFailure::Busy),
            Err(crate::fs::TryLockError::Error(e)) => {
                return Err(LockFailure::Io(Error::io(&path, e)));
            }
        }
    }
}

/// The CLI's lock: 10 s, then the exact "locked by another process" error.
pub(crate) fn lock_cli(store: &Store, name: &str) -> Result<SlotLock, Error> {
    lock(store, name, Duration::from_secs(10)).map_err(|f| match f {
        LockFailure::Busy => Error::Locked(store.path_of(name)),
        LockFailure::Io(e) => e,
    })
}

/// Replace slot `name` with `bytes` (the caller holds its lock, through
/// [`crate::store::change::SlotChange`]): refuse a slot that is not a regular file, clean dead
/// writers' temp files, keep the current version in history, replace, and only then apply
/// retention. `mtime`: the new version's (an imported version keeps the time it was written).
pub(in crate::store) fn replace_slot_at(
    store: &Store,
    name: &str,
    bytes: &[u8],
    mtime: Option<SystemTime>,
) -> Result<Option<PathBuf>, Error> {
    let path = store.path_of(name);
    if let Ok(meta) = crate::fs::symlink_metadata(&path)
        && !meta.file_type().is_file()
    {
        return Err(Error::NotRegular(path.to_path_buf()));
    }
    clean_temps(store, name);
    let kept = keep_current(store, name, Some(bytes))?;
    replace(&path, bytes, mtime, None)?;
    store.mark_named(name);
    retain(store, name);
    Ok(kept)
}

/// Swap history version `chosen` into slot `name` with its own mtime (the caller holds the
/// lock). The order is what keeps every version (issue: restore lost the one it restored):
/// the displaced slot is durably in history, then the chosen bytes are durably in the slot,
/// and only then does the chosen file leave history. A kill or an error between two steps
/// leaves a duplicate at worst, never a loss.
pub(in crate::store) fn restore_version(
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
        atomic::sync_dir_of(&chosen.path);
    }
    retain(store, name);
    Ok(kept)
}
