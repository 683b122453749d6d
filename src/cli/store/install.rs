//! `install` / `uninstall` / `status`: set up, take down and check the integrations that live
//! outside the store — git's post-checkout hook and each agent harness's SessionStart hook.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::{Ui, print};
use crate::error::{Error, Exit};
use crate::harness::install::{self as harness_install, Scope};
use crate::harness::{Harness, codex};
use crate::hooks::git_hook::{self, Installed};
use crate::shell::self_command;

/// Install an integration (or, for `uninstall`, remove it).
#[derive(Debug, clap::Args)]
pub struct Args {
    #[arg(value_enum)]
    pub what: Integration,
    pub dir: Option<String>,
    #[command(flatten)]
    pub scope: ScopeArgs,
}

pub fn run(args: &Args, ui: &mut Ui) -> Result<Exit, Error> {
    install(args.what, args.dir.as_deref(), args.scope, ui.out)
}

/// Integration to install.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Integration {
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

impl Integration {
    fn harness(self) -> Option<Harness> {
        match self {
            Integration::GitHook => None,
            Integration::Claude => Some(Harness::ClaudeCode),
            Integration::Codex => Some(Harness::Codex),
            Integration::Gemini => Some(Harness::Gemini),
            Integration::Copilot => Some(Harness::Copilot),
            Integration::Cline => Some(Harness::Cline),
            Integration::Cursor => Some(Harness::Cursor),
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

pub(super) fn dir_of(dir: Option<&str>) -> Result<PathBuf, Error> {
    match dir {
        Some(d) => Ok(PathBuf::from(d)),
        None => std::env::current_dir().map_err(|e| Error::io(Path::new("."), e)),
    }
}

/// The top level of the checkout containing `dir`, if any.
pub(super) fn root_of(dir: &Path) -> Option<PathBuf> {
    crate::git::open_work_tree(dir, false).ok().map(|w| w.root)
}

/// Integration an `install`/`uninstall` of a harness acts on: the harness, the store (which keeps the
/// file's bytes before and after), the plan, and the directory it was run for.
pub(super) struct HarnessPlan {
    pub h: Harness,
    pub store: crate::store::Store,
    pub plan: harness_install::Plan,
    pub dir: PathBuf,
}

/// The harness subject of `what`, or `Err(dir)` for the git hook.
pub(super) fn subject(
    what: Integration,
    dir: Option<&str>,
    scope: ScopeArgs,
) -> Result<Result<HarnessPlan, PathBuf>, Error> {
    let dir = dir_of(dir)?;
    let Some(h) = what.harness() else {
        return Ok(Err(dir));
    };
    let store = crate::store::Store::open()?;
    let plan = harness_install::plan(h, scope.scope(h), root_of(&dir).as_deref())?;
    Ok(Ok(HarnessPlan {
        h,
        store,
        plan,
        dir,
    }))
}

fn install(
    what: Integration,
    dir: Option<&str>,
    scope: ScopeArgs,
    out: &mut dyn Write,
) -> Result<Exit, Error> {
    let HarnessPlan {
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
    Ok(Exit::Ok)
}

/// Integration `trust` can ask: only Codex gates hooks behind a trust it records.
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

fn install_git_hook(dir: &Path, out: &mut dyn Write) -> Result<Exit, Error> {
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
    Ok(Exit::Ok)
}
