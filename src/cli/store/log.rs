//! `log [-C DIR] [-n N]` (docs/store.md §9.15): the lineage of the branch's handoff, newest
//! first, from its chain.

use serde::Serialize;

use super::{Format, Reply, render};
use crate::error::{Error, NothingToDo};
use crate::store::lineage::{self, Version};

/// The branch's handoff versions, newest first, with what each changed.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(flatten)]
    dir: super::checkout::Checkout,
    #[command(flatten)]
    slot: super::checkout::SlotArg,
    /// How many versions to show.
    #[arg(short = 'n', long = "number", value_name = "N", default_value_t = 10)]
    number: usize,
}

/// The lineage `log` shows.
#[derive(Debug, Serialize)]
pub(crate) struct Log {
    pub(crate) branch: String,
    pub(crate) versions: Vec<Version>,
}

pub(crate) fn run(args: &Args, format: Format) -> Result<Reply, Error> {
    let (target, store) = args.slot.target_and_store(args.dir.dir())?;
    let branch = target.facts.reference.clone();
    let key = crate::store::authorship::StoreKey::read(&store);
    let versions = lineage::log(key.as_ref(), &target, args.number)
        .filter(|v| !v.is_empty())
        .ok_or_else(|| Error::NothingToDo(NothingToDo::NoHandoffFor(branch.clone())))?;
    Reply::show(format, &Log { branch, versions }, render::log)
}
