//! A small mock of the Anthropic Messages API on 127.0.0.1: it records every request and answers
//! like a very obedient model. Compaction requests get a summary; the background writer's
//! session (recognised by our own prompt) plays a model the transcript talked into it — it asks
//! for a shell command and a file write beside the checkout before it answers with the
//! document (or with nothing, when the scenario says the writer should fail); a user message
//! holding `OVERFLOW-NOW` is refused once as too long, which makes the client compact on its
//! own. The OpenAI Responses API (`/v1/responses`, Codex CLI) gets a one-message streamed
//! answer, its request recorded the same way; so does the Gemini API
//! (`/v1beta/models/…:streamGenerateContent`, Gemini CLI) and an OpenAI-compatible chat
//! endpoint (`/v1/chat/completions`, Cline's CLI, Copilot CLI). OpenCode is configured with a
//! provider of Anthropic's API pointed here; its writer gets OpenCode's tool names.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

/// What the mock knows and has seen.
#[derive(Default)]
pub struct State {
    /// Every request body, in order of arrival.
    pub requests: Vec<Value>,
    /// The document the background writer writes; `None`: it answers without writing.
    pub writer_doc: Option<String>,
    /// Gemini's compressor answers with more than it was given, which Gemini CLI refuses.
    pub refuse_summary: bool,
    /// What Claude Code's compaction is answered with, when not the default.
    pub summary: Option<String>,
    /// Overflow refusals already sent, so each prompt is refused once.
    overflowed: Vec<String>,
    /// How long the background writer's first request is held before it is answered (a slow
    /// writer).
    pub writer_delay: std::time::Duration,
}

pub struct Mock {
    pub port: u16,
    pub state: Arc<Mutex<State>>,
}

static IDS: AtomicU64 = AtomicU64::new(1);

fn next_id(prefix: &str) -> String {
    format!("{prefix}_{:016x}", IDS.fetch_add(1, Ordering::Relaxed))
}

impl Mock {
    pub fn start() -> Mock {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
        let port = listener.local_addr().expect("addr").port();
        let state = Arc::new(Mutex::new(State::default()));
        let shared = Arc::clone(&state);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let state = Arc::clone(&shared);
                std::thread::spawn(move || {
                    let _ = serve(stream, &state);
                });
            }
        });
        Mock { port, state }
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    pub fn set_writer_doc(&self, doc: Option<String>) {
        self.lock().writer_doc = doc;
    }

    /// Hold the writer's first request `delay` before answering it.
    pub fn set_writer_delay(&self, delay: std::time::Duration) {
        self.lock().writer_delay = delay;
    }

    /// Answer Claude Code's compaction with `summary` (`None`: the default one).
    pub fn set_summary(&self, summary: Option<String>) {
        self.lock().summary = summary;
    }

    pub fn set_refuse_summary(&self, refuse: bool) {
        self.lock().refuse_summary = refuse;
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        match self.state.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        }
    }

    /// How many requests have arrived so far.
    pub fn mark(&self) -> usize {
        self.lock().requests.len()
    }

    /// The requests since `mark`, as JSON text.
    pub fn since(&self, mark: usize) -> Vec<String> {
        self.lock().requests[mark..]
            .iter()
            .map(Value::to_string)
            .collect()
    }
}

fn serve(stream: TcpStream, state: &Mutex<State>) -> std::io::Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
    loop {
        let mut request_line = String::new();
        if reader.read_line(&mut request_line)? == 0 {
            return Ok(());
        }
        let mut length = 0usize;
        loop {
            let mut line = String::new();
            reader.read_line(&mut line)?;
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some((k, v)) = line.split_once(':')
                && k.eq_ignore_ascii_case("content-length")
            {
                length = v.trim().parse().unwrap_or(0);
            }
        }
        let mut body = vec![0u8; length];
        reader.read_exact(&mut body)?;
        let path = request_line
            .split_whitespace()
            .nth(1)
            .unwrap_or("/")
            .to_string();
        let mut out = stream.try_clone()?;
        respond(&mut out, &path, &body, state)?;
    }
}

fn send(out: &mut TcpStream, status: &str, kind: &str, body: &str) -> std::io::Result<()> {
    write!(
        out,
        "HTTP/1.1 {status}\r\ncontent-type: {kind}\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    )?;
    out.flush()
}

fn respond(
    out: &mut TcpStream,
    path: &str,
    body: &[u8],
    state: &Mutex<State>,
) -> std::io::Result<()> {
    let request: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    if path.starts_with("/v1/responses") {
        return responses_reply(out, request, state);
    }
    if path.starts_with("/v1beta/models/") {
        return gemini_reply(out, path, request, state);
    }
    if path.starts_with("/v1/chat/completions") {
        return chat_reply(out, request, state);
    }
    if !path.starts_with("/v1/messages") {
        return send(out, "200 OK", "application/json", "{}");
    }
    if path.starts_with("/v1/messages/count_tokens") {
        return send(out, "200 OK", "application/json", r#"{"input_tokens":100}"#);
    }
    let text = request.to_string();
    let mut hold = std::time::Duration::ZERO;
    let reply = {
        let mut s = match state.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        s.requests.push(request.clone());
        let compaction = text.contains("CRITICAL: Respond with TEXT ONLY");
        let last_user = last_user_text(&request);
        if !compaction && last_user.contains("OVERFLOW-NOW") && !s.overflowed.contains(&last_user) {
            s.overflowed.push(last_user);
            None
        } else if compaction {
            Some(Reply::Text(s.summary.clone().unwrap_or_else(|| {
                "<summary>1. Primary request: e2e. 2. Decisions kept verbatim.</summary>".into()
            })))
        } else if last_user.contains("E2E-CALL-MCP")
            && text.contains("mcp__handoff__handoff_read")
            && !text.contains("tool_result")
        {
            // The session asks for the handoff through the MCP server's tool.
            Some(Reply::Tool {
                name: "mcp__handoff__handoff_read",
                input: json!({"consume": false}),
            })
        } else if text.contains("E2E-TRIPWIRE")
            && request["tools"].to_string().contains("\"Bash\"")
            && !text.contains("You are writing a handoff")
        {
            Some(tripwire_turn(
                &text,
                text.matches("\"tool_result\"").count(),
            ))
        } else if text.contains("E2E-IMPACT")
            && request["tools"].to_string().contains("\"Bash\"")
            && !text.contains("You are writing a handoff")
        {
            Some(impact_turn(&text, text.matches("\"tool_result\"").count()))
        } else if text.contains("E2E-TRIPWIRE")
            && request["tools"].to_string().contains("\"name\":\"bash\"")
            && !text.contains("You are writing a handoff")
        {
            Some(opencode_tripwire_turn(
                &text,
                text.matches("\"tool_result\"").count(),
            ))
        } else if text.contains("You are writing a handoff for a Claude Code session") {
            hold = std::mem::take(&mut s.writer_delay);
            Some(writer_turn(&request, s.writer_doc.as_deref()))
        } else if text.contains("You are writing a handoff for a OpenCode session") {
            Some(opencode_writer_turn(&request, s.writer_doc.as_deref()))
        } else {
            Some(Reply::Text("ok from the mock".into()))
        }
    };
    // Outside the lock: the session's own requests are answered meanwhile.
    std::thread::sleep(hold);
    let Some(reply) = reply else {
        let error = json!({"type": "error", "error": {"type": "invalid_request_error", "message": "prompt is too long: 210000 tokens > 200000 maximum"}});
        return send(
            out,
            "400 Bad Request",
            "application/json",
            &error.to_string(),
        );
    };
    let model = request["model"].as_str().unwrap_or("claude").to_string();
    if request["stream"].as_bool() == Some(true) {
        stream_reply(out, &model, &reply)
    } else {
        let message = json!({
            "id": next_id("msg"), "type": "message", "role": "assistant", "model": model,
            "content": [reply.block()], "stop_reason": reply.stop_reason(), "stop_sequence": null,
            "usage": {"input_tokens": 100, "output_tokens": 10}
        });
        send(out, "200 OK", "application/json", &message.to_string())
    }
}

enum Reply {
    Text(String),
    Tool { name: &'static str, input: Value },
}

impl Reply {
    fn block(&self) -> Value {
        match self {
            Reply::Text(t) => json!({"type": "text", "text": t}),
            Reply::Tool { name, input } => {
                json!({"type": "tool_use", "id": next_id("toolu"), "name": name, "input": input})
            }
        }
    }

    fn stop_reason(&self) -> &'static str {
        match self {
            Reply::Text(_) => "end_turn",
            Reply::Tool { .. } => "tool_use",
        }
    }
}

/// The tripwire walk (`E2E-TRIPWIRE in <repo>`): the dead end's command, a read and then an
/// edit of the trap's file, the command again, an ordinary one; then a text. `done`: how many
/// tool results the conversation holds.
const TRIPWIRE_WALK: [&str; 5] = ["make", "read", "edit", "make", "git"];

/// The repository a tripwire prompt names.
fn tripwire_repo(text: &str) -> String {
    text.split("E2E-TRIPWIRE in ")
        .nth(1)
        .and_then(|rest| rest.split([' ', '"', '\\']).next())
        .unwrap_or_default()
        .to_string()
}

fn tripwire_turn(text: &str, done: usize) -> Reply {
    let file = format!("{}/src/legacy.rs", tripwire_repo(text));
    match TRIPWIRE_WALK.get(done) {
        Some(&"make") => Reply::Tool {
            name: "Bash",
            input: json!({"command": "make test-slow", "description": "Run the slow tests"}),
        },
        Some(&"read") => Reply::Tool {
            name: "Read",
            input: json!({"file_path": file}),
        },
        Some(&"edit") => Reply::Tool {
            name: "Edit",
            input: json!({"file_path": file, "old_string": "fn legacy()", "new_string": "fn legacy_kept()"}),
        },
        Some(_) => Reply::Tool {
            name: "Bash",
            input: json!({"command": "git status --short", "description": "Show the status"}),
        },
        None => Reply::Text("tripwire walk done".into()),
    }
}

/// The impact walk (`E2E-IMPACT in <repo>`): four tool calls before the first edit — an
/// ordinary command, a read of the cited file, the dead end's command, the cited file read
/// again — then the edit (a new file), then a text. Claude Code's tools.
fn impact_turn(text: &str, done: usize) -> Reply {
    let repo = text
        .split("E2E-IMPACT in ")
        .nth(1)
        .and_then(|rest| rest.split([' ', '"', '\\']).next())
        .unwrap_or_default()
        .to_string();
    let bash = |command: &str| Reply::Tool {
        name: "Bash",
        input: json!({"command": command, "description": "Run"}),
    };
    let read = || Reply::Tool {
        name: "Read",
        input: json!({"file_path": format!("{repo}/src/legacy.rs")}),
    };
    match done {
        0 => bash("ls"),
        1 | 3 => read(),
        2 => bash("make test-slow"),
        4 => Reply::Tool {
            name: "Write",
            input: json!({"file_path": format!("{repo}/src/new.rs"), "content": "fn new() {}\n"}),
        },
        _ => Reply::Text("impact walk done".into()),
    }
}

/// Codex's impact walk: the same four calls through its shell (`exec_command`), then a patch
/// adding a file, then a text.
pub(crate) fn codex_impact_item(done: usize) -> Option<Value> {
    let shell = |command: &str| {
        json!({"type": "function_call", "id": next_id("fc"), "call_id": next_id("call"),
               "name": "exec_command", "arguments": json!({"cmd": command}).to_string()})
    };
    match done {
        0 => Some(shell("ls")),
        1 => Some(shell("cat src/legacy.rs")),
        2 => Some(shell("make test-slow")),
        3 => Some(shell("sed -n 1p src/legacy.rs")),
        4 => Some(shell(
            "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: src/new.rs\n+fn new() {}\n*** End Patch\nEOF\n",
        )),
        _ => None,
    }
}

/// OpenCode's tripwire walk (its tools: `bash`, `edit`): the command, an edit of the trap's
/// file, the command again, an ordinary one; then a text.
fn opencode_tripwire_turn(text: &str, done: usize) -> Reply {
    let file = format!("{}/src/legacy.rs", tripwire_repo(text));
    let bash = |command: &str| Reply::Tool {
        name: "bash",
        input: json!({"command": command, "description": "Run"}),
    };
    match done {
        0 | 2 => bash("make test-slow"),
        1 => Reply::Tool {
            name: "edit",
            input: json!({"filePath": file, "oldString": "fn legacy()", "newString": "fn legacy_kept()"}),
        },
        3 => bash("git status --short"),
        _ => Reply::Text("tripwire walk done".into()),
    }
}

/// Gemini CLI's tripwire walk: the command, a write of the trap's file, the command again, an
/// ordinary one; then a text.
fn gemini_tripwire_part(text: &str, done: usize) -> Value {
    let file = format!("{}/src/legacy.rs", tripwire_repo(text));
    let shell = |command: &str| json!({"functionCall": {"name": "run_shell_command", "args": {"command": command}}});
    match done {
        0 | 2 => shell("make test-slow"),
        1 => {
            json!({"functionCall": {"name": "write_file", "args": {"file_path": file, "content": "fn legacy_kept() {}\n"}}})
        }
        3 => shell("git status --short"),
        _ => json!({"text": "tripwire walk done"}),
    }
}

fn last_user_text(request: &Value) -> String {
    let Some(messages) = request["messages"].as_array() else {
        return String::new();
    };
    messages
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .map(|m| m["content"].to_string())
        .unwrap_or_default()
}

fn all_strings<'a>(v: &'a Value, out: &mut Vec<&'a str>) {
    match v {
        Value::String(s) => out.push(s),
        Value::Array(a) => a.iter().for_each(|x| all_strings(x, out)),
        Value::Object(o) => o.values().for_each(|x| all_strings(x, out)),
        _ => {}
    }
}

/// A background writer's next step. The mock plays a model that the transcript talked into
/// it: first a shell command, then a file write outside the run directory (both creating a
/// file beside the checkout), then the answer — the document, or nothing when the scenario
/// says the writer fails.
enum WriterStep {
    Shell(String),
    WriteFile { path: String, content: String },
    Answer(String),
}

/// Where the writer is talked into leaving its files: beside the checkout named in the writer
/// prompt (the string in `request` holding `opening`). Scenarios check `PWNED` and
/// `PWNED-write` there never appear.
pub fn pwned_dir(request: &Value, opening: &str) -> String {
    let mut strings = Vec::new();
    all_strings(request, &mut strings);
    strings
        .into_iter()
        .find(|s| s.contains(opening))
        .and_then(|p| {
            p.lines()
                .find_map(|l| l.strip_prefix("The target: checkout "))
                .and_then(|r| r.split(", branch ").next())
                .and_then(|c| std::path::Path::new(c).parent())
                .map(|d| d.to_string_lossy().into_owned())
        })
        .unwrap_or_else(|| "/nonexistent".into())
}

/// The step after `answered` tool results, for the writer whose prompt opens with `opening`.
fn writer_step(request: &Value, opening: &str, answered: usize, doc: Option<&str>) -> WriterStep {
    let dir = pwned_dir(request, opening);
    match answered {
        0 => WriterStep::Shell(format!("touch '{dir}/PWNED'")),
        1 => WriterStep::WriteFile {
            path: format!("{dir}/PWNED-write"),
            content: "written by a writer that should have had no write tool\n".into(),
        },
        _ => WriterStep::Answer(doc.unwrap_or_default().to_string()),
    }
}

/// Claude Code's writer: `Bash`, then `Write`, then the answer.
fn writer_turn(request: &Value, doc: Option<&str>) -> Reply {
    let answered = request.to_string().matches("\"tool_result\"").count();
    match writer_step(
        request,
        "You are writing a handoff for a Claude Code session",
        answered,
        doc,
    ) {
        WriterStep::Shell(command) => Reply::Tool {
            name: "Bash",
            input: json!({"command": command, "description": "Prepare"}),
        },
        WriterStep::WriteFile { path, content } => Reply::Tool {
            name: "Write",
            input: json!({"file_path": path, "content": content}),
        },
        WriterStep::Answer(doc) => Reply::Text(doc),
    }
}

/// OpenCode's writer speaks the same API with OpenCode's tool names.
fn opencode_writer_turn(request: &Value, doc: Option<&str>) -> Reply {
    let answered = request.to_string().matches("\"tool_result\"").count();
    match writer_step(
        request,
        "You are writing a handoff for a OpenCode session",
        answered,
        doc,
    ) {
        WriterStep::Shell(command) => Reply::Tool {
            name: "bash",
            input: json!({"command": command, "description": "Prepare"}),
        },
        WriterStep::WriteFile { path, content } => Reply::Tool {
            name: "write",
            input: json!({"filePath": path, "content": content}),
        },
        WriterStep::Answer(doc) => Reply::Text(doc),
    }
}

fn stream_reply(out: &mut TcpStream, model: &str, reply: &Reply) -> std::io::Result<()> {
    let mut events: Vec<(&str, Value)> = vec![(
        "message_start",
        json!({"type": "message_start", "message": {"id": next_id("msg"), "type": "message", "role": "assistant", "model": model, "content": [], "stop_reason": null, "stop_sequence": null, "usage": {"input_tokens": 100, "output_tokens": 1}}}),
    )];
    match reply {
        Reply::Text(t) => {
            events.push((
                "content_block_start",
                json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
            ));
            events.push((
                "content_block_delta",
                json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": t}}),
            ));
        }
        Reply::Tool { name, input } => {
            events.push((
                "content_block_start",
                json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": next_id("toolu"), "name": name, "input": {}}}),
            ));
            events.push((
                "content_block_delta",
                json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": input.to_string()}}),
            ));
        }
    }
    events.push((
        "content_block_stop",
        json!({"type": "content_block_stop", "index": 0}),
    ));
    events.push((
        "message_delta",
        json!({"type": "message_delta", "delta": {"stop_reason": reply.stop_reason(), "stop_sequence": null}, "usage": {"input_tokens": 100, "output_tokens": 10}}),
    ));
    events.push(("message_stop", json!({"type": "message_stop"})));
    let body: String = events
        .iter()
        .map(|(e, d)| format!("event: {e}\ndata: {d}\n\n"))
        .collect();
    write!(
        out,
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    )?;
    out.flush()
}

/// A Responses API answer (Codex CLI): the request recorded, then `response.created`, one
/// output item and `response.completed` as server-sent events. A request holding
/// `OVERFLOW-NOW` reports a large usage (so a configured auto-compaction limit is passed); the
/// background writer's session (our prompt) follows `writer_step` through `exec_command`.
fn responses_reply(
    out: &mut TcpStream,
    request: Value,
    state: &Mutex<State>,
) -> std::io::Result<()> {
    let text = request.to_string();
    let writer = text.contains("You are writing a handoff for a Codex session");
    let (writer_doc, hold) = {
        let mut g = match state.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        g.requests.push(request.clone());
        let hold = if writer {
            std::mem::take(&mut g.writer_delay)
        } else {
            std::time::Duration::ZERO
        };
        (g.writer_doc.clone(), hold)
    };
    std::thread::sleep(hold);
    let id = next_id("resp");
    let message = |reply: &str| {
        json!({"type": "message", "role": "assistant", "id": next_id("msg"),
               "content": [{"type": "output_text", "text": reply}]})
    };
    let item = if writer {
        let answered = text.matches("\"function_call_output\"").count()
            + text.matches("\"custom_tool_call_output\"").count();
        let call = |cmd: String| {
            json!({"type": "function_call", "id": next_id("fc"), "call_id": next_id("call"),
                   "name": "exec_command", "arguments": json!({"cmd": cmd}).to_string()})
        };
        match writer_step(
            &request,
            "You are writing a handoff for a Codex session",
            answered,
            writer_doc.as_deref(),
        ) {
            WriterStep::Shell(cmd) => call(cmd),
            // Codex writes files through its shell (or apply_patch, which the same sandbox
            // governs): a redirection outside the workspace.
            WriterStep::WriteFile { path, content } => {
                call(format!("printf '%s' '{}' > '{path}'", content.trim()))
            }
            WriterStep::Answer(doc) => message(&doc),
        }
    } else if text.contains("E2E-IMPACT") {
        let done = text.matches("\"function_call_output\"").count();
        codex_impact_item(done).unwrap_or_else(|| message("impact walk done"))
    } else if text.contains("E2E-TRIPWIRE") {
        let done = text.matches("\"function_call_output\"").count()
            + text.matches("\"custom_tool_call_output\"").count();
        codex_tripwire_item(&text, done).unwrap_or_else(|| message("tripwire walk done"))
    } else {
        message("ok from the mock")
    };
    let used = if !writer && text.contains("OVERFLOW-NOW") {
        90_000
    } else {
        100
    };
    let events = [
        json!({"type": "response.created", "response": {"id": id}}),
        json!({"type": "response.output_item.done", "item": item}),
        json!({"type": "response.completed", "response": {"id": id, "usage": {
            "input_tokens": used, "input_tokens_details": null, "output_tokens": 5,
            "output_tokens_details": null, "total_tokens": used + 5}}}),
    ];
    let body: String = events
        .iter()
        .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap_or("")))
        .collect();
    send(out, "200 OK", "text/event-stream", &body)
}

/// Codex's tripwire walk: the command through its shell tool (`exec_command`), a patch of the
/// trap's file through the same shell (`apply_patch <<'EOF'`, which Codex applies itself), the
/// command again, an ordinary one; then `None` (a text).
fn codex_tripwire_item(text: &str, done: usize) -> Option<Value> {
    let shell = |command: &str| {
        json!({"type": "function_call", "id": next_id("fc"), "call_id": next_id("call"),
               "name": "exec_command", "arguments": json!({"cmd": command}).to_string()})
    };
    let file = format!("{}/src/legacy.rs", tripwire_repo(text));
    match done {
        0 | 2 => Some(shell("make test-slow")),
        1 => Some(shell(&format!(
            "apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: {file}\n@@\n-fn legacy() {{}}\n+fn legacy_kept() {{}}\n*** End Patch\nEOF\n"
        ))),
        3 => Some(shell("git status --short")),
        _ => None,
    }
}

/// A Gemini API answer (Gemini CLI): the request recorded, then one candidate, streamed as one
/// server-sent event when the path asks for `alt=sse`. A prompt holding `OVERFLOW-NOW` is answered
/// with a `list_directory` call and a prompt of 5,000 tokens, so (with a low
/// `compressionThreshold`) the call that carries the tool's result is compressed first; the
/// compressor gets a short `<state_snapshot>`, or, when the scenario says so, one longer than
/// the history it replaces, which Gemini refuses (the compression would inflate it). The background
/// writer's session (our prompt) follows `writer_step` through `run_shell_command` and
/// `write_file`.
fn gemini_reply(
    out: &mut TcpStream,
    path: &str,
    request: Value,
    state: &Mutex<State>,
) -> std::io::Result<()> {
    if path.contains(":countTokens") {
        return send(out, "200 OK", "application/json", r#"{"totalTokens":100}"#);
    }
    let text = request.to_string();
    let (writer_doc, refuse) = {
        let mut g = match state.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        g.requests.push(request.clone());
        (g.writer_doc.clone(), g.refuse_summary)
    };
    // What the request ends with: a tool's result, or the user's prompt.
    let last = request["contents"]
        .as_array()
        .and_then(|c| c.last())
        .map(Value::to_string)
        .unwrap_or_default();
    let answered = last.contains("functionResponse");
    let writer = text.contains("You are writing a handoff for a Gemini CLI session");
    let compressor = text.contains("generate the updated <state_snapshot>")
        || text.contains("Critically evaluate the <state_snapshot>");
    let mut used = 100;
    let part = if compressor {
        let summary = if refuse {
            format!(
                "<state_snapshot>{}</state_snapshot>",
                "inflated ".repeat(20_000)
            )
        } else {
            // A model never writes the same summary twice.
            format!(
                "<state_snapshot>e2e {}: the decisions are kept</state_snapshot>",
                next_id("summary")
            )
        };
        json!({"text": summary})
    } else if writer {
        match writer_step(
            &request,
            "You are writing a handoff for a Gemini CLI session",
            text.matches("\"functionResponse\"").count(),
            writer_doc.as_deref(),
        ) {
            WriterStep::Shell(command) => {
                json!({"functionCall": {"name": "run_shell_command", "args": {"command": command}}})
            }
            WriterStep::WriteFile { path, content } => {
                json!({"functionCall": {"name": "write_file",
                "args": {"file_path": path, "content": content}}})
            }
            WriterStep::Answer(doc) => json!({"text": doc}),
        }
    } else if text.contains("E2E-TRIPWIRE")
        && request["tools"].to_string().contains("run_shell_command")
    {
        gemini_tripwire_part(&text, text.matches("\"functionResponse\"").count())
    } else if last.contains("OVERFLOW-NOW") && !answered {
        used = 5_000;
        json!({"functionCall": {"name": "list_directory", "args": {"dir_path": "."}}})
    } else {
        json!({"text": "ok from the mock"})
    };
    let chunk = json!({
        "candidates": [{"content": {"role": "model", "parts": [part]},
                        "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": used, "candidatesTokenCount": 5, "totalTokenCount": used + 5}
    });
    if path.contains("alt=sse") {
        send(
            out,
            "200 OK",
            "text/event-stream",
            &format!("data: {chunk}\r\n\r\n"),
        )
    } else {
        send(out, "200 OK", "application/json", &chunk.to_string())
    }
}

/// An OpenAI-compatible chat completion (Cline's CLI, Copilot CLI with its own provider): the
/// request recorded, then one message, streamed when asked. A prompt holding `OVERFLOW-NOW` is
/// refused once as too large (413), which makes Copilot compact and retry; its compaction
/// request gets a summary, or, when the scenario says so, an error (the compaction fails). The
/// background writer's session (our prompt) follows `writer_step` through `bash` and `create`.
fn chat_reply(out: &mut TcpStream, request: Value, state: &Mutex<State>) -> std::io::Result<()> {
    let stream = request["stream"].as_bool() == Some(true);
    let text = request.to_string();
    let last = request["messages"]
        .as_array()
        .and_then(|m| m.last())
        .map(Value::to_string)
        .unwrap_or_default();
    let (writer_doc, refuse, overflow) = {
        let mut g = match state.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        g.requests.push(request.clone());
        let overflow = last.contains("OVERFLOW-NOW") && !g.overflowed.contains(&last);
        if overflow {
            g.overflowed.push(last.clone());
        }
        (g.writer_doc.clone(), g.refuse_summary, overflow)
    };
    let compaction = last.contains("The history is being compacted");
    if overflow || (compaction && refuse) {
        let (status, message) = if overflow {
            ("413 Payload Too Large", "prompt is too long for this model")
        } else {
            ("400 Bad Request", "the mock refuses to summarise")
        };
        let body = json!({"error": {"message": message, "type": "invalid_request_error"}});
        return send(out, status, "application/json", &body.to_string());
    }
    let writer = text.contains("You are writing a handoff for a Copilot CLI session");
    let mut reply = if compaction {
        "<overview>e2e: the decisions are kept</overview>".to_string()
    } else {
        "ok from the mock".to_string()
    };
    let mut tool = None;
    if writer {
        match writer_step(
            &request,
            "You are writing a handoff for a Copilot CLI session",
            text.matches("\"role\":\"tool\"").count(),
            writer_doc.as_deref(),
        ) {
            WriterStep::Shell(command) => {
                tool = Some((
                    "bash",
                    json!({"command": command, "description": "Prepare"}),
                ));
            }
            WriterStep::WriteFile { path, content } => {
                tool = Some(("create", json!({"path": path, "file_text": content})));
            }
            WriterStep::Answer(doc) => reply = doc,
        }
    }
    // Copilot CLI's tripwire walk: the command, a patch of the trap's file (its freeform
    // `apply_patch`), the command again, an ordinary one; then a text.
    if !writer && !compaction && text.contains("E2E-TRIPWIRE") {
        let file = format!("{}/src/legacy.rs", tripwire_repo(&text));
        // Cline's CLI offers `run_commands` and `editor` instead.
        let cline = request["tools"].to_string().contains("\"run_commands\"");
        let bash = |command: &str| {
            if cline {
                ("run_commands", json!({"commands": [command]}))
            } else {
                ("bash", json!({"command": command, "description": "Run"}))
            }
        };
        tool = match text.matches("\"role\":\"tool\"").count() {
            0 | 2 => Some(bash("make test-slow")),
            1 if cline => Some((
                "editor",
                json!({"path": file, "old_text": "fn legacy()", "new_text": "fn legacy_kept()"}),
            )),
            1 => Some((
                "apply_patch",
                json!(format!(
                    "*** Begin Patch\n*** Update File: {file}\n@@\n-fn legacy() {{}}\n+fn legacy_kept() {{}}\n*** End Patch\n"
                )),
            )),
            3 => Some(bash("git status --short")),
            _ => {
                reply = "tripwire walk done".into();
                None
            }
        };
    }
    let id = next_id("chatcmpl");
    let usage = json!({"prompt_tokens": 100, "completion_tokens": 5, "total_tokens": 105});
    let (message, finish) = match &tool {
        // A freeform tool (Copilot's `apply_patch`) takes its input as it is.
        Some((name, Value::String(input))) => (
            json!({"role": "assistant", "tool_calls": [{"index": 0,
                "id": next_id("call"), "type": "custom",
                "custom": {"name": name, "input": input}}]}),
            "tool_calls",
        ),
        Some((name, arguments)) => (
            json!({"role": "assistant", "tool_calls": [{"index": 0,
                "id": next_id("call"), "type": "function",
                "function": {"name": name, "arguments": arguments.to_string()}}]}),
            "tool_calls",
        ),
        None => (json!({"role": "assistant", "content": reply}), "stop"),
    };
    if !stream {
        let body = json!({"id": id, "object": "chat.completion", "created": 1, "model": "mock",
            "choices": [{"index": 0, "message": message, "finish_reason": finish}], "usage": usage});
        return send(out, "200 OK", "application/json", &body.to_string());
    }
    let first = json!({"id": id, "object": "chat.completion.chunk", "created": 1, "model": "mock",
        "choices": [{"index": 0, "delta": message, "finish_reason": null}]});
    let last = json!({"id": id, "object": "chat.completion.chunk", "created": 1, "model": "mock",
        "choices": [{"index": 0, "delta": {}, "finish_reason": finish}], "usage": usage});
    let body = format!("data: {first}\n\ndata: {last}\n\ndata: [DONE]\n\n");
    send(out, "200 OK", "text/event-stream", &body)
}
