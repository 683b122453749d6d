//! The input guard (docs/gate.md §3.2): a "citation list" that is mostly prose is refused before any
//! file is opened, because every sentence would otherwise read as a MISSING citation.

use crate::citation::{Citation, CitationLine};
use crate::finding::{Finding, GuardDetails, Severity};

/// A refusal by the input guard (docs/gate.md §3.2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct GuardRefusal {
    pub(crate) details: GuardDetails,
}

impl GuardRefusal {
    pub(crate) fn finding(&self) -> Finding {
        let mut f = Finding::new(
            Severity::Error,
            crate::finding::Code::NotACitationList,
            GuardDetails::HEADLINE.into(),
            None,
            None,
        );
        f.details = Some(self.details.clone());
        f
    }
}

/// Refuse input that is mostly prose: ≥ 5 candidates and a majority with whitespace.
pub(crate) fn input_guard(citations: &[CitationLine]) -> Option<GuardRefusal> {
    let with_ws: Vec<&Citation> = citations
        .iter()
        .map(|l| &l.citation)
        .filter(|c| crate::text::has_ws(&c.citation))
        .collect();
    let n = citations.len();
    (n >= 5 && 2 * with_ws.len() > n).then(|| GuardRefusal {
        details: GuardDetails {
            candidates: n,
            with_whitespace: with_ws.len(),
            examples: with_ws.iter().take(3).map(|c| c.display()).collect(),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guard_needs_five_and_a_majority() {
        let parse = |xs: &[&str]| crate::citation::parse_lines(xs.iter().copied().enumerate());
        assert!(input_guard(&parse(&["a b", "c d", "e f", "g h"])).is_none());
        assert!(input_guard(&parse(&["a b", "c d", "e f", "x.php", "y.php"])).is_some());
        assert!(input_guard(&parse(&["a b", "c d", "e.php", "x.php", "y.php"])).is_none());
    }
}
