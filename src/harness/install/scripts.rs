//! Scripts of ours beside a client's hook file, each one the client runs by an event's name
//! (a `PreToolUse` script beside a `TaskStart` one). Written executable where no file is; a file
//! of someone else's at that name is left alone (and `install` says so); taken out only while
//! it is still one of ours (naming this binary or another).

use std::path::PathBuf;

use serde_json::json;

use super::file::{read_text, remove_ours, write_text};
use super::plan::Plan;
use crate::error::Error;

/// Whether `text` is a script of ours for the plan's client: `exec <our hook>`.
fn is_our_script(plan: &Plan, text: &str) -> bool {
    let mut lines = text.lines();
    lines.next() == Some("#!/bin/sh")
        && lines
            .next()
            .and_then(|l| l.strip_prefix("exec "))
            .is_some_and(|command| plan.harness.client().owns(&json!({ "command": command })))
        && lines.next().is_none()
}

/// Install the plan's scripts (replacing an earlier install's); the ones left alone because a
/// file of someone else's is there.
pub(crate) fn install_scripts(plan: &Plan) -> Result<Vec<PathBuf>, Error> {
    let mut theirs = Vec::new();
    for (path, text) in &plan.scripts {
        match read_text(path)? {
            Some(current) if &current == text => {}
            Some(current) if !is_our_script(plan, &current) => theirs.push(path.clone()),
            _ => write_text(path, text, true)?,
        }
    }
    Ok(theirs)
}

/// Remove the plan's scripts that are ours.
pub(crate) fn uninstall_scripts(plan: &Plan) -> Result<(), Error> {
    for (path, _) in &plan.scripts {
        if crate::fs::symlink_metadata(path).is_ok()
            && read_text(path)?.is_some_and(|t| is_our_script(plan, &t))
        {
            remove_ours(path)?;
        }
    }
    Ok(())
}

/// Whether each of the plan's scripts is in place: ours, or a file of someone else's that
/// `install` left alone.
pub(crate) fn scripts_in_place(plan: &Plan) -> bool {
    plan.scripts
        .iter()
        .all(|(path, _)| crate::fs::symlink_metadata(path).is_ok())
}
