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
    if !usage.acts() {
        return AtStartup::Silent(format!(
            "the repository is not in use ({})",
            crate::store::usage::why(&usage)
        ));
    }
    let settings = target.settings();
    let reference = &target.facts.reference;
    match settings.on_startup() {
        _ if fresh_clear => return AtStartup::AsClear,
        OnStartup::Deliver => return AtStartup::Deliver,
        OnStartup::Off => return AtStartup::Silent("handoff.onStartup is off".into()),
        OnStartup::Offer => {}
    }
    let Some(store) = store else {
        return AtStartup::Silent("the store cannot be used".into());
    };
    if bring_in {
        deliver::bring_in_offer(store, Some(target));
    }
    let found = deliver::find(store, Some(target), now, |_, kind| kind == PickKind::Exact);
    let d = match found.content {
        Content::Handoff(d) => d,
        Content::Writing { .. } | Content::Placeholder { .. } => {
            return AtStartup::Silent(format!("the handoff for {reference} is being written"));
        }
        Content::Nothing => {
            return AtStartup::Silent(format!("no handoff for {reference}"));
        }
    };
    let max_days = settings.offer_max_days();
    let age = d.info.mtime.map(|m| (now - m).max(0) as u64);
    if d.document.is_err() {
        return AtStartup::Silent(format!("the handoff for {reference} cannot be read"));
    }
    if age.is_none_or(|a| a > max_days.saturating_mul(86_400)) {
        return AtStartup::Silent(format!(
            "the handoff for {reference} is older than handoff.offerMaxDays ({max_days} days)"
        ));
    }
    if d.info.is_unread() {
        AtStartup::Offer(d)
    } else {
        AtStartup::Reminder(d)
    }
}
