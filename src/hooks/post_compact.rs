//! `hook post-compact`: a client's word that a compaction really happened (Claude Code fires
//! PostCompact only then). It confirms this session's background write, whose candidate may then
//! replace the slot; a compaction the client refused never gets here, so its handoff stays
//! untouched. Where the client hands over the compaction's summary, it is audited against the
//! handoff delivered at that compaction (docs/hooks.md §11): the reset log records what it kept.

use super::input::{HookInput, store};

/// Confirm the session's newest unconfirmed run, `by` naming the client's signal; then audit
/// the summary, where there is one: the sentence for the person.
pub(crate) fn run(input: &HookInput, by: &str) -> Option<String> {
    let sid = input.sid()?;
    let store = store()?;
    crate::ops::after::confirm_compaction(&store, sid, by);
    let summary = input.summary.as_deref()?;
    let target = input.target()?;
    // The slot's handoff: in Claude Code (2.1.197, measured) SessionStart(compact) has delivered
    // it by now; a client that asks at its next model call will.
    let bytes = crate::store::slot::read_capped(&store.path_of(&target.name)).ok()?;
    let doc = crate::document::Document::parse(&String::from_utf8_lossy(&bytes));
    let audit = crate::ops::audit::audit(&doc, summary);
    // Where the delivery comes after (a client that asks at its next model call), the audit waits
    // for the compaction's reset to be logged.
    if !crate::store::resets::annotate(&store, input.session.as_ref()?.raw(), &audit) {
        super::resets::keep_audit(sid, &audit, summary);
    }
    Some(audit.sentence())
}
