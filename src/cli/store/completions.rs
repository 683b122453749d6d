//! `completions <shell>`: the shell completion script for the whole command line.

use super::Ui;
use crate::error::Error;

/// Print a shell completion script.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[arg(value_enum)]
    shell: clap_complete::Shell,
}

pub fn run(args: &Args, ui: &mut Ui) -> Result<i32, Error> {
    clap_complete::generate(args.shell, &mut super::command(), "handoff-store", ui.out);
    Ok(0)
}
