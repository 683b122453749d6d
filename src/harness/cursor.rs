//! Cursor: a `sessionStart` hook in `hooks.json` (the user's `~/.cursor`, or the project's). A
//! new composer conversation is a fresh context, so every start is handled as a clear. Its input
//! names the conversation `conversation_id` and the workspace `workspace_roots`; it reads
//! `additional_context`, and an object on every run. The Cursor CLI injects it; the IDE is known
//! to drop it.

use std::path::Path;

use serde_json::json;

use super::install::{Scope, Shape, home, project};
use super::status::Verdict;
use super::{Client, Harness, Located};
use crate::error::Error;
use crate::hooks::Event;
use crate::hooks::input::{HookInput, RawInput, SessionId, Source};

pub(crate) struct Cursor;

impl Client for Cursor {
    fn name(&self) -> &'static str {
        "cursor"
    }

    fn install_help(&self) -> &'static str {
        "Cursor's sessionStart hook (hooks.json)"
    }

    fn input(&self, raw: &RawInput, _event: &Event) -> HookInput {
        HookInput {
            client: self.name(),
            session: raw
                .text("conversation_id")
                .or_else(|| raw.text("session_id"))
                .map(SessionId::new),
            cwd: raw
                .first("workspace_roots")
                .or_else(|| raw.text("cwd"))
                .map(str::to_string),
            source: Some(Source::Clear),
            transcript: raw.text("transcript_path").map(str::to_string),
            summary: None,
            reason: None,
            consume: true,
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
        let value = match context {
            Some(c) => json!({"additional_context": c}),
            None => json!({}),
        };
        serde_json::to_string(&value).ok()
    }

    fn locate(&self, scope: Scope, root: Option<&Path>) -> Result<Located, Error> {
        let file = match scope {
            Scope::User => home()?.join(".cursor/hooks.json"),
            Scope::Project => project(Harness::Cursor, root, ".cursor/hooks.json")?,
        };
        let command = self.hook_command("session-start");
        Ok(Located {
            file,
            shape: Shape::Json {
                groups: vec![(&["hooks", "sessionStart"][..], json!({"command": command}))],
                new_file: "{\n  \"version\": 1\n}\n",
            },
            skill: None,
            scripts: Vec::new(),
        })
    }

    fn would_run(&self, _scope: Scope, _file: &Path, _cwd: &Path) -> Verdict {
        Verdict::yes("the Cursor CLI injects its output; the IDE is known to drop it")
    }
}
