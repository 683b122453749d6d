//! `hook user-prompt-submit` (issue 9): the fallback for client releases that skip SessionStart
//! after `/clear`. On a session's first prompt, if no SessionStart firing claimed this session,
//! deliver what SessionStart would have (handled as `clear`), exactly once. Every later prompt
//! costs one `stat`.

use serde_json::{Map, Value};

use super::claims::claim;
use super::claims::claimed;
use super::input::safe_session_id;
use super::input::string_field;
use super::session_start;

/// Deliver once per session when SessionStart did not (to `emit`); otherwise nothing.
pub fn run(input: &Map<String, Value>, emit: &mut session_start::Emit) {
    let Some(session) = string_field(input, "session_id") else {
        return;
    };
    let sid = safe_session_id(session);
    let started = session_start::SOURCES
        .iter()
        .any(|s| claimed(&sid, &session_start::claim_name(Some(s))));
    // Once per session: this claim never expires.
    if started || !claim(&sid, "prompt", None) {
        return;
    }
    session_start::deliver(input, Some("clear"), "UserPromptSubmit", emit);
}
