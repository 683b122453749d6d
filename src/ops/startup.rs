//! What a fresh start of a client does in a checkout, decided once: for the SessionStart hook
//! (which acts on it) and for `status` (which tells the user why a start would be silent).

use crate::settings::OnStartup;
use crate::store::deliver::Delivery;
use crate::store::{PickKind, Store, Target};

use super::deliver::{self, Content};
use super::marker::{FRESH_SECONDS, Marker, marker_path};

/// What a fresh start of a client says, decided once — for the hook, and for `status`, which
/// tells the user why a start would be silent.
pub(crate) enum AtStartup {
    /// A `/clear` just before: the full delivery, as after it.
    AsClear,
    /// `handoff.onStartup=deliver`: the full delivery.
    Deliver,
    /// The offer of this branch's unread handoff.
    Offer(Box<Delivery>),
    /// One line: this branch's handoff was read already, and the command that shows it again.
    Reminder(Box<Delivery>),
    /// Nothing, and why.
    Silent(String),
}

/// How a session started, as the plan sees it (docs/hooks.md §2.1's `source`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Start {
    Compact,
    /// `/clear`, or a fresh start just after one (handled as a clear).
    Clear,
    Startup,
    /// `resume`, `fork`, anything else, or no source: the conversation is back.
    Resumed,
}

/// The branch's own handoff, as the offer sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shelf {
    Writing,
    Empty,
    Unreadable,
    /// Older than `handoff.offerMaxDays`.
    TooOld,
    Unread,
    Read,
}

/// What is known when a session starts: all the plan needs.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Facts {
    pub(crate) in_use: bool,
    pub(crate) start: Start,
    pub(crate) delivers_on_clear: bool,
    pub(crate) on_startup: OnStartup,
    /// A `/clear` marker for the target ended within the last 600 s.
    pub(crate) fresh_clear: bool,
    /// The branch's handoff, once looked at (`None`: not looked at yet).
    pub(crate) shelf: Option<Shelf>,
}

/// Why a start says nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Silence {
    NotInUse,
    ClearOff,
    StartupOff,
    Resumed,
    Writing,
    NoHandoff,
    Unreadable,
    TooOld,
}

/// What a session start does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Plan {
    Silent(Silence),
    /// The full delivery, titled by its source.
    Deliver(&'static str),
    Offer,
    Reminder,
    /// Look at the branch's handoff ([`Shelf`]) and ask again.
    Look,
}

/// The rows of docs/hooks.md §2.1, as one pure function of what is known.
pub(crate) fn plan(f: &Facts) -> Plan {
    if !f.in_use {
        return Plan::Silent(Silence::NotInUse);
    }
    let clear = f.start == Start::Clear || (f.start == Start::Startup && f.fresh_clear);
    match f.start {
        Start::Resumed => Plan::Silent(Silence::Resumed),
        Start::Compact => Plan::Deliver("compact"),
        _ if clear && !f.delivers_on_clear => Plan::Silent(Silence::ClearOff),
        Start::Clear => Plan::Deliver("clear"),
        _ if clear => Plan::Deliver("startup, handled as clear"),
        Start::Startup => match (f.on_startup, f.shelf) {
            (OnStartup::Deliver, _) => Plan::Deliver("startup"),
            (OnStartup::Off, _) => Plan::Silent(Silence::StartupOff),
            (OnStartup::Offer, None) => Plan::Look,
            (OnStartup::Offer, Some(shelf)) => match shelf {
                Shelf::Writing => Plan::Silent(Silence::Writing),
                Shelf::Empty => Plan::Silent(Silence::NoHandoff),
                Shelf::Unreadable => Plan::Silent(Silence::Unreadable),
                Shelf::TooOld => Plan::Silent(Silence::TooOld),
                Shelf::Unread => Plan::Offer,
                Shelf::Read => Plan::Reminder,
            },
        },
    }
}

/// Decide [`AtStartup`] for `target`. `bring_in` lets the hook first bring the newest unread
/// handoff from the refs into an empty slot (a write); `status` only looks.
pub(crate) fn at_startup(
    target: &Target,
    store: Option<&Store>,
    now: i64,
    bring_in: bool,
) -> AtStartup {
    let fresh_clear = marker_path(target)
        .and_then(|p| Marker::read(&p, now))
        .and_then(|m| m.ended_at_epoch)
        .is_some_and(|e| e >= now - FRESH_SECONDS);
    let usage = crate::store::usage::Use::of(store, target);
    let settings = target.settings();
    let mut facts = Facts {
        in_use: usage.acts(),
        start: Start::Startup,
        delivers_on_clear: settings.delivers_on_clear(),
        on_startup: settings.on_startup(),
        fresh_clear,
        shelf: None,
    };
    let mut seen = None;
    if plan(&facts) == Plan::Look {
        let Some(store) = store else {
            return AtStartup::Silent("the store cannot be used".into());
        };
        let (shelf, d) = look(store, target, now, bring_in, settings.offer_max_days());
        facts.shelf = Some(shelf);
        seen = d;
    }
    let reference = &target.facts.reference;
    match (plan(&facts), seen) {
        (Plan::Deliver("startup"), _) => AtStartup::Deliver,
        (Plan::Deliver(_), _) => AtStartup::AsClear,
        (Plan::Offer, Some(d)) => AtStartup::Offer(d),
        (Plan::Reminder, Some(d)) => AtStartup::Reminder(d),
        (Plan::Silent(why), _) => AtStartup::Silent(match why {
            Silence::NotInUse => format!(
                "the repository is not in use ({})",
                crate::store::usage::why(&usage)
            ),
            Silence::ClearOff => "handoff.onClear is off".into(),
            Silence::StartupOff => "handoff.onStartup is off".into(),
            Silence::Resumed => "the conversation is back".into(),
            Silence::Writing => format!("the handoff for {reference} is being written"),
            Silence::NoHandoff => format!("no handoff for {reference}"),
            Silence::Unreadable => format!("the handoff for {reference} cannot be read"),
            Silence::TooOld => format!(
                "the handoff for {reference} is older than handoff.offerMaxDays ({} days)",
                settings.offer_max_days()
            ),
        }),
        _ => AtStartup::Silent(format!("no handoff for {reference}")),
    }
}

/// The branch's own handoff for the offer, found as every reader finds it (exact pick only),
/// after bringing in the newest unread one from the refs when `bring_in`.
fn look(
    store: &Store,
    target: &Target,
    now: i64,
    bring_in: bool,
    max_days: u64,
) -> (Shelf, Option<Box<Delivery>>) {
    if bring_in {
        deliver::bring_in_offer(store, Some(target));
    }
    let found = deliver::find(store, Some(target), now, deliver::no_trail, |_, kind| {
        kind == PickKind::Exact
    });
    let d = match found.content {
        Content::Handoff(d) => d,
        Content::Writing { .. } | Content::Placeholder { .. } => return (Shelf::Writing, None),
        Content::Nothing => return (Shelf::Empty, None),
    };
    let age = d.info.mtime.map(|m| (now - m).max(0) as u64);
    let shelf = if d.document.is_err() {
        Shelf::Unreadable
    } else if age.is_none_or(|a| a > max_days.saturating_mul(86_400)) {
        Shelf::TooOld
    } else if d.info.is_unread() {
        Shelf::Unread
    } else {
        Shelf::Read
    };
    (shelf, Some(d))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One row of the table: the facts, what the plan does.
    fn check(start: Start, tweak: impl FnOnce(&mut Facts), expect: Plan) {
        let mut f = Facts {
            in_use: true,
            start,
            delivers_on_clear: true,
            on_startup: OnStartup::Offer,
            fresh_clear: false,
            shelf: None,
        };
        tweak(&mut f);
        assert_eq!(plan(&f), expect, "{f:?}");
    }

    #[test]
    fn not_in_use_is_silent_for_every_source() {
        for start in [Start::Compact, Start::Clear, Start::Startup, Start::Resumed] {
            check(start, |f| f.in_use = false, Plan::Silent(Silence::NotInUse));
        }
    }

    #[test]
    fn compact_delivers_whatever_on_clear_says() {
        check(
            Start::Compact,
            |f| f.delivers_on_clear = false,
            Plan::Deliver("compact"),
        );
    }

    #[test]
    fn clear_delivers() {
        check(Start::Clear, |_| {}, Plan::Deliver("clear"));
    }

    #[test]
    fn clear_with_on_clear_off_is_silent() {
        check(
            Start::Clear,
            |f| f.delivers_on_clear = false,
            Plan::Silent(Silence::ClearOff),
        );
    }

    #[test]
    fn startup_after_a_fresh_clear_is_handled_as_clear() {
        check(
            Start::Startup,
            |f| f.fresh_clear = true,
            Plan::Deliver("startup, handled as clear"),
        );
    }

    #[test]
    fn startup_after_a_fresh_clear_with_on_clear_off_is_silent() {
        check(
            Start::Startup,
            |f| {
                f.fresh_clear = true;
                f.delivers_on_clear = false;
            },
            Plan::Silent(Silence::ClearOff),
        );
    }

    #[test]
    fn startup_on_deliver_delivers() {
        check(
            Start::Startup,
            |f| f.on_startup = OnStartup::Deliver,
            Plan::Deliver("startup"),
        );
    }

    #[test]
    fn startup_off_is_silent() {
        check(
            Start::Startup,
            |f| f.on_startup = OnStartup::Off,
            Plan::Silent(Silence::StartupOff),
        );
    }

    #[test]
    fn startup_offer_looks_at_the_shelf_first() {
        check(Start::Startup, |_| {}, Plan::Look);
    }

    #[test]
    fn startup_offers_an_unread_handoff() {
        check(
            Start::Startup,
            |f| f.shelf = Some(Shelf::Unread),
            Plan::Offer,
        );
    }

    #[test]
    fn startup_reminds_of_a_read_handoff() {
        check(
            Start::Startup,
            |f| f.shelf = Some(Shelf::Read),
            Plan::Reminder,
        );
    }

    #[test]
    fn startup_is_silent_on_an_old_missing_unreadable_or_unfinished_handoff() {
        for (shelf, why) in [
            (Shelf::TooOld, Silence::TooOld),
            (Shelf::Empty, Silence::NoHandoff),
            (Shelf::Unreadable, Silence::Unreadable),
            (Shelf::Writing, Silence::Writing),
        ] {
            check(Start::Startup, |f| f.shelf = Some(shelf), Plan::Silent(why));
        }
    }

    #[test]
    fn a_resumed_conversation_is_silent() {
        check(Start::Resumed, |_| {}, Plan::Silent(Silence::Resumed));
    }
}
