//! The agent clients. Each is one file that says everything about it — how its hook input maps
//! to the typed [`HookInput`], the shape of its output, where its hooks live and the shape ours
//! takes there, whether an installed hook would run, its background writer's profile, its
//! compaction signal, the versions measured — behind the one [`Client`] trait the rest of the
//! crate uses. [`Harness`] is the one enum of clients; [`hook`] is the door every client's hook
//! goes through: stdin read once, the client's input typed, the hook computed, the client's
//! output rendered, and what follows an injection that got out.
//!
//! A new client is one file implementing [`Client`] and its variant in [`Harness`].

mod claude_code;
mod cline;
mod cline_session;
pub(crate) mod codex;
mod codex_app_server;
mod copilot;
mod cursor;
mod gemini;
pub(crate) mod git_hook;
pub(crate) mod install;
pub(crate) mod jsonc;
mod opencode;
mod opencode_store;
pub(crate) mod status;
mod tool_calls;
pub(crate) mod watch;

use std::path::{Path, PathBuf};

use serde_json::json;

use crate::error::Error;
use crate::hooks::input::{HookInput, RawInput};
use crate::hooks::session_start::Injection;
use crate::hooks::{Event, HookReply};
use crate::ops::tripwire::Call;
use install::{Plan, Scope, Shape};
use status::Verdict;
pub(crate) use tool_calls::{edit, patch, transcript_line, transcript_rows, transcript_tool};

/// A client's transcript store read in this process, where the store's library is linked: the
/// MCP binary (`handoff-store-mcp --transcript-rows`, see [`crate::ops::impact::RowReader`]).
/// A plain match, not a method of [`Client`]: a trait method stays in every binary through the
/// trait's vtable, and SQLite with it.
#[cfg(feature = "mcp")]
pub(crate) fn transcript_rows_here(
    client: &str,
    path: &Path,
    session: &str,
    from_ms: i64,
    each: &mut dyn FnMut(serde_json::Value) -> bool,
) -> Option<std::io::Result<()>> {
    match Harness::named(client)? {
        Harness::OpenCode => Some(opencode_store::read(path, session, from_ms, each)),
        _ => None,
    }
}

/// The clients we have an adapter for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Harness {
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
    /// OpenCode (a plugin in place of session hooks).
    #[value(name = "opencode")]
    OpenCode,
}

impl Harness {
    /// The client a hook without `--harness` belongs to (its hooks are the plain ones).
    pub(crate) const DEFAULT: Harness = Harness::ClaudeCode;

    pub(crate) const ALL: [Harness; 7] = [
        Harness::ClaudeCode,
        Harness::Codex,
        Harness::Gemini,
        Harness::Copilot,
        Harness::Cline,
        Harness::Cursor,
        Harness::OpenCode,
    ];

    /// The client the reset log names `name` (`Client::name`).
    pub(crate) fn named(name: &str) -> Option<Harness> {
        Harness::ALL.into_iter().find(|h| h.name() == name)
    }

    /// Everything about this client.
    pub(crate) fn client(self) -> &'static dyn Client {
        match self {
            Harness::ClaudeCode => &claude_code::ClaudeCode,
            Harness::Codex => &codex::Codex,
            Harness::Gemini => &gemini::Gemini,
            Harness::Copilot => &copilot::Copilot,
            Harness::Cline => &cline::Cline,
            Harness::Cursor => &cursor::Cursor,
            Harness::OpenCode => &opencode::OpenCode,
        }
    }

    /// The name used on the command line and in hook commands.
    pub(crate) fn name(self) -> &'static str {
        self.client().name()
    }

    /// The word `install` and `uninstall` take for it.
    pub(crate) fn install_word(self) -> &'static str {
        self.client().install_word()
    }
}

/// Where a client keeps its hooks for one scope, and the shape ours takes there.
pub(crate) struct Located {
    pub(crate) file: PathBuf,
    pub(crate) shape: Shape,
    /// The `/handoff` skill's file, installed and removed with the hooks.
    pub(crate) skill: Option<PathBuf>,
    /// Scripts of ours beside the file, each one the client runs by an event's name, with
    /// their text (Cline's `PreToolUse` beside its `TaskStart`).
    pub(crate) scripts: Vec<(PathBuf, String)>,
}

/// A line `install` adds for the user: its tag (`note`, `trust`, `trusted`) and text.
pub(crate) struct Note {
    pub(crate) tag: &'static str,
    pub(crate) text: String,
}

/// Everything the crate knows about one agent client. The defaults are Claude Code's shape,
/// which several clients share.
pub(crate) trait Client: Sync {
    /// The name used on the command line, in hook commands and in records.
    fn name(&self) -> &'static str;

    /// The word `install` and `uninstall` take for it.
    fn install_word(&self) -> &'static str {
        self.name()
    }

    /// What `install <word>` puts in place, for its help.
    fn install_help(&self) -> &'static str;

    /// The hook command it runs for `event`: this binary by absolute path, naming the client.
    fn hook_command(&self, event: &str) -> String {
        format!(
            "{} hook {event} --harness {}",
            crate::shell::self_command(),
            self.name()
        )
    }

    /// Whether a hook group (or script) in its file is ours: it runs one of our hooks for it.
    fn owns(&self, group: &serde_json::Value) -> bool {
        install::names_our_hook(self.name(), group)
    }

    /// Its hook input for `event`, typed.
    fn input(&self, raw: &RawInput, _event: &Event) -> HookInput {
        HookInput::common(raw, self.name())
    }

    /// Its stdout for `event` injecting `context` (or nothing), with the `receipt` for the
    /// person where the client shows one (Claude Code's shape: `systemMessage`, which Codex and
    /// Gemini CLI show too); `None`: print nothing.
    fn render(
        &self,
        event: &Event,
        context: Option<&str>,
        receipt: Option<&str>,
    ) -> Option<String> {
        let name = match event {
            Event::UserPromptSubmit => self.prompt_event(),
            Event::PreToolUse => "PreToolUse",
            Event::PostToolUse => self.post_tool_event(),
            _ => "SessionStart",
        };
        context.and_then(|c| claude_json(name, c, receipt))
    }

    /// The name its output gives the event that fires after a tool call (Claude Code's shape).
    fn post_tool_event(&self) -> &'static str {
        "PostToolUse"
    }

    /// The name its output gives the event that fires on a prompt (Claude Code's shape).
    fn prompt_event(&self) -> &'static str {
        "UserPromptSubmit"
    }

    /// The tool call its hook input describes, when it is a shell command or an edit (Claude
    /// Code's tools: `Bash`; `Edit`, `MultiEdit`, `Write`, `NotebookEdit`); `None` for any other
    /// tool (a read or a search is how one checks a trap, never a trigger).
    fn tool_call(&self, raw: &RawInput) -> Option<Call> {
        let cwd = raw.text("cwd");
        match raw.text("tool_name")? {
            "Bash" => Some(Call::Shell(
                raw.text_in("tool_input", "command")?.to_string(),
            )),
            "Edit" | "MultiEdit" | "Write" => edit(cwd, raw.text_in("tool_input", "file_path")?),
            "NotebookEdit" => edit(cwd, raw.text_in("tool_input", "notebook_path")?),
            _ => None,
        }
    }

    /// One line of its session transcript, as `impact` reads it (docs/store.md §9.20): its
    /// time, the model usage it reports, its tool calls (a relative path read against
    /// `checkout` unless the line names its own directory). `None`: a line it does not read,
    /// or a client whose transcripts are not read.
    fn transcript_line(
        &self,
        _line: &serde_json::Value,
        _checkout: &str,
    ) -> Option<crate::ops::impact::Line> {
        None
    }

    /// Its transcript's records where they are kept in a store, not a file of lines (see
    /// [`crate::ops::impact::RowReader`]); `None` for a file of lines.
    fn transcript_rows(
        &self,
        _path: &Path,
        _session: &str,
        _from_ms: i64,
        _each: &mut dyn FnMut(serde_json::Value) -> bool,
    ) -> Option<std::io::Result<()>> {
        None
    }

    /// SessionStart: what to inject.
    fn session_start(&self, input: &HookInput) -> Option<Injection> {
        crate::hooks::session_start::run(input)
    }

    /// The first prompt of a session SessionStart did not serve, or the first after a
    /// promised handoff landed.
    fn user_prompt(&self, _input: &HookInput) -> Option<Injection> {
        None
    }

    /// Whether `install` gives it our prompt hook (the one [`Client::user_prompt`] answers).
    fn has_prompt_hook(&self) -> bool {
        false
    }

    /// Before a compaction: start the background writer; the instructions to print, for a
    /// client that reads them.
    fn pre_compact(&self, _input: &HookInput) -> Option<String> {
        None
    }

    /// The client's word that a compaction happened.
    /// Its line on stdout, if any (the audit's receipt, where the client shows one).
    fn post_compact(&self, _input: &HookInput) -> Option<String> {
        None
    }

    /// A session ended.
    fn session_end(&self, _input: &HookInput) {}

    /// Where its hooks live in `scope` (`root`: the repository, for project scope).
    fn locate(&self, scope: Scope, root: Option<&Path>) -> Result<Located, Error>;

    /// The scope `install` uses unless told.
    fn default_scope(&self) -> Scope {
        Scope::User
    }

    /// Whether our installed, present hook in `file` would run (`status`).
    fn would_run(&self, _scope: Scope, _file: &Path, _cwd: &Path) -> Verdict {
        Verdict::yes("")
    }

    /// Why none of our hooks runs here at all, whatever the files say.
    fn vetoed(&self, _root: Option<&Path>) -> Option<String> {
        None
    }

    /// `status` rows beside the hook files: our hooks from a plugin of the client's, a setting
    /// of ours in its configuration.
    fn rows_beside(&self, _root: Option<&Path>, _cwd: &Path) -> Vec<status::Row> {
        Vec::new()
    }

    /// After `install` wrote the hook: what else was done and what the user must still do.
    fn after_install(&self, _store: &crate::store::Store, _plan: &Plan, _dir: &Path) -> Vec<Note> {
        Vec::new()
    }

    /// After `uninstall` removed hooks whose trust keys were recorded: forget them.
    fn forget(&self, _key: &str) {}

    /// After `uninstall` took the hooks out: what else of ours it took out (lines for the user).
    fn after_uninstall(&self, _store: &crate::store::Store, _plan: &Plan) -> Vec<Note> {
        Vec::new()
    }

    /// `trust <client>`: have the client trust the hooks of ours it lists for `dir`; `None` for
    /// a client that has no trust of its own.
    fn trust(&self, _dir: &Path) -> Option<Result<Trusted, Error>> {
        None
    }
}

/// What `trust` recorded.
#[derive(Debug)]
pub(crate) enum Trusted {
    /// The client recorded its trust of these hooks.
    Recorded(Vec<String>),
    /// Every hook of ours the client (its name) lists was trusted already.
    Already(&'static str),
}

/// Claude Code's output for an injection: one `hookSpecificOutput` JSON object naming `event`,
/// and the receipt as `systemMessage`.
fn claude_json(event: &str, context: &str, receipt: Option<&str>) -> Option<String> {
    let mut value =
        json!({"hookSpecificOutput": {"hookEventName": event, "additionalContext": context}});
    if let Some(r) = receipt {
        value["systemMessage"] = json!(r);
    }
    serde_json::to_string(&value).ok()
}

/// Where the default writer (a Claude Code session, as `write --placeholder`'s writer is)
/// leaves its trail: a placeholder past its budget is alive while it moves (docs/hooks.md §2.4).
pub(crate) fn writer_trail() -> crate::ops::deliver::Trail {
    claude_code::transcript
}

/// A client's own program: the path in `var`, else `name` on PATH.
pub(crate) fn program(var: &str, name: &str) -> Option<PathBuf> {
    if let Some(p) = crate::env::non_empty(var) {
        return Some(PathBuf::from(p));
    }
    crate::env::on_path(name, Path::is_file)
}

/// `hook <event> [--harness H]`: the door. git's post-checkout and the supervisor belong to no
/// client; every other event reads stdin once, types it through the client, computes, and
/// renders the client's output for the dispatcher to print. A hook never fails a session or a
/// checkout.
pub(crate) fn hook(h: Harness, event: Event) -> HookReply {
    crate::hooks::guard(|| match &event {
        Event::PostCheckout(args) => HookReply {
            err: crate::hooks::post_checkout::run(args),
            ..HookReply::default()
        },
        Event::Supervise(dir) => {
            crate::hooks::supervisor::supervise(dir);
            HookReply::default()
        }
        _ if crate::hooks::input::is_writer_child() => HookReply::default(),
        _ => client_hook(h.client(), &event),
    })
}

fn client_hook(client: &dyn Client, event: &Event) -> HookReply {
    let raw = RawInput::read(std::io::stdin());
    if let (Event::PreToolUse | Event::PostToolUse, Some(raw)) = (event, &raw) {
        return tool_hook(client, event, raw);
    }
    // A client that reads an answer on every run gets one, whatever its input was.
    let raw = match (raw, event) {
        (Some(raw), _) => raw,
        (None, Event::SessionStart) => RawInput::default(),
        (None, _) => return HookReply::default(),
    };
    let mut input = client.input(&raw, event);
    input.prompt_hook = client.has_prompt_hook();
    input.trail = writer_trail();
    let injection = match event {
        Event::SessionStart => client.session_start(&input),
        Event::UserPromptSubmit => client.user_prompt(&input),
        Event::PreCompact => {
            return HookReply {
                out: client.pre_compact(&input),
                ..HookReply::default()
            };
        }
        Event::PostCompact => {
            return HookReply {
                out: client.post_compact(&input),
                ..HookReply::default()
            };
        }
        Event::SessionEnd => {
            client.session_end(&input);
            return HookReply::default();
        }
        Event::PostCheckout(_) | Event::Supervise(_) | Event::PreToolUse | Event::PostToolUse => {
            return HookReply::default();
        }
    };
    // Only SessionStart answers when there is nothing to inject (a client may read an answer on
    // every run); the prompt fallback stays silent then.
    let rendered = match (event, &injection) {
        (Event::SessionStart, _) | (_, Some(_)) => client.render(
            event,
            injection.as_ref().map(|i| i.text.as_str()),
            injection.as_ref().map(|i| i.receipt.as_str()),
        ),
        _ => None,
    };
    // What follows runs once the client's line got out; no line, no delivery.
    let then = injection
        .filter(|_| rendered.is_some())
        .map(|i| Box::new(move || i.delivered()) as Box<dyn FnOnce()>);
    HookReply {
        out: rendered,
        err: None,
        then,
    }
}

/// A tool hook: the tripwire's line, rendered as the client's output for `event`, the receipt
/// where it shows one; nothing is consumed or recorded.
fn tool_hook(client: &dyn Client, event: &Event, raw: &RawInput) -> HookReply {
    let Some(call) = client.tool_call(raw) else {
        return HookReply::default();
    };
    let input = client.input(raw, event);
    let after = matches!(event, Event::PostToolUse);
    let said = crate::hooks::tool_use::run(&input, &call, after);
    HookReply {
        out: said
            .as_ref()
            .and_then(|s| client.render(event, Some(&s.text), Some(&s.receipt))),
        ..HookReply::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hooks::input::Source;

    fn input(h: Harness, v: serde_json::Value) -> HookInput {
        let raw = RawInput::parse(v.to_string().as_bytes()).unwrap_or_default();
        h.client().input(&raw, &Event::PreCompact)
    }

    #[test]
    fn inputs_map_to_the_typed_input() {
        let cline = input(
            Harness::Cline,
            json!({"hookName": "TaskStart", "taskId": "t1", "workspaceRoots": ["/w"], "clineVersion": "3"}),
        );
        assert_eq!(cline.sid(), Some("t1"));
        assert_eq!(cline.cwd.as_deref(), Some("/w"));
        assert_eq!(cline.source, Some(Source::Clear));
        assert!(
            !cline.consume,
            "Cline drops start hooks' output: never consumed"
        );
        let resume = input(Harness::Cline, json!({"hookName": "TaskResume"}));
        assert_eq!(resume.source, Some(Source::Resume));
        let cli = input(
            Harness::Cline,
            json!({"hookName": "agent_resume", "taskId": "t"}),
        );
        assert_eq!(cli.source, Some(Source::Resume));
        let copilot = input(
            Harness::Copilot,
            json!({"sessionId": "s", "cwd": "/c", "source": "new"}),
        );
        assert_eq!(
            (copilot.sid(), copilot.source),
            (Some("s"), Some(Source::Clear))
        );
        let headless = input(
            Harness::Copilot,
            json!({"sessionId": "s", "cwd": "/c", "source": "new", "initialPrompt": "fix it"}),
        );
        assert_eq!(headless.source, Some(Source::Startup));
        let cursor = input(
            Harness::Cursor,
            json!({"conversation_id": "c9", "hook_event_name": "sessionStart", "workspace_roots": ["/r"]}),
        );
        assert_eq!(
            (cursor.sid(), cursor.cwd.as_deref()),
            (Some("c9"), Some("/r"))
        );
        let codex = input(
            Harness::Codex,
            json!({"session_id": "x", "cwd": "/p", "source": "clear"}),
        );
        assert_eq!(codex.source, Some(Source::Clear));
        assert_eq!(codex.client, "codex");
    }

    #[test]
    fn outputs_take_each_client_shape() {
        let v = |h: Harness, event: Event, c: Option<&str>| -> serde_json::Value {
            let line = h.client().render(&event, c, Some("R")).expect("printed");
            serde_json::from_str(&line).expect("json")
        };
        assert_eq!(
            v(Harness::Codex, Event::SessionStart, Some("T"))["hookSpecificOutput"]["additionalContext"],
            "T"
        );
        assert_eq!(
            v(Harness::Gemini, Event::UserPromptSubmit, Some("T"))["hookSpecificOutput"]["hookEventName"],
            "BeforeAgent"
        );
        assert_eq!(
            v(Harness::Cursor, Event::SessionStart, Some("T"))["additional_context"],
            "T"
        );
        assert_eq!(v(Harness::Cursor, Event::SessionStart, None), json!({}));
        let cline = v(Harness::Cline, Event::SessionStart, Some("T"));
        assert_eq!(
            (
                cline["cancel"].clone(),
                cline["contextModification"].clone()
            ),
            (json!(false), json!("T"))
        );
        assert_eq!(
            Harness::Gemini
                .client()
                .render(&Event::SessionStart, None, None),
            None
        );
        assert_eq!(
            v(Harness::Copilot, Event::SessionStart, Some("T"))["additionalContext"],
            "T"
        );
    }

    /// Any stdin, and any object with the fields clients send holding values of any type:
    /// the door reads it or refuses it, and every client types it, never panicking; an empty
    /// string is never a value.
    #[test]
    fn every_client_types_any_input() {
        use proptest::prelude::*;
        let key = prop::sample::select(vec![
            "session_id",
            "sessionId",
            "taskId",
            "conversation_id",
            "cwd",
            "workspaceRoots",
            "workspace_roots",
            "source",
            "transcript_path",
            "transcriptPath",
            "hookName",
            "taskResume",
            "initialPrompt",
            "reason",
        ]);
        let value = prop_oneof![
            ".{0,12}".prop_map(serde_json::Value::from),
            any::<i64>().prop_map(serde_json::Value::from),
            Just(serde_json::Value::Null),
            prop::collection::vec(".{0,6}", 0..3).prop_map(serde_json::Value::from),
        ];
        let object = prop::collection::btree_map(key, value, 0..8)
            .prop_map(|m| serde_json::to_vec(&m).unwrap_or_default());
        let input = prop_oneof![
            object,
            prop::collection::vec(any::<u8>(), 0..256),
            Just(b"[1,2,3]".to_vec()),
            Just(b"{\"a\":".repeat(1000)),
        ];
        let config = proptest::test_runner::Config {
            cases: 512,
            failure_persistence: None,
            ..Default::default()
        };
        proptest::test_runner::TestRunner::new(config)
            .run(&input, |bytes| {
                let Some(raw) = RawInput::parse(&bytes) else {
                    prop_assert!(!matches!(
                        serde_json::from_slice::<serde_json::Value>(&bytes),
                        Ok(serde_json::Value::Object(_))
                    ));
                    return Ok(());
                };
                for h in Harness::ALL {
                    let typed = h.client().input(&raw, &Event::PreCompact);
                    prop_assert!(typed.cwd.as_deref() != Some(""));
                    prop_assert!(typed.sid() != Some(""));
                    prop_assert!(typed.transcript.as_deref() != Some(""));
                }
                Ok(())
            })
            .expect("every client types any input");
    }
}
