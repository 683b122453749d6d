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
    // A FIFO or a device where a config file should be is refused, never waited on.
    match crate::fs::read_regular_file(&file) {
        Ok(b) => String::from_utf8(b)
            .map(Some)
            .map_err(|_| Error::Input(Input::NotUtf8(file.to_path_buf()))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) if e.kind() == std::io::ErrorKind::InvalidInput => {
            Err(Error::NotRegular(file.to_path_buf()))
        }
        Err(e) => Err(Error::io(&file, e)),
    }
}

/// `after` with the line endings `before` has: a file written with CRLF keeps CRLF whatever
/// the editor of its structure (toml_edit) writes.
pub(crate) fn line_endings_of(before: &str, after: String) -> String {
    if before.contains("\r\n") {
        after.replace("\r\n", "\n").replace('\n', "\r\n")
    } else {
        after
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

/// [`write_text`] for a setting of ours beside the hooks (a client's `config.toml`), which the
/// user did not ask us to edit by name: a file they made read-only is theirs, not rewritten
/// (root could write it).
pub(super) fn write_setting(file: &Path, text: &str) -> Result<(), Error> {
    let real = target_of(file)?;
    if crate::fs::metadata(&real).is_ok_and(|m| m.permissions().readonly()) {
        return Err(Error::io(
            &real,
            std::io::Error::new(
                std::io::ErrorKind::PermissionDenied,
                "the file is read-only: not changed",
            ),
        ));
    }
    write_text(file, text, false)
}

/// Remove a file we created, unless it is no longer a regular file of ours (a link the user
/// put there stays).
pub(super) fn remove_ours(file: &Path) -> Result<(), Error> {
    match crate::fs::symlink_metadata(file) {
        Ok(m) if m.is_file() => crate::fs::remove_file(file).map_err(|e| Error::io(file, e)),
        _ => Ok(()),
    }
}
