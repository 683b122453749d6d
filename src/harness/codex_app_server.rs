//! Codex's own word on its hooks, asked through `codex app-server` over stdio JSON-RPC (spawned
//! by argv, with a deadline): `hooks/list` (each hook's key, current hash and trust status) and
//! `config/batchWrite`, what its TUI's "Trust" does. We never compute Codex's hash ourselves.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

use serde_json::{Value, json};

use super::Harness;
use super::install::is_ours;

/// Codex's home: `$CODEX_HOME`, else `~/.codex`.
pub(crate) fn codex_home() -> Option<PathBuf> {
    crate::env::non_empty("CODEX_HOME")
        .map(PathBuf::from)
        .or_else(|| crate::env::home().map(|h| h.join(".codex")))
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
