//! Codex CLI (`@openai/codex`): `install codex` (hook trust through `codex app-server`), a session
//! after a recorded /clear and after its own `/clear` in the real TUI, automatic compaction with
//! the writer through `codex exec`, and the shipped plugin.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::harness::{
    Check, Client, ROOT, STORE_BIN, Scenario, Scene, Suite, Tui, ensure, handoff, on_a_terminal,
    wait_for,
};

pub const SCENARIOS: &[Scenario] = &[
    (
        "codex: install codex trusts the hook; a session after /clear carries the handoff",
        Suite::codex_session_start,
    ),
    (
        "codex: an automatic compaction, steered by our compact_prompt, runs the writer through codex exec; its handoff replaces the slot",
        Suite::codex_compaction,
    ),
    (
        "codex: a compaction whose writer takes 20 s never blocks; the next turn after it carries the fresh handoff once",
        Suite::codex_slow_writer,
    ),
    (
        "codex: in the real TUI, the session after its own /clear carries the handoff",
        Suite::codex_tui_clear,
    ),
    (
        "codex: the shipped plugin installs from its marketplace; trusted, it carries the handoff after /clear",
        Suite::codex_plugin,
    ),
];

pub const CLIENT: Client = Client {
    package: "@openai/codex",
    version: "0.169.0",
    program: "codex",
    folder: "codex",
};

impl Suite {
    /// Codex CLI, installed by `handoff-store install codex` with nothing else done: the install
    /// trusts our hook through `codex app-server` (a hook Codex does not trust is skipped
    /// silently). A plain `codex exec` is quiet; after a `/clear` is recorded (Codex's own /clear
    /// lives in its TUI, which cannot run headless, so the marker is recorded the way our
    /// SessionEnd hook records a cleared session), the next `codex exec` carries the handoff to
    /// the model as a developer message, and the handoff is consumed.
    fn codex_session_start(&self) -> Check {
        let (scene, codex_home) = self.codex_scene("")?;
        let env = |cmd: &mut Command| self.codex_env(&scene, &codex_home, cmd);
        self.stored(&scene, "tag-codex")?;
        let said = self.codex_install(&scene, &codex_home)?;
        ensure(said.contains("trusted"), || {
            format!("install codex did not trust the hook: {said}")
        })?;
        let exec = |prompt: &str| -> Result<Vec<String>, String> {
            let mark = self.mock.mark();
            let mut cmd = Command::new(&self.codex);
            env(&mut cmd);
            let out = cmd
                .args(["exec", "--skip-git-repo-check", prompt])
                .output()
                .map_err(|e| e.to_string())?;
            self.saw_output(&out);
            if !out.status.success() {
                return Err(format!(
                    "codex exec exited {:?}: {}",
                    out.status.code(),
                    String::from_utf8_lossy(&out.stderr)
                ));
            }
            Ok(self.mock.since(mark))
        };
        let quiet = exec("first codex session")?;
        ensure(!quiet.is_empty(), || "codex sent the mock nothing".into())?;
        ensure(
            quiet.iter().all(|r| !r.contains("tag-codex is where")),
            || "a plain startup carried the handoff".into(),
        )?;
        ensure(
            quiet.iter().any(|r| r.contains("# Handoff available")),
            || "a plain startup was not offered the handoff".into(),
        )?;
        let receipt = self
            .printed()
            .contains("handoff-store: handoff for main offered");
        eprintln!("e2e: note    codex exec shows the offer's receipt to the person: {receipt}");
        let end = serde_json::json!({
            "session_id": "codex-before", "cwd": scene.repo, "reason": "clear",
            "hook_event_name": "SessionEnd"
        });
        let (code, _) = self.store_cmd(&scene, &["hook", "session-end"], Some(&end.to_string()));
        ensure(code == 0, || "session-end failed".into())?;
        let after = exec("after the clear, codex")?;
        let carried: Vec<&String> = after
            .iter()
            .filter(|r| r.contains("tag-codex is where"))
            .collect();
        ensure(!carried.is_empty(), || {
            format!("the handoff is not in what Codex sent: {after:?}")
        })?;
        let request: Value = serde_json::from_str(carried[0]).map_err(|e| e.to_string())?;
        let as_developer = request["input"].as_array().is_some_and(|items| {
            items
                .iter()
                .any(|i| i["role"] == "developer" && i.to_string().contains("tag-codex is where"))
        });
        ensure(as_developer, || {
            "the handoff did not arrive as a developer message".into()
        })?;
        let (_, orient) = self.store_cmd(&scene, &["orient"], None);
        ensure(orient.contains("progress=consumed"), || {
            format!("the delivered handoff is not consumed: {orient}")
        })
    }

    /// Codex's own `/clear`, in its TUI on a pseudo-terminal (util-linux `script`): the folder
    /// trusted the way Codex records the user's answer to its trust question, the user sends a
    /// prompt once the composer has settled (its request carries no handoff), types `/clear`,
    /// and the next prompt — Codex fires SessionStart with `clear` — has its request carry the
    /// handoff as a developer message; the handoff is then consumed. Each step waits for what
    /// the screen or the mock shows, not for a fixed time.
    ///
    /// The trust is recorded, not answered on the screen: Codex (0.169.0) discards pending input
    /// right after it draws a startup question (trust, update, migration), for up to a second,
    /// and nothing on the screen says when that ends. An Enter typed as soon as the question
    /// showed was eaten (every time, sent within a millisecond: the composer never came) or, on
    /// a loaded machine, ended Codex with `Error: timed out discarding buffered terminal input`.
    fn codex_tui_clear(&self) -> Check {
        let trusted = |repo: &Path| {
            format!(
                "[projects.\"{}\"]\ntrust_level = \"trusted\"\n",
                repo.display()
            )
        };
        let (scene, codex_home) = self.codex_scene("")?;
        let config = codex_home.join("config.toml");
        let mut text = std::fs::read_to_string(&config).map_err(|e| e.to_string())?;
        text.push_str(&trusted(&scene.repo));
        std::fs::write(&config, text).map_err(|e| e.to_string())?;
        self.stored(&scene, "tag-codex-tui")?;
        self.codex_install(&scene, &codex_home)?;
        let mut cmd = on_a_terminal(&format!("'{}' --no-alt-screen", self.codex.display()));
        self.codex_env(&scene, &codex_home, &mut cmd);
        let mut tui = Tui::start(cmd)?;
        let mark = self.mock.mark();
        let sent_with = |text: &str| self.sent_since(mark, text);
        let cleared = || Self::claimed_clear(&scene);
        let steps = (|| -> Check {
            // Settled: the footer names the model (while it loads, the header says `loading`).
            tui.wait("the settled composer", |s| {
                s.contains("Ask Codex to do anything") && s.contains("gpt-5 default")
            })?;
            tui.line("first codex tui prompt")?;
            wait_for("the first prompt's request", || {
                !sent_with("first codex tui prompt").is_empty()
            })?;
            tui.wait("the first answer", |s| s.contains("Worked for"))?;
            tui.line("/clear")?;
            tui.wait("the new chat", |s| s.contains("OpenAI Codex"))?;
            tui.line("after the codex tui clear")?;
            wait_for("the request after /clear", || {
                !sent_with("after the codex tui clear").is_empty()
            })?;
            // Codex fired SessionStart with `clear` (the claim our hook records is named so).
            wait_for("SessionStart(clear)", cleared)
        })();
        self.saw(&tui.everything());
        tui.stop();
        steps?;
        ensure(
            sent_with("first codex tui prompt")
                .iter()
                .all(|r| !r.contains("tag-codex-tui is where")),
            || "the first session carried the handoff".into(),
        )?;
        let after = sent_with("after the codex tui clear");
        let request: Value = serde_json::from_str(&after[0]).map_err(|e| e.to_string())?;
        let as_developer = request["input"].as_array().is_some_and(|items| {
            items.iter().any(|i| {
                i["role"] == "developer" && i.to_string().contains("tag-codex-tui is where")
            })
        });
        ensure(as_developer, || {
            format!("the handoff is not a developer message after /clear: {request}")
        })?;
        let (_, orient) = self.store_cmd(&scene, &["orient"], None);
        ensure(orient.contains("progress=consumed"), || {
            format!("the delivered handoff is not consumed: {orient}")
        })
    }

    /// Codex's automatic compaction: with `model_auto_compact_token_limit` set low and the mock
    /// reporting a large usage, the resumed session compacts, steered by the `compact_prompt`
    /// `install codex` set; PreCompact starts the background writer through `codex exec`
    /// (read-only: the mock asks it for a shell command and a file write first); PostCompact
    /// confirms; the writer's handoff replaces the slot and the old one is in history.
    fn codex_compaction(&self) -> Check {
        let (scene, codex_home) = self.codex_scene("model_auto_compact_token_limit = 1000\n")?;
        let slot = self.stored(&scene, "tag-before-compact")?;
        let said = self.codex_install(&scene, &codex_home)?;
        ensure(
            said.contains("pre_compact") && said.contains("post_compact"),
            || format!("install codex did not trust the compaction hooks: {said}"),
        )?;
        self.mock.set_writer_doc(Some(handoff("tag-codex-writer")));
        let mark = self.mock.mark();
        let run = |args: &[&str]| self.codex_run(&scene, &codex_home, args).map(|_| ());
        run(&[
            "exec",
            "--skip-git-repo-check",
            "OVERFLOW-NOW first codex turn",
        ])?;
        run(&[
            "exec",
            "--skip-git-repo-check",
            "resume",
            "--last",
            "second codex turn",
        ])?;
        let deadline = Instant::now() + Duration::from_secs(90);
        let replaced = || {
            std::fs::read_to_string(&slot).is_ok_and(|t| t.contains("tag-codex-writer is where"))
        };
        while !replaced() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(200));
        }
        self.mock.set_writer_doc(None);
        ensure(replaced(), || {
            format!(
                "the writer's handoff never reached the slot; writer log: {}",
                Self::log(&scene)
            )
        })?;
        self.writer_had_no_shell(&scene, mark, "Codex")?;
        // `install codex` set our compact_prompt: Codex's own compaction request carries it.
        ensure(
            !self
                .sent_since(mark, "for the model that carries on after this compaction")
                .is_empty(),
            || "no request of Codex's compaction carried our compact_prompt".into(),
        )?;
        self.kept_in_history(&scene, "tag-before-compact")
    }

    /// The second client with a prompt hook: Codex's automatic compaction while the
    /// writer takes 20 s. The compacted turn is never told to block (it gets the old handoff and
    /// one line); the first turn after the writer's handoff landed carries it, exactly once,
    /// through `UserPromptSubmit` (installed and trusted by `install codex`).
    fn codex_slow_writer(&self) -> Check {
        let (scene, codex_home) = self.codex_scene("model_auto_compact_token_limit = 1000\n")?;
        self.stored(&scene, "tag-codex-old")?;
        let said = self.codex_install(&scene, &codex_home)?;
        ensure(said.contains("user_prompt_submit"), || {
            format!("install codex did not trust the prompt hook: {said}")
        })?;
        self.mock.set_writer_doc(Some(handoff("tag-codex-fresh")));
        self.mock.set_writer_delay(Duration::from_secs(20));
        let mark = self.mock.mark();
        let run = |args: &[&str]| self.codex_run(&scene, &codex_home, args);
        // The session by its id: `--last` would pick the writer's own `codex exec` session.
        let first = run(&[
            "exec",
            "--json",
            "--skip-git-repo-check",
            "OVERFLOW-NOW first codex turn",
        ])?;
        let thread = first
            .lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .find_map(|v| v["thread_id"].as_str().map(str::to_string))
            .ok_or_else(|| format!("codex printed no thread id: {first}"))?;
        let resume = |prompt: &str| {
            run(&["exec", "--skip-git-repo-check", "resume", &thread, prompt]).map(|_| ())
        };
        resume("codex turn that compacts")?;
        let slot_fresh = || Self::log(&scene).contains(" state=promoted ");
        let deadline = Instant::now() + Duration::from_secs(90);
        while !slot_fresh() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(200));
        }
        self.mock.set_writer_doc(None);
        ensure(slot_fresh(), || {
            format!("the writer's handoff never landed: {}", Self::log(&scene))
        })?;
        resume("codex turn much later")?;
        let sent = self.mock.since(mark);
        for r in &sent {
            ensure(!r.contains("must be this Bash command"), || {
                format!("a request told the session to block: {r}")
            })?;
        }
        let asked = |prompt: &str| {
            sent.iter()
                .find(|r| r.contains(prompt) && !r.contains("You are writing a handoff"))
                .cloned()
                .ok_or_else(|| {
                    format!(
                        "no request for {prompt:?}: {} sent, {} hold it",
                        sent.len(),
                        sent.iter().filter(|r| r.contains(prompt)).count()
                    )
                })
        };
        ensure(
            sent.iter().any(|r| {
                r.contains("A fresher handoff is being written")
                    && r.contains("tag-codex-old is where")
                    && !r.contains("tag-codex-fresh is where")
            }),
            || "no turn was given the old handoff and the line that a fresher one comes".into(),
        )?;
        let later = asked("codex turn much later")?;
        ensure(
            later.matches("tag-codex-fresh is where").count() == 1,
            || format!("the fresh handoff is not in the next turn exactly once: {later}"),
        )
    }

    /// The shipped Codex plugin (`contrib/codex`, listed by `contrib/.agents/plugins/
    /// marketplace.json`): added with Codex's own `plugin marketplace add` and `plugin add`,
    /// trusted with `handoff-store trust codex` (what Codex's /hooks "Trust" records), its
    /// SessionStart hook carries the handoff after a recorded /clear.
    fn codex_plugin(&self) -> Check {
        let (scene, codex_home) = self.codex_scene("")?;
        self.stored(&scene, "tag-codex-plugin")?;
        let codex = |args: &[&str]| -> Result<String, String> {
            let mut cmd = Command::new(&self.codex);
            self.codex_env(&scene, &codex_home, &mut cmd);
            let out = cmd
                .env("HANDOFF_STORE_BIN", STORE_BIN)
                .args(args)
                .output()
                .map_err(|e| e.to_string())?;
            self.saw_output(&out);
            if !out.status.success() {
                return Err(format!(
                    "codex {args:?} exited {:?}: {}",
                    out.status.code(),
                    String::from_utf8_lossy(&out.stderr)
                ));
            }
            Ok(String::from_utf8_lossy(&out.stdout).into_owned())
        };
        let contrib = Path::new(ROOT).join("contrib");
        codex(&["plugin", "marketplace", "add", &contrib.to_string_lossy()])?;
        codex(&["plugin", "add", "handoff-store@handoff-store"])?;
        let mut trust = Command::new(STORE_BIN);
        self.codex_env(&scene, &codex_home, &mut trust);
        let out = trust
            .args(["trust", "codex"])
            .output()
            .map_err(|e| e.to_string())?;
        let said = String::from_utf8_lossy(&out.stdout).into_owned();
        ensure(
            out.status.success() && said.contains("handoff-store@handoff-store"),
            || {
                format!(
                    "trust codex: {said}{}",
                    String::from_utf8_lossy(&out.stderr)
                )
            },
        )?;
        let mut status = Command::new(STORE_BIN);
        self.codex_env(&scene, &codex_home, &mut status);
        let out = status
            .args(["status", "--format", "json"])
            .output()
            .map_err(|e| e.to_string())?;
        let rows: Value = serde_json::from_slice(&out.stdout).map_err(|e| e.to_string())?;
        let plugin_runs = rows["harnesses"].as_array().is_some_and(|rows| {
            rows.iter()
                .any(|r| r["harness"] == "codex" && r["scope"] == "plugin" && r["runs"] == "yes")
        });
        ensure(plugin_runs, || {
            format!("status does not see the trusted plugin: {rows}")
        })?;
        let end = serde_json::json!({
            "session_id": "codex-plugin-before", "cwd": scene.repo, "reason": "clear",
            "hook_event_name": "SessionEnd"
        });
        let (code, _) = self.store_cmd(&scene, &["hook", "session-end"], Some(&end.to_string()));
        ensure(code == 0, || "session-end failed".into())?;
        let mark = self.mock.mark();
        codex(&[
            "exec",
            "--skip-git-repo-check",
            "after the clear, codex plugin",
        ])?;
        let sent = self.mock.since(mark);
        ensure(
            sent.iter().any(|r| r.contains("tag-codex-plugin is where")),
            || format!("the plugin's hook did not carry the handoff: {sent:?}"),
        )
    }

    /// A scene with a `CODEX_HOME` whose config points Codex at the mock (plus `extra` lines).
    pub fn codex_scene(&self, extra: &str) -> Result<(Scene, PathBuf), String> {
        let scene = self.scene(false, false)?;
        let codex_home = scene.home.join(".codex");
        std::fs::create_dir_all(&codex_home).map_err(|e| e.to_string())?;
        let config = format!(
            "model = \"gpt-5\"\nmodel_provider = \"mock\"\n{extra}\n[model_providers.mock]\nname = \"mock\"\nbase_url = \"{}/v1\"\nwire_api = \"responses\"\n",
            self.mock.url()
        );
        std::fs::write(codex_home.join("config.toml"), config).map_err(|e| e.to_string())?;
        Ok((scene, codex_home))
    }

    /// The environment Codex and our binary run with in a Codex scene.
    pub fn codex_env(&self, scene: &Scene, codex_home: &Path, cmd: &mut Command) {
        cmd.env_clear()
            .current_dir(&scene.repo)
            .env("HOME", &scene.home)
            .env("CODEX_HOME", codex_home)
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("HANDOFF_STORE_DIR", &scene.store)
            .env("HANDOFF_CODEX_BIN", &self.codex)
            .env("CTX_FORK_TIMEOUT_SECONDS", "120")
            .stdin(Stdio::null());
    }

    /// `handoff-store install codex` in the scene, as a user would run it; what it said.
    /// `codex <args>` in the scene; it must succeed. What it printed on stdout.
    pub fn codex_run(
        &self,
        scene: &Scene,
        codex_home: &Path,
        args: &[&str],
    ) -> Result<String, String> {
        let mut cmd = Command::new(&self.codex);
        self.codex_env(scene, codex_home, &mut cmd);
        let out = cmd.args(args).output().map_err(|e| e.to_string())?;
        self.saw_output(&out);
        ensure(out.status.success(), || {
            format!(
                "codex {args:?} exited {:?}: {}",
                out.status.code(),
                String::from_utf8_lossy(&out.stderr)
            )
        })?;
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    pub fn codex_install(&self, scene: &Scene, codex_home: &Path) -> Result<String, String> {
        let mut install = Command::new(STORE_BIN);
        self.codex_env(scene, codex_home, &mut install);
        let out = install
            .args(["install", "codex"])
            .output()
            .map_err(|e| e.to_string())?;
        let said = String::from_utf8_lossy(&out.stdout).into_owned();
        ensure(out.status.success(), || {
            format!(
                "install codex failed: {said}{}",
                String::from_utf8_lossy(&out.stderr)
            )
        })?;
        Ok(said)
    }
}
