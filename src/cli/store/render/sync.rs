//! `push`, `pull` and `sync` for people: one summary line each, then a line for what went wrong
//! or was held back; with `-v`, a line per branch pulled and per ref pushed. A single ref or
//! branch gets its own line instead of a summary.

use super::super::sync::Synced;
use crate::sync::Merge;
use crate::sync::ops::{self, PullReport, Pushed};
use crate::sync::transport::PushStatus;

pub(crate) fn synced(s: &Synced, verbose: bool) -> String {
    let mut text = String::new();
    if let Some(changed) = s.setup {
        text.push_str(&setup_text(&s.remote, changed));
    }
    if let Some(p) = &s.pull {
        text.push_str(&pull_text(p, verbose));
    }
    if let Some(p) = &s.push {
        text.push_str(&push_text(p, verbose));
    }
    text
}

/// `2 pushed, 5 up to date, 1 rejected`: the counts that are not zero, in `order`.
fn tally<'a>(said: impl Iterator<Item = &'a str>, order: &[&str]) -> String {
    let said: Vec<&str> = said.collect();
    order
        .iter()
        .filter_map(|word| {
            let n = said.iter().filter(|s| *s == word).count();
            (n > 0).then(|| format!("{n} {word}"))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn setup_text(remote: &str, changed: bool) -> String {
    let refspec = crate::sync::fetch_refspec(remote);
    if changed {
        format!(
            "added    remote.{remote}.fetch = {refspec} (a plain `git fetch` now brings handoffs too)\n"
        )
    } else {
        format!("set up   remote.{remote}.fetch already holds {refspec}\n")
    }
}

fn pull_text(p: &PullReport, verbose: bool) -> String {
    let mut text = String::new();
    let summed = p.branches.len() > 1;
    if summed {
        text.push_str(&format!(
            "pulled   {} branches from {}: {}\n",
            p.branches.len(),
            p.remote,
            tally(
                p.branches.iter().map(|b| merge_word(&b.merge)),
                &["updated", "merged", "up to date", "ahead", "not imported"]
            )
        ));
    }
    if p.branches.is_empty() && p.available.is_empty() {
        text.push_str(&format!(
            "pulled   nothing: {} holds no handoff\n",
            p.remote
        ));
    }
    for b in &p.branches {
        let what = match &b.merge {
            Merge::UpToDate => "up to date".to_string(),
            Merge::LocalAhead => "yours is ahead (push to share it)".to_string(),
            Merge::FastForward => format!("updated from {} (now in the slot)", p.remote),
            Merge::Merged { remote_won: true } => format!(
                "merged: the version from {} is newer and in the slot; yours is in history",
                p.remote
            ),
            Merge::Merged { remote_won: false } => format!(
                "merged: yours is newer and stays in the slot; the version from {} is in history",
                p.remote
            ),
            Merge::Refused(why) => format!("not imported: {why}"),
        };
        let problem = matches!(b.merge, Merge::Refused(_));
        if !summed || verbose || problem {
            let slot = b
                .slot
                .as_deref()
                .map(|s| format!(" (slot {s})"))
                .unwrap_or_default();
            text.push_str(&format!("pulled   {}{slot}: {what}\n", b.branch));
        }
    }
    if !p.available.is_empty() {
        text.push_str(&format!(
            "on {}   handoffs for branches not here: {} (offered when you check one out)\n",
            p.remote,
            p.available.join(", ")
        ));
    }
    text
}

/// A pulled branch's outcome, in a word, for the summary.
fn merge_word(m: &Merge) -> &'static str {
    match m {
        Merge::UpToDate => "up to date",
        Merge::LocalAhead => "ahead",
        Merge::FastForward => "updated",
        Merge::Merged { .. } => "merged",
        Merge::Refused(_) => "not imported",
    }
}

/// A pushed ref's outcome, in a word, for the summary.
fn push_word(s: &PushStatus) -> &'static str {
    match s {
        PushStatus::Pushed => "pushed",
        PushStatus::Deleted => "deleted",
        PushStatus::UpToDate => "up to date",
        PushStatus::Moved | PushStatus::Locked => "rejected",
        PushStatus::Refused => "refused",
    }
}

fn push_text(p: &Pushed, verbose: bool) -> String {
    let mut text = String::new();
    let summed = p.updates.len() > 1;
    if summed {
        text.push_str(&format!(
            "pushed   {} handoff refs to {}: {}\n",
            p.updates.len(),
            p.remote,
            tally(
                p.updates.iter().map(|u| push_word(&u.status)),
                &["pushed", "up to date", "deleted", "rejected", "refused"]
            )
        ));
    }
    for u in &p.updates {
        let fine = matches!(
            u.status,
            PushStatus::Pushed | PushStatus::Deleted | PushStatus::UpToDate
        );
        if summed && fine && !verbose {
            continue;
        }
        let what = match u.status {
            PushStatus::Pushed => "pushed  ",
            PushStatus::Deleted => "deleted ",
            PushStatus::UpToDate => "pushed   (up to date)",
            PushStatus::Moved => "rejected (the remote moved)",
            PushStatus::Refused => "refused ",
            PushStatus::Locked => "rejected (the remote could not lock it)",
        };
        text.push_str(&format!(
            "{} {} → {} {}\n",
            what.trim_end(),
            u.reference,
            p.remote,
            u.summary
        ));
    }
    for k in &p.kept {
        text.push_str(&format!(
            "kept     {} on {}: written on {} at {}, within {} days — its branch may not be pushed yet (--force deletes it)\n",
            k.reference,
            p.remote,
            k.host,
            k.written_at,
            ops::TEAMMATE_DAYS
        ));
    }
    text
}
