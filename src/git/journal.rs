//! The note a ref transaction of ours leaves in the repository while it holds git's locks, so
//! a kill that cannot wait (SIGKILL) never leaves the user's git broken. A gix transaction that
//! deletes refs takes `packed-refs.lock` and one `<ref>.lock` per ref; killed between taking
//! them and committing, it left both behind, and `git branch -d` failed until someone removed
//! them by hand. Before such a transaction we write `handoff-store-txn.<pid>` in the common git
//! directory (the refs it edits); after it, we remove it. The next ref change of ours finds the
//! note of a dead process and removes exactly the locks that process could have taken:
//! `<ref>.lock` of the refs it named and `packed-refs.lock` — each only when it was taken no
//! earlier than the note and has been held at least `stale` (the chain's `STALE_LOCK`; git holds
//! either for the moment of one update, so one held that long has nobody alive to release it).

use std::path::{Path, PathBuf};

const PREFIX: &str = "handoff-store-txn.";

/// A transaction's note, removed on drop.
pub(super) struct Journal {
    path: Option<PathBuf>,
}

impl Journal {
    /// Write the note for a transaction over `names` in `common` (best effort: without it the
    /// transaction still runs, as before).
    pub(super) fn begin(common: &Path, names: &[String]) -> Journal {
        let path = common.join(format!("{PREFIX}{}", std::process::id()));
        let mut text = String::with_capacity(names.iter().map(|n| n.len() + 1).sum());
        for name in names {
            text.push_str(name);
            text.push('\n');
        }
        let written = crate::fs::write(&path, text.as_bytes()).is_ok();
        Journal {
            path: written.then_some(path),
        }
    }
}

impl Drop for Journal {
    fn drop(&mut self) {
        if let Some(path) = self.path.take() {
            let _ = crate::fs::remove_file(path);
        }
    }
}

/// Remove the locks a dead process of ours left in `common` mid-transaction, and its note.
/// A note of a live process is left alone.
pub(super) fn recover(common: &Path, stale: std::time::Duration) {
    let Ok(entries) = crate::fs::read_dir(common) else {
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
        let Ok(written) = crate::fs::symlink_metadata(&note).and_then(|m| m.modified()) else {
            continue;
        };
        let text = crate::fs::read_to_string(&note).unwrap_or_default();
        let locks: Vec<PathBuf> = text
            .lines()
            .filter(|l| l.starts_with("refs/") && !l.split('/').any(|part| part == ".."))
            .map(|l| common.join(format!("{l}.lock")))
            .chain(std::iter::once(common.join("packed-refs.lock")))
            .collect();
        // A lock younger than `stale` may be a live git's of this very moment: wait until the
        // youngest has outlived it (at most `stale`), then look again.
        let youngest = locks.iter().filter_map(|l| taken_since(l, written)).min();
        if let Some(age) = youngest.filter(|age| *age < stale) {
            std::thread::sleep(stale - age);
        }
        for lock in &locks {
            if taken_since(lock, written).is_some_and(|age| age >= stale) {
                let _ = crate::fs::remove_file(lock);
            }
        }
        let _ = crate::fs::remove_file(&note);
    }
}

/// How long `lock` has been held, when it is a plain file taken no earlier than `since` (a
/// second of slack for coarse file times).
fn taken_since(lock: &Path, since: std::time::SystemTime) -> Option<std::time::Duration> {
    let meta = crate::fs::symlink_metadata(lock).ok()?;
    let taken = meta.modified().ok()?;
    let after = taken >= since.checked_sub(std::time::Duration::from_secs(1))?;
    (meta.is_file() && after).then(|| taken.elapsed().unwrap_or_default())
}
