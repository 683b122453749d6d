//! `install` for people: what went where, and what the user must still do.

use super::super::install::{CodexTrust, Done};
use crate::harness::Harness;
use crate::harness::install::Scope;
use crate::hooks::git_hook::Installed;

pub fn installed(d: &Done) -> String {
    match d {
        Done::GitHook { path, done } => match done {
            Installed::Fresh => format!("installed {}\n", path.display()),
            Installed::Updated => format!("updated   {} (it was already ours)\n", path.display()),
            Installed::Chained(old) => format!(
                "installed {} — the hook that was there now runs first, from {}\n",
                path.display(),
                old.display()
            ),
        },
        Done::Harness {
            harness,
            scope,
            file,
            changed,
            skill,
            codex,
        } => {
            let mut text = if *changed {
                format!("installed {} hook in {file}\n", harness.name())
            } else {
                format!(
                    "installed {} hook in {file} (it was already there)\n",
                    harness.name()
                )
            };
            if let Some(path) = skill {
                text.push_str(&format!("installed /handoff skill in {}\n", path.display()));
            }
            if let Some(trust) = codex {
                text.push_str(&codex_trust(trust, *scope));
            }
            if *harness == Harness::Gemini {
                text.push_str("note      headless runs (gemini -p) also need a trusted folder: GEMINI_CLI_TRUST_WORKSPACE=true or --skip-trust\n");
            }
            if *harness == Harness::Copilot && *scope == Scope::Project {
                text.push_str(&format!(
                    "note      {}; handoff-store status says whether it is\n",
                    crate::harness::status::COPILOT_TRUST
                ));
            }
            text
        }
    }
}

fn codex_trust(trust: &CodexTrust, scope: Scope) -> String {
    let manual = "open codex, type /hooks, choose \"Review hook trust\" and trust handoff-store's SessionStart hook (until then Codex skips it without a word)";
    let mut text = match trust {
        CodexTrust::NoCodex => {
            return format!(
                "trust     codex is not on PATH, so the hook is not trusted yet: {manual}\n"
            );
        }
        CodexTrust::Already => "trust     Codex already trusts it\n".to_string(),
        CodexTrust::NotListed(file) => format!(
            "trust     Codex does not list the hook here, so it will not run (is {} valid JSON, without comments? for --project, is the project trusted?); see handoff-store status\n",
            file.display()
        ),
        CodexTrust::Recorded(keys) => {
            format!("trusted   through codex app-server: {}\n", keys.join(", "))
        }
        CodexTrust::Failed(e) => format!("trust     not recorded ({e}): {manual}\n"),
    };
    if scope == Scope::Project {
        text.push_str("note      Codex reads a project's .codex/ only once the project is trusted: run codex there and trust it, or codex exec --trust\n");
    }
    text
}
