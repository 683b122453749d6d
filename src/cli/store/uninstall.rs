//! `uninstall`: remove what `install` put in place, restoring a chained hook or the file as it
//! was.

use std::io::Write;
use std::path::Path;

use super::install::{Args, HarnessPlan, Integration, ScopeArgs, subject};
use super::{Ui, print};
use crate::error::{Error, Exit};
use crate::harness::codex;
use crate::harness::install as harness_install;
use crate::hooks::git_hook::{self, Removed};

pub fn run(args: &Args, ui: &mut Ui) -> Result<Exit, Error> {
    uninstall(args.what, args.dir.as_deref(), args.scope, ui.out)
}

fn uninstall(
    what: Integration,
    dir: Option<&str>,
    scope: ScopeArgs,
    out: &mut dyn Write,
) -> Result<Exit, Error> {
    let HarnessPlan { h, store, plan, .. } = match subject(what, dir, scope)? {
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
    Ok(Exit::Ok)
}

fn uninstall_git_hook(dir: &Path, out: &mut dyn Write) -> Result<Exit, Error> {
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
    Ok(Exit::Ok)
}
