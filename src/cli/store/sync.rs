//! `push`, `pull` and `sync` (handoffs through the repository's own git remote): resolve the
//! target and the remote, run `sync::ops`, render what it did. A push the remote rejected
//! because its handoff moved, or refused, exits 3 after its result is printed.

use serde::Serialize;

use super::{Format, Reply};
use crate::error::{Error, Exit};
use crate::store::{Store, Target};
use crate::sync::Merge;
use crate::sync::ops::{self, PullReport};
use crate::sync::push::{self, Pushed};
use crate::sync::transport::PushStatus;

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
    Push { all: bool, prune: push::Prune },
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
    let reply = Reply::show(format, &synced, |s| synced_text(s, opts.verbose))?.exit(synced.ended);
    Ok(match &synced.failure {
        Some(message) => reply.note(format!("handoff-store: {message}")),
        None => reply,
    })
}

/// The command's work: what it did, or `None` when a background push handed its work to the
/// one at work.
fn act(opts: &Options, action: Action, background: bool) -> Result<Option<Synced>, Error> {
    let target = opts.slot.place(opts.checkout.dir()).target()?;
    let store = Store::open()?;
    // At most one background push is alive: two started by quick successive writes would race
    // on the remote's ref, and a hanging remote would pile them up. One that finds another at
    // work leaves a note and ends at once; the one at work pushes again when it sees the note,
    // so the newest version still goes out.
    if !background {
        return act_once(opts, action, background, &target, &store).map(Some);
    }
    crate::sync::outcome::single_flight(&store, || {
        act_once(opts, action, background, &target, &store)
    })
    .transpose()
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
            pushed = Some(push::push(
                &store, &target, &chains, &remote, all, prune, background,
            )?);
        }
        Action::Sync { all } => {
            pulled = Some(ops::pull(&store, &target, &chains, &remote, background)?);
            pushed = match push::push(
                &store,
                &target,
                &chains,
                &remote,
                all,
                push::Prune::No,
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

fn synced_text(s: &Synced, verbose: bool) -> String {
    let mut text = String::new();
    if let Some(changed) = s.setup {
        text.push_str(&setup_text(&s.remote, changed));
    }
    if let Some(p) = &s.pull {
        text.push_str(&pull_text(p, verbose));
    }
    if let Some(p) = &s.push {
        text.push_str(&push_text(p, verbose));
    }
    text
}

/// `2 pushed, 5 up to date, 1 rejected`: the counts that are not zero, in `order`.
fn tally<'a>(said: impl Iterator<Item = &'a str>, order: &[&str]) -> String {
    let said: Vec<&str> = said.collect();
    order
        .iter()
        .filter_map(|word| {
            let n = said.iter().filter(|s| *s == word).count();
            (n > 0).then(|| format!("{n} {word}"))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn setup_text(remote: &str, changed: bool) -> String {
    let refspec = crate::sync::fetch_refspec(remote);
    if changed {
        format!(
            "added    remote.{remote}.fetch = {refspec} (a plain `git fetch` now brings handoffs too)\n"
        )
    } else {
        format!("set up   remote.{remote}.fetch already holds {refspec}\n")
    }
}

fn pull_text(p: &PullReport, verbose: bool) -> String {
    let mut text = String::new();
    let summed = p.branches.len() > 1;
    if summed {
        text.push_str(&format!(
            "pulled   {} branches from {}: {}\n",
            p.branches.len(),
            p.remote,
            tally(
                p.branches.iter().map(|b| merge_word(&b.merge)),
                &["updated", "merged", "up to date", "ahead", "not imported"]
            )
        ));
    }
    if p.branches.is_empty() && p.available.is_empty() {
        text.push_str(&format!(
            "pulled   nothing: {} holds no handoff\n",
            p.remote
        ));
    }
    for b in &p.branches {
        let what = match &b.merge {
            Merge::UpToDate => "up to date".to_string(),
            Merge::LocalAhead => "yours is ahead (push to share it)".to_string(),
            Merge::FastForward => format!("updated from {} (now in the slot)", p.remote),
            Merge::Merged { remote_won: true } => format!(
                "merged: the version from {} is newer and in the slot; yours is in history",
                p.remote
            ),
            Merge::Merged { remote_won: false } => format!(
                "merged: yours is newer and stays in the slot; the version from {} is in history",
                p.remote
            ),
            Merge::Refused(why) => format!("not imported: {why}"),
        };
        let problem = matches!(b.merge, Merge::Refused(_));
        if !summed || verbose || problem {
            let slot = b
                .slot
                .as_deref()
                .map(|s| format!(" (slot {s})"))
                .unwrap_or_default();
            text.push_str(&format!("pulled   {}{slot}: {what}\n", b.branch));
        }
    }
    if !p.available.is_empty() {
        text.push_str(&format!(
            "on {}   handoffs for branches not here: {} (offered when you check one out)\n",
            p.remote,
            p.available.join(", ")
        ));
    }
    text
}

/// A pulled branch's outcome, in a word, for the summary.
fn merge_word(m: &Merge) -> &'static str {
    match m {
        Merge::UpToDate => "up to date",
        Merge::LocalAhead => "ahead",
        Merge::FastForward => "updated",
        Merge::Merged { .. } => "merged",
        Merge::Refused(_) => "not imported",
    }
}

/// A pushed ref's outcome, in a word, for the summary.
fn push_word(s: &PushStatus) -> &'static str {
    match s {
        PushStatus::Pushed => "pushed",
        PushStatus::Deleted => "deleted",
        PushStatus::UpToDate => "up to date",
        PushStatus::Moved | PushStatus::Locked => "rejected",
        PushStatus::Refused => "refused",
    }
}

fn push_text(p: &Pushed, verbose: bool) -> String {
    let mut text = String::new();
    if !verbose
        && !p.updates.is_empty()
        && p.updates.iter().all(|u| u.status == PushStatus::UpToDate)
    {
        let what = match p.updates.as_slice() {
            [one] => one.reference.clone(),
            all => format!("all {} handoff refs as they are here", all.len()),
        };
        return format!("nothing to push: {} already has {what}\n", p.remote) + &kept_text(p);
    }
    let summed = p.updates.len() > 1;
    if summed {
        text.push_str(&format!(
            "pushed   {} handoff refs to {}: {}\n",
            p.updates.len(),
            p.remote,
            tally(
                p.updates.iter().map(|u| push_word(&u.status)),
                &["pushed", "up to date", "deleted", "rejected", "refused"]
            )
        ));
    }
    for u in &p.updates {
        let fine = matches!(
            u.status,
            PushStatus::Pushed | PushStatus::Deleted | PushStatus::UpToDate
        );
        if summed && fine && !verbose {
            continue;
        }
        let what = match u.status {
            PushStatus::Pushed => "pushed  ",
            PushStatus::Deleted => "deleted ",
            PushStatus::UpToDate => "pushed   (up to date)",
            PushStatus::Moved => "rejected (the remote moved)",
            PushStatus::Refused => "refused ",
            PushStatus::Locked => "rejected (the remote could not lock it)",
        };
        text.push_str(&format!(
            "{} {} → {} {}\n",
            what.trim_end(),
            u.reference,
            p.remote,
            u.summary
        ));
    }
    text + &kept_text(p)
}

/// A line per chain `push --prune` kept on the remote.
fn kept_text(p: &Pushed) -> String {
    let mut text = String::new();
    for k in &p.kept {
        text.push_str(&format!(
            "kept     {} on {}: written on {} at {}, within {} days — its branch may not be pushed yet (--force deletes it)\n",
            k.reference,
            p.remote,
            k.host,
            k.written_at,
            push::TEAMMATE_DAYS
        ));
    }
    text
}
