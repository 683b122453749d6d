//! The crate's one error type. Every variant knows its exit code and prints a message a user
//! can act on (what failed, on which path, what to do); the dispatcher prints it once, at the
//! edge, behind the binary's `name: ` prefix.

use std::fmt;
use std::path::{Path, PathBuf};

/// Everything that can end a command early.
#[derive(Debug)]
pub enum Error {
    /// Bad flags or values.
    Usage(String),
    /// Writing the result failed for a reason other than a closed pipe.
    Output(std::io::Error),
    /// No store directory can be derived.
    NoHome,
    /// The store path exists but is not a directory.
    StoreNotDirectory(String),
    /// The target has no slot (the docs/store.md §2.2 message): exit 3 for commands that act on it.
    Target(String),
    /// The same, for `orient`/`path`, where it is a negative answer (exit 1).
    NoSlot(String),
    /// The slot lock was not free within the wait.
    Locked(String),
    /// An I/O error on a path; the cause is kept for `source()`.
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// `write` refused its input (the full message).
    Input(String),
    /// `write` would overwrite another checkout's or branch's handoff.
    Collision(String),
    /// A path that must be a regular file is not.
    NotRegular(String),
    /// `read` found nothing to show.
    NoHandoff(String),
    /// `restore` has no such version.
    NoVersion {
        slot: String,
        version: usize,
        kept: usize,
    },
    /// A file over the size limit.
    TooLarge(String),
    /// The gate found the document malformed; nothing was stored.
    NotStored(String),
    /// A program we drive could not do its part (git for sync: failed, the remote refused or
    /// moved; codex for hook trust); nothing was lost.
    External(String),
    /// Nothing to act on (sync: no handoff to push; trust: no hook of ours listed).
    NothingToDo(String),
}

impl Error {
    /// An I/O error on `path`, with the OS text.
    pub fn io(path: &Path, err: std::io::Error) -> Error {
        Error::Io {
            path: path.to_path_buf(),
            source: err,
        }
    }

    /// The process exit code for this error (docs/store.md §0).
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Usage(_) | Error::Input(_) | Error::TooLarge(_) | Error::NotStored(_) => 2,
            Error::Output(_)
            | Error::NoHome
            | Error::StoreNotDirectory(_)
            | Error::Target(_)
            | Error::Locked(_)
            | Error::Io { .. }
            | Error::Collision(_)
            | Error::NotRegular(_)
            | Error::External(_) => 3,
            Error::NoHandoff(_) | Error::NoVersion { .. } | Error::NothingToDo(_) => 4,
            Error::NoSlot(_) => 1,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Usage(m)
            | Error::Target(m)
            | Error::NoSlot(m)
            | Error::Input(m)
            | Error::Collision(m)
            | Error::NotStored(m)
            | Error::External(m)
            | Error::NothingToDo(m) => {
                write!(f, "{m}")
            }
            Error::Output(e) => write!(f, "cannot write the output: {}", crate::input::os_text(e)),
            Error::NoHome => write!(
                f,
                "cannot locate the handoff store: HOME is not set and this user has no home directory; set HANDOFF_STORE_DIR"
            ),
            Error::StoreNotDirectory(d) => write!(f, "the handoff store {d} is not a directory"),
            Error::Locked(slot) => write!(f, "{slot} is locked by another process (waited 10 s)"),
            Error::Io { path, source } => {
                write!(f, "{}: {}", path.display(), crate::input::os_text(source))
            }
            Error::NotRegular(p) => write!(f, "{p} is not a regular file"),
            Error::NoHandoff(store) => write!(f, "no handoff in the store ({store})"),
            Error::NoVersion {
                slot,
                version,
                kept,
            } => {
                write!(
                    f,
                    "{slot} has no version {version} in history (it has {kept})"
                )
            }
            Error::TooLarge(p) => write!(f, "{p} is too large (more than 4 MiB)"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io { source, .. } | Error::Output(source) => Some(source),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_io_error_names_its_path_and_keeps_its_cause() {
        let e = Error::io(
            Path::new("/x/slot.md"),
            std::io::Error::from(std::io::ErrorKind::NotFound),
        );
        assert!(e.to_string().starts_with("/x/slot.md: "), "{e}");
        let cause = std::error::Error::source(&e).expect("a source");
        assert!(cause.downcast_ref::<std::io::Error>().is_some());
        assert_eq!(e.exit_code(), 3);
    }
}
