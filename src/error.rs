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
    StoreNotDirectory(PathBuf),
    /// The target has no slot (the docs/store.md §2.2 message): exit 3 for commands that act on it.
    Target(String),
    /// The same, for `orient`/`path`, where it is a negative answer (exit 1).
    NoSlot(String),
    /// The slot lock was not free within the wait (the slot's path).
    Locked(PathBuf),
    /// An I/O error on a path; the cause is kept for `source()`.
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// `write` refused its input (the full message).
    Input(String),
    /// `write` would overwrite another checkout's or branch's handoff: the slot holds the
    /// handoff of `holds_branch` in `holds_checkout`, the target is `branch` in `main`.
    Collision {
        slot: PathBuf,
        holds_branch: String,
        holds_checkout: String,
        branch: String,
        main: String,
    },
    /// An install would replace a file that is not ours (`beside`: the place a chained original
    /// would go, itself taken); `advice` says what to do.
    NotOurs {
        path: PathBuf,
        beside: Option<PathBuf>,
        advice: &'static str,
    },
    /// A path that must be a regular file is not.
    NotRegular(PathBuf),
    /// `read` found nothing to show in the store.
    NoHandoff(PathBuf),
    /// `restore` has no such version.
    NoVersion {
        slot: String,
        version: usize,
        kept: usize,
    },
    /// A file over the size limit.
    TooLarge(PathBuf),
    /// `write` refused the document; the slot is unchanged.
    NotStored { slot: String, why: Refusal },
    /// A program we drive could not do its part (git for sync: failed, the remote refused or
    /// moved; codex for hook trust); nothing was lost.
    External(String),
    /// Nothing to act on (sync: no handoff to push; trust: no hook of ours listed).
    NothingToDo(String),
}

/// Why `write` stored nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// The document carries a credential.
    Credential,
    /// The gate found it malformed (exit 2).
    Malformed,
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
            Error::Usage(_) | Error::Input(_) | Error::TooLarge(_) | Error::NotStored { .. } => 2,
            Error::Output(_)
            | Error::NoHome
            | Error::StoreNotDirectory(_)
            | Error::Target(_)
            | Error::Locked(_)
            | Error::Io { .. }
            | Error::Collision { .. }
            | Error::NotOurs { .. }
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
            | Error::External(m)
            | Error::NothingToDo(m) => {
                write!(f, "{m}")
            }
            Error::Output(e) => write!(f, "cannot write the output: {}", crate::input::os_text(e)),
            Error::NoHome => write!(
                f,
                "cannot locate the handoff store: HOME is not set and this user has no home directory; set HANDOFF_STORE_DIR"
            ),
            Error::StoreNotDirectory(d) => {
                write!(f, "the handoff store {} is not a directory", d.display())
            }
            Error::Locked(slot) => write!(
                f,
                "{} is locked by another process (waited 10 s)",
                slot.display()
            ),
            Error::Collision {
                slot,
                holds_branch,
                holds_checkout,
                branch,
                main,
            } => write!(
                f,
                "refusing to overwrite {}: it holds the handoff for {holds_branch} in {holds_checkout}, not for {branch} in {main} (their file names collide); pass --force to replace it (the old version goes to history)",
                slot.display()
            ),
            Error::NotOurs {
                path,
                beside: Some(beside),
                advice,
            } => write!(
                f,
                "{} is not ours and {} already exists; {advice}",
                path.display(),
                beside.display()
            ),
            Error::NotOurs {
                path,
                beside: None,
                advice,
            } => write!(f, "{} exists and is not ours; {advice}", path.display()),
            Error::NotStored { slot, why } => {
                let why = match why {
                    Refusal::Credential => "the document carries a credential",
                    Refusal::Malformed => "the document violates the format contract (gate exit 2)",
                };
                write!(f, "not stored — {why}; {slot} is unchanged")
            }
            Error::Io { path, source } => {
                write!(f, "{}: {}", path.display(), crate::input::os_text(source))
            }
            Error::NotRegular(p) => write!(f, "{} is not a regular file", p.display()),
            Error::NoHandoff(store) => write!(f, "no handoff in the store ({})", store.display()),
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
            Error::TooLarge(p) => write!(f, "{} is too large (more than 4 MiB)", p.display()),
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
