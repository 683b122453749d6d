//! Where a cited line went since the handoff's `head:`, as git itself tells it (docs/gate.md
//! §3.5, "How a citation is followed"). Two facts, both from gix:
//!
//! - **Which file it is now.** A path of `head:` that HEAD still has is the same file (git pairs
//!   a path present on both sides as a modification, never a rename). One that HEAD lacks is
//!   paired by gix's rewrite tracker over the tree diff from `head:` to HEAD — it follows git's
//!   `diffcore-rename` (exact renames, then a unique basename, then a 50 % similarity matrix of
//!   hashed spans, 1,000 files at most), so a renamed-and-edited file is followed and a file
//!   with the same name alone is never a rename. The tree diff runs only when some cited file
//!   is gone from its path.
//! - **Which line it is now.** A line diff (Myers, git's default, with the indent heuristic)
//!   from the file at `head:` to the file as the caller read it from the work tree, so
//!   uncommitted edits count: an unchanged line maps to its new number; a line inside a hunk was
//!   rewritten or deleted.

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::Path;

use gix::diff::blob::{Algorithm, Diff, InternedInput, sources::byte_lines};

/// The largest file read at `head:` or compared line by line: the gate's own bound on a cited
/// file kept in memory (`resolve::scan`). A bigger one is left to the text rule.
pub(crate) const MAX_BYTES: u64 = 4 << 20;

/// The repository as it was at a handoff's `head:`, next to HEAD.
pub(crate) struct Since {
    repo: gix::Repository,
    then: gix::ObjectId,
    now: Option<gix::ObjectId>,
    /// Paths of `head:` HEAD no longer has, with where git's rename detection pairs each
    /// (`None`: deleted); filled once, on the first such path.
    gone: Option<HashMap<String, Option<String>>>,
    /// Tree entries looked up, by tree and path: a handoff cites the same files many times.
    entries: RefCell<HashMap<(gix::ObjectId, String), Option<Entry>>>,
}

/// A tree entry: its mode and object.
type Entry = (gix::object::tree::EntryMode, gix::ObjectId);

/// Where a file of `head:` is now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum FileNow {
    /// At the same path.
    Same,
    /// Renamed (with or without edits) to this path.
    Renamed(String),
    /// Deleted: no file of HEAD is its rename.
    Gone,
}

impl Since {
    /// `head` (a full hex id, as `write` records it) as a commit of the repository whose work tree is
    /// `root`; `None` when the repository does not hold it (a teammate's handoff before a
    /// fetch, a shallow clone) or it is no commit.
    pub(crate) fn open(root: &Path, head: &str) -> Option<Since> {
        let real = crate::fs::canonicalize(root).ok()?;
        let mut repo = super::discover_for_read(&real)?;
        // The same trees are read for every cited path (its root, its folders): keep them.
        repo.object_cache_size_if_unset(4 << 20);
        let head = head.trim();
        if head.len() != repo.object_hash().len_in_hex() {
            return None;
        }
        let id = gix::ObjectId::from_hex(head.as_bytes()).ok()?;
        let then = repo.find_commit(id).ok()?.tree_id().ok()?.detach();
        let now = repo
            .head_commit()
            .ok()
            .and_then(|c| c.tree_id().ok())
            .map(gix::Id::detach);
        Some(Since {
            repo,
            then,
            now,
            gone: None,
            entries: RefCell::default(),
        })
    }

    /// The bytes of `path` at `head:`: `None` when it was no regular file there, or is bigger
    /// than [`MAX_BYTES`].
    pub(crate) fn then(&self, path: &str) -> Option<Vec<u8>> {
        let entry = self.entry(self.then, path)?;
        if !entry.0.is_blob() {
            return None;
        }
        let header = self.repo.find_header(entry.1).ok()?;
        if header.size() > MAX_BYTES {
            return None;
        }
        Some(self.repo.find_blob(entry.1).ok()?.take_data())
    }

    /// Whether `path` was a regular file at `head:`.
    pub(crate) fn is_file_then(&self, path: &str) -> bool {
        self.entry(self.then, path).is_some_and(|e| e.0.is_blob())
    }

    /// Whether `path` is a regular file of HEAD.
    pub(crate) fn is_file_now(&self, path: &str) -> bool {
        self.now
            .and_then(|now| self.entry(now, path))
            .is_some_and(|e| e.0.is_blob())
    }

    /// Where the file `path` of `head:` is in HEAD.
    pub(crate) fn file_now(&mut self, path: &str) -> FileNow {
        let Some(now) = self.now else {
            return FileNow::Gone;
        };
        if self.is_file_now(path) {
            return FileNow::Same;
        }
        if self.gone.is_none() {
            self.gone = Some(self.renames(now).unwrap_or_default());
        }
        match self.gone.as_ref().and_then(|g| g.get(path)) {
            Some(Some(to)) => FileNow::Renamed(to.clone()),
            _ => FileNow::Gone,
        }
    }

    /// Every regular file of HEAD, as paths relative to the work tree.
    pub(crate) fn files_now(&self) -> Vec<String> {
        let Some(tree) = self.now.and_then(|t| self.repo.find_tree(t).ok()) else {
            return Vec::new();
        };
        let Ok(files) = tree.traverse().breadthfirst.files() else {
            return Vec::new();
        };
        files
            .into_iter()
            .filter(|e| e.mode.is_blob())
            .map(|e| e.filepath.to_string())
            .collect()
    }

    fn entry(&self, tree: gix::ObjectId, path: &str) -> Option<Entry> {
        let key = (tree, path.to_string());
        if let Some(known) = self.entries.borrow().get(&key) {
            return *known;
        }
        let found = self
            .repo
            .find_tree(tree)
            .ok()
            .and_then(|t| t.lookup_entry_by_path(path).ok().flatten())
            .map(|e| (e.mode(), e.object_id()));
        self.entries.borrow_mut().insert(key, found);
        found
    }

    /// Every deletion and rename of the tree diff from `head:` to `now`, with git's default
    /// rename detection.
    fn renames(&self, now: gix::ObjectId) -> Option<HashMap<String, Option<String>>> {
        use gix::object::tree::diff::ChangeDetached as Change;
        let old = self.repo.find_tree(self.then).ok()?;
        let new = self.repo.find_tree(now).ok()?;
        let options = gix::diff::Options::default().with_rewrites(Some(Default::default()));
        let changes = self
            .repo
            .diff_tree_to_tree(Some(&old), Some(&new), Some(options))
            .ok()?;
        let mut gone = HashMap::new();
        for change in changes {
            match change {
                Change::Deletion { location, .. } => {
                    gone.insert(location.to_string(), None);
                }
                Change::Rewrite {
                    source_location,
                    location,
                    copy: false,
                    ..
                } => {
                    gone.insert(source_location.to_string(), Some(location.to_string()));
                }
                _ => {}
            }
        }
        Some(gone)
    }
}

/// Where the lines of one file at `head:` are in its text now, as git's line diff pairs them.
pub(crate) struct LineMap {
    /// The diff's hunks, in order: (lines removed, lines added), 0-based ranges.
    hunks: Vec<(std::ops::Range<u32>, std::ops::Range<u32>)>,
    lines_then: u32,
}

impl LineMap {
    /// The map from `old` to `new`; `None` when either is bigger than [`MAX_BYTES`]. Equal
    /// texts cost no diff.
    pub(crate) fn new(old: &[u8], new: &[u8]) -> Option<LineMap> {
        if old.len() as u64 > MAX_BYTES || new.len() as u64 > MAX_BYTES {
            return None;
        }
        let newlines = memchr::memchr_iter(b'\n', old).count();
        let lines_then =
            u32::try_from(newlines + usize::from(old.last().is_some_and(|&b| b != b'\n'))).ok()?;
        if old == new {
            return Some(LineMap {
                hunks: Vec::new(),
                lines_then,
            });
        }
        let input = InternedInput::new(byte_lines(old), byte_lines(new));
        let mut diff = Diff::compute(Algorithm::Myers, &input);
        diff.postprocess_lines(&input);
        Some(LineMap {
            hunks: diff.hunks().map(|h| (h.before, h.after)).collect(),
            lines_then: u32::try_from(input.before.len()).ok()?,
        })
    }

    /// Where line `line` (1-based) is now: its new number, or `None` where the diff rewrote or
    /// deleted it (or it never was a line).
    pub(crate) fn line(&self, line: u64) -> Option<u64> {
        let index = u32::try_from(line.checked_sub(1)?).ok()?;
        if index >= self.lines_then {
            return None;
        }
        // The hunks before this line shift it by what they added less what they removed.
        let mut shift: i64 = 0;
        for (before, after) in &self.hunks {
            if before.start > index {
                break;
            }
            if before.contains(&index) {
                return None;
            }
            shift += i64::from(after.end - after.start) - i64::from(before.end - before.start);
        }
        u64::try_from(i64::from(index) + shift + 1).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::LineMap;

    fn map_lines(old: &[u8], new: &[u8], lines: &[u64]) -> Vec<Option<u64>> {
        let map = LineMap::new(old, new).expect("small");
        lines.iter().map(|&n| map.line(n)).collect()
    }

    #[test]
    fn unchanged_lines_follow_the_hunks_before_them_and_rewritten_ones_do_not() {
        let old = b"a\nb\nc\nd\ne\n";
        let new = b"new\na\nB\nc\ne\n";
        assert_eq!(
            map_lines(old, new, &[1, 2, 3, 4, 5, 6, 0]),
            vec![Some(2), None, Some(4), None, Some(5), None, None]
        );
    }

    #[test]
    fn a_pure_insertion_before_a_line_moves_it_down() {
        let old = b"x\ny\n";
        let new = b"x\n1\n2\ny\n";
        assert_eq!(map_lines(old, new, &[1, 2]), vec![Some(1), Some(4)]);
    }
}
