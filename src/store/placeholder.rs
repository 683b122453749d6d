//! What a `progress: writing` placeholder in a slot means now (docs/hooks.md §2.4): active, slow (its
//! writer's transcript still moves) or abandoned. Background writes of compactions are tracked in
//! `runs.rs` instead; this covers `write --placeholder` and stores written by older versions.

use std::path::PathBuf;
use std::time::SystemTime;

use super::HandoffInfo;
use super::time::epoch;

/// What a placeholder (`progress: writing`) means right now (docs/hooks.md §2.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlaceholderState {
    /// Young enough, or its age is unknown.
    Active,
    /// Past its budget, but its writer's transcript is still advancing.
    Slow,
    Abandoned,
}

/// The placeholder's state; `transcript` is its writer's transcript and mtime, when the agent's
/// adapter found one (the store knows no agent's file layout).
pub fn placeholder_state(
    info: &HandoffInfo,
    now: i64,
    transcript: Option<(PathBuf, SystemTime)>,
) -> (PlaceholderState, Option<(PathBuf, SystemTime)>) {
    let timeout = crate::env::settings().fork_timeout;
    let window = crate::env::settings().liveness_window;
    let state = match info.mtime {
        None => PlaceholderState::Active,
        Some(m) if (now - m).max(0) as u64 <= timeout => PlaceholderState::Active,
        Some(_) => {
            let fresh = transcript
                .as_ref()
                .is_some_and(|(_, t)| (now - epoch(*t)).max(0) as u64 <= window);
            if fresh {
                PlaceholderState::Slow
            } else {
                PlaceholderState::Abandoned
            }
        }
    };
    (state, transcript)
}
