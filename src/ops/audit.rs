//! The retention audit (docs/hooks.md §11): which items of the handoff a compaction's summary
//! kept — each decision, dead end, trap and `## Next` item, and each path its Pointers block
//! cites. An item is **kept** when the summary names one of the paths the item cites (a
//! backticked `path` or `path:N`, compared without its line), or holds at least 60 % of the
//! item's significant words: outside its backticks, its runs of letters and digits of four
//! characters or more, less a few common words, each counted once, compared in lower case, a
//! word held when a summary word begins with it or it begins with a summary word of four or
//! more — so "type the builder's return, not each caller" is kept by a summary saying "typed
//! the builder return rather than each caller". A path is kept when the summary names it.

use crate::document::Document;
use crate::document::markdown::backtick_spans;
use crate::gate::coverage::classify;
use crate::store::resets::Audit;

/// The share of an item's significant words a summary must hold to keep it.
const KEPT_SHARE: f64 = 0.6;
/// The most dropped items recorded, and the characters of each.
const DROPPED_MAX: usize = 20;
const DROPPED_CHARS: usize = 140;
const COMMON: [&str; 16] = [
    "that", "this", "with", "from", "have", "were", "what", "when", "will", "into", "than", "then",
    "them", "they", "does", "each",
];

/// What `summary` kept of `doc`.
pub(crate) fn audit(doc: &Document, summary: &str) -> Audit {
    let lower = summary.to_lowercase();
    let words: std::collections::HashSet<String> = significant(&lower).into_iter().collect();
    let mut audit = Audit::default();
    let mut dropped = Vec::new();
    for (level, name, count) in [
        (3, "Dead ends", &mut audit.dead_ends),
        (3, "Traps", &mut audit.traps),
        (3, "Decisions", &mut audit.decisions),
        (2, "Next", &mut audit.next),
    ] {
        for item in doc.item_blocks(level, name) {
            count.of += 1;
            if kept(&item, &lower, &words) {
                count.kept += 1;
            } else if dropped.len() < DROPPED_MAX {
                let first = item.lines().next().unwrap_or_default();
                let first = first
                    .trim_start()
                    .trim_start_matches(['-', '*', '+'])
                    .trim();
                dropped.push(first.chars().take(DROPPED_CHARS).collect());
            }
        }
    }
    for path in crate::store::resets::cited_paths(doc) {
        audit.paths.of += 1;
        if lower.contains(&path.to_lowercase()) {
            audit.paths.kept += 1;
        }
    }
    audit.dropped = dropped;
    audit
}

/// The items of `doc` that `summary` dropped, whole, by section: dead ends and traps first
/// (the part no summary re-derives), then decisions and `## Next`.
pub(crate) fn dropped_items(doc: &Document, summary: &str) -> Vec<(&'static str, Vec<String>)> {
    let lower = summary.to_lowercase();
    let words: std::collections::HashSet<String> = significant(&lower).into_iter().collect();
    [
        (3, "Dead ends"),
        (3, "Traps"),
        (3, "Decisions"),
        (2, "Next"),
    ]
    .into_iter()
    .map(|(level, name)| {
        let items = doc
            .item_blocks(level, name)
            .into_iter()
            .filter(|item| !kept(item, &lower, &words))
            .collect();
        (name, items)
    })
    .filter(|(_, items): &(&str, Vec<String>)| !items.is_empty())
    .collect()
}

/// Whether `item` is in the summary (`lower`, its significant `words`).
fn kept(item: &str, lower: &str, words: &std::collections::HashSet<String>) -> bool {
    let cites_a_kept_path = item.lines().flat_map(backtick_spans).any(|span| {
        classify(span).is_some_and(|(_, shown)| {
            let path = shown.split(':').next().unwrap_or(&shown).to_lowercase();
            !path.is_empty() && lower.contains(&path)
        })
    });
    if cites_a_kept_path {
        return true;
    }
    // The words outside backticks: a quoted path or command is the path rule's, or no word.
    let prose: String = item.split('`').step_by(2).collect::<Vec<_>>().join(" ");
    let own = significant(&prose.to_lowercase());
    if own.is_empty() {
        return lower.contains(item.trim().to_lowercase().as_str());
    }
    let held = own
        .iter()
        .filter(|w| {
            words.contains(*w)
                || words
                    .iter()
                    .any(|s| s.starts_with(w.as_str()) || w.starts_with(s.as_str()))
        })
        .count();
    held as f64 >= KEPT_SHARE * own.len() as f64
}

/// The significant words of lower-case `text`, each once.
fn significant(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for word in text.split(|c: char| !c.is_alphanumeric()) {
        if word.chars().count() >= 4 && !COMMON.contains(&word) && !out.iter().any(|w| w == word) {
            out.push(word.to_string());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::resets::Count;

    const DOC: &str = "# Handoff — t\n\n## Do not re-derive\n\n### Decisions\n- Type the builder's return, not each caller — chosen over annotating every call site.\n- Keep the mail queue on Redis, not the database.\n\n### Dead ends\n- A docblock on the caller: the analyser still inferred `mixed`.\n\n### Traps\n- `app/Mail/Invoice.php:24` looks unused and is loaded by name.\n\n## Next\n1. Do Reminder the same way.\n\n## Pointers\n```text\napp/Mail/Invoice.php:24 | public function build\n```\n";

    #[test]
    fn a_reworded_item_is_kept_and_a_missing_one_dropped() {
        let summary = "Decisions: we typed the builder return rather than annotating every caller at each call site. The trap: Invoice.php in app/Mail/Invoice.php is loaded by name. Next: the Reminder mailable, done the same way.";
        let a = audit(&Document::parse(DOC), summary);
        assert_eq!(a.decisions, Count { kept: 1, of: 2 }, "{a:?}");
        assert_eq!(a.dead_ends, Count { kept: 0, of: 1 });
        assert_eq!(a.traps, Count { kept: 1, of: 1 }, "by its cited path");
        assert_eq!(a.next, Count { kept: 1, of: 1 });
        assert_eq!(a.paths, Count { kept: 1, of: 1 });
        assert_eq!(
            a.dropped,
            [
                "A docblock on the caller: the analyser still inferred `mixed`.",
                "Keep the mail queue on Redis, not the database."
            ]
        );
        assert_eq!(
            a.sentence(),
            "the compaction's summary kept 1 of 2 decisions, 0 of 1 dead ends, 1 of 1 traps, 1 of 1 next steps, 1 of 1 cited paths"
        );
    }
}
