//! `write`: the draft read from stdin or a file, handed to `ops::write`, and its outcome
//! rendered — the gate's report first, then where the handoff went.

use std::io::IsTerminal;

use super::{Format, Reply};
use crate::error::{Error, Exit, Usage};
use crate::ops::write::{Body, Outcome, Request, Went, Written, read_draft, read_draft_file};
use crate::report::Stream;

/// The flags of `write`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(flatten)]
    checkout: super::checkout::Checkout,
    #[command(flatten)]
    slot: super::checkout::SlotArg,
    /// Read the document from FILE (`-` for stdin).
    #[arg(long, value_name = "FILE", conflicts_with = "placeholder")]
    from: Option<String>,
    /// The same as --from FILE.
    #[arg(value_name = "FILE", conflicts_with_all = ["from", "placeholder"])]
    file: Option<String>,
    /// Write the placeholder (progress: writing) instead of a document.
    #[arg(long)]
    placeholder: bool,
    /// Replace a slot that holds another branch's or repository's handoff.
    #[arg(long)]
    force: bool,
    /// Store without running the gate (credentials are still refused).
    #[arg(long)]
    no_gate: bool,
    /// Key the handoff to this branch rather than to what HEAD is on (on a detached HEAD).
    #[arg(long, value_name = "NAME")]
    branch: Option<String>,
    /// Gate the document as `write` would, and store nothing (the exit is the gate's).
    #[arg(long, conflicts_with = "placeholder")]
    dry_run: bool,
}

/// The draft `--from FILE`, FILE or stdin names (`-` is stdin; a terminal is no document).
pub(super) fn draft(from: Option<&str>) -> Result<String, Error> {
    match from {
        Some(f) if f != "-" => read_draft_file(f),
        _ => {
            let stdin = std::io::stdin();
            if from.is_none() && stdin.is_terminal() {
                return Err(Error::Usage(Usage::NoDocument));
            }
            read_draft(stdin.lock())
        }
    }
}

pub(crate) fn run(args: &Args, format: Format) -> Result<Reply, Error> {
    let from = args.from.as_deref().or(args.file.as_deref());
    let body = if args.placeholder {
        Body::Placeholder
    } else {
        Body::Document {
            text: draft(from)?,
            from: from.unwrap_or("-").to_string(),
        }
    };
    let request = Request {
        place: args.slot.place(args.checkout.dir()),
        body,
        force: args.force,
        no_gate: args.no_gate,
        branch: args.branch.clone(),
        dry_run: args.dry_run,
    };
    reply(crate::ops::write::write(&request)?, format)
}

/// The outcome of a write, as the command line says it.
pub(super) fn reply(w: Outcome, format: Format) -> Result<Reply, Error> {
    let mut reply = Reply::new(Exit::Ok);
    if let Some(commit) = &w.detached {
        reply = reply.note(format!(
            "handoff-store: HEAD is detached: this handoff is keyed to commit {commit} and will not be shown on any branch; pass --branch NAME to key it to one"
        ));
    }
    if let Some(why) = &w.unrecorded {
        reply = reply.note(format!(
            "handoff-store: warning: the handoff is stored, but not yet recorded in git ({why}); the next write records it"
        ));
    }
    reply = reply.lines(
        w.credentials
            .iter()
            .map(|m| (Stream::Err, format!("ERROR    {m}"))),
    );
    if format == Format::Text
        && let Some(report) = &w.report
    {
        reply = reply.lines(report.store_lines());
    }
    if let Some(written) = &w.written {
        reply = reply.exit(Exit::of_gate(written.exit));
        // A refused draft shows the result only as JSON (stored: false); the text is the
        // gate's report and the error.
        if format == Format::Json || w.refused.is_none() {
            reply = reply.shown(format, written, written_text)?;
        }
    }
    Ok(match w.refused {
        Some(e) => reply.failed_in(e, format),
        None => reply,
    })
}

/// Where the handoff went, and what follows.
fn written_text(w: &Written) -> String {
    let verb = if w.stored { "stored" } else { "would go" };
    let mut text = format!("\n{verb:<8} {} {}\n", w.path, note(w));
    if let Some(h) = &w.history {
        text.push_str(&format!("history  {h}\n"));
    }
    if w.auto_push {
        text.push_str("pushing  in the background (handoff.autoPush)\n");
    }
    text
}

/// What the text says after the path: `(gate: OK)`, `(placeholder, …)`, ….
fn note(w: &Written) -> String {
    match (&w.went, w.exit) {
        (Went::Gated, 0) => "(gate: OK)".into(),
        (Went::Gated, _) => "(gate: FAILED, exit 1 — fix the citations and write again)".into(),
        (Went::Placeholder, _) => "(placeholder, progress: writing)".into(),
        (Went::NoGate, _) => "(gate: not run, --no-gate)".into(),
        (Went::DryRun, _) => "(dry run: nothing was stored)".into(),
        (Went::Refused, _) => String::new(),
        (Went::GoneRun { slot }, _) => format!(
            "(the background write it belongs to no longer exists: kept in history; {slot} is unchanged)"
        ),
        (Went::Candidate { promoted: true, .. }, 0) => {
            "(gate: OK; the compaction is confirmed, so it is in the slot)".into()
        }
        (Went::Candidate { slot, .. }, 0) => format!(
            "(gate: OK; a candidate — it replaces {slot} once the client confirms the compaction)"
        ),
        (Went::Candidate { slot, .. }, _) => format!(
            "(gate: FAILED, exit 1 — a candidate that will not replace {slot}; fix the citations and write again)"
        ),
    }
}
