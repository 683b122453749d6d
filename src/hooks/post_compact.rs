//! `hook post-compact` (issue 9): Claude Code fires PostCompact only when a compaction really
//! happened. It confirms this session's background write, whose candidate may then replace the
//! slot; a compaction the client refused never gets here, so its handoff stays untouched.

use serde_json::{Map, Value};

use super::input::safe_session_id;
use super::input::store;
use super::input::string_field;
use crate::store::runs;

/// Confirm the session's newest unconfirmed run. Prints nothing.
pub fn run(input: &Map<String, Value>) {
    let Some(session) = string_field(input, "session_id") else {
        return;
    };
    let Some(store) = store() else { return };
    if let Some(run) = runs::confirm_session(&store, &safe_session_id(session), "PostCompact") {
        crate::lifecycle::promoted(&run);
    }
}
