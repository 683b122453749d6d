//! `fix` for people: each move and what was left alone, then what happened to the slot.

use super::super::fix::Fixed;
use crate::report::fix::citations;

pub(crate) fn fixed(f: &Fixed) -> String {
    let mut text: String = f.healing.lines().iter().map(|l| format!("{l}\n")).collect();
    let n = f.healing.moves.len();
    let verdict = match f.exit {
        0 => "gate OK",
        1 => "gate FAILED",
        _ => "gate MALFORMED",
    };
    text.push_str(&match (n, f.dry_run, f.written) {
        (0, _, _) => format!(
            "nothing to fix: no citation of {} moved to a line of its own ({verdict})\n",
            f.path
        ),
        (_, true, _) => format!(
            "would fix {}: {} (--dry-run: nothing written; then {verdict})\n",
            f.path,
            citations(n)
        ),
        _ => format!("fixed    {}: {} ({verdict})\n", f.path, citations(n)),
    });
    if let Some(h) = &f.history {
        text.push_str(&format!("history  {h}\n"));
    }
    text
}
