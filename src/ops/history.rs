//! `history` (docs/store.md §9.7): the slot is version 0, kept versions are 1..n newest first,
//! numbered as `restore -n` takes them.

use serde::Serialize;

use super::Place;
use crate::error::Error;
use crate::store::{HandoffInfo, epoch, slot};

/// One kept version, numbered as `restore -n` takes it.
#[derive(Debug, Serialize)]
pub(crate) struct Kept {
    pub(crate) version: usize,
    pub(crate) path: String,
    pub(crate) mtime: Option<i64>,
    pub(crate) progress: Option<String>,
    pub(crate) size: u64,
}

/// What `history` found: the slot (version 0) and its kept versions, newest first.
#[derive(Debug, Serialize)]
pub(crate) struct History {
    pub(crate) slot: String,
    pub(crate) current: Option<HandoffInfo>,
    pub(crate) versions: Vec<Kept>,
}

/// The slot of `place` and its kept versions.
pub(crate) fn history(place: &Place) -> Result<History, Error> {
    let (target, store) = place.target_and_store()?;
    let slot_path = store.path_of(&target.name);
    let current = crate::fs::symlink_metadata(&slot_path)
        .ok()
        .filter(|m| m.file_type().is_file())
        .map(|m| {
            let head = slot::read_head(&slot_path).unwrap_or_default();
            HandoffInfo::from_parts(&store, &target.name, &head, &m)
        });
    let versions = slot::versions(&store, &target.name)
        .into_iter()
        .enumerate()
        .map(|(i, v)| Kept {
            version: i + 1,
            progress: slot::read_head(&v.path)
                .ok()
                .and_then(|b| slot::progress_of(&b)),
            path: v.path.to_string_lossy().into_owned(),
            mtime: v.mtime.map(epoch),
            size: v.size,
        })
        .collect();
    Ok(History {
        slot: slot_path.to_string_lossy().into_owned(),
        current,
        versions,
    })
}
