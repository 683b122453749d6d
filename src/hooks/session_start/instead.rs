//! What a reset gets instead of the whole delivery (docs/hooks.md §11): the holdout's one
//! paragraph, or — where the compaction's summary is known before its delivery (a client that
//! asks for the delivery at its next model call) — what the summary dropped.

use super::{Injection, Then};
use crate::hooks::input::HookInput;
use crate::hooks::texts::injection::{InjectionBody, offer_text};
use crate::store::Target;
use crate::store::resets::Arm;

/// What a reset gets instead of the whole delivery, or the subject back.
pub(super) enum Instead {
    Given(Box<Injection>),
    Not(Box<InjectionBody>),
}

/// A reset drawn for the holdout gets one paragraph; a compaction whose summary is known before
/// its delivery gets what the summary dropped (docs/hooks.md §11).
pub(super) fn instead(
    input: &HookInput,
    target: &Target,
    subject: InjectionBody,
    title_source: &'static str,
    event: &str,
    now: i64,
) -> Instead {
    if crate::hooks::resets::holds_out(&subject, target, title_source) {
        return Instead::Given(Box::new(held_out(
            input,
            target,
            subject,
            title_source,
            event,
            now,
        )));
    }
    let summary = input
        .sid()
        .filter(|_| title_source == "compact")
        .and_then(crate::hooks::resets::waiting_summary);
    match (summary, &subject) {
        (Some(summary), InjectionBody::Document(d)) => {
            let Some(text) = crate::hooks::texts::injection::dropped_text(d, &summary, target)
            else {
                return Instead::Not(Box::new(subject));
            };
            let receipt = format!(
                "handoff-store: after the compaction, the model was given what its summary dropped of the handoff for {}",
                target.facts.reference
            );
            Instead::Given(Box::new(Injection {
                text,
                event: event.to_string(),
                receipt,
                then: Then {
                    consume: input.consume,
                    store: crate::hooks::input::store(),
                    ..Then::of(input, target, title_source, subject)
                },
            }))
        }
        _ => Instead::Not(Box::new(subject)),
    }
}

/// A reset drawn for the holdout (docs/hooks.md §11): the one short paragraph a fresh start's
/// offer says, never the handoff.
fn held_out(
    input: &HookInput,
    target: &Target,
    subject: InjectionBody,
    title_source: &'static str,
    event: &str,
    now: i64,
) -> Injection {
    let text = match &subject {
        InjectionBody::Document(d) => {
            let age = d.info.mtime.map_or(0, |m| (now - m).max(0) as u64);
            offer_text(d, &target.facts.reference, &target.checkout(), age).replacen(
                "(SessionStart, source: startup)",
                &format!("({event}, source: {title_source}, held out)"),
                1,
            )
        }
        _ => String::new(),
    };
    Injection {
        text,
        event: event.to_string(),
        receipt: format!(
            "handoff-store: held out (handoff.holdout): the model was told a handoff for {} exists, not given it",
            target.facts.reference
        ),
        then: Then {
            arm: Arm::Holdout,
            store: crate::hooks::input::store(),
            ..Then::of(input, target, title_source, subject)
        },
    }
}
