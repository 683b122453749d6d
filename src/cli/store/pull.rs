//! `pull`: fetch the remote's handoffs and merge them into the local chains and the store.

use super::sync::{Action, Options, execute};
use super::{Format, Reply};
use crate::error::Error;

/// Fetch REMOTE's handoffs and merge them into the local chains and the store.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(flatten)]
    opts: Options,
}

pub(crate) fn run(args: &Args, format: Format) -> Result<Reply, Error> {
    execute(&args.opts, Action::Pull, false, format)
}
