//! `list` (docs/store.md §9.4): every candidate, newest first, five TAB-separated fields a line.

use serde::Serialize;

use super::{Format, Reply, render};
use crate::error::Error;
use crate::store::{HandoffInfo, Store};

/// What `list` found: every candidate, newest first, and how many files were skipped.
#[derive(Debug, Serialize)]
pub(crate) struct Listing {
    pub(crate) store: String,
    pub(crate) handoffs: Vec<HandoffInfo>,
    pub(crate) skipped: usize,
}

/// List every handoff in the store, newest first.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {}

pub(crate) fn run(_args: &Args, format: Format) -> Result<Reply, Error> {
    let store = Store::open()?;
    let (handoffs, skipped) = store.candidates()?;
    let listing = Listing {
        store: store.shown(),
        handoffs,
        skipped,
    };
    let mut reply = Reply::show(format, &listing, render::list)?;
    if format == Format::Text
        && let Some(note) = render::list_note(&listing)
    {
        reply = reply.note(note);
    }
    // The process ends next: its memory goes back whole, so 10,000 entries are not freed one
    // by one (a tenth of a large listing's time).
    std::mem::forget(listing);
    Ok(reply)
}
