//! Which hook groups (and scripts) are ours, and what program an installed one runs.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::super::{Harness, jsonc};
use super::file::read_text;
use super::plan::{Plan, Shape};

/// Whether a hook group (or script) is ours: it runs one of our hooks for this harness (the
/// client's own rule, [`super::super::Client::owns`]).
pub(crate) fn is_ours(h: Harness, group: &Value) -> bool {
    h.client().owns(group)
}

/// Whether a hook group names one of our hooks for the client `name` (`hook E --harness name`).
pub(crate) fn names_our_hook(name: &str, group: &Value) -> bool {
    let text = group.to_string();
    [
        "session-start",
        "pre-compact",
        "post-compact",
        "user-prompt-submit",
        "pre-tool-use",
        "post-tool-use",
    ]
    .iter()
    .any(|e| text.contains(&format!("hook {e} --harness {name}")))
}

/// Whether a hook group runs exactly a `handoff-store` binary's `hook E` for one of `events`
/// (a hook the user wrote by hand is theirs).
pub(crate) fn runs_our_binary(group: &Value, events: &[&str]) -> bool {
    let mut commands = Vec::new();
    collect_commands(group, &mut commands);
    commands.iter().any(|c| {
        events.iter().any(|e| {
            c.strip_suffix(&format!(" hook {e}"))
                .map(unquote)
                .is_some_and(|p| {
                    Path::new(&p)
                        .file_name()
                        .is_some_and(|n| n.to_string_lossy().starts_with("handoff-store"))
                })
        })
    })
}

/// A program path as a hook command names it (one shell word, maybe single-quoted).
fn unquote(word: &str) -> String {
    match word.strip_prefix('\'').and_then(|w| w.strip_suffix('\'')) {
        Some(inner) => inner.replace("'\\''", "'"),
        None => word.to_string(),
    }
}

/// The program our hook in the plan's file runs (its first word), when our hook is there.
pub(crate) fn installed_program(plan: &Plan) -> Option<PathBuf> {
    let text = read_text(&plan.file).ok()??;
    let command = match &plan.shape {
        Shape::Json { groups, .. } => groups.iter().find_map(|(path, _)| {
            jsonc::elements(&text, path).iter().find_map(|g| {
                commands_of(g)
                    .into_iter()
                    .find(|c| is_ours(plan.harness, &json!({ "command": c })))
            })
        })?,
        Shape::File { .. } => {
            // A plugin names its program as a JSON string (`const PROGRAM = "…";`).
            if let Some(program) = text.lines().find_map(|l| {
                let value = l.strip_prefix("const PROGRAM = ")?.strip_suffix(';')?;
                serde_json::from_str::<String>(value).ok()
            }) {
                return Some(PathBuf::from(program));
            }
            text.lines()
                .find_map(|l| l.strip_prefix("exec "))?
                .to_string()
        }
    };
    let word = match command.strip_prefix('\'') {
        Some(rest) => format!("'{}'", rest.split_once("' ").map_or(rest, |(w, _)| w)),
        None => command.split_whitespace().next()?.to_string(),
    };
    Some(PathBuf::from(unquote(&word)))
}

/// The commands a hook group runs (`command`, or `bash` where a client spells it so).
pub(super) fn commands_of(group: &Value) -> Vec<String> {
    let mut commands = Vec::new();
    collect_commands(group, &mut commands);
    let mut out: Vec<String> = commands.into_iter().map(str::to_string).collect();
    if let Some(bash) = group.get("bash").and_then(Value::as_str) {
        out.push(bash.to_string());
    }
    out
}

/// Every `command` string in a hook group.
fn collect_commands<'a>(v: &'a Value, out: &mut Vec<&'a str>) {
    match v {
        Value::Object(o) => {
            if let Some(c) = o.get("command").and_then(Value::as_str) {
                out.push(c);
            }
            o.values().for_each(|x| collect_commands(x, out));
        }
        Value::Array(a) => a.iter().for_each(|x| collect_commands(x, out)),
        _ => {}
    }
}

/// Whether our hook is in the plan's file now, and the scripts beside it are in place.
pub(crate) fn is_installed(plan: &Plan) -> bool {
    let Ok(Some(text)) = read_text(&plan.file) else {
        return false;
    };
    if !super::scripts_in_place(plan) {
        return false;
    }
    match &plan.shape {
        Shape::Json { groups, .. } => groups.iter().all(|(path, _)| {
            jsonc::elements(&text, path)
                .iter()
                .any(|g| is_ours(plan.harness, g))
        }),
        Shape::File { text: ours, .. } => &text == ours,
    }
}
