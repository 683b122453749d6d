//! `completions <shell>`: the shell completion script for the whole command line.

use super::Ui;
use crate::error::{Error, Exit};

/// Print a shell completion script.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[arg(value_enum)]
    shell: clap_complete::Shell,
}

pub fn run(args: &Args, ui: &mut Ui) -> Result<Exit, Error> {
    clap_complete::generate(args.shell, &mut super::command(), "handoff-store", ui.out);
    Ok(Exit::Ok)
}
