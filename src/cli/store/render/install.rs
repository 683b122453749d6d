//! `install` for people: what went where, and what the user must still do.

use super::super::install::Done;
use crate::hooks::git_hook::Installed;

pub(crate) fn installed(d: &Done) -> String {
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
            text.push_str(&format!(
                "next      start a new {} session: after /clear or a compaction it is given this branch's handoff; `handoff-store status` checks the hook\n",
                harness.name()
            ));
            text
        }
    }
}
