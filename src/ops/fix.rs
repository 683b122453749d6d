//! `fix` (docs/store.md §9.14): `verify-handoff --fix` on the target's stored handoff. The slot
//! changes as every slot change does — under its lock, the version it replaces kept in history,
//! the new one recorded on the branch's chain — and, as a new version of the handoff, it travels
//! with `handoff.autoPush` like a written one ([`super::after::decide`]).

use serde::Serialize;

use super::Place;
use super::after::{self, Why};
use crate::error::{Error, NothingToDo};
use crate::report::fix::{self, Healing};
use crate::report::run_gate::gate_bytes;
use crate::store::change::{SlotChange, Wait};

/// What `fix` did to the slot.
#[derive(Debug, Serialize)]
pub(crate) struct Fixed {
    pub(crate) path: String,
    #[serde(flatten)]
    pub(crate) healing: Healing,
    /// The slot was replaced (not with `--dry-run`, and only when something moved).
    pub(crate) written: bool,
    /// Where the version it replaced is kept.
    pub(crate) history: Option<String>,
    /// The gate's exit on the result (0 OK, 1 failed, 2 malformed).
    pub(crate) exit: i32,
    /// Whether a background push was started (`handoff.autoPush`).
    pub(crate) auto_push: bool,
    #[serde(skip)]
    pub(crate) dry_run: bool,
}

/// Heal the line numbers of `place`'s stored handoff; with `dry_run`, only say what would move.
pub(crate) fn fix(place: &Place, dry_run: bool) -> Result<Fixed, Error> {
    let (target, store) = place.target_and_store()?;
    let path = store.path_of(&target.name);
    let shown = path.to_string_lossy().into_owned();
    let checkout = target.checkout();
    let stored = || {
        crate::fs::read(&path)
            .ok()
            .filter(|b| crate::store::slot::progress_of(b).is_none_or(|p| p != "writing"))
            .ok_or_else(|| {
                Error::NothingToDo(NothingToDo::NoHandoffFor(target.facts.reference.clone()))
            })
    };
    // Computed without the lock; a write takes it and computes again only if the slot changed
    // meanwhile.
    let bytes = stored()?;
    let mut healed = heal(&shown, &bytes, &checkout);
    let mut fixed = Fixed {
        path: shown.clone(),
        healing: healed.healing.clone(),
        written: false,
        history: None,
        exit: healed.exit,
        auto_push: false,
        dry_run,
    };
    if dry_run || healed.text.is_none() {
        return Ok(fixed);
    }
    let change = SlotChange::of_slot(&store, &target.name, Wait::Cli)?;
    let now = stored()?;
    if now != bytes {
        healed = heal(&shown, &now, &checkout);
        fixed.healing = healed.healing.clone();
        fixed.exit = healed.exit;
    }
    if let Some(text) = &healed.text {
        // Healed line numbers are not new content: the handoff keeps the time it was written
        // (what `read` shows, and what STALE measures), as a consume keeps it.
        let written = crate::fs::symlink_metadata(&path)
            .and_then(|m| m.modified())
            .map_err(|e| Error::io(&path, e))?;
        fixed.history = change
            .replace_at(text.as_bytes(), written)?
            .map(|p| p.to_string_lossy().into_owned());
        fixed.written = true;
        let (recorded, followed) = after::finish(change, Why::Fixed);
        recorded.tip?;
        fixed.auto_push = followed.push_started;
    }
    Ok(fixed)
}

/// A stored handoff healed: its moves, the rewritten text (when something moved) and the
/// gate's exit on the result.
struct Healed {
    healing: Healing,
    text: Option<String>,
    exit: i32,
}

fn heal(shown: &str, bytes: &[u8], checkout: &str) -> Healed {
    let before = gate_bytes(shown, bytes.to_vec(), Some(checkout));
    let healing = fix::moves(&before);
    match std::str::from_utf8(bytes) {
        Ok(text) if !healing.moves.is_empty() => {
            let healed = fix::rewrite(text, &healing.moves);
            let exit =
                fix::regate(&before, &healed, shown, Some(checkout), &healing.moves).exit_code;
            Healed {
                healing,
                text: Some(healed),
                exit,
            }
        }
        _ => Healed {
            healing,
            text: None,
            exit: before.exit_code,
        },
    }
}
