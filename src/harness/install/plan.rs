//! Where each harness reads its hooks, and the shape our hook takes there: the plan for a
//! harness and scope, and the command each hook runs.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::super::Harness;
use crate::error::{Error, Usage};

/// User-wide or this repository's configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    User,
    Project,
}

/// How our hook is written into a harness's configuration.
#[derive(Debug, Clone)]
pub enum Shape {
    /// One group appended to the array at each path of a JSON file; `new_file` is the text of
    /// a file that does not exist yet.
    Json {
        groups: Vec<(&'static [&'static str], Value)>,
        new_file: &'static str,
    },
    /// An executable script of ours (Cline runs the file named after the event).
    Script(String),
}

/// Where and how our hook goes for one harness and scope.
#[derive(Debug, Clone)]
pub struct Plan {
    pub harness: Harness,
    pub scope: Scope,
    pub file: PathBuf,
    pub shape: Shape,
    /// The `/handoff` skill's file (Claude Code), installed and removed with the hooks.
    pub skill: Option<PathBuf>,
}

/// The hook command a harness runs for `event`: this binary by absolute path. Claude Code's
/// hooks are the plain ones (its input is the hooks' native shape).
pub fn hook_command(h: Harness, event: &str) -> String {
    match h {
        Harness::ClaudeCode => format!("{} hook {event}", crate::shell::self_command()),
        _ => format!(
            "{} hook {event} --harness {}",
            crate::shell::self_command(),
            h.name()
        ),
    }
}

/// The events Claude Code gets a hook for, with each hook's time limit in seconds.
pub(super) const CLAUDE_EVENTS: [(&str, &str, u64); 5] = [
    ("SessionStart", "session-start", 60),
    ("UserPromptSubmit", "user-prompt-submit", 10),
    ("PreCompact", "pre-compact", 30),
    ("PostCompact", "post-compact", 30),
    ("SessionEnd", "session-end", 30),
];

fn codex_home() -> Option<PathBuf> {
    crate::env::non_empty("CODEX_HOME")
        .map(PathBuf::from)
        .or_else(|| crate::env::home().map(|h| h.join(".codex")))
}

/// The plan for `h` in `scope`; `root` is the repository's top level for project scope.
pub fn plan(h: Harness, scope: Scope, root: Option<&Path>) -> Result<Plan, Error> {
    let home = || crate::env::home().ok_or(Error::NoHome);
    let project = |rel: &str| -> Result<PathBuf, Error> {
        root.map(|r| r.join(rel))
            .ok_or_else(|| Error::Usage(Usage::NeedsCheckout { harness: h.name() }))
    };
    let command = hook_command(h, "session-start");
    let group = |event: &str, timeout: u64| json!({"hooks": [{"type": "command", "command": hook_command(h, event), "timeout": timeout}]});
    // Codex also gets the compaction pair: PreCompact starts the background writer (codex
    // exec), PostCompact confirms the compaction.
    let codex = || Shape::Json {
        groups: vec![
            (&["hooks", "SessionStart"][..], group("session-start", 10)),
            (&["hooks", "PreCompact"][..], group("pre-compact", 10)),
            (&["hooks", "PostCompact"][..], group("post-compact", 10)),
        ],
        new_file: "{}\n",
    };
    // Gemini CLI also gets PreCompress and AfterAgent, which both look for a compression since
    // the previous call (`gemini.rs`), and BeforeAgent, which delivers after its /clear (whose
    // SessionStart output Gemini drops). Its timeouts are in milliseconds.
    let gemini = || Shape::Json {
        groups: vec![
            (
                &["hooks", "SessionStart"][..],
                group("session-start", 10_000),
            ),
            (
                &["hooks", "BeforeAgent"][..],
                group("user-prompt-submit", 10_000),
            ),
            (&["hooks", "PreCompress"][..], group("pre-compact", 10_000)),
            (&["hooks", "AfterAgent"][..], group("post-compact", 10_000)),
        ],
        new_file: "{}\n",
    };
    let copilot =
        |event: &str| json!({"type": "command", "bash": hook_command(h, event), "timeoutSec": 10});
    let (file, shape) = match (h, scope) {
        (Harness::ClaudeCode, scope) => {
            let base = match scope {
                Scope::User => home()?.join(".claude"),
                Scope::Project => project(".claude")?,
            };
            let groups = CLAUDE_EVENTS
                .iter()
                .map(|(key, event, timeout)| {
                    let path: &'static [&'static str] = match *key {
                        "SessionStart" => &["hooks", "SessionStart"],
                        "UserPromptSubmit" => &["hooks", "UserPromptSubmit"],
                        "PreCompact" => &["hooks", "PreCompact"],
                        "PostCompact" => &["hooks", "PostCompact"],
                        _ => &["hooks", "SessionEnd"],
                    };
                    (path, group(event, *timeout))
                })
                .collect();
            return Ok(Plan {
                harness: h,
                scope,
                file: base.join("settings.json"),
                shape: Shape::Json {
                    groups,
                    new_file: "{}\n",
                },
                skill: Some(base.join("skills/handoff/SKILL.md")),
            });
        }
        (Harness::Codex, Scope::User) => (
            codex_home().ok_or(Error::NoHome)?.join("hooks.json"),
            codex(),
        ),
        (Harness::Codex, Scope::Project) => (project(".codex/hooks.json")?, codex()),
        (Harness::Gemini, Scope::User) => (home()?.join(".gemini/settings.json"), gemini()),
        (Harness::Gemini, Scope::Project) => (project(".gemini/settings.json")?, gemini()),
        // Copilot CLI also gets preCompact (the writer) and agentStop / sessionEnd (which
        // confirm the compaction from its events file).
        (Harness::Copilot, Scope::Project) => (
            project(".github/hooks/handoff-store.json")?,
            Shape::Json {
                groups: vec![
                    (&["hooks", "sessionStart"][..], copilot("session-start")),
                    (&["hooks", "preCompact"][..], copilot("pre-compact")),
                    (&["hooks", "agentStop"][..], copilot("post-compact")),
                    (&["hooks", "sessionEnd"][..], copilot("post-compact")),
                ],
                new_file: "{\n  \"version\": 1\n}\n",
            },
        ),
        (Harness::Cline, Scope::Project) => (
            project(".clinerules/hooks/TaskStart")?,
            Shape::Script(format!("#!/bin/sh\nexec {command}\n")),
        ),
        // Cline's CLI also runs the user's hooks in ~/.cline/hooks (measured on 3.0.65).
        (Harness::Cline, Scope::User) => (
            home()?.join(".cline/hooks/TaskStart"),
            Shape::Script(format!("#!/bin/sh\nexec {command}\n")),
        ),
        (Harness::Cursor, scope) => (
            match scope {
                Scope::User => home()?.join(".cursor/hooks.json"),
                Scope::Project => project(".cursor/hooks.json")?,
            },
            Shape::Json {
                groups: vec![(&["hooks", "sessionStart"][..], json!({"command": command}))],
                new_file: "{\n  \"version\": 1\n}\n",
            },
        ),
        (Harness::Copilot, Scope::User) => {
            return Err(Error::Usage(Usage::ProjectOnly { harness: h.name() }));
        }
    };
    Ok(Plan {
        harness: h,
        scope,
        file,
        shape,
        skill: None,
    })
}
