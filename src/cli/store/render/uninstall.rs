//! `uninstall` and `trust` for people.

use super::super::uninstall::Uninstalled;
use crate::harness::Trusted;
use crate::hooks::git_hook::Removed;

pub(crate) fn uninstalled(u: &Uninstalled) -> String {
    match u {
        Uninstalled::Harness {
            name,
            file,
            removed,
            exact,
            skill,
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

pub(crate) fn trusted(t: &Trusted) -> String {
    match t {
        Trusted::Recorded(keys) => format!("trusted   {}\n", keys.join(", ")),
        Trusted::Already(client) => {
            format!("trusted   (already) every handoff-store hook {client} lists here\n")
        }
    }
}
