//! The crate's one error type. Every variant knows its exit code and prints a message a user
//! can act on; it is printed once, at the edge, by the binary's dispatcher.

use std::fmt;

/// Everything that can end a command early.
#[derive(Debug)]
pub enum Error {
    /// Bad flags or values (exit 2).
    Usage(String),
    /// Writing the result failed for a reason other than a closed pipe (exit 3... or 2 for
    /// the gate, whose contract has no I/O code; see `exit_code`).
    Output(std::io::Error),
}

impl Error {
    /// The process exit code for this error.
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Usage(_) => 2,
            Error::Output(_) => 2,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Usage(msg) => write!(f, "{msg}"),
            Error::Output(e) => write!(f, "cannot write the output: {}", crate::input::os_text(e)),
        }
    }
}

impl std::error::Error for Error {}
