//! OpenCode (measured on 1.18.33). It has no session hooks; it has plugins — JavaScript files
//! it loads from `.opencode/plugins/` or `~/.config/opencode/plugins/` — so our install shape is
//! a plugin file (contrib/opencode/handoff-store.js, shipped inside the binary with this
//! binary's path written in). The plugin runs this binary's hooks by argument vector with
//! Claude Code's field names on stdin: `session-start` on a session's first model call (the
//! delivery joins the system prompt, `experimental.chat.system.transform`), `pre-compact` on
//! `experimental.session.compacting` (our instructions join `output.context`; the writer reads
//! the session's messages the plugin saved), `post-compact` on the `session.compacted` event,
//! `post-tool-use` on `tool.execute.after` (a tripwire's line joins the tool's output).
//!
//! `impact` reads its sessions from its own database (`opencode_store.rs`): the reset log names
//! the database as the transcript of a reset its hooks report.
//!
//! What it cannot do: no receipt is shown to the person (a plugin has no such line), and the
//! delivery is asked for at a session's first model call, not when the session opens.

use std::path::{Path, PathBuf};

use serde_json::json;

use super::install::{Scope, Shape, home, project};
use super::{Client, Harness, Located};
use crate::error::Error;
use crate::hooks::Event;
use crate::hooks::input::{HookInput, RawInput};
use crate::hooks::pre_compact::WriterSpec;
use crate::hooks::writer::{Call, Invocation, Profile, argv};
use crate::ops::impact::Line;
use crate::store::runs::Answer;

pub(crate) struct OpenCode;

/// The plugin, with `@PROGRAM@` where this binary's path goes.
const PLUGIN: &str = include_str!("../../contrib/opencode/handoff-store.js");

/// The writer's configuration, in the run directory it runs in: an agent of its own whose every
/// tool is denied but the reading ones (MCP tools included), and which reads outside its run
/// directory only the repository and the transcript's folder (`@HERE@`, `@READ@`, filled in
/// when the run is recorded; `*` matches any characters, `/` included); a user's agent
/// settings come before a project's, so this one stands.
const CONFIG: &str = "opencode.json";

const CONFIG_TEXT: &str = r#"{
  "$schema": "https://opencode.ai/config.json",
  "agent": {
    "handoff-writer": {
      "description": "handoff-store's background writer: it reads; it never runs, writes or fetches anything",
      "mode": "primary",
      "permission": {
        "*": "deny",
        "read": "allow",
        "grep": "allow",
        "glob": "allow",
        "list": "allow",
        "external_directory": {
          "*": "deny",
          "@HERE@": "allow",
          "@HERE@/*": "allow",
          "@READ@": "allow",
          "@READ@/*": "allow"
        }
      }
    }
  }
}
"#;

/// The writer: `opencode run --agent handoff-writer --format json` in the run directory (where
/// [`CONFIG`] defines that agent), the prompt on stdin (OpenCode puts it after the message);
/// titled, so no title call is made; its answer is the last text event.
const WRITER: Profile = Profile {
    name: "OpenCode",
    explore: "the grep and read tools (with offsets and limits)",
    invocation,
    files: &[(CONFIG, CONFIG_TEXT)],
};

fn invocation(c: &Call) -> Invocation {
    Invocation {
        argv: argv(
            &c.program,
            &[
                "run",
                "--agent",
                "handoff-writer",
                "--format",
                "json",
                "--title",
                "handoff-store writer",
                "Write the handoff as the text below says.",
            ],
        ),
        resume: None,
        answer: Answer::LastText,
        cwd: Some(c.run_dir.to_string()),
    }
}

/// The `opencode` program: `HANDOFF_OPENCODE_BIN`, else `opencode` on PATH.
fn binary() -> Option<PathBuf> {
    super::program("HANDOFF_OPENCODE_BIN", "opencode")
}

/// OpenCode's configuration folder: `$XDG_CONFIG_HOME/opencode`, else `~/.config/opencode`.
fn config_dir() -> Result<PathBuf, Error> {
    match crate::env::non_empty("XDG_CONFIG_HOME").map(PathBuf::from) {
        Some(dir) if dir.is_absolute() => Ok(dir.join("opencode")),
        _ => Ok(home()?.join(".config/opencode")),
    }
}

impl Client for OpenCode {
    fn name(&self) -> &'static str {
        "opencode"
    }

    fn install_help(&self) -> &'static str {
        "OpenCode's plugin (plugins/handoff-store.js)"
    }

    /// Claude Code's spelling; at `session-start`, where a reset is logged, the transcript is
    /// OpenCode's database (the plugin passes the file it saved for the writer only to
    /// `pre-compact`, which reads that; a tool call's hook looks nothing up).
    fn input(&self, raw: &RawInput, event: &Event) -> HookInput {
        let mut input = HookInput::common(raw, self.name());
        if matches!(event, Event::SessionStart) && input.transcript.is_none() {
            input.transcript = super::opencode_store::database().map(|d| d.display().to_string());
        }
        input
    }

    fn transcript_line(&self, row: &serde_json::Value, checkout: &str) -> Option<Line> {
        super::opencode_store::line(self, row, checkout)
    }

    fn transcript_rows(
        &self,
        path: &Path,
        session: &str,
        from_ms: i64,
        each: &mut dyn FnMut(serde_json::Value) -> bool,
    ) -> Option<std::io::Result<()>> {
        Some(super::opencode_store::rows(path, session, from_ms, each))
    }

    /// Its tools, as the plugin passes them (`tool.execute.after`): `bash`; `edit`, `write`,
    /// `multiedit` (`filePath`); `apply_patch` / `patch` (`patchText`).
    fn tool_call(&self, raw: &RawInput) -> Option<crate::ops::tripwire::Call> {
        let cwd = raw.text("cwd");
        match raw.text("tool_name")? {
            "bash" => Some(crate::ops::tripwire::Call::Shell(
                raw.text_in("tool_input", "command")?.to_string(),
            )),
            "edit" | "write" | "multiedit" => {
                super::edit(cwd, raw.text_in("tool_input", "filePath")?)
            }
            "apply_patch" | "patch" => super::patch(cwd, raw.text_in("tool_input", "patchText")?),
            _ => None,
        }
    }

    /// The plugin reads `{"context": …}`; nothing else is printed.
    fn render(
        &self,
        _event: &Event,
        context: Option<&str>,
        _receipt: Option<&str>,
    ) -> Option<String> {
        context.and_then(|c| serde_json::to_string(&json!({ "context": c })).ok())
    }

    /// Its compaction reads the instructions the plugin adds to `output.context`.
    fn pre_compact(&self, input: &HookInput) -> Option<String> {
        let spec = WriterSpec {
            profile: WRITER,
            program: binary(),
            instructions: true,
            compacted: None,
        };
        crate::hooks::pre_compact::run(input, &spec)
    }

    /// `session.compacted`: the compaction happened.
    fn post_compact(&self, input: &HookInput) -> Option<String> {
        crate::hooks::post_compact::run(input, "session.compacted");
        None
    }

    /// Our MCP server in its configuration (`mcp`, a local server's `command` an argument
    /// vector): the user's `opencode.json` and the project's.
    fn rows_beside(&self, root: Option<&Path>, _cwd: &Path) -> Vec<super::status::Row> {
        let files = [
            config_dir().ok().map(|d| d.join("opencode.json")),
            root.map(|r| r.join("opencode.json")),
        ];
        files
            .into_iter()
            .flatten()
            .flat_map(|f| super::status::mcp_rows(self.name(), &f, &[&["mcp"]]))
            .collect()
    }

    fn locate(&self, scope: Scope, root: Option<&Path>) -> Result<Located, Error> {
        let file = match scope {
            Scope::Project => project(
                Harness::OpenCode,
                root,
                ".opencode/plugins/handoff-store.js",
            )?,
            Scope::User => config_dir()?.join("plugins/handoff-store.js"),
        };
        let program = serde_json::to_string(&crate::shell::self_program())
            .map_err(|e| Error::Output(e.into()))?;
        Ok(Located {
            file,
            shape: Shape::File {
                text: PLUGIN.replace("\"@PROGRAM@\"", &program),
                executable: false,
            },
            skill: None,
            scripts: Vec::new(),
        })
    }
}
