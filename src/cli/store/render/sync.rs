//! `push`, `pull` and `sync` for people: a line per branch pulled, per ref pushed, per chain
//! kept.

use super::super::sync::Synced;
use crate::sync::Merge;
use crate::sync::ops::{self, PullReport, Pushed};
use crate::sync::transport::PushStatus;

pub(crate) fn synced(s: &Synced) -> String {
    let mut text = String::new();
    if let Some(changed) = s.setup {
        text.push_str(&setup_text(&s.remote, changed));
    }
    if let Some(p) = &s.pull {
        text.push_str(&pull_text(p));
    }
    if let Some(p) = &s.push {
        text.push_str(&push_text(p));
    }
    text
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

fn pull_text(p: &PullReport) -> String {
    let mut text = String::new();
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
        text.push_str(&format!("pulled   {}: {what}\n", b.branch));
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

fn push_text(p: &Pushed) -> String {
    let mut text = String::new();
    for u in &p.updates {
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
