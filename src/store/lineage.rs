//! Lineage (docs/store.md §9.15): a branch's chain read as the history of its handoff — each
//! version's number (a new number only when its text changed: a consume or another `progress:`
//! change is the same version, read), when and where it was written, its progress, and what
//! changed against the version it replaced in Decisions, Dead ends and Traps: items added,
//! removed, and reworded (the same item said differently, [`same_item`]). Only what a reader
//! calls a change counts: an item whose line numbers alone moved (a `fix`) is the same item,
//! and a restore is the version it brought back. A text's commits are skipped in one read
//! (`since`), so `log -n 1` costs the same on a chain of one version or of 100,000.

use serde::Serialize;

use super::Target;
use super::chain::{Meta, TextKeys, without_line_numbers};
use crate::git::chain::Chains;

use super::chain::MAX_DEPTH;
/// How far back the compaction title looks for the last version whose text differs.
const PREVIOUS_MAX: usize = 256;
/// How many commits of one text `log` reads one by one where no `since:` skips them (a chain
/// recorded before it, or a remote's): past it, the text's older commits stay unread.
const FOLD_MAX: usize = 256;

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
        let key_before: Vec<String> = before.iter().map(|i| without_line_numbers(i)).collect();
        let key_after: Vec<String> = after.iter().map(|i| without_line_numbers(i)).collect();
        let mut added: Vec<String> = after
            .iter()
            .zip(&key_after)
            .filter(|(_, k)| !key_before.contains(k))
            .map(|(i, _)| i.clone())
            .collect();
        let mut removed: Vec<String> = before
            .iter()
            .zip(&key_before)
            .filter(|(_, k)| !key_after.contains(k))
            .map(|(i, _)| i.clone())
            .collect();
        // An item removed where an item was added at the same place in its list is that item
        // said anew; then each removed item pairs with the first added one that is the same
        // item said differently.
        let mut reworded = Vec::new();
        removed.retain(|old| {
            let at = before.iter().position(|b| b == old);
            let new = at.and_then(|i| after.get(i));
            match new.and_then(|n| added.iter().position(|a| a == n)) {
                Some(i) => {
                    reworded.push(Reworded {
                        before: old.clone(),
                        after: added.remove(i),
                    });
                    false
                }
                None => true,
            }
        });
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
    /// Its number; `None` when not known (a long chain recorded without numbers).
    pub(crate) seq: Option<usize>,
    /// Whether this version brought an earlier text back (a restore): `seq` is that text's.
    pub(crate) restored: bool,
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
    /// Its text's older commits were not read (over [`FOLD_MAX`] of them with no `since:` to
    /// skip them): where it was first written, and what it changed, are not known.
    pub(crate) older_unread: bool,
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
/// recorded before versions carried their number, or a merge made by a pull) up to
/// [`COUNT_MAX`] commits — past that, not known.
fn number_of(chains: &Chains, tip: &str, meta: &Meta) -> Option<usize> {
    match meta.seq {
        Some(n) => usize::try_from(n).ok(),
        None => {
            let line = chains.first_parents(tip, COUNT_MAX + 1).len();
            (line <= COUNT_MAX).then_some(line)
        }
    }
}

/// How many commits `log` counts to number a chain that records no numbers.
const COUNT_MAX: usize = 2_000;

/// The number a version says it has (a restore's is the text it brought back), when this store
/// recorded it: what a remote says of numbers is data only.
fn own_number(
    key: Option<&super::authorship::StoreKey>,
    v: &crate::git::chain::Version,
    meta: &Meta,
) -> Option<usize> {
    super::chain::recorded_here(key, v)
        .then(|| meta.restored.or(meta.seq))
        .flatten()
        .and_then(|n| usize::try_from(n).ok())
}

/// The oldest commit of `newest`'s text, in one read when its `since` says so truly (the
/// commit it names holds the same text); else `None`.
fn text_start(
    chains: &Chains,
    meta: &Meta,
    body: &str,
    keys: &mut TextKeys,
) -> Option<crate::git::chain::Version> {
    meta.since
        .as_deref()
        .and_then(|s| chains.read(s))
        .filter(|o| keys.of(&o.document) == body)
}

/// One text met walking back: its body, the commit that first recorded it, its progress and
/// number now (its newest commit's), and whether it is a restore.
struct Text {
    /// Its commits read one by one so far.
    folded: usize,
    body: String,
    oldest: crate::git::chain::Version,
    progress: String,
    number: Option<usize>,
    restored: bool,
}

/// The newest `n` versions of the target branch's chain, newest first; `None` when it has no
/// chain. Commits whose text equals their first parent's but for `progress:` (a consume) fold
/// into that version, which shows the newest progress. A text's commits are skipped by its
/// `since`; each commit read is read and parsed once.
pub(crate) fn log(
    key: Option<&super::authorship::StoreKey>,
    target: &Target,
    n: usize,
) -> Option<Vec<Version>> {
    let (chains, tip) = tip_of(target)?;
    // Up to n + 1 texts (the oldest shown needs the one before it for its changes), newest
    // first.
    let mut texts: Vec<Text> = Vec::new();
    let mut keys = TextKeys::default();
    let mut at = Some(tip.clone());
    let mut walked = 0;
    while let Some(id) = at.take() {
        walked += 1;
        let Some(v) = chains.read(&id) else { break };
        let body = keys.of(&v.document);
        let meta = Meta::parse(&v.meta);
        let start = text_start(&chains, &meta, &body, &mut keys);
        let same = texts.last().is_some_and(|t| t.body == body);
        if same {
            if let Some(t) = texts.last_mut() {
                t.folded += 1;
                if start.is_none() && t.folded > FOLD_MAX {
                    break;
                }
                t.oldest = start.unwrap_or(v);
                at = t.oldest.parents.first().cloned();
            }
        } else if texts.len() > n {
            break;
        } else {
            let text = Text {
                folded: 0,
                number: own_number(key, &v, &meta),
                restored: meta.restored.is_some(),
                progress: meta.progress.clone().unwrap_or_else(|| "complete".into()),
                body,
                oldest: start.unwrap_or(v),
            };
            at = text.oldest.parents.first().cloned();
            texts.push(text);
        }
        if walked >= MAX_DEPTH {
            break;
        }
    }
    let tip_meta = Meta::parse(&chains.read(&tip)?.meta);
    let total = number_of(&chains, &tip, &tip_meta);
    let parsed: Vec<[Vec<String>; 3]> =
        texts.iter().map(|t| sections(&t.oldest.document)).collect();
    let none = Default::default();
    let mut out = Vec::new();
    let cut = texts.last().is_some_and(|t| t.folded > FOLD_MAX);
    for (i, t) in texts.iter().enumerate().take(n) {
        let v = &t.oldest;
        let meta = Meta::parse(&v.meta);
        let older_unread = cut && i + 1 == texts.len();
        out.push(Version {
            older_unread,
            seq: t.number.or_else(|| total.map(|n| n.saturating_sub(i))),
            restored: t.restored,
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
            progress: t.progress.clone(),
            changes: if older_unread {
                Changes::default()
            } else {
                Changes::between(parsed.get(i + 1).unwrap_or(&none), &parsed[i])
            },
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

/// For a compaction's title: the version delivered and what changed since the last version
/// whose text (its `progress:` aside) differs — `handoff #7: +1 decision, −1 trap since #5`,
/// or `restored handoff #5`. `None` where it says nothing a model acts on: no chain, the
/// branch's first version, no change in Decisions, Dead ends or Traps. Numbers are shown only
/// where this store recorded them.
pub(crate) fn since_previous(
    key: Option<&super::authorship::StoreKey>,
    target: &Target,
) -> Option<String> {
    let (chains, tip_id) = tip_of(target)?;
    let tip = chains.read(&tip_id)?;
    let meta = Meta::parse(&tip.meta);
    let number = own_number(key, &tip, &meta);
    if meta.restored.is_some() {
        return Some(match number {
            Some(n) => format!("restored handoff #{n}"),
            None => "a restored earlier handoff".into(),
        });
    }
    let mut keys = TextKeys::default();
    let body = keys.of(&tip.document);
    let start = text_start(&chains, &meta, &body, &mut keys);
    // Back along the first parents until the text differs: one read past the text's start
    // when `since` gives it, a bounded walk when it does not.
    let mut at = start.as_ref().unwrap_or(&tip).parents.first().cloned();
    let mut previous = None;
    for _ in 1..=PREVIOUS_MAX {
        let Some(v) = at.as_deref().and_then(|id| chains.read(id)) else {
            break;
        };
        if keys.of(&v.document) != body {
            previous = Some(v);
            break;
        }
        at = v.parents.first().cloned();
    }
    let previous = previous?;
    let changes = Changes::between(&sections(&previous.document), &sections(&tip.document));
    if changes.is_empty() {
        return None;
    }
    let before = own_number(key, &previous, &Meta::parse(&previous.meta));
    Some(match (number, before) {
        (Some(n), Some(m)) => format!("handoff #{n}: {} since #{m}", changes.summary()),
        _ => format!("handoff: {} since the version before", changes.summary()),
    })
}
