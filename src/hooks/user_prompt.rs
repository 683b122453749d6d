//! `hook user-prompt-submit`: a handoff promised after a compaction, once it landed
//! (`promise.rs`); and the fallback for client releases that skip SessionStart after `/clear`:
//! on a session's first prompt, if no SessionStart firing claimed this session, deliver what
//! SessionStart would have (handled as `clear`), exactly once. Every later prompt costs two
//! `stat`s.

use super::claims::claim;
use super::claims::claimed;
use super::input::{HookInput, Source};
use super::session_start::{self, Injection};
use crate::store::runs::RunState;

/// Keep a promised handoff that landed; else deliver once per session when SessionStart did
/// not (`event` names the client's hook); otherwise nothing.
pub(crate) fn run(input: &HookInput, event: &str) -> Option<Injection> {
    if let Some(kept) = kept(input, event) {
        return Some(kept);
    }
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

/// At a prompt: keep the session's promise once its handoff landed — the delivery as after a
/// compaction — or, when the write ended without one, one note saying so. Nothing while it is
/// still being written, or without a promise (one `stat`).
fn kept(input: &HookInput, event: &str) -> Option<Injection> {
    let p = super::promise::path(input.sid()?)?;
    if !p.is_file() {
        return None;
    }
    let run = super::promise::run_of(&p, super::input::store().as_ref())?;
    let now = crate::store::now();
    match run.state(now) {
        RunState::Writing => None,
        RunState::Promoted => {
            session_start::deliver(input, Some(Source::Compact), event).map(|i| i.keeps(p))
        }
        state => {
            let target = input.target()?;
            let note = super::texts::background_note(&state, run.age(now), &target.checkout())
                .unwrap_or_else(|| "The background write ended without a newer handoff.".into());
            Some(
                session_start::note(
                    input,
                    &target,
                    format!("# Background handoff ({event})\n\n{note}"),
                    format!(
                        "handoff-store: the background write for {} ended ({}); the model was told",
                        target.facts.reference,
                        state.word()
                    ),
                    event,
                )
                .keeps(p),
            )
        }
    }
}
