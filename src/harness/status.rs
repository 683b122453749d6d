//! `status`: per harness and scope, whether our hook is installed and whether it would run, so an
//! install that silently does nothing is never the outcome. Codex is asked itself (its hook
//! trust); the other harnesses run what their file names.

use std::path::Path;

use serde::Serialize;

use super::Harness;
use super::install::{Scope, installed_program, is_installed, plan};

/// One row of `status`.
#[derive(Debug, Serialize)]
pub struct Row {
    pub harness: &'static str,
    pub scope: &'static str,
    pub file: Option<String>,
    pub installed: bool,
    /// `yes`, `no` or `unknown`.
    pub runs: &'static str,
    pub why: String,
}

fn scope_name(s: Scope) -> &'static str {
    match s {
        Scope::User => "user",
        Scope::Project => "project",
    }
}

/// Every harness in both scopes, for the checkout at `root` (project scope) and `cwd`.
pub fn rows(root: Option<&Path>, cwd: &Path) -> Vec<Row> {
    // Codex lists hooks from plugins too: ours from the plugin in contrib/codex get a row.
    let codex: Codex = super::codex::binary().map(|bin| super::codex::list(&bin, cwd));
    let mut out = codex_plugin_rows(&codex);
    let mut plugin = claude_plugin();
    if plugin.runs == "yes"
        && let Some(file) = claude_hooks_disabled(Harness::ClaudeCode, root)
    {
        plugin.runs = "no";
        plugin.why = hooks_disabled(&file);
    }
    out.push(plugin);
    for h in Harness::ALL {
        for scope in [Scope::User, Scope::Project] {
            if let Ok(p) = plan(h, scope, root) {
                out.push(row(h, scope, &p, &codex, root));
            }
        }
    }
    out
}

/// The rows of our hooks that come from the Codex plugin (contrib/codex), as Codex lists them.
fn codex_plugin_rows(codex: &Codex) -> Vec<Row> {
    codex
        .iter()
        .flatten()
        .flat_map(|(hooks, _)| hooks)
        .filter(|hook| hook.ours && hook.plugin.is_some() && hook.key.contains(":session_start:"))
        .map(|hook| {
            let trusted = hook.trust == "trusted";
            let plugin = hook.plugin.as_deref().unwrap_or("?");
            Row {
                harness: Harness::Codex.name(),
                scope: "plugin",
                file: hook.source_path.clone(),
                installed: true,
                runs: if trusted { "yes" } else { "no" },
                why: if trusted {
                    format!("plugin {plugin}, trusted by Codex")
                } else {
                    format!(
                        "plugin {plugin}: Codex reports it {}; run handoff-store trust codex",
                        hook.trust
                    )
                },
            }
        })
        .collect()
}

/// The row of harness `h`'s hook in `scope`: installed, and would it run (and why not).
fn row(
    h: Harness,
    scope: Scope,
    p: &super::install::Plan,
    codex: &Codex,
    root: Option<&Path>,
) -> Row {
    let broken = unusable(p);
    // In a file the client cannot use as it is, a hook of ours anywhere counts.
    let installed = is_installed(p)
        || (broken.is_some()
            && crate::fs::read_to_string(&p.file).is_ok_and(|t| t.contains(" hook session-start")));
    let install = format!(
        "handoff-store install {} --{}",
        h.install_word(),
        scope_name(scope)
    );
    let (runs, why) = if let Some(broken) = broken {
        // Whatever we find in it, the client cannot use it as it is.
        ("no", broken)
    } else if !installed {
        ("no", format!("not installed: {install}"))
    } else {
        match installed_program(p) {
            Some(program) if !crate::env::is_executable(&program) => (
                "no",
                format!(
                    "the program it runs, {}, does not exist (moved or removed): run {install} again",
                    program.display()
                ),
            ),
            _ => would_run(h, scope, &p.file, codex),
        }
    };
    let (runs, why) = match (runs, claude_hooks_disabled(h, root)) {
        ("yes", Some(file)) => ("no", hooks_disabled(&file)),
        other => (other.0, why),
    };
    Row {
        harness: h.name(),
        scope: scope_name(scope),
        file: Some(p.file.to_string_lossy().into_owned()),
        installed,
        runs,
        why,
    }
}

/// Why Claude Code runs none of our hooks.
fn hooks_disabled(file: &Path) -> String {
    format!(
        "\"disableAllHooks\": true in {}: Claude Code runs no hook; remove it",
        file.display()
    )
}

/// Why a hooks file the client reads cannot work as it is: unreadable, not JSON with comments,
/// a key on the way to the hooks twice (the client reads the last one, our edits and our
/// reading find the first), a hook script without its execute bit. `None` when it is fine or
/// absent.
fn unusable(plan: &super::install::Plan) -> Option<String> {
    use super::install::Shape;
    let file = plan.file.display();
    let bytes = match crate::fs::read(&plan.file) {
        Ok(b) => b,
        Err(e) if crate::fs::cause(&e).kind() == std::io::ErrorKind::NotFound => return None,
        Err(e) => return Some(format!("{file} cannot be read: {}", crate::fs::cause(&e))),
    };
    match &plan.shape {
        Shape::Json { groups, .. } => {
            let Ok(text) = String::from_utf8(bytes) else {
                return Some(format!(
                    "{file} is not UTF-8 text: the client cannot read it"
                ));
            };
            if super::jsonc::value(&text).is_none() {
                return Some(format!(
                    "{file} is not valid JSON: the client cannot read its hooks; fix it, then install again"
                ));
            }
            groups.iter().find_map(|(path, _)| {
                super::jsonc::duplicate_key(&text, path)
                    .map(|key| format!("{file} holds the key {key:?} twice in one object: the client reads the last one; remove one of them, then install again"))
            })
        }
        Shape::Script(_) => (!crate::env::is_executable(&plan.file)).then(|| {
            format!("{file} is not executable, so the client never runs it: chmod +x {file}")
        }),
    }
}

/// For Claude Code: the settings file whose `"disableAllHooks": true` turns every hook off
/// here (the project's local settings, then the project's, then the user's: the first that
/// sets it decides).
fn claude_hooks_disabled(h: Harness, root: Option<&Path>) -> Option<std::path::PathBuf> {
    if h != Harness::ClaudeCode {
        return None;
    }
    let mut files = Vec::new();
    if let Some(root) = root {
        files.push(root.join(".claude/settings.local.json"));
        files.push(root.join(".claude/settings.json"));
    }
    files.extend(crate::env::home().map(|h| h.join(".claude/settings.json")));
    for file in files {
        let Some(value) = crate::fs::read_to_string(&file)
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

/// The Claude Code plugin (contrib/claude-code): enabled in the user's settings.json
/// (`enabledPlugins`, `handoff-store@<marketplace>`), and whether the `handoff-store` its hooks
/// run (`HANDOFF_STORE_BIN`, else on PATH) is there.
fn claude_plugin() -> Row {
    let file = crate::env::home().map(|h| h.join(".claude/settings.json"));
    let enabled = file
        .as_ref()
        .and_then(|f| crate::fs::read_to_string(f).ok())
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
        .map(std::path::PathBuf::from)
        .filter(|p| p.components().count() > 1)
        .or_else(|| crate::env::on_path("handoff-store", crate::env::is_executable));
    let (runs, why) = match (enabled, program) {
        (false, _) => ("no", "not enabled: handoff-store install claude (or claude plugin install handoff-store)".to_string()),
        (true, Some(p)) => ("yes", format!("its hooks run {}", p.display())),
        (true, None) => (
            "no",
            "its hooks run handoff-store from PATH, and there is none: put it on PATH, or set HANDOFF_STORE_BIN".into(),
        ),
    };
    Row {
        harness: Harness::ClaudeCode.name(),
        scope: "plugin",
        file: file.map(|f| f.to_string_lossy().into_owned()),
        installed: enabled,
        runs,
        why,
    }
}

/// What to do when Copilot does not trust the repository (also printed by `install copilot`).
pub const COPILOT_TRUST: &str = "Copilot CLI loads a repository's hooks only in a folder you trust: start copilot in the repository once and trust the folder (it is then listed under trustedFolders in ~/.copilot/config.json); for copilot -p alone, GITHUB_COPILOT_PROMPT_MODE_REPO_HOOKS=true also loads them";

/// Whether Copilot CLI trusts `repo`: it is listed under `trustedFolders` in Copilot's
/// `config.json` (`$COPILOT_HOME`, else `~/.copilot`), where its folder-trust prompt records it
/// (1.0.102, measured: repository hooks load in prompt mode once it is listed).
fn copilot_trusts(repo: &Path) -> bool {
    let Some(dir) = crate::env::non_empty("COPILOT_HOME")
        .map(std::path::PathBuf::from)
        .or_else(|| crate::env::home().map(|h| h.join(".copilot")))
    else {
        return false;
    };
    let Ok(text) = crate::fs::read_to_string(dir.join("config.json")) else {
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

/// What Codex said about its hooks here: `None` when there is no codex to ask.
type Codex = Option<Result<(Vec<super::codex::Hook>, Vec<String>), super::codex::CodexError>>;

fn would_run(h: Harness, scope: Scope, file: &Path, codex: &Codex) -> (&'static str, String) {
    match h {
        Harness::Codex => {
            let Some(listing) = codex else {
                return (
                    "unknown",
                    "codex is not on PATH (or HANDOFF_CODEX_BIN) to ask whether it trusts the hook"
                        .into(),
                );
            };
            match listing {
                Ok((hooks, errors)) => match hooks.iter().find(|k| {
                    k.ours && k.source_path.as_deref().map(Path::new) == Some(file)
                }) {
                    Some(k) if k.trust == "trusted" => ("yes", "trusted by Codex".into()),
                    Some(k) => (
                        "no",
                        format!(
                            "Codex reports it {}: run handoff-store install codex again, or trust it under /hooks in codex",
                            k.trust
                        ),
                    ),
                    None if !errors.is_empty() => (
                        "no",
                        format!("Codex cannot read its hook files: {}", errors.join("; ")),
                    ),
                    None if scope == Scope::Project => (
                        "no",
                        "Codex does not load this project's .codex/ (the project is not trusted): run codex in it and trust it, or codex exec --trust".into(),
                    ),
                    None => ("no", "Codex does not list it".into()),
                },
                Err(e) => ("unknown", e.to_string()),
            }
        }
        Harness::Gemini => {
            let trust = "headless runs also need a trusted folder (GEMINI_CLI_TRUST_WORKSPACE=true or --skip-trust)";
            match super::gemini::binary() {
                Some(_) => ("yes", trust.into()),
                None => (
                    "yes",
                    format!(
                        "{trust}; the writer after a compression needs gemini on PATH or HANDOFF_GEMINI_BIN"
                    ),
                ),
            }
        }
        Harness::Copilot if scope == Scope::Project => {
            let repo = file.ancestors().nth(3).unwrap_or(file);
            if copilot_trusts(repo) {
                ("yes", "the folder is trusted by Copilot".into())
            } else {
                ("no", COPILOT_TRUST.into())
            }
        }
        Harness::Copilot => ("yes", String::new()),
        Harness::Cursor => (
            "yes",
            "the Cursor CLI injects its output; the IDE is known to drop it".into(),
        ),
        Harness::Cline | Harness::ClaudeCode => ("yes", String::new()),
    }
}
