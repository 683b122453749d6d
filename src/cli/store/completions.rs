//! `completions <shell>`: the shell completion script for the whole command line.

use super::Reply;
use crate::error::{Error, Exit};

/// Print a shell completion script.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The shell to complete for.
    #[arg(value_enum)]
    shell: clap_complete::Shell,
}

pub(crate) fn run(args: &Args) -> Result<Reply, Error> {
    let mut script = Vec::new();
    clap_complete::generate(
        args.shell,
        &mut super::command(),
        "handoff-store",
        &mut script,
    );
    Ok(Reply::new(Exit::Ok).text(String::from_utf8_lossy(&script).into_owned()))
}
