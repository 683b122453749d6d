//! `push`, `pull` and `sync` (handoffs through the repository's own git remote): resolve the
//! target and the remote, run `sync::ops`, render what it did. A push the remote rejected
//! because its handoff moved, or refused, exits 3 after its result is printed.

use std::time::Duration;

use serde::Serialize;

use super::{Format, Reply, render};
use crate::error::{Error, Exit};
use crate::store::{Store, Target};
use crate::sync::Merge;
use crate::sync::ops::{self, PullReport, Pushed};

/// The flags `push`, `pull` and `sync` share.
#[derive(Debug, clap::Args)]
pub(crate) struct Options {
    /// The remote (default: the branch's upstream remote, else origin).
    pub(crate) remote: Option<String>,
    #[command(flatten)]
    pub(crate) checkout: super::checkout::Checkout,
    /// `push`: send this named slot's chain (`pull` always brings every slot's).
    #[command(flatten)]
    pub(crate) slot: super::checkout::SlotArg,
    /// A line per branch pulled and per ref pushed, not only the summary and the problems.
    #[arg(short, long)]
    pub(crate) verbose: bool,
}

/// Pull, then push; with --setup, only make a plain `git fetch` bring handoffs too.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(flatten)]
    opts: Options,
    /// Push every branch's handoff.
    #[arg(long, conflicts_with = "setup")]
    all: bool,
    /// Add the handoff fetch refspec to the remote's config (no network).
    #[arg(long)]
    setup: bool,
}

pub(crate) fn run(args: &Args, format: Format) -> Result<Reply, Error> {
    let action = if args.setup {
        Action::Setup
    } else {
        Action::Sync { all: args.all }
    };
    execute(&args.opts, action, false, format)
}

/// What to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Action {
    Push { all: bool, prune: ops::Prune },
    Pull,
    Sync { all: bool },
    Setup,
}

/// What one `push`, `pull` or `sync` did (its JSON), and how it ends.
#[derive(Debug, Serialize)]
pub(crate) struct Synced {
    pub(crate) remote: String,
    pub(crate) setup: Option<bool>,
    pub(crate) pull: Option<PullReport>,
    pub(crate) push: Option<Pushed>,
    pub(crate) exit: u8,
    /// What the remote did not take, said on stderr.
    #[serde(skip)]
    pub(crate) failure: Option<String>,
    #[serde(skip)]
    pub(crate) ended: Exit,
}

pub(crate) fn execute(
    opts: &Options,
    action: Action,
    background: bool,
    format: Format,
) -> Result<Reply, Error> {
    if background {
        // Detached from the writer's session, so nothing waits for it or prompts through it.
        let _ = nix::unistd::setsid();
    }
    let result = act(opts, action, background);
    // Nobody reads a background push's output: how it ended is recorded for `status`.
    if background && let Ok(store) = Store::open() {
        let (exit, message) = match &result {
            Ok(Some(Synced {
                ended,
                failure: Some(message),
                ..
            })) => (*ended, message.clone()),
            Ok(Some(Synced { ended, .. })) if *ended != Exit::Ok => {
                (*ended, format!("exit {}", ended.code()))
            }
            Ok(_) => (Exit::Ok, "ok".to_string()),
            Err(e) => (e.exit(), e.report()),
        };
        let checkout = opts.checkout.dir().unwrap_or_default();
        crate::sync::outcome::record(&store, checkout, i32::from(exit.code()), &message);
    }
    let Some(synced) = result? else {
        return Ok(Reply::new(Exit::Ok));
    };
    let reply =
        Reply::show(format, &synced, |s| render::synced(s, opts.verbose))?.exit(synced.ended);
    Ok(match &synced.failure {
        Some(message) => reply.note(format!("handoff-store: {message}")),
        None => reply,
    })
}

/// The command's work: what it did, or `None` when a background push handed its work to the
/// one at work.
fn act(opts: &Options, action: Action, background: bool) -> Result<Option<Synced>, Error> {
    let target = Target::required(opts.checkout.dir())?;
    let target = opts.slot.apply(target)?;
    let store = Store::open()?;
    // At most one background push is alive: two started by quick successive writes would race
    // on the remote's ref, and a hanging remote would pile them up. One that finds another at
    // work leaves a note and ends at once; the one at work pushes again when it sees the note,
    // so the newest version still goes out.
    if !background {
        return act_once(opts, action, background, &target, &store).map(Some);
    }
    let mut rounds = 0;
    loop {
        let Ok(lock) =
            crate::store::slot::lock(&store, crate::sync::outcome::RUNNING, Duration::ZERO)
        else {
            crate::sync::outcome::ask_again(&store);
            return Ok(None);
        };
        crate::sync::outcome::clear_ask(&store);
        let mut result = act_once(opts, action, background, &target, &store);
        // Writes that came meanwhile (a few rounds at most: each pushes the whole chain).
        while rounds < 3 && crate::sync::outcome::clear_ask(&store) {
            rounds += 1;
            result = act_once(opts, action, background, &target, &store);
        }
        drop(lock);
        // A write that asked after the last look, while the lock was still held, is not lost:
        // once the lock is gone, a note still there means one more round (or, when another
        // push took the lock meanwhile, that one's).
        rounds += 1;
        if rounds > 4 || !crate::sync::outcome::asked(&store) {
            return result.map(Some);
        }
    }
}

fn act_once(
    opts: &Options,
    action: Action,
    background: bool,
    target: &Target,
    store: &Store,
) -> Result<Synced, Error> {
    let target = target.clone();
    let store = store.clone();
    let chains = ops::open(&target)?;
    let remote = ops::remote_for(&chains, &target, opts.remote.as_deref())?;
    let mut setup = None;
    let mut pulled = None;
    let mut pushed = None;
    match action {
        Action::Setup => setup = Some(ops::setup(&chains, &remote)?),
        Action::Pull => pulled = Some(ops::pull(&store, &target, &chains, &remote, background)?),
        Action::Push { all, prune } => {
            pushed = Some(ops::push(
                &store, &target, &chains, &remote, all, prune, background,
            )?);
        }
        Action::Sync { all } => {
            pulled = Some(ops::pull(&store, &target, &chains, &remote, background)?);
            pushed = match ops::push(
                &store,
                &target,
                &chains,
                &remote,
                all,
                ops::Prune::No,
                background,
            ) {
                Ok(p) => Some(p),
                Err(Error::NothingToDo(_)) => None,
                Err(e) => return Err(e),
            };
        }
    }
    let failure = pushed.as_ref().and_then(push_failure);
    let refused_import = pulled.as_ref().is_some_and(|p| {
        p.branches
            .iter()
            .any(|b| matches!(b.merge, Merge::Refused(_)))
    });
    let ended = if failure.is_some() {
        Exit::Failure
    } else if refused_import {
        Exit::Negative
    } else {
        Exit::Ok
    };
    Ok(Synced {
        remote,
        setup,
        pull: pulled,
        push: pushed,
        exit: ended.code(),
        failure,
        ended,
    })
}

/// The message for a push the remote did not take, if any.
fn push_failure(p: &Pushed) -> Option<String> {
    let names = |list: Vec<&crate::sync::transport::RefUpdate>| {
        list.iter()
            .map(|u| format!("{} {}", u.reference, u.summary))
            .collect::<Vec<_>>()
            .join(", ")
    };
    if !p.moved().is_empty() {
        return Some(format!(
            "the handoff on {} moved ({}): run `handoff-store pull`, then push again; nothing was lost",
            p.remote,
            names(p.moved())
        ));
    }
    if !p.locked().is_empty() {
        return Some(format!(
            "{} could not lock {}: another push was at work there, or a push killed earlier left the ref's .lock file on the remote. Run `handoff-store pull`, then push again; if the remote still cannot lock it, that lock is stale: remove refs/handoffs/<branch>.lock in the remote repository. Nothing was lost",
            p.remote,
            names(p.locked())
        ));
    }
    if !p.refused().is_empty() {
        return Some(format!(
            "{} refused the push ({}); nothing was lost",
            p.remote,
            names(p.refused())
        ));
    }
    None
}
