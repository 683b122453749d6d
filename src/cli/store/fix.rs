//! `fix [-C DIR] [--dry-run]`: `ops::fix` on the target's stored handoff, each move and what
//! was left alone, then what happened to the slot.

use super::{Format, Reply};
use crate::error::{Error, Exit};
use crate::ops::fix::Fixed;
use crate::report::fix::citations;

/// Rewrite the line numbers of the stored handoff's moved citations.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(flatten)]
    dir: super::checkout::Checkout,
    #[command(flatten)]
    slot: super::checkout::SlotArg,
    /// Say what would move, and change nothing.
    #[arg(long)]
    dry_run: bool,
}

pub(crate) fn run(args: &Args, format: Format) -> Result<Reply, Error> {
    let fixed = crate::ops::fix::fix(&args.slot.place(args.dir.dir()), args.dry_run)?;
    let exit = Exit::of_gate(fixed.exit);
    Ok(Reply::show(format, &fixed, fixed_text)?.exit(exit))
}

pub(super) fn fixed_text(f: &Fixed) -> String {
    let mut text: String = f.healing.lines().iter().map(|l| format!("{l}\n")).collect();
    let n = f.healing.moves.len();
    let verdict = match f.exit {
        0 => "gate OK",
        1 => "gate FAILED",
        _ => "gate MALFORMED",
    };
    text.push_str(&match (n, f.dry_run, f.written) {
        (0, _, _) => format!(
            "nothing to fix: no citation of {} moved to a line of its own ({verdict})\n",
            f.path
        ),
        (_, true, _) => format!(
            "would fix {}: {} (--dry-run: nothing written; then {verdict})\n",
            f.path,
            citations(n)
        ),
        _ => format!("fixed    {}: {} ({verdict})\n", f.path, citations(n)),
    });
    if let Some(h) = &f.history {
        text.push_str(&format!("history  {h}\n"));
    }
    if f.auto_push {
        text.push_str("pushing  in the background (handoff.autoPush)\n");
    }
    text
}
