//! OpenAI Codex CLI (measured on 0.169.0). Its input has Claude Code's field names and it reads
//! Claude Code's output shape. Its hooks live in `hooks.json` (`$CODEX_HOME`, else `~/.codex`,
//! or the project's `.codex/`, which Codex reads only once the project is trusted); ours are
//! SessionStart, UserPromptSubmit, the compaction pair — PreCompact starts the background
//! writer (`codex exec`, read-only), PostCompact confirms the compaction — and PreToolUse for
//! the tripwires. Its plugin (contrib/codex) brings the same hooks.
//!
//! Its hook trust. Codex runs a configured hook only when `config.toml` records a
//! `trusted_hash` matching the hook as it is now, and skips any other silently. The supported
//! path to record it is Codex's own: `codex app-server` over stdio JSON-RPC, `hooks/list` (each
//! hook's key, current hash and trust status) then `config/batchWrite` — what its TUI's "Trust"
//! does. We never compute Codex's hash ourselves. Spawned by argv, with a deadline.

use std::path::{Path, PathBuf};

use std::cell::RefCell;
use std::rc::Rc;

use serde_json::json;

use super::codex_app_server::{
    CodexError, Hook, Trust, binary, codex_home, forget, list, trust_ours,
};
use super::install::setting::{self, Held};
use super::install::{Plan, Scope, Shape, group, project, tool_group};
use super::status::{Row, Verdict};
use super::{Client, Harness, Located, Note, Trusted};
use crate::error::{Error, External, NothingToDo};
use crate::hooks::input::{HookInput, RawInput};
use crate::hooks::writer::{Call, Invocation, Profile, argv};
use crate::ops::tripwire::Call as ToolCall;
use crate::store::runs::Answer;

pub(crate) struct Codex;

/// The file the writer writes its last message to (`codex exec -o`), inside the run directory.
const ANSWER: &str = "answer.md";

/// The writer: `codex exec` with `--sandbox read-only` and approvals `never` (its shell cannot
/// write or reach the network, and nothing is escalated), no MCP server, no web search; its
/// answer is the last message, written to a file of the run.
const WRITER: Profile = Profile {
    name: "Codex",
    explore: "read-only shell commands (wc -l, grep, sed -n, tail; the sandbox refuses writes and the network)",
    invocation,
    files: &[],
};

fn invocation(c: &Call) -> Invocation {
    let answer = format!("{}/{ANSWER}", c.run_dir);
    Invocation {
        argv: argv(
            &c.program,
            &[
                "exec",
                "--skip-git-repo-check",
                "--sandbox",
                "read-only",
                "-c",
                "approval_policy=\"never\"",
                "-c",
                "mcp_servers={}",
                "-c",
                "web_search=\"disabled\"",
                "--json",
                "-o",
                &answer,
                "-",
            ],
        ),
        resume: None,
        answer: Answer::File(ANSWER.into()),
        cwd: None,
    }
}

/// What Codex said about its hooks here: `None` when there is no codex to ask.
type Listing = Option<Result<(Vec<Hook>, Vec<String>), CodexError>>;

/// Codex's listing for `cwd`, asked once per process (`status` reads it for its plugin rows and
/// for each scope's row).
fn listing(cwd: &Path) -> Rc<Listing> {
    thread_local! {
        static ASKED: RefCell<Option<(PathBuf, Rc<Listing>)>> = const { RefCell::new(None) };
    }
    ASKED.with_borrow_mut(|asked| {
        if let Some((at, listing)) = asked.as_ref()
            && at == cwd
        {
            return listing.clone();
        }
        let listing = Rc::new(binary().map(|bin| list(&bin, cwd)));
        *asked = Some((cwd.to_path_buf(), listing.clone()));
        listing
    })
}

/// The manual way to trust the hook, when it could not be recorded.
const MANUAL: &str = "open codex, type /hooks, choose \"Review hook trust\" and trust handoff-store's SessionStart hook (until then Codex skips it without a word)";

impl Client for Codex {
    fn name(&self) -> &'static str {
        "codex"
    }

    fn install_help(&self) -> &'static str {
        "Codex CLI's hooks (hooks.json), trusted through Codex itself"
    }

    fn pre_compact(&self, input: &HookInput) -> Option<String> {
        crate::hooks::pre_compact::start(input, WRITER, binary());
        None
    }

    fn user_prompt(&self, input: &HookInput) -> Option<crate::hooks::session_start::Injection> {
        crate::hooks::user_prompt::run(input, "UserPromptSubmit")
    }

    fn has_prompt_hook(&self) -> bool {
        true
    }

    /// Its shell tool reaches hooks as `Bash` (`exec_command`, measured); a patch the model
    /// runs through it (`apply_patch <<'EOF' …`), or the `apply_patch` tool where the model has
    /// it, is the edit of the files the patch names.
    fn tool_call(&self, raw: &RawInput) -> Option<ToolCall> {
        let cwd = raw.text("cwd");
        let text = match raw.text("tool_name")? {
            "Bash" => raw.text_in("tool_input", "command")?,
            "apply_patch" => raw
                .text_in("tool_input", "command")
                .or_else(|| raw.text_in("tool_input", "input"))?,
            _ => return None,
        };
        super::patch(cwd, text).or_else(|| Some(ToolCall::Shell(text.to_string())))
    }

    /// Its rollout file (the hooks' `transcript_path`): a line per item with its `timestamp`;
    /// `response_item` tool calls (`function_call` `exec_command` with `cmd`, read as its shell;
    /// `custom_tool_call` `apply_patch`; `local_shell_call`), and `event_msg` `token_count`,
    /// whose `last_token_usage` is one request's (its `input_tokens` hold the cached ones).
    fn transcript_line(
        &self,
        line: &serde_json::Value,
        checkout: &str,
    ) -> Option<crate::ops::impact::Line> {
        let mut out = crate::ops::impact::Line::at_timestamp(line)?;
        let payload = &line["payload"];
        let tool = |name: &str, input: serde_json::Value| {
            let cwd = input["workdir"].as_str().unwrap_or(checkout).to_string();
            super::transcript_tool(self, name, &input, Some(&cwd))
        };
        match (line["type"].as_str(), payload["type"].as_str()) {
            (Some("event_msg"), Some("token_count")) => {
                let last = &payload["info"]["last_token_usage"];
                let n = ["input_tokens", "output_tokens"]
                    .iter()
                    .filter_map(|k| last.get(k).and_then(serde_json::Value::as_u64))
                    .fold(0u64, u64::saturating_add);
                out.usage = last.is_object().then_some((None, n));
            }
            (Some("response_item"), Some("function_call")) => {
                let args: serde_json::Value = payload["arguments"]
                    .as_str()
                    .and_then(|a| serde_json::from_str(a).ok())
                    .unwrap_or_default();
                let name = payload["name"].as_str().unwrap_or_default();
                out.tools.push(match (name, args["cmd"].as_str()) {
                    ("exec_command", Some(cmd)) => {
                        tool("Bash", json!({"command": cmd, "workdir": args["workdir"]}))
                    }
                    _ => tool(name, args),
                });
            }
            (Some("response_item"), Some("custom_tool_call")) => {
                let name = payload["name"].as_str().unwrap_or_default();
                out.tools
                    .push(tool(name, json!({"input": payload["input"]})));
            }
            (Some("response_item"), Some("local_shell_call")) => {
                let words: Vec<&str> = payload["action"]["command"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(serde_json::Value::as_str)
                    .collect();
                // `bash -lc <script>`: the script is the command.
                let command = match words.as_slice() {
                    [_, "-lc" | "-c", script] => script.to_string(),
                    _ => words.join(" "),
                };
                out.tools.push(tool("Bash", json!({"command": command})));
            }
            _ => {}
        }
        Some(out)
    }

    fn post_compact(&self, input: &HookInput) -> Option<String> {
        crate::hooks::post_compact::run(input, "PostCompact");
        None
    }

    fn locate(&self, scope: Scope, root: Option<&Path>) -> Result<Located, Error> {
        let file = match scope {
            Scope::User => codex_home().ok_or(Error::NoHome)?.join("hooks.json"),
            Scope::Project => project(Harness::Codex, root, ".codex/hooks.json")?,
        };
        let group = |event: &str| group(Harness::Codex, event, 10);
        Ok(Located {
            file,
            shape: Shape::Json {
                groups: vec![
                    (&["hooks", "SessionStart"][..], group("session-start")),
                    (
                        &["hooks", "UserPromptSubmit"][..],
                        group("user-prompt-submit"),
                    ),
                    (&["hooks", "PreCompact"][..], group("pre-compact")),
                    (&["hooks", "PostCompact"][..], group("post-compact")),
                    (
                        &["hooks", "PreToolUse"][..],
                        tool_group(Harness::Codex, "pre-tool-use", 10, TRIP_TOOLS),
                    ),
                ],
                new_file: "{}\n",
            },
            skill: None,
            scripts: Vec::new(),
        })
    }

    /// Codex is asked itself: it runs a hook only once it trusts it.
    fn would_run(&self, scope: Scope, file: &Path, cwd: &Path) -> Verdict {
        let listing = listing(cwd);
        let Some(listing) = listing.as_ref() else {
            return Verdict::unknown(
                "codex is not on PATH (or HANDOFF_CODEX_BIN) to ask whether it trusts the hook",
            );
        };
        let (hooks, errors) = match listing {
            Ok(found) => found,
            Err(e) => return Verdict::unknown(e.to_string()),
        };
        match hooks
            .iter()
            .find(|k| k.ours && k.source_path.as_deref().map(Path::new) == Some(file))
        {
            Some(k) if k.trust == "trusted" => Verdict::yes("trusted by Codex"),
            Some(k) => Verdict::no(format!(
                "Codex reports it {}: run handoff-store install codex again, or trust it under /hooks in codex",
                k.trust
            )),
            None if !errors.is_empty() => Verdict::no(format!(
                "Codex cannot read its hook files: {}",
                errors.join("; ")
            )),
            None if scope == Scope::Project => Verdict::no(
                "Codex does not load this project's .codex/ (the project is not trusted): run codex in it and trust it, or codex exec --trust",
            ),
            None => Verdict::no("Codex does not list it"),
        }
    }

    /// Our steering in each scope's `config.toml`, then our hooks from the plugin in
    /// contrib/codex, as Codex lists them.
    fn rows_beside(&self, root: Option<&Path>, cwd: &Path) -> Vec<Row> {
        let configs: Vec<PathBuf> = [Scope::User, Scope::Project]
            .into_iter()
            .filter_map(|scope| config_file(scope, root))
            .collect();
        let mut rows: Vec<Row> = configs.iter().cloned().filter_map(steering_row).collect();
        rows.extend(configs.iter().flat_map(|f| mcp_rows(f)));
        let listing = listing(cwd);
        let Some(Ok((hooks, _))) = listing.as_ref() else {
            return rows;
        };
        rows.extend(
            hooks
                .iter()
                .filter(|hook| {
                    hook.ours && hook.plugin.is_some() && hook.key.contains(":session_start:")
                })
                .map(|hook| {
                    let plugin = hook.plugin.as_deref().unwrap_or("?");
                    let verdict = if hook.trust == "trusted" {
                        Verdict::yes(format!("plugin {plugin}, trusted by Codex"))
                    } else {
                        Verdict::no(format!(
                            "plugin {plugin}: Codex reports it {}; run handoff-store trust codex",
                            hook.trust
                        ))
                    };
                    Row {
                        harness: self.name(),
                        scope: "plugin",
                        file: hook.source_path.clone(),
                        installed: true,
                        runs: verdict.runs,
                        why: verdict.why,
                    }
                }),
        );
        rows
    }

    /// Trust our hook through Codex, or say what the user must do.
    fn after_install(&self, store: &crate::store::Store, plan: &Plan, dir: &Path) -> Vec<Note> {
        let trust = |text: String| Note { tag: "trust", text };
        let mut notes = vec![match binary().map(|bin| trust_ours(&bin, dir)) {
            None => trust(format!(
                "codex is not on PATH, so the hook is not trusted yet: {MANUAL}"
            )),
            Some(Ok(Trust::Already)) => trust("Codex already trusts it".into()),
            Some(Ok(Trust::NotListed)) => trust(format!(
                "Codex does not list the hook here, so it will not run (is {} valid JSON, without comments? for --project, is the project trusted?); see handoff-store status",
                plan.file.display()
            )),
            Some(Ok(Trust::Recorded(keys))) => {
                let _ = super::install::remember_trust_keys(store, &plan.file, &keys);
                Note {
                    tag: "trusted",
                    text: format!("through codex app-server: {}", keys.join(", ")),
                }
            }
            Some(Err(e)) => trust(format!("not recorded ({e}): {MANUAL}")),
        }];
        notes.extend(steer(store, plan.file.parent()));
        if plan.scope == Scope::Project {
            notes.push(Note {
                tag: "note",
                text: "Codex reads a project's .codex/ only once the project is trusted: run codex there and trust it, or codex exec --trust".into(),
            });
        }
        notes
    }

    fn forget(&self, key: &str) {
        let _ = forget(key);
    }

    /// Our `compact_prompt` goes with the hooks.
    fn after_uninstall(&self, store: &crate::store::Store, plan: &Plan) -> Vec<Note> {
        let Some(file) = plan.file.parent().map(|d| d.join("config.toml")) else {
            return Vec::new();
        };
        let prompt = crate::hooks::texts::compact_prompt();
        match setting::unset(store, &file, COMPACT_PROMPT, &prompt) {
            Ok(true) => vec![Note {
                tag: "removed",
                text: format!("compact_prompt (our steering) from {}", file.display()),
            }],
            Ok(false) => Vec::new(),
            Err(e) => vec![Note {
                tag: "note",
                text: format!("compact_prompt left in {}: {}", file.display(), e.report()),
            }],
        }
    }

    /// Through `codex app-server` — what Codex's /hooks "Trust" does (exit 3 when Codex cannot
    /// be asked, 4 when it lists none of ours).
    fn trust(&self, dir: &Path) -> Option<Result<Trusted, Error>> {
        let bin = binary().ok_or(Error::External(External::NoClient {
            program: "codex",
            var: "HANDOFF_CODEX_BIN",
        }));
        Some(bin.and_then(|bin| {
            match trust_ours(&bin, dir)
                .map_err(|e| Error::External(External::Client(Box::new(e))))?
            {
                Trust::Recorded(keys) => Ok(Trusted::Recorded(keys)),
                Trust::Already => Ok(Trusted::Already("Codex")),
                Trust::NotListed => Err(Error::NothingToDo(NothingToDo::NoHookListed {
                    client: "Codex",
                    word: "codex",
                })),
            }
        }))
    }
}

/// The tools its tripwire hook runs before: its shell (named `Bash` in hook input) and
/// `apply_patch`.
const TRIP_TOOLS: &str = "Bash|apply_patch";

/// The key of Codex's `config.toml` that replaces its compaction prompt.
const COMPACT_PROMPT: &str = "compact_prompt";

/// The `config.toml` beside the hooks of `scope` (`root`: the repository, for project scope).
fn config_file(scope: Scope, root: Option<&Path>) -> Option<PathBuf> {
    match scope {
        Scope::User => codex_home().map(|h| h.join("config.toml")),
        Scope::Project => root.map(|r| r.join(".codex/config.toml")),
    }
}

/// Steer Codex's compaction: our `compact_prompt` in the `config.toml` in `dir` (beside the
/// hooks), unless the user has one of their own, which stays; what was done, for the user.
fn steer(store: &crate::store::Store, dir: Option<&Path>) -> Option<Note> {
    let file = dir?.join("config.toml");
    let prompt = crate::hooks::texts::compact_prompt();
    let text = match setting::set(store, &file, COMPACT_PROMPT, &prompt) {
        Ok(Held::Nothing) => format!(
            "compact_prompt set in {}: Codex's compaction keeps decisions, dead ends and traps verbatim",
            file.display()
        ),
        Ok(Held::Ours) => format!("compact_prompt in {} is ours already", file.display()),
        Ok(Held::Theirs) => format!(
            "your own compact_prompt in {} is kept: Codex's compaction follows it, not ours",
            file.display()
        ),
        Err(e) => format!("compact_prompt not set ({}); not steered", e.report()),
    };
    Some(Note { tag: "steer", text })
}

/// Our MCP server where `codex mcp add` registers it: `[mcp_servers.<name>]` in `file`.
fn mcp_rows(file: &Path) -> Vec<Row> {
    let Some(doc) = crate::fs::read_regular_text(file)
        .ok()
        .and_then(|t| t.parse::<toml_edit::DocumentMut>().ok())
    else {
        return Vec::new();
    };
    let Some(servers) = doc.get("mcp_servers").and_then(|s| s.as_table_like()) else {
        return Vec::new();
    };
    servers
        .iter()
        .filter_map(|(_, server)| {
            let server = server.as_table_like()?;
            let command = server.get("command")?.as_str()?.to_string();
            let args = server
                .get("args")
                .and_then(|a| a.as_array())
                .map(|a| {
                    a.iter()
                        .filter_map(|v| v.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_else(Vec::new);
            let argv: Vec<String> = std::iter::once(command).chain(args).collect();
            super::status::mcp_row("codex", file, &argv)
        })
        .collect()
}

/// `status`'s row for the steering in `file`, when it holds a `compact_prompt`.
fn steering_row(file: PathBuf) -> Option<Row> {
    let prompt = crate::hooks::texts::compact_prompt();
    let (installed, verdict) = match setting::held(&file, COMPACT_PROMPT, &prompt).ok()? {
        Held::Nothing => return None,
        Held::Ours => (
            true,
            Verdict::yes("compact_prompt: handoff-store's steering"),
        ),
        Held::Theirs => (
            false,
            Verdict::no(
                "compact_prompt of your own: kept; Codex's compaction follows it, not ours",
            ),
        ),
    };
    Some(Row {
        harness: "codex",
        scope: "steering",
        file: Some(file.to_string_lossy().into_owned()),
        installed,
        runs: verdict.runs,
        why: verdict.why,
    })
}
