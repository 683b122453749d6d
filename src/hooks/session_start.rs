//! `hook session-start` (docs/hooks.md §2): after `/clear` or a compaction, re-inject the handoff
//! with its verdict as `additionalContext` — never more than 9,500 UTF-16 units, so Claude Code
//! never swaps it for a preview. Placeholders are reported, never shown; only an exact, unread
//! pick is marked consumed, after the output was delivered.

use std::io::Write;
use std::time::Duration;

use serde_json::{Map, Value, json};

use super::claims::claim;
use super::claims::dedup_lock;
use super::delivery::{self, Content};
use super::input::safe_session_id;
use super::input::string_field;
use super::input::target;
use super::marker::{FRESH_SECONDS, Marker, marker_path};
use super::texts::injection::{
    InjectionBody, background_section, cleared_section, compact_section, compose_document,
    placeholder_section,
};
use crate::store::runs;
use crate::store::slot::Flip;
use crate::store::{PickKind, now};

/// The sources a SessionStart claim is named after (anything else counts as `other`).
pub const SOURCES: [&str; 5] = ["startup", "resume", "clear", "compact", "other"];

/// The claim name of a SessionStart firing with `source`.
pub fn claim_name(source: Option<&str>) -> String {
    let s = source.filter(|s| SOURCES.contains(s)).unwrap_or("other");
    format!("session-start-{s}")
}

/// A key of the (adapter-built) hook input: deliver, but leave the handoff unread — for a
/// harness known to run the hook without passing its output to the model every time.
pub const KEEP_UNREAD: &str = "handoff_store_keep_unread";

/// A key of the (adapter-built) hook input: the harness it came from (none: Claude Code).
pub const HARNESS: &str = "handoff_store_harness";

/// Where an injection goes: the client's own output shape for the text, written; whether it got
/// out (only then is the handoff marked consumed). Claude Code's is [`claude_output`]; the
/// harness adapters bring theirs.
pub type Emit<'a> = dyn FnMut(&str) -> bool + 'a;

/// Claude Code's output for an injection: one `hookSpecificOutput` JSON line naming `event`.
pub fn claude_output<'a>(out: &'a mut dyn Write, event: &'a str) -> impl FnMut(&str) -> bool + 'a {
    move |text: &str| {
        let payload =
            json!({"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}});
        serde_json::to_string(&payload)
            .is_ok_and(|line| writeln!(out, "{line}").and_then(|()| out.flush()).is_ok())
    }
}

/// Run the hook on parsed stdin, handing at most one injection to `emit`.
pub fn run(input: &Map<String, Value>, emit: &mut Emit) {
    // Claimed first, whatever the source: a parallel firing (plugin and manual hooks both
    // installed) stays silent, and the UserPromptSubmit fallback knows SessionStart ran.
    let source = string_field(input, "source");
    let window = Duration::from_secs(crate::env::settings().claim_window);
    if let Some(session) = string_field(input, "session_id")
        && !claim(&safe_session_id(session), &claim_name(source), Some(window))
    {
        return;
    }
    if !matches!(source, Some("compact" | "clear" | "startup")) {
        return;
    }
    deliver(input, source, "SessionStart", emit);
}

/// Compose the injection for `source` (its title naming `event`) and hand it to `emit`; once it
/// got out, mark the handoff consumed and record the delivery.
pub fn deliver(input: &Map<String, Value>, source: Option<&str>, event: &str, emit: &mut Emit) {
    let Some(target) = target(input) else { return };
    let now = now();
    let marker_file = marker_path(&target);
    let marker = match source {
        Some("compact") => None,
        _ => marker_file.as_deref().and_then(|p| Marker::read(p, now)),
    };
    let Some(title_source) = title_source(source, event, marker.as_ref(), now) else {
        return;
    };
    let compact = title_source == "compact";
    let store = super::input::store();
    if compact && let (Some(store), Some(session)) = (&store, string_field(input, "session_id")) {
        // SessionStart(compact) is the client's word that the compaction happened.
        if let Some(run) =
            runs::confirm_session(store, &safe_session_id(session), "SessionStart(compact)")
        {
            crate::lifecycle::promoted(&run);
        }
    }
    let (background_note, subject) = match &store {
        Some(store) => subject(store, &target, now, compact, marker.as_ref()),
        None => (None, InjectionBody::Nothing),
    };
    let lock_exists = string_field(input, "session_id")
        .and_then(|s| dedup_lock(&safe_session_id(s)))
        .is_some_and(|p| p.is_file());
    let nothing_to_say = matches!(subject, InjectionBody::Nothing)
        && marker.is_none()
        && background_note.is_none()
        && !(compact && lock_exists);
    if nothing_to_say {
        return;
    }

    let reference = target.facts.reference.as_str();
    let mut head = vec![format!("# Context reset ({event}, source: {title_source})")];
    if compact {
        head.push(compact_section(&subject, lock_exists, reference, now));
    } else if let Some(m) = &marker {
        head.push(cleared_section(m, &subject, reference));
    }
    if let Some(note) = background_note {
        head.push(format!("**Background write:** {note}"));
    }
    let (text, shown) = compose(head, &subject, &target, now);
    if !emit(&text) {
        return;
    }

    let consumed = shown.is_some_and(|delivery| {
        delivery.consumes()
            && !input.contains_key(KEEP_UNREAD)
            && store.as_ref().is_some_and(|store| {
                matches!(
                    delivery.consume(store, Some(Duration::from_secs(2))),
                    Ok(Flip::Changed { .. })
                )
            })
    });
    super::delivered::record(&super::delivered::Delivered {
        at: crate::store::iso(now),
        harness: string_field(input, HARNESS)
            .unwrap_or("claude-code")
            .to_string(),
        session: string_field(input, "session_id").map(str::to_string),
        source: title_source.to_string(),
        event: event.to_string(),
        chars: text.chars().count(),
        cut: text.contains(super::texts::truncate::TRUNCATED),
        consumed,
        handoff: shown.map(|d| d.info.path.clone()),
    });
    if marker.is_some()
        && let Some(p) = marker_file
    {
        let _ = crate::fs::remove_file(p);
    }
}

/// How the injection's title names its source; `None` when nothing is delivered for it (a fresh
/// start without a `/clear` just before it).
fn title_source(
    source: Option<&str>,
    event: &str,
    marker: Option<&Marker>,
    now: i64,
) -> Option<&'static str> {
    Some(match source {
        Some("startup") => {
            if marker
                .and_then(|m| m.ended_at_epoch)
                .is_none_or(|e| e < now - FRESH_SECONDS)
            {
                return None;
            }
            "startup, handled as clear"
        }
        Some("compact") => "compact",
        _ if event != "SessionStart" => "SessionStart did not run, handled as clear",
        _ => "clear",
    })
}

/// What to show, found as every reader finds it, and the note on the slot's background write.
/// A most recent handoff (not this slot's) is shown after `/clear` only when the marker
/// corroborates it, never after a compaction.
fn subject(
    store: &crate::store::Store,
    target: &crate::store::Target,
    now: i64,
    compact: bool,
    marker: Option<&Marker>,
) -> (Option<String>, InjectionBody) {
    let corroborated = |info: &crate::store::HandoffInfo| {
        marker
            .and_then(|m| m.ended_at_epoch)
            .zip(info.mtime)
            .is_some_and(|(e, m)| (e - m).max(0) <= FRESH_SECONDS)
    };
    delivery::bring_in_offer(store, Some(target));
    let found = delivery::find(store, Some(target), now, |info, kind| {
        kind == PickKind::Exact || (!compact && corroborated(info))
    });
    let body = match found.content {
        Content::Writing { run, path } => InjectionBody::Background { run, path },
        Content::Placeholder {
            info,
            state,
            transcript,
            ..
        } => InjectionBody::Placeholder {
            info,
            state,
            transcript,
        },
        Content::Handoff(d) => InjectionBody::Document(d),
        Content::Nothing => InjectionBody::Nothing,
    };
    (found.note, body)
}

/// The injection's text: `head`, then the subject's section; and the handoff it shows.
fn compose<'a>(
    mut head: Vec<String>,
    subject: &'a InjectionBody,
    target: &crate::store::Target,
    now: i64,
) -> (String, Option<&'a crate::store::deliver::Delivery>) {
    match subject {
        InjectionBody::Nothing => (head.join("\n\n"), None),
        InjectionBody::Background { run, path } => {
            head.push(background_section(run, path, target, now));
            (head.join("\n\n"), None)
        }
        InjectionBody::Placeholder {
            info,
            state,
            transcript,
        } => {
            head.push(placeholder_section(
                info,
                *state,
                transcript.as_ref(),
                target,
                now,
            ));
            (head.join("\n\n"), None)
        }
        InjectionBody::Document(delivery) => {
            let document = match &delivery.document {
                Ok(d) => d.clone(),
                Err(e) => format!("(not loaded: {e})"),
            };
            let text = compose_document(
                &head,
                &delivery.info,
                delivery.kind,
                &delivery.others,
                &delivery.verdict,
                &delivery.drift,
                &document,
                &target.facts.reference,
                now,
            );
            (text, Some(delivery))
        }
    }
}
