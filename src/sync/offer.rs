//! The hooks' view of synced handoffs: local refs only, never the network. When a target's slot
//! is empty but its branch's chain (`refs/handoffs/<branch>`) or a remote-tracking copy
//! (`refs/handoff-remotes/<remote>/<branch>`) holds a handoff — a fresh clone after `pull`, a
//! teammate's branch just checked out — the newest unread one is offered as a stored one is.

use std::time::Duration;

use super::{Meta, admit, handoff_ref, import, tracking_prefix};
use crate::git::chain::{Chains, Version};
use crate::store::change::{SlotChange, Wait};
use crate::store::{Store, Target};

/// A handoff found in the refs for a target whose slot is empty.
#[derive(Debug, Clone)]
pub(crate) struct Found {
    /// The ref it was found on.
    pub(crate) reference: String,
    pub(crate) version: Version,
    pub(crate) meta: Meta,
}

/// The newest handoff the refs hold for `target`'s branch, when its slot is empty. Costs one
/// `lstat` when the slot exists (the common case); otherwise a few ref lookups.
pub(crate) fn peek(store: &Store, target: &Target) -> Option<Found> {
    look(store, target).map(|(_, found)| found)
}

/// [`peek`], with the repository it opened.
fn look(store: &Store, target: &Target) -> Option<(Chains, Found)> {
    if target.facts.detached || crate::fs::symlink_metadata(store.path_of(&target.name)).is_ok() {
        return None;
    }
    let chains = Chains::open(&target.facts.checkout)?;
    let found = newest(&chains, &target.facts.reference)?;
    Some((chains, found))
}

fn newest(chains: &Chains, branch: &str) -> Option<Found> {
    let mut refs = vec![handoff_ref(branch)];
    refs.extend(
        chains
            .remotes()
            .iter()
            .map(|r| format!("{}{branch}", tracking_prefix(r))),
    );
    refs.into_iter()
        .filter_map(|reference| {
            let version = chains.read(&chains.tip(&reference)?)?;
            // What another machine pushed is admitted as `pull` admits it: its own branch, a
            // sane date.
            let meta = admit(&version, branch, crate::store::now()).ok()?.meta;
            // Only an unread handoff is offered: a placeholder never, and a consumed one was
            // delivered already (the slot was pruned or deleted since).
            let progress = crate::store::slot::progress_of(&version.document);
            matches!(progress.as_deref(), None | Some("complete")).then_some(Found {
                reference,
                version,
                meta,
            })
        })
        .max_by_key(|f| f.meta.written_at)
}

/// Bring the newest handoff the refs hold into `target`'s empty slot (gated first, as `pull`
/// does), so it is read, delivered and consumed like any stored one. Returns the ref it came
/// from; `None` when the slot is not empty, nothing is found, the gate refuses it, or the slot
/// is busy.
pub(crate) fn materialise(store: &Store, target: &Target) -> Option<String> {
    let (chains, found) = look(store, target)?;
    let change =
        SlotChange::from_chain(store, &target.name, Wait::Hook(Duration::from_millis(500))).ok()?;
    if crate::fs::symlink_metadata(store.path_of(&target.name)).is_ok() {
        return None;
    }
    match import(
        &change,
        &target.checkout(),
        &found.version,
        &found.meta,
        found
            .reference
            .strip_prefix("refs/handoff-remotes/")
            .and_then(|r| r.split('/').next())
            .unwrap_or(crate::store::authorship::LOCAL_REFS),
        true,
    ) {
        Ok(()) => {
            // The slot now holds a version of a teammate's chain: the local chain moves to it
            // (a fast-forward, as `pull` would), so what this machine records next — the
            // consume — builds on it and pushes as a fast-forward, never as a new root.
            let local = handoff_ref(&target.facts.reference);
            let tip = chains.tip(&local);
            if found.reference != local
                && tip.as_deref() != Some(found.version.id.as_str())
                && tip
                    .as_deref()
                    .is_none_or(|t| chains.is_ancestor(t, &found.version.id))
            {
                let _ = chains.set(&local, &found.version.id, tip.as_deref());
            }
            Some(found.reference)
        }
        _ => None,
    }
}
