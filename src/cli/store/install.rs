//! `install` / `uninstall` / `status`: set up, take down and check the integrations that live
//! outside the store — git's post-checkout hook and each agent harness's SessionStart hook.

use std::path::{Path, PathBuf};

use super::Reply;
use crate::error::{Error, Exit};
use crate::harness::git_hook::{self, Installed};
use crate::harness::install::{self as harness_install, Scope};
use crate::harness::{Harness, Note};
use crate::shell::self_command;

/// Install an integration (or, for `uninstall`, remove it).
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// An agent, or git-hook.
    #[arg(value_enum)]
    pub(crate) what: Integration,
    /// The repository, for --project and git-hook (default: the working directory).
    #[command(flatten)]
    pub(crate) dir: super::checkout::CheckoutOrDir,
    #[command(flatten)]
    pub(crate) scope: ScopeArgs,
}

pub(crate) fn run(args: &Args) -> Result<Reply, Error> {
    let done = install(args.what, args.dir.dir(), args.scope)?;
    Ok(Reply::new(Exit::Ok).text(installed_text(&done)))
}

/// What `install` put in place.
pub(crate) enum Done {
    /// An agent's hooks.
    Harness {
        harness: Harness,
        file: String,
        /// False when our hook was there already.
        changed: bool,
        /// The `/handoff` skill installed with them.
        skill: Option<PathBuf>,
        /// What else the client's install did, and what the user must still do.
        notes: Vec<Note>,
        /// Into the repository's configuration (a file a team may commit).
        project: bool,
        /// The hooks name `handoff-store` on PATH (`--on-path`).
        on_path: bool,
        /// Whether the repository here uses handoffs (`None`: not inside one): where it does
        /// not, the hooks stay silent until its first handoff.
        in_use: Option<crate::store::usage::Use>,
    },
    /// git's post-checkout hook.
    GitHook { path: PathBuf, done: Installed },
}

/// Integration to install: git's hook, or a client's hooks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Integration {
    GitHook,
    Client(Harness),
}

/// Every integration, git's hook first, then each client.
const INTEGRATIONS: [Integration; Harness::ALL.len() + 1] = {
    let mut all = [Integration::GitHook; Harness::ALL.len() + 1];
    let mut i = 0;
    while i < Harness::ALL.len() {
        all[i + 1] = Integration::Client(Harness::ALL[i]);
        i += 1;
    }
    all
};

impl clap::ValueEnum for Integration {
    fn value_variants<'a>() -> &'a [Self] {
        &INTEGRATIONS
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        use clap::builder::PossibleValue;
        Some(match self {
            Integration::GitHook => PossibleValue::new("git-hook")
                .help("git's post-checkout hook: names the handoff of the branch just checked out"),
            Integration::Client(h) => {
                PossibleValue::new(h.install_word()).help(h.client().install_help())
            }
        })
    }
}

impl Integration {
    fn harness(self) -> Option<Harness> {
        match self {
            Integration::GitHook => None,
            Integration::Client(h) => Some(h),
        }
    }
}

/// `--project` / `--user` (the default is each client's usual place).
#[derive(Debug, Clone, Copy, Default, clap::Args)]
pub(crate) struct ScopeArgs {
    /// Into this repository's configuration.
    #[arg(long, conflicts_with = "user")]
    pub(crate) project: bool,
    /// Into the user's configuration.
    #[arg(long)]
    pub(crate) user: bool,
    /// Name the command `handoff-store` as PATH finds it, not this binary's absolute path: for
    /// a --project file the team commits (every clone then needs handoff-store on its PATH).
    #[arg(long)]
    pub(crate) on_path: bool,
}

impl ScopeArgs {
    fn scope(self, h: Harness) -> Scope {
        if self.project {
            Scope::Project
        } else if self.user {
            Scope::User
        } else {
            h.client().default_scope()
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
    pub(crate) h: Harness,
    pub(crate) store: crate::store::Store,
    pub(crate) plan: harness_install::Plan,
    pub(crate) dir: PathBuf,
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
    if scope.on_path {
        crate::shell::name_on_path();
    }
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
    let mut notes: Vec<_> = harness_install::install_scripts(&plan)?
        .into_iter()
        .map(|path| Note {
            tag: "note",
            text: format!(
                "{} is someone else's, so it was left alone: the hook of ours of that name (the tripwires) is not installed",
                path.display()
            ),
        })
        .collect();
    notes.extend(h.client().after_install(&store, &plan, &dir));
    Ok(Done::Harness {
        harness: h,
        file: done.file,
        changed: done.changed,
        skill: plan.skill.clone().filter(|_| skill),
        notes,
        project: plan.scope == Scope::Project,
        on_path: scope.on_path,
        in_use: crate::store::Target::at(&dir)
            .map(|t| crate::store::usage::Use::of(Some(&store), &t)),
    })
}

fn installed_text(d: &Done) -> String {
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
            file,
            changed,
            skill,
            notes,
            project,
            on_path,
            in_use,
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
            for note in notes {
                text.push_str(&format!("{:<10}{}\n", note.tag, note.text));
            }
            if *on_path {
                text.push_str(&format!(
                    "note      {file} runs handoff-store as PATH finds it: whoever uses it needs handoff-store on their PATH (`handoff-store status` checks)\n"
                ));
            } else if *project {
                text.push_str(&format!(
                    "note      {file} names this machine's handoff-store by its absolute path ({}): if the file is committed, use `handoff-store install {} --project --on-path`, which names the command on PATH\n",
                    crate::shell::self_command(),
                    harness.install_word()
                ));
            }
            let until = match in_use {
                Some(crate::store::usage::Use::Unused) => {
                    " (this repository has none yet: nothing happens here until its first `handoff-store write`)"
                }
                Some(crate::store::usage::Use::Disabled) => {
                    " (not here: handoff.enabled is false in this repository)"
                }
                _ => "",
            };
            text.push_str(&format!(
                "next      start a new {} session: after /clear or a compaction it is given this branch's handoff{until}; `handoff-store status` checks the hook\n",
                harness.name()
            ));
            text
        }
    }
}
