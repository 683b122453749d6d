//! `hook post-compact`: a client's word that a compaction really happened (Claude Code fires
//! PostCompact only then). It confirms this session's background write, whose candidate may then
//! replace the slot; a compaction the client refused never gets here, so its handoff stays
//! untouched.

use super::input::{HookInput, store};

/// Confirm the session's newest unconfirmed run, `by` naming the client's signal. Prints
/// nothing.
pub(crate) fn run(input: &HookInput, by: &str) {
    let Some(sid) = input.sid() else { return };
    let Some(store) = store() else { return };
    crate::ops::after::confirm_compaction(&store, sid, by);
}
