//! The `/handoff` skill Claude Code gets with its hooks: written naming this binary, taken out
//! only when it is still ours.

use super::file::{read_text, remove_ours, write_text};
use super::plan::Plan;
use crate::error::Error;

/// The `/handoff` skill (Claude Code), shipped inside the binary so nothing refers to a clone.
const SKILL: &str = include_str!("../../../contrib/claude-code/skills/handoff/SKILL.md");

/// The skill's instructions for a client that has the MCP tools instead of a shell (the MCP
/// prompt `handoff`): the skill, with the tools named first.
#[cfg(feature = "mcp")]
pub(crate) fn skill_instructions() -> String {
    let body = SKILL
        .split_once("\n---\n")
        .map_or(SKILL, |(_, body)| body)
        .trim_start();
    format!(
        "Through MCP, each shell command below has a tool: `handoff-store orient` → the tools take `checkout`; `handoff-store write` → handoff_write (the document as `document`); `handoff-store read` → handoff_read; `verify-handoff` → handoff_verify; `read --reground` → handoff_reground; `brief` → handoff_brief.\n\n{body}"
    )
}

/// The skill's text as installed: its commands name this binary by its absolute path.
fn skill_text() -> String {
    let me = crate::shell::self_command();
    SKILL
        .lines()
        .map(|l| match l.strip_prefix("handoff-store ") {
            Some(rest) => format!("{me} {rest}\n"),
            None => format!("{l}\n"),
        })
        .collect()
}

/// Whether `text` is our skill as some install wrote it (whichever program it names).
fn is_our_skill(text: &str) -> bool {
    let ours: Vec<&str> = SKILL.lines().collect();
    let theirs: Vec<&str> = text.lines().collect();
    ours.len() == theirs.len()
        && ours
            .iter()
            .zip(&theirs)
            .all(|(o, t)| match o.strip_prefix("handoff-store ") {
                Some(rest) => t.ends_with(&format!(" {rest}")),
                None => o == t,
            })
}

/// Install the plan's skill file (replacing an earlier install's), unless one of the user's is
/// there. Whether it was written.
pub(crate) fn install_skill(plan: &Plan) -> Result<bool, Error> {
    let Some(path) = &plan.skill else {
        return Ok(false);
    };
    let text = skill_text();
    match read_text(path)? {
        Some(current) if current == text => Ok(false),
        Some(current) if !is_our_skill(&current) => Err(Error::NotOurs {
            path: path.to_path_buf(),
            beside: None,
            advice: "move it away and install again",
        }),
        _ => write_text(path, &text, false).map(|()| true),
    }
}

/// Remove the plan's skill file when it is ours and unchanged, and the folders we made for it
/// when they are left empty. Whether it was removed.
pub(crate) fn uninstall_skill(plan: &Plan) -> Result<bool, Error> {
    let Some(path) = &plan.skill else {
        return Ok(false);
    };
    if crate::fs::symlink_metadata(path).is_err()
        || !read_text(path)?.is_some_and(|t| is_our_skill(&t))
    {
        return Ok(false);
    }
    remove_ours(path)?;
    if let Some(dir) = path.parent() {
        // `skills/handoff/`, then `skills/`: only when empty (remove_dir refuses otherwise).
        let _ = crate::fs::remove_dir(dir);
        if let Some(skills) = dir.parent() {
            let _ = crate::fs::remove_dir(skills);
        }
    }
    Ok(true)
}
