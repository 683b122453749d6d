//! `read` (docs/store.md §9.5): deliver one handoff with its verdict and drift. The exact slot is
//! preferred; a placeholder is never shown as content. Only an exact, unread pick is marked
//! consumed ([`consume`]), after the whole output was delivered, and only if the file is still
//! the version shown.

use std::time::{Duration, Instant};

use serde::Serialize;

use super::Place;
use super::deliver::{Content, Trail};
use crate::error::{Error, NothingToDo};
use crate::store::deliver::Delivery;
use crate::store::excerpt;
use crate::store::runs::RunState;
use crate::store::slot::Flip;
use crate::store::{HandoffInfo, PlaceholderState, Store, Target, now};

/// The target a reader asked about, as `read --format json` names it.
#[derive(Debug, Serialize)]
pub(crate) struct TargetJson {
    pub(crate) main: String,
    pub(crate) checkout: String,
    pub(crate) branch: String,
}

/// What `read` found to answer with.
pub(crate) enum Answer {
    /// A background write for the slot is under way (`pending`), or ended with nothing to show
    /// (`failed`): exit 4.
    Background {
        path: String,
        state: &'static str,
        target: Option<TargetJson>,
        background: RunState,
        note: Option<String>,
        /// The branch the slot is for.
        branch: String,
        /// While pending: how long the write has been at work and the time it is given (s).
        pending: Option<(u64, u64)>,
    },
    /// The pick is a placeholder: still being written, or abandoned (exit 4).
    Placeholder {
        info: Box<HandoffInfo>,
        abandoned: bool,
        /// The checkout whose slot has a kept version `restore` brings back, if it has one.
        restore: Option<String>,
        others: Vec<HandoffInfo>,
        target: Option<TargetJson>,
        age: u64,
    },
    /// A handoff, read, gated and measured; consumed after it is shown when `consumable`.
    Handoff(Box<Shown>),
}

/// A handoff `read` shows.
pub(crate) struct Shown {
    pub(crate) delivery: Delivery,
    pub(crate) document: String,
    pub(crate) target: Option<TargetJson>,
    /// For the GUESS line: the target's branch and main worktree, or why there is none.
    pub(crate) target_names: Option<(String, String)>,
    /// The slot's last background write and the note it deserves.
    pub(crate) background: Option<(RunState, Option<String>)>,
    pub(crate) consumable: bool,
    pub(crate) now: i64,
    /// When `fix` last healed its line numbers (epoch seconds), for an exact pick.
    pub(crate) fixed_at: Option<i64>,
}

/// When the handoff at `slot` was last fixed: a fix keeps the written time (the
/// mtime) and puts the version it replaced into history with that same mtime, at the moment of
/// the fix (the history file's ctime) — a version that differs from the slot's in its line
/// numbers alone. A kept version as old as the slot for another reason (a sync merge, two
/// writes in one second) differs otherwise, or not at all.
fn fixed_at(store: &Store, slot: &str, written: Option<i64>) -> Option<i64> {
    use std::os::unix::fs::MetadataExt;
    let written = written?;
    let document = crate::fs::read(slot).ok()?;
    let name = std::path::Path::new(slot).file_name()?.to_str()?;
    let text = crate::store::chain::text_key(&document);
    crate::store::slot::versions(store, name)
        .iter()
        .filter(|v| v.mtime.map(crate::store::epoch) == Some(written))
        .filter(|v| {
            crate::fs::read(&v.path)
                .is_ok_and(|kept| kept != document && crate::store::chain::text_key(&kept) == text)
        })
        .filter_map(|v| crate::fs::symlink_metadata(&v.path).ok().map(|m| m.ctime()))
        .max()
}

/// What to show a reader of `place`'s handoff, waiting up to `wait` seconds for one still being
/// written; `consume: false` never marks it read; a placeholder's writer is looked for on
/// `trail`. The store, for [`consume`] once it was shown.
pub(crate) fn read(
    place: &Place,
    wait: u64,
    consume: bool,
    trail: Trail,
) -> Result<(Store, Answer), Error> {
    // Outside a checkout there is nothing to read: never another project's handoff.
    let target = Some(place.target()?);
    let store = Store::open()?;
    let target_json = || target_json(target.as_ref());

    let found = find_waiting(&store, target.as_ref(), wait, trail);
    let note = found.note.clone();
    // A background write that ended with nothing to show, for a slot that holds nothing.
    if let (Some((_, state)), Some(t), Some(n)) = (&found.background, &target, &note)
        && !matches!(found.content, Content::Writing { .. })
        && !store.path_of(&t.name).is_file()
    {
        let answer = Answer::Background {
            path: store.path_of(&t.name).to_string_lossy().into_owned(),
            state: "failed",
            target: target_json(),
            background: state.clone(),
            note: Some(n.clone()),
            branch: t.facts.reference.clone(),
            pending: None,
        };
        return Ok((store, answer));
    }
    let background = found.background.as_ref().map(|(_, state)| state.clone());
    let mut delivery = match found.content {
        Content::Writing { run, path } => {
            let t = target
                .as_ref()
                .ok_or_else(|| Error::NoHandoff(store.dir.clone()))?;
            let answer = pending(t, &run, path);
            return Ok((store, answer));
        }
        Content::Nothing if target.is_some() => {
            return Err(Error::NoHandoffHere(store.dir.clone()));
        }
        Content::Nothing => return Err(Error::NoHandoff(store.dir.clone())),
        Content::Placeholder {
            info,
            state,
            others,
            ..
        } => {
            let restore = target
                .as_ref()
                .filter(|t| !crate::store::slot::versions(&store, &t.name).is_empty())
                .map(Target::checkout);
            let answer = Answer::Placeholder {
                restore,
                age: info.mtime.map_or(0, |m| (now() - m).max(0) as u64),
                info: Box::new(info),
                abandoned: state == PlaceholderState::Abandoned,
                others,
                target: target_json(),
            };
            return Ok((store, answer));
        }
        Content::Handoff(d) => *d,
    };
    let document = std::mem::replace(&mut delivery.document, Ok(String::new()))?;
    let consumable = delivery.consumes() && consume;
    let shown = Shown {
        document,
        target: target_json(),
        target_names: target
            .as_ref()
            .map(|t| (t.facts.reference.clone(), t.main())),
        background: background.map(|state| (state, note)),
        consumable,
        now: now(),
        fixed_at: fixed_at(&store, &delivery.info.path, delivery.info.mtime),
        delivery,
    };
    Ok((store, Answer::Handoff(Box::new(shown))))
}

/// The target as JSON shows it.
fn target_json(target: Option<&Target>) -> Option<TargetJson> {
    target.map(|t| TargetJson {
        main: t.main(),
        checkout: t.checkout(),
        branch: t.facts.reference.clone(),
    })
}

/// The answer while a background write for `t` is at work.
fn pending(t: &Target, run: &crate::store::runs::Run, path: String) -> Answer {
    Answer::Background {
        branch: t.facts.reference.clone(),
        pending: Some((run.age(now()), run.job.timeout)),
        path,
        state: "pending",
        target: target_json(Some(t)),
        background: run.state(now()),
        note: None,
    }
}

/// Content to show, found as every reader finds it; while a background write or a placeholder
/// is still being written, look again until `wait` seconds run out.
fn find_waiting(
    store: &Store,
    target: Option<&Target>,
    wait: u64,
    trail: Trail,
) -> super::deliver::Found {
    let started = Instant::now();
    loop {
        super::deliver::bring_in_offer(store, target);
        let found = super::deliver::find(store, target, now(), trail, |_, _| true);
        if !found.in_progress() || started.elapsed() >= Duration::from_secs(wait) {
            return found;
        }
        std::thread::sleep(match found.content {
            Content::Writing { .. } => Duration::from_millis(250),
            _ => Duration::from_secs(1),
        });
    }
}

/// Mark the shown version consumed, keeping its mtime; a failure is a note, not an error.
pub(crate) fn consume(store: &Store, delivery: &Delivery) -> Option<String> {
    let path = &delivery.info.path;
    let why = match delivery.consume(store, None) {
        Ok(Flip::Changed { .. } | Flip::Same | Flip::Replaced) => return None,
        Ok(Flip::NoField) => "no progress: or status: line in the first 20 lines".to_string(),
        Err(e) => e.report(),
    };
    Some(format!(
        "handoff-store: note: could not mark {path} consumed: {why}"
    ))
}

/// `read --reground`: the stored handoff's Decisions, Dead ends, Traps and Next with one verdict
/// line (nothing consumed, no drift).
pub(crate) fn reground(place: &Place) -> Result<excerpt::View, Error> {
    let (target, stored) = stored(place)?;
    Ok(excerpt::reground(&stored, &target.facts.reference))
}

/// `brief`: what touches `paths` of the stored handoff, for a subagent given `task`.
pub(crate) fn brief(
    place: &Place,
    paths: &[String],
    task: Option<&str>,
) -> Result<excerpt::View, Error> {
    let (target, stored) = stored(place)?;
    Ok(excerpt::brief(
        &stored,
        &target.facts.reference,
        paths,
        task,
    ))
}

/// The handoff stored in `place`'s slot, read for an excerpt.
fn stored(place: &Place) -> Result<(Target, excerpt::Stored), Error> {
    let (target, store) = place.target_and_store()?;
    let stored = excerpt::Stored::of(&store, &target).ok_or_else(|| {
        Error::NothingToDo(NothingToDo::NoHandoffFor(target.facts.reference.clone()))
    })?;
    Ok((target, stored))
}
