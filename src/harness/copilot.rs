//! Copilot CLI's compaction. Its preCompact hook runs before a compaction and no hook runs after
//! one, but Copilot records how it ended in the session's own append-only events file (the
//! `transcriptPath` of every hook input): `session.compaction_complete` with `success` (measured
//! on 1.0.102: `true` with `outcome: applied`, `false` when the summary call failed). So
//! preCompact notes where the file ends and starts the background writer through Copilot's
//! headless mode, under the same supervisor as Claude Code's; agentStop and sessionEnd look past
//! that point, and a completion that succeeded confirms the run, whose handoff may then replace
//! the slot. A failed compaction confirms nothing: the slot stays as it was.

use std::path::PathBuf;

use serde_json::{Map, Value};

use super::Harness;
use super::watch::{self, Watch};
use crate::hooks::input::safe_session_id;
use crate::hooks::input::string_field;
use crate::hooks::pre_compact::{WriterSpec, run_with};
use crate::hooks::texts;
use crate::store::runs;

/// The `copilot` program: `HANDOFF_COPILOT_BIN`, else `copilot` on PATH.
pub fn binary() -> Option<PathBuf> {
    super::program("HANDOFF_COPILOT_BIN", "copilot")
}

/// A hook input in the Claude Code shape, its events file opened, and that file's watch now.
fn session(raw: &Map<String, Value>) -> Option<(Map<String, Value>, Watch, crate::fs::File)> {
    let input = Harness::Copilot.input(raw);
    let (file, now) = watch::open(string_field(&input, "transcript_path")?)?;
    Some((input, now, file))
}

/// preCompact: note where the events file ends, then start the writer.
pub fn pre_compact(raw: &Map<String, Value>) {
    let Some((input, now, _)) = session(raw) else {
        return;
    };
    let Some(watch_file) =
        string_field(&input, "session_id").and_then(|s| watch::path("copilot", s))
    else {
        return;
    };
    watch::save(&watch_file, now);
    let spec = WriterSpec {
        agent: texts::Agent::Copilot,
        program: binary(),
        instructions: false,
        compacted: None,
    };
    run_with(&input, &mut std::io::sink(), &spec);
}

/// Whether an events line records a compaction that succeeded.
fn succeeded(line: &[u8]) -> Option<bool> {
    memchr::memmem::find(line, b"\"session.compaction_complete\"")?;
    let event: Value = serde_json::from_slice(line).ok()?;
    if event.get("type")?.as_str()? != "session.compaction_complete" {
        return None;
    }
    Some(event.get("data")?.get("success")? == &Value::Bool(true))
}

/// The Copilot process running this hook, as `<pid>-<start time>` (a reused pid is another
/// process): the nearest ancestor that is not a shell. Linux `/proc` only; elsewhere none.
fn client() -> Option<String> {
    let stat = |pid: i64| -> Option<(String, i64, String)> {
        let text = crate::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        // `pid (comm) state ppid … starttime` — comm may hold spaces and parentheses.
        let (head, rest) = text.rsplit_once(')')?;
        let comm = head.split_once('(')?.1.to_string();
        let fields: Vec<&str> = rest.split_whitespace().collect();
        Some((
            comm,
            fields.get(1)?.parse().ok()?,
            fields.get(19)?.to_string(),
        ))
    };
    let mut pid = i64::from(std::os::unix::process::parent_id());
    for _ in 0..4 {
        let (comm, ppid, start) = stat(pid)?;
        if !matches!(comm.as_str(), "sh" | "bash" | "dash" | "zsh" | "env") {
            return Some(format!("{pid}-{start}"));
        }
        pid = ppid;
    }
    None
}

/// Where a Copilot process notes that a session of its own ended.
fn ended_note(client: &str) -> Option<PathBuf> {
    Some(
        crate::hooks::claims::state_dir()?
            .join("copilot")
            .join(format!("{client}.ended")),
    )
}

/// sessionEnd: note that this Copilot process ended a session. Its /clear (1.0.102, measured in
/// the TUI) ends the session with `reason: user_exit` and starts the next one, lazily, with
/// `source: new` and the next prompt as `initialPrompt` — the very shape of a fresh start.
fn note_ended() {
    let Some(note) = client().and_then(|c| ended_note(&c)) else {
        return;
    };
    if let Some(dir) = note.parent()
        && crate::store::slot::create_private_dir(dir).is_ok()
    {
        crate::hooks::claims::clean_old(dir, ".ended");
        let _ = crate::store::slot::replace(&note, b"", None, None);
    }
}

/// Whether the process running this sessionStart ended a session of its own within the last
/// ten minutes: then this `new` session is its /clear, not a start. The note is used up.
pub fn cleared_here() -> bool {
    let Some(note) = client().and_then(|c| ended_note(&c)) else {
        return false;
    };
    let fresh = crate::fs::metadata(&note)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.elapsed().ok())
        .is_some_and(|age| age.as_secs() <= crate::hooks::marker::FRESH_SECONDS as u64);
    let _ = crate::fs::remove_file(&note);
    fresh
}

/// agentStop / sessionEnd: if a compaction completed since preCompact, confirm the session's
/// run when it succeeded; either way the watch is done. sessionEnd (it has a `reason`) also
/// notes that this process ended a session.
pub fn after(raw: &Map<String, Value>) {
    if raw.contains_key("reason") {
        note_ended();
    }
    let Some((input, now, file)) = session(raw) else {
        return;
    };
    let Some(session_id) = string_field(&input, "session_id") else {
        return;
    };
    let Some(watch_file) = watch::path("copilot", session_id) else {
        return;
    };
    let Some(before) = watch::load(&watch_file) else {
        return;
    };
    let mut outcome = None;
    watch::find_since(&file, before, now, |at, line| {
        outcome = succeeded(line);
        outcome.map(|_| at)
    });
    let Some(success) = outcome else { return };
    let _ = crate::fs::remove_file(&watch_file);
    if !success {
        return;
    }
    let Some(store) = crate::hooks::input::store() else {
        return;
    };
    let by = "Copilot CLI's session.compaction_complete (success)";
    if let Some(run) = runs::confirm_session(&store, &safe_session_id(session_id), by) {
        crate::lifecycle::promoted(&run);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_compaction_complete_event_tells_and_success_decides() {
        let ok = br#"{"type":"session.compaction_complete","data":{"success":true,"outcome":"applied"}}"#;
        let failed =
            br#"{"type":"session.compaction_complete","data":{"success":false,"error":"x"}}"#;
        let quoted =
            br#"{"type":"user.message","data":{"content":"\"session.compaction_complete\""}}"#;
        assert_eq!(succeeded(ok), Some(true));
        assert_eq!(succeeded(failed), Some(false));
        assert_eq!(succeeded(quoted), None);
        assert_eq!(succeeded(b"{\"type\":\"session.compaction_start\"}"), None);
    }
}
