//! `prune` (docs/store.md §9.9): a dry run unless `--apply`; what it found or did, for people.
//! The work is `ops::prune`.

use super::{Format, Reply};
use crate::error::{Error, Exit};
use crate::ops::prune::{Item, Pruned, prune};

/// Delete consumed, abandoned and orphaned handoffs and stale files (dry run by default).
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Only what is older than this many days.
    #[arg(long, value_name = "DAYS", default_value_t = 30)]
    older_than: u64,
    /// Really delete.
    #[arg(long)]
    apply: bool,
}

pub(crate) fn run(args: &Args, format: Format) -> Result<Reply, Error> {
    let pruned = prune(args.older_than, args.apply)?;
    let exit = if pruned.items.iter().any(|i| i.failed) {
        Exit::Failure
    } else {
        Exit::Ok
    };
    Ok(Reply::show(format, &pruned, pruned_text)?.exit(exit))
}

fn pruned_text(p: &Pruned) -> String {
    let mut text = String::new();
    for it in &p.items {
        let line = if it.skipped {
            format!("skipped       {}  (locked)\n", it.path)
        } else {
            let verb = if !p.apply {
                "would delete"
            } else if it.deleted {
                "deleted     "
            } else {
                "not deleted "
            };
            format!(
                "{verb}  {}  ({}, {} old)\n",
                it.path,
                it.reason,
                crate::store::gap(it.age_seconds)
            )
        };
        text.push_str(&line);
    }
    // History folders and chains hold the versions `restore` and `log` bring back.
    let versions = |it: &&Item| matches!(it.kind, "history" | "ref");
    let kept = p
        .items
        .iter()
        .filter(versions)
        .filter(|it| !p.apply || it.deleted)
        .count();
    let deleted = p.items.iter().filter(|i| i.deleted).count();
    text.push_str(&if p.items.is_empty() {
        "nothing to prune.\n".to_string()
    } else if p.apply {
        format!("{deleted} item(s) deleted.\n")
    } else {
        format!(
            "{} item(s) would be deleted; run with --apply to delete them.\n",
            p.items.len()
        )
    });
    if kept > 0 {
        text.push_str(&if p.apply {
            format!("{kept} of them held earlier versions (history, chains): they can no longer be restored.\n")
        } else {
            format!("{kept} of them hold earlier versions (history, chains): once deleted, restore and log cannot bring them back.\n")
        });
    }
    text
}
