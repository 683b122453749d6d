//! What readers know of a handoff file without reading it whole (its envelope, size and mtime),
//! and the pick a reader makes among them (docs/store.md §5): the exact slot, else the most recent
//! handoff that is not a placeholder.

use std::os::unix::fs::MetadataExt;
use std::time::{Duration, SystemTime};

use serde::Serialize;

use super::time::epoch;
use super::{Store, slot};
use crate::document::envelope::{self, Progress};

/// How long a file's ctime must lie in the past before its envelope may be cached.
pub(crate) const SETTLED: Duration = Duration::from_secs(2);

/// What identifies one state of a file: any write, rename over, or metadata change moves it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FileState {
    pub(crate) ino: u64,
    pub(crate) size: u64,
    pub(crate) mtime: (i64, i64),
    pub(crate) ctime: (i64, i64),
}

impl FileState {
    pub(crate) fn of(meta: &crate::fs::Metadata) -> FileState {
        FileState {
            ino: meta.ino(),
            size: meta.size(),
            mtime: (meta.mtime(), meta.mtime_nsec()),
            ctime: (meta.ctime(), meta.ctime_nsec()),
        }
    }

    pub(crate) fn of_stat(st: &nix::sys::stat::FileStat) -> FileState {
        FileState {
            ino: st.st_ino,
            size: u64::try_from(st.st_size).unwrap_or(0),
            mtime: (st.st_mtime, st.st_mtime_nsec),
            ctime: (st.st_ctime, st.st_ctime_nsec),
        }
    }

    /// Whether the file last changed at least [`SETTLED`] before `now`.
    pub(crate) fn settled(&self, now: SystemTime) -> bool {
        let (secs, nanos) = self.ctime;
        let Ok(secs) = u64::try_from(secs) else {
            return true;
        };
        let changed = SystemTime::UNIX_EPOCH
            + Duration::from_secs(secs)
            + Duration::from_nanos(u64::try_from(nanos).unwrap_or(0));
        now.duration_since(changed).is_ok_and(|d| d >= SETTLED)
    }
}

/// What `from:` reads as when it is not in the form this store writes.
pub(crate) const UNRECORDED_FROM: &str = "an unrecorded origin";

/// What readers know about one handoff file (docs/store.md §9 `HandoffInfo`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct HandoffInfo {
    pub(crate) path: String,
    pub(crate) name: String,
    pub(crate) branch: Option<String>,
    pub(crate) checkout: Option<String>,
    pub(crate) status: Option<String>,
    pub(crate) progress: Option<String>,
    pub(crate) head: Option<String>,
    /// Where a handoff that came from another machine came from (`from:`, set by `pull` and
    /// the hooks' offer): its host, the remote, when it was written.
    pub(crate) from: Option<String>,
    /// How every output frames its text when it is a teammate's
    /// ([`super::authorship::teammate_frame`]); `None` for the user's own.
    pub(crate) teammate: Option<String>,
    pub(crate) mtime: Option<i64>,
    pub(crate) size: u64,
    #[serde(skip)]
    pub(crate) write_session: Option<String>,
}

impl HandoffInfo {
    /// Read a candidate: a non-empty, readable regular file (never a symlink).
    pub(crate) fn read(store: &Store, name: &str) -> Option<HandoffInfo> {
        use crate::fs::OpenOptionsExt;
        let file = crate::fs::OpenOptions::new()
            .read(true)
            .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK)
            .open(store.path_of(name))
            .ok()?;
        HandoffInfo::from_open(store, name, file)
    }

    /// [`HandoffInfo::read`] for an entry of the open store directory `dir`: one `openat`
    /// relative to it, so a large store's listing walks no path twice.
    /// Also returns the state of the file it was read in, for the list index.
    pub(crate) fn read_in(
        store: &Store,
        dir: &crate::fs::File,
        name: &str,
    ) -> Option<(HandoffInfo, FileState)> {
        use nix::fcntl::{OFlag, openat};
        use nix::sys::stat::Mode;
        let fd = openat(
            dir,
            name,
            OFlag::O_RDONLY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC | OFlag::O_NONBLOCK,
            Mode::empty(),
        )
        .ok()?;
        let file = crate::fs::File::from_parts(std::fs::File::from(fd), store.dir.join(name));
        let meta = file.metadata().ok()?;
        let stamp = FileState::of(&meta);
        Some((HandoffInfo::from_meta(store, name, file, &meta)?, stamp))
    }

    /// From a file opened without following a symlink: one `fstat` on the descriptor, one read.
    fn from_open(store: &Store, name: &str, file: crate::fs::File) -> Option<HandoffInfo> {
        let meta = file.metadata().ok()?;
        HandoffInfo::from_meta(store, name, file, &meta)
    }

    fn from_meta(
        store: &Store,
        name: &str,
        file: crate::fs::File,
        meta: &crate::fs::Metadata,
    ) -> Option<HandoffInfo> {
        if !meta.file_type().is_file() || meta.len() == 0 {
            return None;
        }
        let head = slot::read_head_from(file, Some(meta.len())).ok()?;
        Some(HandoffInfo::from_parts(store, name, &head, meta))
    }

    /// Build from the first bytes of the file and its metadata.
    pub(crate) fn from_parts(
        store: &Store,
        name: &str,
        head: &[u8],
        meta: &crate::fs::Metadata,
    ) -> HandoffInfo {
        // Only the envelope's bytes are decoded: the rest of the head is never looked at.
        let lines = head.split(|&b| b == b'\n');
        let n = envelope::envelope_len(lines.clone());
        let end = lines
            .take(n)
            .map(|l| l.len() + 1)
            .sum::<usize>()
            .min(head.len());
        let text = String::from_utf8_lossy(&head[..end]);
        let env = envelope::store_envelope(&text);
        let field = |n: &str| envelope::store_field(&env, n).map(str::to_string);
        // Shown as data only: this store's own form, or a word that says it is not.
        let from = field("from").map(|f| {
            super::authorship::From::parse(&f)
                .map_or_else(|| UNRECORDED_FROM.to_string(), |f| f.render())
        });
        HandoffInfo {
            path: store.path_of(name).to_string_lossy().into_owned(),
            name: name.to_string(),
            branch: field("branch"),
            checkout: field("checkout"),
            status: field("status"),
            progress: field("progress"),
            head: field("head"),
            teammate: super::authorship::teammate_frame(from.as_deref()),
            from,
            mtime: meta.modified().ok().map(epoch),
            size: meta.len(),
            write_session: field("write_session"),
        }
    }

    /// The declared branch: the first word of `branch:`.
    pub(crate) fn declared(&self) -> Option<&str> {
        self.branch.as_deref().and_then(envelope::declared_branch)
    }

    /// The `progress:` value as a lifecycle state (`None` when absent or not one of the three;
    /// the raw value stays in `progress` for display).
    pub(crate) fn lifecycle(&self) -> Option<Progress> {
        self.progress.as_deref().and_then(Progress::parse)
    }

    pub(crate) fn is_placeholder(&self) -> bool {
        self.lifecycle() == Some(Progress::Writing)
    }

    /// Not yet delivered: `complete`, or no `progress:` at all (a legacy document).
    pub(crate) fn is_unread(&self) -> bool {
        self.progress.is_none() || self.lifecycle() == Some(Progress::Complete)
    }

    pub(crate) fn is_consumed(&self) -> bool {
        self.lifecycle() == Some(Progress::Consumed)
    }

    /// The progress as shown: the raw value, or `complete` when absent.
    pub(crate) fn progress_shown(&self) -> &str {
        self.progress.as_deref().unwrap_or("complete")
    }
}

/// How a reader's pick was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PickKind {
    Exact,
    Recent,
}

/// The exact pick, else the most recent non-placeholder (docs/store.md §5); plus the others.
pub(crate) fn pick(
    candidates: Vec<HandoffInfo>,
    exact: Option<&str>,
) -> Option<(HandoffInfo, PickKind, Vec<HandoffInfo>)> {
    let index = match exact.and_then(|n| candidates.iter().position(|c| c.name == n)) {
        Some(i) => Some((i, PickKind::Exact)),
        None => candidates
            .iter()
            .position(|c| !c.is_placeholder())
            .map(|i| (i, PickKind::Recent)),
    };
    let (i, kind) = index?;
    let mut others = candidates;
    let picked = others.remove(i);
    Some((picked, kind, others))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picks_prefer_exact_and_never_guess_a_placeholder() {
        let info = |name: &str, mtime: i64, progress: Option<&str>| HandoffInfo {
            path: name.into(),
            name: name.into(),
            branch: None,
            checkout: None,
            status: None,
            progress: progress.map(str::to_string),
            head: None,
            from: None,
            teammate: None,
            mtime: Some(mtime),
            size: 1,
            write_session: None,
        };
        let mut list = vec![
            info("a.md", 5, None),
            info("b.md", 9, Some("writing")),
            info("c.md", 5, None),
        ];
        super::super::sort_newest_first(&mut list);
        let (p, kind, others) = pick(list.clone(), Some("c.md")).expect("exact");
        assert_eq!(
            (p.name.as_str(), kind, others.len()),
            ("c.md", PickKind::Exact, 2)
        );
        let (p, kind, _) = pick(list, None).expect("recent");
        assert_eq!((p.name.as_str(), kind), ("a.md", PickKind::Recent));
    }
}
