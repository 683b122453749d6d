//! Pointers that heal (docs/gate.md §2.14): from a gate run, the citations whose cited line
//! moved — CHANGED, one line number, and the fragment held by exactly one line of the same file
//! — and the document with those line numbers rewritten wherever it cites that `path:line`
//! (in `## Pointers` and in the prose), every other byte kept. What cannot be moved safely is
//! named and left alone.

use std::collections::BTreeMap;

use serde::Serialize;

use super::Report;
use super::run_gate::{after_renumbering, gate_bytes};
use crate::resolve::{Entry, Verdict};

/// One citation moved: `path:from` now reads `path:to` — or `renamed_to:to`, when git shows its
/// file renamed since the handoff's `head:`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Move {
    pub(crate) path: String,
    pub(crate) from: u64,
    pub(crate) to: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) renamed_to: Option<String>,
}

impl Move {
    /// Where it goes, as the `moved` lines say it: `25`, or `src/new.rs:25` after a rename.
    pub(crate) fn target(&self) -> String {
        match &self.renamed_to {
            Some(path) => format!("{path}:{}", self.to),
            None => self.to.to_string(),
        }
    }
}

/// A failing citation left as it is, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Left {
    pub(crate) citation: String,
    pub(crate) why: &'static str,
}

/// What `--fix` found in a gate run.
#[derive(Debug, Clone, Default, Serialize)]
pub(crate) struct Healing {
    pub(crate) moves: Vec<Move>,
    pub(crate) left: Vec<Left>,
}

/// `verify-handoff --fix FILE [CHECKOUT]`: what moved, what was left, and the gate's report on
/// the result.
#[derive(Debug)]
pub(crate) struct Fixed {
    pub(crate) healing: Healing,
    /// The document was rewritten on disk (not with `--dry-run`, and only when something moved).
    pub(crate) written: bool,
    pub(crate) report: Report,
    /// Why the rewrite could not be written (the report is then the one on the file as it is).
    pub(crate) failed: Option<String>,
}

/// Gate `file`, move what moved, gate the result, and (unless `dry_run`) replace the file with
/// it atomically, keeping its mode; a symlink is written through, never replaced.
pub(crate) fn fix_file(file: &str, checkout: Option<&str>, dry_run: bool) -> Fixed {
    let path = std::path::Path::new(file);
    if let Some(why) = not_editable(path) {
        return Fixed {
            healing: Healing::default(),
            written: false,
            report: Report::from_input_error(super::Mode::Gate, file, why),
            failed: None,
        };
    }
    let bytes = match crate::input::read_path(path) {
        Ok(b) => b,
        Err(e) => {
            return Fixed {
                healing: Healing::default(),
                written: false,
                report: Report::from_input_error(super::Mode::Gate, file, e),
                failed: None,
            };
        }
    };
    let original = bytes.clone();
    let before = gate_bytes(file, bytes.clone(), checkout);
    let healing = moves(&before);
    let text = match String::from_utf8(bytes) {
        Ok(t) if !healing.moves.is_empty() => t,
        _ => {
            return Fixed {
                healing,
                written: false,
                report: before,
                failed: None,
            };
        }
    };
    let healed = rewrite(&text, &healing.moves);
    let report = regate(&before, &healed, file, checkout, &healing.moves);
    if dry_run {
        return Fixed {
            healing,
            written: false,
            report,
            failed: None,
        };
    }
    let written = crate::fs::canonicalize(path).and_then(|real| {
        // What a killed earlier fix of this file left beside it.
        crate::durable::clean_dead_temps_of(&real);
        let was = crate::fs::metadata(&real)?;
        // An edit saved while we gated is the user's: nothing is written over it.
        let unchanged = || match crate::fs::read(&real) {
            Ok(now) if now == original => Ok(()),
            _ => Err(std::io::Error::other(
                "it changed while it was being gated (an edit of yours is kept); run --fix again",
            )),
        };
        crate::durable::replace_edited(&real, healed.as_bytes(), &was, &unchanged)
    });
    match written {
        Ok(()) => Fixed {
            healing,
            written: true,
            report,
            failed: None,
        },
        Err(e) => Fixed {
            healing,
            written: false,
            report: before,
            failed: Some(format!("{file} was not changed: {e}")),
        },
    }
}

/// Why `path` is no file `--fix` may edit: stdin, not a regular file (a FIFO, a device, a
/// folder: through a link too), a file with more than one name (a hard link: replacing it would
/// part the names), or one owned by another user that this user could not give back.
fn not_editable(path: &std::path::Path) -> Option<crate::input::InputError> {
    use std::os::unix::fs::MetadataExt;
    let refuse = |why: &str| Some(crate::input::InputError::Refused(why.to_string()));
    if path.as_os_str() == "-" {
        return refuse("--fix edits a file in place: standard input is not accepted");
    }
    let meta = crate::fs::metadata(path).ok()?;
    if !meta.is_file() {
        return refuse("--fix edits only a regular file (this is a FIFO, a device or a folder)");
    }
    if meta.nlink() > 1 {
        return refuse(
            "--fix does not edit a file with more than one name (a hard link): replacing it would part them",
        );
    }
    let me = nix::unistd::geteuid();
    if !me.is_root() && meta.uid() != me.as_raw() {
        return refuse("--fix does not edit another user's file: its owner would change");
    }
    None
}

impl Fixed {
    /// For people: a line per move and per citation left alone, what happened to the file, a
    /// blank line, then the gate's report on the result.
    pub(crate) fn text_lines(&self, file: &str, dry_run: bool) -> Vec<(super::Stream, String)> {
        use super::Stream;
        let mut out: Vec<(Stream, String)> = Vec::new();
        if self.report.input_error.is_some() {
            return self.report.text_lines();
        }
        for m in &self.healing.moves {
            out.push((
                Stream::Out,
                format!("moved    {}:{} → {}", m.path, m.from, m.target()),
            ));
        }
        for l in &self.healing.left {
            out.push((Stream::Out, format!("left     {} — {}", l.citation, l.why)));
        }
        let n = self.healing.moves.len();
        let said = match (n, dry_run, self.written) {
            (0, _, _) => "nothing to fix: no citation moved to a line of its own".to_string(),
            (_, true, _) => format!(
                "would fix {file}: {} (--dry-run: nothing written)",
                citations(n)
            ),
            (_, false, true) => format!("fixed    {file}: {}", citations(n)),
            (_, false, false) => format!(
                "not fixed: {}",
                self.failed
                    .as_deref()
                    .unwrap_or("the file could not be written")
            ),
        };
        out.push((Stream::Out, said));
        out.push((Stream::Out, String::new()));
        out.extend(self.report.text_lines());
        out
    }

    /// The JSON: the moves, what was left, whether the file was written, the gate's report on
    /// the result.
    pub(crate) fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "moves": self.healing.moves,
            "left": self.healing.left,
            "written": self.written,
            "failed": self.failed,
            "report": self.report.json(),
        })
    }
}

impl Healing {
    /// A line per move and per failing citation left alone.
    pub(crate) fn lines(&self) -> Vec<String> {
        let moved = self
            .moves
            .iter()
            .map(|m| format!("moved    {}:{} → {}", m.path, m.from, m.target()));
        let left = self
            .left
            .iter()
            .map(|l| format!("left     {} — {}", l.citation, l.why));
        moved.chain(left).collect()
    }
}

/// `1 citation moved`, `3 citations moved`.
pub(crate) fn citations(n: usize) -> String {
    if n == 1 {
        "1 citation moved".into()
    } else {
        format!("{n} citations moved")
    }
}

/// The gate's report on `healed` (`before`'s document with `moves` made): a moved citation's
/// fragment is on the line it now cites — the resolver found it there — so it holds; every
/// other citation and file is as `before` saw it.
pub(crate) fn regate(
    before: &Report,
    healed: &str,
    file: &str,
    checkout: Option<&str>,
    moves: &[Move],
) -> Report {
    let doc = crate::document::Document::parse(&healed.replace('\r', ""));
    let quick = after_renumbering(before, &doc, file, |entry, line| {
        let from = single_line(entry)?;
        let to = moves
            .iter()
            .find(|m| m.path == entry.citation.citation && m.from == from)?
            .to;
        (healed_to(entry) == Some((to, None))
            && line.citation.lineref.as_deref() == Some(&to.to_string()))
        .then(|| {
            let mut e = entry.clone();
            let resolved = e.resolved.clone().unwrap_or_default();
            e.raw = line.raw.clone();
            e.citation = line.citation.clone();
            e.verdict = Verdict::Ok;
            e.reason = "contains";
            e.message = format!("{resolved}:{to} contains the cited content");
            e.found_at_line = None;
            e.fragment_lines = None;
            e
        })
    });
    // Anything else changed with them: the whole gate again.
    quick.unwrap_or_else(|| gate_bytes(file, healed.as_bytes().to_vec(), checkout))
}

/// Where one citation of a `path:line` goes: its new line, and its new file after a rename.
type Target = Option<(u64, Option<String>)>;

/// The moves a gate run allows, and the failing citations it leaves alone.
pub(crate) fn moves(report: &Report) -> Healing {
    let Some(resolution) = &report.citations else {
        return Healing::default();
    };
    // Every (path, line) cited, with where each citation of it goes: a move is made only when
    // all of them agree (one line cited twice for two fragments that went apart stays).
    let mut wanted: BTreeMap<(String, u64), Vec<Target>> = BTreeMap::new();
    let mut left = Vec::new();
    for e in &resolution.entries {
        let line = single_line(e);
        let target = match (e.verdict, line) {
            (Verdict::Ok, _) => None,
            (_, Some(_)) if healed_to(e).is_some() => healed_to(e),
            _ => {
                left.push(Left {
                    citation: shown(e),
                    why: why_left(e),
                });
                None
            }
        };
        if let Some(line) = line {
            wanted
                .entry((e.citation.citation.clone(), line))
                .or_default()
                .push(target);
        }
    }
    let mut moves = Vec::new();
    for ((path, from), targets) in wanted {
        let first = targets.first().cloned().flatten();
        match first {
            Some((to, renamed_to))
                if targets.iter().all(|t| *t == Some((to, renamed_to.clone()))) =>
            {
                moves.push(Move {
                    path,
                    from,
                    to,
                    renamed_to,
                })
            }
            _ if targets.iter().any(Option::is_some) => left.push(Left {
                citation: format!("{path}:{from}"),
                why: "cited more than once, and not all of them moved to one line",
            }),
            _ => {}
        }
    }
    Healing { moves, left }
}

/// Where a failing citation goes: the one line its fragment is on now (its line followed by
/// git, or its text on exactly one line), and its new file when that is another one (a rename,
/// or a line moved to another file).
fn healed_to(e: &Entry) -> Target {
    (e.verdict != Verdict::Ok && !e.symbol && e.fragment_lines == Some(1))
        .then_some(e.found_at_line)
        .flatten()
        .map(|to| (to, e.renamed_to.clone()))
}

/// The citation's line number, when it cites exactly one line.
fn single_line(e: &Entry) -> Option<u64> {
    let lineref = e.citation.lineref.as_deref()?;
    if lineref.is_empty() || !lineref.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    lineref.parse().ok()
}

fn shown(e: &Entry) -> String {
    match &e.citation.lineref {
        Some(l) => format!("{}:{l}", e.citation.citation),
        None => e.citation.citation.clone(),
    }
}

fn why_left(e: &Entry) -> &'static str {
    if e.verdict == Verdict::Missing {
        return if e.symbol {
            "the symbol is not in the tree"
        } else {
            "the file is missing"
        };
    }
    if single_line(e).is_none() {
        return "it cites a range or no line: only single lines are moved";
    }
    match e.fragment_lines {
        None => "it gives no fragment to find",
        Some(0) => "the fragment is nowhere in the file",
        _ => "the fragment is on more than one line of the file",
    }
}

/// `text` with every `path:from` of `moves` rewritten to `path:to`: only where the path starts
/// a word (not inside a longer path), the line reference is exactly `from` and cites one line
/// (not `path:N:M`, a range `N-M`, `N–M`, `N..M` or a list `N,M`, `N, M`), and the place is
/// outside every fence but the Pointers block (a quoted log line is not a citation). All edits
/// are found first and made at once, so a move never feeds another.
pub(crate) fn rewrite(text: &str, moves: &[Move]) -> String {
    let quoted = quoted_lines(text);
    let line_starts: Vec<usize> = std::iter::once(0)
        .chain(text.match_indices('\n').map(|(i, _)| i + 1))
        .collect();
    let line_of = |at: usize| line_starts.partition_point(|&s| s <= at) - 1;
    let mut edits: Vec<(usize, usize, String)> = Vec::new();
    for m in moves {
        let needle = format!("{}:", m.path);
        for (at, _) in text.match_indices(&needle) {
            let before = text[..at].chars().next_back();
            if before.is_some_and(is_path_char) || quoted.get(line_of(at)) == Some(&true) {
                continue;
            }
            let start = at + needle.len();
            let rest = &text[start..];
            let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
            if !more_than_one_line(&rest[digits..]) && rest[..digits] == m.from.to_string() {
                match &m.renamed_to {
                    Some(path) => edits.push((at, start + digits, format!("{path}:{}", m.to))),
                    None => edits.push((start, start + digits, m.to.to_string())),
                }
            }
        }
    }
    edits.sort_by_key(|e| e.0);
    edits.dedup_by_key(|e| e.0);
    let mut out = String::with_capacity(text.len());
    let mut done = 0;
    for (start, end, digits) in edits {
        if start < done {
            continue;
        }
        out.push_str(&text[done..start]);
        out.push_str(&digits);
        done = end;
    }
    out.push_str(&text[done..]);
    out
}

/// Whether what follows a line number makes it more than one line: `:7` (a column), a range
/// (`-30`, `–30`, `—30`, `..30`, spaces allowed around a dash) or a list (`,31`, `, 31`). A
/// comma or dot ending a clause (`24, then`, `24.`) does not.
fn more_than_one_line(after: &str) -> bool {
    let digit_after = |s: &str| s.trim_start().starts_with(|c: char| c.is_ascii_digit());
    if let Some(rest) = after.strip_prefix(':') {
        return rest.starts_with(|c: char| c.is_ascii_digit());
    }
    if let Some(rest) = after.strip_prefix("..") {
        return digit_after(rest);
    }
    let trimmed = after.trim_start_matches(' ');
    match trimmed.chars().next() {
        Some(c @ ('-' | '–' | '—' | ',')) => digit_after(&trimmed[c.len_utf8()..]),
        _ => false,
    }
}

/// For each line of `text`, whether it lies in a fence other than the Pointers block (its
/// opener and closer included): what is quoted there is never rewritten.
fn quoted_lines(text: &str) -> Vec<bool> {
    let doc = crate::document::Document::parse(&text.replace('\r', ""));
    let pointers = doc
        .pointers
        .as_ref()
        .and_then(|p| p.fence.as_ref())
        .map(|f| f.open);
    let mut quoted = vec![false; doc.lines.len()];
    for fence in doc.fences.iter().filter(|f| Some(f.open) != pointers) {
        let end = fence.close.unwrap_or(doc.lines.len().saturating_sub(1));
        for q in quoted.iter_mut().take(end + 1).skip(fence.open) {
            *q = true;
        }
    }
    quoted
}

/// A character that can continue a path: then a match that follows it is inside a longer path.
fn is_path_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '/' | '.' | '_' | '-' | '\\')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mv(path: &str, from: u64, to: u64) -> Move {
        Move {
            renamed_to: None,
            path: path.into(),
            from,
            to,
        }
    }

    #[test]
    fn only_the_cited_line_numbers_change() {
        let text = "see `a.rs:24` and b/a.rs:24, a.rs:24-30, a.rs:240, a.rs:24,31, a.rs:24.\r\n- a.rs:24 | fn x\n";
        let out = rewrite(text, &[mv("a.rs", 24, 31)]);
        assert_eq!(
            out,
            "see `a.rs:31` and b/a.rs:24, a.rs:24-30, a.rs:240, a.rs:24,31, a.rs:31.\r\n- a.rs:31 | fn x\n"
        );
    }

    #[test]
    fn moves_are_made_at_once_never_in_a_chain() {
        let out = rewrite("a.rs:1 a.rs:2\n", &[mv("a.rs", 1, 2), mv("a.rs", 2, 3)]);
        assert_eq!(out, "a.rs:2 a.rs:3\n");
    }
}
