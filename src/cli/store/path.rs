//! `path`: the target's slot path, nothing read.

use serde::Serialize;

use super::{Format, Reply};
use crate::error::Error;

/// Print the target's slot path.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(flatten)]
    dir: super::checkout::CheckoutOrDir,
    #[command(flatten)]
    slot: super::checkout::SlotArg,
}

pub(crate) fn run(args: &Args, format: Format) -> Result<Reply, Error> {
    let (target, store) = args.slot.target_and_store(args.dir.dir())?;
    let slot = SlotPath {
        path: store.path_of(&target.name).to_string_lossy().into_owned(),
    };
    Reply::show(format, &slot, slot_path_text)
}

/// The target's slot path.
#[derive(Debug, Serialize)]
pub(crate) struct SlotPath {
    pub(crate) path: String,
}

fn slot_path_text(p: &SlotPath) -> String {
    format!("{}\n", p.path)
}
