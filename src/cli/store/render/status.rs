//! `status` for people.

use super::super::status::{Status, Sync};

/// `status` as text: a row per installed integration (with `all`, every harness and scope,
/// the installed first), aligned; then the git hook, sync, this branch's handoff, the
/// deliveries, the last background write and push, and with `check` a `problem` line per
/// problem.
pub(crate) fn status(s: &Status, check: bool, all: bool) -> String {
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
        text.push_str(&format!("in use   {}\n", super::in_use(u)));
    }
    if let Some(w) = &s.startup {
        text.push_str(&format!("startup  {w}\n"));
    }
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
    if check {
        for p in &s.problems {
            text.push_str(&format!("problem  {p}\n"));
        }
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

/// The last background write, and what the writer cost (its last run, the last 7 days).
fn writer_lines(s: &Status) -> String {
    let mut text = String::new();
    if let Some(w) = &s.last_background_write {
        text.push_str(&format!(
            "writer   last background write started {}: {}\n",
            w.started,
            w.state.word()
        ));
    }
    if let Some(c) = &s.writer_costs {
        text.push_str(&format!(
            "writer   last run {} ({}): {}, {} s, {}\n",
            crate::store::iso(c.last.at),
            c.last.writer,
            c.last.outcome,
            c.last.seconds,
            usage_words(&c.last.usage)
        ));
        text.push_str(&format!(
            "writer   last 7 days: {} run{}, {} s, {} — each is a second model run; git config handoff.writer off stops them\n",
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
fn delivery_line(d: &crate::hooks::delivered::Delivered) -> String {
    format!(
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
    )
}

fn yes_no(b: bool) -> &'static str {
    if b { "yes" } else { "no" }
}

/// `handoff for main: complete, 3 hours ago, gate OK — <path>`, or that there is none.
fn handoff_line(h: &super::super::status::BranchHandoff) -> String {
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
