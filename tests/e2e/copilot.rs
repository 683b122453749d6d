//! Copilot CLI (`@github/copilot`) with a model provider of the user's own (no account, no
//! network): folder trust, a session after a recorded /clear and after its own `/clear` in the
//! real TUI, and compaction — failed (the slot untouched) and done (the writer through copilot's
//! headless mode).

use std::time::Duration;

use serde_json::Value;

use crate::harness::{
    Check, Client, STORE_BIN, Scenario, Scene, Suite, Tui, ensure, handoff, on_a_terminal, wait_for,
};

pub const SCENARIOS: &[Scenario] = &[
    (
        "copilot: install copilot, the folder trusted; with the user's own model provider a session after /clear carries the handoff",
        Suite::copilot_session_start,
    ),
    (
        "copilot: in the real TUI, the session after its own /clear carries the handoff",
        Suite::copilot_tui_clear,
    ),
    (
        "copilot: a failed compaction leaves the slot alone; a compaction runs the writer through copilot's headless mode and its handoff replaces the slot",
        Suite::copilot_compaction,
    ),
];

pub const CLIENT: Client = Client {
    package: "@github/copilot",
    version: "1.0.102",
    program: "copilot",
    folder: "copilot",
};

impl Suite {
    /// Copilot CLI with a model provider of the user's own (BYOK: `COPILOT_PROVIDER_BASE_URL` at
    /// the loopback mock and `COPILOT_OFFLINE=true`, which needs no GitHub account and touches no
    /// network). `install copilot` writes `.github/hooks/handoff-store.json`; until the folder is
    /// trusted Copilot does not load it (status says so) and nothing reaches the model. The
    /// user's trust step — the folder listed under `trustedFolders` in ~/.copilot/config.json,
    /// what Copilot's trust prompt records — and a plain `copilot -p` stays quiet (it sends
    /// source `new` with the prompt for every headless session); after a recorded /clear the
    /// next session's request carries the handoff, which is then consumed.
    fn copilot_session_start(&self) -> Check {
        let scene = self.scene(false, false)?;
        self.stored(&scene, "tag-copilot")?;
        let (code, said) = self.store_cmd(&scene, &["install", "copilot"], None);
        ensure(code == 0 && said.contains("trustedFolders"), || {
            format!("install copilot: {said}")
        })?;
        let file = scene.repo.join(".github/hooks/handoff-store.json");
        let hooks: Value = std::fs::read(&file)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .ok_or("no readable .github/hooks/handoff-store.json")?;
        ensure(hooks["version"] == 1, || format!("{hooks}"))?;
        let copilot_row = || {
            let (_, status) = self.store_cmd(&scene, &["status"], None);
            status
                .lines()
                .find(|l| l.split_whitespace().take(2).eq(["copilot", "project"]))
                .unwrap_or("")
                .to_string()
        };
        let prompt = |text: &str| -> Result<Vec<String>, String> {
            let mark = self.mock.mark();
            self.copilot_cmd(&scene, &["-p", text, "--allow-all-tools"])?;
            let sent = self.mock.since(mark);
            ensure(!sent.is_empty(), || "copilot sent the mock nothing".into())?;
            Ok(sent)
        };
        let carried = |sent: &[String]| sent.iter().any(|r| r.contains("tag-copilot is where"));
        let clear = |id: &str| -> Check {
            let end = serde_json::json!({
                "session_id": id, "cwd": scene.repo, "reason": "clear",
                "hook_event_name": "SessionEnd"
            });
            let (code, _) =
                self.store_cmd(&scene, &["hook", "session-end"], Some(&end.to_string()));
            ensure(code == 0, || "session-end failed".into())
        };

        ensure(copilot_row().contains("runs=no"), || {
            format!("status before the trust step: {}", copilot_row())
        })?;
        clear("copilot-untrusted")?;
        let untrusted = prompt("an untrusted folder")?;
        ensure(!carried(&untrusted), || {
            "Copilot ran the hook of a folder it does not trust".into()
        })?;

        Self::copilot_trust(&scene)?;
        ensure(copilot_row().contains("runs=yes"), || {
            format!("status after the trust step: {}", copilot_row())
        })?;
        // The marker of the untrusted run was never taken: this session delivers it.
        let after = prompt("after the clear, copilot")?;
        ensure(carried(&after), || {
            format!("the handoff is not in what Copilot sent: {after:?}")
        })?;
        let (_, orient) = self.store_cmd(&scene, &["orient"], None);
        ensure(orient.contains("progress=consumed"), || {
            format!("the delivered handoff is not consumed: {orient}")
        })?;
        let plain = prompt("a plain copilot session")?;
        ensure(!carried(&plain), || {
            "a plain headless session carried the handoff again".into()
        })?;
        // Read now: a fresh start is offered only an unread handoff.
        ensure(
            plain.iter().all(|r| !r.contains("# Handoff available")),
            || "a read handoff was offered again".into(),
        )?;
        self.stored(&scene, "tag-copilot-offer")?;
        let offered = prompt("a fresh copilot session")?;
        ensure(
            offered.iter().any(|r| r.contains("# Handoff available")),
            || format!("a plain start was not offered the handoff: {offered:?}"),
        )
    }

    /// Copilot's own `/clear`, in its TUI on a pseudo-terminal, the folder trusted: a quiet first
    /// prompt, `/clear`, and the next prompt's request carries the handoff, which is then
    /// consumed. Copilot (1.0.102, measured here) ends the session at /clear with
    /// `reason: user_exit` and starts the next one with `source: new` and the prompt — what a
    /// fresh start sends too; only the same Copilot process having ended a session tells them
    /// apart. A plain `copilot -p` afterwards, another process, stays quiet.
    fn copilot_tui_clear(&self) -> Check {
        let scene = self.scene(false, false)?;
        self.stored(&scene, "tag-copilot-tui")?;
        let (code, said) = self.store_cmd(&scene, &["install", "copilot"], None);
        ensure(code == 0, || format!("install copilot: {said}"))?;
        Self::copilot_trust(&scene)?;
        let mut cmd = on_a_terminal(&format!("'{}'", self.copilot.display()));
        cmd.env_clear()
            .current_dir(&scene.repo)
            .env("HOME", &scene.home)
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("HANDOFF_STORE_DIR", &scene.store)
            .envs(self.copilot_env(&scene)?);
        let mut tui = Tui::start(cmd)?;
        let mark = self.mock.mark();
        let sent_with = |text: &str| self.sent_since(mark, text);
        let cleared = || Self::claimed_clear(&scene);
        let steps = (|| -> Check {
            tui.wait("the prompt", |s| s.contains("/ commands"))?;
            tui.line("first copilot tui prompt")?;
            wait_for("the first prompt's request", || {
                !sent_with("first copilot tui prompt").is_empty()
            })?;
            // The turn is over when Copilot's own events file says so.
            wait_for("the first turn's end", || {
                std::fs::read_dir(scene.home.join(".copilot/session-state")).is_ok_and(|d| {
                    d.flatten().any(|e| {
                        std::fs::read_to_string(e.path().join("events.jsonl"))
                            .is_ok_and(|t| t.contains("\"assistant.turn_end\""))
                    })
                })
            })?;
            tui.line("/clear")?;
            // The first Enter takes the completion Copilot offers; the second runs it.
            std::thread::sleep(Duration::from_millis(700));
            tui.keys("\r");
            tui.wait("the new session", |s| s.contains("Started a fresh session"))?;
            tui.line("after the copilot tui clear")?;
            wait_for("the request after /clear", || {
                !sent_with("after the copilot tui clear").is_empty()
            })?;
            // Handled as a clear: this Copilot process had just ended a session.
            wait_for("sessionStart after /clear", cleared)
        })();
        self.saw(&tui.everything());
        tui.stop();
        steps?;
        ensure(
            sent_with("first copilot tui prompt")
                .iter()
                .all(|r| !r.contains("tag-copilot-tui is where")),
            || "the first session carried the handoff".into(),
        )?;
        ensure(
            sent_with("after the copilot tui clear")
                .iter()
                .any(|r| r.contains("tag-copilot-tui is where")),
            || "the handoff is not in the request after /clear".into(),
        )?;
        let (_, orient) = self.store_cmd(&scene, &["orient"], None);
        ensure(orient.contains("progress=consumed"), || {
            format!("the delivered handoff is not consumed: {orient}")
        })?;
        self.stored(&scene, "tag-copilot-tui-next")?;
        let mark = self.mock.mark();
        self.copilot_cmd(
            &scene,
            &["-p", "a plain copilot start", "--allow-all-tools"],
        )?;
        ensure(
            self.mock
                .since(mark)
                .iter()
                .all(|r| !r.contains("tag-copilot-tui-next is where")),
            || "a fresh copilot process took its start for a /clear".into(),
        )
    }

    /// Copilot CLI's compaction, with `install copilot` (sessionStart, preCompact, agentStop,
    /// sessionEnd) and the folder trusted. A prompt the mock refuses once as too large (413)
    /// makes Copilot compact and retry (`trigger: context_limit_retry`, a second prompt of a
    /// resumed session so there is history to compact). First the summary call fails: Copilot
    /// records `session.compaction_complete` with `success: false`, the writer's handoff stays
    /// out of the slot (byte-identical) and is kept in history. Then a compaction that succeeds:
    /// the writer run through Copilot's headless mode (the prompt on stdin) has its handoff
    /// replace the slot, the old one kept in history.
    fn copilot_compaction(&self) -> Check {
        let scene = self.scene(false, false)?;
        let slot = self.stored(&scene, "tag-copilot-old")?;
        let (code, said) = self.store_cmd(&scene, &["install", "copilot"], None);
        ensure(code == 0, || format!("install copilot: {said}"))?;
        Self::copilot_trust(&scene)?;
        let original = std::fs::read(&slot).map_err(|e| e.to_string())?;
        let session = |second: &str| -> Check {
            self.copilot_cmd(&scene, &["-p", "first copilot prompt", "--allow-all-tools"])?;
            self.copilot_cmd(&scene, &["--continue", "-p", second, "--allow-all-tools"])?;
            Ok(())
        };

        self.mock
            .set_writer_doc(Some(handoff("tag-copilot-refused")));
        self.mock.set_refuse_summary(true);
        let refused = session("OVERFLOW-NOW, and the summary fails");
        self.mock.set_refuse_summary(false);
        refused?;
        let log = Self::writer_end(&scene);
        self.mock.set_writer_doc(None);
        let log = log?;
        ensure(log.contains(" rc=0 state=held "), || {
            format!("the writer of a failed compaction was not held out: {log}")
        })?;
        ensure(std::fs::read(&slot).ok() == Some(original), || {
            "a failed compaction changed the slot".into()
        })?;
        self.kept_in_history(&scene, "tag-copilot-refused")?;

        self.mock
            .set_writer_doc(Some(handoff("tag-copilot-writer")));
        let mark = self.mock.mark();
        let ran = session("OVERFLOW-NOW, second");
        self.writer_replaces(&scene, &slot, "tag-copilot-writer", ran)?;
        self.writer_had_no_shell(&scene, mark, "Copilot CLI")?;
        self.kept_in_history(&scene, "tag-copilot-old")
    }

    /// Run Copilot CLI in the scene with a model provider of the user's own (the loopback mock,
    /// `COPILOT_OFFLINE=true`: no account, no network); what it printed.
    ///
    /// Copilot removes its provider settings (`COPILOT_OFFLINE`, `COPILOT_PROVIDER_*`) from the
    /// environment of the hooks it runs (1.0.102, measured), so the background writer started from
    /// preCompact would look for a GitHub login. A user of their own provider points
    /// `HANDOFF_COPILOT_BIN` at a script that sets those variables and runs copilot — the one
    /// the README shows, written here into the scene's home.
    pub fn copilot_cmd(&self, scene: &Scene, args: &[&str]) -> Result<String, String> {
        let env = self.copilot_env(scene)?;
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
        self.run_client(&self.copilot, scene, &env, args)
    }

    /// The environment of a Copilot run in `scene`: the user's own provider, and the writer's
    /// wrapper that sets it again (see [`Self::copilot_cmd`]).
    fn copilot_env(&self, scene: &Scene) -> Result<Vec<(&'static str, String)>, String> {
        let provider = [
            ("COPILOT_OFFLINE", "true".to_string()),
            (
                "COPILOT_PROVIDER_BASE_URL",
                format!("{}/v1", self.mock.url()),
            ),
            ("COPILOT_PROVIDER_API_KEY", "e2e-not-a-key".to_string()),
        ];
        let script: String = provider
            .iter()
            .map(|(k, v)| format!("export {k}='{v}'\n"))
            .collect();
        let wrapper = scene.home.join("bin/copilot-with-my-provider");
        std::fs::create_dir_all(scene.home.join("bin")).map_err(|e| e.to_string())?;
        std::fs::write(
            &wrapper,
            format!(
                "#!/bin/sh\n{script}exec '{}' \"$@\"\n",
                self.copilot.display()
            ),
        )
        .map_err(|e| e.to_string())?;
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755))
                .map_err(|e| e.to_string())?;
        }
        let mut env = vec![
            ("HANDOFF_STORE_BIN", STORE_BIN.to_string()),
            (
                "HANDOFF_COPILOT_BIN",
                wrapper.to_string_lossy().into_owned(),
            ),
            ("CTX_FORK_TIMEOUT_SECONDS", "120".to_string()),
            ("COPILOT_MODEL", "gpt-4o".to_string()),
        ];
        env.extend(provider);
        Ok(env)
    }

    /// The user's trust step: the repository listed under `trustedFolders` in
    /// ~/.copilot/config.json, what Copilot's folder-trust prompt records.
    pub fn copilot_trust(scene: &Scene) -> Check {
        let config = scene.home.join(".copilot/config.json");
        std::fs::create_dir_all(scene.home.join(".copilot")).map_err(|e| e.to_string())?;
        std::fs::write(
            &config,
            format!(
                "// the trust prompt's record\n{}\n",
                serde_json::json!({ "trustedFolders": [scene.repo] })
            ),
        )
        .map_err(|e| e.to_string())
    }
}
