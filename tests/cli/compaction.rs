//! Compaction you can trust, without a client: the background write never displaces
//! the slot until the candidate passed the gate and the compaction was confirmed; a writer's end
//! is known at once; generated commands name the binary by its absolute path; the supervisor
//! leaves the hook's session; UserPromptSubmit delivers once when SessionStart did not; two
//! installed hook sets inject once; the git hook installs, chains and uninstalls.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::util::*;

/// A writer that answers as `claude -p --output-format json` does: its answer (the document)
/// is the `result` (and, for the Gemini shape, `response`) of one JSON object on stdout. The
/// n-th call answers with `$FAKE_DOC_<n>`, else `$FAKE_DOC`, else with an empty answer. Each
/// call's prompt and arguments are recorded in `$FAKE_LOG` (`prompt-<n>`, `argv-<n>`; the
/// first call's also as `prompt` and `argv`). Exits with `$FAKE_EXIT` (default 0).
fn obedient_writer(env: &TestEnv) -> PathBuf {
    let p = env.write(
        "obedient-writer.sh",
        r#"#!/bin/sh
prompt=$(cat)
mkdir -p "$FAKE_LOG"
n=$(( $(cat "$FAKE_LOG/calls" 2>/dev/null || echo 0) + 1 ))
echo "$n" > "$FAKE_LOG/calls"
printf '%s\n' "$prompt" > "$FAKE_LOG/prompt-$n"
printf '%s\n' "$@" > "$FAKE_LOG/argv-$n"
if [ "$n" = 1 ]; then
  cp "$FAKE_LOG/prompt-1" "$FAKE_LOG/prompt"
  cp "$FAKE_LOG/argv-1" "$FAKE_LOG/argv"
fi
prev=""
for a in "$@"; do
  if [ "$prev" = "--policy" ]; then cp "$a" "$FAKE_LOG/gemini-policy"; fi
  prev="$a"
done
pwd > "$FAKE_LOG/cwd-$n"
sleep "${FAKE_SLEEP:-0}"
eval "doc=\${FAKE_DOC_$n:-\$FAKE_DOC}"
if [ -n "$doc" ]; then
  jq -Rs '{type: "result", is_error: false, result: ., response: .} + (if env.FAKE_COST then {total_cost_usd: (env.FAKE_COST | tonumber), usage: {input_tokens: 1000, cache_read_input_tokens: 200, output_tokens: 300}} else {} end)' < "$doc"
else
  echo '{"type": "result", "is_error": false, "result": "", "response": ""}'
fi
exit "${FAKE_EXIT:-0}"
"#,
    );
    chmod_x(&p);
    p
}

struct Scene {
    env: TestEnv,
    repo: PathBuf,
    slot: PathBuf,
    transcript: PathBuf,
    writer: PathBuf,
    fake: PathBuf,
}

impl Scene {
    /// A repository on `main` with a complete, unread handoff in its slot.
    fn new() -> Scene {
        let env = TestEnv::new();
        let repo = env.shop("shop", "main");
        let slot = env.stored(&repo, &version(&repo, "old"));
        let transcript = env.write("t.jsonl", "{}\n");
        let writer = obedient_writer(&env);
        let fake = env.path("fake");
        Scene {
            env,
            repo,
            slot,
            transcript,
            writer,
            fake,
        }
    }

    fn input(&self, sid: &str, extra: serde_json::Value) -> String {
        let mut v = serde_json::json!({"session_id": sid, "transcript_path": self.transcript, "cwd": self.repo});
        if let (Some(o), Some(e)) = (v.as_object_mut(), extra.as_object()) {
            o.extend(e.clone());
        }
        v.to_string()
    }

    /// PreCompact for session `sid`, the writer given `doc` (None: it writes nothing).
    fn pre_compact(&self, sid: &str, doc: Option<&str>, extra: &[(&str, &str)]) -> Outcome {
        let mut c = self
            .env
            .hook("pre-compact", &self.input(sid, serde_json::json!({})));
        c.env("HANDOFF_WRITER", &self.writer)
            .env("FAKE_LOG", &self.fake)
            .env("CTX_FORK_TIMEOUT_SECONDS", "30")
            // The binary is not on this PATH: the writer must be told where it is.
            .env("PATH", "/usr/bin:/bin");
        if let Some(doc) = doc {
            c.env("FAKE_DOC", self.env.write("doc.md", doc));
        }
        for (k, v) in extra {
            c.env(k, v);
        }
        run(&mut c)
    }

    fn hook(&self, event: &str, sid: &str, extra: serde_json::Value) -> Outcome {
        run(&mut self.env.hook(event, &self.input(sid, extra)))
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.env.home().join(".claude/state/handoff-fork/log.txt"))
            .unwrap_or_default()
    }

    /// Wait for the supervisor's completion line.
    fn writer_ended(&self) {
        assert!(
            eventually(30, || self.log().contains(" rc=")),
            "the supervisor recorded the writer's end: {}",
            self.log()
        );
    }

    fn read(&self, wait: &str) -> Outcome {
        run(self
            .env
            .store()
            .args(["read", "--no-consume", "--wait", wait])
            .arg(&self.repo))
    }

    /// The document at the tip of `main`'s handoff chain in the repository.
    fn chain_tip(&self) -> String {
        self.env
            .git(&self.repo, &["show", "refs/handoffs/main:handoff.md"])
    }

    fn history_dir(&self) -> PathBuf {
        self.env
            .store_dir()
            .join(".history")
            .join(self.slot.file_name().expect("name"))
    }

    /// The slot's kept versions (files; the refused answers' folder is not one).
    fn history(&self) -> Vec<PathBuf> {
        std::fs::read_dir(self.history_dir())
            .map(|d| {
                d.flatten()
                    .map(|e| e.path())
                    .filter(|p| p.is_file())
                    .collect()
            })
            .unwrap_or_default()
    }
}

fn bin() -> PathBuf {
    assert_cmd::cargo::cargo_bin("handoff-store")
}

#[test]
fn a_refused_compaction_leaves_the_slot_byte_identical_and_keeps_the_candidate_in_history() {
    let s = Scene::new();
    let before = std::fs::read(&s.slot).expect("slot");
    let o = s.pre_compact("refused", Some(&version(&s.repo, "new")), &[]);
    assert_eq!(o.code, 0);
    s.writer_ended();
    // No PostCompact, no SessionStart(compact): the client refused the compaction.
    assert_eq!(
        std::fs::read(&s.slot).expect("slot"),
        before,
        "byte-identical"
    );
    let kept = s.history();
    assert_eq!(kept.len(), 1, "the candidate is in history: {kept:?}");
    assert!(
        std::fs::read_to_string(&kept[0])
            .expect("kept")
            .contains("status: new ")
    );
    let o = s.read("0");
    assert_eq!(o.code, 0, "{}{}", o.stdout, o.stderr);
    assert!(
        o.stdout.contains("status: old "),
        "the old handoff is shown"
    );
    assert!(
        o.stdout.contains("NOT installed") && o.stdout.contains("never confirmed"),
        "{}",
        o.stdout
    );
    assert!(o.stdout.contains(&format!("{} restore ", bin().display())));
    // restore brings the candidate in, and the old handoff goes to history.
    let r = run(s.env.store().arg("restore").arg(&s.repo));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        std::fs::read_to_string(&s.slot)
            .expect("slot")
            .contains("status: new ")
    );
    let o = s.read("0");
    assert!(
        !o.stdout.contains("NOT installed"),
        "once restored, the note is gone: {}",
        o.stdout
    );
}

#[test]
fn a_confirmed_compaction_installs_the_candidate_whichever_comes_first() {
    // Confirmation before the writer stores its candidate (PostCompact during the write).
    let s = Scene::new();
    s.pre_compact(
        "early",
        Some(&version(&s.repo, "new")),
        &[("FAKE_SLEEP", "2")],
    );
    let o = s.hook(
        "post-compact",
        "early",
        serde_json::json!({"trigger": "manual"}),
    );
    assert_eq!((o.code, o.stdout.as_str(), o.stderr.as_str()), (0, "", ""));
    assert!(
        std::fs::read_to_string(&s.slot)
            .expect("slot")
            .contains("status: old "),
        "nothing replaced before a candidate exists"
    );
    assert!(s.chain_tip().contains("status: old "));
    s.writer_ended();
    let now = std::fs::read_to_string(&s.slot).expect("slot");
    assert!(now.contains("status: new "), "installed: {now}");
    assert!(
        s.chain_tip().contains("status: new "),
        "the promoted version joined the chain at once: {}",
        s.chain_tip()
    );
    assert!(
        s.history()
            .iter()
            .any(|p| std::fs::read_to_string(p).is_ok_and(|t| t.contains("status: old "))),
        "the displaced handoff is in history"
    );

    // Confirmation after the writer ended, by SessionStart(compact).
    let s = Scene::new();
    s.pre_compact("late", Some(&version(&s.repo, "new")), &[]);
    s.writer_ended();
    assert!(
        std::fs::read_to_string(&s.slot)
            .expect("slot")
            .contains("status: old ")
    );
    let o = s.hook(
        "session-start",
        "late",
        serde_json::json!({"source": "compact"}),
    );
    let text = context(&o);
    assert!(
        text.contains("status: new "),
        "the new handoff is shown: {text}"
    );
    assert!(!text.contains("NOT installed"));
    assert!(
        s.chain_tip().contains("status: new "),
        "promoted by SessionStart(compact): in the chain too"
    );
}

/// The Scene's handoff with one citation that does not hold.
fn rotten(repo: &Path) -> String {
    version(repo, "new").replace(
        "app/Mail/Invoice.php:24 | public function build",
        "app/Mail/Invoice.php:24 | a fragment that is not there",
    )
}

#[test]
fn an_answer_the_gate_refuses_is_asked_for_again_and_promoted_once_it_passes() {
    let s = Scene::new();
    let second = s.env.write("doc2.md", version(&s.repo, "fixed"));
    let second = second.to_string_lossy().into_owned();
    s.pre_compact(
        "again",
        Some(&rotten(&s.repo)),
        &[("FAKE_DOC_2", second.as_str())],
    );
    s.hook("post-compact", "again", serde_json::json!({}));
    s.writer_ended();
    let calls = std::fs::read_to_string(s.fake.join("calls")).expect("calls");
    assert_eq!(calls.trim(), "2", "asked once more: {}", s.log());
    let slot = std::fs::read_to_string(&s.slot).expect("slot");
    assert!(slot.contains("status: fixed "), "promoted: {slot}");
    // The same writer session is resumed, and told what the gate said.
    let first = std::fs::read_to_string(s.fake.join("argv-1")).expect("argv-1");
    let id = first
        .lines()
        .skip_while(|l| *l != "--session-id")
        .nth(1)
        .expect("session id")
        .to_string();
    let again = std::fs::read_to_string(s.fake.join("argv-2")).expect("argv-2");
    assert!(again.contains(&format!("--resume\n{id}\n")), "{again}");
    let told = std::fs::read_to_string(s.fake.join("prompt-2")).expect("prompt-2");
    assert!(
        told.contains("The gate refused the handoff") && told.contains("app/Mail/Invoice.php:24"),
        "{told}"
    );
    assert!(s.chain_tip().contains("status: fixed "));
}

#[test]
fn an_answer_that_fails_the_gate_three_times_is_kept_in_history_never_installed() {
    let s = Scene::new();
    let before = std::fs::read(&s.slot).expect("slot");
    s.pre_compact("rot", Some(&rotten(&s.repo)), &[]);
    s.hook("post-compact", "rot", serde_json::json!({}));
    s.writer_ended();
    let calls = std::fs::read_to_string(s.fake.join("calls")).expect("calls");
    assert_eq!(calls.trim(), "3", "asked twice more, no more: {}", s.log());
    assert_eq!(
        std::fs::read(&s.slot).expect("slot"),
        before,
        "byte-identical"
    );
    // Kept apart from the slot's versions, never offered by `restore`.
    let refused_dir = s.history_dir().join(".refused");
    assert!(
        std::fs::read_dir(&refused_dir)
            .into_iter()
            .flatten()
            .flatten()
            .any(|e| std::fs::read_to_string(e.path())
                .is_ok_and(|t| t.contains("a fragment that is not there"))),
        "the refused answer is kept apart"
    );
    assert!(
        !s.history().iter().any(|p| std::fs::read_to_string(p)
            .is_ok_and(|t| t.contains("a fragment that is not there"))),
        "the refused answer takes none of the ten places"
    );
    let o = s.read("0");
    assert!(
        o.stdout.contains("the gate refused (exit 1)"),
        "{}",
        o.stdout
    );
    let history = run(s.env.store().arg("history").arg(&s.repo));
    assert!(!history.stdout.contains(".refused"), "{}", history.stdout);
}

/// `restore` gates what it installs — a kept version the gate calls malformed (an
/// older release kept refused answers among the versions) is refused, exit 2, the slot as it
/// was.
#[test]
fn restore_never_installs_a_malformed_version() {
    let s = Scene::new();
    let before = std::fs::read(&s.slot).expect("slot");
    std::fs::create_dir_all(s.history_dir()).expect("history");
    let malformed = s.history_dir().join("20990101T000000Z.md");
    std::fs::write(&malformed, "# Handoff — no sections at all\nstatus: x\n").expect("kept");
    let o = run(s.env.store().arg("restore").arg(&s.repo));
    assert_eq!(o.code, 2, "{}{}", o.stdout, o.stderr);
    assert!(o.stderr.contains("not stored"), "{}", o.stderr);
    assert_eq!(std::fs::read(&s.slot).expect("slot"), before);
}

#[test]
fn a_missing_or_empty_answer_is_a_failed_run() {
    let s = Scene::new();
    // Exit 0, an empty `result`.
    s.pre_compact("empty", None, &[]);
    s.writer_ended();
    assert!(
        s.log().contains(" rc=no-answer state=failed "),
        "{}",
        s.log()
    );
    let o = s.read("0");
    assert!(
        o.stdout.contains("(writer exit: no-answer)"),
        "{}",
        o.stdout
    );
    // status tells how the last background write ended.
    let o = run(s.env.store().arg("status"));
    assert!(
        o.stdout.contains("writer   last background write in ")
            && o.stdout.contains(": failed — why: "),
        "{}",
        o.stdout
    );
    let o = run(s.env.store().args(["status", "--format", "json"]));
    let v: serde_json::Value = serde_json::from_str(&o.stdout).expect("json");
    assert_eq!(
        v["last_background_write"]["state"]["state"], "failed",
        "{v}"
    );
    assert_eq!(
        v["last_background_write"]["state"]["rc"], "no-answer",
        "{v}"
    );
}

#[test]
fn a_writer_that_stores_nothing_is_reported_at_once() {
    let s = Scene::new();
    s.pre_compact("fails", None, &[("FAKE_EXIT", "3"), ("FAKE_SLEEP", "1")]);
    // Long enough that waiting out the old 600 s abandonment would be visible as a hang.
    let o = s.read("120");
    assert_eq!(o.code, 0, "{}{}", o.stdout, o.stderr);
    assert!(o.stdout.contains("status: old "), "the previous handoff");
    assert!(
        o.stdout
            .contains("ended without a handoff (writer exit: 3)"),
        "{}",
        o.stdout
    );
    assert!(s.log().contains(" rc=3 state=failed "));
    let o = s.hook(
        "session-start",
        "fails",
        serde_json::json!({"source": "compact"}),
    );
    let text = context(&o);
    assert!(
        text.contains("ended without a handoff (writer exit: 3)"),
        "{text}"
    );
    assert!(text.contains("status: old ") && !text.contains("is being authored"));

    // With no previous handoff, read says FAILED (exit 4) instead of PENDING.
    let env = TestEnv::new();
    let repo = env.shop("bare-start", "main");
    env.use_handoffs(&repo);
    let t = env.write("t.jsonl", "{}\n");
    let writer = obedient_writer(&env);
    run(env
        .hook(
            "pre-compact",
            &serde_json::json!({"session_id": "x", "transcript_path": t, "cwd": repo}).to_string(),
        )
        .env("HANDOFF_WRITER", &writer)
        .env("FAKE_LOG", env.path("fake"))
        .env("FAKE_EXIT", "7"));
    let o = run(env.store().args(["read", "--wait", "60"]).arg(&repo));
    assert_eq!(o.code, 4);
    assert!(
        o.stdout.starts_with("FAILED   ") && o.stdout.contains("(writer exit: 7)"),
        "{}",
        o.stdout
    );
}

#[test]
fn while_the_writer_works_readers_are_told_to_wait_with_an_absolute_command() {
    let s = Scene::new();
    s.pre_compact("busy", None, &[("FAKE_SLEEP", "20")]);
    // A client without our prompt hook (a generic one): the wait is an option, 60 s at most.
    let o = run(s
        .env
        .store()
        .args(["hook", "session-start", "--harness", "cursor"])
        .write_stdin(s.input("busy", serde_json::json!({"source": "compact"}))));
    let text = o.stdout;
    assert!(
        text.contains("A fresher handoff is being written"),
        "{text}"
    );
    assert!(
        text.contains(&format!("{} read '", bin().display()))
            && text.contains(" --wait 60` waits up to 60 s"),
        "absolute binary, a bounded wait offered: {text}"
    );
    assert!(!text.contains("must"), "never an order to wait: {text}");
    assert!(
        text.contains("status: old "),
        "what the slot holds now is delivered meanwhile: {text}"
    );
    let o = s.read("0");
    assert_eq!(o.code, 4);
    assert!(o.stdout.starts_with("PENDING  "), "{}", o.stdout);
    // The fake writer creates the file and then copies its stdin into it: wait for the whole
    // prompt (its last paragraph), not only for the file (under load it was read empty once).
    assert!(eventually(10, || {
        std::fs::read_to_string(s.fake.join("prompt")).is_ok_and(|p| p.contains("asked once more."))
    }));
    let prompt = std::fs::read_to_string(s.fake.join("prompt")).expect("prompt");
    assert!(
        prompt.contains("Your final answer is the document itself")
            && !prompt.contains(" write --checkout")
            && !prompt.contains("run:"),
        "the writer is asked for its answer, never told to run a command: {prompt}"
    );
    // End the writer early: kill its group through the run's supervisor pid.
    let runs = s.env.store_dir().join(".runs");
    let id = std::fs::read_dir(&runs)
        .expect("runs")
        .flatten()
        .next()
        .expect("one run")
        .path();
    let pid = std::fs::read_to_string(id.join("supervisor.pid")).expect("pid");
    let _ = std::process::Command::new("kill")
        .args(["-KILL", pid.trim()])
        .status();
    let o = s.read("10");
    assert!(
        o.stdout.contains("(writer exit: supervisor-gone)"),
        "a dead supervisor is a failure, not a wait: {}",
        o.stdout
    );
}

#[test]
fn the_supervisor_has_a_session_of_its_own_and_the_writer_survives_the_terminal_closing() {
    let s = Scene::new();
    let probe = s.env.write(
        "probe-writer.sh",
        "#!/bin/sh\ncat > /dev/null\nmkdir -p \"$FAKE_LOG\"\ncut -d' ' -f6,7 /proc/self/stat > \"$FAKE_LOG/stat.tmp\"\nmv \"$FAKE_LOG/stat.tmp\" \"$FAKE_LOG/stat\"\nsleep 3\ntouch \"$FAKE_LOG/survived\"\n",
    );
    chmod_x(&probe);
    let input = s
        .env
        .write("pre.json", s.input("pty", serde_json::json!({})));
    // `script` runs the hook on a real pseudo-terminal, in a session whose controlling
    // terminal it is; killing `script` closes the terminal under everything in that session.
    let inner = format!(
        "{} hook pre-compact < {}; sleep 30",
        bin().display(),
        input.display()
    );
    let mut c = s
        .env
        .store_process()
        .env("LAST_CLEAR_STATE_DIR", s.env.marker_dir())
        .env("HANDOFF_WRITER", &probe)
        .env("FAKE_LOG", &s.fake)
        .env("HANDOFF_CLAIM_WINDOW_SECONDS", "0")
        .env_remove("HANDOFF_STORE_BIN")
        .env("CTX_FORK_TIMEOUT_SECONDS", "30")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn_script(&inner);
    assert!(
        eventually(15, || s.fake.join("stat").is_file()),
        "the writer started"
    );
    let _ = c.kill();
    let _ = c.wait();
    let stat = std::fs::read_to_string(s.fake.join("stat")).expect("stat");
    let tty: i64 = stat
        .split_whitespace()
        .nth(1)
        .and_then(|t| t.parse().ok())
        .expect("tty_nr");
    assert_eq!(tty, 0, "the writer has no controlling terminal: {stat}");
    assert!(
        eventually(15, || s.fake.join("survived").is_file()),
        "the writer outlived the terminal"
    );
}

/// Run `inner` under `script` (util-linux), which gives it a pseudo-terminal.
trait SpawnScript {
    fn spawn_script(&mut self, inner: &str) -> std::process::Child;
}

impl SpawnScript for std::process::Command {
    fn spawn_script(&mut self, inner: &str) -> std::process::Child {
        let mut c = std::process::Command::new("script");
        c.args(["-qfec", inner, "/dev/null"]);
        for (k, v) in self.get_envs() {
            match v {
                Some(v) => c.env(k, v),
                None => c.env_remove(k),
            };
        }
        c.current_dir(self.get_current_dir().unwrap_or(Path::new("/")));
        c.stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        c.spawn().expect("script runs")
    }
}

#[test]
fn the_prompt_fallback_delivers_once_when_session_start_did_not_run() {
    let s = Scene::new();
    let prompt = |sid: &str| {
        s.hook(
            "user-prompt-submit",
            sid,
            serde_json::json!({"prompt": "go on", "hook_event_name": "UserPromptSubmit"}),
        )
    };
    let o = prompt("cleared");
    assert_eq!(o.code, 0);
    let v: serde_json::Value = serde_json::from_str(&o.stdout).expect("JSON");
    assert_eq!(v["hookSpecificOutput"]["hookEventName"], "UserPromptSubmit");
    let text = v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .expect("context");
    assert!(
        text.contains("status: old ")
            && text.contains("# Context reset (UserPromptSubmit, source: clear)")
    );
    assert!(text.encode_utf16().count() <= 9_500);
    assert_eq!(prompt("cleared").stdout, "", "exactly once per session");

    // A session whose SessionStart ran (on startup: the handoff was read, so one line) gets
    // nothing from it.
    let o = s.hook(
        "session-start",
        "started",
        serde_json::json!({"source": "startup"}),
    );
    assert!(o.stdout.contains("was read "), "{}", o.stdout);
    assert_eq!(prompt("started").stdout, "");
    // Silently too: onStartup off.
    s.env.git(&s.repo, &["config", "handoff.onStartup", "off"]);
    let o = s.hook(
        "session-start",
        "quiet",
        serde_json::json!({"source": "startup"}),
    );
    assert_eq!(o.stdout, "");
    assert_eq!(prompt("quiet").stdout, "");
}

#[test]
fn plugin_and_manual_hooks_together_inject_once() {
    let s = Scene::new();
    let input = s.input("twice", serde_json::json!({"source": "clear"}));
    let spawn = || {
        let mut c = s.env.store_process();
        c.args(["hook", "session-start"])
            .env("LAST_CLEAR_STATE_DIR", s.env.marker_dir())
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped());
        let mut child = c.spawn().expect("hook");
        use std::io::Write;
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(input.as_bytes())
            .expect("stdin written");
        child
    };
    // Both firings start before either finishes, as the client runs them in parallel.
    let (a, b) = (spawn(), spawn());
    let outs: Vec<String> = [a, b]
        .into_iter()
        .map(|c| String::from_utf8_lossy(&c.wait_with_output().expect("out").stdout).into_owned())
        .collect();
    let injected = outs
        .iter()
        .filter(|o| o.contains("additionalContext"))
        .count();
    assert_eq!(injected, 1, "{outs:?}");
    // A later compaction of the same session is a new event and is delivered.
    std::thread::sleep(Duration::from_millis(50));
    let o = s.hook(
        "session-start",
        "twice",
        serde_json::json!({"source": "compact"}),
    );
    assert!(o.stdout.contains("additionalContext"));
}

/// A real `git` run as the user would, with the binary off PATH, so the hook must find it.
fn git_checkout(env: &TestEnv, repo: &Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new("git")
        .args(args)
        .current_dir(repo)
        .env("HOME", env.home())
        .env("HANDOFF_STORE_DIR", env.store_dir())
        .env("PATH", "/usr/bin:/bin")
        .output()
        .expect("git")
}

fn git_hooks_dir(env: &TestEnv, repo: &Path) -> PathBuf {
    let dir = env.git(repo, &["rev-parse", "--git-path", "hooks"]);
    repo.join(dir.trim())
}

#[test]
fn the_git_hook_installs_chains_and_uninstalls_leaving_the_original_intact() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    env.git(&repo, &["branch", "feature/x"]);
    env.stored(&repo, &version(&repo, "m"));

    // Fresh install into .git/hooks, then a checkout names the handoff.
    let o = run(env.store().args(["install", "git-hook"]).arg(&repo));
    assert_eq!(o.code, 0, "{}", o.stderr);
    let hook = git_hooks_dir(&env, &repo).join("post-checkout");
    assert!(
        o.stdout
            .starts_with(&format!("installed {}", hook.display()))
    );
    let out = git_checkout(&env, &repo, &["checkout", "-q", "feature/x"]);
    assert!(out.status.success());
    let out = git_checkout(&env, &repo, &["checkout", "-q", "main"]);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("handoff"),
        "the hook ran off PATH: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let o = run(env.store().args(["uninstall", "git-hook"]).arg(&repo));
    assert!(o.stdout.starts_with("removed"));
    assert!(!hook.exists());

    // core.hooksPath (relative) with a hook already there: chained, its status kept, restored.
    let repo = env.shop("other", "main");
    env.git(&repo, &["config", "core.hooksPath", "my-hooks"]);
    let original = "#!/bin/sh\necho mine >> \"$(git rev-parse --show-toplevel)/ran\"\nexit 5\n";
    let mine = env.write("other/my-hooks/post-checkout", original);
    chmod_x(&mine);
    let o = run(env.store().args(["install", "git-hook"]).arg(&repo));
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stdout.contains("now runs first"), "{}", o.stdout);
    let chained = repo.join("my-hooks/post-checkout.before-handoff-store");
    assert_eq!(
        std::fs::read_to_string(&chained).expect("chained"),
        original
    );
    let out = git_checkout(&env, &repo, &["checkout", "-q", "-b", "side"]);
    assert!(repo.join("ran").is_file(), "the original hook still runs");
    assert!(!out.status.success(), "and its failure is kept");
    let again = run(env.store().args(["install", "git-hook"]).arg(&repo));
    assert!(
        again.stdout.starts_with("updated"),
        "idempotent: {}",
        again.stdout
    );
    let o = run(env.store().args(["uninstall", "git-hook"]).arg(&repo));
    assert!(o.stdout.contains("is back in its place"), "{}", o.stdout);
    assert_eq!(std::fs::read_to_string(&mine).expect("restored"), original);
    assert!(!chained.exists());
    let o = run(env.store().args(["uninstall", "git-hook"]).arg(&repo));
    assert!(o.stdout.starts_with("nothing to remove"));
    assert_eq!(std::fs::read_to_string(&mine).expect("untouched"), original);
}

/// Gemini CLI fires PreCompress before every model call and nothing after a compression; the
/// compression shows in its append-only session file as a restart (`{"$set":{"sessionId"}}`)
/// whose history opens with a text never written before (the summary). Calls on a file that
/// only grew, and a resume's restart (new ids, the same first prompt), start nothing; after a
/// compression's restart the next call starts the writer through HANDOFF_GEMINI_BIN, on a
/// copy of the file cut where the restart begins, with the run directory in its workspace, and
/// its handoff replaces the slot with no other confirmation; the call after that starts nothing.
#[test]
fn a_gemini_compression_seen_in_its_session_file_runs_the_writer_on_the_conversation_before_it() {
    let s = Scene::new();
    let session = s.env.path("session.jsonl");
    let append = |lines: &[&str]| {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&session)
            .expect("session file");
        for l in lines {
            writeln!(f, "{l}").expect("append");
        }
    };
    let doc = s.env.write("doc.md", version(&s.repo, "gemini"));
    let call = |event: &str| {
        let input = serde_json::json!({"session_id": "g1", "transcript_path": session, "cwd": s.repo,
            "hook_event_name": "x", "timestamp": "2026-12-03T00:00:00Z"});
        let mut c = s.env.store();
        c.args(["hook", event, "--harness", "gemini"])
            .write_stdin(input.to_string())
            .env("HANDOFF_GEMINI_BIN", &s.writer)
            .env("FAKE_LOG", &s.fake)
            .env("FAKE_DOC", &doc)
            .env("CTX_FORK_TIMEOUT_SECONDS", "30")
            .env("PATH", "/usr/bin:/bin");
        let o = run(&mut c);
        assert_eq!((o.code, o.stdout.as_str(), o.stderr.as_str()), (0, "", ""));
    };
    let spawned = || s.log().matches(" spawned ").count();
    append(&[
        r#"{"sessionId":"g1","startTime":"t"}"#,
        r#"{"id":"u1","type":"user","content":[{"text":"make \"it\" faster"}]}"#,
    ]);
    call("pre-compact");
    append(&[
        r#"{"id":"m1","type":"gemini","content":"done"}"#,
        r#"{"$set":{"messages":[]}}"#,
    ]);
    call("post-compact");
    // A resume: the restart record, its history opening with the first prompt under new ids.
    append(&[
        r#"{"$set":{"sessionId":"g1"}}"#,
        r#"{"$set":{"messages":[{"id":"e","content":[{"text":"<session_context>\nlater"}]},{"id":"r1","content":[{"text":"make \"it\" faster"}]}]}}"#,
    ]);
    call("pre-compact");
    assert_eq!(spawned(), 0, "{}", s.log());
    let before = std::fs::read(&session).expect("session");
    append(&[
        r#"{"$set":{"sessionId":"g1"}}"#,
        r#"{"$set":{"messages":[{"id":"e","content":[{"text":"<session_context>\nlater"}]},{"id":"s","type":"user","content":[{"text":"<state_snapshot>made it faster</state_snapshot>"}]}]}}"#,
    ]);
    call("post-compact");
    assert_eq!(spawned(), 1, "{}", s.log());
    s.writer_ended();
    assert!(
        eventually(30, || std::fs::read_to_string(&s.slot)
            .is_ok_and(|t| t.contains("status: gemini "))),
        "the writer's handoff is in the slot: {}",
        s.log()
    );
    let prompt = std::fs::read_to_string(s.fake.join("prompt")).expect("prompt");
    let copy = prompt
        .lines()
        .skip_while(|l| !l.ends_with("as it was before, a JSONL file at:"))
        .nth(1)
        .expect("the prompt names the copy");
    assert_eq!(
        std::fs::read(copy).expect("copy"),
        before,
        "cut at the restart"
    );
    let argv = std::fs::read_to_string(s.fake.join("argv")).expect("argv");
    let run_dir = Path::new(copy)
        .parent()
        .expect("run dir")
        .to_string_lossy()
        .into_owned();
    assert!(
        argv.contains(&format!("--include-directories\n{}\n", s.repo.display()))
            && argv.contains("--skip-trust\n")
            && argv.contains(&format!("--policy\n{run_dir}/gemini-policy.toml\n"))
            && argv.contains("--approval-mode\ndefault\n")
            && argv.contains("-p\n"),
        "{argv}"
    );
    // Read-only: a policy that denies every tool but the reading ones.
    let policy = std::fs::read_to_string(s.fake.join("gemini-policy")).expect("the policy");
    assert!(
        policy.contains("toolName = \"*\"\ndecision = \"deny\"")
            && policy.contains("\"read_file\", ")
            && !policy.contains("run_shell_command"),
        "{policy}"
    );
    // Gemini's own session cleanup deleted the user's live session file when the writer started
    // in the checkout (a session file holding no conversation yet is garbage to it, with every
    // file of the same session): the writer works in the store's run folder, a project of its own.
    let cwd = std::fs::read_to_string(s.fake.join("cwd-1")).expect("cwd");
    let runs = Path::new(&run_dir).parent().expect("runs");
    assert_eq!(
        std::fs::canonicalize(cwd.trim()).expect("cwd"),
        std::fs::canonicalize(runs).expect("runs")
    );
    call("pre-compact");
    assert_eq!(spawned(), 1, "one compression, one writer: {}", s.log());
}

/// Whether process `pid` is alive (a zombie is not).
fn alive(pid: &str) -> bool {
    std::fs::read_to_string(format!("/proc/{}/stat", pid.trim())).is_ok_and(|stat| {
        stat.rsplit(')')
            .next()
            .is_some_and(|r| !r.trim_start().starts_with('Z'))
    })
}

/// The one run directory of a scene.
fn the_run(s: &Scene) -> PathBuf {
    let runs = s.env.store_dir().join(".runs");
    assert!(eventually(10, || std::fs::read_dir(&runs)
        .is_ok_and(|d| d.flatten().next().is_some())));
    std::fs::read_dir(&runs)
        .expect("runs")
        .flatten()
        .next()
        .expect("one run")
        .path()
}

#[test]
fn a_killed_supervisor_takes_its_writer_and_the_writers_children_with_it() {
    let s = Scene::new();
    let sleepy = s.env.write(
        "sleepy-writer.sh",
        "#!/bin/sh\ncat > /dev/null\nmkdir -p \"$FAKE_LOG\"\nsleep 60 &\necho $! > \"$FAKE_LOG/child\"\necho $$ > \"$FAKE_LOG/pid.tmp\"\nmv \"$FAKE_LOG/pid.tmp\" \"$FAKE_LOG/pid\"\nwait\n",
    );
    chmod_x(&sleepy);
    let sleepy = sleepy.to_string_lossy().into_owned();
    s.pre_compact("killed", None, &[("HANDOFF_WRITER", sleepy.as_str())]);
    assert!(
        eventually(15, || s.fake.join("pid").is_file()),
        "the writer started"
    );
    let writer = std::fs::read_to_string(s.fake.join("pid")).expect("pid");
    let child = std::fs::read_to_string(s.fake.join("child")).expect("child");
    assert!(alive(&writer) && alive(&child));
    let supervisor = std::fs::read_to_string(the_run(&s).join("supervisor.pid")).expect("pid");
    let killed = std::process::Command::new("kill")
        .args(["-KILL", supervisor.trim()])
        .status()
        .expect("kill");
    assert!(killed.success());
    let killed_at = std::time::Instant::now();
    while (alive(&writer) || alive(&child))
        && killed_at.elapsed() < std::time::Duration::from_secs(1)
    {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(
        !alive(&writer) && !alive(&child),
        "the writer (and what it started) is gone within a second of its supervisor"
    );
}

#[test]
fn prune_keeps_a_live_run_and_a_result_whose_run_was_removed_goes_to_history() {
    let s = Scene::new();
    let before = std::fs::read(&s.slot).expect("slot");
    s.pre_compact(
        "live",
        Some(&version(&s.repo, "orphan")),
        &[("FAKE_SLEEP", "3")],
    );
    let run_dir = the_run(&s);
    let o = run(s
        .env
        .store()
        .args(["prune", "--older-than", "0", "--apply"]));
    assert_eq!(o.code, 0, "{}{}", o.stdout, o.stderr);
    assert!(
        run_dir.join("job.json").is_file(),
        "a live run is kept: {}",
        o.stdout
    );

    // Removed by hand while the writer works: its answer is kept, never put in the slot.
    assert!(
        eventually(10, || s.fake.join("argv").is_file()),
        "the writer is at work"
    );
    std::fs::remove_dir_all(&run_dir).expect("remove the run");
    s.hook("post-compact", "live", serde_json::json!({}));
    s.writer_ended();
    assert!(s.log().contains(" rc=run-gone "), "{}", s.log());
    // The slot byte-identical, the result with `status: <tag>` in history.
    let kept_not_installed = |tag: &str| {
        assert_eq!(
            std::fs::read(&s.slot).expect("slot"),
            before,
            "byte-identical"
        );
        let status = format!("status: {tag} ");
        assert!(
            s.history()
                .iter()
                .any(|p| std::fs::read_to_string(p).is_ok_and(|t| t.contains(&status))),
            "the {tag} result is in history"
        );
    };
    kept_not_installed("orphan");

    // A writer of the user's own that runs `write` for a run that no longer exists.
    let draft = s.env.write("late.md", version(&s.repo, "late"));
    let o = run(s
        .env
        .store()
        .args(["write", "--from"])
        .arg(&draft)
        .arg("--checkout")
        .arg(&s.repo)
        .env(
            "HANDOFF_WRITE_SESSION",
            "0b0e8a4c-1111-4222-8333-444455556666",
        ));
    assert_eq!(o.code, 0, "{}{}", o.stdout, o.stderr);
    assert!(o.stdout.contains("kept in history"), "{}", o.stdout);
    kept_not_installed("late");
}

/// A handoff as a chain compares it: without the machine-specific `checkout:` and `from:`.
fn portable(text: &str) -> String {
    text.lines()
        .filter(|l| !l.starts_with("checkout:") && !l.starts_with("from:"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// One way to the chain: every operation that changes a slot leaves the branch's
/// chain holding the slot's bytes — written, restored, its progress set by hand, consumed by
/// `read` and by SessionStart, promoted from a background write, imported by `pull`, offered
/// from a teammate's refs and consumed (whose record must build on the teammate's chain, so the
/// next push is a fast-forward).
#[test]
fn every_slot_changing_operation_leaves_the_chain_holding_the_slots_bytes() {
    let s = Scene::new();
    let holds = |what: &str, env: &TestEnv, repo: &Path, slot: &Path| {
        let slot_text = std::fs::read_to_string(slot).expect("slot");
        let tip = env.git(repo, &["show", "refs/handoffs/main:handoff.md"]);
        assert_eq!(
            portable(&tip),
            portable(slot_text.trim_end()),
            "after {what}, the chain holds the slot's bytes"
        );
    };
    let hs = |args: &[&str]| run(s.env.store().args(args).arg(&s.repo));
    let push = || run(s.env.store().arg("push").current_dir(&s.repo));
    let unread = |tag: &str| {
        s.env.stored(&s.repo, &version(&s.repo, tag));
    };

    unread("second");
    holds("write", &s.env, &s.repo, &s.slot);

    assert_eq!(hs(&["restore"]).code, 0);
    holds("restore", &s.env, &s.repo, &s.slot);

    let flip = run(s
        .env
        .store()
        .arg("set-progress")
        .arg(&s.slot)
        .arg("consumed"));
    assert_eq!(flip.code, 0, "{}", flip.stderr);
    holds("set-progress", &s.env, &s.repo, &s.slot);

    unread("for-read");
    assert_eq!(hs(&["read"]).code, 0);
    assert!(std::fs::read_to_string(&s.slot).is_ok_and(|t| t.contains("progress: consumed")));
    holds("read (consume)", &s.env, &s.repo, &s.slot);

    unread("for-session-start");
    let o = s.hook(
        "session-start",
        "ss",
        serde_json::json!({"source": "clear"}),
    );
    assert!(context(&o).contains("status: for-session-start "));
    assert!(std::fs::read_to_string(&s.slot).is_ok_and(|t| t.contains("progress: consumed")));
    holds("SessionStart (consume)", &s.env, &s.repo, &s.slot);

    s.pre_compact("promote", Some(&version(&s.repo, "promoted")), &[]);
    s.writer_ended();
    s.hook("post-compact", "promote", serde_json::json!({}));
    assert!(std::fs::read_to_string(&s.slot).is_ok_and(|t| t.contains("status: promoted ")));
    holds("promotion", &s.env, &s.repo, &s.slot);

    // Another machine: a bare remote holding this chain; `pull` imports it into its slot.
    let bare = s.env.path("remote.git");
    s.env.git(
        &s.env.root(),
        &["init", "-q", "--bare", "-b", "main", "remote.git"],
    );
    s.env.git(
        &s.repo,
        &["remote", "add", "origin", &bare.to_string_lossy()],
    );
    s.env.git(&s.repo, &["push", "-q", "origin", "main"]);
    assert_eq!(push().code, 0);
    let other = |name: &str| {
        s.env.git(
            &s.env.root(),
            &["clone", "-q", &bare.to_string_lossy(), name],
        );
        let repo = s.env.path(name);
        let store = s.env.path(&format!("{name}-store"));
        let slot = store.join(s.env.slot_name(&repo, "main"));
        (repo, store, slot)
    };
    let (b, b_store, b_slot) = other("b");
    let pull = run(s
        .env
        .store()
        .env("HANDOFF_STORE_DIR", &b_store)
        .arg("pull")
        .current_dir(&b));
    assert_eq!(pull.code, 0, "{}{}", pull.stdout, pull.stderr);
    holds("pull (import)", &s.env, &b, &b_slot);

    // A third: its hook offers the teammate's copy from the fetched refs and consumes it.
    unread("for-the-offer");
    assert_eq!(push().code, 0);
    let (c, c_store, c_slot) = other("c");
    let in_c = |args: &[&str]| {
        run(s
            .env
            .store()
            .env("HANDOFF_STORE_DIR", &c_store)
            .args(args)
            .current_dir(&c))
    };
    assert_eq!(in_c(&["sync", "--setup"]).code, 0);
    s.env.git(&c, &["fetch", "-q"]);
    let input = serde_json::json!({"session_id": "offer", "cwd": c, "source": "clear"});
    let o = run(s
        .env
        .hook("session-start", &input.to_string())
        .env("HANDOFF_STORE_DIR", &c_store));
    assert!(context(&o).contains("status: for-the-offer "));
    assert!(std::fs::read_to_string(&c_slot).is_ok_and(|t| t.contains("progress: consumed")));
    holds("the offer (consume)", &s.env, &c, &c_slot);
    let pushed = in_c(&["push"]);
    assert_eq!(
        pushed.code, 0,
        "the consume built on the teammate's chain, so pushing it is a fast-forward: {}{}",
        pushed.stdout, pushed.stderr
    );
}

/// The bytes under `dir`, every file counted.
fn bytes_under(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| match e.file_type() {
            Ok(t) if t.is_dir() => bytes_under(&e.path()),
            _ => e.metadata().map_or(0, |m| m.len()),
        })
        .sum()
}

/// The child and the `setsid` daemon a test writer recorded are gone.
fn none_outlived(s: &Scene) {
    for what in ["child", "daemon"] {
        let pid = std::fs::read_to_string(s.fake.join(what)).expect("pid");
        assert!(
            !alive(&pid),
            "the writer's {what} ({}) outlived the run",
            pid.trim()
        );
    }
}

/// A writer that prints without end is ended once its output passes the answer's
/// cap — its run folder holds at most 32 MiB — and nothing it started outlives the run: not a
/// child in its group, not a `setsid` daemon.
#[test]
fn an_endless_writer_is_bounded_on_disk_and_leaves_no_process_behind() {
    let s = Scene::new();
    let endless = s.env.write(
        "endless-writer.sh",
        "#!/bin/sh\ncat > /dev/null\nmkdir -p \"$FAKE_LOG\"\nsleep 60 &\necho $! > \"$FAKE_LOG/child\"\nsetsid sleep 61 &\necho $! > \"$FAKE_LOG/daemon\"\nyes 'an endless answer'\n",
    );
    chmod_x(&endless);
    let endless = endless.to_string_lossy().into_owned();
    s.pre_compact("endless", None, &[("HANDOFF_WRITER", endless.as_str())]);
    let run_dir = the_run(&s);
    s.writer_ended();
    assert!(
        s.log().contains(" rc=answer-too-large state=failed "),
        "{}",
        s.log()
    );
    let size = bytes_under(&run_dir);
    assert!(size <= 32 * 1024 * 1024, "{size} bytes in the run folder");
    none_outlived(&s);
}

/// A writer that answers and exits normally takes what it started with it — a
/// child left running and a `setsid` daemon — and its answer still counts.
#[test]
fn a_writer_that_exits_leaves_no_child_or_daemon_running() {
    let s = Scene::new();
    let leaving = s.env.write(
        "leaving-writer.sh",
        format!(
            "#!/bin/sh\nmkdir -p \"$FAKE_LOG\"\nsleep 60 &\necho $! > \"$FAKE_LOG/child\"\nsetsid sleep 61 &\necho $! > \"$FAKE_LOG/daemon\"\nexec '{}'\n",
            s.writer.display()
        ),
    );
    chmod_x(&leaving);
    let leaving = leaving.to_string_lossy().into_owned();
    let doc = version(&s.repo, "fresh");
    s.pre_compact(
        "leaving",
        Some(&doc),
        &[("HANDOFF_WRITER", leaving.as_str())],
    );
    s.writer_ended();
    assert!(s.log().contains(" rc=0 "), "{}", s.log());
    none_outlived(&s);
}

/// A writer that puts its handoff in a fence and says something after it — as
/// models do — has the handoff stored without the closing fence or its words.
#[test]
fn words_after_a_fenced_answer_are_never_stored() {
    let s = Scene::new();
    let answer = format!(
        "Here is the handoff:\n\n```markdown\n{}```\n\nLet me know if you want any changes.\n",
        version(&s.repo, "fenced")
    );
    s.pre_compact("fenced", Some(&answer), &[]);
    s.writer_ended();
    let o = s.hook(
        "post-compact",
        "fenced",
        serde_json::json!({"trigger": "manual"}),
    );
    assert_eq!(o.code, 0);
    let slot = std::fs::read_to_string(&s.slot).expect("slot");
    assert!(slot.contains("status: fenced "), "installed: {slot}");
    assert!(
        !slot.contains("Let me know") && !slot.trim_end().ends_with("```"),
        "{slot}"
    );
}

/// The scene's writer behind a script that first starts `script` (saved as `name`) in the
/// background: the path of that hostile writer.
fn hostile_writer(s: &Scene, name: &str, script: &str) -> String {
    let descendant = s.env.write(name, script);
    chmod_x(&descendant);
    let hostile = s.env.write(
        &format!("writer-{name}"),
        format!(
            "#!/bin/sh\nmkdir -p \"$FAKE_LOG\"\n'{}' &\nexec '{}'\n",
            descendant.display(),
            s.writer.display()
        ),
    );
    chmod_x(&hostile);
    hostile.to_string_lossy().into_owned()
}

/// A writer that answers and exits, leaving a descendant that re-forks itself and holds the
/// writer's stdout open: the answer is taken once the writer itself exited (never `timeout`),
/// and the descendants are ended.
#[test]
fn a_descendant_holding_the_pipe_never_turns_a_good_answer_into_a_timeout() {
    let s = Scene::new();
    let hostile = hostile_writer(
        &s,
        "reforker.sh",
        "#!/bin/sh\necho $$ >> \"$FAKE_LOG/reforked\"\nsleep 0.02\n\"$0\" &\n",
    );
    let doc = version(&s.repo, "fresh");
    s.pre_compact(
        "reforked",
        Some(&doc),
        &[("HANDOFF_WRITER", hostile.as_str())],
    );
    s.writer_ended();
    assert!(s.log().contains(" rc=0 "), "{}", s.log());
    std::thread::sleep(std::time::Duration::from_millis(300));
    let pids = std::fs::read_to_string(s.fake.join("reforked")).unwrap_or_default();
    let last = pids.lines().last().unwrap_or_default().to_string();
    let grown = std::fs::read_to_string(s.fake.join("reforked")).unwrap_or_default();
    assert_eq!(pids, grown, "the re-forking descendant still runs");
    // The pid is the reforker's only while it runs that script (pids are reused: 32,768 here).
    let reforker_at = |pid: &str| {
        alive(pid)
            && std::fs::read(format!("/proc/{}/cmdline", pid.trim()))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains("reforker.sh"))
    };
    assert!(!reforker_at(&last), "{last} outlived the run");
}

/// A descendant that re-forks itself as fast as it can (each generation forks and exits at
/// once, so no pid lives long enough to be found by a scan of `/proc` and signalled), ignores
/// SIGTERM and leaves its session (`setsid`), three chains of it, does not outlive the run
/// either: once the writer's end is recorded, its log of generations no longer grows. (It stops
/// by itself after 8 s, so a failure leaves nothing running.)
#[test]
fn a_fast_self_reforking_descendant_does_not_outlive_the_run() {
    let s = Scene::new();
    // Perl (perl-base is part of every Debian and Ubuntu system) forks far faster than a shell.
    let forker = s.env.write(
        "fast-reforker.pl",
        "#!/usr/bin/perl\nuse POSIX ();\n$SIG{TERM} = 'IGNORE';\nmy $log = \"$ENV{FAKE_LOG}/generations\";\nmy $end = time + 8;\nmy $n = 0;\nwhile (time < $end) {\n    POSIX::_exit(0) if fork;\n    POSIX::setsid();\n    $n++;\n    if ($n % 20 == 1) { open(my $f, '>>', $log) or die; print $f \"$n\\n\"; close $f; }\n}\n",
    );
    chmod_x(&forker);
    // Three chains (each must be caught); the writer answers once they are under way.
    let hostile = s.env.write(
        "writer-fast-reforker.sh",
        format!(
            "#!/bin/sh\nmkdir -p \"$FAKE_LOG\"\n'{0}' &\n'{0}' &\n'{0}' &\nwhile [ ! -e \"$FAKE_LOG/generations\" ]; do sleep 0.01; done\nexec '{1}'\n",
            forker.display(),
            s.writer.display()
        ),
    );
    chmod_x(&hostile);
    let hostile = hostile.to_string_lossy().into_owned();
    s.pre_compact(
        "fast",
        Some(&version(&s.repo, "fresh")),
        &[("HANDOFF_WRITER", hostile.as_str())],
    );
    s.writer_ended();
    let generations =
        || std::fs::read_to_string(s.fake.join("generations")).map_or(0, |l| l.lines().count());
    // The writer's end is recorded once its descendants are gone; a generation that was writing
    // its line then has had its moment.
    std::thread::sleep(std::time::Duration::from_millis(200));
    let then = generations();
    std::thread::sleep(std::time::Duration::from_millis(800));
    assert_eq!(
        then,
        generations(),
        "a re-forking descendant outlived the run"
    );
    assert!(then > 0, "the re-forker ran");
}

/// The commands a text tells someone to run: every `<handoff-store> …` up to the end of its
/// backticks or line, split as a shell would split our quoting (single quotes, plain words).
fn commands_in(text: &str) -> Vec<Vec<String>> {
    let me = bin().display().to_string();
    let mut found = Vec::new();
    for (i, _) in text.match_indices(&me) {
        let rest = &text[i + me.len()..];
        let end = rest.find(['`', '\n']).unwrap_or(rest.len());
        let mut words = Vec::new();
        let mut word = String::new();
        let mut quoted = false;
        let mut any = false;
        for c in rest[..end].chars() {
            match c {
                '\'' => {
                    quoted = !quoted;
                    any = true;
                }
                ' ' if !quoted => {
                    if any || !word.is_empty() {
                        words.push(std::mem::take(&mut word));
                    }
                    any = false;
                }
                _ => word.push(c),
            }
        }
        if any || !word.is_empty() {
            words.push(word);
        }
        found.push(words);
    }
    found
}

/// No dead ends. Every state of the writer and the delivery, and every command its
/// texts suggest, run in that state: none ends in "no version", "not found" or a usage error.
#[test]
fn every_command_the_texts_suggest_works_in_the_state_that_suggested_it() {
    let mut ran = Vec::new();
    let walk = |state: &str, env: &TestEnv, texts: &[String], ran: &mut Vec<String>| {
        // Each command once, however many texts suggest it (a second `restore` undoes the
        // first).
        let mut seen: Vec<Vec<String>> = Vec::new();
        for text in texts {
            for words in commands_in(text) {
                if seen.contains(&words) {
                    continue;
                }
                seen.push(words.clone());
                let o = run(env.store().args(&words).timeout(Duration::from_secs(60)));
                let said = format!("{}{}", o.stdout, o.stderr);
                assert!(
                    matches!(o.code, 0 | 1)
                        && !said.contains("no version")
                        && !said.contains("not found"),
                    "{state}: `handoff-store {}` exited {}: {said}\nsuggested by:\n{text}",
                    words.join(" "),
                    o.code
                );
                ran.push(format!(
                    "{state}: {}",
                    words.first().cloned().unwrap_or_default()
                ));
            }
        }
    };
    let outputs = |s: &Scene, sid: &str| -> Vec<String> {
        let read = s.read("0");
        let start = s.hook(
            "session-start",
            sid,
            serde_json::json!({"source": "compact"}),
        );
        vec![read.stdout, read.stderr, start.stdout]
    };

    // Held: the answer passed the gate, the compaction was never confirmed.
    let s = Scene::new();
    s.pre_compact("held", Some(&version(&s.repo, "new")), &[]);
    s.writer_ended();
    let texts = outputs(&s, "held-next");
    assert!(texts[0].contains(" restore "), "{}", texts[0]);
    walk("held", &s.env, &texts, &mut ran);
    assert!(
        std::fs::read_to_string(&s.slot)
            .expect("slot")
            .contains("status: new "),
        "restore installed the held answer"
    );
    // Acted on: the note is gone (following it again would swap the older handoff back in).
    let after = s.read("0");
    assert!(
        !after.stdout.contains("NOT installed") && !after.stdout.contains(" restore "),
        "{}",
        after.stdout
    );

    // Refused: the gate refused the answer three times; it is named for reference, never
    // offered in place of the handoff the reader has (which passes the gate).
    let s = Scene::new();
    s.pre_compact("rot", Some(&rotten(&s.repo)), &[]);
    s.hook("post-compact", "rot", serde_json::json!({}));
    s.writer_ended();
    assert!(s.log().contains(" state=refused "), "one word: {}", s.log());
    let o = run(s.env.store().args(["status", "--json", "-C"]).arg(&s.repo));
    assert!(o.stdout.contains(r#""state":"refused""#), "{}", o.stdout);
    let texts = outputs(&s, "rot-next");
    assert!(
        texts[0].contains("the gate refused (exit 1)")
            && texts[0].contains("for reference")
            && !texts[0].contains("--from")
            && !texts[0].contains("marked"),
        "{}",
        texts[0]
    );
    walk("refused", &s.env, &texts, &mut ran);
    assert!(
        !std::fs::read_to_string(&s.slot)
            .expect("slot")
            .contains("a fragment that is not there"),
        "a command offered stored the refused answer"
    );

    // Abandoned placeholders, with and without a version to bring back.
    for kept in [false, true] {
        let env = TestEnv::new();
        let repo = env.shop("shop", "main");
        if kept {
            env.stored(&repo, &version(&repo, "old"));
        }
        env.use_handoffs(&repo);
        let o = run(env
            .store()
            .args(["write", "--placeholder", "--checkout"])
            .arg(&repo));
        assert_eq!(o.code, 0, "{}", o.stderr);
        env.age(
            &env.store_dir().join(env.slot_name(&repo, "main")),
            3 * 3600,
        );
        let read = run(env
            .store()
            .args(["read", "--no-consume", "-C"])
            .arg(&repo)
            .env("CTX_FORK_TIMEOUT_SECONDS", "1"));
        let start = run(env
            .hook(
                "session-start",
                &serde_json::json!({"session_id": "a", "cwd": repo, "source": "compact"})
                    .to_string(),
            )
            .env("CTX_FORK_TIMEOUT_SECONDS", "1"));
        assert_eq!(
            read.stdout.contains(" restore "),
            kept,
            "restore only with a version to restore: {}",
            read.stdout
        );
        walk(
            if kept { "abandoned, kept" } else { "abandoned" },
            &env,
            &[read.stdout, start.stdout],
            &mut ran,
        );
    }

    // The offer at a fresh start.
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    env.stored(&repo, &version(&repo, "old"));
    let o = run(&mut env.hook(
        "session-start",
        &serde_json::json!({"session_id": "o", "cwd": repo, "source": "startup"}).to_string(),
    ));
    walk("offer", &env, &[o.stdout], &mut ran);

    for state in ["held", "abandoned, kept", "offer"] {
        assert!(
            ran.iter().any(|r| r.starts_with(&format!("{state}:"))),
            "{state} suggested a command that was run: {ran:?}"
        );
    }
}

/// The writer's cost is visible. Each run records its wall time and the tokens and
/// money its client reported; `status` shows the last run and the last seven days.
#[test]
fn status_shows_what_the_writer_cost() {
    let s = Scene::new();
    for (i, sid) in ["one", "two"].into_iter().enumerate() {
        s.pre_compact(
            sid,
            Some(&version(&s.repo, &format!("v{i}"))),
            &[("FAKE_COST", "0.25")],
        );
        s.hook("post-compact", sid, serde_json::json!({}));
        assert!(
            eventually(30, || s.log().matches(" rc=").count() > i),
            "{}",
            s.log()
        );
    }
    let o = run(s.env.store().args(["status", "-C"]).arg(&s.repo));
    let last = o
        .stdout
        .lines()
        .find(|l| l.starts_with("writer   last run "))
        .unwrap_or_else(|| panic!("{}", o.stdout));
    assert!(
        last.contains(" (obedient-writer.sh): promoted, ")
            && last.ends_with(" s, 1.2k tokens in, 300 out, $0.25"),
        "{last}"
    );
    assert!(
        o.stdout.contains("writer   last 7 days: 2 runs, ")
            && o.stdout.contains(" s, 2.4k tokens in, 600 out, $0.50 — each is a second model run; git config handoff.writer off stops them\n"),
        "{}",
        o.stdout
    );
    let (_, v) = json(s.env.store().args(["status", "--json", "-C"]).arg(&s.repo));
    assert_eq!(v["writer_costs"]["week_runs"], 2);
    assert_eq!(v["writer_costs"]["last"]["cost_usd"], 0.25);
    assert_eq!(v["writer_costs"]["last"]["input_tokens"], 1200);
}

/// Never block a working session. After a compaction whose writer is still at work,
/// the session gets what the slot holds now, one line that a fresher handoff is coming, and —
/// where the client runs our prompt hook — the fresh one at the first prompt after it landed,
/// exactly once. Nothing tells it to wait.
#[test]
fn a_compaction_with_a_slow_writer_never_blocks_and_the_next_prompt_carries_the_fresh_handoff() {
    let s = Scene::new();
    s.pre_compact(
        "slow",
        Some(&version(&s.repo, "fresh")),
        &[("FAKE_SLEEP", "3")],
    );
    let o = s.hook(
        "session-start",
        "slow",
        serde_json::json!({"source": "compact"}),
    );
    let text = context(&o);
    assert!(text.contains("status: old "), "{text}");
    assert!(
        text.contains("**A fresher handoff is being written** in the background for `main`")
            && text.contains("It will be given to you with the next prompt once it is stored — do not wait for it."),
        "{text}"
    );
    for never in ["must", "--wait", "timeout"] {
        assert!(!text.contains(never), "{never}: {text}");
    }
    let receipt: serde_json::Value = serde_json::from_str(&o.stdout).expect("json");
    assert!(
        receipt["systemMessage"].as_str().is_some_and(
            |r| r.ends_with("; a fresher one is being written and follows at the next prompt")
        ),
        "{receipt}"
    );
    let prompt = || {
        s.hook(
            "user-prompt-submit",
            "slow",
            serde_json::json!({"prompt": "go on", "hook_event_name": "UserPromptSubmit"}),
        )
    };
    assert_eq!(
        prompt().stdout,
        "",
        "still writing: nothing yet, nothing waits"
    );
    s.writer_ended();
    let o = prompt();
    let v: serde_json::Value = serde_json::from_str(&o.stdout).expect("JSON");
    let fresh = v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap_or_default();
    assert!(
        fresh.starts_with("# Context reset (UserPromptSubmit, source: compact)")
            && fresh.contains("status: fresh "),
        "{fresh}"
    );
    assert_eq!(prompt().stdout, "", "exactly once");
}

/// A promise is kept once, in its own repository, only with the write it promised, and never
/// re-sends what the session has: two prompt hooks at once deliver it once; a prompt in another
/// repository leaves it (and that repository's handoff) alone; a fresh handoff that says what
/// the session was given is one line; a manual write that lands before the writer's is not
/// given as the promised one.
#[test]
fn a_promise_is_kept_once_in_its_repository_with_its_own_write() {
    let promised = |s: &Scene, sid: &str, doc: &str| {
        s.pre_compact(sid, Some(doc), &[("FAKE_SLEEP", "2")]);
        let text = context(&s.hook(
            "session-start",
            sid,
            serde_json::json!({"source": "compact"}),
        ));
        assert!(
            text.contains("It will be given to you with the next prompt"),
            "{text}"
        );
    };
    let prompt = |s: &Scene, sid: &str, extra: serde_json::Value| {
        let mut v = serde_json::json!({"prompt": "go on", "hook_event_name": "UserPromptSubmit"});
        if let (Some(o), Some(e)) = (v.as_object_mut(), extra.as_object()) {
            o.extend(e.clone());
        }
        s.env.hook("user-prompt-submit", &s.input(sid, v))
    };
    let ended = |s: &Scene, sid: &str| {
        let line = format!("session={sid} ");
        assert!(
            eventually(30, || s
                .log()
                .lines()
                .any(|l| l.contains(&line) && l.contains(" rc="))),
            "{}",
            s.log()
        );
    };
    // Two prompt hooks at once (a plugin's and a manual install's): one delivery.
    let s = Scene::new();
    promised(&s, "pair", &version(&s.repo, "fresh"));
    ended(&s, "pair");
    let input = s.input("pair", serde_json::json!({"prompt": "go on"}));
    let spawn = || {
        let mut c = s.env.store_process();
        c.args(["hook", "user-prompt-submit"])
            .env("LAST_CLEAR_STATE_DIR", s.env.marker_dir())
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped());
        c.spawn().expect("spawn")
    };
    let mut pair = [spawn(), spawn()];
    for child in &mut pair {
        use std::io::Write;
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(input.as_bytes())
            .expect("input");
    }
    let delivered = pair
        .into_iter()
        .map(|c| String::from_utf8_lossy(&c.wait_with_output().expect("wait").stdout).into_owned())
        .filter(|o| o.contains("status: fresh "))
        .count();
    assert_eq!(delivered, 1, "one promise, one delivery");

    // A prompt whose cwd moved to another repository keeps nothing there.
    let s = Scene::new();
    let other = s.env.shop("other", "main");
    let theirs = s.env.stored(&other, &version(&other, "theirs"));
    promised(&s, "moved", &version(&s.repo, "fresh"));
    ended(&s, "moved");
    let o = run(&mut prompt(&s, "moved", serde_json::json!({"cwd": other})));
    assert!(!o.stdout.contains("status: "), "{}", o.stdout);
    assert!(
        std::fs::read_to_string(&theirs)
            .expect("theirs")
            .contains("progress: complete"),
        "another repository's handoff was consumed"
    );
    let o = run(&mut prompt(&s, "moved", serde_json::json!({})));
    assert!(
        o.stdout.contains("status: fresh "),
        "the promise waited: {}",
        o.stdout
    );

    // The fresh handoff says what the session was given: one line, not the whole again.
    let s = Scene::new();
    let same = std::fs::read_to_string(&s.slot).expect("slot");
    promised(&s, "same", &same);
    ended(&s, "same");
    let o = run(&mut prompt(&s, "same", serde_json::json!({})));
    assert!(
        o.stdout.contains("nothing new to read") && !o.stdout.contains("## Do not re-derive"),
        "{}",
        o.stdout
    );

    // A manual write lands before the writer's: the promise is not kept with it.
    let s = Scene::new();
    promised(&s, "beaten", &version(&s.repo, "fresh"));
    s.env.stored(&s.repo, &version(&s.repo, "manual"));
    ended(&s, "beaten");
    let o = run(&mut prompt(&s, "beaten", serde_json::json!({})));
    assert!(
        !o.stdout.contains("by its automatic write") && !o.stdout.contains("status: manual "),
        "{}",
        o.stdout
    );
}

/// A promise is settled by a delivery of what it promised: a second compaction of the session
/// after the write landed gives the fresh handoff with its SessionStart, and the next prompt
/// does not give it again.
#[test]
fn a_compaction_that_delivers_the_promised_handoff_settles_the_promise() {
    let s = Scene::new();
    s.pre_compact(
        "twice",
        Some(&version(&s.repo, "fresh")),
        &[("FAKE_SLEEP", "2")],
    );
    let start = || {
        let mut c = s.env.hook(
            "session-start",
            &s.input("twice", serde_json::json!({"source": "compact"})),
        );
        c.env("HANDOFF_CLAIM_WINDOW_SECONDS", "0");
        context(&run(&mut c))
    };
    let first = start();
    assert!(
        first.contains("It will be given to you with the next prompt"),
        "{first}"
    );
    s.writer_ended();
    let second = start();
    assert!(second.contains("status: fresh "), "{second}");
    let o = s.hook(
        "user-prompt-submit",
        "twice",
        serde_json::json!({"prompt": "go on", "hook_event_name": "UserPromptSubmit"}),
    );
    assert!(
        !o.stdout.contains("status: fresh "),
        "said twice: {}",
        o.stdout
    );
}

/// Every state of a compaction's own write, with its title sentence, note and receipt checked
/// against each other and against who wrote the handoff shown: promoted (its write shown), a
/// later session's compaction (no write of its own: never "its automatic write"), refused (the
/// note once, to that session; not to a later one with the writer off), failed.
#[test]
fn each_compaction_state_says_one_thing_in_its_sentence_note_and_receipt() {
    let s = Scene::new();
    let ended = |sid: &str| {
        let line = format!("session={sid} ");
        assert!(
            eventually(30, || s
                .log()
                .lines()
                .any(|l| l.contains(&line) && l.contains(" rc="))),
            "{sid}'s writer never ended: {}",
            s.log()
        );
    };
    let start = |sid: &str| {
        let o = s.hook(
            "session-start",
            sid,
            serde_json::json!({"source": "compact"}),
        );
        let v: serde_json::Value = serde_json::from_str(o.stdout.trim()).unwrap_or_default();
        (
            v["hookSpecificOutput"]["additionalContext"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
            v["systemMessage"].as_str().unwrap_or_default().to_string(),
        )
    };
    // Promoted: the handoff shown is this session's write.
    s.pre_compact("own", Some(&version(&s.repo, "mine")), &[]);
    ended("own");
    let (text, receipt) = start("own");
    assert!(
        text.contains("ago by its automatic write: check that its Next")
            && text.contains("status: mine ")
            && !text.contains("**Background write:**")
            && receipt.contains("injected (gate OK"),
        "{text}\n{receipt}"
    );
    // Another session's compaction, no write of its own: the same handoff is not "its" write.
    let (text, _) = start("later");
    assert!(
        text.contains("no handoff was written for it") && !text.contains("by its automatic write"),
        "{text}"
    );
    // Refused: its own compaction hears why, once; a later session's compaction with the
    // writer off does not.
    s.pre_compact("rot", Some(&rotten(&s.repo)), &[]);
    ended("rot");
    let (text, receipt) = start("rot");
    assert!(
        text.contains("its automatic write did not replace the handoff")
            && !text.contains("by its automatic write")
            && text.contains("**Background write:**")
            && text.contains("the gate refused (exit 1)")
            && receipt.contains("injected (gate OK"),
        "{text}\n{receipt}"
    );
    s.env.git(&s.repo, &["config", "handoff.writer", "off"]);
    s.pre_compact("quiet", None, &[]);
    let (text, _) = start("quiet");
    assert!(
        !text.contains("**Background write:**") && text.contains("no handoff was written for it"),
        "a note outlived its compaction: {text}"
    );
    let o = s.hook(
        "session-start",
        "next",
        serde_json::json!({"source": "clear"}),
    );
    assert!(!o.stdout.contains("Background write"), "{}", o.stdout);
    // Failed: no answer at all.
    s.env.git(&s.repo, &["config", "--unset", "handoff.writer"]);
    s.pre_compact("empty", None, &[]);
    ended("empty");
    let (text, _) = start("empty");
    assert!(
        text.contains("its automatic write did not replace the handoff")
            && text.contains("ended without a handoff"),
        "{text}"
    );
    // A write of its own and no handoff at all.
    std::fs::remove_file(&s.slot).expect("rm slot");
    s.env.use_handoffs(&s.repo);
    s.pre_compact("none", None, &[]);
    ended("none");
    let (text, _) = start("none");
    assert!(
        text.contains("An automatic write was attempted")
            && text.contains("it may have failed")
            && text.contains("**no handoff exists for `main`**"),
        "{text}"
    );
}

/// `status`'s writer lines are the repository's own: none in an unrelated repository, each
/// naming its checkout outside git; one run has one state (a held run promoted after its
/// writer's exit reads promoted); "off stops them" only while the writer is not off.
#[test]
fn status_writer_lines_belong_to_their_repository() {
    let s = Scene::new();
    s.pre_compact(
        "one",
        Some(&version(&s.repo, "v1")),
        &[("FAKE_COST", "0.25")],
    );
    // The writer exits before the compaction is confirmed: its record says held.
    assert!(eventually(30, || s.log().contains(" rc=")), "{}", s.log());
    s.hook("post-compact", "one", serde_json::json!({}));
    let o = run(s.env.store().args(["status", "-C"]).arg(&s.repo));
    let last = o
        .stdout
        .lines()
        .find(|l| l.starts_with("writer   last run "))
        .unwrap_or_else(|| panic!("{}", o.stdout));
    assert!(
        last.contains("): promoted, "),
        "one run, one state: {}",
        o.stdout
    );
    assert!(
        !o.stdout.contains(": held"),
        "held and promoted for one run: {}",
        o.stdout
    );
    let other = s.env.shop("other", "main");
    let o = run(s.env.store().args(["status", "-C"]).arg(&other));
    assert!(!o.stdout.contains("writer   "), "{}", o.stdout);
    let plain = s.env.path("plain");
    std::fs::create_dir_all(&plain).expect("plain");
    let o = run(s.env.store().args(["status", "-C"]).arg(&plain));
    assert!(
        o.stdout
            .contains(&format!("writer   last run in {} ", s.repo.display())),
        "{}",
        o.stdout
    );
    s.env.git(&s.repo, &["config", "handoff.writer", "off"]);
    let o = run(s.env.store().args(["status", "-C"]).arg(&s.repo));
    assert!(
        !o.stdout.contains("handoff.writer off stops them")
            && o.stdout
                .contains("handoff.writer is off: no new ones start"),
        "{}",
        o.stdout
    );
}

/// The cost ledger is the store's file, and anyone's to break: a negative cost is no cost, sums
/// of huge counts never wrap, a ledger over its read cap is read from its newest lines (and the
/// next record keeps them), and a FIFO in its place never hangs `status`.
#[test]
fn the_cost_ledger_survives_what_is_written_into_it() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    env.stored(&repo, &version(&repo, "v"));
    let ledger = env.store_dir().join(".writer-costs");
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("epoch")
        .as_secs();
    let line = |at: u64, secs: u64, writer: &str, tokens: u64, cost: f64| {
        format!(
            "{{\"at\":{at},\"seconds\":{secs},\"writer\":\"{writer}\",\"checkout\":\"{}\",\"outcome\":\"promoted\",\"input_tokens\":{tokens},\"output_tokens\":1,\"cost_usd\":{cost}}}\n",
            repo.display()
        )
    };
    let status = |env: &TestEnv| {
        let o = run(env
            .store()
            .args(["status", "-C"])
            .arg(&repo)
            .timeout(std::time::Duration::from_secs(60)));
        assert_eq!(o.code, 0, "{}{}", o.stdout, o.stderr);
        o.stdout
    };
    let huge = u64::MAX;
    std::fs::write(
        &ledger,
        line(now - 60, huge, "w", huge, -5.5) + &line(now - 30, huge, "w", huge, 0.25),
    )
    .expect("ledger");
    let shown = status(&env);
    let week = shown
        .lines()
        .find(|l| l.starts_with("writer   last 7 days: "))
        .unwrap_or_else(|| panic!("{shown}"));
    assert!(!week.contains("$-") && week.contains("$0.25"), "{week}");
    assert!(
        !week.contains(" 0 tokens in") && !week.contains(", 3 s,"),
        "a sum wrapped: {week}"
    );
    // Over 4 MiB of old lines, then the newest: status shows the newest as the last run.
    let mut big = String::new();
    while big.len() < 5 << 20 {
        big.push_str(&line(now - 3600, 1, "old-writer", 1, 0.01));
    }
    big.push_str(&line(now - 10, 7, "newest-writer", 5, 0.5));
    std::fs::write(&ledger, &big).expect("ledger");
    let shown = status(&env);
    assert!(
        shown.contains("writer   last run ") && shown.contains("(newest-writer)"),
        "the newest line was not read: {shown}"
    );
    std::fs::remove_file(&ledger).expect("rm");
    let made = std::process::Command::new("mkfifo")
        .arg(&ledger)
        .status()
        .expect("mkfifo");
    assert!(made.success());
    status(&env);
}
