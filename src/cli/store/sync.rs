//! `push`, `pull` and `sync` (handoffs through the repository's own git remote): resolve the
//! target and the remote, run `sync::ops`, render what it did. A push the remote rejected
//! because its handoff moved, or refused, exits 3 after its result is printed.

use std::io::Write;
use std::time::Duration;

use serde::Serialize;

use super::{Format, Ui, print, print_json};
use crate::error::{Error, Exit};
use crate::store::{Store, Target};
use crate::sync::Merge;
use crate::sync::ops::{self, PullReport, Pushed};
use crate::sync::transport::PushStatus;

/// The flags `push`, `pull` and `sync` share.
#[derive(Debug, clap::Args)]
pub struct Options {
    /// The remote (default: the branch's upstream remote, else origin).
    pub remote: Option<String>,
    /// The checkout (default: $CONTEXT_ECONOMY_CHECKOUT, then the working directory).
    #[arg(long, value_name = "DIR")]
    pub checkout: Option<String>,
}

/// Pull, then push; with --setup, only make a plain `git fetch` bring handoffs too.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    opts: Options,
    /// Push every branch's handoff.
    #[arg(long, conflicts_with = "setup")]
    all: bool,
    /// Add the handoff fetch refspec to the remote's config (no network).
    #[arg(long)]
    setup: bool,
}

pub fn run(args: &Args, ui: &mut Ui) -> Result<Exit, Error> {
    let action = if args.setup {
        Action::Setup
    } else {
        Action::Sync { all: args.all }
    };
    execute(&args.opts, action, false, ui.format, ui.out, ui.err)
}

/// What to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Push { all: bool, prune: ops::Prune },
    Pull,
    Sync { all: bool },
    Setup,
}

#[derive(Serialize)]
struct Json<'a> {
    remote: &'a str,
    setup: Option<bool>,
    pull: Option<&'a PullReport>,
    push: Option<&'a Pushed>,
    exit: u8,
}

pub fn execute(
    opts: &Options,
    action: Action,
    background: bool,
    format: Format,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<Exit, Error> {
    if background {
        // Detached from the writer's session, so nothing waits for it or prompts through it.
        let _ = nix::unistd::setsid();
    }
    let result = act(opts, action, background, format, out);
    if let Ok((_, Some(message))) = &result {
        let _ = writeln!(err, "handoff-store: {message}");
    }
    // Nobody reads a background push's output: how it ended is recorded for `status`.
    if background && let Ok(store) = Store::open() {
        let (exit, message) = match &result {
            Ok((exit, Some(message))) => (*exit, message.clone()),
            Ok((Exit::Ok, None)) => (Exit::Ok, "ok".to_string()),
            Ok((exit, None)) => (*exit, format!("exit {}", exit.code())),
            Err(e) => (e.exit(), e.to_string()),
        };
        let checkout = opts.checkout.as_deref().unwrap_or_default();
        crate::sync::outcome::record(&store, checkout, i32::from(exit.code()), &message);
    }
    result.map(|(exit, _)| exit)
}

/// The command's work and its printed result: the exit code, and the failure to report on
/// stderr, if any.
fn act(
    opts: &Options,
    action: Action,
    background: bool,
    format: Format,
    out: &mut dyn Write,
) -> Result<(Exit, Option<String>), Error> {
    let target = Target::resolve(opts.checkout.as_deref()).map_err(|f| Error::Target(f.why))?;
    let store = Store::open()?;
    // At most one background push is alive: two started by quick successive writes would race
    // on the remote's ref, and a hanging remote would pile them up. One that finds another at
    // work leaves a note and ends at once; the one at work pushes again when it sees the note,
    // so the newest version still goes out.
    if !background {
        return act_once(opts, action, background, format, &target, &store, out);
    }
    let mut rounds = 0;
    loop {
        let Ok(lock) =
            crate::store::slot::lock(&store, crate::sync::outcome::RUNNING, Duration::ZERO)
        else {
            crate::sync::outcome::ask_again(&store);
            return Ok((Exit::Ok, None));
        };
        crate::sync::outcome::clear_ask(&store);
        let mut result = act_once(opts, action, background, format, &target, &store, out);
        // Writes that came meanwhile (a few rounds at most: each pushes the whole chain).
        while rounds < 3 && crate::sync::outcome::clear_ask(&store) {
            rounds += 1;
            result = act_once(opts, action, background, format, &target, &store, out);
        }
        drop(lock);
        // A write that asked after the last look, while the lock was still held, is not lost:
        // once the lock is gone, a note still there means one more round (or, when another
        // push took the lock meanwhile, that one's).
        rounds += 1;
        if rounds > 4 || !crate::sync::outcome::asked(&store) {
            return result;
        }
    }
}

fn act_once(
    opts: &Options,
    action: Action,
    background: bool,
    format: Format,
    target: &Target,
    store: &Store,
    out: &mut dyn Write,
) -> Result<(Exit, Option<String>), Error> {
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
    let exit = if failure.is_some() {
        Exit::Failure
    } else if refused_import {
        Exit::Negative
    } else {
        Exit::Ok
    };
    match format {
        Format::Json => print_json(
            out,
            &Json {
                remote: &remote,
                setup,
                pull: pulled.as_ref(),
                push: pushed.as_ref(),
                exit: exit.code(),
            },
        )?,
        Format::Text => {
            let mut text = String::new();
            if let Some(changed) = setup {
                text.push_str(&setup_text(&remote, changed));
            }
            if let Some(p) = &pulled {
                text.push_str(&pull_text(p));
            }
            if let Some(p) = &pushed {
                text.push_str(&push_text(p));
            }
            print(out, &text)?;
        }
    }
    Ok((exit, failure))
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

fn pull_text(p: &PullReport) -> String {
    let mut text = String::new();
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
        text.push_str(&format!("pulled   {}: {what}\n", b.branch));
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

fn push_text(p: &Pushed) -> String {
    let mut text = String::new();
    for u in &p.updates {
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
    for k in &p.kept {
        text.push_str(&format!(
            "kept     {} on {}: written on {} at {}, within {} days — its branch may not be pushed yet (--force deletes it)\n",
            k.reference,
            p.remote,
            k.host,
            k.written_at,
            ops::TEAMMATE_DAYS
        ));
    }
    text
}
