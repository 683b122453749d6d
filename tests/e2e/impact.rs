//! `impact` (docs/store.md §9.20) on transcripts the real clients wrote: after a `/clear`, the
//! mock model makes four tool calls before its first edit — an ordinary command, a read of a
//! file the handoff cites, the dead end's command, the cited file read again — and `impact
//! --json` counts exactly those from the session's own transcript. A held-out `/clear` gets the
//! one-line offer, never the handoff, and is logged in its arm.

use std::process::Command;

use serde_json::Value;

use crate::harness::{Check, Scenario, Scene, Suite, ensure};

pub const SCENARIOS: &[Scenario] = &[
    (
        "impact: claude: after /clear, impact counts from Claude Code's transcript the 4 tool calls before the first edit, 2 reads of a cited file and 1 dead end repeated; a held-out /clear gets one line and is logged as holdout",
        Suite::claude_impact,
    ),
    (
        "impact: claude: a compaction whose summary keeps 7 of 9 decisions and drops a trap: PostCompact's receipt and the reset log say so",
        Suite::claude_audit,
    ),
    (
        "impact: codex: the same from Codex's rollout file",
        Suite::codex_impact,
    ),
];

impl Suite {
    /// `impact --json` in the scene: its resets.
    fn resets(&self, scene: &Scene) -> Result<Vec<Value>, String> {
        let (code, out) = self.store_cmd(scene, &["impact", "--json"], None);
        ensure(code == 0, || format!("impact exited {code}: {out}"))?;
        let v: Value = serde_json::from_str(&out).map_err(|e| format!("{e}: {out}"))?;
        Ok(v["resets"].as_array().cloned().unwrap_or_default())
    }

    /// The walk's reset, as `impact` measured it from the transcript.
    fn walked(reset: &Value) -> Check {
        ensure(reset["transcript"] == "read", || {
            format!("the transcript was not read: {reset}")
        })?;
        ensure(reset["to_first_edit"]["tool_calls"] == 4, || {
            format!("4 tool calls before the first edit: {reset}")
        })?;
        ensure(
            reset["to_first_edit"]["tokens"]
                .as_u64()
                .is_some_and(|t| t > 0),
            || format!("the tokens to the first edit: {reset}"),
        )?;
        ensure(reset["cited_reads"] == 2, || {
            format!("2 reads of the cited file: {reset}")
        })?;
        ensure(reset["repeats"] == 1, || {
            format!("1 dead end repeated: {reset}")
        })
    }

    fn claude_impact(&self) -> Check {
        let scene = self.scene(false, false)?;
        self.tripwire_scene(&scene, "claude")?;
        let prompt = format!("E2E-IMPACT in {} now", scene.repo.display());
        let tools = ["--allowedTools", "Bash,Read,Edit,Write"];
        self.session_args(&scene, &tools, &["first", "/clear", &prompt])?;
        let new = std::fs::read_to_string(scene.repo.join("src/new.rs")).unwrap_or_default();
        ensure(new.contains("fn new()"), || {
            "the walk's edit was not made".into()
        })?;
        let resets = self.resets(&scene)?;
        ensure(resets.len() == 1, || {
            format!("one reset logged: {resets:?}")
        })?;
        ensure(
            resets[0]["arm"] == "delivered" && resets[0]["source"] == "clear",
            || format!("{}", resets[0]),
        )?;
        Self::walked(&resets[0])?;

        crate::harness::git(&scene.repo, &["config", "handoff.holdout", "2"])?;
        let mark = self.mock.mark();
        self.session_env(
            &scene,
            &[("HANDOFF_HOLDOUT_DRAW", "held")],
            &tools,
            &["second", "/clear", "after the held-out clear"],
        )?;
        let sent = self.mock.since(mark);
        let after = sent
            .iter()
            .find(|r| r.contains("after the held-out clear"))
            .ok_or("no request after the held-out /clear")?;
        ensure(
            after.contains("# Handoff available (SessionStart, source: clear, held out)")
                && !after.contains("Fix the fixture lock"),
            || format!("a held-out reset gets one line, not the handoff: {after}"),
        )?;
        let resets = self.resets(&scene)?;
        ensure(resets.len() == 2 && resets[1]["arm"] == "holdout", || {
            format!("the held-out reset is logged in its arm: {resets:?}")
        })
    }

    fn codex_impact(&self) -> Check {
        let (scene, codex_home) = self.codex_scene("")?;
        self.tripwire_scene_with(&scene, |_| self.codex_install(&scene, &codex_home))?;
        // The user's /clear before this session, as SessionEnd records it.
        let end = serde_json::json!({
            "session_id": "codex-before", "cwd": scene.repo, "reason": "clear",
            "hook_event_name": "SessionEnd"
        });
        let (code, _) = self.store_cmd(&scene, &["hook", "session-end"], Some(&end.to_string()));
        ensure(code == 0, || "session-end failed".into())?;
        let prompt = format!("E2E-IMPACT in {} now", scene.repo.display());
        let mut cmd = Command::new(&self.codex);
        self.codex_env(&scene, &codex_home, &mut cmd);
        let out = cmd
            .args([
                "exec",
                "--skip-git-repo-check",
                "--dangerously-bypass-approvals-and-sandbox",
                &prompt,
            ])
            .output()
            .map_err(|e| e.to_string())?;
        self.saw_output(&out);
        ensure(out.status.success(), || {
            format!("codex exec: {}", String::from_utf8_lossy(&out.stderr))
        })?;
        let new = std::fs::read_to_string(scene.repo.join("src/new.rs")).unwrap_or_default();
        ensure(new.contains("fn new()"), || {
            "the walk's patch was not applied".into()
        })?;
        let resets = self.resets(&scene)?;
        ensure(resets.len() == 1, || {
            format!("one reset logged: {resets:?}")
        })?;
        ensure(resets[0]["client"] == "codex", || format!("{}", resets[0]))?;
        Self::walked(&resets[0])
    }

    fn claude_audit(&self) -> Check {
        let scene = self.scene(true, false)?;
        std::fs::create_dir_all(scene.repo.join("src")).map_err(|e| e.to_string())?;
        std::fs::write(scene.repo.join("src/legacy.rs"), "fn legacy() {}\n")
            .map_err(|e| e.to_string())?;
        crate::harness::git(&scene.repo, &["add", "-A"])?;
        crate::harness::git(&scene.repo, &["commit", "-q", "-m", "legacy"])?;
        let repo = scene.repo.to_string_lossy().into_owned();
        let (code, out) = self.store_cmd(&scene, &["write", "--checkout", &repo], Some(AUDITED));
        ensure(code == 0, || format!("write: {out}"))?;
        self.mock.set_summary(Some(SUMMARY.into()));
        let ran = self.session_args(&scene, &[], &["one", "two", "three", "/compact", "after"]);
        self.mock.set_summary(None);
        ran?;
        let resets = self.resets(&scene)?;
        let compacted = resets
            .iter()
            .find(|r| r["source"] == "compact")
            .ok_or_else(|| format!("no compaction logged: {resets:?}"))?;
        let audit = &compacted["audit"];
        ensure(
            audit["decisions"] == serde_json::json!({"kept": 7, "of": 9})
                && audit["traps"] == serde_json::json!({"kept": 1, "of": 2}),
            || format!("the summary kept 7 of 9 decisions, 1 of 2 traps: {audit}"),
        )?;
        ensure(
            audit["dropped"].as_array().is_some_and(|d| {
                d.iter().any(|x| {
                    x.as_str()
                        .is_some_and(|t| t.starts_with("Deleting expired carts"))
                })
            }),
            || format!("the dropped trap is named: {audit}"),
        )?;
        // Claude Code prints PostCompact's systemMessage with the compaction's own lines.
        ensure(
            self.printed()
                .contains("the compaction's summary kept 7 of 9 decisions, 1 of 2 traps"),
            || "the person did not see what the summary kept".into(),
        )
    }
}

/// A handoff of nine decisions and two traps, each in words of its own.
const AUDITED: &str = "# Handoff — e2e audit
status: the shop's checkout works end to end.

## Do not re-derive

### Decisions
- Store sessions in Redis, not Postgres, because expiry is native.
- Render invoices with Twig templates instead of Blade.
- Queue emails through SQS rather than cron polling.
- Hash passwords with Argon2id instead of bcrypt.
- Paginate the orders API with cursors, not offsets.
- Validate webhooks by HMAC signature before parsing.
- Cache product pages for five minutes at the edge.
- Log payment failures to Sentry with the order number.
- Retry flaky shipping calls three times with backoff.

### Dead ends
- None.

### Traps
- The legacy tax table looks unused but the nightly report reads it.
- Deleting expired carts also deletes saved wishlists.

## Next
1. Ship the checkout.

## Pointers
```text
src/legacy.rs:1 | fn legacy
```
";

/// The mock's compaction summary: seven of the decisions and one trap, reworded.
const SUMMARY: &str = "<summary>Decisions: sessions are stored in Redis (not Postgres) since expiry is native; invoices render through Twig templates, not Blade; emails are queued through SQS instead of cron polling; passwords hashed with Argon2id, not bcrypt; the orders API paginates with cursors rather than offsets; webhooks are validated by their HMAC signature before parsing; product pages are cached five minutes at the edge. Trap: the legacy tax table looks unused, but the nightly report reads it.</summary>";
