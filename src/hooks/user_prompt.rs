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
/// compaction, or one line when it says what the session was given already — or, when the
/// write ended without one, one note saying so. Nothing while it is still being written,
/// without a promise (one `stat`), at a prompt in another repository (the promise waits for
/// its own), or when another prompt hook of the same session kept it already (one claim per
/// promise).
fn kept(input: &HookInput, event: &str) -> Option<Injection> {
    let sid = input.sid()?;
    let p = super::promise::path(sid)?;
    if !p.is_file() {
        return None;
    }
    let store = super::input::store()?;
    let run = super::promise::run_of(&p, Some(&store))?;
    let target = input.target()?;
    if run.job.slot != target.name {
        return None;
    }
    let now = crate::store::now();
    let state = run.state(now);
    let id = run.dir.file_name()?.to_string_lossy().into_owned();
    if state == RunState::Writing || !claim(sid, &format!("promise-{id}"), None) {
        return None;
    }
    match state {
        // Only the write it promised keeps the promise: a manual write, or another session's,
        // that landed since is not this session's fresh handoff.
        RunState::Promoted if run.result_in_slot(&store) => {
            let slot = crate::fs::read(store.path_of(&target.name)).ok()?;
            if super::promise::delivered_key(&p) == Some(super::promise::key_of(&slot)) {
                return Some(
                    session_start::note(
                        input,
                        &target,
                        format!("# Background handoff ({event})\n\nThe automatic write for this compaction is stored, and it says what the handoff you were given after the compaction says: nothing new to read."),
                        format!(
                            "handoff-store: the background write for {} stored the handoff the model has already; the model was told",
                            target.facts.reference
                        ),
                        event,
                    )
                    .keeps(p),
                );
            }
            session_start::deliver(input, Some(Source::Compact), event).map(|i| i.keeps(p))
        }
        state => {
            let note = match state {
                RunState::Promoted => format!(
                    "The automatic write for this compaction was stored, and a newer handoff has replaced it since: `{} read -C {}` shows that one.",
                    crate::shell::self_command(),
                    crate::shell::quote(&target.checkout())
                ),
                _ => super::texts::background_note(&state, run.age(now), &target.checkout())
                    .unwrap_or_else(|| {
                        "The background write ended without a newer handoff.".into()
                    }),
            };
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
