//! The list index: what enumerating a large store learned of each handoff's envelope, kept in
//! `<store>/.list-index` so the next enumeration of an unchanged file costs one `fstatat`
//! instead of open, stat, read and close (a 10,000-handoff `list` is bound by those calls).
//!
//! It is a cache and nothing else: an entry is believed only while the file's inode, size,
//! mtime and ctime (to the nanosecond) are exactly the ones it was read with, and a file is
//! only entered once its ctime lies [`SETTLED`] in the past, so a change within one tick of the
//! filesystem clock can never hide behind an unchanged stamp (git's "racy" rule). A missing,
//! torn or foreign index is read as empty. It is written whole (temp, fsync, rename) by the
//! enumeration that found enough of it out of date, and never by anything else.

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::SystemTime;

use super::Store;
use super::info::{FileState, HandoffInfo};
use super::slot;

/// The file's name inside the store directory.
pub(crate) const FILE: &str = ".list-index";
const MAGIC: &str = "handoff-store list index 2";
/// The largest index read: some 400,000 entries, far past any store this serves.
const MAX_BYTES: u64 = 64 * 1024 * 1024;
/// A store smaller than this is listed without an index (it would not pay for itself).
pub(crate) const MIN_ENTRIES: usize = 256;

/// The index as read: file name → its record (the fields after the name).
#[derive(Default)]
pub(crate) struct Index {
    text: String,
}

/// The loaded index's records by file name.
pub(crate) struct Records<'a> {
    by_name: HashMap<&'a str, &'a str>,
}

impl Index {
    pub(crate) fn path(store: &Store) -> PathBuf {
        store.dir.join(FILE)
    }

    /// Read the index; anything unreadable reads as empty — and so does anything that is not
    /// a regular file of a sane size: a FIFO, a device or a link there (`/dev/zero`) hung
    /// `list`, so the file is opened without following a link or blocking, and read capped.
    pub(crate) fn load(store: &Store) -> Index {
        let read = || -> Option<String> {
            String::from_utf8(crate::fs::read_regular(&Index::path(store), MAX_BYTES)?).ok()
        };
        Index {
            text: read().unwrap_or_default(),
        }
    }

    /// The records, or none at all when the file is not a whole index of this version.
    pub(crate) fn records(&self) -> Records<'_> {
        let by_name = self.parse().unwrap_or_default();
        Records { by_name }
    }

    fn parse(&self) -> Option<HashMap<&str, &str>> {
        let body = self.text.strip_prefix(MAGIC)?.strip_prefix('\n')?;
        let (body, count) = body.strip_suffix('\n')?.rsplit_once("end\0")?;
        let count: usize = count.parse().ok()?;
        let mut by_name = HashMap::with_capacity(count);
        for line in body.split_terminator('\n') {
            let (name, rest) = line.split_once('\0')?;
            if memchr::memchr_iter(0, rest.as_bytes()).count() + 1 != FIELDS {
                return None;
            }
            by_name.insert(name, rest);
        }
        (by_name.len() == count).then_some(by_name)
    }
}

/// ino, size, mtime s/ns, ctime s/ns, then the seven envelope fields.
const FIELDS: usize = 13;

impl Records<'_> {
    /// Whether the index holds no entry (absent, torn, or a small store's): then looking
    /// anything up is wasted work.
    pub(crate) fn is_empty(&self) -> bool {
        self.by_name.is_empty()
    }

    /// The envelope of `name` if the index holds it for exactly this state of the file.
    pub(crate) fn get(&self, store: &Store, name: &str, stamp: FileState) -> Option<HandoffInfo> {
        let mut f = self.by_name.get(name)?.split('\0');
        let mut num = || f.next().and_then(|v| v.parse::<i64>().ok());
        let held = FileState {
            ino: u64::try_from(num()?).ok()?,
            size: u64::try_from(num()?).ok()?,
            mtime: (num()?, num()?),
            ctime: (num()?, num()?),
        };
        if held != stamp {
            return None;
        }
        let mut text = || f.next().map(|v| (!v.is_empty()).then(|| v.to_string()));
        let (branch, checkout, status, progress, head, write_session, from) = (
            text()?,
            text()?,
            text()?,
            text()?,
            text()?,
            text()?,
            text()?,
        );
        Some(HandoffInfo {
            path: store.path_of(name).to_string_lossy().into_owned(),
            name: name.to_string(),
            branch,
            checkout,
            status,
            progress,
            head,
            write_session,
            teammate: super::authorship::teammate_frame(from.as_deref()),
            from,
            mtime: Some(stamp.mtime.0),
            size: stamp.size,
        })
    }
}

/// Whether an enumeration that found `stale` of `total` handoffs missing from the index though
/// settled enough to enter should write the index anew: only for a store large enough, and only once a thirty-second of it is stale, so
/// one new handoff does not cost a rewrite of the whole index on the next `list`.
pub(crate) fn worth_rewriting(total: usize, stale: usize) -> bool {
    total >= MIN_ENTRIES && stale > 0 && stale * 32 >= total
}

/// Write the index for `entries` (each handoff with the stamp it was read with), leaving out
/// files changed too recently to be trusted and values the format cannot hold. Best effort:
/// a failure leaves the old index, which stamps keep honest.
pub(crate) fn write(store: &Store, entries: &[(&HandoffInfo, FileState)], now: SystemTime) {
    let mut out = String::with_capacity(64 + entries.len() * 160);
    out.push_str(MAGIC);
    out.push('\n');
    let mut count = 0usize;
    for (info, stamp) in entries {
        if !stamp.settled(now) {
            continue;
        }
        let fields = [
            &info.branch,
            &info.checkout,
            &info.status,
            &info.progress,
            &info.head,
            &info.write_session,
            &info.from,
        ];
        let unfit = |v: &str| v.contains(['\0', '\n', '\r']);
        if unfit(&info.name) || fields.iter().any(|v| v.as_deref().is_some_and(unfit)) {
            continue;
        }
        use std::fmt::Write as _;
        let _ = write!(
            out,
            "{}\0{}\0{}\0{}\0{}\0{}\0{}",
            info.name,
            stamp.ino,
            stamp.size,
            stamp.mtime.0,
            stamp.mtime.1,
            stamp.ctime.0,
            stamp.ctime.1
        );
        for v in fields {
            out.push('\0');
            out.push_str(v.as_deref().unwrap_or(""));
        }
        out.push('\n');
        count += 1;
    }
    out.push_str(&format!("end\0{count}\n"));
    let _ = slot::replace(&Index::path(store), out.as_bytes(), None, None);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn info(name: &str, progress: Option<&str>) -> HandoffInfo {
        HandoffInfo {
            path: String::new(),
            name: name.into(),
            branch: Some("main".into()),
            checkout: Some("/w/repo".into()),
            status: None,
            progress: progress.map(str::to_string),
            head: Some("abc".into()),
            from: Some("laptop via origin, written 2026-12-01T00:00:00Z".into()),
            teammate: crate::store::authorship::teammate_frame(Some(
                "laptop via origin, written 2026-12-01T00:00:00Z",
            )),
            mtime: Some(100),
            size: 42,
            write_session: None,
        }
    }

    fn stamp(ctime: i64) -> FileState {
        FileState {
            ino: 7,
            size: 42,
            mtime: (100, 5),
            ctime: (ctime, 9),
        }
    }

    /// A store in a fresh directory (kept alive by the first value) and a fixed "now".
    fn scratch() -> (tempfile::TempDir, Store, SystemTime) {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = Store {
            dir: dir.path().to_path_buf(),
        };
        (
            dir,
            store,
            SystemTime::UNIX_EPOCH + Duration::from_secs(1_000),
        )
    }

    #[test]
    fn an_entry_is_believed_only_for_the_exact_stamp_and_only_once_settled() {
        let (_dir, store, now) = scratch();
        let a = info("a.md", Some("complete"));
        let b = info("b\nx.md", None);
        let young = info("young.md", None);
        write(
            &store,
            &[(&a, stamp(500)), (&b, stamp(500)), (&young, stamp(999))],
            now,
        );
        let index = Index::load(&store);
        let records = index.records();
        let got = records.get(&store, "a.md", stamp(500)).expect("held");
        assert_eq!(got.progress.as_deref(), Some("complete"));
        assert_eq!(got.status, None);
        assert_eq!(got.path, store.path_of("a.md").to_string_lossy());
        assert!(
            records.get(&store, "a.md", stamp(501)).is_none(),
            "ctime moved"
        );
        let mut grown = stamp(500);
        grown.size = 43;
        assert!(records.get(&store, "a.md", grown).is_none(), "size moved");
        assert!(
            records.get(&store, "young.md", stamp(999)).is_none(),
            "not settled"
        );
        assert!(
            records.get(&store, "b\nx.md", stamp(500)).is_none(),
            "unfit name"
        );
    }

    #[test]
    fn a_torn_or_foreign_index_reads_as_empty() {
        let (_dir, store, now) = scratch();
        let a = info("a.md", None);
        write(&store, &[(&a, stamp(1))], now);
        let whole = crate::fs::read_to_string(Index::path(&store)).expect("index");
        for broken in [
            whole[..whole.len() - 3].to_string(),
            whole.replace(MAGIC, "something else"),
            whole.replace("end\u{0}1", "end\u{0}2"),
        ] {
            crate::fs::write(Index::path(&store), broken).expect("write");
            let index = Index::load(&store);
            assert!(index.records().get(&store, "a.md", stamp(1)).is_none());
        }
    }

    #[test]
    fn rewriting_waits_for_a_large_enough_store_and_enough_staleness() {
        assert!(!worth_rewriting(MIN_ENTRIES - 1, MIN_ENTRIES - 1));
        assert!(!worth_rewriting(10_000, 0));
        assert!(!worth_rewriting(10_000, 312));
        assert!(worth_rewriting(10_000, 313));
        assert!(worth_rewriting(MIN_ENTRIES, MIN_ENTRIES));
    }
}
