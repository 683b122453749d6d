//! Gemini CLI's compaction. Gemini CLI (0.61.0) fires PreCompress before every model call —
//! before it even checks whether a compression is due — and has no event after one, so the
//! writer cannot start at PreCompress the way Claude Code's and Codex's do: it would run on every
//! call, with nothing to say whether a compression followed. What Gemini does have: its session
//! file is append-only JSONL, and a compression restarts the chat on the same file, appending
//! `{"$set":{"sessionId":…}}` and then the new history as `{"$set":{"messages":[…]}}`, which
//! opens (after Gemini's session context) with the summary — a text written nowhere before. A
//! resume appends the same restart record, but its history opens with the first prompt, already
//! in the file (measured on 0.61.0: the ids of resumed messages do change, their texts do not);
//! a resume into a new session file starts with the restart, before any message. Everything
//! above the restart is the conversation as it was.
//!
//! So both PreCompress and AfterAgent run [`observe`]: look past the point where the file ended
//! at the previous call (the watch); a restart found there is the client's own record that the
//! compression happened, and the writer starts through `gemini -p` on a copy of the file cut at
//! that line, its run confirmed from the start. Then the watch moves to the file's end. A
//! compression Gemini refused (failed, or nothing to compress) appends no such record, so no
//! writer runs and the slot is untouched.

use std::io::{Read, Seek, SeekFrom};
use std::path::PathBuf;

use serde_json::{Map, Value};

use super::watch::{self, Watch};
use crate::hooks::input::string_field;
use crate::hooks::pre_compact::{Compacted, WriterSpec, run_with};
use crate::hooks::texts;

/// The record a compression's chat restart appends first (`updateMetadata({sessionId})`).
const RESTART: &[u8] = br#"{"$set":{"sessionId":"#;

/// The `gemini` program: `HANDOFF_GEMINI_BIN`, else `gemini` on PATH.
pub fn binary() -> Option<PathBuf> {
    super::program("HANDOFF_GEMINI_BIN", "gemini")
}

/// Where a compression's restart record begins in `file` past `watch`: a restart whose next
/// line sets a history that opens with a text the file did not hold before.
fn restart_since(file: &mut crate::fs::File, watch: Watch, now: Watch) -> Option<u64> {
    let mut restart: Option<u64> = None;
    let mut reader = file.try_clone().ok()?;
    watch::find_since(file, watch, now, |at, line| {
        if let Some(cut) = restart.take()
            && let Some(opening) = opening_text(line)
            && compacts(&mut reader, cut, &opening)
        {
            return Some(cut);
        }
        if line.starts_with(RESTART) && is_restart(line) {
            restart = Some(at);
        }
        None
    })
}

/// Whether a line is exactly a `$set` of the session id (and nothing else).
fn is_restart(line: &[u8]) -> bool {
    let Ok(Value::Object(record)) = serde_json::from_slice::<Value>(line) else {
        return false;
    };
    record.len() == 1
        && record
            .get("$set")
            .and_then(Value::as_object)
            .is_some_and(|set| set.len() == 1 && set.get("sessionId").is_some_and(Value::is_string))
}

/// The opening of the history a `{"$set":{"messages":[…]}}` record sets: the text of its first
/// message after Gemini's session context, as the file spells it (JSON-escaped). After a
/// compression that is the summary, written nowhere before; after a resume, the first prompt.
fn opening_text(line: &[u8]) -> Option<String> {
    let record: Value = serde_json::from_slice(line).ok()?;
    let messages = record.get("$set")?.get("messages")?.as_array()?;
    let text = |m: &Value| -> Option<String> {
        match m.get("content")? {
            Value::String(t) => Some(t.clone()),
            Value::Array(parts) => parts
                .iter()
                .find_map(|p| p.get("text")?.as_str().map(str::to_string)),
            _ => None,
        }
    };
    let first = messages
        .iter()
        .filter_map(text)
        .find(|t| !t.starts_with("<session_context>"))?;
    let quoted = serde_json::to_string(&first).ok()?;
    Some(quoted[1..quoted.len() - 1].to_string())
}

/// Whether a restart at `end` whose history opens with `opening` compacts this file's
/// conversation: the file holds a user message before it (a resume into a new file starts with
/// the restart — measured after a headless `/compress`), and the opening is a text it never held
/// (a summary; a resume opens with the first prompt). Read once, only at a restart; unreadable
/// counts as no.
fn compacts(file: &mut crate::fs::File, end: u64, opening: &str) -> bool {
    let mut text = Vec::new();
    if file.seek(SeekFrom::Start(0)).is_err() || file.take(end).read_to_end(&mut text).is_err() {
        return false;
    }
    let has = |needle: &[u8]| memchr::memmem::find(&text, needle).is_some();
    has(br#""type":"user""#) && !has(opening.as_bytes())
}

/// PreCompress and AfterAgent: start the writer if a compression happened since the previous
/// call, then move the watch to the file's end. Silent; never fails the session.
pub fn observe(input: &Map<String, Value>) {
    let (Some(session), Some(transcript)) = (
        string_field(input, "session_id"),
        string_field(input, "transcript_path"),
    ) else {
        return;
    };
    let Some(watch_file) = watch::path("gemini", session) else {
        return;
    };
    let Some((mut file, now)) = watch::open(transcript) else {
        return;
    };
    let before = watch::load(&watch_file);
    if before == Some(now) {
        return;
    }
    if let Some(cut) = before.and_then(|w| restart_since(&mut file, w, now)) {
        let spec = WriterSpec {
            agent: texts::Agent::Gemini,
            program: binary(),
            instructions: false,
            compacted: Some(Compacted {
                cut,
                by: "Gemini CLI's compression (its session file restarted)",
            }),
        };
        run_with(input, &mut std::io::sink(), &spec);
    }
    watch::save(&watch_file, now);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::path::Path;

    fn file_with(lines: &[&str]) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("session.jsonl");
        let mut f = crate::fs::File::create(&path).unwrap();
        for l in lines {
            writeln!(f, "{l}").unwrap();
        }
        (dir, path)
    }

    fn watch(path: &Path) -> Watch {
        Watch::of(&crate::fs::metadata(path).unwrap())
    }

    fn append(path: &Path, lines: &[&str]) {
        let mut f = crate::fs::OpenOptions::new()
            .append(true)
            .open(path)
            .unwrap();
        for l in lines {
            writeln!(f, "{l}").unwrap();
        }
    }

    /// The restart found past `w` in the file as it is now.
    fn found(path: &Path, w: Watch) -> Option<u64> {
        let mut file = crate::fs::File::open(path).unwrap();
        restart_since(&mut file, w, watch(path))
    }

    const RESTART_LINE: &str = r#"{"$set":{"sessionId":"s"}}"#;

    #[test]
    fn a_restart_past_the_watch_is_found_where_it_begins() {
        let head = r#"{"sessionId":"s","messages":[]}"#;
        let (_d, path) = file_with(&[head, r#"{"id":"1","type":"user","content":"x"}"#]);
        let w = watch(&path);
        append(&path, &[r#"{"$set":{"messages":[]}}"#]);
        let restart_at = crate::fs::metadata(&path).unwrap().len();
        append(
            &path,
            &[
                RESTART_LINE,
                r#"{"$set":{"messages":[{"id":"0","content":[{"text":"<session_context>\nnow"}]},{"id":"9","type":"user","content":[{"text":"<state_snapshot>a \"new\" summary</state_snapshot>"}]},{"id":"1","content":"x"}]}}"#,
            ],
        );
        assert_eq!(found(&path, w), Some(restart_at));
        // Past the restart there is nothing more to find; and a rewritten file tells nothing.
        let now = watch(&path);
        assert_eq!(found(&path, now), None);
        let other = Watch {
            ino: now.ino + 1,
            ..w
        };
        assert_eq!(found(&path, other), None);
    }

    #[test]
    fn a_resume_restarts_with_the_history_already_there() {
        let first = r#"{"id":"1","type":"user","content":[{"text":"fix \"it\"\nplease"}]}"#;
        let (_d, path) = file_with(&[r#"{"sessionId":"s"}"#, first]);
        let w = watch(&path);
        append(
            &path,
            &[
                RESTART_LINE,
                // Resumed: new ids, a session context of today, the same first prompt.
                r#"{"$set":{"messages":[{"id":"e","content":[{"text":"<session_context>\nlater"}]},{"id":"7","content":[{"text":"fix \"it\"\nplease"}]}]}}"#,
                r#"{"$set":{"lastUpdated":"t"}}"#,
                // A restart that is the last line so far, its history not written yet.
                RESTART_LINE,
            ],
        );
        assert_eq!(found(&path, w), None);
    }

    #[test]
    fn a_resume_into_a_new_file_starts_with_the_restart_and_is_no_compression() {
        let (_d, path) = file_with(&[r#"{"sessionId":"s","startTime":"t"}"#]);
        let w = watch(&path);
        // The resumed history opens with an earlier compression's summary, not in this file.
        append(
            &path,
            &[
                RESTART_LINE,
                r#"{"$set":{"messages":[{"id":"9","type":"user","content":[{"text":"<state_snapshot>old</state_snapshot>"}]}]}}"#,
            ],
        );
        assert_eq!(found(&path, w), None);
    }

    #[test]
    fn only_the_exact_restart_record_counts() {
        let (_d, path) = file_with(&[r#"{"sessionId":"s"}"#, r#"{"type":"user"}"#]);
        let w = watch(&path);
        // A $set with more in it, a message whose text holds the record, masking's history.
        append(
            &path,
            &[
                r#"{"$set":{"sessionId":"s","lastUpdated":"t"}}"#,
                r#"{"id":"3","content":"{\"$set\":{\"sessionId\":\"s\"}}"}"#,
                r#"{"$set":{"messages":[{"id":"n","content":"new"}]}}"#,
            ],
        );
        assert_eq!(found(&path, w), None);
    }
}
