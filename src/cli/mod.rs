//! Command-line front ends: clap definitions and dispatch. Commands and hooks compute and
//! render into a [`reply::Reply`], which alone writes to the output (never `println!`, which
//! panics on a closed pipe); a closed stdout ends the output quietly and keeps the exit code
//! already computed.

pub(crate) mod paint;
mod reply;
pub mod store;
pub mod verify;

use std::io;

use clap::ValueEnum;

/// Output form, for every command that has one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Format {
    Text,
    Json,
}

/// Whether a write error only means the reader went away.
pub(crate) fn is_broken_pipe(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::BrokenPipe
}

/// `command` and every command under it with `table` (the exit codes) after its help's
/// examples.
pub(crate) fn with_exit_status(
    command: clap::Command,
    table: &[(crate::error::Exit, &str)],
) -> clap::Command {
    let status = crate::error::Exit::help_text(table);
    let after = match command.get_after_help() {
        Some(examples) => format!("{examples}\n\n{status}"),
        None => status,
    };
    command
        .after_help(after)
        .mut_subcommands(|sub| with_exit_status(sub, table))
}
