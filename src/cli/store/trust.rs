//! `trust <client>`: have a client that keeps its own trust of hooks (Codex) trust the
//! handoff-store hooks it lists, as its own "Trust" would.

use super::Reply;
use super::install::dir_of;
use crate::error::{Error, Exit};
use crate::harness::Harness;
use crate::harness::Trusted;

/// Have a client trust the handoff-store hooks it lists here.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The client.
    #[arg(value_enum)]
    what: TrustWhat,
    #[command(flatten)]
    dir: super::checkout::CheckoutOrDir,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum TrustWhat {
    /// Codex CLI, through `codex app-server`.
    Codex,
}

pub(crate) fn run(args: &Args) -> Result<Reply, Error> {
    let TrustWhat::Codex = args.what;
    let dir = dir_of(args.dir.dir())?;
    let trusted = Harness::Codex
        .client()
        .trust(&dir)
        .unwrap_or(Ok(crate::harness::Trusted::Recorded(Vec::new())))?;
    Ok(Reply::new(Exit::Ok).text(trusted_text(&trusted)))
}

fn trusted_text(t: &Trusted) -> String {
    match t {
        Trusted::Recorded(keys) => format!("trusted   {}\n", keys.join(", ")),
        Trusted::Already(client) => {
            format!("trusted   (already) every handoff-store hook {client} lists here\n")
        }
    }
}
