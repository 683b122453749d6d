//! Tripwires (docs/hooks.md §10) in the real clients: a handoff whose dead end quotes
//! `make test-slow` and whose trap cites `src/legacy.rs`; the mock model runs `make test-slow`,
//! edits `src/legacy.rs`, runs `make test-slow` again and then an ordinary command. The request
//! after each first match carries its note exactly once; the repeat and the ordinary command add
//! nothing. Claude Code, Codex and Copilot CLI say it before the call (PreToolUse,
//! preToolUse), Gemini CLI right after it (AfterTool).

use crate::harness::{Check, Scenario, Scene, Suite, ensure, git};

pub const SCENARIOS: &[Scenario] = &[
    (
        "tripwire: install claude; Claude Code's PreToolUse tells the model of the dead end at make test-slow and of the trap at the edit of src/legacy.rs, once each",
        Suite::claude_tripwire,
    ),
    (
        "tripwire: install codex; Codex's tool hooks tell the model of the dead end at make test-slow and of the trap at the apply_patch of src/legacy.rs, once each",
        Suite::codex_tripwire,
    ),
    (
        "tripwire: install copilot; Copilot CLI's preToolUse does the same before each call, the edit an apply_patch",
        Suite::copilot_tripwire,
    ),
    (
        "tripwire: install opencode; its plugin appends the note to the output of each first matching call (tool.execute.after)",
        Suite::opencode_tripwire,
    ),
    (
        "tripwire: install cline; Cline's PreToolUse script does the same before each call (its CLI's run_commands and editor)",
        Suite::cline_tripwire,
    ),
    (
        "tripwire: install gemini; Gemini CLI's AfterTool does the same right after each call",
        Suite::gemini_tripwire,
    ),
];

const DEAD_END: &str = "Your handoff lists as a dead end";
const TRAP: &str = "Your handoff lists as a trap";

/// The handoff: one dead end quoting the command, one trap citing the file.
const HANDOFF: &str = "# Handoff — e2e tripwire
status: the slow tests hang.

## Do not re-derive

### Decisions
- None.

### Dead ends
- `make test-slow` hangs on the fixture lock; it never finished.

### Traps
- `src/legacy.rs:1` looks dead and is loaded by name.

## Next
1. Fix the fixture lock.

## Pointers
```text
src/legacy.rs:1 | fn legacy
```
";

impl Suite {
    /// The scene's repository with the Makefile and the legacy file, the handoff stored, and
    /// the client's hooks installed by `install <word>`.
    pub fn tripwire_scene(&self, scene: &Scene, word: &str) -> Check {
        self.tripwire_scene_with(scene, |s| {
            let (code, out) = self.store_cmd(s, &["install", word], None);
            ensure(code == 0, || format!("install {word}: {out}")).map(|_| String::new())
        })
    }

    /// [`Suite::tripwire_scene`], the hooks installed by `install`.
    pub fn tripwire_scene_with(
        &self,
        scene: &Scene,
        install: impl FnOnce(&Scene) -> Result<String, String>,
    ) -> Check {
        std::fs::create_dir_all(scene.repo.join("src")).map_err(|e| e.to_string())?;
        std::fs::write(
            scene.repo.join("Makefile"),
            "test-slow:\n\t@echo slow tests ran\n",
        )
        .map_err(|e| e.to_string())?;
        std::fs::write(scene.repo.join("src/legacy.rs"), "fn legacy() {}\n")
            .map_err(|e| e.to_string())?;
        git(&scene.repo, &["add", "-A"])?;
        git(&scene.repo, &["commit", "-q", "-m", "legacy"])?;
        let repo = scene.repo.to_string_lossy().into_owned();
        let (code, out) = self.store_cmd(scene, &["write", "--checkout", &repo], Some(HANDOFF));
        ensure(code == 0, || format!("write exited {code}: {out}"))?;
        install(scene).map(|_| ())
    }

    /// The walk's requests, by how many tool results each carries (`marker` counts them in
    /// the client's spelling): each request's count of the dead end's and the trap's notes.
    fn notes_by_step(&self, mark: usize, marker: &str) -> Vec<(usize, usize, usize)> {
        let mut steps: Vec<(usize, usize, usize)> = self
            .mock
            .since(mark)
            .iter()
            .filter(|r| r.contains("E2E-TRIPWIRE"))
            .map(|r| {
                (
                    r.matches(marker).count(),
                    r.matches(DEAD_END).count(),
                    r.matches(TRAP).count(),
                )
            })
            .collect();
        steps.sort_unstable();
        steps.dedup();
        steps
    }

    /// The notes the walk's requests carried: after the command, (1, 0); after the edit
    /// (`edit_step`), (1, 1); and no more after the repeat and the ordinary command (`last`).
    fn walk_heard(steps: &[(usize, usize, usize)], edit_step: usize, last: usize) -> Check {
        let at = |k: usize| steps.iter().find(|s| s.0 == k).map(|s| (s.1, s.2));
        ensure(at(0) == Some((0, 0)), || {
            format!("before any call: {steps:?}")
        })?;
        ensure(at(1) == Some((1, 0)), || {
            format!("the request after `make test-slow` should carry the dead end once: {steps:?}")
        })?;
        ensure(at(edit_step) == Some((1, 1)), || {
            format!("the request after the edit should carry the trap once: {steps:?}")
        })?;
        for k in edit_step + 1..=last {
            ensure(at(k) == Some((1, 1)), || {
                format!("the repeat and the ordinary command add nothing (step {k}): {steps:?}")
            })?;
        }
        Ok(())
    }

    fn claude_tripwire(&self) -> Check {
        let scene = self.scene(false, false)?;
        self.tripwire_scene(&scene, "claude")?;
        let prompt = format!("E2E-TRIPWIRE in {} now", scene.repo.display());
        let mark = self.mock.mark();
        self.session_args(&scene, &["--allowedTools", "Bash,Read,Edit"], &[&prompt])?;
        let steps = self.notes_by_step(mark, "\"tool_result\"");
        // Calls: make, read (no note: reading is how one checks), edit, make again, git status.
        Self::walk_heard(&steps, 3, 5)?;
        let edited =
            std::fs::read_to_string(scene.repo.join("src/legacy.rs")).map_err(|e| e.to_string())?;
        // Headless Claude Code prints no PreToolUse hook output (its stream shows SessionStart's
        // only), so the receipt is checked in tests/cli/tripwires.rs, not here.
        ensure(edited.contains("fn legacy_kept()"), || {
            format!("the edit was not made (a tripwire never blocks): {edited}")
        })
    }

    fn gemini_tripwire(&self) -> Check {
        let scene = self.scene(false, false)?;
        let settings = scene.home.join(".gemini/settings.json");
        std::fs::create_dir_all(scene.home.join(".gemini")).map_err(|e| e.to_string())?;
        std::fs::write(
            &settings,
            "{\"security\": {\"auth\": {\"selectedType\": \"gemini-api-key\"}}}\n",
        )
        .map_err(|e| e.to_string())?;
        self.tripwire_scene(&scene, "gemini")?;
        let prompt = format!("E2E-TRIPWIRE in {} now", scene.repo.display());
        let mark = self.mock.mark();
        self.gemini_cmd(
            &scene,
            &[
                "-m",
                "gemini-2.5-flash",
                "--approval-mode",
                "yolo",
                "-p",
                &prompt,
            ],
        )?;
        let steps = self.notes_by_step(mark, "\"functionResponse\"");
        // Calls: make, write, make again, git status.
        Self::walk_heard(&steps, 2, 4)?;
        let written =
            std::fs::read_to_string(scene.repo.join("src/legacy.rs")).map_err(|e| e.to_string())?;
        ensure(written.contains("fn legacy_kept()"), || {
            format!("the write was not made (a tripwire never blocks): {written}")
        })
    }

    fn codex_tripwire(&self) -> Check {
        let (scene, codex_home) = self.codex_scene("")?;
        self.tripwire_scene_with(&scene, |_| self.codex_install(&scene, &codex_home))?;
        let prompt = format!("E2E-TRIPWIRE in {} now", scene.repo.display());
        let mark = self.mock.mark();
        self.codex_run(
            &scene,
            &codex_home,
            &[
                "exec",
                "--skip-git-repo-check",
                "--dangerously-bypass-approvals-and-sandbox",
                &prompt,
            ],
        )?;
        let steps = self.notes_by_step(mark, "_call_output\"");
        // Calls: make, the patch through the shell, make again, git status.
        Self::walk_heard(&steps, 2, 4)?;
        let edited =
            std::fs::read_to_string(scene.repo.join("src/legacy.rs")).map_err(|e| e.to_string())?;
        ensure(edited.contains("fn legacy_kept()"), || {
            format!("the patch was not applied (a tripwire never blocks): {edited}")
        })
    }

    fn copilot_tripwire(&self) -> Check {
        let scene = self.scene(false, false)?;
        self.tripwire_scene_with(&scene, |s| {
            let (code, out) = self.store_cmd(s, &["install", "copilot"], None);
            ensure(code == 0, || format!("install copilot: {out}"))?;
            Self::copilot_trust(s).map(|_| out)
        })?;
        let prompt = format!("E2E-TRIPWIRE in {} now", scene.repo.display());
        let mark = self.mock.mark();
        self.copilot_cmd(&scene, &["-p", &prompt, "--allow-all-tools"])?;
        let steps = self.notes_by_step(mark, "\"role\":\"tool\"");
        // Calls: make, the patch (its freeform apply_patch), make again, git status.
        Self::walk_heard(&steps, 2, 4)?;
        let edited =
            std::fs::read_to_string(scene.repo.join("src/legacy.rs")).map_err(|e| e.to_string())?;
        ensure(edited.contains("fn legacy_kept()"), || {
            format!("the patch was not applied (a tripwire never blocks): {edited}")
        })
    }

    fn opencode_tripwire(&self) -> Check {
        let scene = self.scene(false, false)?;
        self.tripwire_scene_with(&scene, |s| {
            let (code, out) = self.store_cmd(s, &["install", "opencode", "--project"], None);
            ensure(code == 0, || format!("install opencode: {out}")).map(|_| out)
        })?;
        let server = crate::opencode::Server::start(self, &scene)?;
        let prompt = format!("E2E-TRIPWIRE in {} now", scene.repo.display());
        let mark = self.mock.mark();
        let session = server.session()?;
        server.say(&session, &prompt)?;
        let steps = self.notes_by_step(mark, "\"tool_result\"");
        // Calls: make, edit, make again, git status.
        Self::walk_heard(&steps, 2, 4)?;
        let edited =
            std::fs::read_to_string(scene.repo.join("src/legacy.rs")).map_err(|e| e.to_string())?;
        ensure(edited.contains("fn legacy_kept()"), || {
            format!("the edit was not made (a tripwire never blocks): {edited}")
        })
    }

    fn cline_tripwire(&self) -> Check {
        let scene = self.scene(false, false)?;
        self.tripwire_scene(&scene, "cline")?;
        let prompt = format!("E2E-TRIPWIRE in {} now", scene.repo.display());
        let mark = self.mock.mark();
        let ran = self
            .cline_auth(&scene)
            .and_then(|_| self.run_client(&self.cline, &scene, &[], &[&prompt]));
        // Cline's CLI leaves its hub daemon running after the task; it must not outlive the scene.
        crate::harness::stop_left_behind(&scene.home);
        ran?;
        let steps = self.notes_by_step(mark, "\"role\":\"tool\"");
        // Calls: make, the edit, make again, git status.
        Self::walk_heard(&steps, 2, 4)?;
        let edited =
            std::fs::read_to_string(scene.repo.join("src/legacy.rs")).map_err(|e| e.to_string())?;
        ensure(edited.contains("fn legacy_kept()"), || {
            format!("the edit was not made (a tripwire never blocks): {edited}")
        })?;
        // The task's start is a reset; `impact` reads the task from the messages file the CLI
        // wrote, named by its hooks' session: one call before the edit, four in all.
        let (code, out) = self.store_cmd(&scene, &["impact", "--json"], None);
        ensure(code == 0, || format!("impact: {out}"))?;
        let v: serde_json::Value = serde_json::from_str(&out).map_err(|e| format!("{e}: {out}"))?;
        let r = &v["resets"][0];
        ensure(
            r["client"] == "cline"
                && r["transcript"] == "read"
                && r["to_first_edit"]["tool_calls"] == 1
                && r["tool_calls"] == 4
                && r["repeats"] == 3,
            || format!("the task's calls, from its messages file: {out}"),
        )
    }
}
