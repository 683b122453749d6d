//! Which checkout a command is about (docs/store.md §2): the argument, `CONTEXT_ECONOMY_CHECKOUT`,
//! or the working directory, inspected through `git/`, with its slot name. A target that has no
//! slot says why in the words store.md gives.

use std::path::{Path, PathBuf};

use super::naming::{path_bytes, slot_name};
use crate::error::NoTarget;
use crate::git::{self, RepoFacts};

/// The target checkout with its git facts and slot name (the branch's default slot, or a named
/// one beside it).
#[derive(Debug, Clone)]
pub(crate) struct Target {
    pub(crate) facts: RepoFacts,
    pub(crate) name: String,
    /// The named slot (`--slot NAME`), `None` for the branch's default one.
    pub(crate) slot: Option<String>,
}

impl Target {
    /// Pick and inspect the target: `arg`, else `CONTEXT_ECONOMY_CHECKOUT`, else the cwd.
    pub(crate) fn resolve(arg: Option<&str>) -> Result<Target, NoTarget> {
        let (dir, shown) = Target::dir_of(arg);
        match git::repo_facts(&dir, true) {
            Ok(facts) => Ok(Target::from_facts(facts)),
            Err(why) => Err(NoTarget::Resolve { shown, why }),
        }
    }

    /// The directory a checkout argument names, and how to name it in a message: `arg`, else
    /// `$CONTEXT_ECONOMY_CHECKOUT`, else the working directory.
    pub(crate) fn dir_of(arg: Option<&str>) -> (PathBuf, String) {
        match arg.filter(|a| !a.is_empty()) {
            Some(a) => (PathBuf::from(a), a.to_string()),
            None => match crate::env::settings().checkout.clone() {
                Some(v) => (PathBuf::from(&v), format!("CONTEXT_ECONOMY_CHECKOUT={v}")),
                None => {
                    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
                    let shown = cwd.to_string_lossy().into_owned();
                    (cwd, shown)
                }
            },
        }
    }

    /// [`Target::resolve`] for a command that needs a checkout: outside one, the one error every
    /// command gives (exit 3, naming `-C DIR`).
    pub(crate) fn required(arg: Option<&str>) -> Result<Target, crate::error::Error> {
        Target::resolve(arg).map_err(crate::error::Error::Target)
    }

    /// The target at `dir`, discovered as git would (for hooks, which never report why).
    pub(crate) fn at(dir: &Path) -> Option<Target> {
        git::repo_facts(dir, true).ok().map(Target::from_facts)
    }

    /// The same checkout, its handoff keyed to `branch` (`write --branch`).
    pub(crate) fn on_branch(mut self, branch: &str) -> Target {
        self.facts.reference = branch.to_string();
        self.facts.detached = false;
        Target::from_facts(self.facts)
    }

    fn from_facts(facts: RepoFacts) -> Target {
        let name = slot_name(&path_bytes(&facts.main), &facts.reference);
        Target {
            facts,
            name,
            slot: None,
        }
    }

    /// The same checkout and branch, its named slot `slot` (the default one for `None`); the
    /// name is checked first (docs/store.md §3).
    pub(crate) fn with_slot(self, slot: Option<&str>) -> Result<Target, crate::error::Error> {
        let Some(slot) = slot else {
            return Ok(self);
        };
        if let Some(why) = super::naming::slot_name_problem(slot) {
            return Err(crate::error::Error::Usage(crate::error::Usage::BadSlot {
                name: slot.to_string(),
                why,
            }));
        }
        let default = Target::from_facts(self.facts);
        Ok(Target {
            name: super::naming::named_slot(&default.name, slot),
            slot: Some(slot.to_string()),
            facts: default.facts,
        })
    }

    /// The ref of this slot's chain (docs/sync.md): `refs/handoffs/<branch>`, or for a named
    /// slot `refs/handoff-slots/<slot>/<branch>`.
    pub(crate) fn chain_ref(&self) -> String {
        super::naming::chain_ref(&self.facts.reference, self.slot.as_deref())
    }

    /// The user's settings for this repository (git config, then the environment's overrides).
    pub(crate) fn settings(&self) -> crate::settings::Settings {
        crate::settings::Settings::of(&self.facts.config)
    }

    pub(crate) fn main(&self) -> String {
        self.facts.main.to_string_lossy().into_owned()
    }

    pub(crate) fn checkout(&self) -> String {
        self.facts.checkout.to_string_lossy().into_owned()
    }

    /// `draft` with the envelope this target gives a stored document: `branch:`, `checkout:`,
    /// `progress: complete` and `head:` forced, any `from:` dropped (only bringing a version in
    /// from a remote says where it came from), every other byte kept.
    pub(crate) fn normalise(&self, draft: &str) -> Result<String, crate::error::Error> {
        let checkout = self.checkout();
        let fields = [
            ("branch", self.facts.reference.as_str()),
            ("checkout", checkout.as_str()),
            ("progress", "complete"),
            ("head", self.facts.head.as_str()),
        ];
        // A branch before its first commit has no head to record; a draft's own `progress:`
        // that is no lifecycle word is kept, for the gate to refuse as `verify-handoff` does.
        let unborn = self.facts.head.is_empty();
        let bad_progress = crate::document::Document::parse(draft)
            .field("progress")
            .is_some_and(|f| crate::document::envelope::Progress::parse(&f.value).is_none());
        let fields: Vec<(&str, &str)> = fields
            .into_iter()
            .filter(|(name, _)| !(unborn && *name == "head" || bad_progress && *name == "progress"))
            .collect();
        let fields = &fields[..];
        crate::document::normalise::normalise(draft, fields).map(|text| {
            let text = crate::document::normalise::without(&text, "from");
            if unborn {
                crate::document::normalise::without(&text, "head")
            } else {
                text
            }
        })
    }
}
