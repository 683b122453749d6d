//! OpenCode's sessions, as `impact` reads them (docs/store.md §9.20). OpenCode (1.18.33,
//! measured) keeps every session in one SQLite database, `$XDG_DATA_HOME/opencode/opencode.db`
//! (else `~/.local/share/opencode/`), in WAL mode, written while it runs. A session's record is
//! its `part` rows, each a JSON `data` column: a `tool` part (`tool`, `callID`,
//! `state.input`, `state.time.start` in milliseconds), a `step-finish` part (one model
//! request: `tokens.total`, cache included). The reset log names the database as the
//! transcript of a reset OpenCode's plugin reported; the session id picks the session's rows.
//!
//! The database is opened read-only and never written: no journal, no lock is left behind
//! (SQLite's shared-memory index beside it is OpenCode's own). A database OpenCode holds busy is
//! waited for up to two seconds, then counted unreadable.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};
use serde_json::{Value, json};

use super::Client;
use crate::ops::impact::Line;

/// Where OpenCode keeps its sessions, if it is there.
pub(super) fn database() -> Option<PathBuf> {
    let data = match crate::env::non_empty("XDG_DATA_HOME").map(PathBuf::from) {
        Some(dir) if dir.is_absolute() => dir,
        _ => super::install::home().ok()?.join(".local/share"),
    };
    let db = data.join("opencode/opencode.db");
    db.is_file().then_some(db)
}

/// The session's `part` rows from `from_ms` on, in the order OpenCode wrote them, each as
/// `{"at_ms": …, "part": …}`.
pub(super) fn rows(
    path: &Path,
    session: &str,
    from_ms: i64,
    each: &mut dyn FnMut(Value) -> bool,
) -> std::io::Result<()> {
    if !crate::fs::metadata(path)?.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    let other = std::io::Error::other::<rusqlite::Error>;
    let db = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(other)?;
    db.busy_timeout(Duration::from_secs(2)).map_err(other)?;
    let mut query = db
        .prepare(
            "SELECT time_created, data FROM part \
             WHERE session_id = ?1 AND time_created >= ?2 ORDER BY time_created, id",
        )
        .map_err(other)?;
    let mut found = query.query((session, from_ms)).map_err(other)?;
    while let Some(row) = found.next().map_err(other)? {
        let at_ms: i64 = row.get(0).map_err(other)?;
        let data: String = row.get(1).map_err(other)?;
        if data.len() > crate::ops::impact::LINE_CAP {
            continue;
        }
        let Ok(part) = serde_json::from_str::<Value>(&data) else {
            continue;
        };
        if !each(json!({ "at_ms": at_ms, "part": part })) {
            break;
        }
    }
    Ok(())
}

/// One row of [`rows`]: a request's tokens (`step-finish`), a tool call (`tool`, read as the
/// plugin's tool hook reads it); any other part only its time.
pub(super) fn line(client: &dyn Client, row: &Value, checkout: &str) -> Option<Line> {
    let part = &row["part"];
    let mut line = Line {
        at: Some(row["at_ms"].as_i64()?.div_euclid(1000)),
        ..Line::default()
    };
    match part["type"].as_str()? {
        "step-finish" => line.usage = part["tokens"]["total"].as_u64().map(|n| (None, n)),
        "tool" => {
            let name = part["tool"].as_str()?;
            let mut tool =
                super::transcript_tool(client, name, &part["state"]["input"], Some(checkout));
            tool.id = part["callID"].as_str().map(str::to_string);
            line.tools.push(tool);
        }
        _ => {}
    }
    Some(line)
}
