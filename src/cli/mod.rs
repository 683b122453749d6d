//! Command-line front ends: clap definitions and dispatch. Commands write through
//! `&mut dyn Write` (never `println!`, which panics on a closed pipe); a closed stdout ends
//! the output quietly and keeps the exit code already computed.

pub mod store;
pub mod verify;

use std::io::{self, Write};

use clap::ValueEnum;

use crate::report::Stream;

/// Output form, for every command that has one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Text,
    Json,
}

/// Write `lines` to their streams. A broken stdout pipe stops the writing quietly.
pub fn emit(
    lines: &[(Stream, String)],
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> io::Result<()> {
    for (stream, line) in lines {
        let w: &mut dyn Write = match stream {
            Stream::Out => out,
            Stream::Err => err,
        };
        writeln!(w, "{line}")?;
    }
    out.flush()?;
    err.flush()
}

/// Whether a write error only means the reader went away.
pub fn is_broken_pipe(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::BrokenPipe
}

/// Render a clap error (help and version included) to the right writer; its exit code.
pub fn clap_exit(e: clap::Error, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    let text = e.render().to_string();
    let w: &mut dyn Write = if e.use_stderr() { err } else { out };
    let _ = w.write_all(text.as_bytes());
    let _ = w.flush();
    e.exit_code()
}
