//! What a `progress: writing` placeholder in a slot means now (hooks.md §2.4): active, slow (its
//! writer's transcript still moves) or abandoned. Background writes of compactions are tracked in
//! `runs.rs` instead; this covers `write --placeholder` and stores written by older versions.

use std::path::PathBuf;
use std::time::SystemTime;

use super::HandoffInfo;
use super::skeleton;
use super::time::epoch;
use crate::env::{home, u64_var as env_u64};

/// What a placeholder (`progress: writing`) means right now (hooks.md §2.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlaceholderState {
    /// Young enough, or its age is unknown.
    Active,
    /// Past its budget, but its writer's transcript is still advancing.
    Slow,
    Abandoned,
}

/// The writer's transcript named by `write_session:` and its mtime, if it exists:
/// `<home>/.claude/projects/<id>.jsonl` or `<home>/.claude/projects/*/<id>.jsonl`.
pub fn writer_transcript(info: &HandoffInfo) -> Option<(PathBuf, SystemTime)> {
    let id = info
        .write_session
        .as_deref()
        .filter(|id| skeleton::is_safe_id(id))?;
    let projects = home()?.join(".claude/projects");
    let file = format!("{id}.jsonl");
    let mut candidates = vec![projects.join(&file)];
    if let Ok(entries) = std::fs::read_dir(&projects) {
        let mut dirs: Vec<PathBuf> = entries.flatten().map(|e| e.path().join(&file)).collect();
        dirs.sort();
        candidates.extend(dirs);
    }
    candidates.into_iter().find_map(|p| {
        std::fs::metadata(&p)
            .and_then(|m| m.modified())
            .ok()
            .map(|t| (p, t))
    })
}

/// The placeholder's state, with its writer's transcript when one was found.
pub fn placeholder_state(
    info: &HandoffInfo,
    now: i64,
) -> (PlaceholderState, Option<(PathBuf, SystemTime)>) {
    let timeout = env_u64("CTX_FORK_TIMEOUT_SECONDS", 600);
    let window = env_u64("CTX_FORK_LIVENESS_WINDOW_SECONDS", 90);
    let transcript = writer_transcript(info);
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
