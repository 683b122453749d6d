//! `push`: send this branch's handoff chain (or every branch's) to the remote, never forcing;
//! with `--prune`, delete the remote's chains of branches gone everywhere.

use super::sync::{Action, Options, execute};
use super::{Format, Reply};
use crate::error::Error;
use crate::sync::push::Prune;

/// Send this branch's handoff chain (refs/handoffs/<branch>) to REMOTE; never forces.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(flatten)]
    opts: Options,
    /// Every branch's handoff, not only the checked-out one.
    #[arg(long)]
    all: bool,
    /// Also delete the remote's handoffs of branches that exist neither here nor on the remote
    /// (asked with `git ls-remote`) — except one this store did not write, from the last 14
    /// days (its branch may not be pushed yet).
    #[arg(long)]
    prune: bool,
    /// With --prune: delete such a teammate's recent handoff too.
    #[arg(long, requires = "prune")]
    force: bool,
    #[arg(long, hide = true)]
    background: bool,
}

pub(crate) fn run(args: &Args, format: Format) -> Result<Reply, Error> {
    let prune = match (args.prune, args.force) {
        (false, _) => Prune::No,
        (true, false) => Prune::Gone,
        (true, true) => Prune::Force,
    };
    let action = Action::Push {
        all: args.all,
        prune,
    };
    execute(&args.opts, action, args.background, format)
}
