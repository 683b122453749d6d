//! `write` for people: where the handoff went, and what follows.

use super::super::write::Written;

pub(crate) fn written(w: &Written) -> String {
    let verb = if w.stored { "stored" } else { "would go" };
    let mut text = format!("\n{verb:<8} {} {}\n", w.path, w.note);
    if let Some(h) = &w.history {
        text.push_str(&format!("history  {h}\n"));
    }
    if w.auto_push {
        text.push_str("pushing  in the background (handoff.autoPush)\n");
    }
    text
}
