//! `list` (docs/store.md §9.4): every candidate, newest first, five TAB-separated fields a line.

use std::io::Write;

use serde::Serialize;

use super::{Format, Ui, print, print_json};
use crate::error::{Error, Exit};
use crate::store::{HandoffInfo, Store, iso};

#[derive(Serialize)]
struct ListJson<'a> {
    store: String,
    handoffs: &'a [HandoffInfo],
    skipped: usize,
}

/// List every handoff in the store, newest first.
#[derive(Debug, clap::Args)]
pub struct Args {}

pub fn run(_args: &Args, ui: &mut Ui) -> Result<Exit, Error> {
    list(ui.format, ui.out, ui.err)
}

fn list(format: Format, out: &mut dyn Write, err: &mut dyn Write) -> Result<Exit, Error> {
    let store = Store::open()?;
    let (handoffs, skipped) = store.candidates()?;
    match format {
        Format::Json => print_json(
            out,
            &ListJson {
                store: store.shown(),
                handoffs: &handoffs,
                skipped,
            },
        )?,
        Format::Text => {
            let mut text = String::with_capacity(handoffs.len() * 128);
            // Many entries share a second; its timestamp is formatted once.
            let mut when: Option<(i64, String)> = None;
            for h in &handoffs {
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
                // A handoff from another machine says so, in a last column of its own.
                if let Some(from) = &h.from {
                    text.push_str("\tfrom: ");
                    text.push_str(from);
                }
                text.push('\n');
            }
            print(out, &text)?;
            if skipped > 0 {
                let _ = writeln!(
                    err,
                    "handoff-store: note: {skipped} empty or unreadable file(s) skipped"
                );
            }
        }
    }
    // The process ends next: its memory goes back whole, so 10,000 entries are not freed one
    // by one (a tenth of a large listing's time).
    std::mem::forget(handoffs);
    Ok(Exit::Ok)
}
