//! The MCP server's door to stdio: lines read bounded (a line that is not UTF-8, or over the
//! cap, is answered with its JSON-RPC error and skipped), a line that is not JSON-RPC answered
//! (the SDK would drop it), one task alone writing stdout, and what waits for an answer to be
//! out — `handoff_read`'s consume — run once it is.

use rmcp::ServiceExt;
use serde_json::{Value, json};

use super::{Server, failed};
use crate::error::Error;

/// The longest line read: a handoff is at most 4 MiB, and JSON may escape it to several times
/// that. A longer line is answered with an error and skipped, never buffered whole.
const LINE_CAP: usize = 24 << 20;

/// What a line read from the client was.
enum Line {
    Text(String),
    NotUtf8,
    TooLong,
}

/// The next line of `input`, at most [`LINE_CAP`] bytes kept; `None` at its end.
async fn next_line(
    input: &mut (impl tokio::io::AsyncBufRead + Unpin),
) -> std::io::Result<Option<Line>> {
    use tokio::io::AsyncBufReadExt;
    let mut line = Vec::new();
    let mut over = false;
    let mut any = false;
    loop {
        let buf = input.fill_buf().await?;
        if buf.is_empty() {
            break;
        }
        any = true;
        let newline = buf.iter().position(|&b| b == b'\n');
        let chunk = &buf[..newline.unwrap_or(buf.len())];
        if !over && line.len() + chunk.len() > LINE_CAP {
            over = true;
            line = Vec::new();
        }
        if !over {
            line.extend_from_slice(chunk);
        }
        let used = newline.map_or(buf.len(), |i| i + 1);
        input.consume(used);
        if newline.is_some() {
            break;
        }
    }
    Ok(any.then(|| match (over, String::from_utf8(line)) {
        (true, _) => Line::TooLong,
        (false, Ok(text)) => Line::Text(text),
        (false, Err(_)) => Line::NotUtf8,
    }))
}

/// A consume waiting for its answer to be written (it returns a note when it failed).
type Consume = Box<dyn FnOnce() -> Option<String>>;

thread_local! {
    /// The consumes waiting, each with the JSON of its request's id. The server's runtime runs
    /// on one thread: the tool calls and the task that writes stdout alike.
    static AFTER_ANSWER: std::cell::RefCell<Vec<(String, Consume)>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// Have `consume` run once the answer to request `id` (its JSON) is written out.
pub(super) fn after_answer(id: &str, consume: Consume) {
    AFTER_ANSWER.with_borrow_mut(|waiting| waiting.push((id.to_string(), consume)));
}

/// Run what waited for the answer `line` carries, now that it is written and flushed; the
/// notes of those that failed, as MCP log messages for the writer to send.
fn answered(line: &str) -> Vec<String> {
    let Some(id) = serde_json::from_str::<Value>(line)
        .ok()
        .filter(|v| v.get("result").is_some() || v.get("error").is_some())
        .and_then(|v| v.get("id").map(Value::to_string))
    else {
        return Vec::new();
    };
    let due: Vec<(String, Consume)> = AFTER_ANSWER.with_borrow_mut(|waiting| {
        let (due, rest) = std::mem::take(waiting)
            .into_iter()
            .partition(|(k, _)| *k == id);
        *waiting = rest;
        due
    });
    due.into_iter()
        .filter_map(|(_, consume)| consume())
        .map(|note| {
            let message = json!({"jsonrpc": "2.0", "method": "notifications/message",
                "params": {"level": "warning", "logger": "handoff-store", "data": note}});
            format!("{message}\n")
        })
        .collect()
}

/// Serve until stdin ends. The protocol passes through a door of ours on each side: a line that
/// is not JSON-RPC gets its JSON-RPC error (the SDK would drop it unanswered), and one task
/// alone writes stdout, so an error never lands inside another message; once an answer is out,
/// what waited for it runs.
pub(super) async fn serve(server: Server) -> Result<(), Error> {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    let (server_side, our_side) = tokio::io::duplex(1 << 16);
    let (from_server, mut to_server) = tokio::io::split(our_side);
    let (say, mut said) = tokio::sync::mpsc::unbounded_channel::<String>();
    let writer = tokio::spawn(async move {
        let mut stdout = tokio::io::stdout();
        while let Some(line) = said.recv().await {
            if stdout.write_all(line.as_bytes()).await.is_err() || stdout.flush().await.is_err() {
                break;
            }
            for note in answered(&line) {
                if stdout.write_all(note.as_bytes()).await.is_err() || stdout.flush().await.is_err()
                {
                    break;
                }
            }
        }
    });
    let answers = say.clone();
    tokio::spawn(async move {
        let mut lines = BufReader::new(from_server).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            if answers.send(format!("{line}\n")).is_err() {
                break;
            }
        }
    });
    tokio::spawn(async move {
        let mut input = BufReader::new(tokio::io::stdin());
        while let Ok(Some(line)) = next_line(&mut input).await {
            let line = match line {
                Line::Text(text) => text,
                Line::NotUtf8 => {
                    let _ = say.send(format!(
                        "{}\n",
                        error(Value::Null, -32700, "Parse error: the line is not UTF-8")
                    ));
                    continue;
                }
                Line::TooLong => {
                    let why = format!("Invalid Request: the line is over {} MiB", LINE_CAP >> 20);
                    let _ = say.send(format!("{}\n", error(Value::Null, -32600, &why)));
                    continue;
                }
            };
            match malformed(&line) {
                Some(error) => {
                    let _ = say.send(format!("{error}\n"));
                }
                None => {
                    if to_server
                        .write_all(format!("{line}\n").as_bytes())
                        .await
                        .is_err()
                    {
                        break;
                    }
                }
            }
        }
        let _ = to_server.shutdown().await;
    });
    let running = server.serve(server_side).await.map_err(|e| failed(&e))?;
    running.waiting().await.map_err(|e| failed(&e))?;
    let _ = writer.await;
    Ok(())
}

/// A JSON-RPC error answer.
fn error(id: Value, code: i32, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

/// The JSON-RPC error a line deserves when it is not a JSON-RPC message: a parse error (-32700)
/// for what is not JSON, an invalid request (-32600) for JSON that is no JSON-RPC 2.0 object.
fn malformed(line: &str) -> Option<Value> {
    if line.trim().is_empty() {
        return None;
    }
    let error = |id: Value, code: i32, message: &str| Some(error(id, code, message));
    match serde_json::from_str::<Value>(line) {
        Err(_) => error(Value::Null, -32700, "Parse error: the line is not JSON"),
        Ok(Value::Object(m)) if m.get("jsonrpc") == Some(&json!("2.0")) => None,
        // A batch is for the protocol's own reader to answer.
        Ok(Value::Array(_)) => None,
        Ok(Value::Object(m)) => error(
            m.get("id").cloned().unwrap_or(Value::Null),
            -32600,
            "Invalid Request: not a JSON-RPC 2.0 message",
        ),
        Ok(_) => error(
            Value::Null,
            -32600,
            "Invalid Request: not a JSON-RPC 2.0 message",
        ),
    }
}
