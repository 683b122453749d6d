//! `handoff-store install git-hook` / `uninstall git-hook`: put our post-checkout hook where git
//! runs a repository's hooks (`core.hooksPath` respected), chaining — never clobbering — a hook
//! that is already there, and take ours out again leaving the original exactly as it was.

use std::path::{Path, PathBuf};

use crate::error::Error;
use crate::git;
use crate::store::slot;

/// The line that marks a hook as ours.
const MARK: &str = "# installed by handoff-store";
/// Where an existing hook moves to; ours runs it first.
pub(crate) const CHAINED: &str = "post-checkout.before-handoff-store";

/// What `install` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Installed {
    Fresh,
    /// An existing hook was moved aside and runs first.
    Chained(PathBuf),
    /// Ours was already there; it was rewritten (the binary path may have moved).
    Updated,
}

/// What `uninstall` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Removed {
    /// Ours was removed; there was nothing to put back.
    Gone,
    /// Ours was removed and the chained hook put back.
    Restored,
    /// The hook there is not ours (or there is none): left alone.
    NotOurs,
}

fn hook_script(program: &str) -> String {
    format!(
        r#"#!/bin/sh
{MARK}: say whether the branch just checked out has a handoff.
# Remove with: handoff-store uninstall git-hook. A hook that was here before runs first, from
# {CHAINED}, and its exit status is kept.
rc=0
chained="$(dirname "$0")/{CHAINED}"
if [ -x "$chained" ]; then "$chained" "$@" || rc=$?; fi
b={program}
[ -x "$b" ] || b="${{HANDOFF_STORE_BIN:-handoff-store}}"
if command -v "$b" >/dev/null 2>&1; then "$b" hook post-checkout "$1" "$2" "$3"; fi
exit $rc
"#
    )
}

fn is_ours(path: &Path) -> bool {
    slot::read_head(path).is_ok_and(|b| String::from_utf8_lossy(&b).contains(MARK))
}

fn hook_path(dir: &Path) -> Result<PathBuf, Error> {
    let hooks = git::hooks_dir(dir)
        .ok_or_else(|| Error::Target(crate::error::NoTarget::NoRepository(dir.to_path_buf())))?;
    Ok(hooks.join("post-checkout"))
}

/// Where the post-checkout hook of the repository containing `dir` is, and whether it is ours.
pub(crate) fn state(dir: &Path) -> Option<(PathBuf, bool)> {
    let path = hook_path(dir).ok()?;
    let ours = is_ours(&path);
    Some((path, ours))
}

/// Install the post-checkout hook for the repository containing `dir`; `program` is the shell
/// word that runs this binary.
pub(crate) fn install(dir: &Path, program: &str) -> Result<(PathBuf, Installed), Error> {
    let path = hook_path(dir)?;
    let hooks = path.parent().unwrap_or(Path::new("."));
    crate::fs::make_dirs(hooks).map_err(|e| Error::io(hooks, e))?;
    let chained = hooks.join(CHAINED);
    let existing = crate::fs::symlink_metadata(&path).is_ok();
    let what = if !existing {
        Installed::Fresh
    } else if is_ours(&path) {
        Installed::Updated
    } else if crate::fs::symlink_metadata(&chained).is_ok() {
        return Err(Error::NotOurs {
            path: path.to_path_buf(),
            beside: Some(chained.to_path_buf()),
            advice: "nothing was changed — move one of them away first",
        });
    } else {
        crate::fs::rename(&path, &chained).map_err(|e| Error::io(&path, e))?;
        Installed::Chained(chained)
    };
    crate::durable::write(&path, hook_script(program).as_bytes(), Some(0o755))?;
    Ok((path, what))
}

/// Remove our hook from the repository containing `dir`, putting a chained hook back.
pub(crate) fn uninstall(dir: &Path) -> Result<(PathBuf, Removed), Error> {
    let path = hook_path(dir)?;
    if !is_ours(&path) {
        return Ok((path, Removed::NotOurs));
    }
    let chained = path.with_file_name(CHAINED);
    if crate::fs::symlink_metadata(&chained).is_ok() {
        crate::fs::rename(&chained, &path).map_err(|e| Error::io(&chained, e))?;
        return Ok((path, Removed::Restored));
    }
    slot::remove(&path).map_err(|e| Error::io(&path, e))?;
    Ok((path, Removed::Gone))
}
