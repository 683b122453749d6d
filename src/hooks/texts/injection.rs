//! The SessionStart injection's wording (docs/hooks.md §2.6–§2.7): every section the model reads —
//! compact, cleared session, placeholder, background write, the document with its verdict and
//! the reading rules — and the cut to 9,500 UTF-16 units. `session_start/` decides what to
//! say; this module only says it.

use super::truncate::{INJECTION_LIMIT, utf16_len};
use crate::ops::marker::{FRESH_SECONDS, Marker};
use crate::shell::{self, self_command};
use crate::store::deliver::Delivery;
use crate::store::drift::Drift;
use crate::store::runs::Run;
use crate::store::verdict::{GateStatus, GateVerdict};
use crate::store::{HandoffInfo, PickKind, PlaceholderState, Target, epoch, gap};

/// What the body of the injection is about.
pub(crate) enum InjectionBody {
    Nothing,
    /// A background write for the exact slot is under way (the slot is untouched); `current`
    /// is what the slot holds meanwhile, delivered now — the fresh one follows, never waited
    /// for.
    Background {
        run: Run,
        current: Option<Box<Delivery>>,
    },
    Placeholder {
        info: HandoffInfo,
        state: PlaceholderState,
        transcript: Option<(std::path::PathBuf, std::time::SystemTime)>,
    },
    /// A handoff, read, gated and measured.
    Document(Box<Delivery>),
}

/// What this session's own compaction wrote: the one fact the compaction's title sentence, its
/// note and its receipt are all said from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OwnWrite {
    /// No background write was started for this session's compaction.
    None,
    /// Its write is in the slot: the handoff shown is the one it wrote.
    Installed,
    /// Its write was started and is not what the slot holds (held, refused, failed, or another
    /// write landed since): the note, if any, says why.
    NotInstalled,
}

/// After a compaction: whether the handoff below was written for it. The one clock of the
/// injection when there is a handoff.
pub(crate) fn compact_section(
    subject: &InjectionBody,
    own: OwnWrite,
    reference: &str,
    now: i64,
) -> String {
    match (own, subject) {
        (OwnWrite::Installed, InjectionBody::Document(d)) => format!(
            "This session was just compacted. The handoff below was written {} ago by its automatic write: check that its Next matches what you were last doing.",
            gap(d.info.mtime.map_or(0, |m| (now - m).max(0) as u64))
        ),
        (OwnWrite::NotInstalled, InjectionBody::Document(d)) => format!(
            "This session was just compacted and its automatic write did not replace the handoff: the one below, written {} ago, may be older than the summary.",
            gap(d.info.mtime.map_or(0, |m| (now - m).max(0) as u64))
        ),
        (OwnWrite::None, InjectionBody::Document(d)) => format!(
            "This session was just compacted and no handoff was written for it: the one below, written {} ago, may be older than the summary.",
            gap(d.info.mtime.map_or(0, |m| (now - m).max(0) as u64))
        ),
        (
            _,
            InjectionBody::Background {
                current: Some(d), ..
            },
        ) => format!(
            "This session was just compacted. The handoff below was written {} ago, before this compaction's write began.",
            gap(d.info.mtime.map_or(0, |m| (now - m).max(0) as u64))
        ),
        (_, InjectionBody::Background { current: None, .. }) => {
            format!("This session was just compacted; no handoff for `{reference}` exists yet.")
        }
        (_, InjectionBody::Placeholder { .. }) => {
            "This session was just compacted; its automatic write is below.".to_string()
        }
        (OwnWrite::Installed | OwnWrite::NotInstalled, InjectionBody::Nothing) => format!(
            "This session was just compacted. An automatic write was attempted, but **no handoff exists for `{reference}`**: it may have failed. Run `/handoff` yourself if you need one."
        ),
        (OwnWrite::None, _) => format!(
            "This session was just compacted. **No handoff exists for `{reference}`**, and none was written automatically."
        ),
    }
}

/// After `/clear`: whether the handoff below covers the session that was cleared. The one
/// clock of the injection when there is a handoff.
/// `newest_slot`: when the branch's newest named slot was written (epoch seconds), if it has
/// any — a `split` after the default slot's write put the session's latest work there.
pub(crate) fn cleared_section(
    m: &Marker,
    subject: &InjectionBody,
    reference: &str,
    newest_slot: Option<i64>,
) -> String {
    let context = m
        .resident_tokens
        .filter(|r| *r >= 0)
        .map(|r| format!(", {}k tokens of context", r / 1000))
        .unwrap_or_default();
    let mut s = format!("The session before this one was cleared (`/clear`{context}). ");
    let uncovered = match subject {
        InjectionBody::Placeholder { .. } | InjectionBody::Background { .. } => {
            s.push_str(&format!(
                "Its handoff for `{reference}` is not finished; see below."
            ));
            false
        }
        InjectionBody::Nothing => {
            s.push_str(&format!(
                "**No handoff exists for `{reference}`**, so its work is undocumented."
            ));
            true
        }
        // Timing alone never makes another branch's handoff cover the cleared session.
        InjectionBody::Document(d) if d.kind == PickKind::Recent => {
            s.push_str("Whether the guess below covers it is for the user to say.");
            false
        }
        InjectionBody::Document(d) => match (m.ended_at_epoch, d.info.mtime) {
            (Some(_), Some(mt)) if newest_slot.is_some_and(|n| n > mt) => {
                s.push_str(
                    "The named slots listed below were written after the handoff below: the cleared session's latest work is in them.",
                );
                false
            }
            (Some(e), Some(mt)) if (e - mt).max(0) <= FRESH_SECONDS => {
                s.push_str(&format!(
                    "The handoff below was written {} before that clear, so it covers it.",
                    gap((e - mt).max(0) as u64)
                ));
                false
            }
            (Some(e), Some(mt)) => {
                s.push_str(&format!(
                    "**The handoff below was written {} before that clear**: what the cleared session did after it is not in it.",
                    gap((e - mt).max(0) as u64)
                ));
                true
            }
            _ => {
                s.push_str("Whether the handoff below covers it is unknown.");
                true
            }
        },
    };
    if uncovered
        && let Some(t) = &m.transcript_path
        && crate::env::expand_home(t).is_file()
    {
        s.push_str(&format!(
            " Its transcript survives at `{t}`: read it only if that work matters, and only the part you need."
        ));
    }
    s
}

pub(crate) fn placeholder_section(
    info: &HandoffInfo,
    state: PlaceholderState,
    transcript: Option<&(std::path::PathBuf, std::time::SystemTime)>,
    target: &Target,
    now: i64,
) -> String {
    let timeout = crate::env::settings().fork_timeout;
    let age = info.mtime.map(|m| (now - m).max(0) as u64);
    let here = target.checkout();
    let transcript_gap = transcript.map(|(_, t)| gap((now - epoch(*t)).max(0) as u64));
    let reference = &target.facts.reference;
    if state == PlaceholderState::Abandoned {
        let mut s = format!(
            "## A handoff write appears to have failed\n`{}` has said `progress: writing` for {}, longer than the {timeout} seconds a background write is given",
            info.path,
            gap(age.unwrap_or(0))
        );
        if let (Some((p, _)), Some(g)) = (transcript, &transcript_gap) {
            s.push_str(&format!(
                ", and the writer's transcript `{}` has not changed for {g}",
                p.display()
            ));
        }
        s.push_str(&format!(
            ". Treat it as abandoned: no handoff is coming for `{reference}`. Carry on without one, and write a new handoff with `/handoff` once you know where you are."
        ));
        // `restore` only where there is a version to bring back.
        let kept = crate::store::Store::locate()
            .is_ok_and(|store| !crate::store::slot::versions(&store, &target.name).is_empty());
        if kept {
            s.push_str(&format!(
                " The previous handoff for this branch is in history: `{} restore {}` brings it back.",
                self_command(),
                shell::quote(&here)
            ));
        }
        s.push_str("\n---");
        return s;
    }
    let when = age.map_or_else(
        || "at an unknown time (mtime unreadable)".to_string(),
        |a| format!("{} ago", gap(a)),
    );
    let mut s = format!(
        "**A handoff is being written** for `{reference}` (checkout `{here}`, started {when}); until it is stored, `{}` is only a placeholder that says `progress: writing`.",
        info.path
    );
    if state == PlaceholderState::Slow
        && let Some(g) = &transcript_gap
    {
        s.push_str(&format!(
            " The writer is past its nominal budget of {timeout} seconds, but its transcript is still advancing (last change {g} ago)."
        ));
    }
    if let Some((p, _)) = transcript {
        s.push_str(&format!(" Its transcript is `{}`.", p.display()));
    }
    s.push_str(&format!(
        " Carry on with what you have; if you need it first, `{} read {} --wait 60` waits up to 60 s for it.\n---",
        self_command(),
        shell::quote(&here)
    ));
    s
}

/// Section C for a background write recorded in the run directory: the slot still holds the
/// previous handoff (delivered beside this line) or nothing. Never a wait: where the client
/// runs our prompt hook the fresh handoff follows at the next prompt; elsewhere a bounded wait
/// of at most 60 s is offered as an option.
pub(crate) fn background_section(
    run: &Run,
    target: &Target,
    now: i64,
    prompt_hook: bool,
) -> String {
    let reference = &target.facts.reference;
    let follows = if prompt_hook {
        "It will be given to you with the next prompt once it is stored — do not wait for it."
            .to_string()
    } else {
        format!(
            "Carry on with what you have; if you need it first, `{} read {} --wait 60` waits up to 60 s for it.",
            self_command(),
            shell::quote(&target.checkout())
        )
    };
    format!(
        "**A fresher handoff is being written** in the background for `{reference}` (started {} ago). {follows}",
        gap(run.age(now))
    )
}

/// Which handoff this is and where it lives; its age unless the section above already gave
/// the one clock (`dated`).
pub(crate) fn intro(
    info: &HandoffInfo,
    kind: PickKind,
    reference: &str,
    now: i64,
    dated: bool,
) -> String {
    let mut s = match kind {
        PickKind::Exact => {
            let when = match info.mtime {
                Some(m) if !dated => format!(", written {} ago", gap((now - m).max(0) as u64)),
                _ => String::new(),
            };
            let mut s = format!("Handoff for `{reference}`{when}: `{}`.", info.path);
            if info.is_consumed() {
                s.push_str(" It was delivered before: you may have acted on it since.");
            }
            s
        }
        PickKind::Recent => format!(
            "No handoff exists for this branch (`{reference}`). **The handoff below is a GUESS**: the most recent one of this project, for branch `{}` in `{}`, written {}, picked on recency and the timing of the `/clear` — confirm the branch and the tree before acting on it. It is at `{}`.",
            info.branch.as_deref().unwrap_or("?"),
            info.checkout.as_deref().unwrap_or("?"),
            info.mtime.map_or_else(
                || "at an unknown time".to_string(),
                |m| format!("{} ago", gap((now - m).max(0) as u64))
            ),
            info.path
        ),
    };
    if let Some(from) = &info.from {
        s.push_str(&teammate(from));
    }
    s
}

/// The frame around a handoff written on another machine (`from:`), as a sentence of the
/// injection ([`crate::store::authorship::teammate_frame`]).
pub(crate) fn teammate(from: &str) -> String {
    crate::store::authorship::teammate_frame(Some(from))
        .map(|f| format!(" It was {f}"))
        .unwrap_or_default()
}

/// The gate's verdict as a model can act on it: one line when every citation holds, else that
/// line and one unpadded line per citation that does not (its fragment, where the line went).
pub(crate) fn verdict_block(v: &GateVerdict) -> String {
    let b = &v.brief;
    let against = b
        .against
        .as_deref()
        .map_or_else(|| "this checkout".to_string(), |c| format!("`{c}`"));
    let mut s = match (v.status, b.checked) {
        (GateStatus::Ok, Some(0)) => "GATE: OK — `## Pointers` cites nothing to check.".to_string(),
        (GateStatus::Ok, Some(n)) => {
            format!("GATE: OK — {n} of {n} citations resolve against {against}.")
        }
        (GateStatus::Ok, None) => format!("GATE: OK — every citation resolves against {against}."),
        (GateStatus::Failed, checked) if !b.failing.is_empty() => {
            let of = checked.map(|n| format!(" of {n}")).unwrap_or_default();
            format!(
                "GATE: FAILED — {}{of} citations do not hold against {against}:",
                b.failing.len()
            )
        }
        (GateStatus::Failed, _) => format!("GATE: FAILED against {against}."),
        (GateStatus::Malformed, _) => "GATE: MALFORMED — the handoff breaks the format contract, so no citation was checked: treat every pointer as unverified.".to_string(),
        (GateStatus::NotRun | GateStatus::Unexpected, _) => v.line.clone(),
    };
    for line in b.failing.iter().take(MAX_FAILING) {
        s.push_str("\n- ");
        s.push_str(line);
    }
    if b.failing.len() > MAX_FAILING {
        s.push_str(&format!(
            "\n- … and {} more (`verify-handoff` lists them)",
            b.failing.len() - MAX_FAILING
        ));
    }
    if b.uncovered > 0 {
        s.push_str(&format!(
            "\n{} path:line citation(s) in the prose are not in `## Pointers`, so they were never checked.",
            b.uncovered
        ));
    }
    if !b.moves.is_empty() {
        s.push_str(&format!("\n{}", moves_line(&b.moves)));
    }
    s
}

/// The branch's named slots, one line each (name, title, progress, age), and the command that
/// reads one.
pub(crate) fn slots_block(
    slots: &[(String, HandoffInfo)],
    target: &crate::store::Target,
    now: i64,
) -> String {
    let mut text = format!(
        "Other handoffs of `{}`, in named slots:",
        target.facts.reference
    );
    for (name, info) in slots.iter().take(MAX_MOVES) {
        let title = crate::store::slot::read_head(std::path::Path::new(&info.path))
            .ok()
            .and_then(|h| {
                crate::document::title_of(&String::from_utf8_lossy(&h)).map(str::to_string)
            })
            .unwrap_or_default();
        let title: String = title.chars().take(80).collect();
        text.push_str(&format!(
            "\n- `{name}`: \"{title}\" ({}, {})",
            info.progress_shown(),
            crate::store::ago(info.mtime, now)
        ));
        if let Some(from) = &info.from {
            text.push_str(&format!(" —{}", teammate(from)));
        }
    }
    if slots.len() > MAX_MOVES {
        text.push_str(&format!(
            "\n- … and {} more (`handoff-store list`)",
            slots.len() - MAX_MOVES
        ));
    }
    text.push_str(&format!(
        "\nRead one only if the user asks for that thread: `{} read --slot <name> -C {}`.",
        crate::shell::self_command(),
        crate::shell::quote(&target.checkout())
    ));
    text
}

/// The failing citations whose text is on one other line now: where each went, in one line.
pub(crate) fn moves_line(moves: &[crate::report::fix::Move]) -> String {
    let mut shown: Vec<String> = moves
        .iter()
        .take(MAX_MOVES)
        .map(|m| format!("`{}:{}` → {}", m.path, m.from, m.target()))
        .collect();
    if moves.len() > MAX_MOVES {
        shown.push(format!("… and {} more", moves.len() - MAX_MOVES));
    }
    format!(
        "Moved, not gone (`handoff-store fix` rewrites them): {}.",
        shown.join(", ")
    )
}

/// The most moves named one by one.
const MAX_MOVES: usize = 10;

/// The most failing citations listed one by one.
const MAX_FAILING: usize = 20;

pub(crate) fn drift_block(drift: &[Drift]) -> Option<String> {
    (!drift.is_empty()).then(|| {
        let lines: Vec<String> = drift.iter().map(|d| format!("- {}", d.text)).collect();
        format!("Drift since it was written:\n{}", lines.join("\n"))
    })
}

/// The other handoffs of a GUESS, in one line each (at most five).
fn others_block(others: &[HandoffInfo], now: i64) -> String {
    let mut list = vec!["Other handoffs of this project, not picked:".to_string()];
    list.extend(others.iter().take(5).map(|o| {
        format!(
            "- `{}`, written {}: `{}`",
            o.branch.as_deref().unwrap_or("?"),
            o.mtime.map_or_else(
                || "at an unknown time".to_string(),
                |m| format!("{} ago", gap((now - m).max(0) as u64))
            ),
            o.path
        )
    }));
    if others.len() > 5 {
        list.push(format!(
            "- … and {} more (`handoff-store list`)",
            others.len() - 5
        ));
    }
    list.join("\n")
}

/// The offer at a fresh start (at most a few hundred characters): which handoff waits, its age
/// and verdict, and the command that reads it — the user decides whether that work resumes.
pub(crate) fn offer_text(d: &Delivery, reference: &str, checkout: &str, age: u64) -> String {
    let title: String = d
        .document
        .as_deref()
        .ok()
        .and_then(crate::document::title_of)
        .unwrap_or("untitled")
        .chars()
        .take(80)
        .collect();
    let b = &d.verdict.brief;
    let verdict = match (d.verdict.status, b.checked) {
        (GateStatus::Ok, Some(0)) => "gate OK, nothing cited".to_string(),
        (GateStatus::Ok, Some(n)) => format!("gate OK, {n} of {n} citations resolve"),
        (GateStatus::Failed, Some(n)) => {
            format!(
                "gate FAILED, {} of {n} citations do not hold",
                b.failing.len()
            )
        }
        (GateStatus::Ok, None) => "gate OK".to_string(),
        (GateStatus::Failed, None) => "gate FAILED".to_string(),
        (GateStatus::Malformed, _) => "gate MALFORMED".to_string(),
        (GateStatus::NotRun | GateStatus::Unexpected, _) => "not checked".to_string(),
    };
    let whose = crate::store::authorship::teammate_frame_short(d.info.from.as_deref())
        .map(|f| format!(" It is {f}"))
        .unwrap_or_default();
    format!(
        "# Handoff available (SessionStart, source: startup)\n\nA handoff for `{reference}` is waiting, written {} ago: \"{title}\" ({verdict}).{whose} If the user wants to pick that work up, run `{} read {}` (it prints the handoff and marks it read); otherwise leave it.",
        gap(age),
        self_command(),
        shell::quote(checkout)
    )
}

/// The one line a fresh start gets when this branch's handoff was read already (at most 200
/// characters): when it was read, the commits since, and the command that shows it again —
/// without the checkout when naming it would pass the budget (the session starts in it).
pub(crate) fn reminder_text(d: &Delivery, target: &Target, now: i64) -> String {
    use std::os::unix::fs::MetadataExt;
    // The consume rewrote the file (its mtime kept): its change time is when it was read.
    let read = crate::fs::metadata(&d.info.path)
        .ok()
        .map(|m| gap((now - m.ctime()).max(0) as u64));
    let since = d
        .drift
        .iter()
        .find(|x| x.kind == "commits_since")
        .and_then(|x| x.count)
        .map_or_else(String::new, |n| {
            format!(", {n} commit{} since", if n == 1 { "" } else { "s" })
        });
    let reference = &target.facts.reference;
    let when = read.map_or_else(|| "already".to_string(), |g| format!("{g} ago"));
    let line = |command: String| {
        format!("The handoff for `{reference}` was read {when}{since}; `{command}` shows it again.")
    };
    let with_checkout = line(format!(
        "{} read --no-consume {}",
        self_command(),
        shell::quote(&target.checkout())
    ));
    if with_checkout.chars().count() <= 200 {
        with_checkout
    } else {
        line(format!("{} read --no-consume", self_command()))
    }
}

/// The whole injection for a handoff: `head` (the title and the section that dates it), which
/// handoff, the verdict, the drift, the reading rules, then the document — cut to the client's
/// limit on whole lines when it does not fit.
#[allow(clippy::too_many_arguments)]
pub(crate) fn compose_document(
    head: &[String],
    dated: bool,
    info: &HandoffInfo,
    kind: PickKind,
    others: &[HandoffInfo],
    verdict: &GateVerdict,
    drift: &[Drift],
    document: &str,
    reference: &str,
    now: i64,
) -> String {
    // A handoff placed in the store by hand skipped the gate: what a person would not see is
    // shown escaped to the model too (docs/gate.md §2.3).
    let shown = crate::text::unhidden(document);
    let document: &str = &shown;
    let intro = intro(info, kind, reference, now, dated);
    let status = verdict_block(verdict);
    let drift_text = drift_block(drift);
    let mut parts: Vec<String> = head.to_vec();
    parts.push(intro.clone());
    parts.push(status.clone());
    parts.extend(drift_text.clone());
    if kind == PickKind::Recent && !others.is_empty() {
        parts.push(others_block(others, now));
    }
    parts.push(super::rules(kind).to_string());
    parts.push(format!("---\n{}", document.trim_end()));
    let full = parts.join("\n\n");
    let n = utf16_len(&full);
    if n <= INJECTION_LIMIT {
        return full;
    }
    super::truncate::reduce(
        head,
        &intro,
        &status,
        drift_text.as_deref(),
        document,
        verdict.document.as_deref(),
        n,
        super::rules(kind),
    )
}

/// The gate's verdict in a word or two, for the person (`gate OK`, `gate FAILED`).
pub(crate) fn verdict_word(v: &crate::store::verdict::GateVerdict) -> String {
    use crate::store::verdict::GateStatus;
    match (v.status, v.exit) {
        (GateStatus::Ok, _) => "gate OK".into(),
        (GateStatus::Failed, _) => "gate FAILED".into(),
        (GateStatus::Malformed, _) => "gate MALFORMED".into(),
        (GateStatus::Unexpected, Some(n)) => format!("gate error, exit {n}"),
        (GateStatus::NotRun | GateStatus::Unexpected, _) => "gate not run".into(),
    }
}

/// How long a text is, for the person: `812 chars`, `2.6k chars` — counted as the cap counts
/// them, in UTF-16 units (docs/hooks.md §1).
pub(crate) fn size_word(text: &str) -> String {
    let n = text.encode_utf16().count();
    if n < 1000 {
        format!("{n} chars")
    } else {
        format!("{:.1}k chars", n as f64 / 1000.0)
    }
}

/// After a compaction whose summary is known (docs/hooks.md §11): what the summary kept, the
/// items it dropped whole — never fewer than every dead end and trap it dropped —, and where the
/// whole handoff is; `None` when the handoff cannot be read.
pub(crate) fn dropped_text(d: &Delivery, summary: &str, target: &Target) -> Option<String> {
    let text = d.document.as_deref().ok()?;
    let doc = crate::document::Document::parse(text);
    let kept = crate::ops::audit::audit(&doc, summary).sentence();
    let dropped = crate::ops::audit::dropped_items(&doc, summary);
    let mut out = format!(
        "# Context reset (SessionStart, source: compact)\n\nThis session was just compacted, and {kept}.",
    );
    // A teammate's handoff keeps its frame, as every other delivery of it does.
    if let Some(frame) = crate::store::authorship::teammate_frame_short(d.info.from.as_deref()) {
        out.push_str(&format!(" The handoff is {frame}"));
    }
    if dropped.is_empty() {
        out.push_str(" Nothing of the handoff is missing from it.");
    } else {
        out.push_str(" What it dropped, from the handoff, is below, whole.");
    }
    out.push_str(&format!(
        " The whole handoff: `{}` ({}); `{} read --no-consume {}` shows it.\n",
        crate::text::visible(&d.info.path),
        verdict_word(&d.verdict),
        crate::shell::self_command(),
        crate::shell::quote(&target.checkout())
    ));
    // Within the client's limit: past it, one line says the rest is in the file.
    let room = super::truncate::INJECTION_LIMIT - 200;
    'sections: for (name, items) in dropped {
        let level = if name == "Next" { "##" } else { "###" };
        out.push_str(&format!("\n{level} {name}\n"));
        for item in items {
            let item = crate::text::visible(&item);
            if super::truncate::utf16_len(&out) + super::truncate::utf16_len(&item) > room {
                out.push_str(&format!(
                    "{} more of what it dropped is in the file.\n",
                    super::truncate::TRUNCATED
                ));
                break 'sections;
            }
            out.push_str(&item);
            out.push('\n');
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf16_counts_emoji_twice() {
        assert_eq!(utf16_len("😀"), 2);
        assert_eq!(utf16_len("é"), 1);
    }
}
