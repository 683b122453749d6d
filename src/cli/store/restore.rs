//! `restore`: swap a kept version back into the slot (run again to undo); the restored version
//! joins the chain like a written one and travels with autoPush.

use super::{Format, Reply};
use crate::error::Error;
use crate::ops::restore::Restored;

/// Swap a kept version back into the slot.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(flatten)]
    dir: super::checkout::CheckoutOrDir,
    #[command(flatten)]
    slot: super::checkout::SlotArg,
    /// The version to bring back (1 is the newest kept; `history` lists them). `--version N`
    /// still works.
    #[arg(
        short = 'n',
        long = "number",
        alias = "version",
        value_name = "N",
        default_value_t = 1,
        value_parser = clap::value_parser!(u64).range(1..)
    )]
    version: u64,
}

pub(crate) fn run(args: &Args, format: Format) -> Result<Reply, Error> {
    let place = args.slot.place(args.dir.dir());
    let restored = crate::ops::restore::restore(&place, args.version as usize)?;
    Reply::show(format, &restored, restored_text)
}

fn restored_text(r: &Restored) -> String {
    let mut text = format!(
        "restored {} from version {} ({})\n",
        r.slot, r.version, r.written
    );
    if let Some(h) = &r.history {
        text.push_str(&format!("history  {h}\n"));
    }
    if r.auto_push {
        text.push_str("pushing  in the background (handoff.autoPush)\n");
    }
    text
}
