//! Lineage (docs/store.md §9.15): a branch's chain read as the history of its handoff — each
//! version's number (a new number only when its text changed: a consume or another `progress:`
//! change is the same version, read), when and where it was written, its progress, and what
//! changed against the version it replaced in Decisions, Dead ends and Traps: items added,
//! removed, and reworded (the same item said differently, [`same_item`]).

use serde::Serialize;

use super::Target;
use super::chain::{Meta, without_progress};
use crate::git::chain::Chains;

use super::chain::MAX_DEPTH;
/// How far back the compaction title looks for the last version whose text differs.
const PREVIOUS_MAX: usize = 1_000;

/// An item said differently from one version to the next.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Reworded {
    pub(crate) before: String,
    pub(crate) after: String,
}

/// What changed in one list section: items added, removed and reworded.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub(crate) struct Delta {
    pub(crate) added: Vec<String>,
    pub(crate) removed: Vec<String>,
    pub(crate) reworded: Vec<Reworded>,
}

/// The lower-cased words of an item (letters and digits), its backticked code included.
fn words(item: &str) -> Vec<String> {
    item.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// Whether two items are one item said differently: they open with the same four words, or
/// at least 60 % of the words of the two together are shared (Jaccard over the sets of
/// words). A reworded trap keeps its subject; a new one rarely shares most of its words.
pub(crate) fn same_item(a: &str, b: &str) -> bool {
    let (wa, wb) = (words(a), words(b));
    if wa.len() >= 4 && wb.len() >= 4 && wa[..4] == wb[..4] {
        return true;
    }
    let sa: std::collections::BTreeSet<&String> = wa.iter().collect();
    let sb: std::collections::BTreeSet<&String> = wb.iter().collect();
    let union = sa.union(&sb).count();
    union > 0 && sa.intersection(&sb).count() * 10 >= union * 6
}

impl Delta {
    fn of(before: &[String], after: &[String]) -> Delta {
        let mut added: Vec<String> = after
            .iter()
            .filter(|i| !before.contains(i))
            .cloned()
            .collect();
        let mut removed: Vec<String> = before
            .iter()
            .filter(|i| !after.contains(i))
            .cloned()
            .collect();
        // Pair each removed item with the first added one that is the same item.
        let mut reworded = Vec::new();
        removed.retain(
            |old| match added.iter().position(|new| same_item(old, new)) {
                Some(i) => {
                    reworded.push(Reworded {
                        before: old.clone(),
                        after: added.remove(i),
                    });
                    false
                }
                None => true,
            },
        );
        Delta {
            added,
            removed,
            reworded,
        }
    }

    fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty() && self.reworded.is_empty()
    }
}

/// The three sections whose changes a version's lineage names.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub(crate) struct Changes {
    pub(crate) decisions: Delta,
    pub(crate) dead_ends: Delta,
    pub(crate) traps: Delta,
}

impl Changes {
    pub(crate) fn is_empty(&self) -> bool {
        self.decisions.is_empty() && self.dead_ends.is_empty() && self.traps.is_empty()
    }

    /// Each section with its singular name, for people.
    pub(crate) fn sections(&self) -> [(&'static str, &Delta); 3] {
        [
            ("decision", &self.decisions),
            ("dead end", &self.dead_ends),
            ("trap", &self.traps),
        ]
    }

    /// `+1 decision, ~1 trap reworded, −1 trap`; `no change in Decisions, Dead ends or Traps`
    /// when none.
    pub(crate) fn summary(&self) -> String {
        let mut said = Vec::new();
        for (name, d) in self.sections() {
            let plural = |n: usize| if n == 1 { "" } else { "s" };
            if !d.added.is_empty() {
                said.push(format!(
                    "+{} {name}{}",
                    d.added.len(),
                    plural(d.added.len())
                ));
            }
            if !d.reworded.is_empty() {
                let n = d.reworded.len();
                said.push(format!("~{n} {name}{} reworded", plural(n)));
            }
            if !d.removed.is_empty() {
                said.push(format!(
                    "−{} {name}{}",
                    d.removed.len(),
                    plural(d.removed.len())
                ));
            }
        }
        if said.is_empty() {
            "no change in Decisions, Dead ends or Traps".into()
        } else {
            said.join(", ")
        }
    }
}

/// One version of the handoff: a text on the chain, with the progress it has now (a consume
/// after it is the same version, read).
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Version {
    pub(crate) seq: usize,
    /// The commit that recorded its text.
    pub(crate) id: String,
    pub(crate) parents: Vec<String>,
    pub(crate) written_at: String,
    pub(crate) written_at_epoch: i64,
    /// The author's host as recorded, when it is 1–64 safe characters (a remote's `meta` is
    /// input: anything else is not shown).
    pub(crate) host: Option<String>,
    /// Set when the version is a teammate's: how its items are to be taken.
    pub(crate) teammate: Option<String>,
    /// Its progress now (the newest commit of this text).
    pub(crate) progress: String,
    /// Against the version before; everything is added in the first version.
    pub(crate) changes: Changes,
}

/// The list items of a version's three sections, each whole on one line (a wrapped item's
/// continuation lines joined), so no item is compared or shown cut.
fn sections(document: &[u8]) -> [Vec<String>; 3] {
    let text = String::from_utf8_lossy(document).replace('\r', "");
    let doc = crate::document::Document::parse(&text);
    let whole = |name: &str| -> Vec<String> {
        doc.item_blocks(3, name)
            .iter()
            .map(|b| {
                let joined = b.split_whitespace().collect::<Vec<_>>().join(" ");
                joined
                    .strip_prefix("- ")
                    .or_else(|| joined.strip_prefix("* "))
                    .unwrap_or(&joined)
                    .to_string()
            })
            .collect()
    };
    [whole("Decisions"), whole("Dead ends"), whole("Traps")]
}

impl Changes {
    /// From one version's sections to another's.
    fn between(before: &[Vec<String>; 3], after: &[Vec<String>; 3]) -> Changes {
        Changes {
            decisions: Delta::of(&before[0], &after[0]),
            dead_ends: Delta::of(&before[1], &after[1]),
            traps: Delta::of(&before[2], &after[2]),
        }
    }
}

/// The chain of the target's branch, opened, and its tip.
fn tip_of(target: &Target) -> Option<(Chains, String)> {
    let chains = Chains::open(std::path::Path::new(&target.checkout()))?;
    let tip = chains.tip(&target.chain_ref())?;
    Some((chains, tip))
}

/// The tip's number on its first-parent line: recorded in its meta, else counted (a chain
/// recorded before versions carried their number, or a merge made by a pull).
fn number_of(chains: &Chains, tip: &str, meta: &Meta) -> usize {
    match meta.seq {
        Some(n) => usize::try_from(n).unwrap_or(usize::MAX),
        None => chains.first_parents(tip, MAX_DEPTH).len(),
    }
}

/// The newest `n` versions of the target branch's chain, newest first; `None` when it has no
/// chain. Commits whose text equals their first parent's but for `progress:` (a consume) fold
/// into that version, which shows the newest progress. Each commit is read and parsed once.
pub(crate) fn log(
    key: Option<&super::authorship::StoreKey>,
    target: &Target,
    n: usize,
) -> Option<Vec<Version>> {
    let (chains, tip) = tip_of(target)?;
    // Up to n + 1 texts (the oldest shown needs the one before it for its changes), newest
    // first: each with its body, its oldest commit (where the text was written) and the
    // progress of its newest commit (the first met).
    let mut texts: Vec<(String, crate::git::chain::Version, String)> = Vec::new();
    let mut at = Some(tip.clone());
    let mut walked = 0;
    while let Some(id) = at.take() {
        walked += 1;
        let Some(v) = chains.read(&id) else { break };
        let body = without_progress(&v.document);
        at = v.parents.first().cloned().filter(|_| walked < MAX_DEPTH);
        let same = texts.last().is_some_and(|(last, _, _)| *last == body);
        if same {
            if let Some((_, oldest, _)) = texts.last_mut() {
                *oldest = v;
            }
        } else if texts.len() > n {
            break;
        } else {
            let progress = Meta::parse(&v.meta)
                .progress
                .unwrap_or_else(|| "complete".into());
            texts.push((body, v, progress));
        }
    }
    let tip_meta = Meta::parse(&chains.read(&tip)?.meta);
    let total = number_of(&chains, &tip, &tip_meta);
    let parsed: Vec<[Vec<String>; 3]> = texts
        .iter()
        .map(|(_, v, _)| sections(&v.document))
        .collect();
    let none = Default::default();
    let mut out = Vec::new();
    for (i, (_, v, progress)) in texts.iter().enumerate().take(n) {
        let meta = Meta::parse(&v.meta);
        out.push(Version {
            seq: total.saturating_sub(i),
            id: v.id.clone(),
            parents: v.parents.clone(),
            written_at: super::iso(meta.written_at),
            written_at_epoch: meta.written_at,
            host: meta
                .host
                .as_deref()
                .and_then(super::authorship::label)
                .map(str::to_string),
            teammate: teammate_of(key, v, &meta),
            progress: progress.clone(),
            changes: Changes::between(parsed.get(i + 1).unwrap_or(&none), &parsed[i]),
        });
    }
    Some(out)
}

/// The frame of a version this store did not write: its `from:` (a teammate's handoff brought
/// in), or — for a remote's own version on the chain — its recorded host, via the refs.
fn teammate_of(
    key: Option<&super::authorship::StoreKey>,
    v: &crate::git::chain::Version,
    meta: &Meta,
) -> Option<String> {
    if let Some(from) = super::chain::from_of(&v.document) {
        return super::authorship::teammate_frame(Some(&from));
    }
    if super::chain::recorded_here(key, v) {
        return None;
    }
    let from = super::authorship::From::new(
        meta.host.as_deref(),
        super::authorship::LOCAL_REFS,
        super::iso(meta.written_at),
    );
    super::authorship::teammate_frame(Some(&from.render()))
}

/// The tip's sequence number, and what changed since the last version whose text (its
/// `progress:` aside) differs: `#7 (+1 decision, −1 trap since #5)`. `None` without a chain.
pub(crate) fn since_previous(target: &Target) -> Option<String> {
    let (chains, tip_id) = tip_of(target)?;
    let tip = chains.read(&tip_id)?;
    let total = number_of(&chains, &tip_id, &Meta::parse(&tip.meta));
    let body = without_progress(&tip.document);
    // Back along the first parents only until the text differs: a version or two, not the
    // whole chain (bounded all the same).
    let mut previous = None;
    let mut at = tip.parents.first().cloned();
    for _ in 1..=PREVIOUS_MAX {
        let Some(v) = at.as_deref().and_then(|id| chains.read(id)) else {
            break;
        };
        if without_progress(&v.document) != body {
            // Numbers count texts: the one before is one less (its own, when recorded).
            let seq = Meta::parse(&v.meta)
                .seq
                .map_or(total.saturating_sub(1), |n| usize::try_from(n).unwrap_or(0));
            previous = Some((seq, v));
            break;
        }
        at = v.parents.first().cloned();
    }
    Some(match previous {
        // No earlier text: this is the branch's first version, whatever its progress did.
        None => format!("handoff #{total}, the branch's first"),
        Some((seq, v)) => {
            let changes = Changes::between(&sections(&v.document), &sections(&tip.document));
            format!("handoff #{total}: {} since #{seq}", changes.summary())
        }
    })
}
