//! `uninstall`: remove what `install` put in place, restoring a chained hook or the file as it
//! was.

use std::path::PathBuf;

use super::Reply;
use super::install::{Args, HarnessPlan, Integration, ScopeArgs, subject};
use crate::error::{Error, Exit};
use crate::harness::git_hook::{self, Removed};
use crate::harness::install as harness_install;

pub(crate) fn run(args: &Args) -> Result<Reply, Error> {
    let done = uninstall(args.what, args.dir.dir(), args.scope)?;
    Ok(Reply::new(Exit::Ok).text(uninstalled_text(&done)))
}

/// What `uninstall` took out.
#[derive(Debug)]
pub(crate) enum Uninstalled {
    /// An agent's hooks: from which file, whether any was ours, whether the file came back
    /// byte for byte, and the skill removed with them.
    Harness {
        name: &'static str,
        file: String,
        removed: bool,
        exact: bool,
        skill: Option<PathBuf>,
        /// What else of ours went with the hooks (a client's setting), a line each.
        notes: Vec<(&'static str, String)>,
    },
    /// git's post-checkout hook.
    GitHook { path: PathBuf, done: Removed },
}

fn uninstall(what: Integration, dir: Option<&str>, scope: ScopeArgs) -> Result<Uninstalled, Error> {
    let HarnessPlan { h, store, plan, .. } = match subject(what, dir, scope)? {
        Ok(s) => s,
        Err(dir) => {
            let (path, done) = git_hook::uninstall(&dir)?;
            return Ok(Uninstalled::GitHook { path, done });
        }
    };
    // The skill first: its folders sit in the one the hooks' install may have created, which
    // goes only when empty.
    let skill = harness_install::uninstall_skill(&plan)?;
    let done = harness_install::uninstall(&store, &plan)?;
    for key in &done.trust_keys {
        h.client().forget(key);
    }
    let notes = h
        .client()
        .after_uninstall(&store, &plan)
        .into_iter()
        .map(|n| (n.tag, n.text))
        .collect();
    // A folder the install created may hold the client's setting too (a `config.toml` beside
    // the hooks): it goes once that is gone, and only when empty.
    harness_install::remove_created_if_empty(&done.created);
    Ok(Uninstalled::Harness {
        name: h.name(),
        file: done.file,
        removed: done.removed,
        exact: done.exact,
        skill: plan.skill.filter(|_| skill),
        notes,
    })
}

fn uninstalled_text(u: &Uninstalled) -> String {
    match u {
        Uninstalled::Harness {
            name,
            file,
            removed,
            exact,
            skill,
            notes,
        } => {
            let mut text = match (removed, exact) {
                (false, _) => format!("nothing to remove: no {name} hook of ours in {file}\n"),
                (true, true) => format!("removed   {name} hook from {file} (restored as it was)\n"),
                (true, false) => format!(
                    "removed   {name} hook from {file} (the file changed since install; only our hook was taken out)\n"
                ),
            };
            if let Some(path) = skill {
                text.push_str(&format!("removed   /handoff skill {}\n", path.display()));
            }
            for (tag, line) in notes {
                text.push_str(&format!("{tag:<10}{line}\n"));
            }
            text
        }
        Uninstalled::GitHook { path, done } => match done {
            Removed::Gone => format!("removed   {}\n", path.display()),
            Removed::Restored => format!(
                "removed   {} — the hook that was there before is back in its place\n",
                path.display()
            ),
            Removed::NotOurs => format!(
                "nothing to remove: {} is not a handoff-store hook (left alone)\n",
                path.display()
            ),
        },
    }
}
