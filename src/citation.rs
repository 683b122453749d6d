//! The ONE citation grammar (docs/gate.md §1.6). Pointers lines, `--citations` input and backticked
//! prose tokens all go through `Citation::parse`, so coverage, both guards and the resolver can
//! never disagree about what a line cites. The step order is load-bearing; see the tests.

use std::cmp::Ordering;

use crate::text;

/// One non-skipped input line: its 1-based number, its text, and what it cites.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CitationLine {
    pub(crate) line: usize,
    pub(crate) raw: String,
    pub(crate) citation: Citation,
}

/// Parse numbered lines, dropping blanks and `#` comments.
pub(crate) fn parse_lines<'a>(
    lines: impl IntoIterator<Item = (usize, &'a str)>,
) -> Vec<CitationLine> {
    lines
        .into_iter()
        .filter_map(|(line, raw)| {
            Citation::parse(raw).map(|citation| CitationLine {
                line,
                raw: raw.to_string(),
                citation,
            })
        })
        .collect()
}

/// Whether `s` matches `[0-9]+([,-][0-9]+)*`.
fn is_lineref(s: &str) -> bool {
    !s.is_empty()
        && s.split([',', '-'])
            .all(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// Split a trailing `:<lineref>` off. A lineref holds no `:`, so only the last colon can
/// start one.
fn split_lineref(text: &str) -> (&str, Option<&str>) {
    match text.rfind(':') {
        Some(at) if is_lineref(&text[at + 1..]) => (&text[..at], Some(&text[at + 1..])),
        _ => (text, None),
    }
}

/// One parsed citation line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Citation {
    /// The path or symbol, normalised (markers, backticks and wrapping removed).
    pub citation: String,
    /// The digits after the last `:` (`24`, `233-234`, `93,109`), without the colon.
    pub lineref: Option<String>,
    /// The expected substring after `|`, backticks deleted and trimmed.
    pub fragment: Option<String>,
}

impl Citation {
    /// Parse one line; `None` when it is blank or a `#` comment.
    pub fn parse(line: &str) -> Option<Citation> {
        let (part, fragment) = match line.split_once('|') {
            Some((left, right)) => {
                let cleaned: String = right.chars().filter(|&c| c != '`').collect();
                let trimmed = text::trim(&cleaned);
                (left, (!trimmed.is_empty()).then(|| trimmed.to_string()))
            }
            None => (line, None),
        };
        let part = strip_list_marker(part.trim_start_matches(text::is_ws));
        let unticked: String = part.chars().filter(|&c| c != '`').collect();
        let mut rest = text::trim(&unticked);
        let before = rest.len();
        rest = rest.trim_start_matches(['(', '[']);
        let opened_bracket = unticked_removed_bracket(&unticked, before - rest.len());
        rest = if opened_bracket {
            rest.trim_end_matches(['.', ',', ';', ')', ']'])
        } else {
            rest.trim_end_matches(['.', ',', ';', ')'])
        };
        let (citation, lineref) = split_lineref(rest);
        let lineref = lineref.map(str::to_string);
        if citation.is_empty() || citation.starts_with('#') {
            return None;
        }
        Some(Citation {
            citation: citation.to_string(),
            lineref,
            fragment,
        })
    }

    /// The display form: citation, plus `:lineref` when there is one.
    pub fn display(&self) -> String {
        match &self.lineref {
            Some(lr) => format!("{}:{}", self.citation, lr),
            None => self.citation.clone(),
        }
    }

    /// The parsed line reference, if any.
    pub(crate) fn line_ref(&self) -> Option<LineRef> {
        self.lineref.as_deref().map(LineRef::parse)
    }
}

/// Whether the leading run of `(`/`[` removed from the trimmed text held a `[`.
fn unticked_removed_bracket(unticked: &str, removed: usize) -> bool {
    text::trim(unticked)[..removed].contains('[')
}

/// Remove one list marker (`-`, `*`, `+`, `1.`, `12)`) and the whitespace after it, but only
/// when at least one whitespace character follows the marker.
fn strip_list_marker(s: &str) -> &str {
    let marker_len = match s.as_bytes().first() {
        Some(b'-' | b'*' | b'+') => 1,
        Some(b'0'..=b'9') => {
            let digits = s.bytes().take_while(u8::is_ascii_digit).count();
            match s.as_bytes().get(digits) {
                Some(b'.' | b')') if digits <= 9 => digits + 1,
                _ => return s,
            }
        }
        _ => return s,
    };
    let after = &s[marker_len..];
    if after.starts_with(text::is_ws) {
        after.trim_start_matches(text::is_ws)
    } else {
        s
    }
}

/// A line number as written, compared by value with no overflow: the digits with leading
/// zeros removed, ordered by length and then lexically.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineNo(String);

impl LineNo {
    fn parse(digits: &str) -> LineNo {
        let stripped = digits.trim_start_matches('0');
        LineNo(if stripped.is_empty() {
            "0".into()
        } else {
            stripped.into()
        })
    }

    /// The value when it fits in `u64`; `None` means larger than any line count.
    pub(crate) fn value(&self) -> Option<u64> {
        self.0.parse().ok()
    }

    /// Whether this number is line `n` or beyond `n`.
    pub(crate) fn exceeds(&self, n: u64) -> bool {
        self.value().is_none_or(|v| v > n)
    }

    pub(crate) fn is_zero(&self) -> bool {
        self.0 == "0"
    }

    pub(crate) fn as_str(&self) -> &str {
        &self.0
    }
}

impl Ord for LineNo {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0
            .len()
            .cmp(&other.0.len())
            .then_with(|| self.0.cmp(&other.0))
    }
}

impl PartialOrd for LineNo {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// A lineref split into groups; each group runs from its first number to its last.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineRef {
    pub(crate) groups: Vec<Vec<LineNo>>,
}

impl LineRef {
    pub fn parse(lineref: &str) -> LineRef {
        LineRef {
            groups: lineref
                .split(',')
                .map(|g| g.split('-').map(LineNo::parse).collect())
                .collect(),
        }
    }

    fn numbers(&self) -> impl Iterator<Item = &LineNo> {
        self.groups.iter().flatten()
    }

    /// The first group whose first number is greater than its last.
    pub fn empty_group(&self) -> Option<(&LineNo, &LineNo)> {
        self.groups.iter().find_map(|g| {
            let (first, last) = (g.first()?, g.last()?);
            (first > last).then_some((first, last))
        })
    }

    pub(crate) fn has_zero(&self) -> bool {
        self.numbers().any(LineNo::is_zero)
    }

    pub fn largest(&self) -> Option<&LineNo> {
        self.numbers().max()
    }

    pub(crate) fn smallest(&self) -> Option<&LineNo> {
        self.numbers().min()
    }

    /// Whether 1-based line `n` lies in any group's interval (nothing is ever expanded).
    pub fn covers(&self, n: u64) -> bool {
        self.groups.iter().any(|g| match (g.first(), g.last()) {
            (Some(first), Some(last)) => !first.exceeds(n) && last.exceeds(n - 1),
            _ => false,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(line: &str) -> Option<(String, Option<String>, Option<String>, String)> {
        Citation::parse(line).map(|c| {
            let display = c.display();
            (c.citation, c.lineref, c.fragment, display)
        })
    }

    fn s(x: &str) -> Option<String> {
        Some(x.to_string())
    }

    #[test]
    fn contract_examples() {
        assert_eq!(
            parts("app/Mail/Invoice.php:24 | public function build"),
            Some((
                "app/Mail/Invoice.php".into(),
                s("24"),
                s("public function build"),
                "app/Mail/Invoice.php:24".into()
            ))
        );
        assert_eq!(
            parts("- `backend/routes/api.php:233` | `Route::get('/issues'`"),
            Some((
                "backend/routes/api.php".into(),
                s("233"),
                s("Route::get('/issues'"),
                "backend/routes/api.php:233".into()
            ))
        );
        assert_eq!(
            parts("(backend/routes/api.php:233-234)"),
            Some((
                "backend/routes/api.php".into(),
                s("233-234"),
                None,
                "backend/routes/api.php:233-234".into()
            ))
        );
        assert_eq!(
            parts("app/Helpers/Mention.php:93,109."),
            Some((
                "app/Helpers/Mention.php".into(),
                s("93,109"),
                None,
                "app/Helpers/Mention.php:93,109".into()
            ))
        );
        assert_eq!(parts("[src/x.ts:5]").map(|p| p.3), s("src/x.ts:5"));
        assert_eq!(parts("pages/[slug]").map(|p| p.3), s("pages/[slug]"));
        assert_eq!(parts("2. app/x.php").map(|p| p.3), s("app/x.php"));
        assert_eq!(
            parts("StartWorkOnIssueAction | the action"),
            Some((
                "StartWorkOnIssueAction".into(),
                None,
                s("the action"),
                "StartWorkOnIssueAction".into()
            ))
        );
        assert_eq!(parts("# the boundary"), None);
        assert_eq!(parts(""), None);
        assert_eq!(parts("   "), None);
    }

    #[test]
    fn empty_fragment_means_not_given_and_punctuation_is_kept() {
        assert_eq!(parts("x.php:3 |").map(|p| p.2), Some(None));
        assert_eq!(
            parts("x.php:3 | return $matches[1];").map(|p| p.2),
            Some(s("return $matches[1];"))
        );
    }

    #[test]
    fn marker_needs_whitespace_after_it() {
        assert_eq!(parts("-x.php").map(|p| p.0), s("-x.php"));
        assert_eq!(parts("1.5").map(|p| p.0), s("1.5"));
        assert_eq!(
            parts("1234567890. a.php").map(|p| p.0),
            s("1234567890. a.php")
        );
    }

    #[test]
    fn lineref_arithmetic_never_overflows() {
        let lr = LineRef::parse("1-99999999999999999999");
        assert_eq!(
            lr.largest().map(LineNo::as_str),
            Some("99999999999999999999")
        );
        assert!(lr.covers(5));
        assert!(
            LineRef::parse("007")
                .largest()
                .is_some_and(|n| n.as_str() == "7")
        );
        assert!(LineRef::parse("5-3").empty_group().is_some());
        assert!(LineRef::parse("3-5-2").empty_group().is_some());
        assert!(LineRef::parse("1,0").has_zero());
        assert!(!LineRef::parse("10-20").covers(9));
        assert!(LineRef::parse("10-20").covers(20));
    }
}
