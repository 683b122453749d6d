//! Google Gemini CLI (measured on 0.61.0). Its input has Claude Code's field names and it reads
//! Claude Code's output shape; its hooks live in `settings.json` (the user's `~/.gemini`, or the
//! project's), with timeouts in milliseconds. Its `/clear` fires SessionStart(clear) but drops
//! that hook's additionalContext (read in its clear command): delivering there would mark the
//! handoff read with nothing shown, so nothing is claimed, and the new session's first prompt
//! (BeforeAgent, the user-prompt-submit fallback) delivers it instead. Headless runs need a
//! trusted folder.
//!
//! Its compaction. Gemini CLI (0.61.0) fires PreCompress before every model call —
//! before it even checks whether a compression is due — and has no event after one, so the
//! writer cannot start at PreCompress the way other clients' do: it would run on every
//! call, with nothing to say whether a compression followed. What Gemini does have: its session
//! file is append-only JSONL, and a compression restarts the chat on the same file, appending
//! `{"$set":{"sessionId":…}}` and then the new history as `{"$set":{"messages":[…]}}`, which
//! opens (after Gemini's session context) with the summary — a text written nowhere before. A
//! resume appends the same restart record, but its history opens with the first prompt, already
//! in the file (measured on 0.61.0: the ids of resumed messages do change, their texts do not);
//! a resume into a new session file starts with the restart, before any message. Everything
//! above the restart is the conversation as it was.
//!
//! So both PreCompress and AfterAgent run [`observe`]: look past the point where the file ended
//! at the previous call (the watch); a restart found there is the client's own record that the
//! compression happened, and the writer starts through `gemini -p` on a copy of the file cut at
//! that line, its run confirmed from the start. Then the watch moves to the file's end. A
//! compression Gemini refused (failed, or nothing to compress) appends no such record, so no
//! writer runs and the slot is untouched.

use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::install::{Plan, Scope, Shape, group, home, project, tool_group};
use super::status::Verdict;
use super::watch::{self, Watch};
use super::{Client, Harness, Located, Note};
use crate::error::Error;
use crate::hooks::input::{HookInput, RawInput, Source};
use crate::hooks::pre_compact::{Compacted, WriterSpec};
use crate::hooks::session_start::Injection;
use crate::hooks::writer::{Call, Invocation, Profile, argv};
use crate::store::runs::Answer;

pub(crate) struct Gemini;

/// What headless runs need, said by `install` and `status`.
const TRUST: &str =
    "headless runs also need a trusted folder (GEMINI_CLI_TRUST_WORKSPACE=true or --skip-trust)";

/// The tools its tripwire hook runs after: those that run a command or write a file.
const TRIP_TOOLS: &str = "run_shell_command|write_file|replace";

/// The writer's policy file, in the run directory.
const POLICY: &str = "gemini-policy.toml";

/// The writer's policy: every tool denied (MCP tools and sub-agents included), then the reading
/// ones allowed, at priorities above any rule a user's settings add.
const POLICY_TEXT: &str = r#"# handoff-store's background writer reads; it never runs, writes or fetches anything.
[[rule]]
toolName = "*"
decision = "deny"
priority = 900

[[rule]]
toolName = ["read_file", "read_many_files", "grep_search", "glob", "list_directory"]
decision = "allow"
priority = 999
"#;

/// The writer: `gemini -p` under a policy file of the run (`--policy`, the user's tier: Gemini
/// checks no owner for it, unlike a system settings file, which it skips unless root owns it
/// and every folder above it) that denies every tool but the reading ones — it holds even in
/// yolo mode — with approval mode `default` and no MCP server; its answer is the `response` of
/// its JSON output.
const WRITER: Profile = Profile {
    name: "Gemini CLI",
    explore: "grep_search and read_file with line ranges",
    invocation,
    files: &[(POLICY, POLICY_TEXT)],
};

/// Headless (`-p`: the prompt on stdin comes first, this line after it), in a workspace of its
/// own: the store's run folder (trusted for this run only; it holds nothing but our files), the
/// checkout included for reading. Gemini CLI cleans its current project's chats at every start
/// and takes a session file holding no conversation yet for garbage, deleting every file of
/// that session; run in the checkout, the writer deleted the user's live session file (0.61.0,
/// measured: about one run in five).
fn invocation(c: &Call) -> Invocation {
    let policy = format!("{}/{POLICY}", c.run_dir);
    let workspace = Path::new(c.run_dir)
        .parent()
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_else(|| c.run_dir.to_string());
    Invocation {
        argv: argv(
            &c.program,
            &[
                "--skip-trust",
                "--include-directories",
                c.here,
                "--policy",
                &policy,
                "--approval-mode",
                "default",
                "--allowed-mcp-server-names",
                "handoff-store-none",
                "--output-format",
                "json",
                "-p",
                "Write the handoff as the text above says.",
            ],
        ),
        resume: None,
        answer: Answer::JsonField("response".into()),
        cwd: Some(workspace),
    }
}

impl Client for Gemini {
    fn name(&self) -> &'static str {
        "gemini"
    }

    fn install_help(&self) -> &'static str {
        "Gemini CLI's hooks (settings.json)"
    }

    /// Its tools: `run_shell_command`; `write_file` and `replace` (file paths as given).
    fn tool_call(&self, raw: &RawInput) -> Option<crate::ops::tripwire::Call> {
        let cwd = raw.text("cwd");
        match raw.text("tool_name")? {
            "run_shell_command" => Some(crate::ops::tripwire::Call::Shell(
                raw.text_in("tool_input", "command")?.to_string(),
            )),
            "write_file" | "replace" => super::edit(cwd, raw.text_in("tool_input", "file_path")?),
            _ => None,
        }
    }

    /// Its chat file (`~/.gemini/tmp/<project>/chats/session-….jsonl`, the hooks'
    /// `transcript_path`; 0.61.0): a line per message with its `timestamp`, a model message
    /// (`type: gemini`) with its `tokens.total` and `toolCalls` (`name`, `args`); a message is
    /// written again as it grows (its `id` counts it once), `$set` lines update the file's own
    /// fields.
    fn transcript_line(&self, line: &Value, checkout: &str) -> Option<crate::ops::impact::Line> {
        let mut out = crate::ops::impact::Line::at_timestamp(line)?;
        if line["type"] != "gemini" {
            return Some(out);
        }
        let id = line["id"].as_str().map(str::to_string);
        out.usage = line["tokens"]["total"].as_u64().map(|n| (id, n));
        for call in line["toolCalls"].as_array().into_iter().flatten() {
            let Some(name) = call["name"].as_str() else {
                continue;
            };
            let mut tool = super::transcript_tool(self, name, &call["args"], Some(checkout));
            tool.id = call["id"].as_str().map(str::to_string);
            out.tools.push(tool);
        }
        Some(out)
    }

    /// AfterTool's `hookSpecificOutput.additionalContext` is appended to the tool's result
    /// (in `<hook_context>`); its BeforeTool's is not read.
    fn post_tool_event(&self) -> &'static str {
        "AfterTool"
    }

    /// BeforeAgent reads Claude Code's output shape under its own event name; the receipt is
    /// its `systemMessage`, shown to the person.
    fn prompt_event(&self) -> &'static str {
        "BeforeAgent"
    }

    /// No offer at a fresh start: its headless mode puts SessionStart's context in front of
    /// the first prompt, which then no longer reads as a slash command — an offer turned
    /// `gemini -p "/clear"` into a prompt for the model (0.61.0, measured in tests/e2e). The
    /// firing is still claimed, so the first prompt does not deliver either.
    fn session_start(&self, input: &HookInput) -> Option<Injection> {
        if input.source == Some(Source::Clear) {
            return None;
        }
        if input.source == Some(Source::Startup) {
            crate::hooks::session_start::claim_firing(input);
            return None;
        }
        crate::hooks::session_start::run(input)
    }

    fn user_prompt(&self, input: &HookInput) -> Option<Injection> {
        crate::hooks::user_prompt::run(input, "UserPromptSubmit")
    }

    fn has_prompt_hook(&self) -> bool {
        true
    }

    /// PreCompress comes before every model call, compression or not.
    fn pre_compact(&self, input: &HookInput) -> Option<String> {
        observe(input);
        None
    }

    /// AfterAgent, the end of every turn.
    fn post_compact(&self, input: &HookInput) -> Option<String> {
        observe(input);
        None
    }

    /// Our MCP server, where `gemini mcp add` registered it (`mcpServers` of either settings
    /// file).
    fn rows_beside(&self, root: Option<&Path>, _cwd: &Path) -> Vec<super::status::Row> {
        [Scope::User, Scope::Project]
            .into_iter()
            .filter_map(|scope| self.locate(scope, root).ok())
            .flat_map(|l| super::status::mcp_rows(self.name(), &l.file, &[&["mcpServers"]]))
            .collect()
    }

    fn locate(&self, scope: Scope, root: Option<&Path>) -> Result<Located, Error> {
        let file = match scope {
            Scope::User => home()?.join(".gemini/settings.json"),
            Scope::Project => project(Harness::Gemini, root, ".gemini/settings.json")?,
        };
        // SessionStart; BeforeAgent, which delivers after its /clear; PreCompress and
        // AfterAgent, which both look for a compression since the previous call; AfterTool,
        // the tripwire (its BeforeTool's context is not read, its AfterTool's is).
        let group = |event: &str| group(Harness::Gemini, event, 10_000);
        let trip = tool_group(Harness::Gemini, "post-tool-use", 10_000, TRIP_TOOLS);
        Ok(Located {
            file,
            shape: Shape::Json {
                groups: vec![
                    (&["hooks", "SessionStart"][..], group("session-start")),
                    (&["hooks", "BeforeAgent"][..], group("user-prompt-submit")),
                    (&["hooks", "PreCompress"][..], group("pre-compact")),
                    (&["hooks", "AfterAgent"][..], group("post-compact")),
                    (&["hooks", "AfterTool"][..], trip),
                ],
                new_file: "{}\n",
            },
            skill: None,
            scripts: Vec::new(),
        })
    }

    fn would_run(&self, _scope: Scope, _file: &Path, _cwd: &Path) -> Verdict {
        match binary() {
            Some(_) => Verdict::yes(TRUST),
            None => Verdict::yes(format!(
                "{TRUST}; the writer after a compression needs gemini on PATH or HANDOFF_GEMINI_BIN"
            )),
        }
    }

    fn after_install(&self, _: &crate::store::Store, _: &Plan, _: &Path) -> Vec<Note> {
        vec![Note {
            tag: "note",
            text: "headless runs (gemini -p) also need a trusted folder: GEMINI_CLI_TRUST_WORKSPACE=true or --skip-trust".into(),
        }]
    }
}

/// The record a compression's chat restart appends first (`updateMetadata({sessionId})`).
const RESTART: &[u8] = br#"{"$set":{"sessionId":"#;

/// The `gemini` program: `HANDOFF_GEMINI_BIN`, else `gemini` on PATH.
fn binary() -> Option<PathBuf> {
    super::program("HANDOFF_GEMINI_BIN", "gemini")
}

/// Where a compression's restart record begins in `file` past `watch`: a restart whose next
/// line sets a history that opens with a text the file did not hold before.
fn restart_since(file: &mut crate::fs::File, watch: Watch, now: Watch) -> Option<u64> {
    let mut restart: Option<u64> = None;
    let mut reader = file.try_clone().ok()?;
    watch::find_since(file, watch, now, |at, line| {
        if let Some(cut) = restart.take()
            && let Some(opening) = opening_text(line)
            && compacts(&mut reader, cut, &opening)
        {
            return Some(cut);
        }
        if line.starts_with(RESTART) && is_restart(line) {
            restart = Some(at);
        }
        None
    })
}

/// Whether a line is exactly a `$set` of the session id (and nothing else).
fn is_restart(line: &[u8]) -> bool {
    let Ok(Value::Object(record)) = serde_json::from_slice::<Value>(line) else {
        return false;
    };
    record.len() == 1
        && record
            .get("$set")
            .and_then(Value::as_object)
            .is_some_and(|set| set.len() == 1 && set.get("sessionId").is_some_and(Value::is_string))
}

/// The opening of the history a `{"$set":{"messages":[…]}}` record sets: the text of its first
/// message after Gemini's session context, as the file spells it (JSON-escaped). After a
/// compression that is the summary, written nowhere before; after a resume, the first prompt.
fn opening_text(line: &[u8]) -> Option<String> {
    let record: Value = serde_json::from_slice(line).ok()?;
    let messages = record.get("$set")?.get("messages")?.as_array()?;
    let text = |m: &Value| -> Option<String> {
        match m.get("content")? {
            Value::String(t) => Some(t.clone()),
            Value::Array(parts) => parts
                .iter()
                .find_map(|p| p.get("text")?.as_str().map(str::to_string)),
            _ => None,
        }
    };
    let first = messages
        .iter()
        .filter_map(text)
        .find(|t| !t.starts_with("<session_context>"))?;
    let quoted = serde_json::to_string(&first).ok()?;
    Some(quoted[1..quoted.len() - 1].to_string())
}

/// Whether a restart at `end` whose history opens with `opening` compacts this file's
/// conversation: the file holds a user message before it (a resume into a new file starts with
/// the restart — measured after a headless `/compress`), and the opening is a text it never held
/// (a summary; a resume opens with the first prompt). Read once, only at a restart; unreadable
/// counts as no.
fn compacts(file: &mut crate::fs::File, end: u64, opening: &str) -> bool {
    let mut text = Vec::new();
    if file.seek(SeekFrom::Start(0)).is_err() || file.take(end).read_to_end(&mut text).is_err() {
        return false;
    }
    let has = |needle: &[u8]| memchr::memmem::find(&text, needle).is_some();
    has(br#""type":"user""#) && !has(opening.as_bytes())
}

/// PreCompress and AfterAgent: start the writer if a compression happened since the previous
/// call, then move the watch to the file's end. Silent; never fails the session.
fn observe(input: &HookInput) {
    let (Some(session), Some(transcript)) = (
        input.session.as_ref().map(|s| s.raw()),
        input.transcript.as_deref(),
    ) else {
        return;
    };
    let Some(watch_file) = watch::path("gemini", session) else {
        return;
    };
    let Some((mut file, now)) = watch::open(transcript) else {
        return;
    };
    let before = watch::load(&watch_file);
    if before == Some(now) {
        return;
    }
    if let Some(cut) = before.and_then(|w| restart_since(&mut file, w, now)) {
        let spec = WriterSpec {
            profile: WRITER,
            program: binary(),
            instructions: false,
            compacted: Some(Compacted {
                cut,
                by: "Gemini CLI's compression (its session file restarted)",
            }),
        };
        crate::hooks::pre_compact::run(input, &spec);
    }
    watch::save(&watch_file, now);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::path::Path;

    fn file_with(lines: &[&str]) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("session.jsonl");
        let mut f = crate::fs::File::create(&path).unwrap();
        for l in lines {
            writeln!(f, "{l}").unwrap();
        }
        (dir, path)
    }

    fn watch(path: &Path) -> Watch {
        Watch::of(&crate::fs::metadata(path).unwrap())
    }

    fn append(path: &Path, lines: &[&str]) {
        let mut f = crate::fs::OpenOptions::new()
            .append(true)
            .open(path)
            .unwrap();
        for l in lines {
            writeln!(f, "{l}").unwrap();
        }
    }

    /// The restart found past `w` in the file as it is now.
    fn found(path: &Path, w: Watch) -> Option<u64> {
        let mut file = crate::fs::File::open(path).unwrap();
        restart_since(&mut file, w, watch(path))
    }

    const RESTART_LINE: &str = r#"{"$set":{"sessionId":"s"}}"#;

    #[test]
    fn a_restart_past_the_watch_is_found_where_it_begins() {
        let head = r#"{"sessionId":"s","messages":[]}"#;
        let (_d, path) = file_with(&[head, r#"{"id":"1","type":"user","content":"x"}"#]);
        let w = watch(&path);
        append(&path, &[r#"{"$set":{"messages":[]}}"#]);
        let restart_at = crate::fs::metadata(&path).unwrap().len();
        append(
            &path,
            &[
                RESTART_LINE,
                r#"{"$set":{"messages":[{"id":"0","content":[{"text":"<session_context>\nnow"}]},{"id":"9","type":"user","content":[{"text":"<state_snapshot>a \"new\" summary</state_snapshot>"}]},{"id":"1","content":"x"}]}}"#,
            ],
        );
        assert_eq!(found(&path, w), Some(restart_at));
        // Past the restart there is nothing more to find; and a rewritten file tells nothing.
        let now = watch(&path);
        assert_eq!(found(&path, now), None);
        let other = Watch {
            ino: now.ino + 1,
            ..w
        };
        assert_eq!(found(&path, other), None);
    }

    #[test]
    fn a_resume_restarts_with_the_history_already_there() {
        let first = r#"{"id":"1","type":"user","content":[{"text":"fix \"it\"\nplease"}]}"#;
        let (_d, path) = file_with(&[r#"{"sessionId":"s"}"#, first]);
        let w = watch(&path);
        append(
            &path,
            &[
                RESTART_LINE,
                // Resumed: new ids, a session context of today, the same first prompt.
                r#"{"$set":{"messages":[{"id":"e","content":[{"text":"<session_context>\nlater"}]},{"id":"7","content":[{"text":"fix \"it\"\nplease"}]}]}}"#,
                r#"{"$set":{"lastUpdated":"t"}}"#,
                // A restart that is the last line so far, its history not written yet.
                RESTART_LINE,
            ],
        );
        assert_eq!(found(&path, w), None);
    }

    #[test]
    fn a_resume_into_a_new_file_starts_with_the_restart_and_is_no_compression() {
        let (_d, path) = file_with(&[r#"{"sessionId":"s","startTime":"t"}"#]);
        let w = watch(&path);
        // The resumed history opens with an earlier compression's summary, not in this file.
        append(
            &path,
            &[
                RESTART_LINE,
                r#"{"$set":{"messages":[{"id":"9","type":"user","content":[{"text":"<state_snapshot>old</state_snapshot>"}]}]}}"#,
            ],
        );
        assert_eq!(found(&path, w), None);
    }

    #[test]
    fn only_the_exact_restart_record_counts() {
        let (_d, path) = file_with(&[r#"{"sessionId":"s"}"#, r#"{"type":"user"}"#]);
        let w = watch(&path);
        // A $set with more in it, a message whose text holds the record, masking's history.
        append(
            &path,
            &[
                r#"{"$set":{"sessionId":"s","lastUpdated":"t"}}"#,
                r#"{"id":"3","content":"{\"$set\":{\"sessionId\":\"s\"}}"}"#,
                r#"{"$set":{"messages":[{"id":"n","content":"new"}]}}"#,
            ],
        );
        assert_eq!(found(&path, w), None);
    }
}
