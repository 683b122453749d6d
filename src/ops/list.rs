//! `list` (docs/store.md §9.4): every handoff in the store, newest first.

use serde::Serialize;

use crate::error::Error;
use crate::store::{HandoffInfo, Store};

/// What `list` found: every candidate, newest first, and how many files were skipped.
#[derive(Debug, Serialize)]
pub(crate) struct Listing {
    pub(crate) store: String,
    pub(crate) handoffs: Vec<HandoffInfo>,
    pub(crate) skipped: usize,
}

/// Every candidate in the store, newest first.
pub(crate) fn list() -> Result<Listing, Error> {
    let store = Store::open()?;
    let (handoffs, skipped) = store.candidates()?;
    Ok(Listing {
        store: store.shown(),
        handoffs,
        skipped,
    })
}
