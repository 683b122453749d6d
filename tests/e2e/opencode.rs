//! OpenCode (`opencode-ai`): `install opencode --project` puts our plugin in
//! `.opencode/plugins/`; the real OpenCode, served headless (`opencode serve`, driven over its
//! HTTP API on loopback with curl) with a provider of Anthropic's API pointed at the mock,
//! loads it. Sessions are created and prompted the way its front ends do, and a compaction is
//! asked for with `POST /session/<id>/summarize` (`opencode run --command compact` does not
//! compact, 1.18.33).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::harness::{Check, Client, Scenario, Scene, Suite, ensure, walk_files};

pub const SCENARIOS: &[Scenario] = &[(
    "opencode: install opencode's plugin: a new session's system prompt carries the handoff once, a compaction carries our instructions and its writer's handoff replaces the slot, uninstall restores every file",
    Suite::opencode_plugin,
)];

pub const CLIENT: Client = Client {
    package: "opencode-ai",
    version: "1.18.33",
    program: "opencode",
    folder: "opencode-ai",
};

/// A line of the handoff's body: in a request only when the handoff itself was delivered.
fn body_line(tag: &str) -> String {
    format!("Carry on from {tag}.")
}

/// `opencode serve` for one scene, on a free loopback port; stopped when dropped.
pub struct Server {
    child: Child,
    base: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    pub fn start(suite: &Suite, scene: &Scene) -> Result<Server, String> {
        let dir = scene.repo.parent().ok_or("the checkout has no parent")?;
        let config = dir.join("opencode-config.json");
        let provider = json!({
            "$schema": "https://opencode.ai/config.json",
            "model": "mock/m",
            "autoupdate": false,
            "share": "disabled",
            // What a user who lets the agent work would have; the tripwire walk edits and runs.
            "permission": {"edit": "allow", "bash": "allow"},
            "provider": {"mock": {
                "npm": "@ai-sdk/anthropic",
                "name": "Mock",
                "options": {"baseURL": format!("{}/v1", suite.mock.url()), "apiKey": "e2e-not-a-key"},
                "models": {"m": {"name": "m", "limit": {"context": 200000, "output": 8000}}}
            }}
        });
        std::fs::write(&config, provider.to_string()).map_err(|e| e.to_string())?;
        // OpenCode installs its plugin package with npm at every start; offline, that fails at
        // once instead of waiting out npm's retries (over a minute without a network).
        std::fs::write(scene.home.join(".npmrc"), "offline=true\nfetch-retries=0\n")
            .map_err(|e| e.to_string())?;
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(|e| e.to_string())?
            .port();
        let log =
            std::fs::File::create(dir.join("opencode-serve.log")).map_err(|e| e.to_string())?;
        let err = log.try_clone().map_err(|e| e.to_string())?;
        let child = Command::new(&suite.opencode)
            .args(["serve", "--print-logs", "--hostname", "127.0.0.1"])
            .args(["--port", &port.to_string()])
            .current_dir(&scene.repo)
            .env_clear()
            .env("HOME", &scene.home)
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("HANDOFF_STORE_DIR", &scene.store)
            .env("HANDOFF_OPENCODE_BIN", &suite.opencode)
            .env("OPENCODE_CONFIG", &config)
            .env("OPENCODE_DISABLE_MODELS_FETCH", "1")
            .env("OPENCODE_DISABLE_AUTOUPDATE", "1")
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(err)
            .spawn()
            .map_err(|e| format!("opencode serve: {e}"))?;
        let server = Server {
            child,
            base: format!("http://127.0.0.1:{port}"),
        };
        // A request that reaches the server in its first moments is never answered (1.18.33,
        // measured: it hung until curl's limit, and the next one was answered at once): the
        // probe gives up after 2 s and asks again.
        let deadline = Instant::now() + Duration::from_secs(60);
        while server.call_within(2, "GET", "/session", None).is_err() {
            if Instant::now() > deadline {
                let said =
                    std::fs::read_to_string(dir.join("opencode-serve.log")).unwrap_or_default();
                return Err(format!("opencode serve never answered: {said}"));
            }
            std::thread::sleep(Duration::from_millis(250));
        }
        Ok(server)
    }

    /// One call of its HTTP API (curl, loopback only) that may take as long as a model turn;
    /// the JSON it answered.
    fn call(&self, method: &str, path: &str, body: Option<&Value>) -> Result<Value, String> {
        self.call_within(180, method, path, body)
    }

    /// One call given `seconds` to answer.
    fn call_within(
        &self,
        seconds: u64,
        method: &str,
        path: &str,
        body: Option<&Value>,
    ) -> Result<Value, String> {
        let mut cmd = Command::new("curl");
        cmd.args(["-s", "-f", "--max-time", &seconds.to_string(), "-X", method])
            .arg(format!("{}{path}", self.base))
            .args(["-H", "content-type: application/json"]);
        if let Some(b) = body {
            cmd.args(["-d", &b.to_string()]);
        }
        let out = cmd.output().map_err(|e| format!("curl: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "{method} {path}: curl exited {:?}",
                out.status.code()
            ));
        }
        serde_json::from_slice(&out.stdout).or(Ok(Value::Null))
    }

    /// A new session (what `/new` makes); its id.
    pub fn session(&self) -> Result<String, String> {
        let made = self.call("POST", "/session", Some(&json!({})))?;
        made["id"]
            .as_str()
            .map(str::to_string)
            .ok_or_else(|| format!("no session id in {made}"))
    }

    /// The user says `text` in `session`; returns once the model answered.
    pub fn say(&self, session: &str, text: &str) -> Check {
        let parts = json!({"parts": [{"type": "text", "text": text}]});
        self.call("POST", &format!("/session/{session}/message"), Some(&parts))
            .map(|_| ())
    }
}

/// Every file under the checkout (its `.git` aside) with its bytes.
fn snapshot(repo: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    walk_files(repo)
        .into_iter()
        .filter(|p| !p.starts_with(repo.join(".git")))
        .filter_map(|p| std::fs::read(&p).ok().map(|b| (p, b)))
        .collect()
}

impl Suite {
    /// The whole life in the real OpenCode: the first session of the process gets the startup
    /// offer (not the handoff); a new session after it (`/new`) carries the handoff in its
    /// system prompt — once in each of its calls, never in the title call — and marks it read;
    /// a compaction's summary request carries our instructions, `session.compacted` confirms
    /// the run, and the writer (`opencode run`, read-only: the mock asks it for a shell command
    /// and a file write first) replaces the slot; `uninstall` leaves every file of the checkout
    /// as it was and our plugin's folder gone.
    fn opencode_plugin(&self) -> Check {
        let scene = self.scene(false, false)?;
        let slot = self.stored(&scene, "tag-oc-old")?;
        let before = snapshot(&scene.repo);
        let (code, said) = self.store_cmd(&scene, &["install", "opencode", "--project"], None);
        ensure(code == 0, || format!("install opencode: {said}"))?;
        let plugin = scene.repo.join(".opencode/plugins/handoff-store.js");
        ensure(plugin.is_file(), || {
            format!("no plugin at {}", plugin.display())
        })?;
        let server = Server::start(self, &scene)?;
        let delivered = body_line("tag-oc-old");

        let mark = self.mock.mark();
        let first = server.session()?;
        server.say(&first, "first opencode session")?;
        let offered = self.sent_since(mark, "Handoff available");
        ensure(!offered.is_empty(), || {
            "the first session's request carried no startup offer".into()
        })?;
        ensure(self.sent_since(mark, &delivered).is_empty(), || {
            "the first session of the process was given the handoff itself".into()
        })?;

        let mark = self.mock.mark();
        let second = server.session()?;
        server.say(&second, "second opencode session")?;
        server.say(&second, "and a second turn")?;
        let carried = self.sent_since(mark, &delivered);
        ensure(carried.len() == 2, || {
            format!(
                "{} request(s) carried the handoff; expected the session's two model calls",
                carried.len()
            )
        })?;
        for r in &carried {
            ensure(r.matches(&delivered).count() == 1, || {
                "a request carried the handoff more than once".into()
            })?;
        }
        let (_, orient) = self.store_cmd(&scene, &["orient"], None);
        ensure(orient.contains("progress=consumed"), || {
            format!("the delivered handoff is not marked read: {orient}")
        })?;

        self.mock
            .set_writer_doc(Some(crate::harness::handoff("tag-oc-new")));
        let mark = self.mock.mark();
        let summarized = server
            .call(
                "POST",
                &format!("/session/{second}/summarize"),
                Some(&json!({"providerID": "mock", "modelID": "m"})),
            )
            .map(|_| ());
        let steered = self.sent_since(mark, "Keep verbatim, in a section of their own");
        let ran = summarized.and_then(|()| {
            ensure(!steered.is_empty(), || {
                "no request of the compaction carried our instructions".into()
            })
        });
        self.writer_replaces(&scene, &slot, "tag-oc-new", ran)?;
        // The supervisor logs the run's end after the promotion put the handoff in the slot:
        // wait for that line (under load the slot is seen first), then read its state.
        let log = Self::writer_end(&scene)?;
        ensure(log.contains("state=promoted"), || {
            format!("the run was not promoted: {log}")
        })?;
        self.writer_had_no_shell(&scene, mark, "OpenCode")?;
        // The compaction's summary went with session.compacted: the compaction's delivery, at
        // the session's next model call, is what the summary dropped, and the audit is logged
        // with it.
        let mark = self.mock.mark();
        server.say(&second, "after the compaction")?;
        ensure(
            !self
                .sent_since(mark, "What it dropped, from the handoff, is below, whole.")
                .is_empty(),
            || "the delivery after the compaction did not carry what its summary dropped".into(),
        )?;
        // Then the session works: the walk's command, its edit, two more commands; `impact`
        // reads them from OpenCode's own database.
        let walk = format!("E2E-TRIPWIRE in {} now", scene.repo.display());
        server.say(&second, &walk)?;
        let (code, out) = self.store_cmd(&scene, &["impact", "--json"], None);
        ensure(code == 0, || format!("impact: {out}"))?;
        let v: Value = serde_json::from_str(&out).map_err(|e| format!("{e}: {out}"))?;
        let compact = v["resets"]
            .as_array()
            .and_then(|r| r.iter().find(|r| r["source"] == "compact"))
            .cloned()
            .unwrap_or_default();
        ensure(compact["audit"]["next"]["of"] == 1, || {
            format!("the compaction's reset carries no audit: {out}")
        })?;
        ensure(
            compact["transcript"] == "read"
                && compact["to_first_edit"]["tool_calls"] == 1
                && compact["tool_calls"] == 4,
            || format!("the session's calls after the compaction, from its database: {out}"),
        )?;
        drop(server);

        let (code, said) = self.store_cmd(&scene, &["uninstall", "opencode", "--project"], None);
        ensure(code == 0, || format!("uninstall opencode: {said}"))?;
        ensure(!scene.repo.join(".opencode/plugins").exists(), || {
            "uninstall left the plugin's folder".into()
        })?;
        let after = snapshot(&scene.repo);
        for (path, bytes) in &before {
            ensure(after.get(path) == Some(bytes), || {
                format!("{} is not as it was before install", path.display())
            })?;
        }
        Ok(())
    }
}
