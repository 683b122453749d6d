//! `hook pre-tool-use` / `hook post-tool-use` (docs/hooks.md §10): the tripwire. A shell
//! command or an edit that repeats a dead end or trap of the branch's handoff gets one line for
//! the model — never a block, never a change to the call — at most once per item per session
//! (a claim, so two hooks firing at once say it once). This runs at every tool call the agent
//! makes: a call that is no shell command or edit, or a session without an id, costs no
//! repository lookup; everything else reads one cache beside the slot (`ops::tripwire`).

use super::claims::claim;
use super::input::HookInput;
use crate::ops::tripwire::{Call, check};

/// What a tripwire says: the model's line and the person's receipt.
pub(crate) struct Said {
    pub(crate) text: String,
    pub(crate) receipt: String,
}

/// The first item `call` repeats that this session was not yet told of; `after`: the client's
/// hook runs once the call ran.
pub(crate) fn run(input: &HookInput, call: &Call, after: bool) -> Option<Said> {
    let sid = input.sid()?;
    let target = input.target()?;
    let store = super::input::store()?;
    let trips = check(&store, &target, call);
    let trip = trips
        .into_iter()
        .find(|t| claim(sid, &format!("trip-{}", t.id), None))?;
    Some(Said {
        text: super::texts::tripwire_note(&trip, after),
        receipt: format!(
            "handoff-store: the model was reminded of the handoff's {} at `{}`",
            trip.kind.word(),
            crate::text::visible(&trip.matched)
        ),
    })
}
