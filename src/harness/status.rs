//! `status`: per harness and scope, whether our hook is installed and whether it would run, so an
//! install that silently does nothing is never the outcome. Codex is asked itself (its hook
//! trust); the other harnesses run what their file names.

use std::path::Path;

use serde::Serialize;

use super::Harness;
use super::install::{Scope, is_installed, plan};

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
    let mut out = Vec::new();
    for h in Harness::ALL {
        if h == Harness::ClaudeCode {
            continue;
        }
        for scope in [Scope::User, Scope::Project] {
            let Ok(p) = plan(h, scope, root) else {
                continue;
            };
            let installed = is_installed(&p);
            let (runs, why) = if !installed {
                (
                    "no",
                    format!(
                        "not installed: handoff-store install {} --{}",
                        h.name(),
                        scope_name(scope)
                    ),
                )
            } else {
                would_run(h, scope, cwd)
            };
            out.push(Row {
                harness: h.name(),
                scope: scope_name(scope),
                file: Some(p.file.to_string_lossy().into_owned()),
                installed,
                runs,
                why,
            });
        }
    }
    out
}

fn would_run(h: Harness, scope: Scope, cwd: &Path) -> (&'static str, String) {
    match h {
        Harness::Codex => {
            let Some(codex) = super::codex::binary() else {
                return (
                    "unknown",
                    "codex is not on PATH (or HANDOFF_CODEX_BIN) to ask whether it trusts the hook".into(),
                );
            };
            match super::codex::list(&codex, cwd) {
                Ok((hooks, errors)) => match hooks.iter().find(|k| k.ours) {
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
                Err(e) => ("unknown", e),
            }
        }
        Harness::Gemini => (
            "yes",
            "headless runs also need a trusted folder (GEMINI_CLI_TRUST_WORKSPACE=true or --skip-trust)".into(),
        ),
        Harness::Copilot => (
            "yes",
            "Copilot CLI runs it; whether it adds its output to the context is not documented".into(),
        ),
        Harness::Cursor => (
            "yes",
            "the Cursor CLI injects its output; the IDE is known to drop it".into(),
        ),
        Harness::Cline | Harness::ClaudeCode => ("yes", String::new()),
    }
}
