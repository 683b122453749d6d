//! `split NAME=FILE…` (docs/store.md §9.18): a braided session's threads written as one
//! self-contained handoff each, into named slots — all gated first, and none written when one
//! is malformed (or refused: unreadable, a credential, a bad slot name).

use serde::Serialize;

use super::Place;
use super::write::{Body, Request as WriteRequest, write};
use crate::error::Error;

/// One thread: its slot, where its draft came from, and the draft (read once: what is gated is
/// what is stored, whatever happens to its file) or why it could not be read.
pub(crate) struct Thread {
    pub(crate) slot: String,
    pub(crate) file: String,
    pub(crate) draft: Result<String, Error>,
}

/// One part of a split, and how it ended.
#[derive(Debug, Serialize)]
pub(crate) struct Part {
    pub(crate) slot: String,
    pub(crate) file: String,
    pub(crate) path: Option<String>,
    /// The gate's exit on it (0, 1, 2), or the refusal's.
    pub(crate) exit: i32,
    pub(crate) stored: bool,
    /// Why it was refused, when it was.
    pub(crate) refused: Option<String>,
}

/// What `split` did.
#[derive(Debug, Serialize)]
pub(crate) struct Split {
    pub(crate) stored: bool,
    pub(crate) parts: Vec<Part>,
}

impl Split {
    /// The worst gate exit of its parts.
    pub(crate) fn worst(&self) -> i32 {
        self.parts.iter().map(|p| p.exit).max().unwrap_or(0)
    }
}

/// Gate every thread as `write --dry-run` does; write them all only when none is refused.
pub(crate) fn split(checkout: Option<&str>, threads: &[Thread]) -> Split {
    let checked = attempt(checkout, threads, true);
    if checked.iter().any(|p| p.refused.is_some() || p.exit == 2) {
        return Split {
            stored: false,
            parts: checked,
        };
    }
    Split {
        stored: true,
        parts: attempt(checkout, threads, false),
    }
}

/// Write (or with `dry_run` only gate) each thread; how each ended.
fn attempt(checkout: Option<&str>, threads: &[Thread], dry_run: bool) -> Vec<Part> {
    threads
        .iter()
        .map(|t| {
            let mut part = Part {
                slot: t.slot.clone(),
                file: t.file.clone(),
                path: None,
                exit: 2,
                stored: false,
                refused: None,
            };
            let draft = match &t.draft {
                Ok(draft) => draft.clone(),
                Err(e) => {
                    part.refused = Some(e.report());
                    return part;
                }
            };
            let request = WriteRequest {
                place: Place::of(checkout, Some(&t.slot)),
                body: Body::Document {
                    text: draft,
                    from: t.file.clone(),
                },
                force: false,
                no_gate: false,
                branch: None,
                dry_run,
            };
            match write(&request) {
                Err(e) => part.refused = Some(e.report()),
                Ok(w) => {
                    if let Some(written) = &w.written {
                        part.path = Some(written.path.clone());
                        part.exit = written.exit;
                        part.stored = written.stored;
                    }
                    if let Some(e) = &w.refused {
                        part.refused = Some(e.report());
                    }
                }
            }
            part
        })
        .collect()
}
