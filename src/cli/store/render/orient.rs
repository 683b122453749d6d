//! `orient` and `path` for people: `key=value` lines (docs/store.md §9.1–§9.2).

use super::super::orient::Orientation;
use super::super::path::SlotPath;

pub(crate) fn orientation(o: &Orientation) -> String {
    let mut text = format!(
        "main={}\ncheckout={}\nbranch={}\nhandoff={}\nexists={}\nmtime={}\nprogress={}\ngate={}\n",
        o.main,
        o.checkout,
        o.branch,
        o.handoff,
        u8::from(o.exists),
        o.mtime.map(|m| m.to_string()).unwrap_or_default(),
        o.progress.as_deref().unwrap_or(""),
        o.gate.as_deref().unwrap_or("")
    );
    for d in &o.drift {
        text.push_str(&format!("drift={}\n", d.text));
    }
    text
}

pub(crate) fn slot_path(p: &SlotPath) -> String {
    format!("{}\n", p.path)
}
