//! `log` (docs/store.md §9.15): the lineage of the branch's handoff, newest first, from its
//! chain.

use serde::Serialize;

use super::Place;
use crate::error::{Error, NothingToDo};
use crate::store::lineage::{self, Version};

/// The lineage `log` shows.
#[derive(Debug, Serialize)]
pub(crate) struct Log {
    pub(crate) branch: String,
    pub(crate) versions: Vec<Version>,
}

/// The newest `number` versions of `place`'s handoff, each with what it changed.
pub(crate) fn log(place: &Place, number: usize) -> Result<Log, Error> {
    let (target, store) = place.target_and_store()?;
    let branch = target.facts.reference.clone();
    let key = crate::store::authorship::StoreKey::read(&store);
    let versions = lineage::log(key.as_ref(), &target, number)
        .filter(|v| !v.is_empty())
        .ok_or_else(|| Error::NothingToDo(NothingToDo::NoHandoffFor(branch.clone())))?;
    Ok(Log { branch, versions })
}
