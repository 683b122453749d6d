//! Reading and writing a configuration file the user owns: through a symlink to the file it
//! points to, never anything but a regular file, atomically, never widening its mode.

use std::path::{Path, PathBuf};

use crate::error::{Error, Input};
use crate::store::slot;

/// The file to read and write for `file`: itself, or — a symlink (a dotfiles setup) — the file
/// it points to, so the link stays. A dangling link, or anything but a regular file (a link to
/// `/dev/null`, a FIFO, a folder), is refused: nothing is changed.
fn target_of(file: &Path) -> Result<PathBuf, Error> {
    let meta = match crate::fs::symlink_metadata(file) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(file.to_path_buf()),
        Err(e) => return Err(Error::io(file, e)),
    };
    let real = if meta.file_type().is_symlink() {
        crate::fs::canonicalize(file).map_err(|_| {
            let to = crate::fs::read_link(file).unwrap_or_default();
            Error::Input(Input::DanglingLink {
                path: file.to_path_buf(),
                to,
            })
        })?
    } else {
        file.to_path_buf()
    };
    let is_file = crate::fs::metadata(&real).is_ok_and(|m| m.is_file());
    if !is_file {
        return Err(Error::Input(Input::NotAFile {
            path: file.to_path_buf(),
            leads_to: (real != file).then(|| real.clone()),
        }));
    }
    Ok(real)
}

pub(super) fn read_text(file: &Path) -> Result<Option<String>, Error> {
    let file = target_of(file)?;
    match crate::fs::read(&file) {
        Ok(b) => String::from_utf8(b)
            .map(Some)
            .map_err(|_| Error::Input(Input::NotUtf8(file.to_path_buf()))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io(&file, e)),
    }
}

/// Write `text` to `file` (through a symlink, to the file it points to), atomically, keeping its
/// mode but never group- or world-writable; a new file is 0644 (0755 `executable`).
pub(super) fn write_text(file: &Path, text: &str, executable: bool) -> Result<(), Error> {
    let file = target_of(file)?;
    if let Some(dir) = file.parent() {
        crate::fs::make_dirs(dir).map_err(|e| Error::io(dir, e))?;
    }
    let mode = crate::fs::metadata(&file)
        .ok()
        .and_then(|m| slot::mode_of(&m))
        .unwrap_or(if executable { 0o755 } else { 0o644 });
    crate::durable::write(&file, text.as_bytes(), Some(mode & !0o022))
}

/// Remove a file we created, unless it is no longer a regular file of ours (a link the user
/// put there stays).
pub(super) fn remove_ours(file: &Path) -> Result<(), Error> {
    match crate::fs::symlink_metadata(file) {
        Ok(m) if m.is_file() => crate::fs::remove_file(file).map_err(|e| Error::io(file, e)),
        _ => Ok(()),
    }
}
