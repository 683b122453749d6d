//! `list` (docs/store.md §9.4): every candidate, newest first, five TAB-separated fields a line.

use super::{Format, Reply};
use crate::error::Error;
use crate::ops::list::Listing;
use crate::store::iso;

/// List every handoff in the store, newest first.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {}

pub(crate) fn run(_args: &Args, format: Format) -> Result<Reply, Error> {
    let listing = crate::ops::list::list()?;
    let mut reply = Reply::show(format, &listing, list_text)?;
    if format == Format::Text
        && let Some(note) = list_note(&listing)
    {
        reply = reply.note(note);
    }
    // The process ends next: its memory goes back whole, so 10,000 entries are not freed one
    // by one (a tenth of a large listing's time).
    std::mem::forget(listing);
    Ok(reply)
}

pub(super) fn list_text(l: &Listing) -> String {
    let mut text = String::with_capacity(l.handoffs.len() * 128);
    // Many entries share a second; its timestamp is formatted once.
    let mut when: Option<(i64, String)> = None;
    for h in &l.handoffs {
        if let Some(t) = h.mtime
            && when.as_ref().is_none_or(|(at, _)| *at != t)
        {
            when = Some((t, iso(t)));
        }
        if let (Some((_, iso)), Some(_)) = (&when, h.mtime) {
            text.push_str(iso);
        }
        for field in [
            h.progress_shown(),
            h.branch.as_deref().unwrap_or("?"),
            h.checkout.as_deref().unwrap_or("?"),
            &h.path,
        ] {
            text.push('\t');
            text.push_str(field);
        }
        if let Some(from) = &h.from {
            text.push_str("\tfrom: ");
            text.push_str(from);
        }
        text.push('\n');
    }
    text
}

/// The note for stderr when files were skipped.
pub(crate) fn list_note(l: &Listing) -> Option<String> {
    (l.skipped > 0).then(|| {
        format!(
            "handoff-store: note: {} empty or unreadable file(s) skipped",
            l.skipped
        )
    })
}
