//! Coverage and hygiene (docs/gate.md §2.7): every `path:N` claim in the prose must be listed in
//! Pointers (FAIL), mentions of paths should be (WARN), every pointer should be referred to
//! (WARN), and citation-shaped text outside backticks is flagged (WARN). Prose tokens are
//! parsed with the same citation grammar as the Pointers block.

use std::collections::HashSet;
use std::sync::LazyLock;

use aho_corasick::{AhoCorasick, AhoCorasickKind, MatchKind};
use regex::Regex;

use crate::citation::{Citation, CitationLine};
use crate::document::{Document, markdown};
use crate::finding::Severity;
use crate::finding::{Code, Finding};

static UNBACKTICKED: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"[A-Za-z0-9_./-]+\.[A-Za-z0-9]+:[0-9]+(?:[,-][0-9]+)*").unwrap());

/// A prose token that claims something: evidence (`path:N`) or a mention (`dir/file`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Claim {
    Evidence,
    Mention,
}

/// A backticked prose token as a claim, with its display form; `None` for any other token
/// (docs/gate.md §2.7: the same rule for coverage and for a dead end's tripwires).
pub(crate) fn classify(token: &str) -> Option<(Claim, String)> {
    let c = Citation::parse(token)?;
    let cit = &c.citation;
    let path_like = !cit.contains(['<', '>', '$', '+', '(', ')', '='])
        && !crate::text::has_ws(cit)
        && !cit.starts_with(['/', '~'])
        && !cit.contains("://");
    if !path_like {
        return None;
    }
    if c.lineref.is_some() && crate::text::is_path_shaped(cit) {
        Some((Claim::Evidence, c.display()))
    } else if c.lineref.is_none() && cit.contains('/') {
        Some((Claim::Mention, c.display()))
    } else {
        None
    }
}

/// Step 10. `block` is the parsed citation block, or `None` when there is none (then only the
/// unbackticked check runs).
pub(crate) fn check(doc: &Document, block: Option<&[CitationLine]>) -> Vec<Finding> {
    let mut evidence: Vec<(String, usize)> = Vec::new();
    let mut mentions: Vec<(String, usize)> = Vec::new();
    let mut seen = HashSet::new();
    for (i, line) in doc.lines.iter().enumerate().filter(|(i, _)| doc.prose[*i]) {
        for token in markdown::backtick_spans(line) {
            if let Some((claim, display)) = classify(token)
                && seen.insert((claim, display.clone()))
            {
                let list = if claim == Claim::Evidence {
                    &mut evidence
                } else {
                    &mut mentions
                };
                list.push((display, doc.number(i + 1)));
            }
        }
    }

    let mut out = Vec::new();
    if let Some(block) = block {
        let mut listed: Vec<(String, usize)> = Vec::new();
        let mut listed_set: HashSet<String> = HashSet::new();
        for l in block {
            let d = l.citation.display();
            if listed_set.insert(d.clone()) {
                listed.push((d, doc.number(l.line)));
            }
        }
        for (d, line) in evidence.iter().filter(|(d, _)| !listed_set.contains(d)) {
            out.push(Finding::new(
                Severity::Fail,
                Code::UncoveredEvidence,
                format!("cited in prose but not in Pointers, so never checked: {d}"),
                Some(*line),
                Some(d.clone()),
            ));
        }
        for (d, line) in mentions.iter().filter(|(d, _)| !listed_set.contains(d)) {
            out.push(Finding::new(
                Severity::Warn,
                Code::UncoveredMention,
                format!("mentioned in prose but not in Pointers, so unchecked: {d}"),
                Some(*line),
                Some(d.clone()),
            ));
        }
        let referred = referred_entries(doc, &listed);
        let dead: Vec<&(String, usize)> = listed
            .iter()
            .zip(referred)
            .filter(|(_, r)| !r)
            .map(|(entry, _)| entry)
            .collect();
        // Past three, one line with the count: the same WARN 27 times reads as a reprimand.
        match dead.as_slice() {
            [(first, line), _, _, _, ..] => out.push(Finding::new(
                Severity::Warn,
                Code::DeadPointer,
                format!(
                    "{} entries in Pointers are not referred to in the prose (the first: {first})",
                    dead.len()
                ),
                Some(*line),
                None,
            )),
            few => {
                for (d, line) in few {
                    out.push(Finding::new(
                        Severity::Warn,
                        Code::DeadPointer,
                        format!("in Pointers but nothing in the prose refers to it: {d}"),
                        Some(*line),
                        Some(d.clone()),
                    ));
                }
            }
        }
    }

    out.extend(unbackticked(doc, &evidence));
    out
}

/// Prose that looks like a citation but is not backticked (and is not a backticked citation's
/// own text, nor part of a URL): a WARN, once per token.
fn unbackticked(doc: &Document, evidence: &[(String, usize)]) -> Vec<Finding> {
    let evidence_forms: HashSet<&str> = evidence.iter().map(|(d, _)| d.as_str()).collect();
    let mut reported = HashSet::new();
    let mut out = Vec::new();
    for (i, line) in doc.lines.iter().enumerate().filter(|(i, _)| doc.prose[*i]) {
        if !line.contains(':') {
            continue;
        }
        let bare = markdown::without_spans(line);
        for m in UNBACKTICKED.find_iter(&bare) {
            let token = m.as_str();
            if evidence_forms.contains(token) || in_url_word(&bare, m.start(), m.end()) {
                continue;
            }
            if reported.insert(token.to_string()) {
                out.push(Finding::new(
                    Severity::Warn,
                    Code::Unbackticked,
                    format!(
                        "looks like a citation but is not backticked, so it is not checked: {token}"
                    ),
                    Some(doc.number(i + 1)),
                    Some(token.to_string()),
                ));
            }
        }
    }
    out
}

/// Which listed entries occur as a plain substring of some referring-zone line: one
/// overlapping multi-pattern pass over the referring text, whatever the number of pointers.
fn referred_entries(doc: &Document, listed: &[(String, usize)]) -> Vec<bool> {
    let mut found = vec![false; listed.len()];
    // Lines are joined with `\n`, which no entry contains, so no match spans two lines.
    let mut text = String::new();
    let mut longest = 0;
    for (line, _) in doc.lines.iter().zip(&doc.referring).filter(|(_, r)| **r) {
        text.push_str(line);
        text.push('\n');
        longest = longest.max(line.len());
    }
    // An entry longer than every referring line cannot occur; leaving it out keeps a huge
    // Pointers line from costing an automaton of its size.
    let candidates: Vec<usize> = (0..listed.len())
        .filter(|&i| listed[i].0.len() <= longest)
        .collect();
    // A contiguous NFA, never a DFA: a DFA's build is quadratic in a repetitive entry's
    // length (a 40,000-character pointer took a minute), and entries come from the document.
    let Ok(automaton) = AhoCorasick::builder()
        .kind(Some(AhoCorasickKind::ContiguousNFA))
        .match_kind(MatchKind::Standard)
        .build(candidates.iter().map(|&i| listed[i].0.as_str()))
    else {
        return found;
    };
    for m in automaton.find_overlapping_iter(&text) {
        found[candidates[m.pattern().as_usize()]] = true;
    }
    found
}

/// Whether `[start, end)` lies in a whitespace-delimited word that contains `://`.
fn in_url_word(line: &str, start: usize, end: usize) -> bool {
    let word_start = line[..start].rfind(crate::text::is_ws).map_or(0, |p| p + 1);
    let word_end = line[end..]
        .find(crate::text::is_ws)
        .map_or(line.len(), |p| end + p);
    line[word_start..word_end].contains("://")
}
