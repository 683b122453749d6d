//! `hook post-checkout <prev> <new> <flag>` (docs/hooks.md §5): after a branch switch, one stderr
//! line when the new branch has a handoff — in the store, or else in the synced refs
//! (`refs/handoffs/<branch>`, `refs/handoff-remotes/*/<branch>`; local refs only). It reads no
//! stdin, writes no file, takes no lock and runs no gate, so it stays far under its 10 ms budget.
//! Silent where `handoff.enabled` is `false`.

use crate::store::{HandoffInfo, Target, gap, now};

/// Run the hook with git's three arguments: the line for stderr, if there is one to say.
pub(crate) fn run(args: &[String]) -> Option<String> {
    let [_prev, _new, flag] = args else {
        return None;
    };
    if flag != "1" {
        return None;
    }
    // git sets GIT_DIR/GIT_WORK_TREE for hooks; CONTEXT_ECONOMY_CHECKOUT is ignored here.
    let target = std::env::current_dir().ok().and_then(|d| Target::at(&d))?;
    // `handoff.enabled false` silences every automatic path, this one too.
    if target.settings().enabled() == crate::settings::Enabled::Off {
        return None;
    }
    let store = super::input::store()?;
    let Some(info) = HandoffInfo::read(&store, &target.name) else {
        // Not in the store, but perhaps in the synced refs (local refs only, no network).
        let found = crate::sync::offer::peek(&store, &target)?;
        let age = (now() - found.meta.written_at).max(0) as u64;
        return Some(format!(
            "handoff-store: {} has a handoff on {} ({}, last written {} ago) — show it with: handoff-store read",
            target.facts.reference,
            found.reference,
            found.meta.progress.as_deref().unwrap_or("complete"),
            gap(age)
        ));
    };
    let age = info.mtime.map_or(0, |m| (now() - m).max(0) as u64);
    Some(format!(
        "handoff-store: {} has a handoff ({}, last written {} ago) — show it with: handoff-store read",
        target.facts.reference,
        info.progress_shown(),
        gap(age)
    ))
}
