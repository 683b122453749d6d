//! GitHub Copilot CLI (measured on 1.0.102). Its hooks live in the repository only
//! (`.github/hooks/handoff-store.json`, loaded once the folder is trusted), spelled in camelCase
//! (`sessionId`, `transcriptPath`), each running `bash`. `sessionStart`'s `source: new` is a
//! fresh session: in a running CLI that is its /clear, but `copilot -p` sends `new` with the
//! `initialPrompt` for every headless session — a plain start, quiet unless this process ended a
//! session just before (its /clear). It adds `additionalContext` to the session (measured: it is
//! in the model request).
//!
//! Its compaction. Its preCompact hook runs before a compaction and no hook runs after
//! one, but Copilot records how it ended in the session's own append-only events file (the
//! `transcriptPath` of every hook input): `session.compaction_complete` with `success` (measured
//! on 1.0.102: `true` with `outcome: applied`, `false` when the summary call failed). So
//! preCompact notes where the file ends and starts the background writer through Copilot's
//! headless mode, under the same supervisor as Claude Code's; agentStop and sessionEnd look past
//! that point, and a completion that succeeded confirms the run, whose handoff may then replace
//! the slot. A failed compaction confirms nothing: the slot stays as it was.
//!
//! Its preToolUse hook (`toolName`, `toolArgs`) takes `additionalContext` too, and Copilot puts
//! it before the model's next turn without holding the call back (measured): the tripwires.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::install::{Plan, Scope, Shape, project};
use super::status::Verdict;
use super::watch;
use super::{Client, Harness, Located, Note};
use crate::error::{Error, Usage};
use crate::hooks::Event;
use crate::hooks::input::{HookInput, RawInput, SessionId, Source};
use crate::hooks::writer::{Call, Invocation, Profile, argv};
use crate::store::runs::Answer;

pub(crate) struct Copilot;

/// The `copilot` program: `HANDOFF_COPILOT_BIN`, else `copilot` on PATH.
fn binary() -> Option<PathBuf> {
    super::program("HANDOFF_COPILOT_BIN", "copilot")
}

/// Its reading tools.
const TOOLS: [&str; 3] = ["view", "grep", "glob"];

/// The writer: `copilot -s` with only `view`, `grep` and `glob` available, shell and write
/// denied, no built-in MCP server, no question tool, the transcript's folder added for reading;
/// its stdout is the answer.
const WRITER: Profile = Profile {
    name: "Copilot CLI",
    explore: "the view, grep and glob tools (with line ranges)",
    invocation,
    files: &[],
};

fn invocation(c: &Call) -> Invocation {
    let mut args = vec!["-s", "--no-ask-user", "--available-tools"];
    args.extend(TOOLS);
    args.push("--allow-tool");
    args.extend(TOOLS);
    args.extend([
        "--deny-tool",
        "shell",
        "--deny-tool",
        "write",
        "--disable-builtin-mcps",
        "--add-dir",
        &c.folder,
    ]);
    Invocation {
        argv: argv(&c.program, &args),
        resume: None,
        answer: Answer::Stdout,
        cwd: None,
    }
}

/// What to do when Copilot does not trust the repository (`install` and `status` say it).
const TRUST: &str = "Copilot CLI loads a repository's hooks only in a folder you trust: start copilot in the repository once and trust the folder (it is then listed under trustedFolders in ~/.copilot/config.json); for copilot -p alone, GITHUB_COPILOT_PROMPT_MODE_REPO_HOOKS=true also loads them";

impl Client for Copilot {
    fn name(&self) -> &'static str {
        "copilot"
    }

    fn install_help(&self) -> &'static str {
        "GitHub Copilot CLI's hooks (.github/hooks/handoff-store.json)"
    }

    fn input(&self, raw: &RawInput, event: &Event) -> HookInput {
        let source = raw.text("source").map(|s| match s {
            // Only the Copilot process that ended a session just before tells its /clear from
            // a fresh start; the note is used up at sessionStart.
            "new" => {
                let cleared = matches!(event, Event::SessionStart) && cleared_here();
                if cleared || !raw.has("initialPrompt") {
                    Source::Clear
                } else {
                    Source::Startup
                }
            }
            other => Source::parse(other),
        });
        HookInput {
            client: self.name(),
            session: raw.text("sessionId").map(SessionId::new),
            cwd: raw.text("cwd").map(str::to_string),
            source,
            transcript: raw.text("transcriptPath").map(str::to_string),
            summary: None,
            // sessionEnd is told apart by having a `reason` at all.
            reason: raw
                .has("reason")
                .then(|| raw.text("reason").unwrap_or_default().to_string()),
            consume: true,
            prompt_hook: false,
            trail: crate::ops::deliver::no_trail,
        }
    }

    /// Its tools: `bash`; `apply_patch` (freeform: its `toolArgs` is the patch), `edit` and
    /// `create` (`path`).
    fn tool_call(&self, raw: &RawInput) -> Option<crate::ops::tripwire::Call> {
        let cwd = raw.text("cwd");
        match raw.text("toolName")? {
            "bash" => Some(crate::ops::tripwire::Call::Shell(
                raw.text_in("toolArgs", "command")?.to_string(),
            )),
            "apply_patch" => super::patch(
                cwd,
                raw.text("toolArgs")
                    .or_else(|| raw.text_in("toolArgs", "input"))?,
            ),
            "edit" | "create" => super::edit(cwd, raw.text_in("toolArgs", "path")?),
            _ => None,
        }
    }

    /// Its events file (the hooks' `transcriptPath`, `~/.copilot/session-state/<id>/events.jsonl`;
    /// 1.0.102): a `tool.execution_start` per call (`toolCallId`, `toolName`, `arguments` as its
    /// hook's `toolArgs`), a `session.usage_record` per request (`inputTokens`, which holds the
    /// cached ones as its OpenAI-shaped providers report them, and `outputTokens`).
    fn transcript_line(&self, line: &Value, checkout: &str) -> Option<crate::ops::impact::Line> {
        let mut out = crate::ops::impact::Line::at_timestamp(line)?;
        let data = &line["data"];
        match line["type"].as_str() {
            Some("session.usage_record") => {
                let usage = &data["usage"];
                let n = ["inputTokens", "outputTokens"]
                    .iter()
                    .filter_map(|k| usage.get(k).and_then(Value::as_u64))
                    .fold(0u64, u64::saturating_add);
                let id = usage["apiCallId"].as_str().map(str::to_string);
                out.usage = Some((id, n));
            }
            Some("tool.execution_start") => {
                let args = &data["arguments"];
                let raw = json!({"toolName": data["toolName"], "toolArgs": args, "cwd": checkout});
                let call =
                    RawInput::parse(raw.to_string().as_bytes()).and_then(|r| self.tool_call(&r));
                let names = ["path", "command"]
                    .iter()
                    .find_map(|k| args.get(k).and_then(Value::as_str))
                    .or(args.as_str())
                    .map(str::to_string);
                out.tools.push(crate::ops::impact::Tool {
                    id: data["toolCallId"].as_str().map(str::to_string),
                    call,
                    names,
                });
            }
            _ => {}
        }
        Some(out)
    }

    fn render(
        &self,
        _event: &Event,
        context: Option<&str>,
        _receipt: Option<&str>,
    ) -> Option<String> {
        context.and_then(|c| serde_json::to_string(&json!({"additionalContext": c})).ok())
    }

    /// preCompact: note where the events file ends, then start the writer.
    fn pre_compact(&self, input: &HookInput) -> Option<String> {
        let (_, now) = watch::open(input.transcript.as_deref()?)?;
        let watch_file = watch::path("copilot", input.session.as_ref()?.raw())?;
        watch::save(&watch_file, now);
        crate::hooks::pre_compact::start(input, WRITER, binary());
        None
    }

    fn post_compact(&self, input: &HookInput) -> Option<String> {
        after(input);
        None
    }

    /// preCompact (the writer) and agentStop / sessionEnd (which confirm the compaction from
    /// its events file) besides sessionStart; preToolUse for the tripwires.
    fn locate(&self, scope: Scope, root: Option<&Path>) -> Result<Located, Error> {
        if scope == Scope::User {
            return Err(Error::Usage(Usage::ProjectOnly {
                harness: self.name(),
            }));
        }
        let hook = |event: &str| json!({"type": "command", "bash": self.hook_command(event), "timeoutSec": 10});
        Ok(Located {
            file: project(Harness::Copilot, root, ".github/hooks/handoff-store.json")?,
            shape: Shape::Json {
                groups: vec![
                    (&["hooks", "sessionStart"][..], hook("session-start")),
                    (&["hooks", "preCompact"][..], hook("pre-compact")),
                    (&["hooks", "agentStop"][..], hook("post-compact")),
                    (&["hooks", "sessionEnd"][..], hook("post-compact")),
                    (&["hooks", "preToolUse"][..], hook("pre-tool-use")),
                ],
                new_file: "{\n  \"version\": 1\n}\n",
            },
            skill: None,
            scripts: Vec::new(),
        })
    }

    fn default_scope(&self) -> Scope {
        Scope::Project
    }

    fn would_run(&self, scope: Scope, file: &Path, _cwd: &Path) -> Verdict {
        if scope != Scope::Project {
            return Verdict::yes("");
        }
        let repo = file.ancestors().nth(3).unwrap_or(file);
        if trusts(repo) {
            Verdict::yes("the folder is trusted by Copilot")
        } else {
            Verdict::no(TRUST)
        }
    }

    fn after_install(&self, _: &crate::store::Store, plan: &Plan, _: &Path) -> Vec<Note> {
        if plan.scope != Scope::Project {
            return Vec::new();
        }
        vec![Note {
            tag: "note",
            text: format!("{TRUST}; handoff-store status says whether it is"),
        }]
    }
}

/// Whether Copilot CLI trusts `repo`: it is listed under `trustedFolders` in Copilot's
/// `config.json` (`$COPILOT_HOME`, else `~/.copilot`), where its folder-trust prompt records it
/// (1.0.102, measured: repository hooks load in prompt mode once it is listed).
fn trusts(repo: &Path) -> bool {
    let Some(dir) = crate::env::non_empty("COPILOT_HOME")
        .map(PathBuf::from)
        .or_else(|| crate::env::home().map(|h| h.join(".copilot")))
    else {
        return false;
    };
    let Ok(text) = crate::fs::read_regular_text(dir.join("config.json")) else {
        return false;
    };
    let same = |listed: &str| {
        let listed = Path::new(listed);
        listed == repo
            || crate::fs::canonicalize(listed)
                .is_ok_and(|l| crate::fs::canonicalize(repo).is_ok_and(|r| l == r))
    };
    super::jsonc::elements(&text, &["trustedFolders"])
        .iter()
        .filter_map(|v| v.as_str())
        .any(same)
}

/// Whether an events line records a compaction that succeeded.
fn succeeded(line: &[u8]) -> Option<bool> {
    memchr::memmem::find(line, b"\"session.compaction_complete\"")?;
    let event: Value = serde_json::from_slice(line).ok()?;
    if event.get("type")?.as_str()? != "session.compaction_complete" {
        return None;
    }
    Some(event.get("data")?.get("success")? == &Value::Bool(true))
}

/// The Copilot process running this hook, as `<pid>-<start time>` (a reused pid is another
/// process): the nearest ancestor that is not a shell. Linux `/proc` only; elsewhere none.
fn client() -> Option<String> {
    let stat = |pid: i64| -> Option<(String, i64, String)> {
        let text = crate::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        // `pid (comm) state ppid … starttime` — comm may hold spaces and parentheses.
        let (head, rest) = text.rsplit_once(')')?;
        let comm = head.split_once('(')?.1.to_string();
        let fields: Vec<&str> = rest.split_whitespace().collect();
        Some((
            comm,
            fields.get(1)?.parse().ok()?,
            fields.get(19)?.to_string(),
        ))
    };
    let mut pid = i64::from(std::os::unix::process::parent_id());
    for _ in 0..4 {
        let (comm, ppid, start) = stat(pid)?;
        if !matches!(comm.as_str(), "sh" | "bash" | "dash" | "zsh" | "env") {
            return Some(format!("{pid}-{start}"));
        }
        pid = ppid;
    }
    None
}

/// Where a Copilot process notes that a session of its own ended.
fn ended_note(client: &str) -> Option<PathBuf> {
    Some(
        crate::hooks::claims::state_dir()?
            .join("copilot")
            .join(format!("{client}.ended")),
    )
}

/// sessionEnd: note that this Copilot process ended a session. Its /clear (1.0.102, measured in
/// the TUI) ends the session with `reason: user_exit` and starts the next one, lazily, with
/// `source: new` and the next prompt as `initialPrompt` — the very shape of a fresh start.
fn note_ended() {
    let Some(note) = client().and_then(|c| ended_note(&c)) else {
        return;
    };
    if let Some(dir) = note.parent()
        && crate::store::slot::create_private_dir(dir).is_ok()
    {
        crate::hooks::claims::clean_old(dir, ".ended");
        let _ = crate::durable::write(&note, b"", None);
    }
}

/// Whether the process running this sessionStart ended a session of its own within the last
/// ten minutes: then this `new` session is its /clear, not a start. The note is used up.
fn cleared_here() -> bool {
    let Some(note) = client().and_then(|c| ended_note(&c)) else {
        return false;
    };
    let fresh = crate::fs::metadata(&note)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.elapsed().ok())
        .is_some_and(|age| age.as_secs() <= crate::ops::marker::FRESH_SECONDS as u64);
    let _ = crate::fs::remove_file(&note);
    fresh
}

/// agentStop / sessionEnd: if a compaction completed since preCompact, confirm the session's
/// run when it succeeded; either way the watch is done. sessionEnd (it has a `reason`) also
/// notes that this process ended a session.
fn after(input: &HookInput) {
    if input.reason.is_some() {
        note_ended();
    }
    let Some((file, now)) = input.transcript.as_deref().and_then(watch::open) else {
        return;
    };
    let Some(session_id) = input.session.as_ref().map(|s| s.raw()) else {
        return;
    };
    let Some(watch_file) = watch::path("copilot", session_id) else {
        return;
    };
    let Some(before) = watch::load(&watch_file) else {
        return;
    };
    let mut outcome = None;
    watch::find_since(&file, before, now, |at, line| {
        outcome = succeeded(line);
        outcome.map(|_| at)
    });
    let Some(success) = outcome else { return };
    let _ = crate::fs::remove_file(&watch_file);
    if !success {
        return;
    }
    let Some(store) = crate::hooks::input::store() else {
        return;
    };
    let by = "Copilot CLI's session.compaction_complete (success)";
    crate::ops::after::confirm_compaction(
        &store,
        &crate::hooks::input::safe_session_id(session_id),
        by,
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_compaction_complete_event_tells_and_success_decides() {
        let ok = br#"{"type":"session.compaction_complete","data":{"success":true,"outcome":"applied"}}"#;
        let failed =
            br#"{"type":"session.compaction_complete","data":{"success":false,"error":"x"}}"#;
        let quoted =
            br#"{"type":"user.message","data":{"content":"\"session.compaction_complete\""}}"#;
        assert_eq!(succeeded(ok), Some(true));
        assert_eq!(succeeded(failed), Some(false));
        assert_eq!(succeeded(quoted), None);
        assert_eq!(succeeded(b"{\"type\":\"session.compaction_start\"}"), None);
    }
}
