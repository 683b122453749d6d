//! `status`: per agent harness and scope, is our hook installed and would it run; the
//! deliveries, the last background write, the git hook and sync, as text or JSON.

use std::io::Write;

use super::install::{dir_of, root_of};
use super::{Format, Ui, print, print_json};
use crate::error::{Error, Exit};
use crate::harness::{Harness, status};

/// Per agent harness and scope: is our hook installed, and would it run?
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The checkout (default: the working directory).
    dir: Option<String>,
    /// Exit 1 when something installed would not run, with one line per problem saying
    /// what to do.
    #[arg(long)]
    check: bool,
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

pub fn run(args: &Args, ui: &mut Ui) -> Result<Exit, Error> {
    status(args.dir.as_deref(), ui.format, args.check, ui.out)
}

fn status(
    dir: Option<&str>,
    format: Format,
    check: bool,
    out: &mut dyn Write,
) -> Result<Exit, Error> {
    let dir = dir_of(dir)?;
    let rows = status::rows(root_of(&dir).as_deref(), &dir);
    // Installed but it would not run: each is a problem `--check` fails on.
    let problems: Vec<String> = rows
        .iter()
        .filter(|r| r.installed && r.runs == "no")
        .map(|r| format!("{} ({}): {}", r.harness, r.scope, r.why))
        .collect();
    // A failed autoPush happened in a detached process: this is where the user hears of it.
    let store = crate::store::Store::locate();
    let pushed = store.as_ref().ok().and_then(crate::sync::outcome::last);
    let in_flight = store
        .as_ref()
        .is_ok_and(|s| s.dir.is_dir() && crate::sync::outcome::in_flight(s));
    let unrecorded = store
        .as_ref()
        .ok()
        .and_then(crate::store::chain::record_failure);
    let mut problems = problems;
    match &store {
        Err(e) => problems.push(format!("store: cannot be used: {e}")),
        Ok(s) => problems.extend(store_problem(s)),
    }
    if let Some((at, checkout, message)) = &unrecorded {
        problems.push(format!(
            "chain: a handoff stored at {at} for {checkout} is not in git ({message}); the next write records it"
        ));
    }
    let store = store.ok();
    // Did the handoff reach the last session, per harness; and how the last writer ended.
    let deliveries: Vec<crate::hooks::delivered::Delivered> = Harness::ALL
        .iter()
        .filter_map(|h| crate::hooks::delivered::last(h.name()))
        .collect();
    let git_hook = crate::hooks::git_hook::state(&dir);
    let sync = crate::sync::setup_state(&dir);
    let now = crate::store::now();
    let writer = store
        .as_ref()
        .and_then(|s| crate::store::runs::all(s).into_iter().next())
        .map(|r| (crate::store::iso(r.job.started), r.state(now)));
    match format {
        Format::Json => print_json(
            out,
            &serde_json::json!({ "harnesses": rows, "problems": problems,
                "deliveries": deliveries,
                "git_hook": git_hook.as_ref().map(|(path, ours)|
                    serde_json::json!({"path": path, "installed": ours})),
                "sync": sync.as_ref().map(|(remotes, auto)| serde_json::json!({
                    "remotes": remotes.iter().map(|(r, set)|
                        serde_json::json!({"remote": r, "fetch_refspec": set})).collect::<Vec<_>>(),
                    "auto_push": auto})),
                "last_background_write": writer.as_ref().map(|(started, state)|
                    serde_json::json!({"started": started, "state": state})),
                "background_push": pushed,
                "background_push_in_flight": in_flight,
                "chain_record_failed": unrecorded.as_ref().map(|(at, checkout, message)|
                    serde_json::json!({"at": at, "checkout": checkout, "message": message})) }),
        )?,
        Format::Text => {
            let mut text = String::new();
            for r in &rows {
                text.push_str(&format!(
                    "{:<8} {:<8} installed={:<5} runs={:<7} {}{}\n",
                    r.harness,
                    r.scope,
                    if r.installed { "yes" } else { "no" },
                    r.runs,
                    r.file.as_deref().unwrap_or("-"),
                    if r.why.is_empty() {
                        String::new()
                    } else {
                        format!(" — {}", r.why)
                    }
                ));
            }
            if let Some((path, ours)) = &git_hook {
                text.push_str(&format!(
                    "git-hook {} installed={}{}\n",
                    path.display(),
                    if *ours { "yes" } else { "no" },
                    if *ours {
                        ""
                    } else {
                        " — handoff-store install git-hook names a checked-out branch's handoff"
                    }
                ));
            }
            if let Some((remotes, auto)) = &sync {
                for (remote, set) in remotes {
                    text.push_str(&format!(
                        "sync     {remote}: {}\n",
                        if *set {
                            "git fetch brings handoffs (sync --setup done)".to_string()
                        } else {
                            format!("git fetch does not bring handoffs: handoff-store sync --setup {remote}")
                        }
                    ));
                }
                text.push_str(&format!(
                    "autoPush {}\n",
                    if *auto {
                        "on (handoff.autoPush): every stored handoff is pushed in the background"
                    } else {
                        "off: git config handoff.autoPush true to push every stored handoff"
                    }
                ));
            }
            for d in &deliveries {
                text.push_str(&format!(
                    "delivery {} {} session {} ({}, {}): {} characters{}{}\n",
                    d.harness,
                    d.at,
                    d.session.as_deref().unwrap_or("-"),
                    d.source,
                    d.event,
                    d.chars,
                    if d.cut { ", cut to fit" } else { "" },
                    match (&d.handoff, d.consumed) {
                        (Some(h), true) => format!(", {h} marked consumed"),
                        (Some(h), false) => format!(", {h} left unread"),
                        (None, _) => ", no handoff shown".to_string(),
                    }
                ));
            }
            if let Some((started, state)) = &writer {
                text.push_str(&format!(
                    "writer   last background write started {started}: {}\n",
                    serde_json::to_value(state)
                        .ok()
                        .and_then(|v| v["state"].as_str().map(str::to_string))
                        .unwrap_or_default()
                ));
            }
            if in_flight {
                text.push_str("autoPush a background push is in flight\n");
            }
            if let Some((at, checkout, message)) = &unrecorded {
                text.push_str(&format!(
                    "chain    a handoff stored at {at} for {checkout} is not yet in git ({message}); the next write records it\n"
                ));
            }
            if check {
                for p in &problems {
                    text.push_str(&format!("problem  {p}\n"));
                }
            }
            if let Some(p) = &pushed {
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
            print(out, &text)?;
        }
    }
    Ok(if check && !problems.is_empty() {
        Exit::Negative
    } else {
        Exit::Ok
    })
}
