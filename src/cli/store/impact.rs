//! `impact [-C DIR | --all] [--since DAYS] [--seed N] [--svg FILE]` (docs/store.md §9.20): what followed each
//! logged reset, from the sessions' own transcripts, per client and arm.

use super::{Format, Reply};
use crate::error::Error;
use crate::ops::impact::{Compared, Impact, Summary};

/// What a handoff changed in the sessions after it.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(flatten)]
    dir: super::checkout::Checkout,
    /// Every repository's resets, not only this checkout's.
    #[arg(long, conflicts_with = "checkout")]
    all: bool,
    /// Only the resets of the last DAYS days.
    #[arg(long, value_name = "DAYS", default_value_t = 90)]
    since: u64,
    /// The bootstrap's seed: the same seed gives the same intervals.
    #[arg(long, value_name = "N", default_value_t = 20_261_207)]
    seed: u64,
    /// Also draw, per arm, how many tool calls came before the first edit, as an SVG file.
    #[arg(long, value_name = "FILE")]
    svg: Option<std::path::PathBuf>,
}

pub(crate) fn run(args: &Args, format: Format) -> Result<Reply, Error> {
    let store = crate::store::Store::open()?;
    let main = if args.all {
        None
    } else {
        Some(crate::ops::Place::of(args.dir.dir(), None).target()?.main())
    };
    let request = crate::ops::impact::Request {
        main,
        since_days: args.since,
        seed: args.seed,
        reader: crate::harness::transcript_line,
        rows: crate::harness::transcript_rows,
    };
    let impact = crate::ops::impact::impact(&store, &request);
    if let Some(path) = &args.svg {
        let svg = super::impact_svg::chart(&impact.resets);
        // Through a link the user put there, never replacing it.
        let path = match crate::fs::symlink_metadata(path) {
            Ok(m) if m.file_type().is_symlink() => {
                crate::fs::canonicalize(path).map_err(|e| Error::io(path, e))?
            }
            _ => path.clone(),
        };
        crate::durable::write(&path, svg.as_bytes(), None)?;
    }
    Reply::show(format, &impact, impact_text)
}

fn impact_text(i: &Impact) -> String {
    if i.resets.is_empty() {
        return "no reset recorded here yet: each /clear and compaction a hook answers is logged from now on\n".into();
    }
    let mut text = String::new();
    for s in &i.summaries {
        text.push_str(&summary_line(s));
    }
    for c in &i.compared {
        text.push_str(&compared_line(c));
    }
    if i.compared.iter().any(|c| c.observational) {
        text.push_str("observational: resets given nothing were not drawn at random (no handoff yet, a repository not in use), so the difference is not a fair comparison and says nothing of a cause; `git config handoff.holdout 5` runs a fair one\n");
    }
    text
}

fn summary_line(s: &Summary) -> String {
    let mut line = format!(
        "{:<12} {:<9} {} reset(s), {} transcript(s) read, {} followed by an edit",
        s.client,
        s.arm.word(),
        s.resets,
        s.read,
        s.with_edit
    );
    if let (Some(t), Some(k), Some(m)) = (
        s.median_tool_calls_to_edit,
        s.median_tokens_to_edit,
        s.median_minutes_to_edit,
    ) {
        line.push_str(&format!(
            "; to the first edit (median): {t} tool call(s), {k} token(s), {m:.1} min"
        ));
    }
    line.push_str(&format!(
        "; {} call(s) named a cited file, {} repeated a dead end or trap",
        s.cited_reads, s.repeats
    ));
    if s.audited > 0 {
        line.push_str(&format!(
            "; over {} compaction(s), {}",
            s.audited,
            s.kept
                .sentence()
                .replacen("the compaction's summary", "the summaries", 1)
        ));
    }
    line.push('\n');
    line
}

fn compared_line(c: &Compared) -> String {
    let what = format!(
        "{:<12} delivered vs {}, {}",
        c.client,
        c.against.word(),
        c.measure.replace('_', " ")
    );
    match &c.difference {
        Some(d) => format!(
            "{what}: {:+} (95 % interval {:+} to {:+}; {} and {} resets)\n",
            d.median, d.low, d.high, c.n.0, c.n.1
        ),
        None => format!(
            "{what}: not enough data ({} and {} resets; {} in each arm needed)\n",
            c.n.0,
            c.n.1,
            crate::ops::impact::ENOUGH
        ),
    }
}
