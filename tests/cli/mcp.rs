//! `handoff-store mcp` (feature `mcp`): the real binary driven over stdio as an MCP client
//! drives it — initialize, the tools and the prompt, a malformed line, a checkout outside the
//! client's roots.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

use serde_json::{Value, json};

use crate::util::{TestEnv, canonical};

/// A running server and the lines it printed.
struct Client {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
    /// What the client answers a `roots/list` request with (none: it declares no roots).
    roots: Option<Vec<String>>,
}

impl Client {
    fn start(env: &TestEnv, cwd: &Path, roots: Option<Vec<String>>) -> Client {
        let mut cmd = env.std_cmd(
            &assert_cmd::cargo::cargo_bin("handoff-store"),
            &["mcp".as_ref()],
        );
        cmd.env("HANDOFF_STORE_DIR", env.store_dir())
            .current_dir(cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        let mut child = cmd.spawn().expect("spawn handoff-store mcp");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = child.stdout.take().expect("stdout");
        let (send, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if send.send(line).is_err() {
                    break;
                }
            }
        });
        let mut client = Client {
            child,
            stdin,
            lines,
            roots,
        };
        let capabilities = if client.roots.is_some() {
            json!({"roots": {}})
        } else {
            json!({})
        };
        let init = client.request(
            1,
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": capabilities,
                   "clientInfo": {"name": "test", "version": "0"}}),
        );
        assert_eq!(
            init["result"]["serverInfo"]["name"], "handoff-store",
            "{init}"
        );
        client.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        client
    }

    fn send(&mut self, message: &Value) {
        self.send_line(&message.to_string());
    }

    fn send_line(&mut self, line: &str) {
        writeln!(self.stdin, "{line}").expect("write to the server");
        self.stdin.flush().expect("flush");
    }

    /// The next line the server printed, as JSON (every line must be JSON: nothing but the
    /// protocol goes to stdout).
    fn next(&mut self) -> Value {
        let line = self
            .lines
            .recv_timeout(Duration::from_secs(60))
            .expect("the server answered");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON on stdout ({e}): {line}"))
    }

    /// Send a request and read until its response, answering the server's `roots/list`.
    fn request(&mut self, id: u64, method: &str, params: Value) -> Value {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let message = self.next();
            if message["method"] == "roots/list" {
                let roots: Vec<Value> = self
                    .roots
                    .clone()
                    .unwrap_or_default()
                    .iter()
                    .map(|uri| json!({"uri": uri}))
                    .collect();
                let answer =
                    json!({"jsonrpc": "2.0", "id": message["id"], "result": {"roots": roots}});
                self.send(&answer);
                continue;
            }
            if message["id"] == id {
                return message;
            }
        }
    }

    /// Call tool `name`: its text and whether it is a tool error.
    fn call(&mut self, id: u64, name: &str, arguments: Value) -> (String, bool) {
        let r = self.request(
            id,
            "tools/call",
            json!({"name": name, "arguments": arguments}),
        );
        let text = r["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_else(|| panic!("no text in {r}"))
            .to_string();
        (text, r["result"]["isError"] == true)
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn the_server_lists_its_tools_and_the_handoff_prompt() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    let mut c = Client::start(&env, &repo, None);
    let tools = c.request(2, "tools/list", json!({}));
    let names: Vec<&str> = tools["result"]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(
        names,
        [
            "handoff_read",
            "handoff_write",
            "handoff_verify",
            "handoff_list",
            "handoff_history",
            "handoff_reground",
            "handoff_brief",
            "handoff_log",
            "handoff_fix"
        ]
    );
    for t in tools["result"]["tools"].as_array().expect("tools") {
        assert_eq!(
            t["inputSchema"]["properties"]["checkout"]["type"], "string",
            "{t}"
        );
    }
    let prompt = c.request(3, "prompts/get", json!({"name": "handoff"}));
    let text = prompt["result"]["messages"][0]["content"]["text"]
        .as_str()
        .expect("prompt text");
    assert!(
        text.contains("handoff_write") && text.contains("## The one rule"),
        "{text}"
    );
}

#[test]
fn a_handoff_written_through_mcp_is_gated_stored_and_read_back() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    let slot = env.store_dir().join(env.slot_name(&repo, "main"));
    let mut c = Client::start(&env, &repo, None);
    let doc = canonical(&repo.to_string_lossy(), "main");

    let (verified, error) = c.call(2, "handoff_verify", json!({"document": doc}));
    assert!(
        !error && verified.contains("citations resolve"),
        "{verified}"
    );
    assert!(!slot.exists(), "verify stores nothing");

    let (broken, error) = c.call(3, "handoff_write", json!({"document": "# no sections\n"}));
    assert!(error, "a malformed handoff is a tool error: {broken}");
    assert!(!slot.exists(), "a refused draft changes nothing: {broken}");

    let (written, error) = c.call(4, "handoff_write", json!({"document": doc}));
    assert!(!error && written.contains("(gate: OK)"), "{written}");
    assert!(slot.is_file(), "stored in the branch's slot");

    let (looked, _) = c.call(5, "handoff_read", json!({"consume": false}));
    assert!(looked.contains("type the mailables"), "{looked}");
    let progress = |p: &Path| {
        std::fs::read_to_string(p)
            .expect("slot")
            .lines()
            .find(|l| l.starts_with("progress:"))
            .map(str::to_string)
    };
    assert_eq!(progress(&slot).as_deref(), Some("progress: complete"));
    let (read, error) = c.call(6, "handoff_read", json!({}));
    assert!(!error && read.contains("type the mailables"), "{read}");
    assert_eq!(progress(&slot).as_deref(), Some("progress: consumed"));

    let (history, _) = c.call(7, "handoff_history", json!({}));
    assert!(
        history.contains(&slot.to_string_lossy().into_owned()),
        "{history}"
    );
    let (reground, _) = c.call(8, "handoff_reground", json!({}));
    assert!(
        reground.contains("Decisions") || reground.contains("decision"),
        "{reground}"
    );
}

#[test]
fn a_line_that_is_not_json_rpc_gets_a_json_rpc_error_and_the_server_goes_on() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    let mut c = Client::start(&env, &repo, None);
    c.send_line("this is not json");
    let error = c.next();
    assert_eq!(error["error"]["code"], -32700, "{error}");
    c.send_line(r#"{"id": 9, "method": "tools/list"}"#);
    let error = c.next();
    assert_eq!(
        (error["id"].clone(), error["error"]["code"].clone()),
        (json!(9), json!(-32600))
    );
    let (text, is_error) = c.call(10, "handoff_list", json!({}));
    assert!(
        !is_error && text.contains("no handoffs in the store"),
        "{text}"
    );
    let unknown = c.request(11, "tools/call", json!({"name": "handoff_nope"}));
    assert!(
        unknown["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("handoff_nope")),
        "{unknown}"
    );
}

#[test]
fn a_checkout_outside_the_clients_roots_is_refused() {
    let env = TestEnv::new();
    let inside = env.shop("inside", "main");
    let outside = env.shop("outside", "main");
    let root = format!("file://{}", inside.display());
    let mut c = Client::start(&env, &inside, Some(vec![root]));
    let (text, is_error) = c.call(
        2,
        "handoff_verify",
        json!({"checkout": outside.to_string_lossy(), "document": canonical(&outside.to_string_lossy(), "main")}),
    );
    assert!(is_error && text.contains("outside the roots"), "{text}");
    let (text, is_error) = c.call(
        3,
        "handoff_verify",
        json!({"document": canonical(&inside.to_string_lossy(), "main")}),
    );
    assert!(!is_error && text.contains("citations resolve"), "{text}");
}
