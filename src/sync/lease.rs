//! The lease of a large `push --prune`, checked by a pre-push hook of ours instead of by git.
//!
//! Why: git's own leases cost more than the deletions. Taken from the remote-tracking refs, they
//! make git update those refs one at a time afterwards — two lock files in the user's
//! repository per deleted chain (10,000 took 4–14 s on top of the push). Given per ref
//! (`--force-with-lease=<ref>:<id>`), git matches every lease against every remote ref (29 s for
//! 10,000). The pre-push hook gets, for each ref the push will change, the id the remote
//! advertised on this very connection; git sends that id as the command's old id and the remote
//! applies the command only while its ref still holds it. So refusing the push when an
//! advertised id is not the one we last fetched is exactly a lease: a chain that moved, or that
//! we never fetched, is never deleted unseen.
//!
//! The hook is this binary: a private folder in the store holds the expected ids (`leases`) and
//! a link named `pre-push` to the running executable, and git runs it through
//! `-c core.hooksPath=<folder>` (no shell). [`hook_folder`] recognises that call before the
//! command line is parsed. The folder goes when the push ends; one a killed run left behind is
//! removed by the next prune.

use std::collections::HashMap;
use std::ffi::OsStr;
use std::io::BufRead;
use std::path::{Path, PathBuf};

use crate::error::{Error, Exit};

/// The hook's file name, which is also how this binary knows it was called as the hook.
const HOOK: &str = "pre-push";
/// The expected ids, one `<id> <remote ref>` per line after [`HEADER`].
const LEASES: &str = "leases";
/// What the hook found moved, written only when it refused the push.
const MOVED: &str = "moved";
const HEADER: &str = "# handoff-store push --prune leases";
/// The folders' name prefix in the store (`.prune-lease.<pid>.<nanos>`).
const PREFIX: &str = ".prune-lease.";
/// How old a folder of a live process may get before it counts as left behind.
const STALE_AFTER: std::time::Duration = std::time::Duration::from_secs(24 * 3600);

/// A private folder holding the hook and the leases of one push; removed when dropped.
pub(crate) struct Leases {
    folder: PathBuf,
}

/// A remote ref the hook found not holding the id leased on it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Moved {
    pub(crate) reference: String,
    /// What the remote advertised (all zeros: absent).
    pub(crate) advertised: String,
}

impl Moved {
    /// Whether the remote does not hold the ref at all.
    pub(crate) fn absent(&self) -> bool {
        is_absent(&self.advertised)
    }
}

/// git's way of saying "no such ref": an id of zeros.
fn is_absent(id: &str) -> bool {
    id.bytes().all(|b| b == b'0')
}

impl Leases {
    /// Write `leases` (`(remote ref, the id it must still hold)`; a ref not listed must be
    /// absent) and the hook into a new folder of `store_dir`, after removing the folders of
    /// runs that are gone.
    pub(crate) fn create(store_dir: &Path, leases: &[(String, String)]) -> Result<Leases, Error> {
        // A clone that never wrote a handoff may prune before the store exists.
        crate::store::slot::create_private_dir(store_dir)?;
        clean_stale(store_dir);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let folder = store_dir.join(format!("{PREFIX}{}.{nanos:x}", std::process::id()));
        let mut builder = crate::fs::DirBuilder::new();
        #[cfg(unix)]
        {
            use std::os::unix::fs::DirBuilderExt;
            builder.mode(0o700);
        }
        builder.create(&folder).map_err(|e| Error::io(&folder, e))?;
        // From here on, dropping `made` removes the folder, whatever fails next.
        let made = Leases { folder };
        let mut text = String::with_capacity(64 * (leases.len() + 1));
        text.push_str(HEADER);
        text.push('\n');
        for (reference, id) in leases {
            text.push_str(id);
            text.push(' ');
            text.push_str(reference);
            text.push('\n');
        }
        let file = made.folder.join(LEASES);
        crate::fs::write(&file, text).map_err(|e| Error::io(&file, e))?;
        let exe = std::env::current_exe().map_err(|e| Error::io(Path::new("current_exe"), e))?;
        let hook = made.folder.join(HOOK);
        #[cfg(unix)]
        crate::fs::os::unix::fs::symlink(&exe, &hook).map_err(|e| Error::io(&hook, e))?;
        // The hook must be there when git looks: git skips a hook it cannot execute, and the
        // push would go without its lease.
        if !is_executable(&hook) {
            return Err(Error::External(crate::error::External::LeaseHook(exe)));
        }
        Ok(made)
    }

    /// The folder to give git as `core.hooksPath`.
    pub(crate) fn folder(&self) -> &Path {
        &self.folder
    }

    /// The refs the hook found moved when it refused the push; empty when it did not refuse.
    pub(crate) fn moved(&self) -> Vec<Moved> {
        let Ok(text) = crate::fs::read_to_string(self.folder.join(MOVED)) else {
            return Vec::new();
        };
        text.lines()
            .filter_map(|line| {
                let (advertised, reference) = line.split_once(' ')?;
                Some(Moved {
                    reference: reference.to_string(),
                    advertised: advertised.to_string(),
                })
            })
            .collect()
    }
}

impl Drop for Leases {
    fn drop(&mut self) {
        let _ = crate::fs::remove_dir_all(&self.folder);
    }
}

fn is_executable(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        crate::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    }
    #[cfg(not(unix))]
    {
        path.is_file()
    }
}

/// Remove the lease folders of runs that are gone (their pid is dead, or they are a day old).
fn clean_stale(store_dir: &Path) {
    let Ok(entries) = crate::fs::read_dir(store_dir) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(rest) = name.to_str().and_then(|n| n.strip_prefix(PREFIX)) else {
            continue;
        };
        let pid = rest.split('.').next().and_then(|p| p.parse::<i32>().ok());
        let old = e
            .metadata()
            .ok()
            .and_then(|m| m.modified().ok())
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age > STALE_AFTER);
        let gone = pid.is_none_or(|p| p <= 0 || !crate::store::slot::pid_alive(p));
        if (gone || old) && pid != Some(std::process::id() as i32) {
            let _ = crate::fs::remove_dir_all(e.path());
        }
    }
}

/// When this binary was started by git as the hook of [`Leases`]: the folder holding the
/// leases. Decided from `argv[0]` (`<folder>/pre-push`) and the leases file beside it, so no
/// ordinary command line is ever taken for the hook.
pub(crate) fn hook_folder(argv0: &OsStr) -> Option<PathBuf> {
    let path = Path::new(argv0);
    if path.file_name()? != HOOK {
        return None;
    }
    let folder = path.parent()?;
    let leases = crate::fs::File::open(folder.join(LEASES)).ok()?;
    let mut first = String::new();
    std::io::BufReader::new(leases).read_line(&mut first).ok()?;
    (first.trim_end() == HEADER).then(|| folder.to_path_buf())
}

/// The hook: read git's `<local ref> <local id> <remote ref> <remote id>` lines from `input`
/// and allow the push (`Exit::Ok`) only when every remote ref it changes holds the id leased on
/// it. A refusal (`Exit::Negative`: git's hook exit 1) writes the moved refs for the pusher;
/// the lines are for stderr (git shows them).
pub(crate) fn run_hook(folder: &Path, input: &mut dyn BufRead) -> (Exit, Vec<String>) {
    let refused = |line: &str| (Exit::Negative, vec![format!("handoff-store: {line}")]);
    let Ok(text) = crate::fs::read_to_string(folder.join(LEASES)) else {
        return refused("the leases of this push are gone; refused");
    };
    let leased: HashMap<&str, &str> = text
        .lines()
        .skip(1)
        .filter_map(|l| l.split_once(' '))
        .map(|(id, reference)| (reference, id))
        .collect();
    let mut moved = String::new();
    let mut line = String::new();
    loop {
        line.clear();
        match input.read_line(&mut line) {
            Ok(0) => break,
            Ok(_) => {}
            Err(_) => return refused("cannot read what git would push; refused"),
        }
        let fields: Vec<&str> = line.split_whitespace().collect();
        let [_, _, remote_ref, advertised] = fields[..] else {
            continue;
        };
        let expected = leased.get(remote_ref).copied();
        let holds = match expected {
            Some(id) => id == advertised,
            None => is_absent(advertised),
        };
        if !holds {
            moved.push_str(&format!("{advertised} {remote_ref}\n"));
        }
    }
    if moved.is_empty() {
        return (Exit::Ok, Vec::new());
    }
    let count = moved.lines().count();
    let mut said = vec![format!(
        "handoff-store: {count} remote chain(s) changed since the last fetch; nothing deleted"
    )];
    let file = folder.join(MOVED);
    if crate::fs::write(&file, moved).is_err() {
        said.push(format!("handoff-store: cannot write {}", file.display()));
    }
    (Exit::Negative, said)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hook_allows_only_refs_holding_their_lease() {
        let dir = tempfile::tempdir().expect("tempdir");
        let a = "a".repeat(40);
        let b = "b".repeat(40);
        let zero = "0".repeat(40);
        let leases = Leases::create(
            dir.path(),
            &[
                ("refs/handoffs/gone".into(), a.clone()),
                ("refs/handoffs/kept".into(), b.clone()),
            ],
        )
        .expect("create");
        let folder = leases.folder().to_path_buf();
        assert_eq!(
            hook_folder(folder.join(HOOK).as_os_str()),
            Some(folder.clone())
        );
        assert_eq!(hook_folder(folder.join("other").as_os_str()), None);
        let fine = format!("(delete) {zero} refs/handoffs/gone {a}\n");
        assert_eq!(run_hook(&folder, &mut fine.as_bytes()).0, Exit::Ok);
        assert!(leases.moved().is_empty());
        let stale = format!(
            "(delete) {zero} refs/handoffs/gone {b}\n\
             (delete) {zero} refs/handoffs/unseen {a}\n\
             (delete) {zero} refs/handoffs/kept {b}\n"
        );
        let (exit, said) = run_hook(&folder, &mut stale.as_bytes());
        assert_eq!(exit, Exit::Negative);
        assert_eq!(
            said,
            ["handoff-store: 2 remote chain(s) changed since the last fetch; nothing deleted"]
        );
        assert_eq!(
            leases.moved(),
            vec![
                Moved {
                    reference: "refs/handoffs/gone".into(),
                    advertised: b.clone()
                },
                Moved {
                    reference: "refs/handoffs/unseen".into(),
                    advertised: a.clone()
                },
            ]
        );
        drop(leases);
        assert!(!folder.exists(), "the folder goes with the push");
    }

    #[test]
    fn a_folder_a_killed_run_left_goes_with_the_next_one() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut child = std::process::Command::new("true").spawn().expect("true");
        let dead = child.id();
        child.wait().expect("wait");
        let left = dir.path().join(format!("{PREFIX}{dead}.1"));
        let live = dir.path().join(format!("{PREFIX}1.2"));
        for d in [&left, &live] {
            std::fs::create_dir(d).expect("mkdir");
            std::fs::write(d.join(LEASES), HEADER).expect("leases");
        }
        let leases = Leases::create(dir.path(), &[]).expect("create");
        assert!(!left.exists(), "a dead run's folder stays");
        let fresh = dir.path().join("not/yet/a/store");
        let first = Leases::create(&fresh, &[]).expect("a store not yet made is made");
        assert!(first.folder().starts_with(&fresh));
        assert!(live.exists(), "a live process's folder was removed");
        assert!(leases.folder().exists());
    }
}
