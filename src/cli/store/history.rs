//! `history`: `ops::history`, a line per version.

use super::{Format, Reply};
use crate::error::Error;
use crate::ops::history::History;
use crate::store::iso;

/// List the target's slot (version 0) and its kept versions.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(flatten)]
    dir: super::checkout::CheckoutOrDir,
    #[command(flatten)]
    slot: super::checkout::SlotArg,
}

pub(crate) fn run(args: &Args, format: Format) -> Result<Reply, Error> {
    Reply::show(
        format,
        &crate::ops::history::history(&args.slot.place(args.dir.dir()))?,
        history_text,
    )
}

pub(super) fn history_text(h: &History) -> String {
    let mut text = String::new();
    let mut line = |n: usize, mtime: Option<i64>, progress: Option<&str>, size: u64, path: &str| {
        text.push_str(&format!(
            "{n}\t{}\t{}\t{size} bytes\t{path}\n",
            mtime.map(iso).unwrap_or_default(),
            progress.unwrap_or("complete")
        ));
    };
    if let Some(c) = &h.current {
        line(0, c.mtime, c.progress.as_deref(), c.size, &c.path);
    }
    for v in &h.versions {
        line(v.version, v.mtime, v.progress.as_deref(), v.size, &v.path);
    }
    if text.is_empty() {
        text = format!(
            "no handoff here yet, and no earlier version: {} does not exist\n",
            h.slot
        );
    }
    text
}
