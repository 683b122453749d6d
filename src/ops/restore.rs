//! `restore`: swap a kept version back into the slot (run again to undo); the restored version
//! is gated like a written draft, joins the chain like a written one and travels with autoPush.

use serde::Serialize;

use super::Place;
use super::after::{self, Why};
use crate::error::Error;
use crate::store::change::{SlotChange, Wait};
use crate::store::{epoch, iso, slot};

/// What `restore` did.
#[derive(Debug, Serialize)]
pub(crate) struct Restored {
    pub(crate) slot: String,
    pub(crate) version: usize,
    /// Where the slot's previous version went in history.
    pub(crate) history: Option<String>,
    pub(crate) auto_push: bool,
    /// The restored version's own time (ISO), which the slot now has.
    #[serde(skip)]
    pub(crate) written: String,
}

/// Swap kept version `version` (1 is the newest kept) of `place`'s slot back in.
pub(crate) fn restore(place: &Place, version: usize) -> Result<Restored, Error> {
    let (target, store) = place.target_and_store()?;
    let slot_path = store.path_of(&target.name);
    let shown = slot_path.to_string_lossy().into_owned();
    store.create()?;
    let change = SlotChange::begin(&store, &target, Wait::Cli)?;
    let versions = slot::versions(&store, &target.name);
    let Some(chosen) = version.checked_sub(1).and_then(|i| versions.get(i)) else {
        return Err(Error::NoVersion {
            slot: shown,
            version,
            kept: versions.len(),
        });
    };
    let mtime = chosen.mtime.ok_or_else(|| {
        Error::io(
            &chosen.path,
            std::io::Error::other("modification time unreadable"),
        )
    })?;
    if let Ok(meta) = crate::fs::symlink_metadata(&slot_path)
        && !meta.file_type().is_file()
    {
        return Err(Error::NotRegular(slot_path));
    }
    // What is restored is gated like a written draft: a malformed version or one carrying a
    // credential never goes back into the slot.
    let bytes = slot::read_capped(&chosen.path)?;
    let doc = crate::document::Document::parse(&String::from_utf8_lossy(&bytes).replace('\r', ""));
    let refusal = if !doc.secrets.is_empty() {
        Some(crate::error::Refusal::Credential)
    } else {
        crate::report::run_gate::malformed(&doc, &chosen.path.to_string_lossy())
            .map(|_| crate::error::Refusal::Malformed)
    };
    if let Some(why) = refusal {
        return Err(Error::NotStored { slot: shown, why });
    }
    let kept = change.restore(chosen, mtime)?;
    let history = kept.map(|p| p.to_string_lossy().into_owned());
    // The restored version joins the branch's chain as the change ends, and travels like a
    // written one.
    let (_, followed) = after::finish(change, Why::Restored);
    let auto_push = followed.push_started;
    Ok(Restored {
        slot: shown,
        version,
        history,
        auto_push,
        written: iso(epoch(mtime)),
    })
}
