//! `install <harness>` / `uninstall <harness>`: where each harness reads its hooks, and putting
//! our SessionStart hook there without disturbing anything else. JSON files are edited through
//! the CST (`jsonc.rs`); the bytes before and after are kept under `<store>/.installs/`, so an
//! uninstall of a file nobody touched since restores it byte for byte, and one edited since loses
//! only our hook group. Codex's hook trust is established through Codex itself (`codex.rs`).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::{Harness, jsonc};
use crate::error::Error;
use crate::store::{Store, slot};

/// User-wide or this repository's configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    User,
    Project,
}

/// How our hook is written into a harness's configuration.
#[derive(Debug, Clone)]
pub enum Shape {
    /// One group appended to the array at each path of a JSON file; `new_file` is the text of
    /// a file that does not exist yet.
    Json {
        groups: Vec<(&'static [&'static str], Value)>,
        new_file: &'static str,
    },
    /// An executable script of ours (Cline runs the file named after the event).
    Script(String),
}

/// Where and how our hook goes for one harness and scope.
#[derive(Debug, Clone)]
pub struct Plan {
    pub harness: Harness,
    pub scope: Scope,
    pub file: PathBuf,
    pub shape: Shape,
}

/// The hook command a harness runs for `event`: this binary by absolute path.
pub fn hook_command(h: Harness, event: &str) -> String {
    format!(
        "{} hook {event} --harness {}",
        crate::hooks::self_command(),
        h.name()
    )
}

/// Whether a hook group (or script) is ours: it runs one of our hooks for this harness.
pub fn is_ours(h: Harness, group: &Value) -> bool {
    let text = group.to_string();
    [
        "session-start",
        "pre-compact",
        "post-compact",
        "user-prompt-submit",
    ]
    .iter()
    .any(|e| text.contains(&format!("hook {e} --harness {}", h.name())))
}

fn codex_home() -> Option<PathBuf> {
    crate::env::non_empty("CODEX_HOME")
        .map(PathBuf::from)
        .or_else(|| crate::env::home().map(|h| h.join(".codex")))
}

/// The plan for `h` in `scope`; `root` is the repository's top level for project scope.
pub fn plan(h: Harness, scope: Scope, root: Option<&Path>) -> Result<Plan, Error> {
    let home = || crate::env::home().ok_or(Error::NoHome);
    let project = |rel: &str| -> Result<PathBuf, Error> {
        root.map(|r| r.join(rel)).ok_or_else(|| {
            Error::Usage(format!(
                "{} --project needs a git checkout (the working directory or DIR)",
                h.name()
            ))
        })
    };
    let command = hook_command(h, "session-start");
    let group = |event: &str, timeout: u64| json!({"hooks": [{"type": "command", "command": hook_command(h, event), "timeout": timeout}]});
    // Codex also gets the compaction pair: PreCompact starts the background writer (codex
    // exec), PostCompact confirms the compaction.
    let codex = || Shape::Json {
        groups: vec![
            (&["hooks", "SessionStart"][..], group("session-start", 10)),
            (&["hooks", "PreCompact"][..], group("pre-compact", 10)),
            (&["hooks", "PostCompact"][..], group("post-compact", 10)),
        ],
        new_file: "{}\n",
    };
    // Gemini CLI also gets PreCompress and AfterAgent, which both look for a compression since
    // the previous call (`gemini.rs`), and BeforeAgent, which delivers after its /clear (whose
    // SessionStart output Gemini drops). Its timeouts are in milliseconds.
    let gemini = || Shape::Json {
        groups: vec![
            (
                &["hooks", "SessionStart"][..],
                group("session-start", 10_000),
            ),
            (
                &["hooks", "BeforeAgent"][..],
                group("user-prompt-submit", 10_000),
            ),
            (&["hooks", "PreCompress"][..], group("pre-compact", 10_000)),
            (&["hooks", "AfterAgent"][..], group("post-compact", 10_000)),
        ],
        new_file: "{}\n",
    };
    let copilot =
        |event: &str| json!({"type": "command", "bash": hook_command(h, event), "timeoutSec": 10});
    let (file, shape) = match (h, scope) {
        (Harness::ClaudeCode, _) => {
            return Err(Error::Usage(
                "Claude Code takes the plugin in contrib/claude-code (see the README's Hooks section)".into(),
            ));
        }
        (Harness::Codex, Scope::User) => (
            codex_home().ok_or(Error::NoHome)?.join("hooks.json"),
            codex(),
        ),
        (Harness::Codex, Scope::Project) => (project(".codex/hooks.json")?, codex()),
        (Harness::Gemini, Scope::User) => (home()?.join(".gemini/settings.json"), gemini()),
        (Harness::Gemini, Scope::Project) => (project(".gemini/settings.json")?, gemini()),
        // Copilot CLI also gets preCompact (the writer) and agentStop / sessionEnd (which
        // confirm the compaction from its events file).
        (Harness::Copilot, Scope::Project) => (
            project(".github/hooks/handoff-store.json")?,
            Shape::Json {
                groups: vec![
                    (&["hooks", "sessionStart"][..], copilot("session-start")),
                    (&["hooks", "preCompact"][..], copilot("pre-compact")),
                    (&["hooks", "agentStop"][..], copilot("post-compact")),
                    (&["hooks", "sessionEnd"][..], copilot("post-compact")),
                ],
                new_file: "{\n  \"version\": 1\n}\n",
            },
        ),
        (Harness::Cline, Scope::Project) => (
            project(".clinerules/hooks/TaskStart")?,
            Shape::Script(format!("#!/bin/sh\nexec {command}\n")),
        ),
        // Cline's CLI also runs the user's hooks in ~/.cline/hooks (measured on 3.0.65).
        (Harness::Cline, Scope::User) => (
            home()?.join(".cline/hooks/TaskStart"),
            Shape::Script(format!("#!/bin/sh\nexec {command}\n")),
        ),
        (Harness::Cursor, scope) => (
            match scope {
                Scope::User => home()?.join(".cursor/hooks.json"),
                Scope::Project => project(".cursor/hooks.json")?,
            },
            Shape::Json {
                groups: vec![(&["hooks", "sessionStart"][..], json!({"command": command}))],
                new_file: "{\n  \"version\": 1\n}\n",
            },
        ),
        (Harness::Copilot, Scope::User) => {
            return Err(Error::Usage(format!(
                "{} reads hooks from the repository only; use --project",
                h.name()
            )));
        }
    };
    Ok(Plan {
        harness: h,
        scope,
        file,
        shape,
    })
}

/// What `install` and `uninstall` remember of a file (`<store>/.installs/<md5 of path>.json`).
#[derive(Debug, Serialize, Deserialize)]
struct Record {
    path: String,
    before: Option<String>,
    after: String,
    /// Codex's trust keys for our hooks, when they were written.
    #[serde(default)]
    trust_keys: Vec<String>,
}

fn record_path(store: &Store, file: &Path) -> PathBuf {
    let key = crate::hooks::md5_hex(file.to_string_lossy().as_bytes());
    store.dir.join(".installs").join(format!("{key}.json"))
}

fn read_text(file: &Path) -> Result<Option<String>, Error> {
    match std::fs::read(file) {
        Ok(b) => String::from_utf8(b)
            .map(Some)
            .map_err(|_| Error::Input(format!("{} is not UTF-8 text", file.display()))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io(file, e)),
    }
}

fn write_text(file: &Path, text: &str, executable: bool) -> Result<(), Error> {
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    }
    let mode = std::fs::metadata(file)
        .ok()
        .and_then(|m| slot::mode_of(&m))
        .unwrap_or(if executable { 0o755 } else { 0o644 });
    slot::replace(file, text.as_bytes(), None, Some(mode))
}

/// The result of `install`.
#[derive(Debug, Serialize)]
pub struct Installed {
    pub harness: &'static str,
    pub file: String,
    /// False when our hook was already there.
    pub changed: bool,
}

/// Put our hook into the plan's file (idempotent).
pub fn install(store: &Store, plan: &Plan) -> Result<Installed, Error> {
    let before = read_text(&plan.file)?;
    let installed = |changed| Installed {
        harness: plan.harness.name(),
        file: plan.file.to_string_lossy().into_owned(),
        changed,
    };
    let after = match &plan.shape {
        Shape::Json { groups, new_file } => {
            let mut text = before.clone().unwrap_or_else(|| new_file.to_string());
            let mut added = false;
            for (path, entry) in groups {
                if jsonc::elements(&text, path)
                    .iter()
                    .any(|g| is_ours(plan.harness, g))
                {
                    continue;
                }
                text = jsonc::append(&text, path, entry).map_err(|e| {
                    Error::Input(format!(
                        "cannot add the hook to {}: {e}",
                        plan.file.display()
                    ))
                })?;
                added = true;
            }
            if !added {
                return Ok(installed(false));
            }
            text
        }
        Shape::Script(script) => match &before {
            Some(text) if text == script => return Ok(installed(false)),
            Some(_) => {
                return Err(Error::Collision(format!(
                    "{} already exists and is not ours; move it away (Cline runs one script per event) and install again",
                    plan.file.display()
                )));
            }
            None => script.clone(),
        },
    };
    write_text(&plan.file, &after, matches!(plan.shape, Shape::Script(_)))?;
    // Installing again over our own earlier install (a newer release adds hooks) keeps what the
    // file was before the first one, so uninstall still gives the user's file back.
    let earlier: Option<Record> = read_text(&record_path(store, &plan.file))?
        .and_then(|t| serde_json::from_str(&t).ok())
        .filter(|r: &Record| before.as_deref() == Some(r.after.as_str()));
    let record = Record {
        path: plan.file.to_string_lossy().into_owned(),
        after,
        trust_keys: earlier
            .as_ref()
            .map(|r| r.trust_keys.clone())
            .unwrap_or_default(),
        before: earlier.map_or(before, |r| r.before),
    };
    save_record(store, &plan.file, &record)?;
    Ok(installed(true))
}

fn save_record(store: &Store, file: &Path, record: &Record) -> Result<(), Error> {
    let path = record_path(store, file);
    if let Some(dir) = path.parent() {
        slot::create_private_dir(dir)?;
    }
    let text = serde_json::to_string(record).map_err(|e| Error::Output(e.into()))?;
    slot::replace(&path, text.as_bytes(), None, None)
}

/// Remember Codex's trust keys for the hooks installed in `file`.
pub fn remember_trust_keys(store: &Store, file: &Path, keys: &[String]) -> Result<(), Error> {
    let path = record_path(store, file);
    let Some(text) = read_text(&path)? else {
        return Ok(());
    };
    let Ok(mut record) = serde_json::from_str::<Record>(&text) else {
        return Ok(());
    };
    for key in keys {
        if !record.trust_keys.contains(key) {
            record.trust_keys.push(key.clone());
        }
    }
    save_record(store, file, &record)
}

/// The result of `uninstall`.
#[derive(Debug, Serialize)]
pub struct Removed {
    pub harness: &'static str,
    pub file: String,
    /// Whether anything of ours was there.
    pub removed: bool,
    /// True when the file was restored byte for byte (nobody had changed it since install).
    pub exact: bool,
    /// Codex's trust keys of the removed hooks, for the caller to drop.
    #[serde(skip)]
    pub trust_keys: Vec<String>,
}

/// Take our hook out of the plan's file.
pub fn uninstall(store: &Store, plan: &Plan) -> Result<Removed, Error> {
    let current = read_text(&plan.file)?;
    let record_file = record_path(store, &plan.file);
    let record: Option<Record> =
        read_text(&record_file)?.and_then(|t| serde_json::from_str(&t).ok());
    let mut removed = Removed {
        harness: plan.harness.name(),
        file: plan.file.to_string_lossy().into_owned(),
        removed: false,
        exact: false,
        trust_keys: record
            .as_ref()
            .map(|r| r.trust_keys.clone())
            .unwrap_or_default(),
    };
    let Some(current) = current else {
        let _ = std::fs::remove_file(&record_file);
        return Ok(removed);
    };
    if let Some(r) = &record
        && r.after == current
    {
        match &r.before {
            Some(before) => write_text(&plan.file, before, false)?,
            None => std::fs::remove_file(&plan.file).map_err(|e| Error::io(&plan.file, e))?,
        }
        removed.removed = true;
        removed.exact = true;
    } else {
        match &plan.shape {
            Shape::Json { groups, .. } => {
                let mut text = current.clone();
                let mut total = 0;
                for (path, _) in groups {
                    let (next, n) = jsonc::remove(&text, path, |g| is_ours(plan.harness, g))
                        .map_err(|e| {
                            Error::Input(format!(
                                "cannot read {}: {e}; nothing was changed",
                                plan.file.display()
                            ))
                        })?;
                    text = next;
                    total += n;
                }
                if total > 0 {
                    write_text(&plan.file, &text, false)?;
                    removed.removed = true;
                }
            }
            Shape::Script(script) => {
                if &current == script {
                    std::fs::remove_file(&plan.file).map_err(|e| Error::io(&plan.file, e))?;
                    removed.removed = true;
                }
            }
        }
    }
    let _ = std::fs::remove_file(&record_file);
    Ok(removed)
}

/// Whether our hook is in the plan's file now.
pub fn is_installed(plan: &Plan) -> bool {
    let Ok(Some(text)) = read_text(&plan.file) else {
        return false;
    };
    match &plan.shape {
        Shape::Json { groups, .. } => groups.iter().all(|(path, _)| {
            jsonc::elements(&text, path)
                .iter()
                .any(|g| is_ours(plan.harness, g))
        }),
        Shape::Script(script) => &text == script,
    }
}
