//! The operations floor: what handoff-store does, with no front end in it. Each operation takes
//! a typed request and returns a `Serialize` outcome (or an `Error`); none knows the argument
//! parser, an output format, a hook's input or a terminal. The command line (`cli`), the hooks (`hooks`,
//! `harness`) and the MCP server are thin doors onto it: they map their input to a request and
//! render the outcome — so a second front end never copies an operation.
//!
//! It sits above `store` and `sync` (which it drives) and below `hooks` (which call it).
//! What follows a change of a slot is decided once, in [`after`].

pub(crate) mod after;
pub(crate) mod audit;
pub(crate) mod deliver;
pub(crate) mod delivered;
pub(crate) mod fix;
pub(crate) mod history;
pub(crate) mod impact;
pub(crate) mod list;
pub(crate) mod log;
pub(crate) mod marker;
pub(crate) mod progress;
pub(crate) mod prune;
pub(crate) mod read;
pub(crate) mod restore;
pub(crate) mod split;
pub(crate) mod startup;
pub(crate) mod tripwire;
pub(crate) mod write;

use crate::error::Error;
use crate::store::{Store, Target};

/// Where an operation works: a checkout (default: `$CONTEXT_ECONOMY_CHECKOUT`, then the
/// working directory) and a named slot of its branch (default: the branch's own).
#[derive(Debug, Clone, Default)]
pub(crate) struct Place {
    pub(crate) checkout: Option<String>,
    pub(crate) slot: Option<String>,
}

impl Place {
    /// The checkout `checkout` (or the default), its branch's default slot.
    pub(crate) fn of(checkout: Option<&str>, slot: Option<&str>) -> Place {
        Place {
            checkout: checkout.map(str::to_string),
            slot: slot.map(str::to_string),
        }
    }

    /// The one rule for a target: `Target::required` (never outside a checkout), moved to the
    /// slot (a name that cannot be one is a usage error).
    pub(crate) fn target(&self) -> Result<Target, Error> {
        self.target_on(None)
    }

    /// [`Place::target`], keyed to `branch` rather than to what HEAD is on when one is given.
    pub(crate) fn target_on(&self, branch: Option<&str>) -> Result<Target, Error> {
        let target = Target::required(self.checkout.as_deref())?;
        let target = match branch.filter(|b| !b.is_empty()) {
            Some(branch) => target.on_branch(branch),
            None => target,
        };
        target.with_slot(self.slot.as_deref())
    }

    /// [`Place::target`], then the store — target problems are reported first (docs/store.md
    /// §0 rule 6).
    pub(crate) fn target_and_store(&self) -> Result<(Target, Store), Error> {
        let target = self.target()?;
        Ok((target, Store::open()?))
    }
}
