//! `hook session-start` (hooks.md §2): after `/clear` or a compaction, re-inject the handoff
//! with its verdict as `additionalContext` — never more than 9,500 UTF-16 units, so Claude Code
//! never swaps it for a preview. Placeholders are reported, never shown; only an exact, unread
//! pick is marked consumed, after the output was delivered.

use std::io::Write;
use std::path::Path;
use std::time::Duration;

use serde_json::{Map, Value, json};

use super::{
    claim, dedup_lock, safe_session_id, self_command, shell_quote, string_field,
    target, texts,
};
use super::marker::{Marker, marker_path};
use crate::document::Document;
use crate::document::envelope::store_envelope;
use crate::store::drift::{self, Drift};
use crate::store::runs::{self, Run, RunState};
use crate::store::slot::{self, Flip};
use crate::store::verdict::{self, Verdict};
use crate::store::{
    HandoffInfo, PickKind, PlaceholderState, Target, days_ago, env_u64, epoch, gap, now,
    placeholder_state,
};

/// The most `additionalContext` may hold, in UTF-16 code units.
pub const CAP: usize = 9_500;
/// How old a marker may be and still turn `startup` into `clear`, and corroborate a guess.
const FRESH: i64 = 600;

const RULE_DEMOTE: &str = "**A citation verdict can only ever demote the cheap half.** MISSING or CHANGED means a pointer rotted: re-derive that pointer, and treat any claim that cites the same path:line as suspect until you have. It says nothing about Decisions, Dead ends or Traps — a moved line does not un-decide a decision, so do not reopen them because of a red verdict.";
const RULE_EAGER: &str = "**Do not re-derive eagerly.** Do not open every pointer to get oriented; open a pointer when the step you are on needs it, rotted ones included.";
const RULE_NEXT: &str = "Then start the first `## Next` item that is **not** blocked on a task that has yet to report — not simply item 1.";
const SHORT_RULES: &str = "**A citation verdict can only ever demote the cheap half.** **Do not re-derive eagerly.** Then start the first `## Next` item that is **not** blocked on a task that has yet to report.";

/// How long a claim on a SessionStart delivery holds off a parallel firing of the same event
/// (`HANDOFF_CLAIM_WINDOW_SECONDS`, default 30; 0 turns the hold-off off).
const CLAIM_WINDOW: u64 = 30;

/// The sources a SessionStart claim is named after (anything else counts as `other`).
pub const SOURCES: [&str; 5] = ["startup", "resume", "clear", "compact", "other"];

/// The claim name of a SessionStart firing with `source`.
pub fn claim_name(source: Option<&str>) -> String {
    let s = source.filter(|s| SOURCES.contains(s)).unwrap_or("other");
    format!("session-start-{s}")
}

/// What the body of the injection is about.
enum Subject {
    Nothing,
    /// A background write for the exact slot is under way (the slot is untouched).
    Background {
        run: Run,
        path: String,
    },
    Placeholder {
        info: HandoffInfo,
        state: PlaceholderState,
        transcript: Option<(std::path::PathBuf, std::time::SystemTime)>,
    },
    Document {
        info: HandoffInfo,
        kind: PickKind,
        others: Vec<HandoffInfo>,
    },
}

/// Run the hook on parsed stdin, writing at most one JSON line to `out`.
pub fn run(input: &Map<String, Value>, out: &mut dyn Write) {
    // Claimed first, whatever the source: a parallel firing (plugin and manual hooks both
    // installed) stays silent, and the UserPromptSubmit fallback knows SessionStart ran.
    let source = string_field(input, "source");
    let window = env_u64("HANDOFF_CLAIM_WINDOW_SECONDS", CLAIM_WINDOW);
    if let Some(session) = string_field(input, "session_id")
        && !claim(
            &safe_session_id(session),
            &claim_name(source),
            Duration::from_secs(window),
        )
        && window > 0
    {
        return;
    }
    if !matches!(source, Some("compact" | "clear" | "startup")) {
        return;
    }
    deliver(input, source, "SessionStart", out);
}

/// Compose and emit the injection for `source` as event `event`'s additionalContext.
pub fn deliver(input: &Map<String, Value>, source: Option<&str>, event: &str, out: &mut dyn Write) {
    let Some(target) = target(input) else { return };
    let now = now();
    let marker_file = marker_path(&target);
    let marker = match source {
        Some("compact") => None,
        _ => marker_file.as_deref().and_then(|p| Marker::read(p, now)),
    };
    let title_source = match source {
        Some("startup") => {
            if marker
                .as_ref()
                .and_then(|m| m.ended_at_epoch)
                .is_none_or(|e| e < now - FRESH)
            {
                return;
            }
            "startup, handled as clear"
        }
        Some("compact") => "compact",
        _ if event != "SessionStart" => "SessionStart did not run, handled as clear",
        _ => "clear",
    };
    let compact = title_source == "compact";
    let store = super::store();
    if compact && let (Some(store), Some(session)) = (&store, string_field(input, "session_id")) {
        // SessionStart(compact) is the client's word that the compaction happened.
        runs::confirm_session(store, &safe_session_id(session), "SessionStart(compact)");
    }
    let background = store
        .as_ref()
        .and_then(|s| runs::latest_for(s, &target.name).map(|r| (s.path_of(&target.name), r)));
    let mut background_note = None;
    if let Some((_, run)) = &background {
        background_note = texts::background_note(
            &run.state(now),
            run.age(now),
            &format!(
                "{} restore {}",
                self_command(),
                shell_quote(&target.checkout())
            ),
        );
    }

    let picked = store
        .as_ref()
        .and_then(|s| s.pick(Some(&target.name)).ok().flatten());
    let subject = match picked {
        _ if background
            .as_ref()
            .is_some_and(|(_, r)| r.state(now) == RunState::Writing) =>
        {
            let Some((path, run)) = background else {
                return;
            };
            Subject::Background {
                run,
                path: path.to_string_lossy().into_owned(),
            }
        }
        Some((info, PickKind::Exact, _)) if info.is_placeholder() => {
            let (state, transcript) = placeholder_state(&info, now);
            Subject::Placeholder {
                info,
                state,
                transcript,
            }
        }
        Some((info, PickKind::Exact, others)) => Subject::Document {
            info,
            kind: PickKind::Exact,
            others,
        },
        Some((info, PickKind::Recent, others)) if !compact => {
            let corroborated = marker
                .as_ref()
                .and_then(|m| m.ended_at_epoch)
                .zip(info.mtime)
                .is_some_and(|(e, m)| (e - m).max(0) <= FRESH);
            if corroborated {
                Subject::Document {
                    info,
                    kind: PickKind::Recent,
                    others,
                }
            } else {
                Subject::Nothing
            }
        }
        _ => Subject::Nothing,
    };
    let lock_exists = string_field(input, "session_id")
        .and_then(|s| dedup_lock(&safe_session_id(s)))
        .is_some_and(|p| p.is_file());
    let nothing_to_say = matches!(subject, Subject::Nothing)
        && marker.is_none()
        && background_note.is_none()
        && !(compact && lock_exists);
    if nothing_to_say {
        return;
    }

    let reference = target.facts.reference.as_str();
    let title = format!("# Context reset ({event}, source: {title_source})");
    let mut head = vec![title.clone()];
    if compact {
        head.push(compact_section(&subject, lock_exists, reference, now));
    } else if let Some(m) = &marker {
        head.push(cleared_section(m, &subject, reference));
    }
    if let Some(note) = background_note {
        head.push(format!("**Background write:** {note}"));
    }

    let (text, shown) = match &subject {
        Subject::Nothing => (head.join("\n\n"), None),
        Subject::Background { run, path } => {
            head.push(background_section(run, path, &target, now));
            (head.join("\n\n"), None)
        }
        Subject::Placeholder {
            info,
            state,
            transcript,
        } => {
            let body = placeholder_section(info, *state, transcript.as_ref(), &target, now);
            head.push(body);
            (head.join("\n\n"), None)
        }
        Subject::Document { info, kind, others } => {
            let path = Path::new(&info.path);
            let meta = std::fs::symlink_metadata(path).ok();
            let version = meta.as_ref().map(|m| (m.modified().ok(), m.len()));
            let (document, verdict) = match slot::read_capped(path) {
                Ok(bytes) => (
                    String::from_utf8_lossy(&bytes).into_owned(),
                    verdict::gate_stored(path, &bytes, info, Some(&target.facts.checkout)),
                ),
                Err(e) => (
                    format!("(not loaded: {e})"),
                    verdict::Verdict::not_run(format!("the stored handoff was not loaded ({e})")),
                ),
            };
            let drift = drift::signals(info, Some(&target.facts), now);
            let text = compose_document(
                &head, info, *kind, others, &verdict, &drift, &document, reference, now,
            );
            (text, Some((info.clone(), *kind, version)))
        }
    };

    let payload =
        json!({"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}});
    let Ok(line) = serde_json::to_string(&payload) else {
        return;
    };
    if writeln!(out, "{line}").and_then(|()| out.flush()).is_err() {
        return;
    }

    if let Some((info, PickKind::Exact, Some(version))) = shown
        && matches!(info.progress.as_deref(), None | Some("complete"))
        && let Some(store) = super::store()
        && let Ok(_lock) = slot::lock(&store, &info.name, Duration::from_secs(2))
    {
        let _: Result<Flip, _> =
            slot::flip_progress(Path::new(&info.path), "consumed", Some(version));
    }
    if marker.is_some()
        && let Some(p) = marker_file
    {
        let _ = std::fs::remove_file(p);
    }
}

fn compact_section(subject: &Subject, lock: bool, reference: &str, now: i64) -> String {
    let w = match (lock, subject) {
        (false, _) => "No automatic write was attempted for this session before this compaction — the pre-compact hook did not run or declined, so nothing wrote down what the summary may have dropped.".to_string(),
        (true, Subject::Document { info, .. }) => format!(
            "An automatic write was attempted for this session. The handoff below was written {} ago — check that its Next matches what you were last doing.",
            gap(info.mtime.map_or(0, |m| (now - m).max(0) as u64))
        ),
        (true, Subject::Placeholder { .. } | Subject::Background { .. }) => "An automatic write was attempted for this session; see below for its status.".to_string(),
        (true, Subject::Nothing) => "An automatic write was attempted for this session, but no handoff and no in-progress write are visible for this branch — the attempt may have failed silently. Run `/handoff` yourself if you need one.".to_string(),
    };
    let mut s = format!("## This session was just compacted\n{w}");
    if matches!(subject, Subject::Nothing) {
        s.push_str(&format!("\n**No handoff exists for `{reference}`.**"));
    }
    s.push_str("\n---");
    s
}

fn cleared_section(m: &Marker, subject: &Subject, reference: &str) -> String {
    let mut s = format!(
        "## The session you just cleared\nIt ended at {} by `/clear`",
        m.ended_at.as_deref().unwrap_or("an unrecorded time")
    );
    if let Some(r) = m.resident_tokens.filter(|r| *r >= 0) {
        s.push_str(&format!(", with **{}k of resident context**", r / 1000));
    }
    s.push_str(".\n");
    s.push_str(if m.write_attempted {
        "An automatic write WAS attempted for that session before the `/clear` — the handoff below should be its result; check its age."
    } else {
        "No automatic write was attempted for that session — nothing wrote a handoff for it automatically."
    });
    s.push('\n');
    let coverage = match subject {
        Subject::Placeholder { .. } | Subject::Background { .. } => {
            format!("The handoff for `{reference}` is not finished; see below.")
        }
        Subject::Nothing => {
            format!("**No handoff exists for `{reference}`, so that work is undocumented.**")
        }
        Subject::Document { info, .. } => match (m.ended_at_epoch, info.mtime) {
            (Some(e), Some(mt)) => {
                let g = (e - mt).max(0) as u64;
                if g <= FRESH as u64 {
                    format!(
                        "The handoff below was written {} before that clear, so it very likely does cover that session.",
                        gap(g)
                    )
                } else {
                    format!(
                        "**The handoff below predates that clear by {}.** It describes earlier work; anything the cleared session did after it is not in it.",
                        gap(g)
                    )
                }
            }
            _ => format!(
                "A handoff exists for `{}`, but there is not enough recorded to tell whether it covers the cleared session. Treat its coverage as unknown.",
                info.branch.as_deref().unwrap_or("?")
            ),
        },
    };
    s.push_str(&coverage);
    if let Some(t) = &m.transcript_path
        && crate::env::expand_home(t).is_file()
    {
        s.push_str(&format!(
            "\n**The cleared session's transcript survives** at `{t}`. Read it ONLY if the work turns out to matter and the handoff does not cover it — it is long, and reading it is the most expensive way to recover anything."
        ));
    }
    s.push_str("\n---");
    s
}

fn placeholder_section(
    info: &HandoffInfo,
    state: PlaceholderState,
    transcript: Option<&(std::path::PathBuf, std::time::SystemTime)>,
    target: &Target,
    now: i64,
) -> String {
    let timeout = env_u64("CTX_FORK_TIMEOUT_SECONDS", 600);
    let window = env_u64("CTX_FORK_LIVENESS_WINDOW_SECONDS", 90);
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
            ". Treat it as abandoned: no handoff is coming for `{reference}`. Carry on without one, and write a new handoff with `/handoff` once you know where you are. The previous handoff for this branch, if there was one, is in history: `{} restore {}` brings it back.\n---",
            self_command(),
            shell_quote(&here)
        ));
        return s;
    }
    let when = age.map_or_else(
        || "at an unknown time (mtime unreadable)".to_string(),
        |a| format!("{} ago", gap(a)),
    );
    let remaining = match (state, age) {
        (PlaceholderState::Slow, _) => window,
        (_, None) => timeout,
        (_, Some(a)) => timeout.saturating_sub(a).max(10),
    };
    let wait = (remaining + window).min(570);
    let millis = (wait + 30) * 1000;
    let mut s = format!(
        "## A fresh handoff is being authored — wait for it before doing anything else\nA background writer started on the handoff for `{reference}` (checkout `{here}`) {when}; until it finishes, `{}` is only a placeholder that says `progress: writing`.",
        info.path
    );
    if state == PlaceholderState::Slow
        && let Some(g) = &transcript_gap
    {
        s.push_str(&format!(
            "\nThe writer is past its nominal budget of {timeout} seconds, but its transcript is still advancing (last change {g} ago), so it is still working."
        ));
    }
    if let Some((p, _)) = transcript {
        s.push_str(&format!("\nIts transcript is `{}`.", p.display()));
    }
    s.push_str(&format!(
        "\nYour first tool call must be this Bash command, with the Bash tool's `timeout` set to at least {millis} ms:\n\n    {} read {} --wait {wait}\n\nIt prints the handoff with its gate verdict as soon as the write completes; then act on it as its output says. If it prints PENDING, run the same command again. If it prints ABANDONED, carry on without a handoff and write one with `/handoff` when you can.\n---",
        self_command(),
        shell_quote(&here)
    ));
    s
}

/// Section C for a background write recorded in the run directory: the slot still holds the
/// previous handoff (or nothing), so the model waits for the new one through `read --wait`.
fn background_section(run: &Run, path: &str, target: &Target, now: i64) -> String {
    let timeout = run.job.timeout;
    let window = env_u64("CTX_FORK_LIVENESS_WINDOW_SECONDS", 90);
    let age = run.age(now);
    let wait = (timeout.saturating_sub(age).max(10) + window).min(570);
    let millis = (wait + 30) * 1000;
    let here = target.checkout();
    let reference = &target.facts.reference;
    let slot_now = if Path::new(path).is_file() {
        "still holds the previous handoff"
    } else {
        "does not exist yet"
    };
    format!(
        "## A fresh handoff is being authored — wait for it before doing anything else\nA background writer started on the handoff for `{reference}` (checkout `{here}`) {} ago; until it finishes, `{path}` {slot_now}.\nYour first tool call must be this Bash command, with the Bash tool's `timeout` set to at least {millis} ms:\n\n    {} read {} --wait {wait}\n\nIt prints the handoff with its gate verdict as soon as the write completes; then act on it as its output says. If it prints PENDING, run the same command again. If it prints FAILED, carry on with what it shows and write a new handoff with `/handoff` when you can.\n---",
        gap(age),
        self_command(),
        shell_quote(&here)
    )
}

fn intro(info: &HandoffInfo, kind: PickKind, reference: &str, now: i64) -> String {
    match kind {
        PickKind::Exact => {
            let mut s = format!(
                "A handoff for the current branch (`{reference}`) was found at `{}`, last written {}, and is reproduced in full below.",
                info.path,
                days_ago(info.mtime, now)
            );
            if info.progress.as_deref() == Some("consumed") {
                s.push_str(" It was already delivered at an earlier reset (`progress: consumed`), so you may have acted on it since.");
            }
            s
        }
        PickKind::Recent => format!(
            "No handoff exists for this session's own branch (`{reference}`). **The most recent one in the store was picked instead** — for branch `{}`, describing the tree at `{}`, last written {}, at `{}`. That is a GUESS, made on recency alone and corroborated only by the timing of the `/clear`: confirm the branch and the tree before acting on anything below.",
            info.branch.as_deref().unwrap_or("?"),
            info.checkout.as_deref().unwrap_or("?"),
            days_ago(info.mtime, now),
            info.path
        ),
    }
}

fn drift_block(drift: &[Drift]) -> Option<String> {
    (!drift.is_empty()).then(|| {
        let lines: Vec<String> = drift
            .iter()
            .map(|d| format!("DRIFT    {}", d.text))
            .collect();
        format!(
            "Drift since it was written:\n```\n{}\n```",
            lines.join("\n")
        )
    })
}

/// A fence of backticks longer than any run inside `text` (at least 3).
fn fence_for(text: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    "`".repeat((longest + 1).max(3))
}

fn utf16_len(s: &str) -> usize {
    s.encode_utf16().count()
}

#[allow(clippy::too_many_arguments)]
fn compose_document(
    head: &[String],
    info: &HandoffInfo,
    kind: PickKind,
    others: &[HandoffInfo],
    verdict: &Verdict,
    drift: &[Drift],
    document: &str,
    reference: &str,
    now: i64,
) -> String {
    let intro = intro(info, kind, reference, now);
    let drift_text = drift_block(drift);
    let mut parts: Vec<String> = head.to_vec();
    parts.push(intro.clone());
    parts.push(verdict.line.clone());
    parts.extend(drift_text.clone());
    if kind == PickKind::Recent {
        let mut list = vec!["Other handoffs in the store, not picked:".to_string()];
        list.extend(others.iter().take(10).map(|o| {
            format!(
                "- `{}` in `{}` — {} — `{}`",
                o.branch.as_deref().unwrap_or("?"),
                o.checkout.as_deref().unwrap_or("?"),
                days_ago(o.mtime, now),
                o.path
            )
        }));
        if others.len() > 10 {
            list.push(format!(
                "- … and {} more (run `handoff-store list`)",
                others.len() - 10
            ));
        }
        parts.push(list.join("\n"));
    }
    parts.extend([RULE_DEMOTE, RULE_EAGER, RULE_NEXT].map(str::to_string));
    if verdict.report_text.is_some() {
        let report = verdict.reader_report.join("\n");
        let fence = fence_for(&report);
        parts.push(format!("---\n## Gate output\n{fence}\n{report}\n{fence}"));
    }
    parts.push(format!("---\n## The handoff\n{document}"));
    let full = parts.join("\n\n");
    let n = utf16_len(&full);
    if n <= CAP {
        return full;
    }
    reduce(
        head,
        &intro,
        &verdict.line,
        drift_text.as_deref(),
        document,
        &info.path,
        n,
    )
}

/// The section of `doc` under the level-2 heading `name`, up to the next level-1/2 heading.
fn section_lines(doc: &Document, name: &str) -> Vec<String> {
    let Some(h) = doc.headings_named(2, name).next() else {
        return Vec::new();
    };
    let end = doc
        .headings
        .iter()
        .find(|o| o.index > h.index && o.level <= 2)
        .map_or(doc.lines.len(), |o| o.index);
    doc.lines[h.index..end].to_vec()
}

fn cut_line(k: usize) -> String {
    format!("[… cut: {k} more line(s) of this section are in the file]")
}

/// The reduced composition (hooks.md §2.7).
fn reduce(
    head: &[String],
    intro: &str,
    status: &str,
    drift: Option<&str>,
    document: &str,
    path: &str,
    n: usize,
) -> String {
    let truncation = format!(
        "**TRUNCATED:** this handoff and its gate output are too long to show in full here ({n} characters; the limit is 9,500). Only the verdict, ## Do not re-derive and ## Next are reproduced below. Read the whole file before acting: `{path}`"
    );
    let clean = document.replace('\r', "");
    let doc = Document::parse(&clean);
    let envelope: Vec<String> = store_envelope(&clean)
        .iter()
        .map(|l| l.to_string())
        .collect();
    let dnr = section_lines(&doc, "Do not re-derive");
    let next = section_lines(&doc, "Next");
    let mut top: Vec<String> = head.to_vec();
    top.push(intro.to_string());
    top.push(status.to_string());
    top.extend(drift.map(str::to_string));
    top.push(truncation.clone());
    top.push(SHORT_RULES.to_string());
    let build = |dnr: &[String], next: &[String]| -> String {
        let mut excerpt = vec!["---".to_string(), "## The handoff (excerpt)".to_string()];
        excerpt.extend(envelope.iter().cloned());
        excerpt.extend(dnr.iter().cloned());
        excerpt.extend(next.iter().cloned());
        let mut parts = top.clone();
        parts.push(excerpt.join("\n"));
        parts.join("\n\n")
    };
    let fits = |s: &String| utf16_len(s) <= CAP;
    let whole = build(&dnr, &next);
    if fits(&whole) {
        return whole;
    }
    for keep in (0..dnr.len()).rev() {
        let mut cut = dnr[..keep].to_vec();
        cut.push(cut_line(dnr.len() - keep));
        let s = build(&cut, &next);
        if fits(&s) {
            return s;
        }
    }
    let dnr_gone = vec![cut_line(dnr.len())];
    for keep in (0..next.len()).rev() {
        let mut cut = next[..keep].to_vec();
        cut.push(cut_line(next.len() - keep));
        let s = build(&dnr_gone, &cut);
        if fits(&s) {
            return s;
        }
    }
    // Last resort: title, intro, status and drift, cut at a line boundary so that the
    // truncation line fits as the final line.
    let mut lines: Vec<String> = Vec::new();
    for part in [
        head.first().cloned(),
        Some(intro.to_string()),
        Some(status.to_string()),
        drift.map(str::to_string),
    ]
    .into_iter()
    .flatten()
    {
        lines.extend(part.lines().map(str::to_string));
        lines.push(String::new());
    }
    let budget = CAP.saturating_sub(utf16_len(&truncation) + 1);
    let mut used = 0;
    let mut kept = Vec::new();
    for l in lines {
        let cost = utf16_len(&l) + 1;
        if used + cost > budget {
            break;
        }
        used += cost;
        kept.push(l);
    }
    kept.push(truncation);
    kept.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fences_outgrow_the_backticks_inside() {
        assert_eq!(fence_for("plain"), "```");
        assert_eq!(fence_for("a ```` b"), "`````");
    }

    #[test]
    fn utf16_counts_emoji_twice() {
        assert_eq!(utf16_len("😀"), 2);
        assert_eq!(utf16_len("é"), 1);
    }
}
