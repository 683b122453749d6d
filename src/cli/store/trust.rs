//! `trust codex`: have Codex trust the handoff-store hooks it lists, through `codex
//! app-server` — what Codex's /hooks "Trust" does.

use super::install::dir_of;
use super::{Reply, render};
use crate::error::{Error, Exit, External, NothingToDo};
use crate::harness::codex;

/// Have Codex trust the handoff-store hooks it lists here.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[arg(value_enum)]
    what: TrustWhat,
    dir: Option<String>,
}

pub fn run(args: &Args) -> Result<Reply, Error> {
    let trusted = trust(args.what, args.dir.as_deref())?;
    Ok(Reply::new(Exit::Ok).text(render::trusted(&trusted)))
}

/// What `trust` recorded.
#[derive(Debug)]
pub enum Trusted {
    /// Codex recorded its trust of these hooks.
    Recorded(Vec<String>),
    /// Every handoff-store hook Codex lists was trusted already.
    Already,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum TrustWhat {
    /// Codex CLI.
    Codex,
}

/// `trust codex`: trust the handoff-store hooks Codex lists for DIR (exit 3 when Codex cannot
/// be asked, 4 when it lists none of ours).
fn trust(what: TrustWhat, dir: Option<&str>) -> Result<Trusted, Error> {
    let TrustWhat::Codex = what;
    let dir = dir_of(dir)?;
    let bin = codex::binary().ok_or_else(|| Error::External(External::NoCodex))?;
    match codex::trust_ours(&bin, &dir)
        .map_err(|e| Error::External(External::Codex(Box::new(e))))?
    {
        codex::Trust::Recorded(keys) => Ok(Trusted::Recorded(keys)),
        codex::Trust::Already => Ok(Trusted::Already),
        codex::Trust::NotListed => Err(Error::NothingToDo(NothingToDo::NoHookListed)),
    }
}
