//! Lineage (docs/store.md §9.15): a branch's chain read as the history of its handoff — each
//! version's sequence number (its place on the first-parent line, the first version being 1),
//! when and where it was written, its progress, and what changed against the version it
//! replaced in Decisions, Dead ends and Traps (items added and removed, by their first line).

use serde::Serialize;

use super::Target;
use super::chain::Meta;
use crate::git::chain::Chains;

use super::chain::MAX_DEPTH;
/// How far back the compaction title looks for the last version whose text differs.
const PREVIOUS_MAX: usize = 1_000;

/// What changed in one list section: items added and removed, by their first line.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub(crate) struct Delta {
    pub(crate) added: Vec<String>,
    pub(crate) removed: Vec<String>,
}

impl Delta {
    fn of(before: &[String], after: &[String]) -> Delta {
        Delta {
            added: after
                .iter()
                .filter(|i| !before.contains(i))
                .cloned()
                .collect(),
            removed: before
                .iter()
                .filter(|i| !after.contains(i))
                .cloned()
                .collect(),
        }
    }

    fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty()
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

    /// `+1 decision, −1 trap`; `no change in Decisions, Dead ends or Traps` when none.
    pub(crate) fn summary(&self) -> String {
        let mut said = Vec::new();
        for (name, d) in self.sections() {
            for (sign, n) in [("+", d.added.len()), ("−", d.removed.len())] {
                if n > 0 {
                    said.push(format!("{sign}{n} {name}{}", if n == 1 { "" } else { "s" }));
                }
            }
        }
        if said.is_empty() {
            "no change in Decisions, Dead ends or Traps".into()
        } else {
            said.join(", ")
        }
    }
}

/// One version on the chain.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Version {
    pub(crate) seq: usize,
    pub(crate) id: String,
    pub(crate) parents: Vec<String>,
    pub(crate) written_at: String,
    pub(crate) written_at_epoch: i64,
    /// The author's host as recorded, when it is 1–64 safe characters (a remote's `meta` is
    /// input: anything else is not shown).
    pub(crate) host: Option<String>,
    /// Set when the version is a teammate's: how its items are to be taken.
    pub(crate) teammate: Option<String>,
    pub(crate) progress: String,
    /// Against its first parent; everything is added in the first version.
    pub(crate) changes: Changes,
    /// Only the `progress:` line differs from its first parent (a consume, a set-progress).
    pub(crate) progress_only: bool,
}

/// The list items of a version's three sections.
fn sections(document: &[u8]) -> [Vec<String>; 3] {
    let text = String::from_utf8_lossy(document).replace('\r', "");
    let doc = crate::document::Document::parse(&text);
    [
        doc.items(3, "Decisions"),
        doc.items(3, "Dead ends"),
        doc.items(3, "Traps"),
    ]
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

/// The document without its envelope's `progress:` line, to tell a progress change from a new
/// version.
fn without_progress(document: &[u8]) -> String {
    crate::document::normalise::without(&String::from_utf8_lossy(document), "progress")
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
/// chain. Each version (and the parent of the oldest shown) is read and parsed once.
pub(crate) fn log(
    key: Option<&super::authorship::StoreKey>,
    target: &Target,
    n: usize,
) -> Option<Vec<Version>> {
    let (chains, tip) = tip_of(target)?;
    let line = chains.first_parents(&tip, n.saturating_add(1));
    let total = match line.first().and_then(|id| chains.meta_of(id)) {
        Some(meta) => number_of(&chains, &tip, &Meta::parse(&meta)),
        None => line.len(),
    };
    let read: Vec<Option<(crate::git::chain::Version, [Vec<String>; 3])>> = line
        .iter()
        .take(n.saturating_add(1))
        .map(|id| {
            chains.read(id).map(|v| {
                let s = sections(&v.document);
                (v, s)
            })
        })
        .collect();
    let mut out = Vec::new();
    for (i, id) in line.iter().enumerate().take(n) {
        let Some((v, now)) = &read[i] else { continue };
        let parent = read.get(i + 1).and_then(Option::as_ref);
        let meta = Meta::parse(&v.meta);
        let none = Default::default();
        out.push(Version {
            seq: total - i,
            id: id.clone(),
            parents: v.parents.clone(),
            written_at: super::iso(meta.written_at),
            written_at_epoch: meta.written_at,
            host: meta
                .host
                .as_deref()
                .and_then(super::authorship::label)
                .map(str::to_string),
            teammate: teammate_of(key, v, &meta),
            progress: meta.progress.unwrap_or_else(|| "complete".into()),
            changes: Changes::between(parent.map_or(&none, |(_, s)| s), now),
            progress_only: parent.is_some_and(|(p, _)| {
                p.document != v.document
                    && without_progress(&p.document) == without_progress(&v.document)
            }),
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
    for i in 1..=PREVIOUS_MAX {
        let Some(v) = at.as_deref().and_then(|id| chains.read(id)) else {
            break;
        };
        if without_progress(&v.document) != body {
            previous = Some((total.saturating_sub(i), v));
            break;
        }
        at = v.parents.first().cloned();
    }
    Some(match previous {
        // "The branch's first" only when it is: the one version, not a first text whose
        // progress changed since (a consume is a version too).
        None if total <= 1 => format!("handoff #{total}, the branch's first"),
        None if at.is_none() => format!("handoff #{total}: only its progress changed since #1"),
        None => format!("handoff #{total}"),
        Some((seq, v)) => {
            let changes = Changes::between(&sections(&v.document), &sections(&tip.document));
            format!("handoff #{total}: {} since #{seq}", changes.summary())
        }
    })
}
