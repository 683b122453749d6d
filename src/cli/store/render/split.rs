//! `split` for people: a line per part.

use super::super::split::Split;

pub(crate) fn parts(s: &Split) -> String {
    let mut text = String::new();
    for p in &s.parts {
        let gate = match p.exit {
            0 => "gate: OK",
            1 => "gate: FAILED — fix the citations and write again",
            _ => "gate: MALFORMED",
        };
        let line = match (&p.refused, s.stored) {
            (Some(why), _) => format!("refused  {} ← {}: {why}\n", p.slot, p.file),
            (None, true) => format!(
                "stored   {} ← {} ({gate})\n",
                p.path.as_deref().unwrap_or(&p.slot),
                p.file
            ),
            (None, false) => format!("checked  {} ← {} ({gate}; not written)\n", p.slot, p.file),
        };
        text.push_str(&line);
    }
    text
}
