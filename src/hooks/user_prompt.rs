//! `hook user-prompt-submit`: the fallback for client releases that skip SessionStart after
//! `/clear`. On a session's first prompt, if no SessionStart firing claimed this session,
//! deliver what SessionStart would have (handled as `clear`), exactly once. Every later prompt
//! costs one `stat`.

use super::claims::claim;
use super::claims::claimed;
use super::input::{HookInput, Source};
use super::session_start::{self, Injection};

/// Deliver once per session when SessionStart did not (`event` names the client's hook);
/// otherwise nothing.
pub(crate) fn run(input: &HookInput, event: &str) -> Option<Injection> {
    let sid = input.sid()?;
    let started = Source::ALL
        .iter()
        .any(|s| claimed(sid, &session_start::claim_name(Some(*s))));
    // Once per session: this claim never expires.
    if started || !claim(sid, "prompt", None) {
        return None;
    }
    session_start::deliver(input, Some(Source::Clear), event)
}
