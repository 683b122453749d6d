//! Cline: an executable `TaskStart` script (the repository's `.clinerules/hooks/`, or the user's
//! `~/.cline/hooks`, which its CLI also runs — measured on 3.0.65). TaskStart is a fresh task (a
//! cleared context); TaskResume picks one up again. The extension names the events
//! TaskStart/TaskResume; the CLI sends `agent_start`/`agent_resume` from the same files. It
//! reads one object on every run, whose `contextModification` is added to the task. Its CLI runs
//! start hooks detached and drops their output, so a delivery here never marks the handoff
//! consumed: it is offered again on the next task instead.
//!
//! `impact` reads a task's messages file, which its hooks' `sessionContext.rootSessionId`
//! names (`cline_session.rs`).
//!
//! Its `PreToolUse` script (beside `TaskStart`) runs before each tool call and waits for it;
//! its `contextModification` reaches the model as a `<hook_context source="PreToolUse">` after
//! the tool's result, without holding the call back (the CLI, 3.0.65, measured): the tripwires.

use std::path::Path;

use serde_json::json;

use super::install::{Scope, Shape, home, project};
use super::{Client, Harness, Located};
use crate::error::Error;
use crate::hooks::Event;
use crate::hooks::input::{HookInput, RawInput, SessionId, Source};

pub(crate) struct Cline;

impl Client for Cline {
    fn name(&self) -> &'static str {
        "cline"
    }

    fn install_help(&self) -> &'static str {
        "Cline's TaskStart and PreToolUse hooks (.clinerules/hooks/)"
    }

    /// At `TaskStart`, where a reset is logged, the transcript is the task's messages file (a
    /// tool call's hook looks nothing up).
    fn input(&self, raw: &RawInput, event: &Event) -> HookInput {
        let resume = matches!(raw.text("hookName"), Some("TaskResume" | "agent_resume"))
            || raw.has("taskResume");
        HookInput {
            client: self.name(),
            session: raw.text("taskId").map(SessionId::new),
            cwd: raw.first("workspaceRoots").map(str::to_string),
            source: Some(if resume {
                Source::Resume
            } else {
                Source::Clear
            }),
            transcript: raw
                .text_in("sessionContext", "rootSessionId")
                .filter(|_| matches!(event, Event::SessionStart))
                .and_then(super::cline_session::messages_file)
                .map(|f| f.display().to_string()),
            summary: None,
            reason: None,
            consume: false,
            prompt_hook: false,
            trail: crate::ops::deliver::no_trail,
        }
    }

    /// Its tools, from the call as the CLI gives it (`tool_call`: `run_commands` with
    /// `commands`, `editor` with `path`) or as the extension does (`preToolUse`:
    /// `execute_command`, `write_to_file`, `replace_in_file`).
    fn tool_call(&self, raw: &RawInput) -> Option<crate::ops::tripwire::Call> {
        let cwd = raw.first("workspaceRoots");
        let name = raw
            .text_in("tool_call", "name")
            .or_else(|| raw.text_in("preToolUse", "toolName"))?;
        let field = |key: &str| {
            let given = raw.strings_at(&["tool_call", "input", key]);
            if given.is_empty() {
                raw.strings_at(&["preToolUse", "parameters", key])
            } else {
                given
            }
        };
        match name {
            "run_commands" | "execute_command" => {
                let mut lines = field("commands");
                lines.extend(field("command"));
                (!lines.is_empty()).then(|| crate::ops::tripwire::Call::Shell(lines.join("\n")))
            }
            "editor" | "write_to_file" | "replace_in_file" => {
                super::edit(cwd, field("path").first()?)
            }
            _ => None,
        }
    }

    /// Its session's messages file, one JSON document, read a message at a time.
    fn transcript_rows(
        &self,
        path: &Path,
        _session: &str,
        _from_ms: i64,
        each: &mut dyn FnMut(serde_json::Value) -> bool,
    ) -> Option<std::io::Result<()>> {
        Some(super::cline_session::messages(path, each))
    }

    fn transcript_line(
        &self,
        message: &serde_json::Value,
        checkout: &str,
    ) -> Option<crate::ops::impact::Line> {
        super::cline_session::line(self, message, checkout)
    }

    fn render(
        &self,
        _event: &Event,
        context: Option<&str>,
        _receipt: Option<&str>,
    ) -> Option<String> {
        serde_json::to_string(
            &json!({"cancel": false, "contextModification": context.unwrap_or("")}),
        )
        .ok()
    }

    fn locate(&self, scope: Scope, root: Option<&Path>) -> Result<Located, Error> {
        let file = match scope {
            Scope::Project => project(Harness::Cline, root, ".clinerules/hooks/TaskStart")?,
            Scope::User => home()?.join(".cline/hooks/TaskStart"),
        };
        let script = |event: &str| format!("#!/bin/sh\nexec {}\n", self.hook_command(event));
        let tool = file.with_file_name("PreToolUse");
        Ok(Located {
            file,
            shape: Shape::File {
                text: script("session-start"),
                executable: true,
            },
            skill: None,
            scripts: vec![(tool, script("pre-tool-use"))],
        })
    }

    fn default_scope(&self) -> Scope {
        Scope::Project
    }
}
