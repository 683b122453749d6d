//! Claude Code (`@anthropic-ai/claude-code`), our first client: the plugin from `contrib/` and the
//! manual hooks in `hooks/`, driven headless over stream-json — startup, `/clear`, manual and
//! automatic compaction, a refused compaction, writers that succeed and fail, plugin and manual
//! hooks together, the UserPromptSubmit fallback when SessionStart does not run.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::harness::{Check, Client, ROOT, STORE_BIN, Scenario, Scene, Suite, ensure, handoff};

pub const SCENARIOS: &[Scenario] = &[
    (
        "claude: manifests pass claude plugin validate --strict",
        Suite::validate,
    ),
    (
        "claude: startup offers the handoff (the person sees the receipt); /clear injects it once, with the cleared session",
        Suite::clear,
    ),
    (
        "claude: manual /compact: instructions reach the summary; the writer's handoff replaces the slot",
        Suite::manual_compact,
    ),
    (
        "claude: automatic compaction does the same",
        Suite::auto_compact,
    ),
    (
        "claude: a compaction whose writer takes 20 s never blocks; the next prompt after it carries the fresh handoff once",
        Suite::slow_writer,
    ),
    (
        "claude: through MCP (claude mcp add … handoff-store mcp), the model's handoff_read returns the stored handoff",
        Suite::mcp,
    ),
    (
        "claude: a refused compaction leaves the slot byte-identical",
        Suite::refused_compact,
    ),
    (
        "claude: a writer that stores nothing is reported at once",
        Suite::failing_writer,
    ),
    (
        "claude: plugin and manual hooks together inject once",
        Suite::both_installed,
    ),
    (
        "claude: the UserPromptSubmit fallback stays quiet after SessionStart",
        Suite::prompt_fallback_quiet,
    ),
    (
        "claude: without SessionStart, the first prompt after /clear delivers the handoff",
        Suite::prompt_fallback_delivers,
    ),
    (
        "claude: cargo install, then install claude: no plugin, nothing refers to the clone; /clear carries, compaction writes, uninstall restores",
        Suite::installed,
    ),
];

pub const CLIENT: Client = Client {
    package: "@anthropic-ai/claude-code",
    version: "2.1.197",
    program: "claude",
    folder: "claude-code",
};

/// The manual install: every wrapper in `hooks/`, by event.
pub const MANUAL: [(&str, &str); 5] = [
    ("SessionStart", "session-start.sh"),
    ("UserPromptSubmit", "user-prompt-submit.sh"),
    ("PreCompact", "pre-compact.sh"),
    ("PostCompact", "post-compact.sh"),
    ("SessionEnd", "session-end.sh"),
];

/// A file in a scene's home marking a scene whose hooks came from `install claude`.
const INSTALLED: &str = ".e2e-installed";

impl Suite {
    /// The client's environment: nothing inherited but what it needs; the binaries off PATH.
    fn env(&self, scene: &Scene, cmd: &mut Command) {
        cmd.env_clear()
            .current_dir(&scene.repo)
            .env("HOME", &scene.home)
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("ANTHROPIC_BASE_URL", self.mock.url())
            .env("ANTHROPIC_API_KEY", "sk-e2e-not-a-key")
            .env("DISABLE_TELEMETRY", "1")
            .env("DISABLE_ERROR_REPORTING", "1")
            .env("DISABLE_AUTOUPDATER", "1")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .env("HANDOFF_STORE_DIR", &scene.store)
            .env("HANDOFF_WRITER", &self.claude)
            .env("CTX_FORK_TIMEOUT_SECONDS", "120");
        // The plugin runs `handoff-store` by this name; an installed scene names its binary.
        if !scene.home.join(INSTALLED).exists() {
            cmd.env("HANDOFF_STORE_BIN", STORE_BIN);
        }
    }

    pub fn claude_cmd(&self, scene: &Scene, args: &[&str]) -> Result<String, String> {
        let mut cmd = Command::new(&self.claude);
        self.env(scene, &mut cmd);
        let out = cmd
            .args(args)
            .stdin(Stdio::null())
            .output()
            .map_err(|e| e.to_string())?;
        self.saw_output(&out);
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        if out.status.success() {
            Ok(stdout)
        } else {
            Err(format!(
                "claude {args:?} exited {:?}: {stdout}{}",
                out.status.code(),
                String::from_utf8_lossy(&out.stderr)
            ))
        }
    }

    /// One headless process fed `messages` over stream-json, each sent once the previous one
    /// has its result. Returns the result texts.
    fn session(&self, scene: &Scene, messages: &[&str]) -> Result<Vec<String>, String> {
        self.session_args(scene, &[], messages)
    }

    /// [`Self::session`] with more arguments for the client (`--allowedTools …`).
    pub fn session_args(
        &self,
        scene: &Scene,
        extra: &[&str],
        messages: &[&str],
    ) -> Result<Vec<String>, String> {
        self.session_env(scene, &[], extra, messages)
    }

    /// [`Suite::session_args`] with `env` added to the client's (and so its hooks').
    pub fn session_env(
        &self,
        scene: &Scene,
        env: &[(&str, &str)],
        extra: &[&str],
        messages: &[&str],
    ) -> Result<Vec<String>, String> {
        let mut cmd = Command::new(&self.claude);
        self.env(scene, &mut cmd);
        cmd.envs(env.iter().copied());
        let mut child = cmd
            .args(extra)
            .args([
                "-p",
                "--input-format",
                "stream-json",
                "--output-format",
                "stream-json",
                "--verbose",
            ])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| e.to_string())?;
        let stdout = child.stdout.take().ok_or("no stdout")?;
        let (tx, rx) = mpsc::channel::<Value>();
        let printed = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let log = std::sync::Arc::clone(&printed);
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Ok(mut all) = log.lock() {
                    all.push_str(&line);
                    all.push('\n');
                }
                if let Ok(v) = serde_json::from_str::<Value>(&line) {
                    let _ = tx.send(v);
                }
            }
        });
        let results = self.converse(&mut child, &rx, messages);
        self.saw(&printed.lock().map(|p| p.clone()).unwrap_or_default());
        results
    }

    /// Send `messages` one at a time, each once the previous one has its result; then wait for
    /// the client to exit. The result texts.
    fn converse(
        &self,
        child: &mut std::process::Child,
        rx: &mpsc::Receiver<Value>,
        messages: &[&str],
    ) -> Result<Vec<String>, String> {
        let mut stdin = child.stdin.take().ok_or("no stdin")?;
        let mut results = Vec::new();
        for m in messages {
            // `@sleep N`: the user thinks for N seconds before the next prompt.
            if let Some(secs) = m.strip_prefix("@sleep ").and_then(|n| n.parse().ok()) {
                std::thread::sleep(Duration::from_secs(secs));
                continue;
            }
            let line =
                serde_json::json!({"type": "user", "message": {"role": "user", "content": m}});
            writeln!(stdin, "{line}").map_err(|e| e.to_string())?;
            let deadline = Instant::now() + Duration::from_secs(90);
            loop {
                let left = deadline.saturating_duration_since(Instant::now());
                let v = rx
                    .recv_timeout(left)
                    .map_err(|_| format!("no result for {m:?} within 90 s"))?;
                if v["type"] == "result" {
                    results.push(v["result"].as_str().unwrap_or("").to_string());
                    break;
                }
            }
        }
        drop(stdin);
        let deadline = Instant::now() + Duration::from_secs(60);
        while child.try_wait().map_err(|e| e.to_string())?.is_none() {
            if Instant::now() > deadline {
                let _ = child.kill();
                return Err("the client did not exit".into());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(results)
    }

    /// Run `messages` (one of them "after the clear") in one session: every request the model
    /// was sent, and the one for the prompt after the `/clear`.
    fn around_clear(
        &self,
        scene: &Scene,
        messages: &[&str],
    ) -> Result<(Vec<String>, String), String> {
        let mark = self.mock.mark();
        self.session(scene, messages)?;
        let sent = self.mock.since(mark);
        let after = sent
            .iter()
            .find(|r| r.contains("after the clear"))
            .cloned()
            .ok_or("no request for the prompt after /clear")?;
        Ok((sent, after))
    }

    fn validate(&self) -> Check {
        let scene = self.scene(false, false)?;
        for dir in ["contrib", "contrib/claude-code"] {
            let path = Path::new(ROOT).join(dir);
            let out = self.claude_cmd(
                &scene,
                &["plugin", "validate", "--strict", &path.to_string_lossy()],
            )?;
            ensure(out.contains("Validation passed"), || {
                format!("{dir}: {out}")
            })?;
        }
        Ok(())
    }

    fn clear(&self) -> Check {
        let scene = self.scene(true, false)?;
        let slot = self.stored(&scene, "tag-clear")?;
        let (sent, after) =
            self.around_clear(&scene, &["first question", "/clear", "after the clear"])?;
        ensure(sent.len() >= 2, || format!("{} requests", sent.len()))?;
        ensure(!sent[0].contains("tag-clear is where"), || {
            "startup injected the handoff (no /clear had happened)".into()
        })?;
        ensure(
            sent[0].contains("# Handoff available (SessionStart, source: startup)")
                && sent[0].contains("e2e tag-clear")
                && sent[0].contains(" read "),
            || format!("the startup offer did not reach the model: {}", sent[0]),
        )?;
        ensure(
            self.printed()
                .contains("handoff-store: handoff for main offered (gate OK)"),
            || "the person did not see the offer's receipt (systemMessage)".into(),
        )?;
        ensure(after.contains("tag-clear is where"), || {
            "the handoff text is not in the request after /clear".into()
        })?;
        ensure(
            after.contains("The session before this one was cleared"),
            || "SessionEnd's marker did not reach the next session".into(),
        )?;
        ensure(after.matches("tag-clear is where").count() == 1, || {
            "injected more than once".into()
        })?;
        let text = std::fs::read_to_string(&slot).map_err(|e| e.to_string())?;
        ensure(text.contains("progress: consumed"), || {
            "the delivered handoff was not marked consumed".into()
        })
    }

    /// Drive a compaction (`messages`), then check the instructions reached the summary and
    /// the writer's handoff replaced the slot with the old one in history.
    fn compaction(&self, messages: &[&str]) -> Check {
        let scene = self.scene(true, false)?;
        let slot = self.stored(&scene, "tag-old")?;
        self.mock.set_writer_doc(Some(handoff("tag-new")));
        let mark = self.mock.mark();
        self.session(&scene, messages)?;
        let sent = self.mock.since(mark);
        let summary = sent
            .iter()
            .find(|r| r.contains("CRITICAL: Respond with TEXT ONLY"))
            .ok_or("no compaction request reached the model")?;
        ensure(summary.contains("Keep verbatim"), || {
            "PreCompact's instructions are not in the compaction request".into()
        })?;
        ensure(
            summary.contains(&slot.to_string_lossy().into_owned()),
            || "the instructions do not name the slot".into(),
        )?;
        let log = Self::writer_end(&scene)?;
        ensure(log.contains(" rc=0 state=promoted "), || {
            format!("the writer's handoff was not installed: {log}")
        })?;
        let text = std::fs::read_to_string(&slot).map_err(|e| e.to_string())?;
        ensure(text.contains("tag-new is where"), || {
            format!("the slot does not hold the writer's handoff: {text}")
        })?;
        self.writer_had_no_shell(&scene, mark, "Claude Code")?;
        let (_, history) =
            self.store_cmd(&scene, &["history", &scene.repo.to_string_lossy()], None);
        ensure(history.lines().count() >= 2, || {
            format!("the displaced handoff is not in history: {history}")
        })
    }

    fn manual_compact(&self) -> Check {
        self.compaction(&["one", "two", "three", "/compact", "after"])
    }

    fn auto_compact(&self) -> Check {
        self.compaction(&["one", "two", "three", "OVERFLOW-NOW please"])
    }

    /// A compaction whose writer takes 20 s. The session is never told to block: the
    /// prompt right after the compaction goes on with the old handoff and one line; the first
    /// prompt after the writer's handoff landed carries it, exactly once.
    fn slow_writer(&self) -> Check {
        let scene = self.scene(true, false)?;
        self.stored(&scene, "tag-old")?;
        self.mock.set_writer_doc(Some(handoff("tag-fresh")));
        self.mock.set_writer_delay(Duration::from_secs(20));
        let mark = self.mock.mark();
        self.session(
            &scene,
            &[
                "one",
                "two",
                "three",
                "/compact",
                "right after",
                "@sleep 30",
                "much later",
            ],
        )?;
        let sent = self.mock.since(mark);
        let log = Self::writer_end(&scene)?;
        ensure(log.contains(" state=promoted "), || format!("log: {log}"))?;
        for r in &sent {
            ensure(
                !r.contains("must be this Bash command") && !r.contains("--wait 5"),
                || format!("a request told the session to block: {r}"),
            )?;
        }
        let asked = |prompt: &str| {
            sent.iter()
                .find(|r| r.contains(prompt) && !r.contains("You are writing a handoff"))
                .cloned()
                .ok_or_else(|| format!("no request for {prompt:?}"))
        };
        let right_after = asked("right after")?;
        ensure(
            right_after.contains("A fresher handoff is being written")
                && right_after.contains("tag-old is where")
                && !right_after.contains("tag-fresh is where"),
            || format!("the request right after the compaction: {right_after}"),
        )?;
        let later = asked("much later")?;
        ensure(later.matches("tag-fresh is where").count() == 1, || {
            format!("the fresh handoff is not in the next request exactly once: {later}")
        })
    }

    /// No hooks: the server registered with Claude Code's own command, the model calls the
    /// tool, and the tool's result — the stored handoff, with its verdict — reaches the model.
    fn mcp(&self) -> Check {
        let scene = self.scene(false, false)?;
        let slot = self.stored(&scene, "tag-mcp")?;
        let store = format!("HANDOFF_STORE_DIR={}", scene.store.display());
        self.claude_cmd(
            &scene,
            &[
                "mcp", "add", "handoff", "-e", &store, "--", STORE_BIN, "mcp",
            ],
        )?;
        // `status` finds the registration where Claude Code wrote it.
        let (_, status) = self.store_cmd(&scene, &["status", "--all"], None);
        ensure(
            status.lines().any(|l| {
                l.split_whitespace()
                    .take(4)
                    .eq(["claude-code", "mcp", "installed=yes", "runs=yes"])
            }),
            || format!("status shows no MCP registration: {status}"),
        )?;
        let mark = self.mock.mark();
        let out = self.claude_cmd(
            &scene,
            &[
                "-p",
                "E2E-CALL-MCP: read the handoff",
                "--allowedTools",
                "mcp__handoff__handoff_read",
            ],
        )?;
        let answered = self.sent_since(mark, "tool_result");
        ensure(
            answered.iter().any(|r| r.contains("tag-mcp is where")),
            || format!("the tool's result (the stored handoff) never reached the model: {out}"),
        )?;
        ensure(
            answered
                .iter()
                .any(|r| r.contains("OK") || r.contains("resolve")),
            || "the tool's result carries no verdict".into(),
        )?;
        let text = std::fs::read_to_string(&slot).map_err(|e| e.to_string())?;
        ensure(!text.contains("progress: consumed"), || {
            "consume: false marked the handoff read".into()
        })
    }

    fn refused_compact(&self) -> Check {
        let scene = self.scene(true, false)?;
        let slot = self.stored(&scene, "tag-kept")?;
        let before = std::fs::read(&slot).map_err(|e| e.to_string())?;
        self.mock.set_writer_doc(Some(handoff("tag-unwanted")));
        // As a user would: one exchange, then `/compact` on the continued session.
        self.session(&scene, &["only one"])?;
        let answer = self.claude_cmd(&scene, &["-p", "--continue", "/compact"])?;
        ensure(answer.contains("Not enough messages"), || {
            format!("the client did not refuse: {answer}")
        })?;
        let log = Self::writer_end(&scene)?;
        ensure(log.contains(" state=held "), || format!("log: {log}"))?;
        let after = std::fs::read(&slot).map_err(|e| e.to_string())?;
        ensure(after == before, || {
            "the slot changed after a refused compaction".into()
        })?;
        let (_, read) = self.store_cmd(
            &scene,
            &["read", "--no-consume", &scene.repo.to_string_lossy()],
            None,
        );
        ensure(
            read.contains("tag-kept is where") && read.contains("never confirmed"),
            || format!("read: {read}"),
        )
    }

    fn failing_writer(&self) -> Check {
        let scene = self.scene(true, false)?;
        self.stored(&scene, "tag-prev")?;
        self.mock.set_writer_doc(None);
        self.session(&scene, &["one", "two", "three", "/compact"])?;
        let repo = scene.repo.to_string_lossy().into_owned();
        let t = Instant::now();
        let (code, read) = self.store_cmd(
            &scene,
            &["read", "--no-consume", &repo, "--wait", "300"],
            None,
        );
        ensure(code == 0 && read.contains("tag-prev is where"), || {
            format!("read exited {code}: {read}")
        })?;
        ensure(read.contains("ended without a handoff"), || {
            format!("no failure note: {read}")
        })?;
        ensure(t.elapsed() < Duration::from_secs(150), || {
            "read waited as if for an abandonment".into()
        })
    }

    fn both_installed(&self) -> Check {
        let scene = self.scene(true, true)?;
        self.stored(&scene, "tag-once")?;
        let (_, after) = self.around_clear(&scene, &["first", "/clear", "after the clear"])?;
        let copies = after.matches("tag-once is where").count();
        ensure(copies == 1, || format!("{copies} copies of the handoff"))
    }

    fn prompt_fallback_quiet(&self) -> Check {
        let scene = self.scene(true, false)?;
        self.stored(&scene, "tag-quiet")?;
        let mark = self.mock.mark();
        self.session(&scene, &["hello", "again"])?;
        let sent = self.mock.since(mark);
        ensure(
            sent.iter().all(|r| !r.contains("tag-quiet is where")),
            || "a startup session received the handoff from the prompt hook".into(),
        )
    }

    /// A client release that skips SessionStart after `/clear` is simulated by leaving
    /// SessionStart unregistered: the first prompt of the new session must still carry the
    /// handoff, through UserPromptSubmit's additionalContext, once.
    fn prompt_fallback_delivers(&self) -> Check {
        let scene = self.scene_with(
            false,
            &[
                ("UserPromptSubmit", "user-prompt-submit.sh"),
                ("SessionEnd", "session-end.sh"),
            ],
        )?;
        self.stored(&scene, "tag-fallback")?;
        let (_, after) =
            self.around_clear(&scene, &["first", "/clear", "after the clear", "and again"])?;
        ensure(after.contains("tag-fallback is where"), || {
            "the handoff did not reach the first prompt after /clear".into()
        })?;
        ensure(after.contains("(UserPromptSubmit, source: clear)"), || {
            "not delivered by the fallback".into()
        })?;
        ensure(after.matches("tag-fallback is where").count() == 1, || {
            "delivered more than once".into()
        })
    }
}

impl Suite {
    /// The one-command setup. `cargo install` into a scratch root (the workspace's
    /// build reused), `install claude` run by that binary into a settings.json holding another
    /// hook and other keys; nothing refers to the clone; a /clear carries the handoff, a
    /// compaction runs the (read-only) writer and installs its answer; `uninstall claude`
    /// leaves settings.json byte-identical and the skill gone.
    fn installed(&self) -> Check {
        let scene = self.scene(false, false)?;
        let settings = scene.home.join(".claude/settings.json");
        std::fs::create_dir_all(scene.home.join(".claude")).map_err(|e| e.to_string())?;
        let before = "{\n  \"model\": \"sonnet\",\n  \"hooks\": {\n    \"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"true\"}]}]\n  }\n}\n";
        std::fs::write(&settings, before).map_err(|e| e.to_string())?;
        let root = scene.home.parent().ok_or("scene")?.join("cargo-root");
        let target = Path::new(env!("CARGO_TARGET_TMPDIR"))
            .parent()
            .ok_or("target dir")?;
        let out = Command::new(env!("CARGO"))
            .args(["install", "--quiet", "--locked", "--offline", "--debug"])
            .args(["--features", "e2e", "--path", ROOT, "--root"])
            .arg(&root)
            .arg("--target-dir")
            .arg(target)
            .output()
            .map_err(|e| e.to_string())?;
        ensure(out.status.success(), || {
            format!("cargo install: {}", String::from_utf8_lossy(&out.stderr))
        })?;
        let bin = root.join("bin/handoff-store");
        let store = |args: &[&str]| -> Result<String, String> {
            let out = Command::new(&bin)
                .args(args)
                .current_dir(&scene.repo)
                .env_clear()
                .env("HOME", &scene.home)
                .env("PATH", "/usr/bin:/bin")
                .env("HANDOFF_STORE_DIR", &scene.store)
                .output()
                .map_err(|e| e.to_string())?;
            let text = String::from_utf8_lossy(&out.stdout).into_owned();
            ensure(out.status.success(), || {
                format!(
                    "handoff-store {args:?}: {text}{}",
                    String::from_utf8_lossy(&out.stderr)
                )
            })?;
            Ok(text)
        };
        store(&["install", "claude"])?;
        std::fs::write(scene.home.join(INSTALLED), "").map_err(|e| e.to_string())?;
        let during = std::fs::read_to_string(&settings).map_err(|e| e.to_string())?;
        let skill = scene.home.join(".claude/skills/handoff/SKILL.md");
        let skill_text = std::fs::read_to_string(&skill).map_err(|e| e.to_string())?;
        ensure(
            during.contains(&format!("{} hook session-start", bin.display()))
                && during.contains("\"Stop\""),
            || format!("settings.json after install: {during}"),
        )?;
        ensure(!during.contains(ROOT) && !skill_text.contains(ROOT), || {
            format!("the install refers to the clone ({ROOT}): {during}")
        })?;

        let slot = self.stored(&scene, "tag-installed")?;
        let (_, after) =
            self.around_clear(&scene, &["first question", "/clear", "after the clear"])?;
        ensure(after.contains("tag-installed is where"), || {
            "the handoff is not in the request after /clear".into()
        })?;
        ensure(
            std::fs::read_to_string(&slot).is_ok_and(|t| t.contains("progress: consumed")),
            || "the delivered handoff was not marked consumed".into(),
        )?;

        self.mock.set_writer_doc(Some(handoff("tag-installed-new")));
        let mark = self.mock.mark();
        let ran = self.session(&scene, &["one", "two", "three", "/compact", "after"]);
        let log = Self::writer_end(&scene);
        self.mock.set_writer_doc(None);
        ran?;
        let log = log?;
        ensure(log.contains(" rc=0 state=promoted "), || {
            format!("the writer's handoff was not installed: {log}")
        })?;
        self.writer_had_no_shell(&scene, mark, "Claude Code")?;

        let check = store(&["status", "--check"])?;
        ensure(check.trim() == "OK", || format!("status --check: {check}"))?;
        let said = store(&["status"])?;
        ensure(
            said.split('\n').any(|l| {
                l.split_whitespace().take(4).collect::<Vec<_>>()
                    == ["claude-code", "user", "installed=yes", "runs=yes"]
            }),
            || format!("status: {said}"),
        )?;
        store(&["uninstall", "claude"])?;
        let after = std::fs::read_to_string(&settings).map_err(|e| e.to_string())?;
        ensure(after == before, || {
            format!("settings.json after uninstall differs: {after}")
        })?;
        ensure(!skill.exists(), || "the skill is still there".into())
    }
}
