//! `log [-C DIR] [-n N]` (docs/store.md §9.15): the lineage of the branch's handoff, newest
//! first, from its chain.

use super::{Format, Reply};
use crate::error::Error;
use crate::ops::log::Log;

/// The branch's handoff versions, newest first, with what each changed.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(flatten)]
    dir: super::checkout::Checkout,
    #[command(flatten)]
    slot: super::checkout::SlotArg,
    /// How many versions to show.
    #[arg(short = 'n', long = "number", value_name = "N", default_value_t = 10)]
    number: usize,
}

pub(crate) fn run(args: &Args, format: Format) -> Result<Reply, Error> {
    let log = crate::ops::log::log(&args.slot.place(args.dir.dir()), args.number)?;
    Reply::show(format, &log, log_text)
}

pub(super) fn log_text(l: &Log) -> String {
    let mut text = String::new();
    for v in &l.versions {
        let parent = v.parents.first().map_or_else(
            || "first".to_string(),
            |p| format!("after {}", &p[..p.len().min(12)]),
        );
        let seq = v.seq.map_or_else(|| "?".to_string(), |n| n.to_string());
        let number = if v.restored {
            format!("{seq} restored")
        } else {
            seq
        };
        text.push_str(&format!(
            "#{number:<4} {}  {}  {:<9} {} ({parent})\n",
            v.written_at,
            v.host.as_deref().unwrap_or("?"),
            v.progress,
            &v.id[..v.id.len().min(12)],
        ));
        if let Some(frame) = &v.teammate {
            text.push_str(&format!("      {frame}\n"));
        }
        if v.older_unread {
            text.push_str("      its older commits were not read (over 256 of one text): what it changed is not known\n");
        } else if v.changes.is_empty() {
            text.push_str("      no change in Decisions, Dead ends or Traps\n");
        }
        for (name, d) in v.changes.sections() {
            for item in &d.added {
                text.push_str(&format!("      + {name}: {}\n", cut(item)));
            }
            for r in &d.reworded {
                text.push_str(&format!("      ~ {name}: {}\n", cut(&r.after)));
            }
            for item in &d.removed {
                text.push_str(&format!("      − {name}: {}\n", cut(item)));
            }
        }
    }
    text
}

/// The most of an item a line shows.
const ITEM_MAX: usize = 100;

/// `item`, or its first words up to [`ITEM_MAX`] characters and `…`.
fn cut(item: &str) -> String {
    if item.chars().count() <= ITEM_MAX {
        return item.to_string();
    }
    let mut shown = String::new();
    for word in item.split(' ') {
        if shown.chars().count() + word.chars().count() + 1 > ITEM_MAX - 1 {
            break;
        }
        if !shown.is_empty() {
            shown.push(' ');
        }
        shown.push_str(word);
    }
    if shown.is_empty() {
        shown = item.chars().take(ITEM_MAX - 1).collect();
    }
    format!("{shown}…")
}
