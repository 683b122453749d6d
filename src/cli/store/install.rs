//! `install` / `uninstall` / `status`: set up, take down and check the integrations that live
//! outside the store — git's post-checkout hook and each agent harness's SessionStart hook.

use std::path::{Path, PathBuf};

use super::{Reply, render};
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

pub fn run(args: &Args) -> Result<Reply, Error> {
    let done = install(args.what, args.dir.as_deref(), args.scope)?;
    Ok(Reply::new(Exit::Ok).text(render::installed(&done)))
}

/// What `install` put in place.
#[derive(Debug)]
pub enum Done {
    /// An agent's hooks.
    Harness {
        harness: Harness,
        scope: Scope,
        file: String,
        /// False when our hook was there already.
        changed: bool,
        /// The `/handoff` skill installed with them.
        skill: Option<PathBuf>,
        /// Codex: how its hook trust went.
        codex: Option<CodexTrust>,
    },
    /// git's post-checkout hook.
    GitHook { path: PathBuf, done: Installed },
}

/// How recording Codex's trust of our hook went.
#[derive(Debug)]
pub enum CodexTrust {
    NoCodex,
    Already,
    /// Codex does not list the hook in this file.
    NotListed(PathBuf),
    Recorded(Vec<String>),
    Failed(String),
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

fn install(what: Integration, dir: Option<&str>, scope: ScopeArgs) -> Result<Done, Error> {
    let HarnessPlan {
        h,
        store,
        plan,
        dir,
    } = match subject(what, dir, scope)? {
        Ok(s) => s,
        Err(dir) => {
            let (path, done) = git_hook::install(&dir, &self_command())?;
            return Ok(Done::GitHook { path, done });
        }
    };
    let done = harness_install::install(&store, &plan)?;
    let skill = harness_install::install_skill(&plan)?;
    Ok(Done::Harness {
        harness: h,
        scope: plan.scope,
        file: done.file,
        changed: done.changed,
        skill: plan.skill.clone().filter(|_| skill),
        codex: (h == Harness::Codex).then(|| trust_codex(&store, &plan, &dir)),
    })
}

/// Trust our Codex hook through Codex (the renderer says what the user must do when it could
/// not be recorded).
fn trust_codex(
    store: &crate::store::Store,
    plan: &harness_install::Plan,
    dir: &Path,
) -> CodexTrust {
    let Some(bin) = codex::binary() else {
        return CodexTrust::NoCodex;
    };
    match codex::trust_ours(&bin, dir) {
        Ok(codex::Trust::Already) => CodexTrust::Already,
        Ok(codex::Trust::NotListed) => CodexTrust::NotListed(plan.file.clone()),
        Ok(codex::Trust::Recorded(keys)) => {
            let _ = harness_install::remember_trust_keys(store, &plan.file, &keys);
            CodexTrust::Recorded(keys)
        }
        Err(e) => CodexTrust::Failed(e.to_string()),
    }
}
