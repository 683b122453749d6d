//! `pull`: fetch the remote's handoffs and merge them into the local chains and the store.

use super::Ui;
use super::sync::{Action, Options, execute};
use crate::error::{Error, Exit};

/// Fetch REMOTE's handoffs and merge them into the local chains and the store.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    opts: Options,
}

pub fn run(args: &Args, ui: &mut Ui) -> Result<Exit, Error> {
    execute(&args.opts, Action::Pull, false, ui.format, ui.out, ui.err)
}
