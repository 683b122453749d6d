//! OpenCode's sessions, as `impact` reads them (docs/store.md §9.20). OpenCode (1.18.33,
//! measured) keeps every session in one SQLite database, `$XDG_DATA_HOME/opencode/opencode.db`
//! (else `~/.local/share/opencode/`), in WAL mode, written while it runs. A session's record is
//! its `part` rows (`time_created` in milliseconds), each a JSON `data` column: a `tool` part
//! (`tool`, `callID`, `state.input`), a `step-finish` part (one model request: `tokens.total`,
//! cache included). The reset log names the database as the
//! transcript of a reset OpenCode's plugin reported; the session id picks the session's rows.
//!
//! The database is opened read-only and never written, and nothing is left beside it (see
//! [`uri`]). A database OpenCode holds busy is
//! waited for up to two seconds, then counted unreadable. SQLite is linked into the MCP binary
//! only (in the hooks' binary it made every hook start 4-5 % slower): `impact` runs
//! `handoff-store-mcp --transcript-rows opencode …` beside it and reads its JSON lines; without
//! that binary (a build without the `mcp` feature) OpenCode's transcripts count as unreadable.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

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

/// The session's `part` rows from `from_ms` on (see [`read`]), read by the MCP binary beside
/// this one: its JSON lines, streamed; stopped when `each` has had enough.
pub(super) fn rows(
    path: &Path,
    session: &str,
    from_ms: i64,
    each: &mut dyn FnMut(Value) -> bool,
) -> std::io::Result<()> {
    let reader = crate::env::beside_me(crate::env::MCP_BINARY)
        .ok_or_else(|| std::io::Error::other("no handoff-store-mcp beside this binary"))?;
    let mut child = Command::new(reader)
        .arg("--transcript-rows")
        .arg("opencode")
        .arg(path)
        .arg(session)
        .arg(from_ms.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()?;
    let read = match child.stdout.take() {
        Some(out) => crate::ops::impact::each_json_line(std::io::BufReader::new(out), each),
        None => Err(std::io::Error::other("no pipe")),
    };
    if !matches!(read, Ok(true)) {
        let _ = child.kill();
    }
    let status = child.wait()?;
    let read = read?;
    match status.code() {
        _ if !read => Ok(()),
        Some(0) => Ok(()),
        Some(4) => Err(std::io::ErrorKind::NotFound.into()),
        _ => Err(std::io::Error::other(format!("the reader ended {status}"))),
    }
}

/// The session's `part` rows from `from_ms` on, in the order OpenCode wrote them, each as
/// `{"at_ms": …, "part": …}`: SQLite, read-only.
#[cfg(feature = "mcp")]
pub(super) fn read(
    path: &Path,
    session: &str,
    from_ms: i64,
    each: &mut dyn FnMut(Value) -> bool,
) -> std::io::Result<()> {
    if !crate::fs::metadata(path)?.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    use rusqlite::{Connection, OpenFlags};
    let other = std::io::Error::other::<rusqlite::Error>;
    let db = Connection::open_with_flags(
        uri(path)?,
        OpenFlags::SQLITE_OPEN_READ_ONLY
            | OpenFlags::SQLITE_OPEN_NO_MUTEX
            | OpenFlags::SQLITE_OPEN_URI,
    )
    .map_err(other)?;
    db.busy_timeout(std::time::Duration::from_secs(2))
        .map_err(other)?;
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
        if !each(serde_json::json!({ "at_ms": at_ms, "part": part })) {
            break;
        }
    }
    Ok(())
}

/// The database's URI for a read that leaves nothing behind. While OpenCode runs, its write-ahead
/// log and shared-memory index are beside the file: read through them (`mode=ro`). Once it has
/// closed the database they are gone, and a read-only open would create both (SQLite's own
/// files, left in OpenCode's folder): the file is then read as it is (`immutable=1`: no side
/// files, no locks). An OpenCode starting during that read can make it fail or see less — counted
/// as such, never harmful.
#[cfg(feature = "mcp")]
fn uri(path: &Path) -> std::io::Result<String> {
    let text = path
        .to_str()
        .ok_or_else(|| std::io::Error::other("not a UTF-8 path"))?;
    let mut uri = String::from("file:");
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || b"/-_.~".contains(&b) {
            uri.push(char::from(b));
        } else {
            uri.push_str(&format!("%{b:02X}"));
        }
    }
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    let running = crate::fs::symlink_metadata(Path::new(&wal)).is_ok();
    uri.push_str(if running { "?mode=ro" } else { "?immutable=1" });
    Ok(uri)
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
