//! The one way a slot changes: written, restored, promoted from a background write, consumed,
//! its `progress:` set. A [`SlotChange`] holds the slot's lock, and when it ends — [`finish`] or
//! a plain drop, an early `?` included — the branch's chain records what the slot then holds
//! (docs/sync.md). The slot primitives it calls are visible only inside `store`, so a caller
//! above cannot change a slot and forget the chain. Only a version that came *from* a chain
//! (`pull`, the hooks' offer) enters through [`SlotChange::from_chain`], whose caller moves the
//! chain itself.
//!
//! [`finish`]: SlotChange::finish

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use super::slot::{self, Flip, SlotLock, Version};
use super::{Store, Target, chain};
use crate::error::Error;

/// How long to wait for the slot's lock.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Wait {
    /// The CLI's 10 s, then the "locked by another process" error.
    Cli,
    /// A hook's short wait; a busy slot is [`Error::Locked`].
    Hook(Duration),
}

/// A change of one slot under way (its lock held); recorded on the chain when it ends.
pub(crate) struct SlotChange<'a> {
    store: &'a Store,
    name: String,
    /// The checkout whose branch the slot is: `None` when there is no chain to record on (a
    /// detached HEAD, a checkout that has moved to another branch since).
    target: Option<Target>,
    /// Whether the end still has to record (false once finished, or for a version that came
    /// from a chain).
    record: bool,
    /// Whether anything was changed (an end with nothing changed records nothing).
    changed: std::cell::Cell<bool>,
    _lock: SlotLock,
}

impl<'a> SlotChange<'a> {
    /// Begin changing `target`'s slot.
    pub(crate) fn begin(
        store: &'a Store,
        target: &Target,
        wait: Wait,
    ) -> Result<SlotChange<'a>, Error> {
        let mut change = SlotChange::of_slot(store, &target.name, wait)?;
        change.target = Some(target.clone());
        Ok(change)
    }

    /// Begin changing slot `name`, whose branch is found from the slot itself: the checkout its
    /// `checkout:` header names, when that checkout's current branch is this slot's.
    pub(crate) fn of_slot(
        store: &'a Store,
        name: &str,
        wait: Wait,
    ) -> Result<SlotChange<'a>, Error> {
        let lock = match wait {
            Wait::Cli => slot::lock_cli(store, name)?,
            Wait::Hook(w) => {
                slot::lock(store, name, w).map_err(|_| Error::Locked(store.path_of(name)))?
            }
        };
        Ok(SlotChange {
            store,
            name: name.to_string(),
            target: None,
            record: true,
            changed: std::cell::Cell::new(false),
            _lock: lock,
        })
    }

    /// Begin bringing a version that a chain already holds into slot `name` (`pull`, the
    /// hooks' offer): the caller moves the chain; nothing is recorded here.
    pub(crate) fn from_chain(
        store: &'a Store,
        name: &str,
        wait: Wait,
    ) -> Result<SlotChange<'a>, Error> {
        let mut change = SlotChange::of_slot(store, name, wait)?;
        change.record = false;
        Ok(change)
    }

    /// The store the slot is in.
    pub(crate) fn store(&self) -> &'a Store {
        self.store
    }

    /// The slot's name.
    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    /// The slot's path.
    pub(crate) fn path(&self) -> PathBuf {
        self.store.path_of(&self.name)
    }

    /// Replace the slot with `bytes` (the displaced version kept in history); the history file.
    pub(crate) fn replace(&self, bytes: &[u8]) -> Result<Option<PathBuf>, Error> {
        self.changed.set(true);
        slot::replace_slot_at(self.store, &self.name, bytes, None)
    }

    /// [`SlotChange::replace`] with the new version's mtime given (an imported version keeps the
    /// time it was written).
    pub(crate) fn replace_at(
        &self,
        bytes: &[u8],
        mtime: SystemTime,
    ) -> Result<Option<PathBuf>, Error> {
        self.changed.set(true);
        slot::replace_slot_at(self.store, &self.name, bytes, Some(mtime))
    }

    /// Swap history version `chosen` into the slot with `mtime`.
    pub(crate) fn restore(
        &self,
        chosen: &Version,
        mtime: SystemTime,
    ) -> Result<Option<PathBuf>, Error> {
        self.changed.set(true);
        slot::restore_version(self.store, &self.name, chosen, mtime)
    }

    /// Set the slot's `progress:` to `value`, keeping its mtime; with `expect`, only while the
    /// file is still that (mtime, size).
    pub(crate) fn flip(
        &self,
        value: &str,
        expect: Option<(Option<SystemTime>, u64)>,
    ) -> Result<Flip, Error> {
        self.changed.set(true);
        slot::flip_progress(&self.path(), value, expect)
    }

    /// End the change: the chain records what the slot now holds. What it recorded, for the
    /// one decision of what follows (`ops::after`); a failed record is also kept for `status`.
    pub(crate) fn finish(mut self) -> Recorded {
        let record = std::mem::replace(&mut self.record, false);
        // The branch is looked up (the slot's header, the checkout's git) only for a change.
        let target = if self.changed.get() {
            self.branch()
        } else {
            None
        };
        let tip = if record && self.changed.get() {
            target
                .as_ref()
                .map_or(Ok(None), |t| chain::record_target(self.store, t))
        } else {
            Ok(None)
        };
        Recorded {
            changed: self.changed.get(),
            target,
            tip,
        }
    }

    /// The checkout whose branch this slot is, if it still is.
    fn branch(&self) -> Option<Target> {
        match &self.target {
            Some(t) => Some(t.clone()),
            None => slot_checkout(&self.path())
                .and_then(|c| Target::at(Path::new(&c)))
                .and_then(|t| t.with_slot(super::naming::slot_in(&self.name)).ok())
                .filter(|t| t.name == self.name),
        }
    }

    fn record_now(&self) {
        if self.changed.get()
            && let Some(t) = self.branch()
        {
            let _ = chain::record_target(self.store, &t);
        }
    }
}

/// What a [`SlotChange`] recorded as it ended.
#[derive(Debug)]
pub(crate) struct Recorded {
    /// Whether the slot was changed at all.
    pub(crate) changed: bool,
    /// The checkout whose branch the slot is (none: nothing changed, a detached HEAD, a
    /// checkout that moved on).
    pub(crate) target: Option<Target>,
    /// The chain's new tip, or why recording failed (the next change catches up).
    pub(crate) tip: Result<Option<String>, Error>,
}

impl Drop for SlotChange<'_> {
    fn drop(&mut self) {
        if self.record {
            self.record_now();
        }
    }
}

/// The `checkout:` header of the handoff at `path`, from its first lines.
fn slot_checkout(path: &Path) -> Option<String> {
    let head = slot::read_head(path).ok()?;
    let text = String::from_utf8_lossy(&head);
    let doc = crate::document::Document::parse(&text.replace('\r', ""));
    doc.field("checkout").map(|f| f.value.clone())
}
