//! `set-progress` (docs/store.md §9.6): one envelope line of a stored handoff rewritten, every
//! other byte and the mtime kept, under the slot's lock and recorded on its chain. A file
//! outside the store is refused (a draft's `progress:` line is its author's to edit).

use std::path::Path;

use serde::Serialize;

use super::after::{self, Why};
use crate::error::{Error, Usage};
use crate::store::Store;
use crate::store::change::{SlotChange, Wait};
use crate::store::slot::{self, Flip};

pub(crate) use crate::document::envelope::Progress;

/// What `set-progress` did to FILE.
#[derive(Debug, Serialize)]
pub(crate) struct ProgressSet {
    pub(crate) path: String,
    pub(crate) old: Option<String>,
    pub(crate) new: &'static str,
    pub(crate) changed: bool,
    /// FILE has no `progress:` (or `status:`) line in its first 20 lines: nothing was changed
    /// (exit 1).
    #[serde(skip)]
    pub(crate) no_field: bool,
}

/// Whether `file` sits directly in the store directory.
fn in_store(file: &Path, store: &Store) -> Option<String> {
    let parent = file
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let same = crate::fs::canonicalize(parent).ok()? == crate::fs::canonicalize(&store.dir).ok()?;
    same.then(|| file.file_name().map(|n| n.to_string_lossy().into_owned()))
        .flatten()
}

/// Set the `progress:` line of `file`, a handoff in the store, to `value`.
pub(crate) fn set_progress(file: &str, value: Progress) -> Result<ProgressSet, Error> {
    let path = Path::new(file);
    let new = value.as_str();
    // The store matters only for the lock, but a store path that is not a directory is still
    // reported (docs/store.md §1: every command exits 3 on it).
    let store = match Store::locate() {
        Ok(_) => Some(Store::open()?),
        Err(_) => None,
    };
    let Some((store, name)) = store.and_then(|s| in_store(path, &s).map(|n| (s, n))) else {
        return Err(Error::Usage(Usage::NotInStore(file.to_string())));
    };
    // A slot's change goes through SlotChange: its lock, then its chain records it.
    let change = SlotChange::of_slot(&store, &name, Wait::Cli)?;
    let current = || {
        crate::fs::read(path)
            .ok()
            .and_then(|b| slot::progress_of(&b))
    };
    let flipped = change.flip(new, None)?;
    after::finish(change, Why::Progress);
    let no_field = matches!(flipped, Flip::NoField);
    let (old, changed) = match flipped {
        Flip::NoField => (None, false),
        Flip::Same | Flip::Replaced => (current(), false),
        Flip::Changed { old } => (old, true),
    };
    Ok(ProgressSet {
        path: file.to_string(),
        old,
        new,
        changed,
        no_field,
    })
}
