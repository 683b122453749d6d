//! `list` (store.md §9.4): every candidate, newest first, five TAB-separated fields a line.

use std::io::Write;

use serde::Serialize;

use super::{Format, print, print_json};
use crate::error::Error;
use crate::store::{HandoffInfo, Store, iso};

#[derive(Serialize)]
struct ListJson<'a> {
    store: String,
    handoffs: &'a [HandoffInfo],
    skipped: usize,
}

pub fn list(format: Format, out: &mut dyn Write, err: &mut dyn Write) -> Result<i32, Error> {
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
            let mut text = String::new();
            for h in &handoffs {
                text.push_str(&format!(
                    "{}\t{}\t{}\t{}\t{}\n",
                    h.mtime.map(iso).unwrap_or_default(),
                    h.progress_shown(),
                    h.branch.as_deref().unwrap_or("?"),
                    h.checkout.as_deref().unwrap_or("?"),
                    h.path
                ));
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
    Ok(0)
}
