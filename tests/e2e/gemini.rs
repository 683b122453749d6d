//! Gemini CLI (`@google/gemini-cli`): `install gemini` merged into the user's settings.json and
//! undone byte for byte, the shipped extension, its own headless `/clear`, and compression —
//! refused (the slot untouched) and done (the writer through `gemini -p` on the conversation as
//! it was before).

use std::path::{Path, PathBuf};

use crate::harness::{
    Check, Client, ROOT, STORE_BIN, Scenario, Scene, Suite, ensure, handoff, walk_files,
};

pub const SCENARIOS: &[Scenario] = &[
    (
        "gemini: install gemini merges into settings.json; a session after /clear carries the handoff; uninstall restores the file",
        Suite::gemini_session_start,
    ),
    (
        "gemini: the shipped extension validates and, linked, carries the handoff after /clear",
        Suite::gemini_extension,
    ),
    (
        "gemini: a refused compression leaves the slot alone; a compression runs the writer through gemini -p and its handoff replaces the slot",
        Suite::gemini_compaction,
    ),
];

pub const CLIENT: Client = Client {
    package: "@google/gemini-cli",
    version: "0.61.0",
    program: "gemini",
    folder: "gemini-cli",
};

impl Suite {
    /// Gemini CLI: the user's settings.json (a comment, the API-key auth) gets our hook from
    /// `handoff-store install gemini`; the only other step is the folder trust a user gives a
    /// headless run (`GEMINI_CLI_TRUST_WORKSPACE=true`). A plain `gemini -p` is quiet; after a
    /// recorded /clear, the next one carries the handoff inside the model request and consumes
    /// it; `uninstall gemini` leaves settings.json byte-identical to what the user had.
    fn gemini_session_start(&self) -> Check {
        let (scene, settings, mine) = self.gemini_scene()?;
        let (code, said) = self.store_cmd(&scene, &["install", "gemini"], None);
        ensure(code == 0, || format!("install gemini: {said}"))?;
        self.gemini_clear_carries(&scene)?;
        let (code, said) = self.store_cmd(&scene, &["uninstall", "gemini"], None);
        ensure(code == 0, || format!("uninstall gemini: {said}"))?;
        let back = std::fs::read_to_string(&settings).map_err(|e| e.to_string())?;
        ensure(back == mine, || {
            format!("settings.json is not as it was: {back}")
        })
    }

    /// The shipped Gemini CLI extension (`contrib/gemini`): `gemini extensions validate` passes,
    /// and linked the way a user links it (`--consent` acknowledges that it runs hooks), its
    /// SessionStart hook carries the handoff after a recorded /clear like `install gemini` does.
    fn gemini_extension(&self) -> Check {
        let (scene, _, _) = self.gemini_scene()?;
        let extension = Path::new(ROOT).join("contrib/gemini");
        let extension = extension.to_string_lossy();
        self.gemini_cmd(&scene, &["extensions", "validate", &extension])?;
        self.gemini_cmd(&scene, &["extensions", "link", &extension, "--consent"])?;
        self.gemini_clear_carries(&scene)
    }

    /// Gemini CLI's compression, with `install gemini` (SessionStart, PreCompress, AfterAgent).
    /// A first session, then resumed ones (`--resume latest`; a compression needs two prompts of
    /// history, and a resume appends the same restart record a compression does). The user's
    /// settings name the model (the writer uses it too) and set `model.compressionThreshold` to
    /// 0.001 (about 1,000 tokens), and a prompt the mock reports
    /// at 5,000 tokens makes Gemini compress before its next call. First the compressor returns
    /// more than it was given: Gemini refuses (the history would grow), PreCompress has fired,
    /// and yet no writer starts and the slot stays byte-identical. Then a compression that succeeds: the writer
    /// runs through `gemini -p` on a copy of the session file cut where the compression began
    /// (the conversation before it, not the compressed history), and its handoff replaces the
    /// slot, the old one kept in history.
    fn gemini_compaction(&self) -> Check {
        let (scene, settings, _) = self.gemini_scene()?;
        let low = "{\n  \"security\": {\"auth\": {\"selectedType\": \"gemini-api-key\"}},\n  \"model\": {\"name\": \"gemini-2.5-flash\", \"compressionThreshold\": 0.001}\n}\n";
        std::fs::write(&settings, low).map_err(|e| e.to_string())?;
        let slot = self.stored(&scene, "tag-gemini-old")?;
        let (code, said) = self.store_cmd(&scene, &["install", "gemini"], None);
        ensure(code == 0, || format!("install gemini: {said}"))?;
        let original = std::fs::read(&slot).map_err(|e| e.to_string())?;
        let compressions = |requests: &[String]| {
            requests
                .iter()
                .filter(|r| r.contains("generate the updated <state_snapshot>"))
                .count()
        };
        let flash = ["-m", "gemini-2.5-flash"];
        let resumed = |prompt: &str| -> Result<Vec<String>, String> {
            let mark = self.mock.mark();
            let args = [&flash[..], &["--resume", "latest", "-p", prompt]].concat();
            self.gemini_cmd(&scene, &args)?;
            Ok(self.mock.since(mark))
        };
        self.gemini_cmd(
            &scene,
            &[&flash[..], &["-p", "first gemini prompt"]].concat(),
        )?;

        self.mock.set_refuse_summary(true);
        let refused = resumed("OVERFLOW-NOW, and the summary comes back empty");
        self.mock.set_refuse_summary(false);
        let refused = refused?;
        ensure(compressions(&refused) == 1, || {
            format!(
                "Gemini did not try to compress once ({} requests)",
                refused.len()
            )
        })?;
        // PreCompress and AfterAgent are synchronous hooks: a writer they started is already in
        // the log when the client has exited.
        ensure(!Self::log(&scene).contains("spawned"), || {
            format!(
                "a writer started for a refused compression: {}",
                Self::log(&scene)
            )
        })?;
        ensure(std::fs::read(&slot).ok() == Some(original), || {
            "a refused compression changed the slot".into()
        })?;

        self.mock.set_writer_doc(Some(handoff("tag-gemini-writer")));
        let mark = self.mock.mark();
        let ran = resumed("OVERFLOW-NOW, second");
        self.writer_replaces(&scene, &slot, "tag-gemini-writer", ran.map(|_| ()))?;
        self.writer_had_no_shell(&scene, mark, "Gemini CLI")?;
        let sent = self.mock.since(mark);
        let prompt = sent
            .iter()
            .rev()
            .find(|r| r.contains("You are writing a handoff for a Gemini CLI session"))
            .ok_or("the writer's prompt never reached the model")?;
        let copy = prompt
            .split("\\n")
            .skip_while(|l| !l.ends_with("as it was before, a JSONL file at:"))
            .nth(1)
            .filter(|l| l.ends_with("/transcript.jsonl"))
            .ok_or_else(|| format!("the prompt names no transcript copy: {prompt}"))?;
        let copied = std::fs::read(copy).map_err(|e| format!("{copy}: {e}"))?;
        // The copy is the live session file up to the compression's restart record.
        let chats = scene.home.join(".gemini/tmp");
        let live = walk_files(&chats)
            .into_iter()
            .filter_map(|p| std::fs::read(p).ok())
            .find(|b| b.starts_with(&copied) && b.len() > copied.len())
            .ok_or("no session file begins with the writer's copy: the user's live session file is gone (Gemini's session cleanup in the writer deletes it)")?;
        let text = String::from_utf8_lossy(&copied);
        ensure(
            text.contains("OVERFLOW-NOW, second")
                && live[copied.len()..].starts_with(br#"{"$set":{"sessionId":"#),
            || format!("the copy is not the conversation up to the compression: {text}"),
        )?;
        self.kept_in_history(&scene, "tag-gemini-old")
    }

    /// A scene whose user settings.json (a comment, the API-key auth) is the user's own; its
    /// path and text.
    fn gemini_scene(&self) -> Result<(Scene, PathBuf, &'static str), String> {
        let scene = self.scene(false, false)?;
        let settings = scene.home.join(".gemini/settings.json");
        let mine = "{\n  // the key comes from GEMINI_API_KEY\n  \"security\": {\"auth\": {\"selectedType\": \"gemini-api-key\"}}\n}\n";
        std::fs::create_dir_all(scene.home.join(".gemini")).map_err(|e| e.to_string())?;
        std::fs::write(&settings, mine).map_err(|e| e.to_string())?;
        self.stored(&scene, "tag-gemini")?;
        Ok((scene, settings, mine))
    }

    /// Run Gemini CLI in the scene; what it printed.
    pub fn gemini_cmd(&self, scene: &Scene, args: &[&str]) -> Result<String, String> {
        let url = self.mock.url();
        let gemini = self.gemini.to_string_lossy();
        let env = [
            ("HANDOFF_STORE_BIN", STORE_BIN),
            ("GEMINI_API_KEY", "e2e-not-a-key"),
            ("GOOGLE_GEMINI_BASE_URL", url.as_str()),
            ("GEMINI_CLI_TRUST_WORKSPACE", "true"),
            ("HANDOFF_GEMINI_BIN", &*gemini),
            ("CTX_FORK_TIMEOUT_SECONDS", "120"),
        ];
        self.run_client(&self.gemini, scene, &env, args)
    }

    /// A plain `gemini -p` is quiet; Gemini's own `/clear` (its clear command runs headless
    /// too) starts a new session whose turn carries the handoff inside the model request
    /// (through BeforeAgent: Gemini drops SessionStart(clear)'s output) and consumes it.
    fn gemini_clear_carries(&self, scene: &Scene) -> Check {
        let prompt = |text: &str| -> Result<Vec<String>, String> {
            let mark = self.mock.mark();
            self.gemini_cmd(scene, &["-m", "gemini-2.5-flash", "-p", text])?;
            Ok(self.mock.since(mark))
        };
        let quiet = prompt("first gemini session")?;
        ensure(!quiet.is_empty(), || "gemini sent the mock nothing".into())?;
        ensure(
            quiet.iter().all(|r| !r.contains("tag-gemini is where")),
            || "a plain startup carried the handoff".into(),
        )?;
        // No offer for Gemini CLI: with one, its headless mode sent `/clear` to the model as
        // text (the hook's context put in front of it), instead of running it.
        ensure(
            quiet.iter().all(|r| !r.contains("# Handoff available")),
            || "Gemini CLI was offered the handoff at a fresh start".into(),
        )?;
        // Gemini's own /clear (its clear command runs headless too): SessionEnd(clear), a new
        // session, SessionStart(clear) — whose output Gemini drops — then the turn's BeforeAgent.
        let after = prompt("/clear")?;
        ensure(
            after.iter().any(|r| r.contains("tag-gemini is where")),
            || format!("the handoff is not in what Gemini sent: {after:?}"),
        )?;
        let (_, orient) = self.store_cmd(scene, &["orient"], None);
        ensure(orient.contains("progress=consumed"), || {
            format!("the delivered handoff is not consumed: {orient}")
        })
    }
}
