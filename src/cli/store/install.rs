//! `install` / `uninstall`: set up (and take down) the integrations that live outside the
//! store. Today the git post-checkout hook; the agent harnesses join here.

use std::io::Write;
use std::path::PathBuf;

use super::print;
use crate::error::Error;
use crate::hooks::git_hook::{self, Installed, Removed};
use crate::hooks::self_command;

/// What to install.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum What {
    /// git's post-checkout hook: names the handoff of the branch just checked out.
    GitHook,
}

fn dir_of(dir: Option<&str>) -> Result<PathBuf, Error> {
    match dir {
        Some(d) => Ok(PathBuf::from(d)),
        None => std::env::current_dir().map_err(|e| Error::io(std::path::Path::new("."), e)),
    }
}

pub fn install(what: What, dir: Option<&str>, out: &mut dyn Write) -> Result<i32, Error> {
    let What::GitHook = what;
    let (path, done) = git_hook::install(&dir_of(dir)?, &self_command())?;
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

pub fn uninstall(what: What, dir: Option<&str>, out: &mut dyn Write) -> Result<i32, Error> {
    let What::GitHook = what;
    let (path, done) = git_hook::uninstall(&dir_of(dir)?)?;
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
