//! `install` / `uninstall` / `status`: set up, take down and check the integrations that live
//! outside the store — git's post-checkout hook and each agent harness's SessionStart hook.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::{Format, print, print_json};
use crate::error::Error;
use crate::harness::install::{self as harness_install, Scope};
use crate::harness::{Harness, codex, status};
use crate::hooks::git_hook::{self, Installed, Removed};
use crate::shell::self_command;

/// What to install.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum What {
    /// git's post-checkout hook: names the handoff of the branch just checked out.
    GitHook,
    /// Claude Code's five hooks (settings.json) and the /handoff skill.
    Claude,
    /// Codex CLI's hooks (hooks.json), trusted through Codex itself.
    Codex,
    /// Gemini CLI's hooks (settings.json).
    Gemini,
    /// GitHub Copilot CLI's hooks (.github/hooks/handoff-store.json).
    Copilot,
    /// Cline's TaskStart hook (.clinerules/hooks/TaskStart).
    Cline,
    /// Cursor's sessionStart hook (hooks.json).
    Cursor,
}

impl What {
    fn harness(self) -> Option<Harness> {
        match self {
            What::GitHook => None,
            What::Claude => Some(Harness::ClaudeCode),
            What::Codex => Some(Harness::Codex),
            What::Gemini => Some(Harness::Gemini),
            What::Copilot => Some(Harness::Copilot),
            What::Cline => Some(Harness::Cline),
            What::Cursor => Some(Harness::Cursor),
        }
    }
}

/// `--project` / `--user` (the default is each harness's usual place: user for Codex, Gemini
/// and Cursor, the repository for Copilot and Cline).
#[derive(Debug, Clone, Copy, Default, clap::Args)]
pub struct ScopeArgs {
    /// Into this repository's configuration.
    #[arg(long, conflicts_with = "user")]
    pub project: bool,
    /// Into the user's configuration.
    #[arg(long)]
    pub user: bool,
}

impl ScopeArgs {
    fn scope(self, h: Harness) -> Scope {
        if self.project {
            Scope::Project
        } else if self.user
            || matches!(
                h,
                Harness::ClaudeCode | Harness::Codex | Harness::Gemini | Harness::Cursor
            )
        {
            Scope::User
        } else {
            Scope::Project
        }
    }
}

fn dir_of(dir: Option<&str>) -> Result<PathBuf, Error> {
    match dir {
        Some(d) => Ok(PathBuf::from(d)),
        None => std::env::current_dir().map_err(|e| Error::io(Path::new("."), e)),
    }
}

/// The top level of the checkout containing `dir`, if any.
fn root_of(dir: &Path) -> Option<PathBuf> {
    crate::git::open_work_tree(dir, false).ok().map(|w| w.root)
}

/// What an `install`/`uninstall` of a harness acts on: the harness, the store (which keeps the
/// file's bytes before and after), the plan, and the directory it was run for.
struct Subject {
    h: Harness,
    store: crate::store::Store,
    plan: harness_install::Plan,
    dir: PathBuf,
}

/// The harness subject of `what`, or `Err(dir)` for the git hook.
fn subject(
    what: What,
    dir: Option<&str>,
    scope: ScopeArgs,
) -> Result<Result<Subject, PathBuf>, Error> {
    let dir = dir_of(dir)?;
    let Some(h) = what.harness() else {
        return Ok(Err(dir));
    };
    let store = crate::store::Store::open()?;
    let plan = harness_install::plan(h, scope.scope(h), root_of(&dir).as_deref())?;
    Ok(Ok(Subject {
        h,
        store,
        plan,
        dir,
    }))
}

pub fn install(
    what: What,
    dir: Option<&str>,
    scope: ScopeArgs,
    out: &mut dyn Write,
) -> Result<i32, Error> {
    let Subject {
        h,
        store,
        plan,
        dir,
    } = match subject(what, dir, scope)? {
        Ok(s) => s,
        Err(dir) => return install_git_hook(&dir, out),
    };
    let done = harness_install::install(&store, &plan)?;
    let skill = harness_install::install_skill(&plan)?;
    let mut text = if done.changed {
        format!("installed {} hook in {}\n", h.name(), done.file)
    } else {
        format!(
            "installed {} hook in {} (it was already there)\n",
            h.name(),
            done.file
        )
    };
    if let (true, Some(path)) = (skill, &plan.skill) {
        text.push_str(&format!("installed /handoff skill in {}\n", path.display()));
    }
    if h == Harness::Codex {
        text.push_str(&trust_codex(&store, &plan, &dir));
    }
    if h == Harness::Gemini {
        text.push_str("note      headless runs (gemini -p) also need a trusted folder: GEMINI_CLI_TRUST_WORKSPACE=true or --skip-trust\n");
    }
    if h == Harness::Copilot && plan.scope == Scope::Project {
        text.push_str(&format!(
            "note      {}; handoff-store status says whether it is\n",
            crate::harness::status::COPILOT_TRUST
        ));
    }
    print(out, &text)?;
    Ok(0)
}

/// What `trust` can ask: only Codex gates hooks behind a trust it records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum TrustWhat {
    /// Codex CLI.
    Codex,
}

/// `trust codex`: trust the handoff-store hooks Codex lists for DIR (exit 3 when Codex cannot
/// be asked, 4 when it lists none of ours).
pub fn trust(what: TrustWhat, dir: Option<&str>, out: &mut dyn Write) -> Result<i32, Error> {
    let TrustWhat::Codex = what;
    let dir = dir_of(dir)?;
    let bin = codex::binary().ok_or_else(|| {
        Error::External("codex is not on PATH (or HANDOFF_CODEX_BIN) to record the trust".into())
    })?;
    let text = match codex::trust_ours(&bin, &dir).map_err(|e| Error::External(e.to_string()))? {
        codex::Trust::Recorded(keys) => format!("trusted   {}\n", keys.join(", ")),
        codex::Trust::Already => {
            "trusted   (already) every handoff-store hook Codex lists here\n".into()
        }
        codex::Trust::NotListed => {
            return Err(Error::NothingToDo(
                "Codex lists no handoff-store hook here: install codex, or add the plugin (contrib/codex)".into(),
            ));
        }
    };
    print(out, &text)?;
    Ok(0)
}

/// Trust our Codex hook through Codex, or say exactly what the user must do.
fn trust_codex(store: &crate::store::Store, plan: &harness_install::Plan, dir: &Path) -> String {
    let manual = "open codex, type /hooks, choose \"Review hook trust\" and trust handoff-store's SessionStart hook (until then Codex skips it without a word)";
    let Some(bin) = codex::binary() else {
        return format!(
            "trust     codex is not on PATH, so the hook is not trusted yet: {manual}\n"
        );
    };
    let mut text = match codex::trust_ours(&bin, dir) {
        Ok(codex::Trust::Already) => "trust     Codex already trusts it\n".to_string(),
        Ok(codex::Trust::NotListed) => format!(
            "trust     Codex does not list the hook here, so it will not run (is {} valid JSON, without comments? for --project, is the project trusted?); see handoff-store status\n",
            plan.file.display()
        ),
        Ok(codex::Trust::Recorded(keys)) => {
            let _ = harness_install::remember_trust_keys(store, &plan.file, &keys);
            format!("trusted   through codex app-server: {}\n", keys.join(", "))
        }
        Err(e) => format!("trust     not recorded ({e}): {manual}\n"),
    };
    if plan.scope == Scope::Project {
        text.push_str("note      Codex reads a project's .codex/ only once the project is trusted: run codex there and trust it, or codex exec --trust\n");
    }
    text
}

pub fn uninstall(
    what: What,
    dir: Option<&str>,
    scope: ScopeArgs,
    out: &mut dyn Write,
) -> Result<i32, Error> {
    let Subject { h, store, plan, .. } = match subject(what, dir, scope)? {
        Ok(s) => s,
        Err(dir) => return uninstall_git_hook(&dir, out),
    };
    let done = harness_install::uninstall(&store, &plan)?;
    let skill = harness_install::uninstall_skill(&plan)?;
    for key in &done.trust_keys {
        let _ = codex::forget(key);
    }
    let text = match (done.removed, done.exact) {
        (false, _) => format!(
            "nothing to remove: no {} hook of ours in {}\n",
            h.name(),
            done.file
        ),
        (true, true) => format!(
            "removed   {} hook from {} (restored as it was)\n",
            h.name(),
            done.file
        ),
        (true, false) => format!(
            "removed   {} hook from {} (the file changed since install; only our hook was taken out)\n",
            h.name(),
            done.file
        ),
    };
    let mut text = text;
    if let (true, Some(path)) = (skill, &plan.skill) {
        text.push_str(&format!("removed   /handoff skill {}\n", path.display()));
    }
    print(out, &text)?;
    Ok(0)
}

pub fn status(
    dir: Option<&str>,
    format: Format,
    check: bool,
    out: &mut dyn Write,
) -> Result<i32, Error> {
    let dir = dir_of(dir)?;
    let rows = status::rows(root_of(&dir).as_deref(), &dir);
    // Installed but it would not run: each is a problem `--check` fails on.
    let problems: Vec<String> = rows
        .iter()
        .filter(|r| r.installed && r.runs == "no")
        .map(|r| format!("{} ({}): {}", r.harness, r.scope, r.why))
        .collect();
    // A failed autoPush happened in a detached process: this is where the user hears of it.
    let store = crate::store::Store::locate().ok();
    let pushed = store.as_ref().and_then(crate::sync::outcome::last);
    let in_flight = store
        .as_ref()
        .is_some_and(|s| s.dir.is_dir() && crate::sync::outcome::in_flight(s));
    let unrecorded = store.as_ref().and_then(crate::store::chain::record_failure);
    // Did the handoff reach the last session, per harness; and how the last writer ended.
    let deliveries: Vec<crate::hooks::delivered::Delivered> = Harness::ALL
        .iter()
        .filter_map(|h| crate::hooks::delivered::last(h.name()))
        .collect();
    let git_hook = crate::hooks::git_hook::state(&dir);
    let sync = crate::sync::setup_state(&dir);
    let now = crate::store::now();
    let writer = store
        .as_ref()
        .and_then(|s| crate::store::runs::all(s).into_iter().next())
        .map(|r| (crate::store::iso(r.job.started), r.state(now)));
    match format {
        Format::Json => print_json(
            out,
            &serde_json::json!({ "harnesses": rows, "problems": problems,
                "deliveries": deliveries,
                "git_hook": git_hook.as_ref().map(|(path, ours)|
                    serde_json::json!({"path": path, "installed": ours})),
                "sync": sync.as_ref().map(|(remotes, auto)| serde_json::json!({
                    "remotes": remotes.iter().map(|(r, set)|
                        serde_json::json!({"remote": r, "fetch_refspec": set})).collect::<Vec<_>>(),
                    "auto_push": auto})),
                "last_background_write": writer.as_ref().map(|(started, state)|
                    serde_json::json!({"started": started, "state": state})),
                "background_push": pushed,
                "background_push_in_flight": in_flight,
                "chain_record_failed": unrecorded.as_ref().map(|(at, checkout, message)|
                    serde_json::json!({"at": at, "checkout": checkout, "message": message})) }),
        )?,
        Format::Text => {
            let mut text = String::new();
            for r in &rows {
                text.push_str(&format!(
                    "{:<8} {:<8} installed={:<5} runs={:<7} {}{}\n",
                    r.harness,
                    r.scope,
                    if r.installed { "yes" } else { "no" },
                    r.runs,
                    r.file.as_deref().unwrap_or("-"),
                    if r.why.is_empty() {
                        String::new()
                    } else {
                        format!(" — {}", r.why)
                    }
                ));
            }
            if let Some((path, ours)) = &git_hook {
                text.push_str(&format!(
                    "git-hook {} installed={}{}\n",
                    path.display(),
                    if *ours { "yes" } else { "no" },
                    if *ours {
                        ""
                    } else {
                        " — handoff-store install git-hook names a checked-out branch's handoff"
                    }
                ));
            }
            if let Some((remotes, auto)) = &sync {
                for (remote, set) in remotes {
                    text.push_str(&format!(
                        "sync     {remote}: {}\n",
                        if *set {
                            "git fetch brings handoffs (sync --setup done)".to_string()
                        } else {
                            format!("git fetch does not bring handoffs: handoff-store sync --setup {remote}")
                        }
                    ));
                }
                text.push_str(&format!(
                    "autoPush {}\n",
                    if *auto {
                        "on (handoff.autoPush): every stored handoff is pushed in the background"
                    } else {
                        "off: git config handoff.autoPush true to push every stored handoff"
                    }
                ));
            }
            for d in &deliveries {
                text.push_str(&format!(
                    "delivery {} {} session {} ({}, {}): {} characters{}{}\n",
                    d.harness,
                    d.at,
                    d.session.as_deref().unwrap_or("-"),
                    d.source,
                    d.event,
                    d.chars,
                    if d.cut { ", cut to fit" } else { "" },
                    match (&d.handoff, d.consumed) {
                        (Some(h), true) => format!(", {h} marked consumed"),
                        (Some(h), false) => format!(", {h} left unread"),
                        (None, _) => ", no handoff shown".to_string(),
                    }
                ));
            }
            if let Some((started, state)) = &writer {
                text.push_str(&format!(
                    "writer   last background write started {started}: {}\n",
                    serde_json::to_value(state)
                        .ok()
                        .and_then(|v| v["state"].as_str().map(str::to_string))
                        .unwrap_or_default()
                ));
            }
            if in_flight {
                text.push_str("autoPush a background push is in flight\n");
            }
            if let Some((at, checkout, message)) = &unrecorded {
                text.push_str(&format!(
                    "chain    a handoff stored at {at} for {checkout} is not yet in git ({message}); the next write records it\n"
                ));
            }
            if check {
                for p in &problems {
                    text.push_str(&format!("problem  {p}\n"));
                }
            }
            if let Some(p) = &pushed {
                text.push_str(&format!(
                    "autoPush last background push {} for {}: {}\n",
                    p.at,
                    p.checkout,
                    if p.exit == 0 {
                        "ok".to_string()
                    } else {
                        format!("FAILED (exit {}) — {}", p.exit, p.message)
                    }
                ));
            }
            print(out, &text)?;
        }
    }
    Ok(if check && !problems.is_empty() { 1 } else { 0 })
}

fn install_git_hook(dir: &Path, out: &mut dyn Write) -> Result<i32, Error> {
    let (path, done) = git_hook::install(dir, &self_command())?;
    let line = match done {
        Installed::Fresh => format!("installed {}\n", path.display()),
        Installed::Updated => format!("updated   {} (it was already ours)\n", path.display()),
        Installed::Chained(old) => format!(
            "installed {} — the hook that was there now runs first, from {}\n",
            path.display(),
            old.display()
        ),
    };
    print(out, &line)?;
    Ok(0)
}

fn uninstall_git_hook(dir: &Path, out: &mut dyn Write) -> Result<i32, Error> {
    let (path, done) = git_hook::uninstall(dir)?;
    let line = match done {
        Removed::Removed => format!("removed   {}\n", path.display()),
        Removed::Restored => format!(
            "removed   {} — the hook that was there before is back in its place\n",
            path.display()
        ),
        Removed::NotOurs => format!(
            "nothing to remove: {} is not a handoff-store hook (left alone)\n",
            path.display()
        ),
    };
    print(out, &line)?;
    Ok(0)
}
