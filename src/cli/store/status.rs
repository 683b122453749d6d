//! `status`: per agent harness and scope, is our hook installed and would it run; the
//! deliveries, the last background write, the git hook and sync, as text or JSON.

use serde::Serialize;

use super::install::{dir_of, root_of};
use super::{Format, Reply, render};
use crate::error::{Error, Exit};
use crate::harness::{Harness, status};

/// Per agent harness and scope: is our hook installed, and would it run?
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(flatten)]
    dir: super::checkout::CheckoutOrDir,
    /// Exit 1 when something installed would not run, with one line per problem saying
    /// what to do.
    #[arg(long)]
    check: bool,
    /// Every agent in every scope, installed or not (by default, only what is installed).
    #[arg(long)]
    all: bool,
}

/// Why the store cannot take a handoff: its folder is not a folder, or cannot be written.
/// `None` when it is usable (or not made yet, which the first write does).
fn store_problem(store: &crate::store::Store) -> Option<String> {
    let shown = store.dir.display();
    match crate::fs::metadata(&store.dir) {
        Err(_) => None,
        Ok(m) if !m.is_dir() => Some(format!("store: {shown} is not a folder")),
        Ok(_) => nix::unistd::access(
            &store.dir,
            nix::unistd::AccessFlags::W_OK | nix::unistd::AccessFlags::X_OK,
        )
        .err()
        .map(|e| format!("store: {shown} cannot be written ({e})")),
    }
}

pub(crate) fn run(args: &Args, format: Format) -> Result<Reply, Error> {
    // As every command: the argument, else CONTEXT_ECONOMY_CHECKOUT, else the working directory.
    let dir = dir_of(
        args.dir
            .dir()
            .or(crate::env::settings().checkout.as_deref()),
    )?;
    let status = compute(&dir);
    let exit = if args.check && !status.problems.is_empty() {
        Exit::Negative
    } else {
        Exit::Ok
    };
    Ok(Reply::show(format, &status, |s| render::status(s, args.check, args.all))?.exit(exit))
}

/// What `status` found: plain data, printed by [`render::status`] or as JSON.
#[derive(Debug, Serialize)]
pub(crate) struct Status {
    pub(crate) harnesses: Vec<status::Row>,
    /// Each thing that would not run, or cannot be used, with what to do: `--check` fails on
    /// any.
    pub(crate) problems: Vec<String>,
    pub(crate) deliveries: Vec<crate::hooks::delivered::Delivered>,
    pub(crate) git_hook: Option<GitHook>,
    pub(crate) sync: Option<Sync>,
    pub(crate) last_background_write: Option<BackgroundWrite>,
    pub(crate) background_push: Option<crate::sync::outcome::Outcome>,
    pub(crate) background_push_in_flight: bool,
    pub(crate) chain_record_failed: Option<RecordFailed>,
    /// What this checkout's branch has.
    pub(crate) handoff: Option<BranchHandoff>,
    /// Whether the automatic paths act in this repository, and why (`None` outside one).
    pub(crate) in_use: Option<crate::store::usage::Use>,
    /// What a fresh start of a client would say here, or why it would be silent.
    pub(crate) startup: Option<String>,
    /// What the background writer cost: its last run, and the last seven days.
    pub(crate) writer_costs: Option<WriterCosts>,
}

/// The background writer's cost, from the store's ledger (`store::costs`).
#[derive(Debug, Serialize)]
pub(crate) struct WriterCosts {
    pub(crate) last: crate::store::costs::Cost,
    pub(crate) week_runs: usize,
    pub(crate) week_seconds: u64,
    pub(crate) week: crate::store::costs::Usage,
}

fn writer_costs(store: &crate::store::Store, now: i64) -> Option<WriterCosts> {
    let costs = crate::store::costs::read(store);
    let last = costs.last()?.clone();
    let (week_runs, week_seconds, week) = crate::store::costs::total(&costs, now - 7 * 86_400);
    Some(WriterCosts {
        last,
        week_runs,
        week_seconds,
        week,
    })
}

/// [`crate::hooks::session_start::at_startup`] in words, for `status` (it only looks).
fn startup_word(target: &crate::store::Target, store: Option<&crate::store::Store>) -> String {
    use crate::hooks::session_start::{AtStartup, at_startup};
    let reference = &target.facts.reference;
    match at_startup(target, store, crate::store::now(), false) {
        AtStartup::AsClear => {
            "the next start delivers the handoff in full (a /clear just before)".into()
        }
        AtStartup::Deliver => {
            "a fresh start delivers the handoff in full (handoff.onStartup is deliver)".into()
        }
        AtStartup::Offer(_) => format!("a fresh start offers the handoff for {reference}"),
        AtStartup::Reminder(_) => format!(
            "a fresh start says in one line that the handoff for {reference} was read, and how to show it again"
        ),
        AtStartup::Silent(why) => format!("a fresh start says nothing: {why}"),
    }
}

/// This branch's handoff, as `status` sums it up.
#[derive(Debug, Serialize)]
pub(crate) struct BranchHandoff {
    pub(crate) branch: String,
    pub(crate) path: String,
    pub(crate) exists: bool,
    pub(crate) progress: Option<String>,
    /// Seconds since it was written.
    pub(crate) age: Option<u64>,
    pub(crate) gate: Option<crate::store::verdict::GateStatus>,
    /// Set when it is a teammate's ([`crate::store::authorship::teammate_frame`]).
    pub(crate) teammate: Option<String>,
}

/// The branch's handoff at `dir`: where, how old, read or not, and the gate's word on it.
fn branch_handoff(store: &crate::store::Store, dir: &std::path::Path) -> Option<BranchHandoff> {
    let target = crate::store::Target::at(dir)?;
    let path = store.path_of(&target.name);
    let info = crate::store::HandoffInfo::read(store, &target.name);
    let now = crate::store::now();
    let gate = info.as_ref().filter(|i| !i.is_placeholder()).and_then(|i| {
        let bytes = crate::fs::read(&path).ok()?;
        let checkout = target.facts.checkout.clone();
        Some(crate::store::verdict::gate_stored(&path, &bytes, i, Some(&checkout)).status)
    });
    Some(BranchHandoff {
        branch: target.facts.reference.clone(),
        path: path.to_string_lossy().into_owned(),
        exists: info.is_some(),
        progress: info.as_ref().map(|i| i.progress_shown().to_string()),
        age: info
            .as_ref()
            .and_then(|i| i.mtime)
            .map(|m| (now - m).max(0) as u64),
        gate,
        teammate: info.and_then(|i| i.teammate),
    })
}

#[derive(Debug, Serialize)]
pub(crate) struct GitHook {
    pub(crate) path: std::path::PathBuf,
    pub(crate) installed: bool,
}

#[derive(Debug, Serialize)]
pub(crate) struct Sync {
    pub(crate) remotes: Vec<Remote>,
    pub(crate) auto_push: bool,
}

#[derive(Debug, Serialize)]
pub(crate) struct Remote {
    pub(crate) remote: String,
    pub(crate) fetch_refspec: bool,
}

#[derive(Debug, Serialize)]
pub(crate) struct BackgroundWrite {
    pub(crate) started: String,
    pub(crate) state: crate::store::runs::RunState,
}

#[derive(Debug, Serialize)]
pub(crate) struct RecordFailed {
    pub(crate) at: String,
    pub(crate) checkout: String,
    pub(crate) message: String,
}

/// A client whose hooks are installed in one scope (or by its plugin) needs no other: its other
/// rows say so instead of recommending an install.
fn not_needed(rows: &mut [status::Row]) {
    let installed: Vec<(&'static str, &'static str)> = rows
        .iter()
        .filter(|r| r.installed)
        .map(|r| (r.harness, r.scope))
        .collect();
    for r in rows.iter_mut().filter(|r| !r.installed) {
        if let Some((_, scope)) = installed.iter().find(|(h, _)| *h == r.harness) {
            r.why = format!("not needed: installed in the {scope} scope");
        }
    }
}

/// Look at everything `status` reports, for the checkout at `dir`.
fn compute(dir: &std::path::Path) -> Status {
    let mut harnesses = status::rows(root_of(dir).as_deref(), dir);
    not_needed(&mut harnesses);
    // Installed but it would not run: each is a problem `--check` fails on.
    let mut problems: Vec<String> = harnesses
        .iter()
        .filter(|r| r.installed && r.runs == "no")
        .map(|r| format!("{} ({}): {}", r.harness, r.scope, r.why))
        .collect();
    let store = crate::store::Store::locate();
    match &store {
        Err(e) => problems.push(format!("store: cannot be used: {}", e.report())),
        Ok(s) => {
            problems.extend(store_problem(s));
            problems.extend(crate::store::authorship::StoreKey::problem(s));
        }
    }
    let store = store.ok();
    let chain_record_failed = store
        .as_ref()
        .and_then(crate::store::chain::record_failure)
        .map(|(at, checkout, message)| RecordFailed {
            at,
            checkout,
            message,
        });
    if let Some(f) = &chain_record_failed {
        problems.push(format!(
            "chain: a handoff stored at {} for {} is not in git ({}); the next write records it",
            f.at, f.checkout, f.message
        ));
    }
    let now = crate::store::now();
    let target = crate::store::Target::at(dir);
    Status {
        harnesses,
        problems,
        // Did the handoff reach the last session, per harness.
        deliveries: target
            .as_ref()
            .map(|t| {
                let main = t.main();
                Harness::ALL
                    .iter()
                    .filter_map(|h| crate::hooks::delivered::last(h.name(), &main))
                    .collect()
            })
            .unwrap_or_default(),
        git_hook: crate::hooks::git_hook::state(dir)
            .map(|(path, installed)| GitHook { path, installed }),
        sync: crate::sync::setup_state(dir).map(|(remotes, auto_push)| Sync {
            remotes: remotes
                .into_iter()
                .map(|(remote, fetch_refspec)| Remote {
                    remote,
                    fetch_refspec,
                })
                .collect(),
            auto_push,
        }),
        last_background_write: store
            .as_ref()
            .and_then(|s| crate::store::runs::all(s).into_iter().next())
            .map(|r| BackgroundWrite {
                started: crate::store::iso(r.job.started),
                state: r.state(now),
            }),
        // A failed autoPush happened in a detached process: this is where the user hears of it.
        background_push: store.as_ref().and_then(crate::sync::outcome::last),
        background_push_in_flight: store
            .as_ref()
            .is_some_and(|s| s.dir.is_dir() && crate::sync::outcome::in_flight(s)),
        chain_record_failed,
        handoff: store.as_ref().and_then(|s| branch_handoff(s, dir)),
        in_use: target
            .as_ref()
            .map(|t| crate::store::usage::Use::of(store.as_ref(), t)),
        startup: target.as_ref().map(|t| startup_word(t, store.as_ref())),
        writer_costs: store.as_ref().and_then(|s| writer_costs(s, now)),
    }
}
