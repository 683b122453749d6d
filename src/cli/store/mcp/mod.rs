//! `handoff-store mcp`: the MCP server over stdio (feature `mcp`, built on the official Rust
//! SDK, `rmcp`) — a third door onto the operations floor beside the command line and the hooks.
//! Each tool maps its arguments to an `ops` request and renders the outcome with the command's
//! own text renderer, so a model reads what `handoff-store <command>` prints; no operation is
//! copied here. Nothing but the protocol reaches stdout: the operations print nothing, and their
//! text goes into the tool's result. When the client has roots, a tool acts only on a
//! repository whose work tree and main repository (the one its git dir belongs to) both lie
//! inside them, reads or writes a `path` only inside them, and lists only their handoffs.
//! `handoff_read` marks its handoff consumed only once its answer is written out. A line is
//! bounded and need not be UTF-8 to be answered: nothing a client sends stops the server.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, GetPromptRequestParams,
    GetPromptResponse, GetPromptResult, Implementation, JsonObject, ListPromptsResult,
    ListToolsResult, PaginatedRequestParams, Prompt, PromptMessage, Role, ServerCapabilities,
    ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde_json::{Value, json};

use super::{Format, Reply};
use crate::error::{Error, Exit};
use crate::ops::Place;

mod door;

/// Serve MCP on stdin and stdout until the client closes them.
pub(crate) fn run() -> Result<Reply, Error> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .enable_time()
        .build()
        .map_err(|e| failed(&e))?;
    runtime.block_on(door::serve(Server))?;
    Ok(Reply::new(Exit::Ok))
}

pub(super) fn failed(e: &dyn std::fmt::Display) -> Error {
    Error::Output(std::io::Error::other(e.to_string()))
}

/// The server: no state of its own (every call opens the store, as a command does).
#[derive(Debug, Clone, Copy)]
pub(super) struct Server;

/// The arguments every tool may take.
const CHECKOUT: &str =
    "A path inside the git checkout to work on (default: the server's working directory).";
const SLOT: &str =
    "A named slot beside the branch's default one (1-64 letters, digits, '.', '_', '-').";

fn string(about: &str) -> Value {
    json!({"type": "string", "description": about})
}

fn boolean(about: &str) -> Value {
    json!({"type": "boolean", "description": about})
}

/// A tool: its name, what it does, and its own properties beside `checkout` and `slot` (none
/// is required).
fn tool(name: &'static str, about: &'static str, own: Value) -> Tool {
    let mut properties = json!({"checkout": string(CHECKOUT), "slot": string(SLOT)});
    if let (Some(all), Value::Object(own)) = (properties.as_object_mut(), own) {
        all.extend(own);
    }
    let schema = match json!({"type": "object", "properties": properties}) {
        Value::Object(o) => o,
        _ => JsonObject::new(),
    };
    Tool::new(name, about, Arc::new(schema))
}

/// A handoff given as text or as a file.
fn document() -> Value {
    json!({
        "document": string("The handoff's markdown text."),
        "path": string("A file holding the handoff (instead of document)."),
    })
}

/// The tools.
fn tools() -> Vec<Tool> {
    let mut write = document();
    if let Some(w) = write.as_object_mut() {
        w.insert("dry_run".into(), boolean("Gate it and store nothing."));
        w.insert(
            "force".into(),
            boolean("Replace a slot holding another branch's or repository's handoff."),
        );
    }
    vec![
        tool(
            "handoff_read",
            "The handoff stored for this checkout's branch, with its verdict (are its citations still true?), drift and notes: what a new session is given. Marks it read unless consume is false.",
            json!({"consume": boolean("Mark the handoff read (default true).")}),
        ),
        tool(
            "handoff_write",
            "Store a handoff for this checkout's branch. It is gated first: a malformed one (or one carrying a credential) changes nothing. Says where it went and the gate's verdict.",
            write,
        ),
        tool(
            "handoff_verify",
            "Gate a handoff against this checkout: its section contract and every citation (path:line | expected text). Stores nothing.",
            document(),
        ),
        tool(
            "handoff_list",
            "Every handoff in the store, newest first.",
            json!({}),
        ),
        tool(
            "handoff_history",
            "The branch's handoff (version 0) and its kept versions.",
            json!({}),
        ),
        tool(
            "handoff_reground",
            "Mid-session: the stored handoff's Decisions, Dead ends, Traps and Next with one verdict line (at most 2,000 characters; nothing is marked read).",
            json!({}),
        ),
        tool(
            "handoff_brief",
            "A brief for a subagent: its task, the decisions and traps that touch its paths, and their pointers with verdicts (at most 1,500 characters).",
            json!({
                "paths": {"type": "array", "items": {"type": "string"}, "description": "Only what touches these paths (git globs or folders)."},
                "task": string("The subagent's task, as the brief's title."),
            }),
        ),
        tool(
            "handoff_log",
            "The lineage of the branch's handoff: its versions newest first, each with what it added and removed in Decisions, Dead ends and Traps.",
            json!({"number": {"type": "integer", "minimum": 1, "description": "How many versions (default 10)."}}),
        ),
        tool(
            "handoff_fix",
            "Rewrite the line numbers of the stored handoff's citations whose text moved to one other line. A dry run unless dry_run is false.",
            json!({"dry_run": boolean("Only say what would move (default true).")}),
        ),
    ]
}

/// A tool's arguments, read leniently: a missing one is its default, a wrong type an error.
struct Arguments(JsonObject);

impl Arguments {
    fn string(&self, key: &str) -> Result<Option<String>, String> {
        match self.0.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(format!("{key} must be a string")),
        }
    }

    fn boolean(&self, key: &str, default: bool) -> Result<bool, String> {
        match self.0.get(key) {
            None | Some(Value::Null) => Ok(default),
            Some(Value::Bool(b)) => Ok(*b),
            Some(_) => Err(format!("{key} must be true or false")),
        }
    }

    fn strings(&self, key: &str) -> Result<Vec<String>, String> {
        match self.0.get(key) {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::Array(items)) => items
                .iter()
                .map(|v| v.as_str().map(str::to_string))
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| format!("{key} must be a list of strings")),
            Some(_) => Err(format!("{key} must be a list of strings")),
        }
    }

    fn place(&self) -> Result<Place, String> {
        Ok(Place::of(
            self.string("checkout")?.as_deref(),
            self.string("slot")?.as_deref(),
        ))
    }

    /// The handoff given as `document` or read from `path`, and the name the gate gives it.
    fn document(&self) -> Result<(String, String), Error> {
        let bad = |m: String| Error::Usage(crate::error::Usage::McpArgument(m));
        match (
            self.string("document").map_err(bad)?,
            self.string("path").map_err(bad)?,
        ) {
            (Some(text), None) => Ok((
                crate::ops::write::check_draft(text.into_bytes())?,
                "document".into(),
            )),
            (None, Some(path)) => Ok((crate::ops::write::read_regular_draft(&path)?, path)),
            _ => Err(bad(
                "give the handoff as document or as path (one of them)".into()
            )),
        }
    }
}

/// The text a rendered reply prints, both streams, and whether it ended refused or failed.
fn said(reply: Reply) -> (String, Exit) {
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let exit = reply.deliver(&mut out, &mut err, "handoff-store");
    let mut text = String::from_utf8_lossy(&out).into_owned();
    text.push_str(&String::from_utf8_lossy(&err));
    (text, exit)
}

/// The tool's result: its text; an error (with its hint) is a tool error a model can read.
fn result(reply: Result<Reply, Error>) -> CallToolResult {
    let reply = reply.unwrap_or_else(|e| Reply::error(e, Format::Text));
    let (text, exit) = said(reply);
    // A verdict (exit 1: a citation failed; 4: nothing yet) is an answer; a refusal is not.
    if matches!(exit, Exit::Ok | Exit::Negative | Exit::NothingToDo) {
        CallToolResult::success(vec![ContentBlock::text(text)])
    } else {
        CallToolResult::error(vec![ContentBlock::text(text)])
    }
}

/// Run tool `name` with `args`, for the request whose id (as JSON) is `id`, within `roots`
/// when the client has them.
fn call(name: &str, args: &Arguments, id: &str, roots: Option<&[String]>) -> Result<Reply, Error> {
    let bad = |m: String| Error::Usage(crate::error::Usage::McpArgument(m));
    let place = args.place().map_err(bad)?;
    match name {
        "handoff_read" => read(place, args.boolean("consume", true).map_err(bad)?, id),
        "handoff_write" => write(place, args),
        "handoff_verify" => {
            let (text, from) = args.document()?;
            let target = place.target()?;
            let report = crate::report::run_gate::gate_bytes(
                &from,
                text.into_bytes(),
                Some(&target.checkout()),
            );
            Ok(Reply::new(Exit::of_gate(report.exit_code)).lines(report.text_lines()))
        }
        "handoff_list" => {
            let mut listing = crate::ops::list::list()?;
            if let Some(roots) = roots {
                // Only the handoffs of checkouts the client may reach.
                listing.handoffs.retain(|h| {
                    h.checkout
                        .as_deref()
                        .is_some_and(|c| within(Path::new(c), roots))
                });
            }
            let mut text = super::list::list_text(&listing);
            if listing.handoffs.is_empty() {
                text = format!("no handoffs in the store ({})\n", listing.store);
            }
            if let Some(note) = super::list::list_note(&listing) {
                text.push_str(&format!("{note}\n"));
            }
            Ok(Reply::new(Exit::Ok).text(text))
        }
        "handoff_history" => Reply::show(
            Format::Text,
            &crate::ops::history::history(&place)?,
            super::history::history_text,
        ),
        "handoff_reground" => {
            Ok(Reply::new(Exit::Ok).text(crate::ops::read::reground(&place)?.text))
        }
        "handoff_brief" => {
            let paths = args.strings("paths").map_err(bad)?;
            let task = args.string("task").map_err(bad)?;
            let view = crate::ops::read::brief(&place, &paths, task.as_deref())?;
            Ok(Reply::new(Exit::Ok).text(view.text))
        }
        "handoff_log" => {
            let number = match args.0.get("number") {
                None | Some(Value::Null) => 10,
                Some(v) => v
                    .as_u64()
                    .filter(|n| *n >= 1)
                    .ok_or_else(|| bad("number must be a whole number from 1".into()))?
                    as usize,
            };
            let log = crate::ops::log::log(&place, number)?;
            Reply::show(Format::Text, &log, super::log::log_text)
        }
        "handoff_fix" => {
            let dry_run = args.boolean("dry_run", true).map_err(bad)?;
            let fixed = crate::ops::fix::fix(&place, dry_run)?;
            let exit = Exit::of_gate(fixed.exit);
            Ok(Reply::show(Format::Text, &fixed, super::fix::fixed_text)?.exit(exit))
        }
        other => Err(bad(format!("no tool named {other}"))),
    }
}

/// `handoff_read`: the answer `read` prints, consumed (when it may be) once the answer to
/// request `id` is written out — as the command line consumes once its output got out: a
/// client that disconnects, or a server killed mid-call, loses no delivery.
fn read(place: Place, consume: bool, id: &str) -> Result<Reply, Error> {
    let (store, answer) =
        crate::ops::read::read(&place, 0, consume, crate::harness::writer_trail())?;
    let text = super::read::read_text(&answer, false);
    let crate::ops::read::Answer::Handoff(shown) = answer else {
        return Ok(Reply::new(Exit::NothingToDo).text(text));
    };
    let reply = Reply::new(shown.delivery.verdict.reader_exit()).text(text);
    if shown.consumable {
        let delivery = shown.delivery;
        door::after_answer(
            id,
            Box::new(move || crate::ops::read::consume(&store, &delivery)),
        );
    }
    Ok(reply)
}

/// `handoff_write`: the document given, stored as `write` stores it.
fn write(place: Place, args: &Arguments) -> Result<Reply, Error> {
    let bad = |m: String| Error::Usage(crate::error::Usage::McpArgument(m));
    let (text, from) = args.document()?;
    let request = crate::ops::write::Request {
        place,
        body: crate::ops::write::Body::Document { text, from },
        force: args.boolean("force", false).map_err(bad)?,
        no_gate: false,
        branch: None,
        dry_run: args.boolean("dry_run", false).map_err(bad)?,
    };
    super::write::reply(crate::ops::write::write(&request)?, Format::Text)
}

/// Why a call may not act within `roots`, if it may not: its checkout's work tree and main
/// repository (a `.git` file may name another repository's git dir; a root inside a repository
/// does not reach the repository's root), and a `path` it names, must lie inside them.
fn outside(args: &Arguments, roots: &[String]) -> Option<String> {
    let given = args.string("checkout").ok().flatten();
    let dir = crate::store::Target::dir_of(given.as_deref()).0;
    let mut places = vec![dir.clone()];
    if let Ok(target) = crate::store::Target::required(Some(&dir.to_string_lossy())) {
        places = vec![target.facts.checkout.clone(), target.facts.main.clone()];
    }
    if let Ok(Some(path)) = args.string("path") {
        places.push(PathBuf::from(path));
    }
    places.into_iter().find(|p| !within(p, roots)).map(|p| {
        format!(
            "handoff-store: {} is outside the roots this client allows",
            p.display()
        )
    })
}

/// Whether `path` lies within one of `roots` (`file://` URIs); both resolved on disk.
fn within(path: &Path, roots: &[String]) -> bool {
    let Ok(path) = crate::fs::canonicalize(path) else {
        return false;
    };
    roots.iter().any(|uri| {
        uri.strip_prefix("file://")
            .map(percent_decoded)
            .and_then(|p| crate::fs::canonicalize(Path::new(&p)).ok())
            .is_some_and(|root| path.starts_with(root))
    })
}

/// `%XX` escapes of a URI path decoded (a root's path may hold spaces).
fn percent_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[i] == b'%'
            && let (Some(h), Some(l)) = (
                bytes.get(i + 1).copied().and_then(hex),
                bytes.get(i + 2).copied().and_then(hex),
            )
        {
            out.push((h * 16 + l) as u8);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The client's roots (`file://` URIs), when it has any: asked at each call, as they may change.
/// Roots are deprecated by a newer protocol version (SEP-2577) but are what today's clients
/// send to bound a server's reach; a client that cannot answer has none we could honour.
#[allow(deprecated, reason = "roots are what the clients of today send")]
async fn client_roots(context: &RequestContext<RoleServer>) -> Option<Vec<String>> {
    let has_roots = context
        .peer
        .peer_info()
        .is_some_and(|info| info.capabilities.roots.is_some());
    if !has_roots {
        return None;
    }
    let roots = context.peer.list_roots().await.ok()?;
    Some(roots.roots.into_iter().map(|r| r.uri).collect())
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        let mut config = ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_prompts()
                .build(),
        );
        let mut about = Implementation::default();
        about.name = "handoff-store".into();
        about.version = env!("CARGO_PKG_VERSION").into();
        config.server_info = about;
        config.instructions = Some(
            "Handoffs carry a coding session's decisions, dead ends and traps across a context reset. Call handoff_read at the start of a session; before the context is cleared, write one (the prompt `handoff` says how) and store it with handoff_write.".into(),
        );
        config
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        if !tools().iter().any(|t| t.name == request.name) {
            return Err(McpError::invalid_params(
                format!("no tool named {}", request.name),
                None,
            ));
        }
        let args = Arguments(request.arguments.unwrap_or_default());
        let roots = client_roots(&context).await;
        if let Some(why) = roots.as_deref().and_then(|r| outside(&args, r)) {
            return Ok(CallToolResult::error(vec![ContentBlock::text(why)]).into());
        }
        let id = serde_json::to_string(&context.id).unwrap_or_default();
        Ok(result(call(&request.name, &args, &id, roots.as_deref())).into())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        Ok(ListPromptsResult::with_all_items(vec![Prompt::new(
            "handoff",
            Some("Write a handoff of this session before its context is cleared, and store it."),
            None,
        )]))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        if request.name != "handoff" {
            return Err(McpError::invalid_params(
                format!("no prompt named {}", request.name),
                None,
            ));
        }
        let mut result = GetPromptResult::new(vec![PromptMessage::new_text(
            Role::User,
            crate::harness::install::skill_instructions(),
        )]);
        result.description = Some("How to write a handoff, and where to store it.".into());
        Ok(result.into())
    }
}
