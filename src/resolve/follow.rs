//! Citations followed from the handoff's `head:` the way git follows a line (docs/gate.md §3.5,
//! "How a citation is followed"): the text rule says where the fragment stands now; git says
//! where the cited line went. Where both know, git wins — a line that moved is healed to where
//! it went even when the same text stands at the cited number, and a line git shows rewritten
//! is vouched for only where its text stands on exactly one line of its (renamed) file, or of
//! the searched tree. Without a `head:` the repository holds, the text rule stands alone.

use std::collections::HashMap;
use std::rc::Rc;

use super::{Entry, Resolution, Resolver, Verdict};
use crate::git::follow::{FileNow, LineMap, MAX_BYTES, Since};

/// How a citation was followed to where it is now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Followed {
    /// By its text alone (no `head:`, one the repository does not hold, a citation with no
    /// fragment or line, or a file not in `head:`).
    Text,
    /// Through git's line diff, in the same file.
    Mapped,
    /// Through git's rename detection and line diff, into the file's new name.
    Renamed,
    /// Its line left its file; its text stands on exactly one line of another file.
    MovedFile,
}

impl Followed {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Followed::Text => "text",
            Followed::Mapped => "mapped",
            Followed::Renamed => "renamed",
            Followed::MovedFile => "moved_file",
        }
    }
}

/// What the gate could do with the handoff's `head:`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum HeadUse {
    /// A commit of the repository: citations were followed from it.
    Held(String),
    /// Not a commit this repository holds: the text rule alone.
    NotHeld(String),
}

/// The most cited lines of one citation followed (a range's lines holding its fragment).
const LINES_FOLLOWED: usize = 16;

/// Where one citation's line is now, by git.
enum Now {
    /// The cited line, unchanged, at this path and line.
    At(String, u64),
    /// Rewritten or deleted in this file (its path now).
    Rewritten(String),
    /// Its file is gone from the work tree.
    Gone,
}

/// One cited file, read once per run: its text at `head:`, where it is now, and the line map.
struct Pair {
    then: Vec<u8>,
    now_path: Option<String>,
    map: Option<LineMap>,
}

/// The files followed in one run, by cited path (`None`: the text rule).
type Pairs = HashMap<String, Option<Rc<Pair>>>;

impl Resolver<'_> {
    /// Follow every citation of `resolution` from `head` (docs/gate.md §3.5).
    pub(crate) fn follow(&self, resolution: &mut Resolution, head: &str) {
        let Some(mut since) = Since::open(&self.work_tree.root, head) else {
            resolution.head = Some(HeadUse::NotHeld(head.trim().to_string()));
            return;
        };
        resolution.head = Some(HeadUse::Held(head.trim().to_string()));
        let mut pairs = Pairs::new();
        let mut lost: Vec<usize> = Vec::new();
        for (i, e) in resolution.entries.iter_mut().enumerate() {
            if settled_by_text(&since, e) {
                continue;
            }
            self.unsymbol(&since, e);
            match self.trace(&mut since, &mut pairs, e) {
                Some(now) => {
                    if !self.settle(e, now) {
                        lost.push(i);
                    }
                }
                None => hint_rename(&mut since, e),
            }
        }
        if lost.is_empty() {
            return;
        }
        let keys: Vec<String> = lost
            .iter()
            .map(|&i| {
                resolution.entries[i]
                    .citation
                    .fragment
                    .clone()
                    .unwrap_or_default()
            })
            .collect();
        let files = since.files_now();
        let found = super::symbols::locate(&self.work_tree.root, &files, &keys);
        for ((&i, place), key) in lost.iter().zip(found).zip(&keys) {
            let Some((path, line)) = place else { continue };
            // The walk reads HEAD's paths as the work tree has them; only a file opened beneath
            // the root (no symlinked folder out of it) is vouched for.
            let here = self
                .open_beneath(&path)
                .and_then(read_bounded)
                .map(|b| super::scan::lines_holding(&b, key, 2));
            if here.as_deref() == Some(&[line][..]) {
                moved_file(&mut resolution.entries[i], path, line);
            }
        }
    }

    /// A citation read as a symbol (no such path now, not path-shaped: `CHANGES:144`) that named
    /// a file at `head:` is that file's citation: MISSING by its path, then followed.
    fn unsymbol(&self, since: &Since, e: &mut Entry) {
        let c = &e.citation;
        if !e.symbol || c.fragment.is_none() || c.line_ref().is_none() {
            return;
        }
        let was_file = self
            .layout
            .prefixes
            .iter()
            .any(|p| since.is_file_then(&format!("{p}{}", c.citation)));
        if was_file {
            e.symbol = false;
            e.verdict = Verdict::Missing;
            e.reason = "no_such_path";
            e.message = "no such file or directory".into();
        }
    }

    /// Where git says the cited line is now; `None` when the text rule stands (nothing to
    /// follow: a symbol, no fragment or line, a file not in `head:` or too big to compare).
    fn trace(&self, since: &mut Since, pairs: &mut Pairs, e: &Entry) -> Option<Now> {
        let c = &e.citation;
        let (Some(fragment), Some(lineref)) = (c.fragment.as_deref(), c.line_ref()) else {
            return None;
        };
        if e.symbol {
            return None;
        }
        // The file the citation named when it was written: the first prefix that held it then
        // (today's layout, which may find another file now: a moved tree, a new prefix).
        let path = self
            .layout
            .prefixes
            .iter()
            .map(|p| format!("{p}{}", c.citation))
            .find(|candidate| since.is_file_then(candidate))?;
        let pair = match pairs.get(&path) {
            Some(known) => known.clone()?,
            None => {
                let pair = self.pair(since, &path).map(Rc::new);
                pairs.insert(path.clone(), pair.clone());
                pair?
            }
        };
        let cited: Vec<u64> = super::scan::lines_holding(&pair.then, fragment, usize::MAX)
            .into_iter()
            .filter(|&n| lineref.covers(n))
            .take(LINES_FOLLOWED)
            .collect();
        if cited.is_empty() {
            // Its text was not on the cited line when it was written: nothing to follow.
            return None;
        }
        let (Some(now_path), Some(map)) = (&pair.now_path, &pair.map) else {
            return Some(Now::Gone);
        };
        let same = e.resolved.as_deref() == Some(now_path.as_str());
        let mapped: Vec<u64> = cited.iter().filter_map(|&n| map.line(n)).collect();
        let kept = mapped
            .iter()
            .find(|&&n| same && lineref.covers(n))
            .or(mapped.first());
        Some(match kept {
            Some(&n) => Now::At(now_path.clone(), n),
            None => Now::Rewritten(now_path.clone()),
        })
    }

    /// The cited file `path` at `head:` beside where it is now; `None` when the text rule
    /// stands (not a file of `head:`, or one too big to compare on either side).
    fn pair(&self, since: &mut Since, path: &str) -> Option<Pair> {
        let then = since.then(path)?;
        let now_path = match since.file_now(path) {
            FileNow::Renamed(to) => to,
            // Gone from HEAD but on disk (not yet committed), or still there.
            FileNow::Same | FileNow::Gone => path.to_string(),
        };
        let Some(file) = self.open_beneath(&now_path) else {
            return Some(Pair {
                then,
                now_path: None,
                map: None,
            });
        };
        let now = read_bounded(file)?;
        let map = LineMap::new(&then, &now)?;
        Some(Pair {
            then,
            now_path: Some(now_path),
            map: Some(map),
        })
    }

    /// `e`'s verdict from where git says its line is; `false` when the line left its file and
    /// the searched tree is the last place to look.
    fn settle(&self, e: &mut Entry, now: Now) -> bool {
        let cited = e
            .resolved
            .clone()
            .unwrap_or_else(|| e.citation.citation.clone());
        let lr = e.citation.lineref.clone().unwrap_or_default();
        match now {
            Now::At(path, line) => {
                place(e, &cited, &path, line);
                true
            }
            Now::Rewritten(path) => {
                let fragment = e.citation.fragment.as_deref().unwrap_or_default();
                let here = self
                    .open_beneath(&path)
                    .and_then(read_bounded)
                    .map(|b| super::scan::lines_holding(&b, fragment, 2))
                    .unwrap_or_default();
                if let [line] = here[..] {
                    place(e, &cited, &path, line);
                    return true;
                }
                (e.found_at_line, e.fragment_lines) = (None, None);
                if here.is_empty() && path == cited {
                    // Its text is gone from the file: the text rule's CHANGED says so.
                    e.followed = Followed::Mapped;
                } else if path == cited {
                    e.followed = Followed::Mapped;
                    e.verdict = Verdict::Changed;
                    e.reason = "rewritten";
                    e.message = format!(
                        "{cited}:{lr} was rewritten since the handoff's head: (git's diff); its text stands on several lines"
                    );
                } else {
                    e.followed = Followed::Renamed;
                    e.renamed_to = Some(path.clone());
                    renamed(
                        e,
                        &cited,
                        &path,
                        "where git's diff shows the cited line rewritten",
                    );
                }
                false
            }
            Now::Gone => {
                (e.found_at_line, e.fragment_lines) = (None, None);
                if e.verdict != Verdict::Missing {
                    // The text stands in a file the citation finds today, not the one it named.
                    e.verdict = Verdict::Changed;
                    e.reason = "rewritten";
                    e.message = format!(
                        "{cited} is not the file cited at the handoff's head: (git shows that one deleted)"
                    );
                }
                false
            }
        }
    }
}

/// A citation of the file it named, still a file of HEAD, whose fragment stands on exactly one
/// line of it (OK there, or CHANGED with that line found): git would say the same, so it is not
/// asked. A line git kept holds its text, so it is that one line; one git shows rewritten is
/// placed where its text stands on exactly one line (`settle`); one whose text was not on the
/// cited line at `head:` is left to the text rule.
fn settled_by_text(since: &Since, e: &Entry) -> bool {
    let one_line = match e.verdict {
        Verdict::Ok => e.fragment_lines == Some(1),
        Verdict::Changed => e.fragment_lines == Some(1) && e.found_at_line.is_some(),
        Verdict::Missing => false,
    };
    one_line
        && e.resolved.as_deref() == Some(e.citation.citation.as_str())
        && since.is_file_now(&e.citation.citation)
}

/// A MISSING citation git cannot follow line by line (no fragment or line) whose file git
/// shows renamed: where it went, as a hint; its line is not vouched for.
fn hint_rename(since: &mut Since, e: &mut Entry) {
    if e.symbol || e.verdict != Verdict::Missing || e.reason != "no_such_path" {
        return;
    }
    if let FileNow::Renamed(to) = since.file_now(&e.citation.citation) {
        e.followed = Followed::Renamed;
        e.message = format!("no such file or directory — renamed to {to}");
        e.renamed_to = Some(to);
    }
}

/// A regular file's bytes, when within the diff's bound.
fn read_bounded(file: crate::fs::FdFile) -> Option<Vec<u8>> {
    use std::io::Read;
    let meta = file.metadata().ok()?;
    if !meta.is_file() || meta.len() > MAX_BYTES {
        return None;
    }
    let mut bytes = Vec::new();
    file.take(MAX_BYTES).read_to_end(&mut bytes).ok()?;
    Some(bytes)
}

/// `e` is at `path:line` now (git's word, or its text on exactly one line there).
fn place(e: &mut Entry, cited: &str, path: &str, line: u64) {
    let lr = e.citation.lineref.clone().unwrap_or_default();
    e.found_at_line = Some(line);
    e.fragment_lines = Some(1);
    if path != cited {
        e.followed = Followed::Renamed;
        e.renamed_to = Some(path.to_string());
        renamed(e, cited, path, &format!("line {line}"));
        return;
    }
    e.followed = Followed::Mapped;
    e.renamed_to = None;
    if e.citation.line_ref().is_some_and(|l| l.covers(line)) {
        (e.verdict, e.reason) = (Verdict::Ok, "contains");
        (e.found_at_line, e.fragment_lines) = (None, None);
        e.message = format!("{cited}:{lr} contains the cited content");
    } else {
        (e.verdict, e.reason) = (Verdict::Changed, "moved");
        e.message = format!("{cited}:{lr} moved to line {line} (git's diff)");
    }
}

/// `e`'s file was renamed to `path` since `head:`: MISSING where the cited path names nothing
/// now, CHANGED where it finds another file (a prefix the layout gained).
fn renamed(e: &mut Entry, cited: &str, path: &str, what: &str) {
    if e.resolved.is_some() {
        e.verdict = Verdict::Changed;
        e.reason = "renamed";
        e.message = format!(
            "{cited} is not the file cited at the handoff's head: — that one was renamed to {path}, {what}"
        );
    } else {
        e.verdict = Verdict::Missing;
        e.reason = "no_such_path";
        e.message = format!("no such file or directory — renamed to {path}, {what}");
    }
}

/// `e`'s line left its file and its text stands on exactly one line of the searched tree.
fn moved_file(e: &mut Entry, path: String, line: u64) {
    e.followed = Followed::MovedFile;
    e.verdict = if e.resolved.is_some() {
        Verdict::Changed
    } else {
        Verdict::Missing
    };
    e.reason = "moved_file";
    e.message = format!("moved to {path}:{line}");
    e.renamed_to = Some(path);
    e.found_at_line = Some(line);
    e.fragment_lines = Some(1);
}
