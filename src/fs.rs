//! Every filesystem call of the crate goes through here: fs-err's drop-in for `std::fs`, whose
//! errors name the path and the operation, so a `?` anywhere above never loses where it
//! failed; plus the `std::fs` types fs-err does not wrap. Messages that already print the
//! path themselves ([`crate::error::Error::Io`]) take the OS error underneath with [`cause`].

pub(crate) use fs_err::os::unix::fs::OpenOptionsExt;
pub(crate) use fs_err::*;
pub(crate) use std::fs::{DirBuilder, Metadata, Permissions, TryLockError};
use std::os::unix::fs::OpenOptionsExt as _;

/// A file held by its descriptor alone (opened with `openat2` beneath a root, taken out of a
/// [`File`] to read it, or opened on the gate's hot paths where a failure is an answer, not an
/// error: the symbol scan opens every file of a tree): the plain `std` type, so no path is
/// copied into an error nobody reads, and reads go straight to the kernel (fs-err's `File`
/// reads through `read`, which makes `read_to_end` zero each buffer first).
pub(crate) type FdFile = std::fs::File;

/// Make `dir` and its missing parents, each 0755 whatever the umask (with a umask of 000,
/// `create_dir_all` made them world-writable); one that exists is left as it is.
pub(crate) fn make_dirs(dir: &std::path::Path) -> std::io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    let mut missing: Vec<&std::path::Path> = dir.ancestors().take_while(|d| !d.exists()).collect();
    missing.reverse();
    for d in missing {
        match DirBuilder::new().mode(0o755).create(d) {
            Ok(()) => set_permissions(d, Permissions::from_mode(0o755))?,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// The last `cap` bytes of `path`, from the first whole line among them, when it is a regular
/// file (opened as [`read_regular`] opens one): a log whose newest lines are what matter and
/// whose size nobody bounded. Anything else is `None`.
pub(crate) fn read_regular_tail(path: &std::path::Path, cap: u64) -> Option<Vec<u8>> {
    use std::io::{Read, Seek};
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK)
        .open(path)
        .ok()?;
    let meta = file.metadata().ok()?;
    if !meta.is_file() {
        return None;
    }
    // One byte before the cut, to tell whether the cut fell on a line's start.
    let from = meta.len().saturating_sub(cap).saturating_sub(1);
    file.seek(std::io::SeekFrom::Start(from)).ok()?;
    let mut bytes = Vec::with_capacity(meta.len().min(cap + 1) as usize);
    file.take(cap + 1).read_to_end(&mut bytes).ok()?;
    if meta.len() > cap {
        // The line cut by the seek is no line: drop it (the byte before the cut with it).
        let start = bytes
            .iter()
            .position(|&b| b == b'\n')
            .map_or(bytes.len(), |i| i + 1);
        bytes.drain(..start);
    }
    Some(bytes)
}

/// The bytes of `path`, which must be a regular file: opened without blocking (a FIFO or a
/// device planted there is refused with `InvalidInput`, never waited on), checked on the open
/// descriptor. Links are followed, as the caller's own file may be one.
pub(crate) fn read_regular_file(path: &std::path::Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NONBLOCK)
        .open(path)?;
    if !file.metadata()?.is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file",
        ));
    }
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// [`read_regular_file`] as UTF-8 text (lossy): a client's config file as `status` reads it.
pub(crate) fn read_regular_text(path: impl AsRef<std::path::Path>) -> std::io::Result<String> {
    read_regular_file(path.as_ref()).map(|b| String::from_utf8_lossy(&b).into_owned())
}

/// The bytes of `path` when it is a regular file of at most `cap` bytes: opened without
/// following a link or blocking (a FIFO or device planted there answers nothing, never hangs),
/// checked on the open descriptor, read capped. Anything else is `None`.
pub(crate) fn read_regular(path: &std::path::Path, cap: u64) -> Option<Vec<u8>> {
    use std::io::Read;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK)
        .open(path)
        .ok()?;
    let meta = file.metadata().ok()?;
    if !meta.is_file() || meta.len() > cap {
        return None;
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(cap + 1).read_to_end(&mut bytes).ok()?;
    (bytes.len() as u64 <= cap).then_some(bytes)
}

/// The OS error under an fs-err error (the error itself when it is not one).
pub(crate) fn cause(err: &std::io::Error) -> &std::io::Error {
    err.get_ref()
        .and_then(|inner| inner.source())
        .and_then(|source| source.downcast_ref::<std::io::Error>())
        .unwrap_or(err)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_names_its_path_and_keeps_the_os_error_beneath() {
        let err = read("/nonexistent/handoff-store-fs-test").unwrap_err();
        assert!(
            err.to_string()
                .contains("/nonexistent/handoff-store-fs-test"),
            "{err}"
        );
        assert_eq!(cause(&err).raw_os_error(), Some(2));
        assert_eq!(cause(&err).kind(), std::io::ErrorKind::NotFound);
    }
}
