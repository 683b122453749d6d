//! Citations → verdicts against a checkout (docs/gate.md §3). Paths are tried under each prefix and
//! confined to the checkout (absolute, `..`-escaping and symlink-escaping targets are never
//! opened); each cited file is read at most once; symbols go to one batched scan.

mod confine;
mod follow;
pub(crate) mod guard;
pub(crate) mod layout;
pub(crate) mod scan;
pub(crate) mod symbols;

use crate::citation::{Citation, CitationLine, LineRef};
use crate::git::WorkTree;
use confine::PathMatch;
pub(crate) use follow::{Followed, HeadUse};
pub(crate) use guard::input_guard;
pub(crate) use layout::Layout;
use scan::FileText;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;

/// The verdict on one citation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    Ok,
    Changed,
    Missing,
}

impl Verdict {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Verdict::Ok => "ok",
            Verdict::Changed => "changed",
            Verdict::Missing => "missing",
        }
    }

    /// The 9-column text prefix.
    pub(crate) fn label(self) -> &'static str {
        match self {
            Verdict::Ok => "OK       ",
            Verdict::Changed => "CHANGED  ",
            Verdict::Missing => "MISSING  ",
        }
    }
}

/// One resolved citation (docs/gate.md §4.6 entry).
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    pub(crate) line: usize,
    pub(crate) raw: String,
    pub(crate) citation: Citation,
    pub(crate) symbol: bool,
    pub(crate) verdict: Verdict,
    pub(crate) reason: &'static str,
    pub(crate) resolved: Option<String>,
    pub(crate) also_resolves_to: Vec<String>,
    pub(crate) line_count: Option<u64>,
    pub(crate) found_at_line: Option<u64>,
    /// For a CHANGED citation with a fragment: how many lines of the file hold it (counted up
    /// to 2, which means more than one). One line is an unambiguous move (`--fix`).
    pub(crate) fragment_lines: Option<u32>,
    /// The file the cited line is in now when it is not the cited one: where git shows the
    /// file renamed since the handoff's `head:`, or the line moved to (`followed`).
    pub(crate) renamed_to: Option<String>,
    /// How the citation was followed to where it is now (docs/gate.md §3.5).
    pub(crate) followed: Followed,
    pub(crate) message: String,
}

/// Everything the resolver found.
#[derive(Debug, Clone)]
pub(crate) struct Resolution {
    pub(crate) layout: Layout,
    pub(crate) entries: Vec<Entry>,
    /// The handoff's `head:`, when it has one, and whether citations were followed from it.
    pub(crate) head: Option<HeadUse>,
}

impl Resolution {
    pub(crate) fn count(&self, v: Verdict) -> usize {
        self.entries.iter().filter(|e| e.verdict == v).count()
    }

    pub(crate) fn symbol_missing(&self) -> bool {
        self.entries
            .iter()
            .any(|e| e.symbol && e.verdict == Verdict::Missing)
    }
}

/// Resolves citations against one work tree.
pub(crate) struct Resolver<'w> {
    work_tree: &'w WorkTree,
    /// The work tree's root, opened once, for confined lookups relative to it.
    root_dir: Option<crate::fs::File>,
    layout: Layout,
    files: HashMap<PathBuf, Option<Rc<FileText>>>,
    /// How many more bytes of cited files may be kept in memory.
    budget: u64,
    /// `<prefix><first component>` → known absent (confine.rs).
    absent_dirs: std::cell::RefCell<HashMap<String, bool>>,
    /// Whether an OK citation's fragment lines are counted (up to 2): one line there is the
    /// line git would follow it to, so `follow` skips it.
    counting: bool,
}

impl<'w> Resolver<'w> {
    pub(crate) fn new(work_tree: &'w WorkTree) -> Resolver<'w> {
        let layout = Layout::derive(&work_tree.root, &work_tree.top_level);
        Resolver {
            work_tree,
            root_dir: crate::fs::File::open(&work_tree.root).ok(),
            layout,
            files: HashMap::new(),
            budget: scan::CACHE_BUDGET,
            absent_dirs: Default::default(),
            counting: false,
        }
    }

    /// This resolver, counting the lines an OK citation's fragment stands on (for `follow`).
    pub(crate) fn counting(mut self) -> Resolver<'w> {
        self.counting = true;
        self
    }

    /// Resolve citation lines, in order.
    pub(crate) fn resolve(&mut self, citations: &[CitationLine]) -> Resolution {
        let mut entries = Vec::with_capacity(citations.len());
        // Distinct symbol keys in first-seen order, with their index in the one batched scan.
        let mut symbol_keys: Vec<String> = Vec::new();
        let mut key_index: HashMap<String, usize> = HashMap::new();
        // Where every citation leads, first: then a cited file can be let go as soon as its
        // last citation is judged, so memory holds the files still to be cited, not all of them.
        let targets: Vec<PathMatch> = citations
            .iter()
            .map(|l| self.find_target(&l.citation.citation))
            .collect();
        let mut remaining: HashMap<PathBuf, usize> = HashMap::new();
        for t in &targets {
            if let PathMatch::Match { real, .. } = t {
                *remaining.entry(real.clone()).or_default() += 1;
            }
        }
        for (l, target) in citations.iter().zip(targets) {
            let real = match &target {
                PathMatch::Match { real, .. } => Some(real.clone()),
                _ => None,
            };
            let entry = self.resolve_one(l.line, &l.raw, &l.citation, target);
            if let Some(real) = real
                && let Some(left) = remaining.get_mut(&real)
            {
                *left -= 1;
                if *left == 0
                    && let Some(Some(text)) = self.files.remove(&real)
                {
                    self.budget += text.kept_bytes();
                }
            }
            if entry.symbol && !key_index.contains_key(&l.citation.citation) {
                key_index.insert(l.citation.citation.clone(), symbol_keys.len());
                symbol_keys.push(l.citation.citation.clone());
            }
            entries.push(entry);
        }
        if !symbol_keys.is_empty() {
            let found = symbols::search(&self.work_tree.root, &self.layout, &symbol_keys);
            for e in entries.iter_mut().filter(|e| e.symbol) {
                let hit = key_index
                    .get(&e.citation.citation)
                    .and_then(|&i| found.get(i).copied())
                    .unwrap_or(false);
                (e.verdict, e.reason, e.message) = if hit {
                    (Verdict::Ok, "symbol_found", "symbol found in source".into())
                } else {
                    (
                        Verdict::Missing,
                        "symbol_not_found",
                        "symbol not found in source".into(),
                    )
                };
            }
        }
        Resolution {
            layout: self.layout.clone(),
            entries,
            head: None,
        }
    }

    /// The text of the regular file `candidate` (at `real`, `size` bytes), read once per run.
    fn file(&mut self, real: &Path, candidate: &str, size: u64) -> Option<Rc<FileText>> {
        if let Some(known) = self.files.get(real) {
            return known.clone();
        }
        let text = match self.open_beneath(candidate) {
            Some(file) => FileText::read_from(real, file, size, &mut self.budget),
            None => FileText::read(real, &mut self.budget),
        }
        .map(Rc::new);
        self.files.insert(real.to_path_buf(), text.clone());
        text
    }

    fn resolve_one(&mut self, line: usize, raw: &str, c: &Citation, target: PathMatch) -> Entry {
        let mut e = Entry {
            line,
            raw: raw.to_string(),
            citation: c.clone(),
            symbol: false,
            verdict: Verdict::Missing,
            reason: "no_such_path",
            resolved: None,
            also_resolves_to: Vec::new(),
            line_count: None,
            found_at_line: None,
            fragment_lines: None,
            renamed_to: None,
            followed: Followed::Text,
            message: String::new(),
        };
        let (candidate, real, meta, also) = match target {
            PathMatch::Refused => {
                e.reason = "outside_checkout";
                e.message = "outside the checkout; not followed".into();
                return e;
            }
            PathMatch::NoMatch if crate::text::is_path_shaped(&c.citation) => {
                e.message = "no such file or directory".into();
                return e;
            }
            PathMatch::NoMatch => {
                e.symbol = true;
                e.reason = "symbol_not_found";
                e.message = "symbol not found in source".into();
                return e;
            }
            PathMatch::Match {
                candidate,
                real,
                meta,
                also,
            } => (candidate, real, meta, also),
        };
        e.resolved = Some(candidate.clone());
        e.also_resolves_to = also;
        let (verdict, reason, message) = self.judge(&candidate, &real, &meta, c, &mut e);
        e.verdict = verdict;
        e.reason = reason;
        e.message = message;
        e
    }

    /// The verdict table (docs/gate.md §3.5) for a matched target.
    fn judge(
        &mut self,
        resolved: &str,
        real: &Path,
        meta: &crate::fs::Metadata,
        c: &Citation,
        e: &mut Entry,
    ) -> (Verdict, &'static str, String) {
        if meta.is_dir() {
            return (Verdict::Ok, "directory", resolved.to_string());
        }
        if !meta.is_file() {
            return (
                Verdict::Ok,
                "not_regular",
                format!("{resolved} (not a regular file; nothing read)"),
            );
        }
        let Some(file) = self.file(real, resolved, meta.len()) else {
            // It exists but cannot be read, so nothing it claims can be confirmed.
            return (
                Verdict::Missing,
                "no_such_path",
                format!("{resolved} exists but cannot be read"),
            );
        };
        if file.binary {
            return (
                Verdict::Ok,
                "not_text",
                format!("{resolved} (not a text file; no line checked)"),
            );
        }
        e.line_count = Some(file.line_count);
        let lineref = c.line_ref();
        let fragment = c.fragment.as_deref();
        let hint = |smallest: u64| -> (Option<u64>, Option<u32>, String) {
            let Some(frag) = fragment else {
                return (None, None, String::new());
            };
            match file.nearest_line(frag, smallest) {
                (Some(n), count) => (Some(n), Some(count), format!(" (found at line {n})")),
                (None, count) => (None, Some(count), String::new()),
            }
        };
        let lr_text = c.lineref.as_deref().unwrap_or("");
        if let Some(lr) = &lineref {
            let smallest = lr.smallest().and_then(|n| n.value()).unwrap_or(u64::MAX);
            let changed = changed_reason(lr, file.line_count, resolved, lr_text);
            if let Some((reason, text)) = changed {
                let (found, count, suffix) = hint(smallest);
                (e.found_at_line, e.fragment_lines) = (found, count);
                return (Verdict::Changed, reason, format!("{text}{suffix}"));
            }
            return match fragment {
                None => (
                    Verdict::Ok,
                    "line_exists",
                    format!("{resolved} (line {lr_text} exists; content not given)"),
                ),
                Some(frag) => {
                    if file.any_line(frag, |n| lr.covers(n)) {
                        if self.counting {
                            e.fragment_lines = Some(file.nearest_line(frag, smallest).1);
                        }
                        (
                            Verdict::Ok,
                            "contains",
                            format!("{resolved}:{lr_text} contains the cited content"),
                        )
                    } else {
                        let (found, count, suffix) = hint(smallest);
                        (e.found_at_line, e.fragment_lines) = (found, count);
                        (
                            Verdict::Changed,
                            "not_contained",
                            format!("{resolved}:{lr_text} no longer contains: {frag}{suffix}"),
                        )
                    }
                }
            };
        }
        whole_file(&file, resolved, fragment)
    }
}

/// Rows 4–6 of the verdict table.
fn changed_reason(
    lr: &LineRef,
    count: u64,
    resolved: &str,
    lr_text: &str,
) -> Option<(&'static str, String)> {
    if let Some((a, b)) = lr.empty_group() {
        return Some((
            "empty_range",
            format!(
                "{resolved}:{lr_text} is an empty range: {}-{} ends before it starts",
                a.as_str(),
                b.as_str()
            ),
        ));
    }
    if lr.has_zero() {
        return Some((
            "line_zero",
            format!("{resolved} has no line 0; lines are numbered from 1"),
        ));
    }
    let largest = lr.largest()?;
    largest.exceeds(count).then(|| {
        (
            "past_end",
            format!(
                "{resolved} has {count} lines; line {} does not exist",
                largest.as_str()
            ),
        )
    })
}

/// A citation without a line: the file exists, and holds the fragment somewhere if it has one.
fn whole_file(
    file: &scan::FileText,
    resolved: &str,
    fragment: Option<&str>,
) -> (Verdict, &'static str, String) {
    match fragment {
        None => (Verdict::Ok, "exists", resolved.to_string()),
        Some(frag) if file.any_line(frag, |_| true) => (
            Verdict::Ok,
            "contains",
            format!("{resolved} contains the cited content"),
        ),
        Some(frag) => (
            Verdict::Changed,
            "not_contained",
            format!("{resolved} no longer contains: {frag}"),
        ),
    }
}
