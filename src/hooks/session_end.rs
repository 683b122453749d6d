//! `hook session-end` (docs/hooks.md §4): on `/clear`, record what was lost — when, how much
//! context, which transcript, which handoff existed — in an atomically written marker that the
//! next SessionStart reads to say whether the handoff covers the cleared session.

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use serde_json::Value;

use super::claims::dedup_lock;
use super::input::HookInput;
use crate::ops::marker::{Marker, MarkerHandoff, marker_path};
use crate::store::{PickKind, iso, now};

/// How much of the transcript's end is searched for the last usage record.
const TAIL_BYTES: u64 = 8 * 1024 * 1024;

/// Resident context at the end of the transcript: input + cache creation + cache read of the
/// last record with `message.usage`.
pub(crate) fn resident_tokens(transcript: &Path) -> Option<u64> {
    let meta = crate::fs::metadata(transcript).ok()?;
    if !meta.is_file() {
        return None;
    }
    let mut file = crate::fs::File::open(transcript).ok()?;
    let start = meta.len().saturating_sub(TAIL_BYTES);
    file.seek(SeekFrom::Start(start)).ok()?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes).ok()?;
    for line in bytes.split(|&b| b == b'\n').rev() {
        let Ok(Value::Object(record)) = serde_json::from_slice::<Value>(line) else {
            continue;
        };
        let Some(Value::Object(usage)) = record.get("message").and_then(|m| m.get("usage")) else {
            continue;
        };
        let mut total: u64 = 0;
        for key in [
            "input_tokens",
            "cache_creation_input_tokens",
            "cache_read_input_tokens",
        ] {
            match usage.get(key) {
                None => {}
                Some(v) => total = total.checked_add(v.as_u64()?)?,
            }
        }
        return Some(total);
    }
    None
}

/// Run the hook.
pub(crate) fn run(input: &HookInput) {
    if input.reason.as_deref() != Some("clear") {
        return;
    }
    let Some(target) = input.target() else { return };
    let store = super::input::store();
    // Where nothing acts, a `/clear` is not ours to remember.
    if !crate::store::usage::Use::of(store.as_ref(), &target).acts() {
        return;
    }
    let Some(marker) = marker_path(&target) else {
        return;
    };
    let session_id = input.session.as_ref().map(|s| s.raw());
    let transcript = input.transcript.as_deref();
    let slot = store
        .as_ref()
        .map(|s| s.path_of(&target.name).to_string_lossy().into_owned())
        .unwrap_or_default();
    let picked = store
        .as_ref()
        .and_then(|s| s.pick(Some(&target)).ok().flatten());
    let handoff = match &picked {
        Some((info, kind, _)) => MarkerHandoff {
            present: true,
            path: info.path.clone(),
            mtime: info.mtime,
            pick: Some(if *kind == PickKind::Exact {
                "exact"
            } else {
                "recent"
            }),
        },
        None => MarkerHandoff {
            present: false,
            path: slot,
            mtime: None,
            pick: None,
        },
    };
    let now = now();
    let record = Marker {
        ended_at: Some(iso(now)),
        ended_at_epoch: Some(now),
        reason: Some("clear".into()),
        session_id: session_id.map(str::to_string),
        transcript_path: transcript.map(str::to_string),
        repo: Some(target.checkout()),
        main_worktree: Some(target.main()),
        branch: Some(target.facts.reference.clone()),
        resident_tokens: transcript
            .and_then(|t| resident_tokens(&crate::env::expand_home(t)))
            .map(|t| t as i64),
        handoff: Some(handoff),
        write_attempted: input
            .sid()
            .and_then(dedup_lock)
            .is_some_and(|p| p.is_file()),
    };
    record.write(&marker);
}
