//! The one delivery service: what a reader of a checkout's handoff is to be shown, found the
//! same way for `read`, every harness's SessionStart and prompt fallback (docs/store.md §7–§8,
//! docs/hooks.md §2). In order: the exact slot's latest background write (its state read once,
//! and the note it deserves), the pick, a placeholder's liveness, and for a handoff the read, the gate and the drift
//! ([`Delivery`]). Finding only reads; the two writes are named: [`bring_in_offer`] before it,
//! and the consume (with its record on the chain), [`Delivery::consume`], once, after the caller
//! delivered. The callers only decide how to wait and how to render.

use std::path::PathBuf;
use std::time::SystemTime;

use crate::store::deliver::Delivery;
use crate::store::runs::{self, Run, RunState};
use crate::store::{HandoffInfo, PickKind, PlaceholderState, Store, Target, placeholder_state};

/// Where a placeholder's writer leaves its trail: for a writer session id, the file a live
/// session keeps changing (its transcript) and when it last changed. Given by the front end —
/// it is the default writer's client that knows its files (`harness::writer_trail`); the floor
/// knows no client.
pub(crate) type Trail = fn(&str) -> Option<(PathBuf, SystemTime)>;

/// A trail that finds nothing: every placeholder past its budget is abandoned.
pub(crate) fn no_trail(_: &str) -> Option<(PathBuf, SystemTime)> {
    None
}

/// Content there is to show for a checkout (or, without one, the store's most recent handoff).
pub(crate) struct Found {
    /// The exact slot's latest background write and its state.
    pub(crate) background: Option<(Run, RunState)>,
    /// Content to say about that write when it ended without a handoff, or was held back.
    pub(crate) note: Option<String>,
    pub(crate) content: Content,
}

/// The body of what is shown.
pub(crate) enum Content {
    /// A background write for the exact slot is under way (the slot is untouched).
    Writing {
        run: Run,
        path: String,
    },
    /// The pick is a `writing` placeholder.
    Placeholder {
        info: HandoffInfo,
        state: PlaceholderState,
        transcript: Option<(PathBuf, SystemTime)>,
        others: Vec<HandoffInfo>,
    },
    /// A handoff, read, gated and measured.
    Handoff(Box<Delivery>),
    Nothing,
}

impl Found {
    /// Whether a reader that may wait should look again: a background write or a placeholder
    /// that is still being written.
    pub(crate) fn in_progress(&self) -> bool {
        match &self.content {
            Content::Writing { .. } => true,
            Content::Placeholder { state, .. } => *state != PlaceholderState::Abandoned,
            _ => false,
        }
    }
}

/// The one write a reader makes before it looks: an empty slot takes the newest unread handoff
/// the local refs hold (after a pull, on a fresh clone, a teammate's branch: synced, never
/// fetched here), gated as `pull` gates it; it is then found and read like any other. Whether
/// one was brought in.
pub(crate) fn bring_in_offer(store: &Store, target: Option<&Target>) -> bool {
    target.is_some_and(|t| crate::sync::offer::materialise(store, t).is_some())
}

/// What the exact slot holds while a background write for it is at work: a real handoff,
/// read, gated and measured, delivered beside the note that a fresher one is coming (never
/// waited for). `None` for an empty slot or a placeholder.
pub(crate) fn current_beside(store: &Store, target: &Target, now: i64) -> Option<Box<Delivery>> {
    let (info, kind, others) = store.pick(Some(target)).ok().flatten()?;
    (kind == PickKind::Exact && !info.is_placeholder())
        .then(|| Box::new(Delivery::prepare(info, kind, others, Some(target), now)))
}

/// Find what to show for `target` (`None`: no checkout, the most recent handoff) at `now`. It
/// only reads: the offer from the refs comes in first, by [`bring_in_offer`].
/// `shown` is the caller's rule for a pick (SessionStart shows the most recent handoff only when
/// a marker corroborates it); a pick it declines is [`Content::Nothing`] and is never read.
/// A placeholder past its budget is alive while its writer's `trail` moves.
pub(crate) fn find(
    store: &Store,
    target: Option<&Target>,
    now: i64,
    trail: Trail,
    shown: impl Fn(&HandoffInfo, PickKind) -> bool,
) -> Found {
    let background = target
        .and_then(|t| runs::latest_for(store, &t.name))
        .map(|r| {
            let state = r.state(now);
            (r, state)
        });
    let note = background
        .as_ref()
        .zip(target)
        .and_then(|((run, state), t)| {
            crate::store::runs::background_note(state, run.age(now), &t.checkout())
        });
    if let (Some((run, RunState::Writing)), Some(t)) = (&background, target) {
        return Found {
            content: Content::Writing {
                run: run.clone(),
                path: store.path_of(&t.name).to_string_lossy().into_owned(),
            },
            background,
            note,
        };
    }
    let content = match store.pick(target).ok().flatten() {
        None => Content::Nothing,
        Some((info, kind, _)) if !info.is_placeholder() && !shown(&info, kind) => Content::Nothing,
        Some((info, kind, others)) => {
            if info.is_placeholder() && kind == PickKind::Exact {
                let trail = info.write_session.as_deref().and_then(trail);
                let (state, transcript) = placeholder_state(&info, now, trail);
                Content::Placeholder {
                    info,
                    state,
                    transcript,
                    others,
                }
            } else {
                Content::Handoff(Box::new(Delivery::prepare(info, kind, others, target, now)))
            }
        }
    };
    Found {
        background,
        note,
        content,
    }
}
