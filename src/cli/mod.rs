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
pub(crate) enum Format {
    Text,
    Json,
}

/// Write `lines` to their streams: each run of consecutive lines for one stream goes out in one
/// write (a 1,000-citation report is a handful of writes, not 2,000), and the order between the
/// streams is kept.
pub(crate) fn emit(
    lines: &[(Stream, String)],
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> io::Result<()> {
    let mut run = String::new();
    let mut iter = lines.iter().peekable();
    while let Some((stream, line)) = iter.next() {
        run.push_str(line);
        run.push('\n');
        if iter.peek().is_some_and(|(next, _)| next == stream) {
            continue;
        }
        let w: &mut dyn Write = match stream {
            Stream::Out => &mut *out,
            Stream::Err => &mut *err,
        };
        w.write_all(run.as_bytes())?;
        w.flush()?;
        run.clear();
    }
    out.flush()?;
    err.flush()
}

/// Whether a write error only means the reader went away.
pub(crate) fn is_broken_pipe(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::BrokenPipe
}

/// Render a clap error (help and version included) to the right writer; its exit code.
pub(crate) fn clap_exit(
    e: clap::Error,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> crate::error::Exit {
    let text = e.render().to_string();
    let w: &mut dyn Write = if e.use_stderr() { err } else { out };
    let _ = w.write_all(text.as_bytes());
    let _ = w.flush();
    crate::error::Exit::of_clap(e.exit_code())
}
