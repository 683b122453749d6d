//! The delivery procedure `read` and the SessionStart hook share (docs/store.md §7–§8): the picked
//! file is read once (capped), gated on those very bytes, its drift computed; after the caller
//! has delivered it, an exact unread pick is marked consumed — only if the file is still the
//! version that was shown. The callers only render.

use std::path::Path;
use std::time::{Duration, SystemTime};

use super::change::{SlotChange, Wait};
use super::drift::{self, Drift};
use super::slot::{self, Flip};
use super::verdict::{self, GateVerdict};
use super::{HandoffInfo, PickKind, Store, Target};
use crate::error::Error;

/// A handoff ready to be shown.
#[derive(Debug)]
pub(crate) struct Delivery {
    pub(crate) info: HandoffInfo,
    pub(crate) kind: PickKind,
    pub(crate) others: Vec<HandoffInfo>,
    /// The document's text (invalid UTF-8 shown as U+FFFD), or why it could not be read.
    pub(crate) document: Result<String, Error>,
    pub(crate) verdict: GateVerdict,
    pub(crate) drift: Vec<Drift>,
    /// (mtime, size) of the file as read, for the consume flip.
    version: Option<(Option<SystemTime>, u64)>,
    /// The checkout whose own slot this is (an exact pick), whose chain records the consume.
    owner: Option<Target>,
}

impl Delivery {
    /// Read, gate and measure drift for a pick, from the point of view of `target`.
    pub(crate) fn prepare(
        info: HandoffInfo,
        kind: PickKind,
        others: Vec<HandoffInfo>,
        target: Option<&Target>,
        now: i64,
    ) -> Delivery {
        let path = Path::new(&info.path);
        let version = crate::fs::symlink_metadata(path)
            .ok()
            .map(|m| (m.modified().ok(), m.len()));
        let (document, verdict) = match slot::read_capped(path) {
            Ok(bytes) => {
                let verdict = verdict::gate_stored(
                    path,
                    &bytes,
                    &info,
                    target.map(|t| t.facts.checkout.as_path()),
                );
                (Ok(String::from_utf8_lossy(&bytes).into_owned()), verdict)
            }
            Err(e) => {
                let why = format!("the stored handoff was not loaded ({})", e.report());
                (Err(e), GateVerdict::not_run(why))
            }
        };
        let drift = drift::signals(&info, target.map(|t| &t.facts), now);
        let owner = target
            .filter(|t| kind == PickKind::Exact && t.name == info.name)
            .cloned();
        Delivery {
            info,
            kind,
            others,
            document,
            verdict,
            drift,
            version,
            owner,
        }
    }

    /// Whether delivering it consumes it: an exact pick that was unread.
    pub(crate) fn consumes(&self) -> bool {
        self.kind == PickKind::Exact && self.info.is_unread() && self.document.is_ok()
    }

    /// After delivery: flip `progress:` to `consumed` under the slot lock, keeping the mtime,
    /// only if the file is unchanged since it was read. `wait`: how long a hook waits for the
    /// lock; `None` is the CLI's wait and error.
    pub(crate) fn consume(&self, store: &Store, wait: Option<Duration>) -> Result<Flip, Error> {
        let Some(version) = self.version else {
            return Ok(Flip::Replaced);
        };
        // Recorded on the branch's chain as the change ends, like every slot change.
        let wait = wait.map_or(Wait::Cli, Wait::Hook);
        let change = match &self.owner {
            Some(target) => SlotChange::begin(store, target, wait)?,
            None => SlotChange::of_slot(store, &self.info.name, wait)?,
        };
        change.flip("consumed", Some(version))
    }
}
