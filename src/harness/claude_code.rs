//! Claude Code: the client the hooks' native shape comes from. Its input carries `session_id`,
//! `cwd`, `source`, `transcript_path`; an injection is `hookSpecificOutput.additionalContext`.
//! It gets six hooks (SessionStart, UserPromptSubmit as the fallback for releases that
//! skip SessionStart after `/clear`, PreCompact whose stdout steers the summary and which starts
//! the background writer `claude -p`, PostCompact that confirms it, SessionEnd that records a
//! `/clear`, PreToolUse whose `additionalContext` carries the tripwire's note without blocking
//! the call), and the `/handoff` skill. Its hooks can come from the plugin in
//! contrib/claude-code, and `"disableAllHooks": true` in a settings file turns them all off.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::install::{Scope, Shape, group, home, project, tool_group};
use super::status::{Row, Verdict};
use super::{Client, Harness, Located};
use crate::error::Error;
use crate::hooks::input::HookInput;
use crate::hooks::pre_compact::WriterSpec;
use crate::hooks::session_start::Injection;
use crate::hooks::writer::{Call, Invocation, Profile, argv};
use crate::store::naming::is_safe_id;
use crate::store::runs::Answer;

pub(crate) struct ClaudeCode;

/// The events it gets a hook for, with each hook's time limit in seconds.
const EVENTS: [(&str, &str, u64); 6] = [
    ("SessionStart", "session-start", 60),
    ("UserPromptSubmit", "user-prompt-submit", 10),
    ("PreCompact", "pre-compact", 30),
    ("PostCompact", "post-compact", 30),
    ("SessionEnd", "session-end", 30),
    ("PreToolUse", "pre-tool-use", 10),
];

/// The tools its tripwire hook runs for: those that run a command or write a file.
const TRIP_TOOLS: &str = "Bash|Edit|MultiEdit|Write|NotebookEdit";

/// Claude Code's reading tools: the only built-in tools its writer session has.
const TOOLS: &str = "Read,Grep,Glob";
/// Claude Code's tools that write, run or fetch: denied as well, in case a setting adds one.
const DENIED: &str = "Bash,Write,Edit,MultiEdit,NotebookEdit,WebFetch,WebSearch,Task";

/// The writer: `claude -p` with `--tools Read,Grep,Glob` (no other built-in tool exists in the
/// session), the same pre-approved, the writing and fetching tools denied, `--permission-mode
/// dontAsk` (anything else is refused, never asked), no MCP server (`--strict-mcp-config`);
/// its answer is the `result` of its JSON output, and a retry resumes the same session.
pub(crate) const WRITER: Profile = Profile {
    name: "Claude Code",
    explore: "the Read and Grep tools (with line ranges)",
    invocation,
    files: &[],
};

fn invocation(c: &Call) -> Invocation {
    let session = |flag: &str| {
        argv(
            &c.program,
            &[
                "-p",
                "--output-format",
                "json",
                flag,
                c.id,
                "--tools",
                TOOLS,
                "--allowedTools",
                TOOLS,
                "--disallowedTools",
                DENIED,
                "--permission-mode",
                "dontAsk",
                "--strict-mcp-config",
                "--add-dir",
                &c.folder,
            ],
        )
    };
    Invocation {
        argv: session("--session-id"),
        resume: Some(session("--resume")),
        answer: Answer::JsonField("result".into()),
        cwd: None,
    }
}

impl Client for ClaudeCode {
    fn name(&self) -> &'static str {
        "claude-code"
    }

    fn install_help(&self) -> &'static str {
        "Claude Code's six hooks (settings.json) and the /handoff skill"
    }

    /// Its hooks are the plain ones (its input is the hooks' native shape).
    fn hook_command(&self, event: &str) -> String {
        format!("{} hook {event}", crate::shell::self_command())
    }

    /// Exactly this binary's hooks (a hook the user wrote by hand is theirs).
    fn owns(&self, group: &serde_json::Value) -> bool {
        let events = EVENTS.map(|(_, event, _)| event);
        super::install::runs_our_binary(group, &events)
    }

    fn install_word(&self) -> &'static str {
        "claude"
    }

    fn user_prompt(&self, input: &HookInput) -> Option<Injection> {
        crate::hooks::user_prompt::run(input, "UserPromptSubmit")
    }

    fn has_prompt_hook(&self) -> bool {
        true
    }

    /// Its PreCompact's stdout becomes the compaction's custom instructions.
    fn pre_compact(&self, input: &HookInput) -> Option<String> {
        let spec = WriterSpec {
            profile: WRITER,
            program: binary(),
            instructions: true,
            compacted: None,
        };
        crate::hooks::pre_compact::run(input, &spec)
    }

    /// PostCompact confirms the compaction; its `compact_summary` is audited against the
    /// handoff delivered at it, and the person sees what the summary kept (`systemMessage`).
    fn post_compact(&self, input: &HookInput) -> Option<String> {
        let said = crate::hooks::post_compact::run(input, "PostCompact")?;
        serde_json::to_string(
            &serde_json::json!({"systemMessage": format!("handoff-store: {said}")}),
        )
        .ok()
    }

    fn session_end(&self, input: &HookInput) {
        crate::hooks::session_end::run(input);
    }

    /// Its transcript (`~/.claude/projects/<folder>/<session>.jsonl`): a line per message,
    /// each with its `timestamp`; an assistant message's `tool_use` blocks, and its `usage`
    /// (input, cache written, cache read, output), repeated on each line of one message (its
    /// `message.id` counts it once).
    fn transcript_line(
        &self,
        line: &serde_json::Value,
        checkout: &str,
    ) -> Option<crate::ops::impact::Line> {
        let mut out = crate::ops::impact::Line::at_timestamp(line)?;
        let message = line.get("message").filter(|_| line["type"] == "assistant");
        let Some(message) = message else {
            return Some(out);
        };
        let usage = &message["usage"];
        let tokens = [
            "input_tokens",
            "cache_creation_input_tokens",
            "cache_read_input_tokens",
            "output_tokens",
        ]
        .iter()
        .filter_map(|k| usage.get(k).and_then(serde_json::Value::as_u64))
        .fold(0u64, u64::saturating_add);
        if usage.is_object() {
            let id = message["id"].as_str().map(str::to_string);
            out.usage = Some((id, tokens));
        }
        let cwd = line["cwd"].as_str().or(Some(checkout));
        for block in message["content"].as_array().into_iter().flatten() {
            if block["type"] == "tool_use"
                && let Some(name) = block["name"].as_str()
            {
                out.tools
                    .push(super::transcript_tool(self, name, &block["input"], cwd));
            }
        }
        Some(out)
    }

    fn locate(&self, scope: Scope, root: Option<&Path>) -> Result<Located, Error> {
        let base = match scope {
            Scope::User => home()?.join(".claude"),
            Scope::Project => project(Harness::ClaudeCode, root, ".claude")?,
        };
        let groups = EVENTS
            .iter()
            .map(|(key, event, timeout)| {
                let path: &'static [&'static str] = match *key {
                    "SessionStart" => &["hooks", "SessionStart"],
                    "UserPromptSubmit" => &["hooks", "UserPromptSubmit"],
                    "PreCompact" => &["hooks", "PreCompact"],
                    "PostCompact" => &["hooks", "PostCompact"],
                    "PreToolUse" => {
                        let g = tool_group(Harness::ClaudeCode, event, *timeout, TRIP_TOOLS);
                        return (&["hooks", "PreToolUse"][..], g);
                    }
                    _ => &["hooks", "SessionEnd"],
                };
                (path, group(Harness::ClaudeCode, event, *timeout))
            })
            .collect();
        Ok(Located {
            file: base.join("settings.json"),
            shape: Shape::Json {
                groups,
                new_file: "{}\n",
            },
            skill: Some(base.join("skills/handoff/SKILL.md")),
            scripts: Vec::new(),
        })
    }

    fn vetoed(&self, root: Option<&Path>) -> Option<String> {
        hooks_disabled(root).map(|file| {
            format!(
                "\"disableAllHooks\": true in {}: Claude Code runs no hook; remove it",
                file.display()
            )
        })
    }

    /// The plugin (contrib/claude-code): enabled in the user's settings.json (`enabledPlugins`,
    /// `handoff-store@<marketplace>`), and whether the `handoff-store` its hooks run
    /// (`HANDOFF_STORE_BIN`, else on PATH) is there.
    fn rows_beside(&self, root: Option<&Path>, _cwd: &Path) -> Vec<Row> {
        let file = crate::env::home().map(|h| h.join(".claude/settings.json"));
        let enabled = file
            .as_ref()
            .and_then(|f| crate::fs::read_regular_text(f).ok())
            .and_then(|t| super::jsonc::value(&t))
            .and_then(|v| v.get("enabledPlugins").cloned())
            .and_then(|p| p.as_object().cloned())
            .is_some_and(|p| {
                p.iter().any(|(k, v)| {
                    k.starts_with("handoff-store@") && v == &serde_json::Value::Bool(true)
                })
            });
        let program = crate::env::settings()
            .store_bin
            .clone()
            .map(PathBuf::from)
            .filter(|p| p.components().count() > 1)
            .or_else(|| crate::env::on_path("handoff-store", crate::env::is_executable));
        let verdict = match (enabled, program) {
            (false, _) => Verdict::no(
                "not enabled: handoff-store install claude (or claude plugin install handoff-store)",
            ),
            (true, Some(p)) => Verdict::yes(format!("its hooks run {}", p.display())),
            (true, None) => Verdict::no(
                "its hooks run handoff-store from PATH, and there is none: put it on PATH, or set HANDOFF_STORE_BIN",
            ),
        };
        let verdict = match (verdict.runs, self.vetoed(root)) {
            ("yes", Some(why)) => Verdict::no(why),
            _ => verdict,
        };
        let mut rows = vec![Row {
            harness: self.name(),
            scope: "plugin",
            file: file.map(|f| f.to_string_lossy().into_owned()),
            installed: enabled,
            runs: verdict.runs,
            why: verdict.why,
        }];
        rows.extend(mcp_rows(root));
        rows
    }
}

/// Our MCP server where `claude mcp add` registers it: `~/.claude.json` (user scope, and the
/// project's entry there: local scope, the default) and the project's `.mcp.json`.
fn mcp_rows(root: Option<&Path>) -> Vec<Row> {
    use super::status::mcp_rows;
    let name = ClaudeCode.name();
    let mut rows = Vec::new();
    if let Some(file) = crate::env::home().map(|h| h.join(".claude.json")) {
        let project = root.map(|r| r.to_string_lossy().into_owned());
        let local = project.as_deref().map(|p| ["projects", p, "mcpServers"]);
        let mut places: Vec<&[&str]> = vec![&["mcpServers"]];
        places.extend(local.as_ref().map(|l| &l[..]));
        rows.extend(mcp_rows(name, &file, &places));
    }
    if let Some(root) = root {
        rows.extend(mcp_rows(name, &root.join(".mcp.json"), &[&["mcpServers"]]));
    }
    rows
}

/// The settings file whose `"disableAllHooks": true` turns every hook off here (the project's
/// local settings, then the project's, then the user's: the first that sets it decides).
fn hooks_disabled(root: Option<&Path>) -> Option<PathBuf> {
    let mut files = Vec::new();
    if let Some(root) = root {
        files.push(root.join(".claude/settings.local.json"));
        files.push(root.join(".claude/settings.json"));
    }
    files.extend(crate::env::home().map(|h| h.join(".claude/settings.json")));
    for file in files {
        let Some(value) = crate::fs::read_regular_text(&file)
            .ok()
            .and_then(|t| super::jsonc::value(&t))
        else {
            continue;
        };
        match value
            .get("disableAllHooks")
            .and_then(serde_json::Value::as_bool)
        {
            Some(true) => return Some(file),
            Some(false) => return None,
            None => {}
        }
    }
    None
}

/// The writer's program: `HANDOFF_WRITER` (a path, or a name looked up on PATH), else `claude`
/// on PATH; executable.
fn binary() -> Option<PathBuf> {
    let name = crate::env::settings()
        .writer
        .clone()
        .unwrap_or_else(|| "claude".into());
    let path = PathBuf::from(&name);
    let found = if path.components().count() > 1 || path.is_absolute() {
        Some(path)
    } else {
        crate::env::on_path(&name, crate::env::is_executable)
    };
    found.filter(|p| crate::env::is_executable(p))
}

/// The transcript of session `id` and its mtime, if it exists:
/// `<home>/.claude/projects/<id>.jsonl` or `<home>/.claude/projects/*/<id>.jsonl`.
pub(crate) fn transcript(id: &str) -> Option<(PathBuf, SystemTime)> {
    if !is_safe_id(id) {
        return None;
    }
    let projects = crate::env::home()?.join(".claude/projects");
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
