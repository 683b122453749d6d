//! What we know of Claude Code's files: where it keeps a session's transcript. Kept with the
//! hooks (the agent's side), so the store never learns an agent's layout.

use std::path::PathBuf;
use std::time::SystemTime;

use crate::env::home;
use crate::store::HandoffInfo;
use crate::store::naming::is_safe_id;

/// The transcript of session `id` and its mtime, if it exists:
/// `<home>/.claude/projects/<id>.jsonl` or `<home>/.claude/projects/*/<id>.jsonl`.
pub(crate) fn transcript(id: &str) -> Option<(PathBuf, SystemTime)> {
    if !is_safe_id(id) {
        return None;
    }
    let projects = home()?.join(".claude/projects");
    let file = format!("{id}.jsonl");
    let mut candidates = vec![projects.join(&file)];
    if let Ok(entries) = crate::fs::read_dir(&projects) {
        let mut dirs: Vec<PathBuf> = entries.flatten().map(|e| e.path().join(&file)).collect();
        dirs.sort();
        candidates.extend(dirs);
    }
    candidates.into_iter().find_map(|p| {
        crate::fs::metadata(&p)
            .and_then(|m| m.modified())
            .ok()
            .map(|t| (p, t))
    })
}

/// The transcript of a placeholder's writer (its `write_session:`).
pub(crate) fn writer_transcript(info: &HandoffInfo) -> Option<(PathBuf, SystemTime)> {
    transcript(info.write_session.as_deref()?)
}
