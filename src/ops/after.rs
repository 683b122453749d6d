//! What follows a change of a stored handoff, decided in one place. A change of a slot ends by
//! being recorded on its branch's chain (`store::change::SlotChange::finish`); what comes after
//! that — today, when the repository's git config sets `handoff.autoPush`, sending the chain in
//! the background — is one `match` on why the slot changed ([`decide`]), for every command and
//! hook alike. Nothing else starts a push after a change (`tests/cli/layers.rs` checks it).

use serde::Serialize;

use crate::store::change::{Recorded, SlotChange};
use crate::store::runs::{self, Run};
use crate::store::{Store, Target};

/// Why a slot changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Why {
    /// `write` stored a handoff.
    Written,
    /// `restore` swapped a kept version back.
    Restored,
    /// `fix` rewrote the line numbers of moved citations: a new version of the same handoff.
    Fixed,
    /// A background write's candidate replaced the slot after a confirmed compaction.
    Promoted,
    /// `set-progress` or a reader's consume changed the `progress:` line only.
    Progress,
    /// A placeholder (`progress: writing`) went in: nothing a teammate can read.
    Placeholder,
}

/// What followed a change.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub(crate) struct Followed {
    /// A background push of the chain was started (or asked of the one at work).
    pub(crate) push_started: bool,
}

/// The one decision: what follows `why` for the slot of `target` (none: its branch is not known,
/// so there is nothing to send).
pub(crate) fn decide(why: Why, target: Option<&Target>) -> Followed {
    let push = match why {
        // A version someone can read: it travels (`handoff.autoPush`).
        Why::Written | Why::Restored | Why::Fixed | Why::Promoted => true,
        // A lifecycle mark, or nothing to read yet: not worth a push of its own.
        Why::Progress | Why::Placeholder => false,
    };
    Followed {
        push_started: push && target.is_some_and(crate::sync::auto_push),
    }
}

/// End `change` (its chain records it) and decide what follows: what was recorded, and that.
pub(crate) fn finish(change: SlotChange<'_>, why: Why) -> (Recorded, Followed) {
    let recorded = change.finish();
    let followed = if recorded.changed {
        decide(why, recorded.target.as_ref())
    } else {
        Followed::default()
    };
    (recorded, followed)
}

/// A background write's candidate replaced its slot (a confirmed compaction): it goes out like
/// a written version, unless its checkout has moved to another branch since.
pub(crate) fn promoted(run: &Run) -> Followed {
    let target = Target::at(std::path::Path::new(&run.job.cwd)).filter(|t| t.name == run.job.slot);
    decide(Why::Promoted, target.as_ref())
}

/// A client's word that session `session`'s compaction happened (`by` names the signal): its
/// newest unconfirmed background write is confirmed, and its candidate, when ready, promoted.
pub(crate) fn confirm_compaction(store: &Store, session: &str, by: &str) -> Followed {
    match runs::confirm_session(store, session, by) {
        Some(run) => promoted(&run),
        None => Followed::default(),
    }
}
