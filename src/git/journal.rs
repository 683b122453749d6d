//! The journaled ref transaction (`Chains::edit`, every ref change of ours) and the note it
//! leaves in the repository while it holds git's locks, so a kill that cannot wait (SIGKILL)
//! never leaves the user's git broken — and so the recovery never removes a lock that is not
//! ours.
//!
//! Before taking a lock (a loose ref's `<ref>.lock`, `packed-refs.lock` for a deletion) we
//! create `handoff-store-txn.<pid>` in the common git directory; right after taking and
//! writing them we append each lock's identity — device, inode, ctime to the nanosecond, and
//! its path under the git directory; when the change is done we remove the note. The next ref change of ours
//! finds the note of a dead process and removes a lock only when the file there is still that
//! very file: a lock taken since by the user's own git is another file (another inode, or a
//! later ctime) and stays, whatever its age. A lock taken but not yet noted when the kill came
//! (the moment between `open` and the note's write), or written after it (`packed-refs.lock`
//! while gix commits), is left too: it cannot be told from the user's, so git's own message
//! about it stands, and ours name its whole path.
//!
//! The note is made with `O_CREAT | O_EXCL | O_NOFOLLOW` (a link or FIFO planted under the pid
//! we will have makes us go without a note, never write through it), read only when it is a
//! regular file (opened without blocking), and a line names a lock only under the git
//! directory's own `refs/` (or `packed-refs.lock`), every folder on the way a real folder.

use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};

use gix::refs::transaction::RefEdit;

const PREFIX: &str = "handoff-store-txn.";
const HEADER: &str = "handoff-store-txn 2\n";
/// The largest note read back (a deletion of 100,000 refs notes about 10 MB).
const NOTE_MAX: u64 = 32 << 20;

/// A change's note, removed on drop.
pub(super) struct Journal {
    common: PathBuf,
    note: Option<(PathBuf, std::fs::File)>,
}

/// What makes a file the one we created: it survives no removal and re-creation.
#[derive(PartialEq, Eq, Clone, Copy, Debug)]
pub(super) struct Identity {
    dev: u64,
    ino: u64,
    ctime: i64,
    ctime_nsec: i64,
}

impl Identity {
    /// The identity of the regular file at `path` (never through a link).
    pub(super) fn of(path: &Path) -> Option<Identity> {
        let meta = std::fs::symlink_metadata(path).ok()?;
        meta.is_file().then(|| Identity {
            dev: meta.dev(),
            ino: meta.ino(),
            ctime: meta.ctime(),
            ctime_nsec: meta.ctime_nsec(),
        })
    }
}

impl Journal {
    /// Create the note for a change in `common` (best effort: without it the change still
    /// runs; only a kill in it would then leave its locks for the user to remove).
    pub(super) fn begin(common: &Path) -> Journal {
        use std::os::unix::fs::OpenOptionsExt;
        let path = common.join(format!("{PREFIX}{}", std::process::id()));
        let note = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(nix::libc::O_NOFOLLOW)
            .open(&path)
            .and_then(|mut file| file.write_all(HEADER.as_bytes()).map(|()| file));
        Journal {
            common: common.to_path_buf(),
            note: note.ok().map(|file| (path, file)),
        }
    }

    /// Note the locks at `locks` as taken by this process: each one's identity now.
    pub(super) fn taken(&mut self, locks: &[(PathBuf, Identity)]) {
        let Some((_, file)) = self.note.as_mut() else {
            return;
        };
        let mut text = String::with_capacity(locks.len() * 96);
        for (lock, id) in locks {
            let Some(rel) = lock.strip_prefix(&self.common).ok().and_then(Path::to_str) else {
                continue;
            };
            text.push_str(&format!(
                "lock {} {} {} {} {rel}\n",
                id.dev, id.ino, id.ctime, id.ctime_nsec
            ));
        }
        let _ = file.write_all(text.as_bytes());
    }
}

impl Drop for Journal {
    fn drop(&mut self) {
        if let Some((path, _)) = self.note.take() {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// Remove the locks a dead process of ours left in `common` mid-change — each only when it is
/// still the very file that process noted — and its note. A note of a live process is left
/// alone; so is every lock that is not provably the dead process's.
pub(super) fn recover(common: &Path) {
    let Ok(entries) = std::fs::read_dir(common) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(PREFIX))
            .and_then(|p| p.parse::<i32>().ok())
        else {
            continue;
        };
        if pid as u32 == std::process::id() || crate::process::alive(pid) {
            continue;
        }
        let note = entry.path();
        // A link, FIFO or device under our name is not a note of ours: left as it is.
        let Some(bytes) = crate::fs::read_regular(&note, NOTE_MAX) else {
            continue;
        };
        for (lock, id) in noted_locks(common, &String::from_utf8_lossy(&bytes)) {
            if Identity::of(&lock) == Some(id) {
                let _ = std::fs::remove_file(&lock);
            }
        }
        let _ = std::fs::remove_file(&note);
    }
}

/// The locks a note names, each confined to `common`'s own ref folders.
fn noted_locks(common: &Path, text: &str) -> Vec<(PathBuf, Identity)> {
    let mut locks = Vec::new();
    if !text.starts_with(HEADER) {
        return locks;
    }
    for line in text.lines().skip(1) {
        let mut parts = line.splitn(6, ' ');
        let (Some("lock"), Some(dev), Some(ino), Some(ctime), Some(nsec), Some(rel)) = (
            parts.next(),
            parts.next(),
            parts.next(),
            parts.next(),
            parts.next(),
            parts.next(),
        ) else {
            continue;
        };
        let (Ok(dev), Ok(ino), Ok(ctime), Ok(ctime_nsec)) =
            (dev.parse(), ino.parse(), ctime.parse(), nsec.parse())
        else {
            continue;
        };
        if let Some(lock) = confined(common, rel) {
            let id = Identity {
                dev,
                ino,
                ctime,
                ctime_nsec,
            };
            locks.push((lock, id));
        }
    }
    locks
}

/// `common/rel` when `rel` is `packed-refs.lock` or a `.lock` under `refs/`, of plain
/// components only, and every folder between `common` and it is a real folder (no link).
fn confined(common: &Path, rel: &str) -> Option<PathBuf> {
    let plain = rel
        .split('/')
        .all(|p| !p.is_empty() && p != "." && p != "..");
    let rel = Path::new(rel);
    let named = rel == Path::new("packed-refs.lock")
        || (rel.starts_with("refs") && rel.extension().is_some_and(|e| e == "lock"));
    if !plain || !named {
        return None;
    }
    let mut dir = common.to_path_buf();
    let parts: Vec<Component> = rel.components().collect();
    for part in &parts[..parts.len() - 1] {
        dir.push(part);
        let real = std::fs::symlink_metadata(&dir).is_ok_and(|m| m.file_type().is_dir());
        if !real {
            return None;
        }
    }
    Some(common.join(rel))
}

/// What a failed transaction says (gix's error).
pub(super) type Failure = Box<dyn std::error::Error + Send + Sync>;

/// One gix ref transaction on `repo`, its reflog entries signed by `committer`, each lock
/// waited for at most `wait`. Its locks (`packed-refs.lock` for a deletion, each ref's) are
/// noted in the repository while held, so a kill that cannot wait leaves nothing the next
/// change of ours does not remove. Every ref change of ours goes through here.
pub(super) fn edit(
    repo: &gix::Repository,
    committer: &gix::actor::Signature,
    edits: Vec<RefEdit>,
    wait: std::time::Duration,
) -> Result<(), Failure> {
    let mut time = Default::default();
    let common = repo.common_dir().to_path_buf();
    recover(&common);
    let mut locks: Vec<PathBuf> = edits
        .iter()
        .map(|e| lock_of(&common.join(e.name.as_bstr().to_string())))
        .collect();
    // gix takes `packed-refs.lock` for a deletion when `packed-refs` exists (or its lock did,
    // and it waited for it): noted only then, and only when it is a new file.
    let packed = common.join("packed-refs.lock");
    let packed_before = Identity::of(&packed);
    let packed_taken = common.join("packed-refs").is_file() || packed_before.is_some();
    let mut journal = Journal::begin(&common);
    let wait = gix::lock::acquire::Fail::AfterDurationWithBackoff(wait);
    let prepared = repo.refs.transaction().prepare(edits, wait, wait)?;
    if packed_taken && Identity::of(&packed) != packed_before {
        locks.push(packed);
    }
    journal.taken(&taken(&locks));
    crate::process::kill_point();
    prepared.commit(Some(committer.to_ref(&mut time)))?;
    Ok(())
}

/// `<path>.lock`.
pub(super) fn lock_of(path: &Path) -> PathBuf {
    let mut lock = path.as_os_str().to_owned();
    lock.push(".lock");
    PathBuf::from(lock)
}

/// Each of `locks` that is there now, with its identity (taken by us a moment ago).
pub(super) fn taken(locks: &[PathBuf]) -> Vec<(PathBuf, Identity)> {
    locks
        .iter()
        .filter_map(|l| Some((l.clone(), Identity::of(l)?)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_note_line_leaves_the_ref_folders_never() {
        let dir = tempfile::tempdir().unwrap();
        let common = dir.path();
        std::fs::create_dir_all(common.join("refs/handoffs")).unwrap();
        std::os::unix::fs::symlink("/tmp", common.join("refs/evil")).unwrap();
        assert!(confined(common, "refs/handoffs/main.lock").is_some());
        assert!(confined(common, "packed-refs.lock").is_some());
        for bad in [
            "refs/evil/c.lock",
            "refs/../config.lock",
            "/etc/passwd.lock",
            "refs/handoffs/main",
            "HEAD.lock",
            "refs/./handoffs/x.lock",
        ] {
            assert!(confined(common, bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn a_link_planted_under_our_pid_is_never_written_through() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("outside");
        std::fs::write(&target, "theirs").unwrap();
        let note = dir.path().join(format!("{PREFIX}{}", std::process::id()));
        std::os::unix::fs::symlink(&target, &note).unwrap();
        let mut journal = Journal::begin(dir.path());
        journal.taken(&[(
            dir.path().join("refs/x.lock"),
            Identity::of(&target).unwrap(),
        )]);
        drop(journal);
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "theirs");
        assert!(std::fs::symlink_metadata(&note).unwrap().is_symlink());
    }
}
