//! `handoff-store mcp` (feature `mcp`): the real binary driven over stdio as an MCP client
//! drives it — initialize, the tools and the prompt, a malformed line, a checkout outside the
//! client's roots.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

use serde_json::{Value, json};

use crate::util::{TestEnv, canonical, eventually};

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
    // Consumed once the answer was written out: just after it, not before.
    assert!(
        eventually(10, || progress(&slot).as_deref()
            == Some("progress: consumed")),
        "{:?}",
        progress(&slot)
    );

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

fn root_of(dir: &Path) -> String {
    format!("file://{}", dir.display())
}

fn progress(slot: &Path) -> Option<String> {
    std::fs::read_to_string(slot)
        .ok()?
        .lines()
        .find(|l| l.starts_with("progress:"))
        .map(str::to_string)
}

/// The roots bound every tool to repositories whose work tree and git dir both lie inside them:
/// a folder inside the roots whose `.git` file names another repository's git dir, a root
/// inside a repository, a `path` outside them; and `handoff_list` lists only their handoffs.
#[test]
fn the_roots_bound_the_repository_the_path_and_the_list() {
    let env = TestEnv::new();
    let inside = env.shop("inside", "main");
    let other = env.shop("other", "main");
    env.stored(&inside, &canonical(&inside.to_string_lossy(), "main"));
    let theirs = env.stored(&other, &canonical(&other.to_string_lossy(), "main"));
    let before = std::fs::read(&theirs).expect("their slot");
    // A folder inside the roots whose `.git` names the other repository's git dir.
    let door = inside.join("door");
    std::fs::create_dir_all(&door).expect("door");
    std::fs::write(
        door.join(".git"),
        format!("gitdir: {}\n", other.join(".git").display()),
    )
    .expect(".git file");
    let mut c = Client::start(&env, &inside, Some(vec![root_of(&inside)]));
    let door_arg = json!({"checkout": door.to_string_lossy()});
    for (id, tool, extra) in [
        (2, "handoff_read", json!({})),
        (
            3,
            "handoff_write",
            json!({"document": canonical(&door.to_string_lossy(), "main")}),
        ),
        (4, "handoff_fix", json!({"dry_run": false})),
    ] {
        let mut args = door_arg.clone();
        args.as_object_mut()
            .expect("object")
            .extend(extra.as_object().expect("object").clone());
        let (text, is_error) = c.call(id, tool, args);
        assert!(
            is_error && text.contains("outside the roots"),
            "{tool}: {text}"
        );
    }
    assert_eq!(
        std::fs::read(&theirs).expect("slot"),
        before,
        "their slot changed"
    );
    // A `path` outside the roots: another project's slot is not read through it.
    let (text, is_error) = c.call(
        5,
        "handoff_verify",
        json!({"path": theirs.to_string_lossy()}),
    );
    assert!(is_error && text.contains("outside the roots"), "{text}");
    let (text, is_error) = c.call(6, "handoff_list", json!({}));
    assert!(
        !is_error && text.contains(&*inside.to_string_lossy()),
        "{text}"
    );
    assert!(
        !text.contains(&*other.to_string_lossy()),
        "listed another project: {text}"
    );
    drop(c);
    // A root inside a repository does not reach the repository's root.
    let sub = inside.join("app");
    let mut c = Client::start(&env, &sub, Some(vec![root_of(&sub)]));
    let (text, is_error) = c.call(2, "handoff_read", json!({"consume": false}));
    assert!(is_error && text.contains("outside the roots"), "{text}");
}

/// A FIFO as `path` is refused without blocking the server (a ping is answered after it); a
/// line that is not UTF-8 and a line over the cap each get a JSON-RPC error, the latter without
/// buffering it whole, and the server goes on.
#[test]
fn nothing_a_client_sends_hangs_or_stops_the_server() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    let fifo = repo.join("draft.fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo");
    assert!(made.success());
    let mut c = Client::start(&env, &repo, Some(vec![root_of(&repo)]));
    let (text, is_error) = c.call(2, "handoff_verify", json!({"path": fifo.to_string_lossy()}));
    assert!(is_error && text.contains("is not a regular file"), "{text}");
    let pong = c.request(3, "ping", json!({}));
    assert!(pong.get("result").is_some(), "{pong}");
    c.stdin
        .write_all(b"{\"jsonrpc\": \"2.0\", \"id\": 4, \xff}\n")
        .expect("write");
    c.stdin.flush().expect("flush");
    let error = c.next();
    assert_eq!(error["error"]["code"], -32700, "{error}");
    let long = vec![b'x'; 100 << 20];
    c.stdin.write_all(&long).expect("write");
    c.stdin.write_all(b"\n").expect("write");
    c.stdin.flush().expect("flush");
    let error = c.next();
    assert_eq!(error["error"]["code"], -32600, "{error}");
    let pong = c.request(5, "ping", json!({}));
    assert!(pong.get("result").is_some(), "{pong}");
    let status = std::fs::read_to_string(format!("/proc/{}/status", c.child.id())).expect("status");
    let peak_kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .expect("VmHWM");
    assert!(
        peak_kb < 80 << 10,
        "a 100 MiB line was buffered: peak {peak_kb} kB"
    );
}

/// `handoff_read` consumes once its answer is written: a client gone before the answer (its end
/// of stdout closed) leaves the handoff unread.
#[test]
fn a_read_whose_answer_never_got_out_consumes_nothing() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    let slot = env.stored(&repo, &canonical(&repo.to_string_lossy(), "main"));
    let mut cmd = env.std_cmd(
        &assert_cmd::cargo::cargo_bin("handoff-store"),
        &["mcp".as_ref()],
    );
    cmd.env("HANDOFF_STORE_DIR", env.store_dir())
        .current_dir(&repo)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut child = cmd.spawn().expect("spawn handoff-store mcp");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let mut say = |v: Value| writeln!(stdin, "{v}").and_then(|()| stdin.flush());
    say(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params":
        {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}))
    .expect("initialize");
    let mut line = String::new();
    stdout.read_line(&mut line).expect("initialize answered");
    drop(stdout);
    say(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).expect("initialized");
    say(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "handoff_read", "arguments": {}}}))
    .expect("read");
    // A marker after it: once its slot exists, the read ran (requests run in their order).
    say(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "handoff_write", "arguments": {"slot": "marker",
        "document": canonical(&repo.to_string_lossy(), "main")}}}))
    .expect("marker");
    let marker = env.store_dir().join(format!(
        "{}@marker.md",
        env.slot_name(&repo, "main").trim_end_matches(".md")
    ));
    assert!(eventually(30, || marker.is_file()), "the calls never ran");
    drop(stdin);
    let _ = child.wait();
    assert_eq!(
        progress(&slot).as_deref(),
        Some("progress: complete"),
        "a handoff no client received was marked read"
    );
}

/// `handoff-store mcp` becomes the server binary beside it (the initialize above went through
/// it); a `handoff-store` with none beside it says so, exit 2, and names a command that builds
/// one — the README's own install line.
#[test]
fn without_the_server_beside_it_mcp_names_the_command_that_builds_it() {
    let env = TestEnv::new();
    let alone = env.path("alone/handoff-store");
    std::fs::create_dir_all(alone.parent().expect("folder")).expect("folder");
    std::fs::copy(assert_cmd::cargo::cargo_bin("handoff-store"), &alone).expect("copy");
    let o = crate::util::run(&mut assert_cmd::Command::from_std(
        env.std_cmd(&alone, &["mcp".as_ref()]),
    ));
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(
        o.stderr.contains("no MCP server beside this handoff-store"),
        "{}",
        o.stderr
    );
    let install = "cargo install --path . --locked";
    assert!(
        o.stderr.contains(&format!(
            "hint: build it with the default features, beside this one: {install}"
        )),
        "{}",
        o.stderr
    );
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md"))
        .expect("README");
    assert!(
        readme.contains(&format!("{install}  ")),
        "the README names it"
    );
}
