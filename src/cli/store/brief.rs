//! `brief [-C DIR] [--paths GLOB…] [--task TEXT]` (docs/store.md §9.17): markdown for a
//! subagent, from the branch's handoff; printed, never stored, never consumed.

use super::{Format, Reply};
use crate::error::Error;

/// Print a brief for a subagent: its task, the decisions and traps that touch its paths, and
/// those paths' pointers with their verdicts (at most 1,500 characters).
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(flatten)]
    dir: super::checkout::Checkout,
    #[command(flatten)]
    slot: super::checkout::SlotArg,
    /// Only what touches these paths (git globs: `src/**/*.rs`, or a folder: `src/mail`);
    /// decisions and traps that cite no path are always kept.
    #[arg(long, value_name = "GLOB", num_args = 1..)]
    paths: Vec<String>,
    /// The subagent's task, as its brief's title (default: the handoff's title).
    #[arg(long, value_name = "TEXT")]
    task: Option<String>,
}

pub(crate) fn run(args: &Args, format: Format) -> Result<Reply, Error> {
    let view = crate::ops::read::brief(
        &args.slot.place(args.dir.dir()),
        &args.paths,
        args.task.as_deref(),
    )?;
    Reply::show(format, &view, |v| v.text.clone())
}
