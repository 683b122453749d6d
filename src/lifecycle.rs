//! What follows a change of a stored handoff, decided in one place. A change of a slot ends by
//! being recorded on its branch's chain (`store::change::SlotChange`); what comes after that —
//! today, when the repository's git config sets `handoff.autoPush`, sending the chain in the
//! background — is decided here, for every command and hook alike. Nothing else starts a push
//! after a change (`tests/cli/layers.rs` checks it), so a new consequence of a change (say,
//! telling the person) has one place to go.

use serde::Serialize;

use crate::store::Target;
use crate::store::runs::Run;

/// What followed a change.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub(crate) struct Followed {
    /// A background push of the chain was started (or asked of the one at work).
    pub(crate) push_started: bool,
}

/// `target`'s slot was written or restored by a command.
pub(crate) fn changed(target: &Target) -> Followed {
    Followed {
        push_started: crate::sync::auto_push(target),
    }
}

/// A background write's candidate replaced its slot (a confirmed compaction): it goes out like
/// a written version, unless its checkout has moved to another branch since.
pub(crate) fn promoted(run: &Run) -> Followed {
    Followed {
        push_started: crate::sync::auto_push_promoted(run),
    }
}
