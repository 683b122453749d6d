//! Cline: an executable `TaskStart` script (the repository's `.clinerules/hooks/`, or the user's
//! `~/.cline/hooks`, which its CLI also runs — measured on 3.0.65). TaskStart is a fresh task (a
//! cleared context); TaskResume picks one up again. The extension names the events
//! TaskStart/TaskResume; the CLI sends `agent_start`/`agent_resume` from the same files. It
//! reads one object on every run, whose `contextModification` is added to the task. Its CLI runs
//! start hooks detached and drops their output, so a delivery here never marks the handoff
//! consumed: it is offered again on the next task instead.

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
        "Cline's TaskStart hook (.clinerules/hooks/TaskStart)"
    }

    fn input(&self, raw: &RawInput, _event: &Event) -> HookInput {
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
            transcript: None,
            reason: None,
            consume: false,
            prompt_hook: false,
            trail: crate::ops::deliver::no_trail,
        }
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
        let command = self.hook_command("session-start");
        Ok(Located {
            file,
            shape: Shape::File {
                text: format!("#!/bin/sh\nexec {command}\n"),
                executable: true,
            },
            skill: None,
        })
    }

    fn default_scope(&self) -> Scope {
        Scope::Project
    }
}
