//! `install <harness>` / `uninstall <harness>`: where each harness reads its hooks, and putting
//! our SessionStart hook there without disturbing anything else. JSON files are edited through
//! the CST (`jsonc.rs`); the bytes before and after are kept under `<store>/.installs/`, so an
//! uninstall of a file nobody touched since restores it byte for byte, and one edited since loses
//! only our hook group. Codex's hook trust is established through Codex itself (`codex.rs`).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::{Harness, jsonc};
use crate::error::{ConfigStep, Error, Input, Usage};
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
    /// The `/handoff` skill's file (Claude Code), installed and removed with the hooks.
    pub skill: Option<PathBuf>,
}

/// The `/handoff` skill (Claude Code), shipped inside the binary so nothing refers to a clone.
const SKILL: &str = include_str!("../../contrib/claude-code/skills/handoff/SKILL.md");

/// The hook command a harness runs for `event`: this binary by absolute path. Claude Code's
/// hooks are the plain ones (its input is the hooks' native shape).
pub fn hook_command(h: Harness, event: &str) -> String {
    match h {
        Harness::ClaudeCode => format!("{} hook {event}", crate::shell::self_command()),
        _ => format!(
            "{} hook {event} --harness {}",
            crate::shell::self_command(),
            h.name()
        ),
    }
}

/// The events Claude Code gets a hook for, with each hook's time limit in seconds.
const CLAUDE_EVENTS: [(&str, &str, u64); 5] = [
    ("SessionStart", "session-start", 60),
    ("UserPromptSubmit", "user-prompt-submit", 10),
    ("PreCompact", "pre-compact", 30),
    ("PostCompact", "post-compact", 30),
    ("SessionEnd", "session-end", 30),
];

/// Whether a hook group (or script) is ours: it runs one of our hooks for this harness. For
/// Claude Code, exactly this binary's (a hook the user wrote by hand is theirs).
pub fn is_ours(h: Harness, group: &Value) -> bool {
    if h == Harness::ClaudeCode {
        let mut commands = Vec::new();
        collect_commands(group, &mut commands);
        return commands.iter().any(|c| {
            CLAUDE_EVENTS.iter().any(|(_, e, _)| {
                c.strip_suffix(&format!(" hook {e}"))
                    .map(unquote)
                    .is_some_and(|p| {
                        Path::new(&p)
                            .file_name()
                            .is_some_and(|n| n.to_string_lossy().starts_with("handoff-store"))
                    })
            })
        });
    }
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

/// A program path as a hook command names it (one shell word, maybe single-quoted).
fn unquote(word: &str) -> String {
    match word.strip_prefix('\'').and_then(|w| w.strip_suffix('\'')) {
        Some(inner) => inner.replace("'\\''", "'"),
        None => word.to_string(),
    }
}

/// The program our hook in the plan's file runs (its first word), when our hook is there.
pub fn installed_program(plan: &Plan) -> Option<PathBuf> {
    let text = read_text(&plan.file).ok()??;
    let command = match &plan.shape {
        Shape::Json { groups, .. } => groups.iter().find_map(|(path, _)| {
            jsonc::elements(&text, path).iter().find_map(|g| {
                commands_of(g)
                    .into_iter()
                    .find(|c| is_ours(plan.harness, &json!({ "command": c })))
            })
        })?,
        Shape::Script(_) => text
            .lines()
            .find_map(|l| l.strip_prefix("exec "))?
            .to_string(),
    };
    let word = match command.strip_prefix('\'') {
        Some(rest) => format!("'{}'", rest.split_once("' ").map_or(rest, |(w, _)| w)),
        None => command.split_whitespace().next()?.to_string(),
    };
    Some(PathBuf::from(unquote(&word)))
}

/// The commands a hook group runs (`command`, and Copilot's `bash`).
fn commands_of(group: &Value) -> Vec<String> {
    let mut commands = Vec::new();
    collect_commands(group, &mut commands);
    let mut out: Vec<String> = commands.into_iter().map(str::to_string).collect();
    if let Some(bash) = group.get("bash").and_then(Value::as_str) {
        out.push(bash.to_string());
    }
    out
}

/// Every `command` string in a hook group.
fn collect_commands<'a>(v: &'a Value, out: &mut Vec<&'a str>) {
    match v {
        Value::Object(o) => {
            if let Some(c) = o.get("command").and_then(Value::as_str) {
                out.push(c);
            }
            o.values().for_each(|x| collect_commands(x, out));
        }
        Value::Array(a) => a.iter().for_each(|x| collect_commands(x, out)),
        _ => {}
    }
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
        root.map(|r| r.join(rel))
            .ok_or_else(|| Error::Usage(Usage::NeedsCheckout { harness: h.name() }))
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
        (Harness::ClaudeCode, scope) => {
            let base = match scope {
                Scope::User => home()?.join(".claude"),
                Scope::Project => project(".claude")?,
            };
            let groups = CLAUDE_EVENTS
                .iter()
                .map(|(key, event, timeout)| {
                    let path: &'static [&'static str] = match *key {
                        "SessionStart" => &["hooks", "SessionStart"],
                        "UserPromptSubmit" => &["hooks", "UserPromptSubmit"],
                        "PreCompact" => &["hooks", "PreCompact"],
                        "PostCompact" => &["hooks", "PostCompact"],
                        _ => &["hooks", "SessionEnd"],
                    };
                    (path, group(event, *timeout))
                })
                .collect();
            return Ok(Plan {
                harness: h,
                scope,
                file: base.join("settings.json"),
                shape: Shape::Json {
                    groups,
                    new_file: "{}\n",
                },
                skill: Some(base.join("skills/handoff/SKILL.md")),
            });
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
            return Err(Error::Usage(Usage::ProjectOnly { harness: h.name() }));
        }
    };
    Ok(Plan {
        harness: h,
        scope,
        file,
        shape,
        skill: None,
    })
}

/// The skill's text as installed: its commands name this binary by its absolute path.
fn skill_text() -> String {
    let me = crate::shell::self_command();
    SKILL
        .lines()
        .map(|l| match l.strip_prefix("handoff-store ") {
            Some(rest) => format!("{me} {rest}\n"),
            None => format!("{l}\n"),
        })
        .collect()
}

/// Whether `text` is our skill as some install wrote it (whichever program it names).
fn is_our_skill(text: &str) -> bool {
    let ours: Vec<&str> = SKILL.lines().collect();
    let theirs: Vec<&str> = text.lines().collect();
    ours.len() == theirs.len()
        && ours
            .iter()
            .zip(&theirs)
            .all(|(o, t)| match o.strip_prefix("handoff-store ") {
                Some(rest) => t.ends_with(&format!(" {rest}")),
                None => o == t,
            })
}

/// Install the plan's skill file (replacing an earlier install's), unless one of the user's is
/// there. Whether it was written.
pub fn install_skill(plan: &Plan) -> Result<bool, Error> {
    let Some(path) = &plan.skill else {
        return Ok(false);
    };
    let text = skill_text();
    match read_text(path)? {
        Some(current) if current == text => Ok(false),
        Some(current) if !is_our_skill(&current) => Err(Error::NotOurs {
            path: path.to_path_buf(),
            beside: None,
            advice: "move it away and install again",
        }),
        _ => write_text(path, &text, false).map(|()| true),
    }
}

/// Remove the plan's skill file when it is ours and unchanged, and the folders we made for it
/// when they are left empty. Whether it was removed.
pub fn uninstall_skill(plan: &Plan) -> Result<bool, Error> {
    let Some(path) = &plan.skill else {
        return Ok(false);
    };
    if crate::fs::symlink_metadata(path).is_err()
        || !read_text(path)?.is_some_and(|t| is_our_skill(&t))
    {
        return Ok(false);
    }
    remove_ours(path)?;
    if let Some(dir) = path.parent() {
        // `skills/handoff/`, then `skills/`: only when empty (remove_dir refuses otherwise).
        let _ = crate::fs::remove_dir(dir);
        if let Some(skills) = dir.parent() {
            let _ = crate::fs::remove_dir(skills);
        }
    }
    Ok(true)
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
    let key = crate::text::hex_md5(file.to_string_lossy().as_bytes());
    store.dir.join(".installs").join(format!("{key}.json"))
}

/// The file to read and write for `file`: itself, or — a symlink (a dotfiles setup) — the file
/// it points to, so the link stays. A dangling link, or anything but a regular file (a link to
/// `/dev/null`, a FIFO, a folder), is refused: nothing is changed.
fn target_of(file: &Path) -> Result<PathBuf, Error> {
    let meta = match crate::fs::symlink_metadata(file) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(file.to_path_buf()),
        Err(e) => return Err(Error::io(file, e)),
    };
    let real = if meta.file_type().is_symlink() {
        crate::fs::canonicalize(file).map_err(|_| {
            let to = crate::fs::read_link(file).unwrap_or_default();
            Error::Input(Input::DanglingLink {
                path: file.to_path_buf(),
                to,
            })
        })?
    } else {
        file.to_path_buf()
    };
    let is_file = crate::fs::metadata(&real).is_ok_and(|m| m.is_file());
    if !is_file {
        return Err(Error::Input(Input::NotAFile {
            path: file.to_path_buf(),
            leads_to: (real != file).then(|| real.clone()),
        }));
    }
    Ok(real)
}

/// A config file `plan` edits could not be parsed or changed at `step`.
fn config_error(plan: &Plan, step: ConfigStep, e: jsonc::JsoncError) -> Error {
    Error::Input(Input::Config {
        path: plan.file.clone(),
        step,
        source: Box::new(e),
    })
}

fn read_text(file: &Path) -> Result<Option<String>, Error> {
    let file = target_of(file)?;
    match crate::fs::read(&file) {
        Ok(b) => String::from_utf8(b)
            .map(Some)
            .map_err(|_| Error::Input(Input::NotUtf8(file.to_path_buf()))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io(&file, e)),
    }
}

/// Write `text` to `file` (through a symlink, to the file it points to), atomically, keeping its
/// mode but never group- or world-writable; a new file is 0644 (0755 `executable`).
fn write_text(file: &Path, text: &str, executable: bool) -> Result<(), Error> {
    let file = target_of(file)?;
    if let Some(dir) = file.parent() {
        crate::fs::make_dirs(dir).map_err(|e| Error::io(dir, e))?;
    }
    let mode = crate::fs::metadata(&file)
        .ok()
        .and_then(|m| slot::mode_of(&m))
        .unwrap_or(if executable { 0o755 } else { 0o644 });
    slot::replace(&file, text.as_bytes(), None, Some(mode & !0o022))
}

/// Remove a file we created, unless it is no longer a regular file of ours (a link the user
/// put there stays).
fn remove_ours(file: &Path) -> Result<(), Error> {
    match crate::fs::symlink_metadata(file) {
        Ok(m) if m.is_file() => crate::fs::remove_file(file).map_err(|e| Error::io(file, e)),
        _ => Ok(()),
    }
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
                let present = jsonc::elements(&text, path);
                let wanted = commands_of(entry);
                if present
                    .iter()
                    .any(|g| commands_of(g).iter().any(|c| wanted.contains(c)))
                {
                    continue;
                }
                if present.iter().any(|g| is_ours(plan.harness, g)) {
                    // Ours, but naming another program (an older install, a moved binary):
                    // replaced by this one's.
                    text = jsonc::remove(&text, path, |g| is_ours(plan.harness, g), |_| true)
                        .map(|(t, _)| t)
                        .map_err(|e| config_error(plan, ConfigStep::Read, e))?;
                }
                text = jsonc::append(&text, path, entry)
                    .map_err(|e| config_error(plan, ConfigStep::Add, e))?;
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
                return Err(Error::NotOurs {
                    path: plan.file.clone(),
                    beside: None,
                    advice: "move it away (Cline runs one script per event) and install again",
                });
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
        let _ = crate::fs::remove_file(&record_file);
        return Ok(removed);
    };
    if let Some(r) = &record
        && r.after == current
    {
        match &r.before {
            Some(before) => write_text(&plan.file, before, false)?,
            None => remove_ours(&plan.file)?,
        }
        removed.removed = true;
        removed.exact = true;
    } else {
        match &plan.shape {
            Shape::Json { groups, .. } => {
                let mut text = current.clone();
                let mut total = 0;
                // A container the file had before our install stays, even when left empty;
                // without a record of that, every container stays.
                let had = |p: &[&str]| {
                    record
                        .as_ref()
                        .is_none_or(|r| r.before.as_deref().is_some_and(|b| jsonc::has(b, p)))
                };
                for (path, _) in groups {
                    let (next, n) = jsonc::remove(&text, path, |g| is_ours(plan.harness, g), had)
                        .map_err(|e| config_error(plan, ConfigStep::ReadToRemove, e))?;
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
                    remove_ours(&plan.file)?;
                    removed.removed = true;
                }
            }
        }
    }
    let _ = crate::fs::remove_file(&record_file);
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
