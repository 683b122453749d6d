//! `status`: per agent harness and scope, is our hook installed and would it run; the
//! deliveries, the last background write, the git hook and sync, as text or JSON.

use serde::Serialize;

use super::install::{dir_of, root_of};
use super::{Format, Reply};
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
    Ok(Reply::show(format, &status, |s| status_text(s, args.check, args.all))?.exit(exit))
}

/// What `status` found: plain data, printed by [`status`] or as JSON.
#[derive(Debug, Serialize)]
pub(crate) struct Status {
    pub(crate) harnesses: Vec<status::Row>,
    /// Each thing that would not run, or cannot be used, with what to do: `--check` fails on
    /// any.
    pub(crate) problems: Vec<String>,
    pub(crate) deliveries: Vec<crate::ops::delivered::Delivered>,
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
    /// What the background writer cost here (everywhere, outside a checkout): its last run,
    /// and the last seven days.
    pub(crate) writer_costs: Option<WriterCosts>,
    /// Whether `handoff.writer` is off here.
    pub(crate) writer_off: bool,
    /// Whether `status` ran outside any checkout (the writer lines then name theirs).
    pub(crate) outside: bool,
    /// The tripwires of this branch's handoff (docs/hooks.md §10).
    pub(crate) tripwires: Option<crate::ops::tripwire::Armed>,
}

/// The background writer's cost, from the store's ledger (`store::costs`).
#[derive(Debug, Serialize)]
pub(crate) struct WriterCosts {
    pub(crate) last: crate::store::costs::Cost,
    pub(crate) week_runs: usize,
    pub(crate) week_seconds: u64,
    pub(crate) week: crate::store::costs::Usage,
}

/// Whether `handoff.writer` is off here (outside a checkout: in the global settings).
fn writer_off(target: Option<&crate::store::Target>) -> bool {
    let settings = target.map_or_else(
        crate::settings::Settings::outside,
        crate::store::Target::settings,
    );
    settings.writer() == crate::settings::WriterMode::Off
}

/// This checkout's last background write (every checkout's outside one).
fn last_background_write(
    store: &crate::store::Store,
    target: Option<&crate::store::Target>,
    now: i64,
) -> Option<BackgroundWrite> {
    crate::store::runs::all(store)
        .into_iter()
        .find(|r| target.is_none_or(|t| r.job.cwd == t.checkout()))
        .map(|r| BackgroundWrite {
            started: crate::store::iso(r.job.started),
            state: r.state(now),
            run: r.job.write_session.clone(),
            checkout: r.job.cwd.clone(),
            log: r.job.log.clone(),
        })
}

/// The writer's costs in `checkout` (every checkout's outside one).
fn writer_costs(
    store: &crate::store::Store,
    now: i64,
    checkout: Option<&str>,
) -> Option<WriterCosts> {
    let mut costs = crate::store::costs::read(store);
    if let Some(checkout) = checkout {
        costs.retain(|c| c.checkout == checkout);
    }
    let last = costs.last()?.clone();
    let (week_runs, week_seconds, week) = crate::store::costs::total(&costs, now - 7 * 86_400);
    Some(WriterCosts {
        last,
        week_runs,
        week_seconds,
        week,
    })
}

/// [`crate::ops::startup::at_startup`] in words, for `status` (it only looks).
fn startup_word(target: &crate::store::Target, store: Option<&crate::store::Store>) -> String {
    use crate::ops::startup::{AtStartup, at_startup};
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
    /// The run's id, its checkout, and its writer's log (where a failure says why).
    pub(crate) run: String,
    pub(crate) checkout: String,
    pub(crate) log: String,
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
    // Hook rows only: a setting beside them (a client's steering) is not a hook.
    let hooks = |r: &status::Row| matches!(r.scope, "user" | "project" | "plugin");
    let installed: Vec<(&'static str, &'static str)> = rows
        .iter()
        .filter(|r| r.installed && hooks(r))
        .map(|r| (r.harness, r.scope))
        .collect();
    for r in rows.iter_mut().filter(|r| !r.installed && hooks(r)) {
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
    let store = match crate::store::Store::locate() {
        Err(e) => {
            problems.push(format!("store: cannot be used: {}", e.report()));
            None
        }
        Ok(s) => {
            problems.extend(store_problem(&s));
            problems.extend(crate::store::authorship::StoreKey::problem(&s));
            Some(s)
        }
    };
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
        deliveries: deliveries(target.as_ref()),
        git_hook: crate::harness::git_hook::state(dir)
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
            .and_then(|s| last_background_write(s, target.as_ref(), now)),
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
        writer_costs: store
            .as_ref()
            .and_then(|s| writer_costs(s, now, target.as_ref().map(|t| t.checkout()).as_deref())),
        writer_off: writer_off(target.as_ref()),
        outside: target.is_none(),
        tripwires: store
            .as_ref()
            .zip(target.as_ref())
            .and_then(|(s, t)| crate::ops::tripwire::armed(s, t)),
    }
}

/// Did the handoff reach the last session, per harness.
fn deliveries(target: Option<&crate::store::Target>) -> Vec<crate::ops::delivered::Delivered> {
    target
        .map(|t| {
            let main = t.main();
            Harness::ALL
                .iter()
                .filter_map(|h| crate::ops::delivered::last(h.name(), &main))
                .collect()
        })
        .unwrap_or_default()
}

/// `status` as text: a row per installed integration (with `all`, every harness and scope,
/// the installed first), aligned; then the git hook, sync, this branch's handoff, the
/// deliveries, the last background write and push; with `check` only the problems.
fn status_text(s: &Status, check: bool, all: bool) -> String {
    if check {
        return check_text(s);
    }
    let mut text = harness_rows(s, all);
    if let Some(hook) = &s.git_hook {
        text.push_str(&format!(
            "git-hook {} installed={}{}\n",
            hook.path.display(),
            yes_no(hook.installed),
            if hook.installed {
                ""
            } else {
                " — handoff-store install git-hook names a checked-out branch's handoff"
            }
        ));
    }
    if let Some(sync) = &s.sync {
        text.push_str(&sync_lines(sync));
    }
    if let Some(h) = &s.handoff {
        text.push_str(&handoff_line(h));
    }
    if let Some(u) = &s.in_use {
        text.push_str(&format!("in use   {}\n", super::config::in_use(u)));
    }
    if let Some(w) = &s.startup {
        if s.harnesses.iter().any(|r| r.installed && r.scope != "mcp") {
            text.push_str(&format!("startup  {w}\n"));
        } else {
            text.push_str(
                "startup  no client's hooks are installed: a fresh start runs nothing of ours\n",
            );
        }
    }
    text.push_str(&match &s.tripwires {
        Some(crate::ops::tripwire::Armed::Off(why)) => format!("tripwire off ({why})\n"),
        Some(crate::ops::tripwire::Armed::Items(n)) => format!(
            "tripwire {n} armed: this handoff's dead ends and traps that quote a command or cite a path are said at the tool call that repeats one (git config handoff.tripwires false turns it off)\n"
        ),
        None => String::new(),
    });
    for d in &s.deliveries {
        text.push_str(&delivery_line(d));
    }
    if s.deliveries.is_empty() {
        text.push_str("delivery none yet: no session has been given a handoff\n");
    }
    text.push_str(&writer_lines(s));
    if s.background_push_in_flight {
        text.push_str("autoPush a background push is in flight\n");
    }
    if let Some(f) = &s.chain_record_failed {
        text.push_str(&format!(
            "chain    a handoff stored at {} for {} is not yet in git ({}); the next write records it\n",
            f.at, f.checkout, f.message
        ));
    }
    if let Some(p) = &s.background_push {
        text.push_str(&format!(
            "autoPush last background push {} for {}: {}\n",
            p.at,
            p.checkout,
            if p.exit == 0 {
                "ok".to_string()
            } else {
                format!("FAILED (exit {}) — {}", p.exit, p.message)
            }
        ));
    }
    text
}

/// `status --check` as text: a `problem` line per problem, or `OK` when there is none.
fn check_text(s: &Status) -> String {
    if s.problems.is_empty() {
        return "OK\n".to_string();
    }
    s.problems
        .iter()
        .map(|p| format!("problem  {p}\n"))
        .collect()
}

/// A row per installed integration (with `all`, every client and scope, the installed
/// first), aligned; or the one line saying none is installed.
fn harness_rows(s: &Status, all: bool) -> String {
    let mut text = String::new();
    let mut rows: Vec<&crate::harness::status::Row> =
        s.harnesses.iter().filter(|r| all || r.installed).collect();
    rows.sort_by_key(|r| !r.installed);
    let name = rows.iter().map(|r| r.harness.len()).max().unwrap_or(0);
    let scope = rows.iter().map(|r| r.scope.len()).max().unwrap_or(0);
    for r in &rows {
        text.push_str(&format!(
            "{:<name$} {:<scope$} installed={:<3} runs={:<7} {}{}\n",
            r.harness,
            r.scope,
            yes_no(r.installed),
            r.runs,
            r.file.as_deref().unwrap_or("-"),
            if r.why.is_empty() {
                String::new()
            } else {
                format!(" — {}", r.why)
            }
        ));
    }
    if rows.is_empty() {
        text.push_str(
            "hooks    none installed — handoff-store install <agent> (install --help lists them); status --all shows every agent and scope\n",
        );
    }
    text
}

/// The last background write here, and what the writer cost here (its last run, the last 7
/// days): one state for one run — the run's own, now —, the log a failure left, and how to
/// stop the runs only where they are not stopped already.
fn writer_lines(s: &Status) -> String {
    let mut text = String::new();
    let place = |checkout: &str| {
        if s.outside {
            format!(" in {checkout}")
        } else {
            String::new()
        }
    };
    if let Some(w) = &s.last_background_write {
        let log = if matches!(w.state, crate::store::runs::RunState::Failed { .. }) {
            format!(" — why: {}", w.log)
        } else {
            String::new()
        };
        text.push_str(&format!(
            "writer   last background write{} started {}: {}{log}\n",
            place(&w.checkout),
            w.started,
            w.state.word()
        ));
    }
    if let Some(c) = &s.writer_costs {
        // The run's state now, where it is the run above (a held one may since be promoted).
        let outcome = match &s.last_background_write {
            Some(w) if c.last.run.as_deref() == Some(w.run.as_str()) => w.state.word(),
            _ => c.last.outcome.as_str(),
        };
        text.push_str(&format!(
            "writer   last run{} {} ({}): {}, {} s, {}\n",
            place(&c.last.checkout),
            crate::store::iso(c.last.at),
            c.last.writer,
            outcome,
            c.last.seconds,
            usage_words(&c.last.usage)
        ));
        let stop = if s.writer_off {
            "handoff.writer is off: no new ones start"
        } else {
            "git config handoff.writer off stops them"
        };
        text.push_str(&format!(
            "writer   last 7 days{}: {} run{}, {} s, {} — each is a second model run; {stop}\n",
            if s.outside { ", every checkout" } else { "" },
            c.week_runs,
            if c.week_runs == 1 { "" } else { "s" },
            c.week_seconds,
            usage_words(&c.week)
        ));
    }
    text
}

/// A line per remote (does a plain `git fetch` bring handoffs?) and autoPush.
fn sync_lines(sync: &Sync) -> String {
    let mut text = String::new();
    for r in &sync.remotes {
        text.push_str(&format!(
            "sync     {}: {}\n",
            r.remote,
            if r.fetch_refspec {
                "git fetch brings handoffs (sync --setup done)".to_string()
            } else {
                format!(
                    "git fetch does not bring handoffs: handoff-store sync --setup {}",
                    r.remote
                )
            }
        ));
    }
    text.push_str(&format!(
        "autoPush {}\n",
        if sync.auto_push {
            "on (handoff.autoPush): every stored handoff is pushed in the background"
        } else {
            "off: git config handoff.autoPush true to push every stored handoff"
        }
    ));
    text
}

/// The last delivery to one harness.
fn delivery_line(d: &crate::ops::delivered::Delivered) -> String {
    format!(
        "delivery {} {} session {} ({}, {}): {} characters{}{}\n",
        d.harness,
        d.at,
        d.session.as_deref().unwrap_or("-"),
        d.source,
        d.event,
        d.chars,
        if d.cut { ", cut to fit" } else { "" },
        match (&d.handoff, d.consumed, d.read_before) {
            (Some(h), true, _) => format!(", {h} marked consumed"),
            (Some(h), false, true) => format!(", {h} (read before)"),
            (Some(h), false, false) => format!(", {h} left unread"),
            (None, _, _) => ", no handoff shown".to_string(),
        }
    )
}

fn yes_no(b: bool) -> &'static str {
    if b { "yes" } else { "no" }
}

/// `handoff for main: complete, 3 hours ago, gate OK — <path>`, or that there is none.
fn handoff_line(h: &BranchHandoff) -> String {
    use crate::store::verdict::GateStatus;
    if !h.exists {
        return format!(
            "handoff  none for {} yet — handoff-store new prints one to fill in ({})\n",
            h.branch, h.path
        );
    }
    let gate = match h.gate {
        Some(GateStatus::Ok) => "gate OK",
        Some(GateStatus::Failed) => "gate FAILED",
        Some(GateStatus::Malformed) => "gate MALFORMED",
        Some(GateStatus::NotRun | GateStatus::Unexpected) => "gate not run",
        None => "being written",
    };
    let whose = h
        .teammate
        .as_deref()
        .map(|f| format!("\n         it was {f}"))
        .unwrap_or_default();
    format!(
        "handoff  for {}: {}, {}, {gate} — {}{whose}\n",
        h.branch,
        h.progress.as_deref().unwrap_or("complete"),
        h.age.map_or_else(
            || "age unknown".to_string(),
            |a| format!("{} ago", crate::store::gap(a))
        ),
        h.path
    )
}

/// Tokens and cost as the client reported them (`12.3k tokens in, 1.1k out, $0.08`).
fn usage_words(u: &crate::store::costs::Usage) -> String {
    let k = |n: u64| {
        if n < 1000 {
            n.to_string()
        } else {
            format!("{:.1}k", n as f64 / 1000.0)
        }
    };
    let mut said = Vec::new();
    if let Some(n) = u.input_tokens {
        said.push(format!("{} tokens in", k(n)));
    }
    if let Some(n) = u.output_tokens {
        said.push(format!("{} out", k(n)));
    }
    if let Some(c) = u.cost_usd {
        said.push(format!("${c:.2}"));
    }
    if said.is_empty() {
        "tokens not reported by the client".to_string()
    } else {
        said.join(", ")
    }
}
