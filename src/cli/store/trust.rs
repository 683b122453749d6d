//! `trust codex`: have Codex trust the handoff-store hooks it lists, through `codex
//! app-server` — what Codex's /hooks "Trust" does.

use std::io::Write;

use super::install::dir_of;
use super::{Ui, print};
use crate::error::{Error, Exit, External, NothingToDo};
use crate::harness::codex;

/// Have Codex trust the handoff-store hooks it lists here.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[arg(value_enum)]
    what: TrustWhat,
    dir: Option<String>,
}

pub fn run(args: &Args, ui: &mut Ui) -> Result<Exit, Error> {
    trust(args.what, args.dir.as_deref(), ui.out)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum TrustWhat {
    /// Codex CLI.
    Codex,
}

/// `trust codex`: trust the handoff-store hooks Codex lists for DIR (exit 3 when Codex cannot
/// be asked, 4 when it lists none of ours).
fn trust(what: TrustWhat, dir: Option<&str>, out: &mut dyn Write) -> Result<Exit, Error> {
    let TrustWhat::Codex = what;
    let dir = dir_of(dir)?;
    let bin = codex::binary().ok_or_else(|| Error::External(External::NoCodex))?;
    let text = match codex::trust_ours(&bin, &dir)
        .map_err(|e| Error::External(External::Codex(Box::new(e))))?
    {
        codex::Trust::Recorded(keys) => format!("trusted   {}\n", keys.join(", ")),
        codex::Trust::Already => {
            "trusted   (already) every handoff-store hook Codex lists here\n".into()
        }
        codex::Trust::NotListed => {
            return Err(Error::NothingToDo(NothingToDo::NoHookListed));
        }
    };
    print(out, &text)?;
    Ok(Exit::Ok)
}
