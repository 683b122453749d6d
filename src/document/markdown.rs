//! The fence-aware line scanner (docs/gate.md §1.1): which lines are headings, fence openers,
//! fence content and closers. One pass; every later rule reads its result instead of
//! re-deciding what a `#` or a run of backticks means.

use crate::text;

/// What one line is, structurally.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LineKind {
    Body,
    Heading,
    FenceOpen,
    FenceContent,
    FenceClose,
}

/// A real heading (outside fences).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Heading {
    /// 0-based line index.
    pub(crate) index: usize,
    pub(crate) level: usize,
    pub(crate) text: String,
}

impl Heading {
    /// "A heading named N": text equal to N, or N followed by a space or tab.
    pub(crate) fn is_named(&self, name: &str) -> bool {
        match self.text.strip_prefix(name) {
            Some(rest) => rest.is_empty() || rest.starts_with([' ', '\t']),
            None => false,
        }
    }
}

/// A fenced block: its opener and, if it has one, its closer (0-based line indexes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Fence {
    pub(crate) open: usize,
    pub(crate) close: Option<usize>,
}

/// The result of the scan.
#[derive(Debug, Clone, Default)]
pub(crate) struct Scan {
    pub(crate) kinds: Vec<LineKind>,
    pub(crate) headings: Vec<Heading>,
    pub(crate) fences: Vec<Fence>,
}

/// Up to three leading spaces (U+0020 only) and what follows them.
fn after_indent(line: &str) -> Option<&str> {
    let spaces = line.bytes().take_while(|&b| b == b' ').count();
    (spaces <= 3).then(|| &line[spaces..])
}

/// A fence opener: (the fence character, its run length).
fn opener(line: &str) -> Option<(u8, usize)> {
    let rest = after_indent(line)?;
    let ch = *rest.as_bytes().first()?;
    if ch != b'`' && ch != b'~' {
        return None;
    }
    let run = rest.bytes().take_while(|&b| b == ch).count();
    if run < 3 || (ch == b'`' && rest[run..].contains('`')) {
        return None;
    }
    Some((ch, run))
}

fn closes(line: &str, ch: u8, len: usize) -> bool {
    let Some(rest) = after_indent(line) else {
        return false;
    };
    let run = rest.bytes().take_while(|&b| b == ch).count();
    run >= len && rest[run..].bytes().all(|b| b == b' ' || b == b'\t')
}

fn heading(line: &str) -> Option<(usize, &str)> {
    let rest = after_indent(line)?;
    let level = rest.bytes().take_while(|&b| b == b'#').count();
    if !(1..=6).contains(&level) {
        return None;
    }
    let after = &rest[level..];
    if after.is_empty() || after.starts_with([' ', '\t']) {
        Some((level, text::trim(after)))
    } else {
        None
    }
}

/// Scan every line once.
pub(crate) fn scan<S: AsRef<str>>(lines: &[S]) -> Scan {
    let mut out = Scan::default();
    let mut open: Option<(u8, usize)> = None;
    for (index, line) in lines.iter().enumerate() {
        let line = line.as_ref();
        let kind = if let Some((ch, len)) = open {
            if closes(line, ch, len) {
                open = None;
                if let Some(f) = out.fences.last_mut() {
                    f.close = Some(index);
                }
                LineKind::FenceClose
            } else {
                LineKind::FenceContent
            }
        } else if let Some(fence) = opener(line) {
            open = Some(fence);
            out.fences.push(Fence {
                open: index,
                close: None,
            });
            LineKind::FenceOpen
        } else if let Some((level, text)) = heading(line) {
            out.headings.push(Heading {
                index,
                level,
                text: text.to_string(),
            });
            LineKind::Heading
        } else {
            LineKind::Body
        };
        out.kinds.push(kind);
    }
    out
}

/// The contents of every `` `[^`]+` `` span, left to right without overlap.
pub(crate) fn backtick_spans(line: &str) -> impl Iterator<Item = &str> {
    let mut rest = line;
    std::iter::from_fn(move || {
        loop {
            let start = rest.find('`')?;
            let after = &rest[start + 1..];
            let end = after.find('`')?;
            if end == 0 {
                // "``" is not a span; the second backtick may open the next one.
                rest = after;
                continue;
            }
            rest = &after[end + 1..];
            return Some(&after[..end]);
        }
    })
}

/// The line with every `` `[^`]*` `` span deleted.
pub(crate) fn without_spans(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(start) = rest.find('`') {
        let after = &rest[start + 1..];
        match after.find('`') {
            Some(end) => {
                out.push_str(&rest[..start]);
                rest = &after[end + 1..];
            }
            None => break,
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headings_need_a_space_and_stay_out_of_fences() {
        let s = scan(&[
            "# Handoff",
            "#123 flaky",
            "```",
            "# not",
            "```",
            "   ## Next",
            "    # code",
        ]);
        let levels: Vec<_> = s.headings.iter().map(|h| (h.index, h.level)).collect();
        assert_eq!(levels, vec![(0, 1), (5, 2)]);
        assert_eq!(
            s.fences,
            vec![Fence {
                open: 2,
                close: Some(4)
            }]
        );
    }

    #[test]
    fn closer_must_match_character_and_length() {
        let s = scan(&["````md", "```", "~~~~", "````", "~~~", "x"]);
        assert_eq!(
            s.fences,
            vec![
                Fence {
                    open: 0,
                    close: Some(3)
                },
                Fence {
                    open: 4,
                    close: None
                }
            ]
        );
        let tab = scan(&["\t```", "x"]);
        assert!(tab.fences.is_empty());
        let info = scan(&["``` a`b", "x"]);
        assert!(info.fences.is_empty());
    }

    #[test]
    fn spans_do_not_overlap() {
        let spans: Vec<_> = backtick_spans("a `x` b `y` ``c` d").collect();
        assert_eq!(spans, vec!["x", "y", "c"]);
        assert_eq!(without_spans("a `x` b ``c"), "a  b c");
    }
}
