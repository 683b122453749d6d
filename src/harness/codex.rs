//! OpenAI Codex CLI (measured on 0.169.0). Its input has Claude Code's field names and it reads
//! Claude Code's output shape. Its hooks live in `hooks.json` (`$CODEX_HOME`, else `~/.codex`,
//! or the project's `.codex/`, which Codex reads only once the project is trusted); ours are
//! SessionStart and the compaction pair: PreCompact starts the background writer (`codex exec`,
//! read-only), PostCompact confirms the compaction. Its plugin (contrib/codex) brings the same
//! hooks.
//!
//! Its hook trust. Codex runs a configured hook only when `config.toml` records a
//! `trusted_hash` matching the hook as it is now, and skips any other silently. The supported
//! path to record it is Codex's own: `codex app-server` over stdio JSON-RPC, `hooks/list` (each
//! hook's key, current hash and trust status) then `config/batchWrite` — what its TUI's "Trust"
//! does. We never compute Codex's hash ourselves. Spawned by argv, with a deadline.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

use std::cell::RefCell;
use std::rc::Rc;

use serde_json::{Value, json};

use super::install::setting::{self, Held};
use super::install::{Plan, Scope, Shape, group, is_ours, project};
use super::status::{Row, Verdict};
use super::{Client, Harness, Located, Note, Trusted};
use crate::error::{Error, External, NothingToDo};
use crate::hooks::input::HookInput;
use crate::hooks::writer::{Call, Invocation, Profile, argv};
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

fn codex_home() -> Option<PathBuf> {
    crate::env::non_empty("CODEX_HOME")
        .map(PathBuf::from)
        .or_else(|| crate::env::home().map(|h| h.join(".codex")))
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

    fn post_compact(&self, input: &HookInput) {
        crate::hooks::post_compact::run(input, "PostCompact");
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
                ],
                new_file: "{}\n",
            },
            skill: None,
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

/// How long one app-server answer may take.
const DEADLINE: Duration = Duration::from_secs(30);

/// The `codex` program: `HANDOFF_CODEX_BIN`, else `codex` on PATH.
pub(crate) fn binary() -> Option<PathBuf> {
    super::program("HANDOFF_CODEX_BIN", "codex")
}

/// One of Codex's hooks as `hooks/list` reports it.
#[derive(Debug, Clone)]
pub(crate) struct Hook {
    pub(crate) key: String,
    pub(crate) current_hash: String,
    /// `trusted`, `untrusted`, `modified` or `managed`.
    pub(crate) trust: String,
    pub(crate) ours: bool,
    /// The plugin it comes from (`handoff-store@handoff-store`), if any.
    pub(crate) plugin: Option<String>,
    /// The file Codex read it from.
    pub(crate) source_path: Option<String>,
}

/// Why talking to Codex failed.
#[derive(Debug)]
pub(crate) enum CodexError {
    /// The program could not be started.
    Spawn {
        program: PathBuf,
        source: std::io::Error,
    },
    /// Its app-server's pipe broke.
    Pipe(std::io::Error),
    /// No answer to `method` within the deadline.
    NoAnswer { method: String },
    /// It answered `method` with an error (its JSON).
    Refused { method: String, error: Value },
    /// `config.toml` is not TOML.
    Config(toml_edit::TomlError),
    /// `config.toml` could not be written.
    Write(crate::error::Error),
}

impl std::fmt::Display for CodexError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CodexError::Spawn { program, source } => {
                write!(f, "cannot run {}: {source}", program.display())
            }
            CodexError::Pipe(e) => write!(f, "codex app-server: {e}"),
            CodexError::NoAnswer { method } => {
                write!(f, "codex app-server did not answer {method}")
            }
            CodexError::Refused { method, error } => {
                write!(f, "codex app-server {method}: {error}")
            }
            CodexError::Config(e) => write!(f, "{e}"),
            CodexError::Write(e) => write!(f, "{}", e.report()),
        }
    }
}

impl std::error::Error for CodexError {}

struct Server {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
    next: u64,
}

impl Server {
    fn start(codex: &Path, cwd: &Path) -> Result<Server, CodexError> {
        let mut child = Command::new(codex)
            .arg("app-server")
            .current_dir(cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|source| CodexError::Spawn {
                program: codex.to_path_buf(),
                source,
            })?;
        let no_pipe = || CodexError::Pipe(std::io::Error::other("no pipe to the child"));
        let stdin = child.stdin.take().ok_or_else(no_pipe)?;
        let stdout = child.stdout.take().ok_or_else(no_pipe)?;
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut server = Server {
            child,
            stdin,
            lines,
            next: 1,
        };
        server.call(
            "initialize",
            json!({"clientInfo": {"name": "handoff-store", "version": env!("CARGO_PKG_VERSION")}}),
        )?;
        server.send(&json!({"method": "initialized"}))?;
        Ok(server)
    }

    fn send(&mut self, message: &Value) -> Result<(), CodexError> {
        writeln!(self.stdin, "{message}")
            .and_then(|()| self.stdin.flush())
            .map_err(CodexError::Pipe)
    }

    fn call(&mut self, method: &str, params: Value) -> Result<Value, CodexError> {
        let id = self.next;
        self.next += 1;
        self.send(&json!({"id": id, "method": method, "params": params}))?;
        loop {
            let line = self
                .lines
                .recv_timeout(DEADLINE)
                .map_err(|_| CodexError::NoAnswer {
                    method: method.to_string(),
                })?;
            let Ok(message) = serde_json::from_str::<Value>(&line) else {
                continue;
            };
            if message.get("id").and_then(Value::as_u64) != Some(id) {
                continue;
            }
            if let Some(error) = message.get("error") {
                return Err(CodexError::Refused {
                    method: method.to_string(),
                    error: error.clone(),
                });
            }
            return Ok(message.get("result").cloned().unwrap_or(Value::Null));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn hooks_of(result: &Value) -> Vec<Hook> {
    result["data"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|entry| entry["hooks"].as_array().cloned().unwrap_or_default())
        .filter_map(|h| {
            Some(Hook {
                key: h["key"].as_str()?.to_string(),
                current_hash: h["currentHash"].as_str().unwrap_or("").to_string(),
                trust: h["trustStatus"].as_str().unwrap_or("unknown").to_string(),
                ours: is_ours(Harness::Codex, &h["command"]),
                plugin: h["pluginId"].as_str().map(str::to_string),
                source_path: h["sourcePath"].as_str().map(str::to_string),
            })
        })
        .collect()
}

/// Codex's view of the hooks that apply in `cwd`, and the errors it reported reading their
/// files (a hooks.json Codex cannot parse is skipped whole).
pub(crate) fn list(codex: &Path, cwd: &Path) -> Result<(Vec<Hook>, Vec<String>), CodexError> {
    let mut server = Server::start(codex, cwd)?;
    let result = server.call("hooks/list", json!({"cwds": [cwd]}))?;
    let errors = result["data"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|entry| entry["errors"].as_array().cloned().unwrap_or_default())
        .map(|e| {
            format!(
                "{}: {}",
                e["path"].as_str().unwrap_or("?"),
                e["message"].as_str().unwrap_or("?")
            )
        })
        .collect();
    Ok((hooks_of(&result), errors))
}

/// What trusting our hooks found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Trust {
    /// Trusted now; the keys of the trust entries written.
    Recorded(Vec<String>),
    /// Codex already trusted every hook of ours it lists.
    Already,
    /// Codex lists no hook of ours here (it does not read the file, or cannot).
    NotListed,
}

/// Trust our hooks (and only ours) that apply in `cwd`, through Codex.
pub(crate) fn trust_ours(codex: &Path, cwd: &Path) -> Result<Trust, CodexError> {
    let mut server = Server::start(codex, cwd)?;
    let result = server.call("hooks/list", json!({"cwds": [cwd]}))?;
    let ours: Vec<Hook> = hooks_of(&result).into_iter().filter(|h| h.ours).collect();
    if ours.is_empty() {
        return Ok(Trust::NotListed);
    }
    let pending: Vec<&Hook> = ours
        .iter()
        .filter(|h| h.trust != "trusted" && !h.current_hash.is_empty())
        .collect();
    if pending.is_empty() {
        return Ok(Trust::Already);
    }
    let state = Value::Object(
        pending
            .iter()
            .map(|h| (h.key.clone(), json!({"trusted_hash": h.current_hash})))
            .collect(),
    );
    // The key holds dots (a path), so the whole table is upserted rather than a dotted path.
    server.call(
        "config/batchWrite",
        json!({"edits": [{"keyPath": "hooks.state", "mergeStrategy": "upsert", "value": state}]}),
    )?;
    Ok(Trust::Recorded(
        pending.into_iter().map(|h| h.key.clone()).collect(),
    ))
}

/// Drop the trust entry `key` from `$CODEX_HOME/config.toml` (format-preserving), after our hook
/// was uninstalled.
pub(crate) fn forget(key: &str) -> Result<(), CodexError> {
    let Some(home) = codex_home() else {
        return Ok(());
    };
    let file = home.join("config.toml");
    let Ok(Some(text)) = super::install::read_config(&file) else {
        return Ok(());
    };
    let mut doc: toml_edit::DocumentMut = text.parse().map_err(CodexError::Config)?;
    let removed = doc
        .get_mut("hooks")
        .and_then(|h| h.get_mut("state"))
        .and_then(|s| s.as_table_like_mut())
        .and_then(|t| t.remove(key))
        .is_some();
    if removed {
        // Its line endings and mode kept, never a read-only one.
        let text = super::install::line_endings_of(&text, doc.to_string());
        super::install::write_config(&file, &text).map_err(CodexError::Write)?;
    }
    Ok(())
}
