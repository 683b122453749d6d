//! `restore` for people.

use super::super::restore::Restored;

pub(crate) fn restored(r: &Restored) -> String {
    let mut text = format!(
        "restored {} from version {} ({})\n",
        r.slot, r.version, r.written
    );
    if let Some(h) = &r.history {
        text.push_str(&format!("history  {h}\n"));
    }
    if r.auto_push {
        text.push_str("pushing  in the background (handoff.autoPush)\n");
    }
    text
}
