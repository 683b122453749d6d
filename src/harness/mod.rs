//! One core, thin adapters: every agent harness with a session hook runs the same SessionStart
//! logic (`hooks::session_start`), and its adapter only maps the harness's input (event names,
//! field spellings, `source` values) to the Claude Code shape the hooks read, and the result
//! back to the harness's output shape. Where each harness keeps its hook configuration, and how
//! ours is put there and taken out again, is in `install.rs`; whether it would run, in
//! `status.rs`. Compaction has no common shape: Codex confirms with PostCompact; Gemini CLI and
//! Copilot CLI say it happened only in their own session files (`gemini.rs`, `copilot.rs`, both
//! reading past a `watch.rs` mark).

pub mod codex;
pub mod copilot;
pub mod gemini;
pub mod install;
pub mod jsonc;
pub mod status;
pub mod watch;

use std::io::Write;

use serde_json::{Map, Value, json};

use crate::hooks::input::string_field;

/// The harnesses we have an adapter for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Harness {
    /// Claude Code (the default; its plugin lives in contrib/claude-code).
    ClaudeCode,
    /// OpenAI Codex CLI.
    Codex,
    /// Google Gemini CLI.
    Gemini,
    /// GitHub Copilot CLI.
    Copilot,
    /// Cline.
    Cline,
    /// Cursor (the CLI honours injected context; the IDE is known to drop it).
    Cursor,
}

impl Harness {
    pub const ALL: [Harness; 6] = [
        Harness::ClaudeCode,
        Harness::Codex,
        Harness::Gemini,
        Harness::Copilot,
        Harness::Cline,
        Harness::Cursor,
    ];

    /// The name used on the command line and in hook commands.
    /// The word `install` and `uninstall` take for it.
    pub fn install_word(self) -> &'static str {
        match self {
            Harness::ClaudeCode => "claude",
            other => other.name(),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Harness::ClaudeCode => "claude-code",
            Harness::Codex => "codex",
            Harness::Gemini => "gemini",
            Harness::Copilot => "copilot",
            Harness::Cline => "cline",
            Harness::Cursor => "cursor",
        }
    }

    /// The harness's session-start input mapped to the Claude Code shape: `session_id`, `cwd`,
    /// `source` (startup / resume / clear / compact), `transcript_path` when there is one.
    pub fn input(self, raw: &Map<String, Value>) -> Map<String, Value> {
        let text = |key: &str| raw.get(key).and_then(Value::as_str).map(str::to_string);
        let first_root = |key: &str| {
            raw.get(key)
                .and_then(Value::as_array)
                .and_then(|a| a.first())
                .and_then(Value::as_str)
                .map(str::to_string)
        };
        let (session, cwd, source, transcript) = match self {
            // Same field names as Claude Code (measured on Codex 0.169.0 and Gemini CLI 0.61.0).
            Harness::ClaudeCode | Harness::Codex | Harness::Gemini => (
                text("session_id"),
                text("cwd"),
                text("source"),
                text("transcript_path"),
            ),
            // camelCase. `new` is a fresh session: in a running CLI that is its /clear, but
            // `copilot -p` (1.0.102, measured) sends `new` with the `initialPrompt` for every
            // headless session — a plain start, quiet unless a /clear was recorded.
            Harness::Copilot => (
                text("sessionId"),
                text("cwd"),
                text("source").map(|s| match s.as_str() {
                    "new" if raw.contains_key("initialPrompt") => "startup".into(),
                    "new" => "clear".into(),
                    _ => s,
                }),
                text("transcriptPath"),
            ),
            // TaskStart is a fresh task (a cleared context); TaskResume picks one up again. The
            // extension names the event TaskStart/TaskResume; the CLI (3.0.65, measured) sends
            // agent_start/agent_resume from the same files.
            Harness::Cline => (
                text("taskId"),
                first_root("workspaceRoots"),
                match text("hookName").as_deref() {
                    Some("TaskResume" | "agent_resume") => Some("resume".into()),
                    _ if raw.contains_key("taskResume") => Some("resume".into()),
                    _ => Some("clear".into()),
                },
                None,
            ),
            // A new composer conversation is a fresh context.
            Harness::Cursor => (
                text("conversation_id").or_else(|| text("session_id")),
                first_root("workspace_roots").or_else(|| text("cwd")),
                Some("clear".into()),
                text("transcript_path"),
            ),
        };
        let mut out = Map::new();
        let mut put = |k: &str, v: Option<String>| {
            if let Some(v) = v {
                out.insert(k.into(), Value::String(v));
            }
        };
        put("session_id", session);
        put("cwd", cwd);
        put("source", source);
        put("transcript_path", transcript);
        out.insert("hook_event_name".into(), json!("SessionStart"));
        out.insert(
            crate::hooks::session_start::HARNESS.into(),
            Value::String(self.name().into()),
        );
        // Cline's CLI runs start hooks detached and drops their output: a delivery there must
        // not mark the handoff consumed (it is offered again on the next task instead).
        if self == Harness::Cline {
            out.insert(
                crate::hooks::session_start::KEEP_UNREAD.into(),
                Value::Bool(true),
            );
        }
        out
    }

    /// The harness's stdout for a SessionStart that injects `context` (or nothing). `None`:
    /// print nothing.
    pub fn output(self, context: Option<&str>) -> Option<String> {
        let claude = |c: &str| json!({"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": c}});
        let value = match (self, context) {
            (Harness::ClaudeCode | Harness::Codex | Harness::Gemini, Some(c)) => claude(c),
            (Harness::ClaudeCode | Harness::Codex | Harness::Gemini, None) => return None,
            // Copilot CLI adds `additionalContext` to the session (1.0.102, measured: it is in
            // the model request).
            (Harness::Copilot, Some(c)) => json!({"additionalContext": c}),
            (Harness::Copilot, None) => return None,
            // Cline reads one object on every run; contextModification is added to the task.
            (Harness::Cline, c) => json!({"cancel": false, "contextModification": c.unwrap_or("")}),
            (Harness::Cursor, Some(c)) => json!({"additional_context": c}),
            (Harness::Cursor, None) => json!({}),
        };
        serde_json::to_string(&value).ok()
    }
}

/// Print `line` (the harness's output) on `out`; whether it got out.
fn print_line(out: &mut dyn Write, line: &str) -> bool {
    writeln!(out, "{line}").and_then(|()| out.flush()).is_ok()
}

/// `hook <event> --harness <h>`: Claude Code's hooks read its input as it is; every other
/// harness's adapter below translates its own. Events no harness but Claude Code and git has
/// (session-end, post-checkout, the supervisor) run as they are. Always 0.
pub fn hook(
    h: Harness,
    event: crate::hooks::Event,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> crate::error::Exit {
    use crate::hooks::Event;
    match (h, event) {
        (Harness::ClaudeCode, event) => crate::hooks::run(event, out, err),
        (h, Event::SessionStart) => session_start(h, out),
        (h, Event::PreCompact) => pre_compact(h),
        (h, Event::PostCompact) => post_compact(h),
        (h, Event::UserPromptSubmit) => user_prompt(h, out),
        (_, event) => crate::hooks::run(event, out, err),
    }
}

/// `hook session-start --harness <h>`: read the harness's input, run the one SessionStart core,
/// print the harness's output. Always exits 0, like every hook.
pub fn session_start(h: Harness, out: &mut dyn Write) -> crate::error::Exit {
    crate::hooks::guard(|| {
        if crate::hooks::input::is_writer_child() {
            return;
        }
        let raw = crate::hooks::input::read_input(std::io::stdin()).unwrap_or_default();
        let input = h.input(&raw);
        // Gemini CLI's /clear (0.61.0, read in its clear command) fires SessionStart(clear) but
        // drops its additionalContext: delivering here would mark the handoff read with nothing
        // shown. Nothing is claimed, so the new session's first prompt (BeforeAgent, the
        // user-prompt-submit fallback) delivers it instead.
        if h == Harness::Gemini && string_field(&input, "source") == Some("clear") {
            return;
        }
        // Copilot's /clear starts the next session like a fresh start; only the Copilot
        // process that ended a session just before tells them apart (`copilot.rs`).
        let mut input = input;
        if h == Harness::Copilot
            && string_field(&raw, "source") == Some("new")
            && copilot::cleared_here()
        {
            input.insert("source".into(), Value::String("clear".into()));
        }
        let mut injected = false;
        crate::hooks::session_start::run(&input, &mut |text: &str| {
            injected = true;
            h.output(Some(text))
                .is_some_and(|line| print_line(out, &line))
        });
        // A harness that reads an answer on every run gets its empty one.
        if !injected && let Some(line) = h.output(None) {
            print_line(out, &line);
        }
    })
}

/// `hook user-prompt-submit --harness <h>` (Gemini CLI's BeforeAgent, on every prompt): the
/// session's first prompt delivers the handoff when no SessionStart claimed the session — after
/// Gemini's /clear, see [`session_start`]. BeforeAgent reads Claude Code's output shape. Always
/// exits 0.
pub fn user_prompt(h: Harness, out: &mut dyn Write) -> crate::error::Exit {
    crate::hooks::guard(|| {
        if crate::hooks::input::is_writer_child() || h != Harness::Gemini {
            return;
        }
        let Some(raw) = crate::hooks::input::read_input(std::io::stdin()) else {
            return;
        };
        crate::hooks::user_prompt::run(
            &h.input(&raw),
            &mut crate::hooks::session_start::claude_output(out, "BeforeAgent"),
        );
    })
}

/// A harness's own program: the path in `var`, else `name` on PATH.
pub fn program(var: &str, name: &str) -> Option<std::path::PathBuf> {
    if let Some(p) = crate::env::non_empty(var) {
        return Some(std::path::PathBuf::from(p));
    }
    crate::env::on_path(name, std::path::Path::is_file)
}

/// `hook pre-compact --harness <h>`. Codex: record a background write and start its
/// supervisor — the same one Claude Code's writer runs under — with `codex exec` as the writer;
/// prints nothing (Codex does not read PreCompact's output). Gemini CLI: PreCompress comes
/// before every model call, compression or not; it only looks for a compression since the
/// previous call (`gemini.rs`). Copilot CLI: preCompact notes where its events file ends and
/// starts the writer through Copilot's headless mode (`copilot.rs`). Always exits 0.
pub fn pre_compact(h: Harness) -> crate::error::Exit {
    crate::hooks::guard(|| {
        if crate::hooks::input::is_writer_child() {
            return;
        }
        let Some(input) = crate::hooks::input::read_input(std::io::stdin()) else {
            return;
        };
        match h {
            Harness::Codex => {
                let spec = crate::hooks::pre_compact::WriterSpec {
                    agent: crate::hooks::texts::Agent::Codex,
                    program: codex::binary(),
                    instructions: false,
                    compacted: None,
                };
                crate::hooks::pre_compact::run_with(&input, &mut std::io::sink(), &spec);
            }
            Harness::Gemini => gemini::observe(&input),
            Harness::Copilot => copilot::pre_compact(&input),
            _ => {}
        }
    })
}

/// `hook post-compact --harness <h>`. Codex: PostCompact, the harness's word that the
/// compaction happened, which lets the background write's handoff replace the slot (its input
/// has Claude Code's field names). Gemini CLI: AfterAgent, the end of every turn, looks for a
/// compression since the previous call like PreCompress does. Copilot CLI: agentStop and
/// sessionEnd confirm the run once its events file records a compaction that succeeded.
/// Always exits 0.
pub fn post_compact(h: Harness) -> crate::error::Exit {
    crate::hooks::guard(|| {
        if crate::hooks::input::is_writer_child() {
            return;
        }
        let Some(input) = crate::hooks::input::read_input(std::io::stdin()) else {
            return;
        };
        match h {
            Harness::Codex => crate::hooks::post_compact::run(&input),
            Harness::Gemini => gemini::observe(&input),
            Harness::Copilot => copilot::after(&input),
            _ => {}
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn inputs_map_to_the_claude_shape() {
        let cline = Harness::Cline.input(&map(json!({
            "hookName": "TaskStart", "taskId": "t1", "workspaceRoots": ["/w"], "clineVersion": "3"
        })));
        assert_eq!(cline["session_id"], "t1");
        assert_eq!(cline["cwd"], "/w");
        assert_eq!(cline["source"], "clear");
        let resume = Harness::Cline.input(&map(json!({"hookName": "TaskResume"})));
        assert_eq!(resume["source"], "resume");
        let cli = Harness::Cline.input(&map(json!({"hookName": "agent_resume", "taskId": "t"})));
        assert_eq!(cli["source"], "resume");
        let copilot = Harness::Copilot.input(&map(
            json!({"sessionId": "s", "cwd": "/c", "source": "new"}),
        ));
        assert_eq!(
            (copilot["session_id"].as_str(), copilot["source"].as_str()),
            (Some("s"), Some("clear"))
        );
        let headless = Harness::Copilot.input(&map(
            json!({"sessionId": "s", "cwd": "/c", "source": "new", "initialPrompt": "fix it"}),
        ));
        assert_eq!(headless["source"], "startup");
        let cursor = Harness::Cursor.input(&map(json!({
            "conversation_id": "c9", "hook_event_name": "sessionStart", "workspace_roots": ["/r"]
        })));
        assert_eq!(cursor["session_id"], "c9");
        assert_eq!(cursor["cwd"], "/r");
        let codex = Harness::Codex.input(&map(
            json!({"session_id": "x", "cwd": "/p", "source": "clear"}),
        ));
        assert_eq!(codex["source"], "clear");
    }

    #[test]
    fn outputs_take_each_harness_shape() {
        let v = |s: Option<String>| -> Value {
            serde_json::from_str(&s.expect("printed")).expect("json")
        };
        assert_eq!(
            v(Harness::Codex.output(Some("T")))["hookSpecificOutput"]["additionalContext"],
            "T"
        );
        assert_eq!(
            v(Harness::Cursor.output(Some("T")))["additional_context"],
            "T"
        );
        assert_eq!(v(Harness::Cursor.output(None)), json!({}));
        let cline = v(Harness::Cline.output(Some("T")));
        assert_eq!(
            (
                cline["cancel"].clone(),
                cline["contextModification"].clone()
            ),
            (json!(false), json!("T"))
        );
        assert_eq!(Harness::Gemini.output(None), None);
    }
}
