//! What each error says: the `Display` of the error kinds beneath `Error` (usage, target, the
//! draft, the input, an external program, nothing to do) — one sentence each, naming what
//! failed; the cause is `source()`'s, the hint `Error::hint`'s.

use std::fmt;

use super::{
    ConfigStep, Draft, External, GitCommand, GitStep, Input, Moment, NoTarget, NothingToDo, Usage,
};

/// `(a, b, c)` as `configured: a, b, c`, or that there is none.
fn listed(remotes: &[String]) -> String {
    if remotes.is_empty() {
        "this repository has no remote".to_string()
    } else {
        format!("configured: {}", remotes.join(", "))
    }
}

impl fmt::Display for Usage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Usage::NoDocument => write!(f, "no document"),
            Usage::AlwaysGated => write!(f, "a background write is always gated"),
            Usage::GatedNoPlaceholder => write!(
                f,
                "a background write is always gated and never a placeholder"
            ),
            Usage::Detached => write!(f, "HEAD is detached: handoffs travel per branch"),
            Usage::NoSuchRemote { remote, configured } => write!(
                f,
                "no remote named {remote:?} in this repository ({})",
                listed(configured)
            ),
            Usage::NeedsCheckout { harness } => write!(
                f,
                "{harness} --project needs a git checkout (the working directory or DIR)"
            ),
            Usage::NoMcp => write!(
                f,
                "no MCP server beside this handoff-store (handoff-store-mcp, built with the default features)"
            ),
            Usage::McpArgument(why) => write!(f, "{why}"),
            Usage::NothingToFormat => write!(
                f,
                "--format json: this command prints what it did for people, no result to format"
            ),
            Usage::ProjectOnly { harness } => {
                write!(f, "{harness} reads hooks from the repository only")
            }
            Usage::NoManPage(page) => write!(f, "no man page named {page:?}"),
            Usage::NotInStore(file) => write!(
                f,
                "set-progress changes a stored handoff, and {file} is not in the store"
            ),
            Usage::ProgressValue(value) => write!(
                f,
                "set-progress: {value:?} is not a progress (writing, complete or consumed)"
            ),
            Usage::ProgressWords => write!(f, "set-progress takes [FILE] VALUE"),
            Usage::SplitPart(part) => write!(
                f,
                "split: {part:?} is not NAME=FILE, or names a slot a second time"
            ),
            Usage::BadSlot { name, why } => write!(f, "--slot {name:?} cannot name a slot: {why}"),
        }
    }
}

impl fmt::Display for NoTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use crate::git::TargetError;
        match self {
            NoTarget::Resolve { shown, why } => match why {
                TargetError::NotDirectory => {
                    write!(f, "{shown} is not a directory (name one with -C DIR)")
                }
                TargetError::NotGit => write!(
                    f,
                    "{shown} is not inside a git checkout (name one with -C DIR)"
                ),
                TargetError::Bare => write!(
                    f,
                    "{shown} is a bare repository; a handoff needs a work tree (name one with -C DIR)"
                ),
                TargetError::BadConfig(why) => {
                    write!(f, "git's configuration cannot be read: {why}")
                }
            },
            NoTarget::NoRepository(dir) => {
                write!(f, "{} is not inside a git repository", dir.display())
            }
        }
    }
}

impl fmt::Display for Draft {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Draft::Empty => write!(f, "the document is empty"),
            Draft::NotUtf8 { line } => write!(f, "the document is not valid UTF-8 (line {line})"),
            Draft::Nul { line } => write!(f, "the document contains a NUL byte (line {line})"),
            Draft::TooLarge => write!(f, "the document is too large (more than 4 MiB)"),
            Draft::TitleTooLow => write!(
                f,
                "the title must be near the top: the envelope would end after line 20"
            ),
            Draft::OtherSlot { run, target } => write!(
                f,
                "this background write is for the slot {run}, not {target}"
            ),
        }
    }
}

impl fmt::Display for Input {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Input::Draft(d) => write!(f, "{d}; nothing was stored"),
            Input::ReadFile { path, .. } => write!(f, "cannot read {path}"),
            Input::ReadDocument(e) => {
                write!(f, "cannot read the document: {}", e.gate_message("stdin"))
            }
            Input::DanglingLink { path, to } => write!(
                f,
                "{} is a link to {}, which does not exist; nothing was changed",
                path.display(),
                to.display()
            ),
            Input::NotAFile { path, leads_to } => {
                write!(f, "{} is not a regular file", path.display())?;
                if let Some(to) = leads_to {
                    write!(f, " (it leads to {})", to.display())?;
                }
                write!(f, "; nothing was changed")
            }
            Input::NotUtf8(path) => write!(f, "{} is not UTF-8 text", path.display()),
            Input::Config { path, step, .. } => match step {
                ConfigStep::Read => write!(f, "cannot read {}", path.display()),
                ConfigStep::ReadToRemove => {
                    write!(f, "cannot read {} (nothing was changed)", path.display())
                }
                ConfigStep::Add => write!(f, "cannot add the hook to {}", path.display()),
            },
            Input::Encode(_) => write!(f, "cannot encode a record"),
        }
    }
}

impl fmt::Display for External {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            External::NoGit(_) => write!(f, "cannot run git"),
            External::GitFailed {
                command,
                remote,
                said,
            } => {
                let command = match command {
                    GitCommand::Fetch => "git fetch from",
                    GitCommand::Push => "git push to",
                    GitCommand::Prune => "git push --prune to",
                    GitCommand::LsRemote => "git ls-remote of",
                };
                write!(f, "{command} {remote} failed: {said}")
            }
            External::TimedOut { seconds } => write!(
                f,
                "the push did not finish within its {seconds} s time limit (HANDOFF_PUSH_TIMEOUT_SECONDS) and was stopped"
            ),
            External::NoRepository(checkout) => {
                write!(f, "cannot open the repository of {checkout}")
            }
            External::NoRemote { configured } => write!(
                f,
                "no remote to sync with: the branch has no upstream and there is no origin ({})",
                listed(configured)
            ),
            External::Moved {
                reference,
                during: Moment::Pull,
            } => write!(f, "{reference} moved during the pull (nothing was lost)"),
            External::Moved {
                reference,
                during: Moment::Record,
            } => write!(f, "{reference} moved while this handoff was being recorded"),
            External::Git { step, .. } => match step {
                GitStep::Record => write!(f, "cannot record the handoff in git"),
                GitStep::RecordMerge => write!(f, "cannot record the merge"),
                GitStep::Update(reference) => write!(f, "cannot update {reference}"),
                GitStep::Scratch(name) => write!(f, "cannot write {name}"),
                GitStep::Config => write!(f, "cannot edit the repository's config"),
            },
            External::LeaseHook(exe) => write!(
                f,
                "cannot run {} as the lease check of push --prune (was it removed or replaced?)",
                exe.display()
            ),
            External::NoClient { program, var } => {
                write!(f, "{program} is not on PATH (or {var}) to record the trust")
            }
            External::Client(_) => write!(f, "cannot record the trust"),
        }
    }
}

impl fmt::Display for NothingToDo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NothingToDo::NoBranchToPush => {
                write!(f, "no branch of this repository has a handoff to push")
            }
            NothingToDo::NoHandoffToPush(branch) => write!(
                f,
                "{branch} has no handoff to push (its slot is empty or still being written)"
            ),
            NothingToDo::NoHookListed { client, .. } => {
                write!(f, "{client} lists no handoff-store hook here")
            }
            NothingToDo::NoHandoffFor(branch) => {
                write!(
                    f,
                    "there is no handoff for {branch} (its slot is empty or still being written)"
                )
            }
        }
    }
}
