//! The `/clear` marker (docs/hooks.md §2.3, §4): one type, written by SessionEnd and read by
//! SessionStart. Reading is lenient as the contract asks — a field of the wrong JSON type counts
//! as missing — while an unusable or stale file is deleted.

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use crate::env::home;
use crate::store::{Target, path_bytes, slot, slugify};
use crate::text::hex_md5;

/// How old a marker may be and still turn `startup` into `clear`, and corroborate a guess.
pub(crate) const FRESH_SECONDS: i64 = 600;

/// Which handoff existed when the session was cleared.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct MarkerHandoff {
    pub(crate) present: bool,
    pub(crate) path: String,
    pub(crate) mtime: Option<i64>,
    pub(crate) pick: Option<&'static str>,
}

/// What a `/clear` left behind for the next session.
#[derive(Debug, Clone, Default, Serialize)]
pub(crate) struct Marker {
    pub(crate) ended_at: Option<String>,
    pub(crate) ended_at_epoch: Option<i64>,
    pub(crate) reason: Option<String>,
    pub(crate) session_id: Option<String>,
    pub(crate) transcript_path: Option<String>,
    pub(crate) repo: Option<String>,
    pub(crate) main_worktree: Option<String>,
    pub(crate) branch: Option<String>,
    pub(crate) resident_tokens: Option<i64>,
    pub(crate) handoff: Option<MarkerHandoff>,
    pub(crate) write_attempted: bool,
}

/// The `/clear` marker of a target: `<dir>/<md5(main)>-<branch slug>.json`.
pub(crate) fn marker_path(target: &Target) -> Option<PathBuf> {
    let dir = match crate::env::settings().last_clear_dir.clone() {
        Some(d) => PathBuf::from(d),
        None => home()?.join(".claude/state/last-clear"),
    };
    let hash = hex_md5(&path_bytes(&target.facts.main));
    let slug = slugify(target.facts.reference.replace('/', "-").as_bytes());
    Some(dir.join(format!("{hash}-{slug}.json")))
}

fn string(m: &Value, key: &str) -> Option<String> {
    m.get(key).and_then(Value::as_str).map(str::to_string)
}

impl Marker {
    /// Read the marker at `path`: a regular file of at most 64 KiB holding a JSON object. An
    /// unusable one, or one older than a day, is deleted and ignored.
    pub(crate) fn read(path: &Path, now: i64) -> Option<Marker> {
        let meta = crate::fs::symlink_metadata(path).ok()?;
        let parsed = (meta.is_file() && meta.len() <= 64 * 1024)
            .then(|| crate::fs::read(path).ok())
            .flatten()
            .and_then(|b| match serde_json::from_slice(&b) {
                Ok(m @ Value::Object(_)) => Some(m),
                _ => None,
            });
        let Some(m) = parsed else {
            let _ = crate::fs::remove_file(path);
            return None;
        };
        let marker = Marker {
            ended_at: string(&m, "ended_at"),
            ended_at_epoch: m.get("ended_at_epoch").and_then(Value::as_i64),
            reason: string(&m, "reason"),
            session_id: string(&m, "session_id"),
            transcript_path: string(&m, "transcript_path"),
            repo: string(&m, "repo"),
            main_worktree: string(&m, "main_worktree"),
            branch: string(&m, "branch"),
            resident_tokens: m.get("resident_tokens").and_then(Value::as_i64),
            handoff: None,
            write_attempted: m
                .get("write_attempted")
                .and_then(Value::as_bool)
                .unwrap_or(false),
        };
        if marker.ended_at_epoch.is_some_and(|e| e < now - 86_400) {
            let _ = crate::fs::remove_file(path);
            return None;
        }
        Some(marker)
    }

    /// Write it atomically to `path` (its directory created private); failures are silent, as
    /// a hook's must be.
    pub(crate) fn write(&self, path: &Path) {
        let Ok(json) = serde_json::to_vec(self) else {
            return;
        };
        let Some(dir) = path.parent() else { return };
        if slot::create_private_dir(dir).is_err() {
            return;
        }
        let _ = crate::durable::write(path, &json, None);
    }
}
