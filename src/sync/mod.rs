//! Handoffs that travel through the repository's own git remote. Every stored version of a
//! branch's handoff becomes a commit on `refs/handoffs/<branch>` (`record`); `pull` fetches the
//! remote's chains into `refs/handoff-remotes/<remote>/*` and merges them per branch into the
//! local chain and the local store (`merge`); `push` sends the local chains without ever
//! forcing. The local store stays the source of truth for the hooks, which only read local refs
//! (`offer`). Objects and refs go through `git::chain`; only `transport` spawns `git`.

pub(crate) mod lease;
pub(crate) mod offer;
pub(crate) mod ops;
pub(crate) mod outcome;
pub(crate) mod push;
pub(crate) mod transport;

use std::path::Path;
use std::time::{Duration, SystemTime};

use serde::Serialize;

use crate::document::Document;
use crate::error::{Error, External, GitStep, Moment};
use crate::git::chain::{Chains, RefError, Version};
pub(crate) use crate::store::authorship::StoreKey;
pub(crate) use crate::store::chain::{
    Meta, handoff_ref, record, recorded_here, slot_of, written_here,
};
use crate::store::change::{SlotChange, Wait};
use crate::store::{Store, slot};

/// Where `pull` keeps `remote`'s chains: a namespace of our own, outside `refs/remotes/`, where
/// `refs/remotes/<remote>/handoffs/<b>` is also git's tracking branch of a remote branch named
/// `handoffs/<b>` (fetching both into one ref made every plain `git fetch` fail).
pub(crate) fn tracking_prefix(remote: &str) -> String {
    format!("refs/handoff-remotes/{remote}/")
}

/// The fetch refspec that brings `remote`'s chains (what `sync --setup` configures).
/// Where `remote`'s named slots' chains are kept: `refs/handoff-slot-remotes/<remote>/<slot>/<branch>`.
pub(crate) fn slot_tracking_prefix(remote: &str) -> String {
    format!("refs/handoff-slot-remotes/{remote}/")
}

/// The refspec that brings `remote`'s named slots' chains (docs/sync.md).
pub(crate) fn slot_fetch_refspec(remote: &str) -> String {
    format!("+refs/handoff-slots/*:{}*", slot_tracking_prefix(remote))
}

pub(crate) fn fetch_refspec(remote: &str) -> String {
    format!("+refs/handoffs/*:{}*", tracking_prefix(remote))
}

/// For `status`: each remote of the repository at `dir`, and whether a plain `git fetch` brings
/// its handoffs (`sync --setup` done); and whether `handoff.autoPush` is on.
pub(crate) fn setup_state(dir: &Path) -> Option<(Vec<(String, bool)>, bool)> {
    let chains = Chains::open(dir)?;
    let remotes = chains
        .remotes()
        .into_iter()
        .map(|r| {
            let set = chains
                .config_strings(&format!("remote.{r}.fetch"))
                .contains(&fetch_refspec(&r));
            (r, set)
        })
        .collect();
    let auto_push = crate::store::Target::at(dir).is_some_and(|t| t.settings().push_after_change());
    Some((remotes, auto_push))
}

/// After `write` stored `target`'s handoff: when the repository's git config sets
/// `handoff.autoPush = true`, push it in the background. Returns whether a push was started.
/// Called by `lifecycle` alone, which decides what follows a change.
pub(crate) fn auto_push(target: &crate::store::Target) -> bool {
    if target.facts.detached {
        return false;
    }
    if !target.settings().push_after_change() {
        return false;
    }
    // One at work already: it pushes again when it is done (at most one alive). The note goes
    // first and the look after, so a push that ends right after this look still finds the
    // note: it looks again once its lock is gone.
    if let Ok(store) = Store::locate()
        && store.dir.is_dir()
    {
        outcome::ask_again(&store);
        if outcome::in_flight(&store) {
            return true;
        }
    }
    transport::spawn_background_push(&target.facts.checkout)
}

/// A local chain whose branch no longer exists in its repository (`prune` deletes these
/// locally; the remote's copy goes only with `push --prune`).
#[derive(Debug, Clone)]
pub(crate) struct Orphan {
    pub(crate) reference: String,
    pub(crate) id: String,
    pub(crate) written_at: i64,
}

/// The local chains of `chains`' repository whose branch is gone: default slots' and named
/// slots' (`refs/handoff-slots/<slot>/<branch>`).
pub(crate) fn orphans(chains: &Chains) -> Vec<Orphan> {
    let defaults = chains
        .list("refs/handoffs/")
        .into_iter()
        .map(|(branch, id)| (handoff_ref(&branch), branch, id));
    let named = chains
        .list("refs/handoff-slots/")
        .into_iter()
        .filter_map(|(key, id)| {
            let (slot, branch) = key.split_once('/')?;
            Some((
                crate::store::chain::chain_ref(branch, Some(slot)),
                branch.to_string(),
                id,
            ))
        });
    defaults
        .chain(named)
        .filter(|(_, branch, _)| !chains.has_branch(branch))
        .map(|(reference, _, id)| Orphan {
            reference,
            written_at: chains
                .meta_of(&id)
                .map_or(0, |meta| Meta::parse(&meta).written_at),
            id,
        })
        .collect()
}

/// A file time for `epoch` seconds (dates before 1970 and beyond what a file time holds are
/// clamped, never a panic).
pub(crate) fn at(epoch: i64) -> SystemTime {
    SystemTime::UNIX_EPOCH
        .checked_add(Duration::from_secs(epoch.max(0).unsigned_abs()))
        .unwrap_or_else(SystemTime::now)
}

/// How far ahead of this machine's clock another machine's may run before its date is not
/// believed.
pub(crate) const CLOCK_SKEW: i64 = 300;

/// A version that came from elsewhere, admitted: its meta with `written_at` in the sane window
/// (not before 1970, not after now plus [`CLOCK_SKEW`]), and whether it had to be clamped — a
/// clamped date never outranks a local version.
#[derive(Debug, Clone)]
pub(crate) struct Admitted {
    pub(crate) meta: Meta,
    pub(crate) clamped: bool,
}

/// Why a version from elsewhere is not admitted as a handoff of a branch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Inadmissible {
    NoDate,
    BadDate,
    NoBranch,
    /// Its meta is for another branch.
    MetaBranch {
        found: String,
        wanted: String,
    },
    /// Its document declares another branch.
    DocumentBranch {
        found: String,
        wanted: String,
    },
}

impl std::fmt::Display for Inadmissible {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Inadmissible::NoDate => write!(f, "its meta says nothing of when it was written"),
            Inadmissible::BadDate => write!(f, "its meta's written-at is not a number of seconds"),
            Inadmissible::NoBranch => write!(f, "its meta names no branch"),
            Inadmissible::MetaBranch { found, wanted } => {
                write!(f, "its meta is for branch {found:?}, not {wanted:?}")
            }
            Inadmissible::DocumentBranch { found, wanted } => {
                write!(f, "the document declares branch {found:?}, not {wanted:?}")
            }
        }
    }
}

/// Admit `version` as a handoff of `branch`, or say why not: its `meta` must say when it was
/// written and for which branch, and both its `meta` and its document must name `branch`.
pub(crate) fn admit(version: &Version, branch: &str, now: i64) -> Result<Admitted, Inadmissible> {
    let field = |name: &str| {
        version.meta.lines().find_map(|l| {
            l.strip_prefix(name)
                .and_then(|r| r.strip_prefix(": "))
                .map(str::to_string)
        })
    };
    let written_at: i64 = field("written-at")
        .ok_or(Inadmissible::NoDate)?
        .trim()
        .parse()
        .map_err(|_| Inadmissible::BadDate)?;
    match field("branch") {
        Some(b) if b.trim() == branch => {}
        Some(b) => {
            return Err(Inadmissible::MetaBranch {
                found: b.trim().to_string(),
                wanted: branch.to_string(),
            });
        }
        None => return Err(Inadmissible::NoBranch),
    }
    let text = String::from_utf8_lossy(&version.document);
    let doc = Document::parse(&text.replace('\r', ""));
    let declared = doc
        .field("branch")
        .map(|f| f.value.clone())
        .and_then(|v| crate::document::envelope::declared_branch(&v).map(str::to_string));
    if let Some(d) = declared.filter(|d| d != branch) {
        return Err(Inadmissible::DocumentBranch {
            found: d,
            wanted: branch.to_string(),
        });
    }
    let sane = written_at.clamp(0, now.saturating_add(CLOCK_SKEW));
    let mut meta = Meta::parse(&version.meta);
    meta.written_at = sane;
    Ok(Admitted {
        meta,
        clamped: sane != written_at,
    })
}

fn sync_error(step: GitStep, e: impl std::error::Error + 'static) -> Error {
    Error::External(External::Git {
        step,
        source: Box::new(e),
    })
}

/// What merging one branch's remote chain did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum Merge {
    /// Both sides hold the same version.
    UpToDate,
    /// The local chain already contains the remote's.
    LocalAhead,
    /// The local chain moved forward to the remote's; its handoff is in the slot.
    FastForward,
    /// Both moved: a merge commit joins them; the newer is in the slot, the other in history.
    Merged { remote_won: bool },
    /// Not imported, with the reason (nothing changed for this branch).
    Refused(String),
}

/// Bring `version` into slot `name` (or, with `into_slot` false, into its history): the
/// `checkout:` header is rewritten to `checkout`, and the gate's contract checks run on it here
/// first — a document the gate calls malformed (a credential included) is refused, with the
/// reason.
pub(crate) fn import(
    change: &SlotChange,
    checkout: &str,
    version: &Version,
    admitted: &Meta,
    via: &str,
    into_slot: bool,
) -> Result<(), ImportError> {
    let (store, name) = (change.store(), change.name());
    let refuse = |why: String| Err(ImportError::Refused(why));
    let written_at = admitted.written_at;
    let Ok(text) = std::str::from_utf8(&version.document) else {
        return refuse("the document is not valid UTF-8".into());
    };
    if slot::progress_of(text.as_bytes()).as_deref() == Some("writing") {
        return refuse("it is a placeholder (progress: writing)".into());
    }
    // `from:` says where it came from, wherever it is shown. A version this store recorded
    // (its mark verifies) keeps the `from:` it had, or its absence; any other gets one from
    // what its meta says of its author, reduced to a safe label — never the version's own.
    // Ours only for the slot it was recorded for: a named slot's version replayed into the
    // default slot (or another) is not this slot's own writing.
    let recorded_for =
        Meta::parse(&version.meta).slot.as_deref() == crate::store::naming::slot_in(name);
    let ours = recorded_for && recorded_here(StoreKey::read(store).as_ref(), version);
    let from = (!ours).then(|| {
        crate::store::authorship::From::new(
            admitted.host.as_deref(),
            via,
            crate::store::iso(admitted.written_at),
        )
        .render()
    });
    let mut fields = vec![("checkout", checkout)];
    if let Some(from) = &from {
        fields.push(("from", from));
    }
    let text = match crate::document::normalise::normalise(text, &fields) {
        Ok(t) => t,
        Err(e) => return refuse(e.report()),
    };
    let doc = Document::parse(&text.replace('\r', ""));
    // Only what makes a document malformed is checked here; its citations are judged when it
    // is read, like any stored handoff's.
    let label = format!("version {}", &version.id[..version.id.len().min(12)]);
    if let Some(error) = crate::report::run_gate::malformed(&doc, &label) {
        return refuse(format!(
            "the gate calls it malformed (exit 2): {}",
            error.message
        ));
    }
    let written = at(written_at);
    store.create()?;
    if into_slot {
        change.replace_at(text.as_bytes(), written)?;
    } else {
        let kept = slot::keep_bytes(store, name, text.as_bytes(), written)?;
        slot::retain_keeping(store, name, Some(&kept));
    }
    Ok(())
}

/// Why [`import`] did not bring a version in.
#[derive(Debug)]
pub(crate) enum ImportError {
    /// The version is not admitted (the reason, said to the user); nothing changed.
    Refused(String),
    /// The store could not be written.
    Failed(Error),
}

impl From<Error> for ImportError {
    fn from(e: Error) -> ImportError {
        ImportError::Failed(e)
    }
}

/// Merge the remote chain tip `remote_tip` into the local chain of `branch` and the store:
/// fast-forward when one side is ahead; when both moved, the newer by written-at goes into the
/// slot, the other into history, and a merge commit with both parents records it.
/// Whether `remote` is a version this store recorded, replayed on top of `mine` (the local
/// tip) after it was consumed here: the same text, progress aside, written no later, where the
/// slot says `consumed`. Such a version is kept in history, never put back as unread.
fn replay_of_consumed(store: &Store, remote: &Version, mine: &Version) -> bool {
    let body =
        |d: &[u8]| crate::document::normalise::without(&String::from_utf8_lossy(d), "progress");
    let consumed = slot::progress_of(&mine.document).as_deref() == Some("consumed");
    consumed
        && recorded_here(StoreKey::read(store).as_ref(), remote)
        && Meta::parse(&remote.meta).written_at <= Meta::parse(&mine.meta).written_at
        && body(&remote.document) == body(&mine.document)
}

pub(crate) fn merge(
    store: &Store,
    chains: &Chains,
    (branch, slot): (&str, Option<&str>),
    remote_tip: &str,
    checkout: &str,
    via: &str,
) -> Result<Merge, Error> {
    let name = crate::store::chain::slot_file(&chains.main(), branch, slot);
    store.create()?;
    let change = SlotChange::from_chain(store, &name, Wait::Cli)?;
    let local = record(store, chains, branch, slot)?;
    let remote = match chains.version(remote_tip) {
        Ok(v) => v,
        Err(e) => return Ok(Merge::Refused(e.to_string())),
    };
    let admitted = match admit(&remote, branch, crate::store::now()) {
        Ok(a) => a,
        Err(why) => return Ok(Merge::Refused(why.to_string())),
    };
    let remote_written = admitted.meta.written_at;
    let reference = crate::store::chain::chain_ref(branch, slot);
    let placeholder_in_slot = slot::read_head(&store.path_of(&name))
        .ok()
        .and_then(|h| slot::progress_of(&h))
        .as_deref()
        == Some("writing");
    // The remote's version into the slot, or (`false`) into its history.
    let bring =
        |into_slot: bool| import(&change, checkout, &remote, &admitted.meta, via, into_slot);
    let outcome = match &local {
        Some(l) if l.eq_ignore_ascii_case(remote_tip) => return Ok(Merge::UpToDate),
        Some(l) if chains.is_ancestor(remote_tip, l) => return Ok(Merge::LocalAhead),
        Some(l) if !chains.is_ancestor(l, remote_tip) => {
            let Some(mine) = chains.read(l) else {
                return Ok(Merge::Refused(format!("{l} is not a handoff version")));
            };
            // A date from the future (clamped) never outranks a local version.
            let remote_won =
                !admitted.clamped && remote_written > Meta::parse(&mine.meta).written_at;
            // The slot keeps the newer; the older lands in history (a replaced slot is kept
            // there by the replacement itself).
            match bring(remote_won && !placeholder_in_slot) {
                Ok(()) => {}
                Err(ImportError::Refused(why)) => return Ok(Merge::Refused(why)),
                Err(ImportError::Failed(e)) => return Err(e),
            }
            let winner = if remote_won { remote_tip } else { l.as_str() };
            let message = format!("handoff: merge {branch}\n");
            let id = chains
                .commit_like(
                    winner,
                    &[l.clone(), remote_tip.to_string()],
                    &message,
                    crate::store::now(),
                )
                .map_err(|e| sync_error(GitStep::RecordMerge, e))?;
            (Merge::Merged { remote_won }, id)
        }
        _ => {
            let replayed = local
                .as_deref()
                .and_then(|l| chains.read(l))
                .is_some_and(|mine| replay_of_consumed(store, &remote, &mine));
            match bring(!placeholder_in_slot && !replayed) {
                Ok(()) => {}
                Err(ImportError::Refused(why)) => return Ok(Merge::Refused(why)),
                Err(ImportError::Failed(e)) => return Err(e),
            }
            (Merge::FastForward, remote_tip.to_string())
        }
    };
    match chains.set(&reference, &outcome.1, local.as_deref()) {
        Ok(()) => Ok(outcome.0),
        Err(RefError::Moved) => Err(Error::External(External::Moved {
            reference: reference.to_string(),
            during: Moment::Pull,
        })),
        Err(e) => Err(sync_error(GitStep::Update(reference.to_string()), e)),
    }
}
