//! `hook session-start` (docs/hooks.md §2): after `/clear` or a compaction, re-inject the handoff
//! with its verdict as `additionalContext` — never more than 9,500 UTF-16 units, so Claude Code
//! never swaps it for a preview. Placeholders are reported, never shown; only an exact, unread
//! pick is marked consumed, after the output was delivered.

mod instead;

use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;

use super::claims::claim;
use super::input::{HookInput, Source};
use super::texts::injection::{
    InjectionBody, OwnWrite, background_section, cleared_section, compact_section,
    compose_document, offer_text, placeholder_section, size_word, verdict_word,
};
use crate::ops::deliver::{self, Content};
use crate::ops::marker::{FRESH_SECONDS, Marker, marker_path};
use crate::ops::startup::{AtStartup, Plan, Start, at_startup};
use crate::store::deliver::Delivery;
use crate::store::resets::Arm;
use crate::store::slot::Flip;
use crate::store::{PickKind, Store, Target, now};
use instead::{Instead, instead};

/// The claim name of a SessionStart firing with `source` (none counts as `other`).
pub(crate) fn claim_name(source: Option<Source>) -> String {
    format!("session-start-{}", source.unwrap_or(Source::Other).word())
}

/// What a SessionStart (or its fallback) decided to inject. The client's renderer puts `text` in
/// its own output shape; once that got out, [`Injection::delivered`] does what follows.
#[derive(Serialize)]
pub(crate) struct Injection {
    /// What the model is given.
    pub(crate) text: String,
    /// The hook event that injects it (`SessionStart`, `UserPromptSubmit`, `BeforeAgent`…).
    pub(crate) event: String,
    /// One line for the person at the terminal, where the client shows one: what reached the
    /// model (`handoff-store: handoff for main injected (gate OK, 2.6k chars)`).
    pub(crate) receipt: String,
    #[serde(skip)]
    then: Then,
}

/// What follows an injection that got out.
struct Then {
    client: &'static str,
    /// The main worktree of the target (deliveries are recorded per repository).
    main: String,
    session: Option<String>,
    title_source: &'static str,
    consume: bool,
    subject: InjectionBody,
    store: Option<Store>,
    marker: Option<PathBuf>,
    /// Where the client runs our prompt hook: a handoff still being written follows at the
    /// next prompt (the promise is recorded once this injection got out).
    prompt_hook: bool,
    /// A promise this injection keeps, used up once it got out.
    kept_promise: Option<PathBuf>,
    /// What the reset was given, for its log; the transcript and checkout it happened in.
    arm: Arm,
    transcript: Option<String>,
    checkout: String,
}

impl Injection {
    /// The injection got out: mark the handoff shown consumed (only an exact, unread pick, and
    /// only where the client passes the output on every time), record the delivery for
    /// `status`, and use up the `/clear` marker. The one write of a delivery.
    pub(crate) fn delivered(self) {
        let then = self.then;
        let shown = match &then.subject {
            InjectionBody::Document(d)
            | InjectionBody::Background {
                current: Some(d), ..
            } => Some(d),
            _ => None,
        };
        // The promise kept goes first: a new one (another write at work) may take its place.
        if let Some(p) = &then.kept_promise {
            let _ = crate::fs::remove_file(p);
        }
        if let (InjectionBody::Background { run, current }, true, Some(sid)) =
            (&then.subject, then.prompt_hook, then.session.as_deref())
        {
            let delivered = current
                .as_ref()
                .and_then(|d| d.document.as_ref().ok())
                .map(|d| super::promise::key_of(d.as_bytes()));
            super::promise::make(sid, run, delivered.as_deref());
        } else if let (InjectionBody::Document(d), Some(sid), Arm::Delivered) =
            (&then.subject, then.session.as_deref(), then.arm)
        {
            super::promise::settle(sid, std::path::Path::new(&d.info.path));
        }
        let consumed = shown.is_some_and(|delivery| {
            delivery.consumes()
                && then.consume
                && then.store.as_ref().is_some_and(|store| {
                    matches!(
                        delivery.consume(store, Some(Duration::from_secs(2))),
                        Ok(Flip::Changed { .. })
                    )
                })
        });
        let chars = self.text.encode_utf16().count();
        // A reset's injection (not a note, not a fresh start's offer) goes into the reset log.
        if then.title_source != "note" && !then.title_source.contains("offered") {
            let seen = super::resets::Seen {
                client: then.client,
                session: then.session.clone(),
                transcript: then.transcript.clone(),
                source: super::resets::source_word(then.title_source),
                checkout: then.checkout.clone(),
                main: then.main.clone(),
            };
            let store = then.store.clone().or_else(super::input::store);
            super::resets::record(
                store.as_ref(),
                seen,
                then.arm,
                None,
                chars,
                shown.map(|d| &**d),
            );
        }
        crate::ops::delivered::record(&crate::ops::delivered::Delivered {
            at: crate::store::iso(now()),
            harness: then.client.to_string(),
            session: then.session,
            source: then.title_source.to_string(),
            event: self.event,
            chars,
            cut: self.text.contains(super::texts::truncate::TRUNCATED),
            consumed,
            read_before: shown.is_some_and(|d| d.info.progress.as_deref() == Some("consumed")),
            handoff: shown.map(|d| d.info.path.clone()),
            main: then.main,
        });
        if let Some(p) = then.marker {
            let _ = crate::fs::remove_file(p);
        }
    }
}

impl Then {
    /// What follows an injection for `input` in `target`, showing `subject`: nothing consumed,
    /// no marker, no promise kept, unless the caller says otherwise.
    fn of(
        input: &HookInput,
        target: &Target,
        title_source: &'static str,
        subject: InjectionBody,
    ) -> Then {
        Then {
            client: input.client,
            main: target.main(),
            session: input.session.as_ref().map(|s| s.raw().to_string()),
            title_source,
            consume: false,
            subject,
            store: None,
            marker: None,
            prompt_hook: input.prompt_hook,
            kept_promise: None,
            arm: Arm::Delivered,
            transcript: input.transcript.clone(),
            checkout: target.checkout(),
        }
    }
}

impl Injection {
    /// This injection keeps the promise recorded at `path`: it is used up once it got out.
    pub(crate) fn keeps(mut self, path: PathBuf) -> Injection {
        self.then.kept_promise = Some(path);
        self
    }
}

/// An injection of one `text` that shows no handoff (a note), with its `receipt`.
pub(crate) fn note(
    input: &HookInput,
    target: &Target,
    text: String,
    receipt: String,
    event: &str,
) -> Injection {
    Injection {
        text,
        event: event.to_string(),
        receipt,
        then: Then::of(input, target, "note", InjectionBody::Nothing),
    }
}

/// The hook: at most one injection for this firing.
pub(crate) fn run(input: &HookInput) -> Option<Injection> {
    if !claim_firing(input) {
        return None;
    }
    match start_of(input.source) {
        Start::Compact | Start::Clear => {
            match deliver_or_why(input, input.source, "SessionStart") {
                Ok(injection) => Some(injection),
                Err(nothing) => {
                    let word = if input.source == Some(Source::Compact) {
                        "compact"
                    } else {
                        "clear"
                    };
                    if let Some(nothing) = nothing {
                        super::resets::nothing(input, word, &nothing);
                    }
                    None
                }
            }
        }
        Start::Startup => startup(input),
        // The conversation is back (`--continue`, `/resume`): it has what it had.
        Start::Resumed => None,
    }
}

/// The plan's name for a hook's `source`.
fn start_of(source: Option<Source>) -> Start {
    match source {
        Some(Source::Compact) => Start::Compact,
        Some(Source::Clear) => Start::Clear,
        Some(Source::Startup) => Start::Startup,
        _ => Start::Resumed,
    }
}

/// Claim this firing, whatever the source: a parallel firing (plugin and manual hooks both
/// installed) stays silent, and the UserPromptSubmit fallback knows SessionStart ran. Whether
/// this firing is the one that acts.
pub(crate) fn claim_firing(input: &HookInput) -> bool {
    let window = Duration::from_secs(crate::env::settings().claim_window);
    input
        .sid()
        .is_none_or(|sid| claim(sid, &claim_name(input.source), Some(window)))
}

/// A fresh start: a `/clear` just before it is a reset (the full delivery); otherwise, as
/// `handoff.onStartup` says, one short offer (the default) or one line when it was read
/// already, the full delivery, or nothing.
fn startup(input: &HookInput) -> Option<Injection> {
    let target = input.target()?;
    let store = super::input::store();
    let now = now();
    let (text, receipt, d) = match at_startup(&target, store.as_ref(), now, true) {
        AtStartup::AsClear | AtStartup::Deliver => {
            return deliver(input, Some(Source::Startup), "SessionStart");
        }
        AtStartup::Silent(_) => return None,
        AtStartup::Offer(d) => {
            let age = d.info.mtime.map_or(0, |m| (now - m).max(0) as u64);
            (
                offer_text(&d, &target.facts.reference, &target.checkout(), age),
                format!(
                    "handoff-store: handoff for {} offered ({})",
                    target.facts.reference,
                    verdict_word(&d.verdict)
                ),
                d,
            )
        }
        AtStartup::Reminder(d) => (
            super::texts::injection::reminder_text(&d, &target, now),
            format!(
                "handoff-store: handoff for {} already read; the model was told in one line",
                target.facts.reference
            ),
            d,
        ),
    };
    Some(Injection {
        text,
        event: "SessionStart".to_string(),
        receipt,
        then: Then {
            store,
            ..Then::of(
                input,
                &target,
                "startup, offered",
                InjectionBody::Document(d),
            )
        },
    })
}

/// Compose the injection for `source` (its title naming `event`).
pub(crate) fn deliver(input: &HookInput, source: Option<Source>, event: &str) -> Option<Injection> {
    deliver_or_why(input, source, event).ok()
}

/// Why a reset got nothing, with what the hook had already found out (the reset log's `why`,
/// without looking again).
pub(crate) struct Nothing {
    pub(crate) why: &'static str,
    pub(crate) target: Target,
    pub(crate) store: Option<crate::store::Store>,
}

/// [`deliver`], or why it gives nothing (`None`: no target to speak of).
fn deliver_or_why(
    input: &HookInput,
    source: Option<Source>,
    event: &str,
) -> Result<Injection, Option<Box<Nothing>>> {
    let target = input.target().ok_or(None)?;
    let now = now();
    let marker_file = marker_path(&target);
    let marker = match source {
        Some(Source::Compact) => None,
        // A fresh start counts a `/clear` only just before it.
        Some(Source::Startup) => marker_file
            .as_deref()
            .and_then(|p| Marker::read(p, now))
            .filter(|m| m.ended_at_epoch.is_some_and(|e| e >= now - FRESH_SECONDS)),
        _ => marker_file.as_deref().and_then(|p| Marker::read(p, now)),
    };
    let title_source = title_source(source, marker.as_ref(), now);
    let compact = title_source == "compact";
    let store = super::input::store();
    if compact && let (Some(store), Some(sid)) = (&store, input.sid()) {
        // SessionStart(compact) is the client's word that the compaction happened.
        crate::ops::after::confirm_compaction(store, sid, "SessionStart(compact)");
    }
    // Where nothing acts (or `/clear` is set to deliver nothing), nothing is said. A confirmed
    // compaction's candidate (above) was promoted all the same: that write was asked for.
    if let Err(why) = delivers(store.as_ref(), &target, title_source) {
        return Err(Some(Box::new(Nothing { why, target, store })));
    }
    // The note found beside the handoff is about the slot's newest write; after a compaction
    // the note said is about that session's own write, and no other start says one.
    let subject = match &store {
        Some(store) => subject(store, &target, now, compact, marker.as_ref(), input.trail),
        None => InjectionBody::Nothing,
    };
    let (own, background_note) = match (&store, input.sid()) {
        (Some(store), Some(sid)) if compact => own_note(store, &target, sid, now),
        _ => (OwnWrite::None, None),
    };
    let nothing_to_say = matches!(subject, InjectionBody::Nothing)
        && marker.is_none()
        && background_note.is_none()
        && own == OwnWrite::None;
    if nothing_to_say {
        let why = "no handoff";
        return Err(Some(Box::new(Nothing { why, target, store })));
    }
    let subject = match instead(input, &target, subject, title_source, event, now) {
        Instead::Given(injection) => return Ok(*injection),
        Instead::Not(subject) => *subject,
    };

    let reference = target.facts.reference.as_str();
    let lineage = lineage(&subject, compact, store.as_ref(), &target);
    let mut head = vec![format!(
        "# Context reset ({event}, source: {title_source}){}",
        lineage.unwrap_or_default()
    )];
    let slots = store
        .as_ref()
        .map(|s| s.named_slots(&target))
        .unwrap_or_default();
    if compact {
        head.push(compact_section(&subject, own, reference, now));
    } else if let Some(m) = &marker {
        let newest_slot = slots.iter().filter_map(|(_, i)| i.mtime).max();
        head.push(cleared_section(m, &subject, reference, newest_slot));
    }
    if let Some(note) = background_note {
        head.push(format!("**Background write:** {note}"));
    }
    // The branch's named slots: listed, never delivered (the default slot is).
    if !slots.is_empty() {
        head.push(super::texts::injection::slots_block(&slots, &target, now));
    }
    // The section above dates the handoff (the one clock) after a compaction or a `/clear`.
    let dated = compact || marker.is_some();
    let text = compose(head, &subject, &target, now, dated, input.prompt_hook);
    let receipt = receipt(&subject, &target.facts.reference, &text, input.prompt_hook);
    Ok(Injection {
        text,
        event: event.to_string(),
        receipt,
        then: Then {
            consume: input.consume,
            store,
            marker: marker.and(marker_file),
            ..Then::of(input, &target, title_source, subject)
        },
    })
}

/// After a compaction, the handoff's place in its lineage and what it changed (` — …`).
fn lineage(
    subject: &InjectionBody,
    compact: bool,
    store: Option<&crate::store::Store>,
    target: &Target,
) -> Option<String> {
    match subject {
        InjectionBody::Document(d) if compact && d.kind == crate::store::PickKind::Exact => {
            let key = store.and_then(crate::store::authorship::StoreKey::read);
            crate::store::lineage::since_previous(key.as_ref(), target).map(|l| format!(" — {l}"))
        }
        _ => None,
    }
}

/// What session `sid`'s compaction wrote into `target`'s slot — its newest background write,
/// and whether the slot holds that write's result now — and the note about that write, while it
/// is news: a note is said to the session whose compaction it was, at that compaction, never at
/// a later start, /clear or another session's compaction.
fn own_note(
    store: &crate::store::Store,
    target: &Target,
    sid: &str,
    now: i64,
) -> (OwnWrite, Option<String>) {
    let run = crate::store::runs::all(store)
        .into_iter()
        .find(|r| r.job.session == sid && r.job.slot == target.name);
    let own = match &run {
        None => OwnWrite::None,
        Some(r)
            if r.state(now) == crate::store::runs::RunState::Promoted
                && r.result_in_slot(store) =>
        {
            OwnWrite::Installed
        }
        Some(_) => OwnWrite::NotInstalled,
    };
    let note = run
        .filter(|r| r.is_news(store))
        .and_then(|r| super::texts::background_note(&r.state(now), r.age(now), &target.checkout()));
    (own, note)
}

/// Whether the plan delivers in full for a start titled `title_source` (only a start it already
/// chose to deliver gets here: this asks again about the repository's use and `handoff.onClear`).
/// Whether a start delivers here; why not, in the reset log's words.
fn delivers(
    store: Option<&crate::store::Store>,
    target: &Target,
    title_source: &str,
) -> Result<(), &'static str> {
    let in_use = crate::store::usage::Use::of(store, target).acts();
    let delivers_on_clear = target.settings().delivers_on_clear();
    let facts = crate::ops::startup::Facts {
        in_use,
        start: match title_source {
            "compact" => Start::Compact,
            t if t.ends_with("clear") => Start::Clear,
            _ => Start::Startup,
        },
        delivers_on_clear,
        on_startup: crate::settings::OnStartup::Deliver,
        fresh_clear: false,
        shelf: None,
    };
    match crate::ops::startup::plan(&facts) {
        Plan::Deliver(_) => Ok(()),
        _ if !in_use => Err("not in use"),
        _ if !delivers_on_clear => Err("handoff.onClear off"),
        _ => Err("no handoff"),
    }
}

/// How the injection's title names its source.
fn title_source(source: Option<Source>, marker: Option<&Marker>, now: i64) -> &'static str {
    match source {
        Some(Source::Startup)
            if marker
                .and_then(|m| m.ended_at_epoch)
                .is_some_and(|e| e >= now - FRESH_SECONDS) =>
        {
            "startup, handled as clear"
        }
        Some(Source::Startup) => "startup",
        Some(Source::Compact) => "compact",
        _ => "clear",
    }
}

/// The line for the person: what reached the model, in the words the model got (a guess is
/// named as one, with the branch it was written on; an abandoned write as abandoned).
fn receipt(subject: &InjectionBody, reference: &str, text: &str, prompt_hook: bool) -> String {
    match subject {
        InjectionBody::Document(d) => {
            let cut = if text.contains(super::texts::truncate::TRUNCATED) {
                ", cut to fit"
            } else {
                ""
            };
            let what = match d.kind {
                PickKind::Exact => format!("handoff for {reference}"),
                PickKind::Recent => format!(
                    "guessed: handoff for {}, on {reference},",
                    d.info.branch.as_deref().unwrap_or("another branch")
                ),
            };
            format!(
                "handoff-store: {what} injected ({}, {}{cut})",
                verdict_word(&d.verdict),
                size_word(text)
            )
        }
        InjectionBody::Placeholder {
            state: crate::store::PlaceholderState::Abandoned,
            ..
        } => format!(
            "handoff-store: the background write for {reference} was abandoned; the model was told no handoff is coming"
        ),
        InjectionBody::Background {
            current: Some(d), ..
        } => format!(
            "handoff-store: handoff for {reference} injected ({}, {}); a fresher one is being written{}",
            verdict_word(&d.verdict),
            size_word(text),
            if prompt_hook {
                " and follows at the next prompt"
            } else {
                ""
            }
        ),
        InjectionBody::Placeholder { .. } | InjectionBody::Background { .. } => format!(
            "handoff-store: the handoff for {reference} is still being written; the model was told to carry on{}",
            if prompt_hook {
                " (it follows at the next prompt)"
            } else {
                ""
            }
        ),
        InjectionBody::Nothing => {
            format!("handoff-store: no handoff for {reference}; the model was told")
        }
    }
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
    trail: crate::ops::deliver::Trail,
) -> InjectionBody {
    let corroborated = |info: &crate::store::HandoffInfo| {
        marker
            .and_then(|m| m.ended_at_epoch)
            .zip(info.mtime)
            .is_some_and(|(e, m)| (e - m).max(0) <= FRESH_SECONDS)
    };
    deliver::bring_in_offer(store, Some(target));
    let found = deliver::find(store, Some(target), now, trail, |info, kind| {
        kind == PickKind::Exact || (!compact && corroborated(info))
    });
    match found.content {
        Content::Writing { run, .. } => InjectionBody::Background {
            current: deliver::current_beside(store, target, now),
            run,
        },
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
    }
}

/// The injection's text: `head`, then the subject's section.
fn compose(
    mut head: Vec<String>,
    subject: &InjectionBody,
    target: &crate::store::Target,
    now: i64,
    dated: bool,
    prompt_hook: bool,
) -> String {
    let document = |head: &[String], delivery: &Delivery| {
        let document = match &delivery.document {
            Ok(d) => d.clone(),
            Err(e) => format!("(not loaded: {})", e.report()),
        };
        compose_document(
            head,
            dated,
            &delivery.info,
            delivery.kind,
            &delivery.others,
            &delivery.verdict,
            &delivery.drift,
            &document,
            &target.facts.reference,
            now,
        )
    };
    match subject {
        InjectionBody::Nothing => {}
        InjectionBody::Background { run, current } => {
            head.push(background_section(run, target, now, prompt_hook));
            if let Some(d) = current {
                return document(&head, d);
            }
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
        }
        InjectionBody::Document(delivery) => return document(&head, delivery),
    }
    head.join("\n\n")
}
