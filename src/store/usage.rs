//! Whether a repository uses handoffs (docs/configuration.md, "Where it acts"). The automatic
//! paths — what a session's start, a `/clear` and a compaction inject, and the background
//! writer (a second model run) — act only in a repository in use: one that has a handoff for
//! some branch (a slot in the store or a chain in git), or where `handoff.enabled` is true.
//! `handoff.enabled=false` turns them off there whatever it has.

use serde::Serialize;

use super::naming::{RepositorySlots, path_bytes};
use super::{Store, Target};
use crate::settings::Enabled;

/// Whether the automatic paths act in a repository, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "use", content = "by", rename_all = "kebab-case")]
pub(crate) enum Use {
    /// `handoff.enabled` is true.
    Enabled,
    /// `handoff.enabled` is false.
    Disabled,
    /// The store holds this slot of the repository (a file name).
    Slot(String),
    /// The repository holds this handoff chain (a ref).
    Chain(String),
    /// None of these: nothing acts here.
    Unused,
}

impl Use {
    /// `target`'s repository; `store` is where its slots would be. The cheapest facts first:
    /// the setting, the branch's own slot, then any chain, then the store's other slots.
    pub(crate) fn of(store: Option<&Store>, target: &Target) -> Use {
        match target.settings().enabled() {
            Enabled::On => return Use::Enabled,
            Enabled::Off => return Use::Disabled,
            Enabled::Auto => {}
        }
        let Some(store) = store else {
            return Use::Unused;
        };
        let own = store.path_of(&target.name);
        if crate::fs::symlink_metadata(&own).is_ok_and(|m| m.is_file()) {
            return Use::Slot(target.name.clone());
        }
        if let Some(chain) =
            crate::git::chain::Chains::open(&target.facts.checkout).and_then(|c| c.any_chain())
        {
            return Use::Chain(chain);
        }
        let ours = RepositorySlots::of(&path_bytes(&target.facts.main));
        crate::fs::read_dir(&store.dir)
            .into_iter()
            .flatten()
            .flatten()
            .find_map(|e| {
                let name = e.file_name();
                let name = name.to_str()?;
                ours.holds(name).then(|| name.to_string())
            })
            .map_or(Use::Unused, Use::Slot)
    }

    /// Whether the automatic paths act.
    pub(crate) fn acts(&self) -> bool {
        matches!(self, Use::Enabled | Use::Slot(_) | Use::Chain(_))
    }
}

/// Why a repository is or is not in use, in a few words (`status`, `config`).
pub(crate) fn why(u: &Use) -> String {
    match u {
        Use::Enabled => "handoff.enabled is true".into(),
        Use::Disabled => "handoff.enabled is false".into(),
        Use::Slot(name) => format!("the store holds {name}"),
        Use::Chain(reference) => format!("the repository holds {reference}"),
        Use::Unused => "no handoff for any branch yet".into(),
    }
}
