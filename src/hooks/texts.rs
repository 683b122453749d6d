//! Sentences the model reads that belong to no single hook's composition: the compaction
//! instructions PreCompact prints, and the one-line notes about a background write. Kept in one
//! place so that wording changes do not hunt through the decision code.

use crate::store::gap;
use crate::store::runs::RunState;

/// PreCompact's stdout: Claude Code passes it to the summariser as custom instructions.
pub fn compaction_instructions(slot: &str) -> String {
    format!(
        "Keep verbatim, in a section of their own: every decision with what it beat, every dead end with why it failed, and every trap that will bite the next step — they cannot be re-derived from the code. Reduce everything else (file contents, command output, exploration) to short pointers (path:line). A handoff with the same sections is being written in the background to {slot}; say so in the summary."
    )
}

/// One line about a background write that did not put its result in the slot, for a reader
/// that is about to see the previous handoff (or none). `None` when there is nothing to say.
pub fn background_note(state: &RunState, age: u64, restore: &str) -> Option<String> {
    match state {
        RunState::Writing | RunState::Promoted => None,
        RunState::Failed { rc } => Some(format!(
            "The background write started {} ago ended without a handoff (writer exit: {rc}); nothing newer is coming from it.",
            gap(age)
        )),
        RunState::Held {
            gate_exit,
            confirmed,
            kept,
        } => {
            let why = if *gate_exit != 0 {
                format!("it did not pass the gate (exit {gate_exit})")
            } else if !confirmed {
                "the compaction it was written for was never confirmed by the client".to_string()
            } else {
                "it could not be installed".to_string()
            };
            let place = match kept {
                Some(k) => format!(" It is kept in history at `{k}`; `{restore}` installs it."),
                None => String::new(),
            };
            Some(format!(
                "A background write started {} ago produced a newer handoff that was NOT installed, because {why}.{place}",
                gap(age)
            ))
        }
        RunState::Superseded { kept } => Some(format!(
            "A background write started {} ago finished after a newer handoff was written; its result is kept in history{}.",
            gap(age),
            kept.as_deref()
                .map(|k| format!(" at `{k}`"))
                .unwrap_or_default()
        )),
    }
}
