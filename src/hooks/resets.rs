//! The reset log's hook side (docs/hooks.md §11): what each reset was given — the handoff, the
//! holdout's one line, or nothing and why — recorded once the injection got out (a reset given
//! nothing, when the hook decided so), and the holdout's draw. Only where a store exists: a
//! machine that never used handoffs gets no log.

use crate::store::deliver::Delivery;
use crate::store::resets::{self, Arm, Reset};
use crate::store::{Store, Target};

/// Whether this reset is drawn for the holdout: `handoff.holdout N` set (N ≥ 2), then one
/// chance in N, from the operating system's randomness.
/// (`HANDOFF_HOLDOUT_DRAW=held` or `given` decides the draw instead: the tests' seam.)
pub(crate) fn draw(target: &Target) -> bool {
    let Some(n) = target.settings().holdout() else {
        return false;
    };
    match std::env::var("HANDOFF_HOLDOUT_DRAW").as_deref() {
        Ok("held") => return true,
        Ok("given") => return false,
        _ => {}
    }
    let mut bytes = [0u8; 8];
    getrandom::fill(&mut bytes).is_ok() && u64::from_le_bytes(bytes) % n == 0
}

/// Whether this reset's delivery of `subject` is held out: a handoff to show, at a `/clear` or
/// compaction, and the draw says so.
pub(crate) fn holds_out(
    subject: &super::texts::injection::InjectionBody,
    target: &Target,
    title_source: &str,
) -> bool {
    matches!(subject, super::texts::injection::InjectionBody::Document(_))
        && matches!(source_word(title_source), "compact" | "clear")
        && draw(target)
}

/// The source word a reset is logged under, from the injection's title (`compact`, `clear`,
/// `startup, handled as clear` …).
pub(crate) fn source_word(title_source: &str) -> &'static str {
    if title_source.contains("compact") {
        "compact"
    } else if title_source.contains("clear") {
        "clear"
    } else {
        "startup"
    }
}

/// One reset as the hook saw it.
pub(crate) struct Seen<'a> {
    pub(crate) client: &'a str,
    pub(crate) session: Option<String>,
    pub(crate) transcript: Option<String>,
    pub(crate) source: &'static str,
    pub(crate) checkout: String,
    pub(crate) main: String,
}

/// Record a reset given `arm` (`why` for none): `chars` injected, the handoff `shown` or held
/// out.
pub(crate) fn record(
    store: Option<&Store>,
    seen: Seen<'_>,
    arm: Arm,
    why: Option<&str>,
    chars: usize,
    shown: Option<&Delivery>,
) {
    let Some(store) = store.filter(|s| s.dir.is_dir()) else {
        return;
    };
    let doc = shown
        .and_then(|d| d.document.as_deref().ok())
        .map(crate::document::Document::parse);
    let audit = match (&seen.session, seen.source) {
        (Some(sid), "compact") => take_audit(sid),
        _ => None,
    };
    let reset = Reset {
        at: crate::store::now(),
        client: seen.client.to_string(),
        session: seen.session,
        transcript: seen.transcript,
        source: seen.source.to_string(),
        arm,
        why: why.map(str::to_string),
        chars,
        verdict: shown.map(|d| format!("{:?}", d.verdict.status).to_ascii_uppercase()),
        handoff: shown.map(|d| d.info.path.clone()),
        checkout: seen.checkout,
        main: seen.main,
        cited: doc.as_ref().map(resets::cited_paths).unwrap_or_default(),
        wires: doc
            .as_ref()
            .map(crate::store::tripwire::wires_of)
            .unwrap_or_default(),
        audit,
    };
    resets::record(store, &reset);
}

/// Where an audit waits for its compaction's reset: `<state>/audits/<safe-sid>.json`.
fn audit_path(safe_sid: &str) -> Option<std::path::PathBuf> {
    Some(super::claims::state_dir()?.join("audits").join(safe_sid))
}

/// An audit waiting for its compaction's delivery, with the summary it was made from (which
/// that delivery completes).
#[derive(serde::Serialize, serde::Deserialize)]
struct Waiting {
    audit: resets::Audit,
    summary: String,
}

/// Keep session `safe_sid`'s audit of `summary` until its compaction's reset is logged (best
/// effort; 0600 in the private state folder, an hour at most).
pub(crate) fn keep_audit(safe_sid: &str, audit: &resets::Audit, summary: &str) {
    let Some(p) = audit_path(safe_sid) else {
        return;
    };
    let waiting = Waiting {
        audit: audit.clone(),
        summary: summary.to_string(),
    };
    if let (Some(dir), Ok(bytes)) = (p.parent(), serde_json::to_vec(&waiting))
        && crate::store::slot::create_private_dir(dir).is_ok()
    {
        // A session whose compaction was never delivered leaves its audit: past the hour it
        // counts for, it goes (only our own files live in this folder).
        for entry in crate::fs::read_dir(dir).into_iter().flatten().flatten() {
            let stale = entry
                .metadata()
                .and_then(|m| m.modified())
                .is_ok_and(|t| t.elapsed().is_ok_and(|age| age.as_secs() >= 3600));
            if stale && entry.file_type().is_ok_and(|t| t.is_file()) {
                let _ = crate::fs::remove_file(entry.path());
            }
        }
        let _ = crate::durable::write(&p, &bytes, None);
    }
}

/// Session `safe_sid`'s waiting audit (an hour old at most), left in place.
fn waiting(safe_sid: &str) -> Option<Waiting> {
    let p = audit_path(safe_sid)?;
    let fresh = crate::fs::metadata(&p)
        .ok()?
        .modified()
        .ok()?
        .elapsed()
        .is_ok_and(|age| age.as_secs() < 3600);
    let bytes = crate::fs::read_regular(&p, 4 * 1024 * 1024).filter(|_| fresh)?;
    serde_json::from_slice(&bytes).ok()
}

/// The summary session `safe_sid`'s compaction is known to have, before its delivery.
pub(crate) fn waiting_summary(safe_sid: &str) -> Option<String> {
    waiting(safe_sid).map(|w| w.summary)
}

/// Session `raw_sid`'s waiting audit, taken.
fn take_audit(raw_sid: &str) -> Option<resets::Audit> {
    let safe = super::input::safe_session_id(raw_sid);
    let found = waiting(&safe);
    if let Some(p) = audit_path(&safe) {
        let _ = crate::fs::remove_file(p);
    }
    found.map(|w| w.audit)
}

/// A reset (`/clear` or a compaction) the hook gave nothing: recorded with why, from what the
/// hook found (nothing is looked up again).
pub(crate) fn nothing(
    input: &super::input::HookInput,
    source: &'static str,
    nothing: &super::session_start::Nothing,
) {
    let seen = Seen {
        client: input.client,
        session: input.session.as_ref().map(|s| s.raw().to_string()),
        transcript: input.transcript.clone(),
        source,
        checkout: nothing.target.checkout(),
        main: nothing.target.main(),
    };
    record(
        nothing.store.as_ref(),
        seen,
        Arm::None,
        Some(nothing.why),
        0,
        None,
    );
}
