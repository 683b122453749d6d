//! The crate's one error type. Every variant knows its exit code; its `Display` says what
//! failed (on which path), `source()` alone carries the cause beneath, and [`Error::hint`] what
//! the user can do, apart. The dispatcher prints it once, at the edge ([`Error::lines`]): the
//! binary's `name: `, the message and its causes as a chain, then a `hint:` line.

use std::fmt;
use std::path::{Path, PathBuf};

/// Everything that can end a command early.
#[derive(Debug)]
pub(crate) enum Error {
    /// Bad flags or values.
    Usage(Usage),
    /// Writing the result failed for a reason other than a closed pipe.
    Output(std::io::Error),
    /// No store directory can be derived.
    NoHome,
    /// The store path exists but is not a directory.
    StoreNotDirectory(PathBuf),
    /// The target is no usable checkout (the docs/store.md §2.2 message): exit 3 for every
    /// command that needs one.
    Target(NoTarget),
    /// The slot lock was not free within the wait (the slot's path).
    Locked(PathBuf),
    /// An I/O error on a path; the cause is kept for `source()`.
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// An input we were given cannot be used: the draft, a file to edit.
    Input(Input),
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
    /// `read` found no handoff of this repository's project in the store (a guess never crosses
    /// projects).
    NoHandoffHere(PathBuf),
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
    /// moved; a client for its hooks' trust); nothing was lost.
    External(External),
    /// Nothing to act on (sync: no handoff to push; trust: no hook of ours listed).
    NothingToDo(NothingToDo),
}

/// What was asked that cannot be done as asked.
#[derive(Debug)]
pub(crate) enum Usage {
    /// `write` with no `--from` and a terminal on stdin.
    NoDocument,
    /// `--no-gate` for a write whose background run is gone.
    AlwaysGated,
    /// `--no-gate` or `--placeholder` for a background write.
    GatedNoPlaceholder,
    /// `push` of the current branch while HEAD is detached.
    Detached,
    /// A remote that is not configured (with the configured ones).
    NoSuchRemote {
        remote: String,
        configured: Vec<String>,
    },
    /// `install <harness> --project` outside a checkout.
    NeedsCheckout { harness: &'static str },
    /// `install <harness> --user` for a client that reads only the repository's hooks.
    ProjectOnly { harness: &'static str },
    /// `--format json` for a command that prints no result.
    NothingToFormat,
    /// `mcp` without `handoff-store-mcp` beside this binary.
    NoMcp,
    /// An MCP tool's arguments cannot be used (what is wrong with them).
    #[cfg_attr(
        not(feature = "mcp"),
        allow(dead_code, reason = "said only by the server")
    )]
    McpArgument(String),
    /// `man PAGE` for a page there is not.
    NoManPage(String),
    /// `set-progress FILE` for a file outside the store.
    NotInStore(String),
    /// `set-progress` with a value that is not a lifecycle state.
    ProgressValue(String),
    /// `set-progress` with neither one nor two words.
    ProgressWords,
    /// A `split` part that is not `NAME=FILE`, or names a slot twice.
    SplitPart(String),
    /// `--slot NAME` that cannot name a slot, and why.
    BadSlot { name: String, why: &'static str },
}

/// Why there is no target to act on.
#[derive(Debug, Clone)]
pub(crate) enum NoTarget {
    /// docs/store.md §2.2: the place as given (`shown`) and what git says of it.
    Resolve {
        shown: String,
        why: crate::git::TargetError,
    },
    /// The git hook's folder has no repository around it.
    NoRepository(PathBuf),
}

/// An input that cannot be used; nothing was changed.
#[derive(Debug)]
pub(crate) enum Input {
    /// `write` refused the draft; nothing was stored.
    Draft(Draft),
    /// `write --from FILE` could not open it.
    ReadFile {
        path: String,
        source: std::io::Error,
    },
    /// Reading the draft failed.
    ReadDocument(crate::input::InputError),
    /// A config file to edit is a link to nothing.
    DanglingLink { path: PathBuf, to: PathBuf },
    /// A config file to edit is not a regular file (through a link: where it leads).
    NotAFile {
        path: PathBuf,
        leads_to: Option<PathBuf>,
    },
    /// A config file to edit is not UTF-8.
    NotUtf8(PathBuf),
    /// A config file to edit could not be parsed or changed.
    Config {
        path: PathBuf,
        step: ConfigStep,
        source: Box<dyn std::error::Error>,
    },
    /// A record of ours could not be encoded.
    Encode(serde_json::Error),
}

/// Why `write` refused a draft.
#[derive(Debug)]
pub(crate) enum Draft {
    Empty,
    NotUtf8 {
        line: usize,
    },
    Nul {
        line: usize,
    },
    TooLarge,
    /// The title is so low that the envelope would end after line 20.
    TitleTooLow,
    /// A background write for another slot than the target's.
    OtherSlot {
        run: String,
        target: String,
    },
}

/// What was being done to a config file.
#[derive(Debug, Clone, Copy)]
pub(crate) enum ConfigStep {
    /// Reading it to replace our entry.
    Read,
    /// Reading it to remove our entry (nothing changed).
    ReadToRemove,
    /// Adding our entry.
    Add,
}

/// A program or repository we drive could not do its part; nothing was lost.
#[derive(Debug)]
pub(crate) enum External {
    /// `git` cannot be started.
    NoGit(std::io::Error),
    /// git ran and failed; `said` is the end of its stderr.
    GitFailed {
        command: GitCommand,
        remote: String,
        said: String,
    },
    /// A background push reached its time limit and was stopped.
    TimedOut { seconds: u64 },
    /// The target's repository cannot be opened (its checkout).
    NoRepository(String),
    /// No remote given, no upstream, no origin (the configured ones).
    NoRemote { configured: Vec<String> },
    /// A ref moved under us: `during` a pull, or while a handoff was recorded.
    Moved { reference: String, during: Moment },
    /// A git step of ours failed.
    Git {
        step: GitStep,
        source: Box<dyn std::error::Error>,
    },
    /// This binary cannot be run as the lease check of `push --prune`.
    LeaseHook(PathBuf),
    /// A client's program is not installed (to record its hooks' trust): its name, and the
    /// variable that names it.
    NoClient {
        program: &'static str,
        var: &'static str,
    },
    /// A client could not record the trust.
    Client(Box<dyn std::error::Error>),
}

/// Which git command failed.
#[derive(Debug, Clone, Copy)]
pub(crate) enum GitCommand {
    Fetch,
    Push,
    Prune,
    /// `git ls-remote`: which branches and chains the remote has now.
    LsRemote,
}

/// When a ref moved under us.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Moment {
    Pull,
    Record,
}

/// A git step of ours.
#[derive(Debug)]
pub(crate) enum GitStep {
    /// Recording a handoff version on its chain.
    Record,
    /// Recording a merge on a chain.
    RecordMerge,
    /// Moving a ref.
    Update(String),
    /// Writing a scratch ref of `push --prune`.
    Scratch(String),
    /// Editing the repository's config.
    Config,
}

/// Nothing to act on.
#[derive(Debug)]
#[allow(clippy::enum_variant_names, reason = "each says what there is none of")]
pub(crate) enum NothingToDo {
    /// `push --all`: no branch has a handoff.
    NoBranchToPush,
    /// `push`: this branch has none (its slot is empty or still being written).
    NoHandoffToPush(String),
    /// `fix`, `log`, `brief`, `read --reground`: the branch's slot holds no handoff.
    NoHandoffFor(String),
    /// `trust <client>`: the client (its name, and its word on the command line) lists no hook
    /// of ours.
    NoHookListed {
        client: &'static str,
        word: &'static str,
    },
}

mod exit;
mod words;

pub use exit::Exit;

/// Why `write` stored nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// The document carries a credential.
    Credential,
    /// The gate found it malformed (exit 2).
    Malformed,
}

impl Error {
    /// An I/O error on `path`, with the OS text.
    pub(crate) fn io(path: &Path, err: std::io::Error) -> Error {
        Error::Io {
            path: path.to_path_buf(),
            source: err,
        }
    }

    /// What failed, then each cause beneath it: `message: cause: cause`.
    pub(crate) fn report(&self) -> String {
        let mut text = self.to_string();
        let mut source = std::error::Error::source(self);
        while let Some(cause) = source {
            text.push_str(": ");
            // An OS error is said once, in its own words (beneath it, fs-err's wrapper holds
            // the same error again).
            if let Some(io) = cause.downcast_ref::<std::io::Error>() {
                text.push_str(&crate::input::os_text(io));
                break;
            }
            text.push_str(&cause.to_string());
            source = cause.source();
        }
        text
    }

    /// What the user can do about it, when there is something to say.
    pub(crate) fn hint(&self) -> Option<String> {
        let hint = match self {
            Error::Usage(Usage::NoDocument) => "pipe it on stdin or pass --from FILE",
            Error::Usage(Usage::NoMcp) => {
                "build it with the default features, beside this one: cargo install --path . --locked, from a clone"
            }
            Error::Usage(Usage::Detached) => "check out a branch or pass --all",
            Error::Usage(Usage::ProjectOnly { .. }) => "use --project",
            Error::Usage(Usage::NotInStore(_)) => {
                "without FILE it changes this checkout's (handoff-store path names it); a draft's progress: line is yours to edit"
            }
            Error::Usage(Usage::NoManPage(_)) => {
                "name handoff-store, verify-handoff, or one of handoff-store's commands"
            }
            Error::NoHome => "set HANDOFF_STORE_DIR",
            Error::Collision { .. } => {
                "pass --force to replace it (the old version goes to history)"
            }
            Error::NotOurs { advice, .. } => advice,
            Error::Input(Input::DanglingLink { .. }) => {
                "create the file it points to (or remove the link) and try again"
            }
            Error::External(External::NoGit(_)) => "sync needs the git command on PATH",
            Error::External(External::NoRemote { .. }) => "pass REMOTE",
            Error::External(External::Moved { during, .. }) => match during {
                Moment::Pull => "run it again",
                Moment::Record => "run the command again",
            },
            Error::NothingToDo(NothingToDo::NoHookListed { word, .. }) => {
                return Some(format!(
                    "install {word}, or add the plugin (contrib/{word})"
                ));
            }
            _ => return None,
        };
        Some(hint.to_string())
    }

    /// The lines the dispatcher prints: `<prefix>: ` and the report, then the hint.
    pub(crate) fn lines(&self, prefix: &str) -> String {
        match self.hint() {
            Some(hint) => format!("{prefix}: {}\nhint: {hint}\n", self.report()),
            None => format!("{prefix}: {}\n", self.report()),
        }
    }

    /// How a command that failed with this error ends (docs/store.md §0).
    pub(crate) fn exit(&self) -> Exit {
        match self {
            Error::Usage(_) | Error::Input(_) | Error::TooLarge(_) | Error::NotStored { .. } => {
                Exit::Malformed
            }
            Error::Output(_)
            | Error::NoHome
            | Error::StoreNotDirectory(_)
            | Error::Target(_)
            | Error::Locked(_)
            | Error::Io { .. }
            | Error::Collision { .. }
            | Error::NotOurs { .. }
            | Error::NotRegular(_)
            | Error::External(_) => Exit::Failure,
            Error::NoHandoff(_)
            | Error::NoHandoffHere(_)
            | Error::NoVersion { .. }
            | Error::NothingToDo(_) => Exit::NothingToDo,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Usage(e) => write!(f, "{e}"),
            Error::Target(e) => write!(f, "{e}"),
            Error::Input(e) => write!(f, "{e}"),
            Error::External(e) => write!(f, "{e}"),
            Error::NothingToDo(e) => write!(f, "{e}"),
            Error::Output(_) => write!(f, "cannot write the output"),
            Error::NoHome => write!(
                f,
                "cannot locate the handoff store: HOME is not set and this user has no home directory"
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
                "refusing to overwrite {}: it holds the handoff for {holds_branch} in {holds_checkout}, not for {branch} in {main} (their file names collide)",
                slot.display()
            ),
            Error::NotOurs {
                path,
                beside: Some(beside),
                ..
            } => write!(
                f,
                "{} is not ours and {} already exists",
                path.display(),
                beside.display()
            ),
            Error::NotOurs {
                path, beside: None, ..
            } => write!(f, "{} exists and is not ours", path.display()),
            Error::NotStored { slot, why } => {
                let why = match why {
                    Refusal::Credential => "the document carries a credential",
                    Refusal::Malformed => "the document violates the format contract (gate exit 2)",
                };
                write!(f, "not stored — {why}; {slot} is unchanged")
            }
            Error::Io { path, .. } => write!(f, "{}", path.display()),
            Error::NotRegular(p) => write!(f, "{} is not a regular file", p.display()),
            Error::NoHandoff(store) => write!(f, "no handoff in the store ({})", store.display()),
            Error::NoHandoffHere(store) => write!(
                f,
                "no handoff for this repository in the store ({})",
                store.display()
            ),
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
            Error::Io { source, .. }
            | Error::Output(source)
            | Error::Input(Input::ReadFile { source, .. })
            | Error::External(External::NoGit(source)) => Some(source),
            Error::Input(Input::Config { source, .. })
            | Error::External(External::Git { source, .. } | External::Client(source)) => {
                Some(source.as_ref())
            }
            Error::Input(Input::Encode(e)) => Some(e),
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
        assert!(e.report().starts_with("/x/slot.md: "), "{}", e.report());
        let cause = std::error::Error::source(&e).expect("a source");
        assert!(cause.downcast_ref::<std::io::Error>().is_some());
        assert_eq!(e.exit(), Exit::Failure);
    }

    #[test]
    fn structured_variants_assemble_the_documented_messages() {
        let cases: [(Error, &str); 6] = [
            (
                Error::Usage(Usage::NoSuchRemote {
                    remote: "up".into(),
                    configured: vec!["origin".into(), "fork".into()],
                }),
                "no remote named \"up\" in this repository (configured: origin, fork)",
            ),
            (
                Error::External(External::NoRemote { configured: vec![] }),
                "no remote to sync with: the branch has no upstream and there is no origin (this repository has no remote)",
            ),
            (
                Error::Input(Input::Draft(Draft::Nul { line: 3 })),
                "the document contains a NUL byte (line 3); nothing was stored",
            ),
            (
                Error::Input(Input::NotAFile {
                    path: "/h/.agent/hooks.json".into(),
                    leads_to: Some("/h/dotfiles".into()),
                }),
                "/h/.agent/hooks.json is not a regular file (it leads to /h/dotfiles); nothing was changed",
            ),
            (
                Error::Target(NoTarget::Resolve {
                    shown: "/tmp/x".into(),
                    why: crate::git::TargetError::NotGit,
                }),
                "/tmp/x is not inside a git checkout (name one with -C DIR)",
            ),
            (
                Error::NothingToDo(NothingToDo::NoHandoffToPush("feature".into())),
                "feature has no handoff to push (its slot is empty or still being written)",
            ),
        ];
        for (error, message) in cases {
            assert_eq!(error.to_string(), message);
        }
    }

    #[test]
    fn the_cause_is_a_chain_and_the_hint_a_line_of_its_own() {
        let e = Error::io(
            Path::new("/x/slot.md"),
            std::io::Error::from(std::io::ErrorKind::PermissionDenied),
        );
        assert_eq!(e.to_string(), "/x/slot.md", "the message says what failed");
        assert_eq!(e.report(), "/x/slot.md: permission denied");
        assert_eq!(e.hint(), None);
        let e = Error::External(External::NoRemote { configured: vec![] });
        assert_eq!(e.hint().as_deref(), Some("pass REMOTE"));
        assert!(
            e.lines("handoff-store")
                .ends_with("(this repository has no remote)\nhint: pass REMOTE\n"),
            "{}",
            e.lines("handoff-store")
        );
    }

    /// A build without the MCP server names the command that builds one with it: the README's
    /// own install line.
    #[test]
    fn the_no_mcp_hint_names_the_readmes_install_command() {
        let hint = Error::Usage(Usage::NoMcp).hint().unwrap_or_default();
        let command = "cargo install --path . --locked";
        assert!(hint.contains(command), "{hint}");
        assert!(
            include_str!("../../README.md").contains(&format!("{command}  ")),
            "the README's Install section names it"
        );
    }
}
