//! `read`: `ops::read` for the command line — the answer rendered (text or JSON), and the
//! consume done once the whole output got out (a reader that went away skips it).

use super::{Format, Reply};
use crate::error::{Error, Exit};
use crate::ops::read::{Answer, Shown, TargetJson};
use crate::shell::self_command;
use crate::store::drift::Drift;
use crate::store::runs::RunState;
use crate::store::verdict::GateVerdict;
use crate::store::{HandoffInfo, PickKind, ago, gap, iso};
use serde::Serialize;

/// Show the target's handoff (or the most recent one, as a guess) with its verdict.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(flatten)]
    dir: super::checkout::CheckoutOrDir,
    #[command(flatten)]
    slot: super::checkout::SlotArg,
    /// Wait up to SECS for a handoff that is still being written.
    #[arg(long, value_name = "SECS", default_value_t = 0, value_parser = clap::value_parser!(u64).range(0..=3600))]
    wait: u64,
    /// Do not mark the handoff as consumed.
    #[arg(long)]
    no_consume: bool,
    /// Only its Decisions, Dead ends, Traps and Next, with one verdict line (at most 2,000
    /// characters): to reground mid-session. Nothing is consumed, no drift is checked.
    #[arg(long, conflicts_with_all = ["wait", "no_consume"])]
    reground: bool,
    /// Show the gate's whole report (every citation, the size, the checkout), not only what
    /// failed.
    #[arg(short, long)]
    verbose: bool,
}

pub(crate) fn run(args: &Args, format: Format) -> Result<Reply, Error> {
    let place = args.slot.place(args.dir.dir());
    if args.reground {
        let view = crate::ops::read::reground(&place)?;
        return Reply::show(format, &view, |v| v.text.clone());
    }
    let (store, answer) = crate::ops::read::read(
        &place,
        args.wait,
        !args.no_consume,
        crate::harness::writer_trail(),
    )?;
    let reply = match format {
        Format::Json => Reply::show(format, &read_json(&answer), |_| String::new())?,
        Format::Text => Reply::new(Exit::Ok).text(read_text(&answer, args.verbose)),
    };
    let Answer::Handoff(shown) = answer else {
        return Ok(reply.exit(Exit::NothingToDo));
    };
    let reply = reply.exit(shown.delivery.verdict.reader_exit());
    if !shown.consumable {
        return Ok(reply);
    }
    // Once the whole output got out (a reader that went away skips it).
    Ok(reply.then(Box::new(move || {
        crate::ops::read::consume(&store, &shown.delivery)
    })))
}

/// `read`'s JSON: a background write's state, or a handoff (a placeholder is one, unverified).
#[derive(Serialize)]
#[serde(untagged)]
pub(crate) enum ReadJson<'a> {
    Background {
        path: &'a str,
        state: &'static str,
        target: &'a Option<TargetJson>,
        background: &'a RunState,
        note: &'a Option<String>,
    },
    Handoff {
        path: &'a str,
        pick: &'static str,
        state: &'static str,
        target: &'a Option<TargetJson>,
        handoff: &'a HandoffInfo,
        verdict: Option<&'a GateVerdict>,
        drift: &'a [Drift],
        others: &'a [HandoffInfo],
        consumed: bool,
        document: Option<&'a str>,
        background: Option<&'a RunState>,
    },
}

pub(crate) fn read_json(answer: &Answer) -> ReadJson<'_> {
    match answer {
        Answer::Background {
            path,
            state,
            target,
            background,
            note,
            ..
        } => ReadJson::Background {
            path,
            state,
            target,
            background,
            note,
        },
        Answer::Placeholder {
            info,
            abandoned,
            others,
            target,
            ..
        } => ReadJson::Handoff {
            path: &info.path,
            pick: "exact",
            state: if *abandoned { "abandoned" } else { "pending" },
            target,
            handoff: info,
            verdict: None,
            drift: &[],
            others,
            consumed: false,
            document: None,
            background: None,
        },
        Answer::Handoff(shown) => {
            let d = &shown.delivery;
            ReadJson::Handoff {
                path: &d.info.path,
                pick: if d.kind == PickKind::Exact {
                    "exact"
                } else {
                    "recent"
                },
                state: "ready",
                target: &shown.target,
                handoff: &d.info,
                verdict: Some(&d.verdict),
                drift: &d.drift,
                others: &d.others,
                consumed: shown.consumable,
                document: Some(&shown.document),
                background: shown.background.as_ref().map(|b| &b.0),
            }
        }
    }
}

/// `read`'s text; `verbose` shows the gate's whole report instead of only what failed.
pub(crate) fn read_text(answer: &Answer, verbose: bool) -> String {
    match answer {
        Answer::Background {
            path,
            branch,
            pending: Some((age, timeout)),
            ..
        } => format!(
            "PENDING  a fresh handoff for {branch} is being written in the background (started {} ago; the writer is given {timeout} s); {path} is unchanged until it ends — run this command again\n",
            gap(*age)
        ),
        Answer::Background { note, branch, .. } => format!(
            "FAILED   {} No handoff exists for {branch}; write one with /handoff.\n",
            note.as_deref().unwrap_or_default()
        ),
        Answer::Placeholder {
            info,
            abandoned: false,
            age,
            ..
        } => format!(
            "PENDING  {} is still being written (started {} ago; abandoned after {} s)\n",
            info.path,
            gap(*age),
            crate::env::settings().fork_timeout
        ),
        Answer::Placeholder {
            info, age, restore, ..
        } => format!(
            "ABANDONED {} was never completed (last change {} ago) — no handoff is coming; write a new one{}\n",
            info.path,
            gap(*age),
            restore
                .as_deref()
                .map(|c| format!(
                    ", or bring back the previous one with: {} restore {}",
                    self_command(),
                    crate::shell::quote(c)
                ))
                .unwrap_or_default()
        ),
        Answer::Handoff(shown) => handoff_text(shown, verbose),
    }
}

fn handoff_text(shown: &Shown, verbose: bool) -> String {
    let d = &shown.delivery;
    let (info, now) = (&d.info, shown.now);
    let mut t = format!("handoff  {}\n", info.path);
    match (d.kind, &shown.target_names) {
        (PickKind::Exact, Some((branch, main))) => {
            t.push_str(&format!(
                "pick     exact — the handoff for {branch} in {main}\n"
            ));
        }
        _ => {
            let first = match &shown.target_names {
                Some((branch, _)) => {
                    format!("no handoff exists for this target's branch ({branch})")
                }
                None => "no target checkout".to_string(),
            };
            t.push_str(&format!(
                "pick     GUESS — {first}; the most recent handoff in the store was picked instead: branch {}, checkout {}. That is a GUESS, made on recency alone.\n",
                info.branch.as_deref().unwrap_or("?"),
                info.checkout.as_deref().unwrap_or("?")
            ));
        }
    }
    let fixed = shown
        .fixed_at
        .map(|at| format!(", its line numbers fixed {}", ago(Some(at), now)))
        .unwrap_or_default();
    t.push_str(&format!(
        "written  {} ({}){fixed} — progress: {}\n",
        ago(info.mtime, now),
        info.mtime.map(iso).unwrap_or_default(),
        info.progress_shown()
    ));
    if let Some(from) = info.from.as_deref() {
        // Who and where once, then the rule (the delivery's frame says both in one sentence).
        let whose = crate::store::authorship::From::parse(from)
            .map_or_else(|| "origin not recorded".to_string(), |f| f.render());
        let rule = crate::store::authorship::TEAMMATE_RULE;
        t.push_str(&format!("from     {whose} — {rule}\n"));
    }
    t.push_str(&d.verdict.line);
    t.push('\n');
    t.push_str(&failed_lines(d, verbose));
    for drift in &d.drift {
        t.push_str(&format!("DRIFT    {}\n", drift.text));
    }
    if d.kind == PickKind::Recent {
        others(&mut t, &d.others, now);
    }
    if let Some(note) = shown.background.as_ref().and_then(|b| b.1.as_deref()) {
        t.push_str(&format!("note     {note}\n"));
    }
    if info.is_consumed() {
        t.push_str("note     already delivered at an earlier read (progress: consumed)\n");
    }
    t.push('\n');
    if verbose && !d.verdict.reader_report.is_empty() {
        for line in &d.verdict.reader_report {
            t.push_str(line);
            t.push('\n');
        }
        t.push('\n');
    }
    t.push_str("----- begin handoff -----\n");
    t.push_str(&shown.document);
    if !shown.document.ends_with('\n') {
        t.push('\n');
    }
    t.push_str("----- end handoff -----\n");
    t
}

/// The moves and what failed, as the injection says them (a moved citation is its `moved`
/// line); `-v` leaves what failed to the whole report.
fn failed_lines(d: &crate::store::deliver::Delivery, verbose: bool) -> String {
    let mut t = String::new();
    for m in &d.verdict.brief.moves {
        t.push_str(&format!(
            "moved    {}:{} → {} (the text is on that one line now; handoff-store fix rewrites it)\n",
            m.path,
            m.from,
            m.target()
        ));
    }
    if !verbose {
        // Only what failed, as the injection says it; a moved citation is its `moved` line.
        let moved = |line: &str| {
            d.verdict.brief.moves.iter().any(|m| {
                line.strip_prefix("CHANGED ")
                    .or_else(|| line.strip_prefix("MISSING "))
                    .is_some_and(|rest| rest.starts_with(&format!("{}:{} ", m.path, m.from)))
            })
        };
        for line in d.verdict.brief.failing.iter().filter(|l| !moved(l)) {
            t.push_str(&format!("{line}\n"));
        }
        if d.verdict.brief.uncovered > 0 {
            t.push_str(&format!(
                "UNCOVERED {} citation(s) in the prose are not in Pointers, so they were never checked\n",
                d.verdict.brief.uncovered
            ));
        }
    }
    t
}

/// The other handoffs a GUESS was picked among: the ten newest, and how many more.
fn others(t: &mut String, others: &[HandoffInfo], now: i64) {
    for o in others.iter().take(10) {
        t.push_str(&format!(
            "other    {} in {} — {} — {}\n",
            o.branch.as_deref().unwrap_or("?"),
            o.checkout.as_deref().unwrap_or("?"),
            ago(o.mtime, now),
            o.path
        ));
    }
    if others.len() > 10 {
        t.push_str(&format!(
            "other    … and {} more (handoff-store list)\n",
            others.len() - 10
        ));
    }
}
