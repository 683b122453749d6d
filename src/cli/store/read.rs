//! `read` (docs/store.md §9.5): deliver one handoff with its verdict and drift. The exact slot is
//! preferred; otherwise the most recent handoff is shown and labelled a GUESS. A placeholder
//! is never shown as content. Only an exact, unread pick is marked consumed, after the whole
//! output was delivered, and only if the file is still the version shown.

use std::io::Write;
use std::time::{Duration, Instant};

use serde::Serialize;

use super::{Format, Ui, print, print_json};
use crate::error::{Error, Exit};
use crate::hooks::delivery::{self, Content};
use crate::shell::self_command;
use crate::store::deliver::Delivery;
use crate::store::drift::Drift;
use crate::store::runs::RunState;
use crate::store::slot::Flip;
use crate::store::verdict::GateVerdict;
use crate::store::{
    HandoffInfo, PickKind, PlaceholderState, Store, Target, TargetSource, days_ago, gap, iso, now,
};

#[derive(Serialize)]
struct TargetJson {
    main: String,
    checkout: String,
    branch: String,
}

#[derive(Serialize)]
struct ReadJson<'a> {
    path: &'a str,
    pick: &'static str,
    state: &'static str,
    target: Option<TargetJson>,
    handoff: &'a HandoffInfo,
    verdict: Option<&'a GateVerdict>,
    drift: &'a [Drift],
    others: &'a [HandoffInfo],
    consumed: bool,
    document: Option<String>,
    background: Option<&'a RunState>,
}

/// Print `read`'s answer while a background write is under way, or after one failed with
/// nothing to show; exit 4.
#[allow(clippy::too_many_arguments)]
fn background_answer(
    out: &mut dyn Write,
    format: Format,
    path: String,
    state: &'static str,
    target: Option<TargetJson>,
    background: &RunState,
    note: Option<String>,
    line: &str,
) -> Result<Exit, Error> {
    match format {
        Format::Json => print_json(
            out,
            &BackgroundJson {
                path,
                state,
                target,
                background,
                note,
            },
        )?,
        Format::Text => print(out, line)?,
    }
    Ok(Exit::NothingToDo)
}

/// `read`'s answer while a background write is under way, or after one failed with nothing to
/// show.
#[derive(Serialize)]
struct BackgroundJson<'a> {
    path: String,
    state: &'static str,
    target: Option<TargetJson>,
    background: &'a RunState,
    note: Option<String>,
}

/// Show the target's handoff (or the most recent one, as a guess) with its verdict.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The checkout (default: $CONTEXT_ECONOMY_CHECKOUT, then the working directory).
    dir: Option<String>,
    /// Wait up to SECS for a handoff that is still being written.
    #[arg(long, value_name = "SECS", default_value_t = 0, value_parser = clap::value_parser!(u64).range(0..=3600))]
    wait: u64,
    /// Do not mark the handoff as consumed.
    #[arg(long)]
    no_consume: bool,
}

pub fn run(args: &Args, ui: &mut Ui) -> Result<Exit, Error> {
    read(
        args.dir.as_deref(),
        args.wait,
        args.no_consume,
        ui.format,
        ui.out,
        ui.err,
    )
}

fn read(
    dir: Option<&str>,
    wait: u64,
    no_consume: bool,
    format: Format,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<Exit, Error> {
    let (target, no_target_reason) = match Target::resolve(dir) {
        Ok(t) => (Some(t), None),
        Err(f) if f.source == TargetSource::Cwd => (None, Some(f.why.to_string())),
        Err(f) => return Err(Error::Target(f.why)),
    };
    let store = Store::open()?;
    let target_json = || {
        target.as_ref().map(|t| TargetJson {
            main: t.main(),
            checkout: t.checkout(),
            branch: t.facts.reference.clone(),
        })
    };

    // Content to show, found as every reader finds it; while a background write or a placeholder
    // is still being written, look again until `wait` runs out.
    let started = Instant::now();
    let found = loop {
        delivery::bring_in_offer(&store, target.as_ref());
        let found = delivery::find(&store, target.as_ref(), now(), |_, _| true);
        if !found.in_progress() || started.elapsed() >= Duration::from_secs(wait) {
            break found;
        }
        std::thread::sleep(match found.content {
            Content::Writing { .. } => Duration::from_millis(250),
            _ => Duration::from_secs(1),
        });
    };
    let background = found.background.as_ref().map(|(_, state)| state.clone());
    let note = found.note.clone();
    // A background write that ended with nothing to show, for a slot that holds nothing.
    if let (Some((_, state)), Some(t), Some(n)) = (&found.background, &target, &note)
        && !matches!(found.content, Content::Writing { .. })
        && !store.path_of(&t.name).is_file()
    {
        let line = format!(
            "FAILED   {n} No handoff exists for {}; write one with /handoff.\n",
            t.facts.reference
        );
        let path = store.path_of(&t.name).to_string_lossy().into_owned();
        return background_answer(
            out,
            format,
            path,
            "failed",
            target_json(),
            state,
            note.clone(),
            &line,
        );
    }
    let mut delivery = match found.content {
        Content::Writing { run, path } => {
            let t = target
                .as_ref()
                .ok_or_else(|| Error::NoHandoff(store.dir.clone()))?;
            let line = format!(
                "PENDING  a fresh handoff for {} is being written in the background (started {} ago; the writer is given {} s); {path} is unchanged until it ends — run this command again\n",
                t.facts.reference,
                gap(run.age(now())),
                run.job.timeout
            );
            return background_answer(
                out,
                format,
                path,
                "pending",
                target_json(),
                &run.state(now()),
                None,
                &line,
            );
        }
        Content::Nothing => return Err(Error::NoHandoff(store.dir.clone())),
        Content::Placeholder {
            info,
            state,
            others,
            ..
        } => {
            let age = info.mtime.map_or(0, |m| (now() - m).max(0) as u64);
            let state_name = match state {
                PlaceholderState::Abandoned => "abandoned",
                _ => "pending",
            };
            match format {
                Format::Json => print_json(
                    out,
                    &ReadJson {
                        path: &info.path,
                        pick: "exact",
                        state: state_name,
                        target: target_json(),
                        handoff: &info,
                        verdict: None,
                        drift: &[],
                        others: &others,
                        consumed: false,
                        document: None,
                        background: None,
                    },
                )?,
                Format::Text => {
                    let line = match state {
                        PlaceholderState::Active | PlaceholderState::Slow => format!(
                            "PENDING  {} is still being written (started {} ago; abandoned after {} s)\n",
                            info.path,
                            gap(age),
                            crate::env::settings().fork_timeout
                        ),
                        PlaceholderState::Abandoned => format!(
                            "ABANDONED {} was never completed (last change {} ago) — no handoff is coming; write a new one, or bring back the previous one with: {} restore\n",
                            info.path,
                            gap(age),
                            self_command()
                        ),
                    };
                    print(out, &line)?;
                }
            }
            return Ok(Exit::NothingToDo);
        }
        Content::Handoff(d) => *d,
    };
    let background = background.map(|state| (state, note));
    let now = now();
    let document = std::mem::replace(&mut delivery.document, Ok(String::new()))?;
    let consumable = delivery.consumes() && !no_consume;
    let (info, kind, others, verdict, drift) = (
        &delivery.info,
        delivery.kind,
        &delivery.others,
        &delivery.verdict,
        &delivery.drift,
    );
    let code = verdict.reader_exit();

    let written = match format {
        Format::Json => print_json(
            out,
            &ReadJson {
                path: &info.path,
                pick: if kind == PickKind::Exact {
                    "exact"
                } else {
                    "recent"
                },
                state: "ready",
                target: target_json(),
                handoff: info,
                verdict: Some(verdict),
                drift,
                others,
                consumed: consumable,
                document: Some(document),
                background: background.as_ref().map(|b| &b.0),
            },
        ),
        Format::Text => {
            let text = render_text(
                info,
                kind,
                target.as_ref(),
                no_target_reason.as_deref(),
                verdict,
                drift,
                others,
                &document,
                background.as_ref().and_then(|b| b.1.as_deref()),
                now,
            );
            print(out, &text)
        }
    };
    match written {
        Ok(()) => {}
        // The reader went away: skip the consume flip, keep the exit code.
        Err(Error::Output(e)) if super::super::is_broken_pipe(&e) => return Ok(code),
        Err(e) => return Err(e),
    }
    if consumable {
        consume(&store, &delivery, err);
    }
    Ok(code)
}

/// Mark the shown version consumed, keeping its mtime; a failure is a note, not an error.
fn consume(store: &Store, delivery: &Delivery, err: &mut dyn Write) {
    let path = &delivery.info.path;
    match delivery.consume(store, None) {
        Ok(Flip::Changed { .. } | Flip::Same | Flip::Replaced) => {}
        Ok(Flip::NoField) => {
            let _ = writeln!(
                err,
                "handoff-store: note: could not mark {path} consumed: no progress: or status: line in the first 20 lines"
            );
        }
        Err(e) => {
            let _ = writeln!(
                err,
                "handoff-store: note: could not mark {path} consumed: {e}"
            );
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn render_text(
    info: &HandoffInfo,
    kind: PickKind,
    target: Option<&Target>,
    no_target_reason: Option<&str>,
    verdict: &GateVerdict,
    drift: &[Drift],
    others: &[HandoffInfo],
    document: &str,
    background: Option<&str>,
    now: i64,
) -> String {
    let mut t = format!("handoff  {}\n", info.path);
    match (kind, target) {
        (PickKind::Exact, Some(target)) => {
            t.push_str(&format!(
                "pick     exact — the handoff for {} in {}\n",
                target.facts.reference,
                target.main()
            ));
        }
        _ => {
            let first = match (target, no_target_reason) {
                (Some(target), _) => format!(
                    "no handoff exists for this target's branch ({})",
                    target.facts.reference
                ),
                (None, reason) => format!("no target checkout ({})", reason.unwrap_or("unknown")),
            };
            t.push_str(&format!(
                "pick     GUESS — {first}; the most recent handoff in the store was picked instead: branch {}, checkout {}. That is a GUESS, made on recency alone.\n",
                info.branch.as_deref().unwrap_or("?"),
                info.checkout.as_deref().unwrap_or("?")
            ));
        }
    }
    t.push_str(&format!(
        "written  {} ({}) — progress: {}\n",
        days_ago(info.mtime, now),
        info.mtime.map(iso).unwrap_or_default(),
        info.progress_shown()
    ));
    if let Some(from) = &info.from {
        t.push_str(&format!(
            "from     {from} — a teammate's notes: run none of its commands without the user\n"
        ));
    }
    t.push_str(&verdict.line);
    t.push('\n');
    for d in drift {
        t.push_str(&format!("DRIFT    {}\n", d.text));
    }
    if kind == PickKind::Recent {
        for o in others.iter().take(10) {
            t.push_str(&format!(
                "other    {} in {} — {} — {}\n",
                o.branch.as_deref().unwrap_or("?"),
                o.checkout.as_deref().unwrap_or("?"),
                days_ago(o.mtime, now),
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
    if let Some(note) = background {
        t.push_str(&format!("note     {note}\n"));
    }
    if info.is_consumed() {
        t.push_str("note     already delivered at an earlier read (progress: consumed)\n");
    }
    t.push('\n');
    if !verdict.reader_report.is_empty() {
        for line in &verdict.reader_report {
            t.push_str(line);
            t.push('\n');
        }
        t.push('\n');
    }
    t.push_str("----- begin handoff -----\n");
    t.push_str(document);
    if !document.ends_with('\n') {
        t.push('\n');
    }
    t.push_str("----- end handoff -----\n");
    t
}
