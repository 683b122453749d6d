//! The hooks (hooks.md) end to end: real hook JSON piped into the binary, the emitted JSON
//! parsed (not grepped), real repositories, a fake writer that records what it was given, and
//! the git hook installed through `core.hooksPath`.

use std::path::{Path, PathBuf};

use crate::util::{TestEnv, canonical, chmod_x, context, eventually, mtime, run};

fn start(env: &TestEnv, source: &str, cwd: &Path) -> crate::util::Outcome {
    let input = serde_json::json!({"session_id": "sess-1", "transcript_path": "/nope", "cwd": cwd, "hook_event_name": "SessionStart", "source": source});
    run(&mut env.hook("session-start", &input.to_string()))
}

fn stub_gate(env: &TestEnv) -> PathBuf {
    crate::util::stub_gate(env, "echo \"CHANGED   stub-args $1 $2\"")
}

fn write_marker(env: &TestEnv, main: &Path, reference: &str, value: serde_json::Value) -> PathBuf {
    let p = env.marker_file(main, reference);
    std::fs::create_dir_all(env.marker_dir()).expect("marker dir");
    std::fs::write(&p, value.to_string()).expect("marker");
    p
}

fn epoch_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("epoch")
        .as_secs() as i64
}

use crate::util::progress;

/// A fresh start offers (title, age, verdict, the command that reads it; nothing
/// consumed), `resume` gets nothing, `/clear` and compaction deliver in full; a `/clear` just
/// before a start makes it a reset; `HANDOFF_ON_STARTUP` turns the offer into the delivery or
/// off, and an old or already-read handoff is not offered.
#[test]
fn a_fresh_start_offers_a_reset_delivers_and_resume_gets_nothing() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    let slot = env.stored(&repo, &canonical(&repo.to_string_lossy(), "main"));
    // A fixed age, so the offer's wording does not depend on how busy the machine is.
    env.age(&slot, 3 * 3600 + 60);
    for silent in ["resume", "fork"] {
        let o = start(&env, silent, &repo);
        assert_eq!(
            (o.code, o.stdout.as_str(), o.stderr.as_str()),
            (0, "", ""),
            "{silent}"
        );
    }
    let o = start(&env, "startup", &repo);
    let offer = context(&o);
    let bin = assert_cmd::cargo::cargo_bin("handoff-store");
    assert_eq!(
        offer,
        format!(
            "# Handoff available (SessionStart, source: startup)\n\nA handoff for `main` is waiting, written {}: \"type the mailables\" (gate OK, 2 of 2 citations resolve). If the user wants to pick that work up, run `{} read '{}'` (it prints the handoff and marks it read); otherwise leave it.",
            offer
                .split("written ")
                .nth(1)
                .and_then(|r| r.split(':').next())
                .unwrap_or("?"),
            bin.display(),
            repo.display()
        )
    );
    assert!(offer.contains("written 3 hours ago"), "{offer}");
    assert!(offer.chars().count() <= 400, "{}", offer.chars().count());
    let receipt: serde_json::Value = serde_json::from_str(&o.stdout).expect("json");
    assert_eq!(
        receipt["systemMessage"],
        "handoff-store: handoff for main offered (gate OK)"
    );
    assert_eq!(
        progress(&slot).as_deref(),
        Some("complete"),
        "an offer never consumes"
    );
    let o = run(env
        .hook("session-start", &start_input("startup", &repo))
        .env("HANDOFF_ON_STARTUP", "off"));
    assert_eq!(o.stdout, "", "off");
    let o = run(env
        .hook("session-start", &start_input("startup", &repo))
        .env("HANDOFF_OFFER_MAX_DAYS", "0"));
    assert_eq!(o.stdout, "", "older than 0 days is not offered");
    env.age(&slot, 2 * 86_400);
    let o = run(env
        .hook("session-start", &start_input("startup", &repo))
        .env("HANDOFF_OFFER_MAX_DAYS", "1"));
    assert_eq!(o.stdout, "", "older than the offer's age");
    let text = context(&run(env
        .hook("session-start", &start_input("startup", &repo))
        .env("HANDOFF_ON_STARTUP", "deliver")));
    assert!(text.starts_with("# Context reset (SessionStart, source: startup)\n"));
    assert!(text.contains("\n---\n# Handoff — type the mailables\n"));
    assert_eq!(
        progress(&slot).as_deref(),
        Some("consumed"),
        "a delivery consumes"
    );
    let line = context(&start(&env, "startup", &repo));
    assert!(
        line.starts_with("The handoff for `main` was read ") && !line.contains("Handoff available"),
        "a handoff already read is not offered again, only named: {line}"
    );
    let text = context(&start(&env, "compact", &repo));
    assert!(text.starts_with("# Context reset (SessionStart, source: compact)"));
    let text = context(&start(&env, "clear", &repo));
    assert!(text.starts_with("# Context reset (SessionStart, source: clear)"));
    write_marker(
        &env,
        &repo,
        "main",
        serde_json::json!({"ended_at": "x", "ended_at_epoch": epoch_now() - 5}),
    );
    let text = context(&start(&env, "startup", &repo));
    assert!(text.starts_with("# Context reset (SessionStart, source: startup, handled as clear)"));
    assert!(text.contains("The session before this one was cleared"));
}

fn start_input(source: &str, repo: &Path) -> String {
    serde_json::json!({"session_id": format!("s-{source}-{}", epoch_now()), "cwd": repo, "source": source}).to_string()
}

#[test]
fn an_exact_pick_is_injected_with_its_verdict_and_consumed_with_mtime_kept() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    let hostile = canonical(&repo.to_string_lossy(), "main").replace(
        "### Traps\n- None.",
        "### Traps\n- Chose `jq -Rs` over sed; \"quotes\"\tand a tab; C:\\Users\\Bart\\file.txt\r\n- back\\slash",
    );
    let slot = env.stored(&repo, &hostile);
    env.age(&slot, 2 * 86_400 + 10);
    let before = mtime(&slot);
    let text = context(&start(&env, "clear", &repo));
    assert!(text.contains(&format!(
        "Handoff for `main`, written 2 days ago: `{}`.",
        slot.display()
    )));
    assert!(text.contains(&format!(
        "\nGATE: OK — 2 of 2 citations resolve against `{}`.\n",
        repo.display()
    )));
    assert!(text.contains(handoff_store_rules()));
    assert!(text.contains("Chose `jq -Rs` over sed; \"quotes\"\tand a tab; C:\\Users\\Bart\\file.txt\r\n- back\\slash"), "bytes intact");
    assert!(text.contains("\n---\n# Handoff — type the mailables\n"));
    assert_eq!(progress(&slot).as_deref(), Some("consumed"));
    assert_eq!(mtime(&slot), before, "the flip keeps the mtime");
    let text = context(&start(&env, "clear", &repo));
    assert!(
        text.contains("It was delivered before: you may have acted on it since."),
        "a consumed handoff is still injected"
    );
}

#[test]
fn a_legacy_document_gains_progress_consumed_after_status() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    let slot = env.stored(&repo, &canonical(&repo.to_string_lossy(), "main"));
    let legacy = std::fs::read_to_string(&slot)
        .expect("slot")
        .replace("progress: complete\n", "");
    std::fs::write(&slot, &legacy).expect("legacy");
    context(&start(&env, "compact", &repo));
    let after = std::fs::read_to_string(&slot).expect("slot");
    assert_eq!(after, legacy.replacen("\nstatus: Invoice done; Reminder not started. Gate run, format held.\n", "\nstatus: Invoice done; Reminder not started. Gate run, format held.\nprogress: consumed\n", 1));
}

#[test]
fn the_gate_seam_gets_the_handoffs_checkout_and_its_verdict_is_shown() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    env.git(
        &repo,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "feature/x",
            &env.path("wt").to_string_lossy(),
        ],
    );
    let wt = env.path("wt");
    env.stored(&wt, &canonical(&wt.to_string_lossy(), "feature/x"));
    let stub = stub_gate(&env);
    let cases = [
        ("0", "GATE: OK"),
        ("1", "GATE: FAILED — 1 citations do not hold against"),
        ("2", "GATE: MALFORMED"),
        ("9", "unverified"),
    ];
    for (exit, phrase) in cases {
        let input =
            serde_json::json!({"session_id": "s", "cwd": wt, "source": "compact"}).to_string();
        let o = run(env
            .hook("session-start", &input)
            .env("VERIFY_HANDOFF_GATE", &stub)
            .env("STUB_GATE_EXIT", exit));
        let text = context(&o);
        assert!(text.contains(phrase), "{exit}: {text}");
        assert!(
            text.contains("Handoff for `feature/x`"),
            "a worktree session finds the main-key slot"
        );
        assert!(text.contains(&format!(
                "CHANGED stub-args {} {}",
                env.store_dir()
                    .join(env.slot_name(&repo, "feature/x"))
                    .display(),
                wt.display()
            )));
        if exit == "2" {
            assert!(text.contains("no citation was checked") && !text.contains("GATE: OK"));
        }
    }
    // An outside gate that fails without naming a failing citation gives no count.
    let quiet = crate::util::stub_gate(&env, "echo checked");
    let input = serde_json::json!({"session_id": "s", "cwd": wt, "source": "compact"}).to_string();
    let text = context(&run(env
        .hook("session-start", &input)
        .env("VERIFY_HANDOFF_GATE", &quiet)
        .env("STUB_GATE_EXIT", "1")));
    assert!(
        text.contains(&format!("GATE: FAILED against `{}`.", wt.display())),
        "{text}"
    );
    let text = context(&run(env
        .hook("session-start", &input)
        .env("VERIFY_HANDOFF_GATE", env.path("missing-gate"))));
    assert!(
        text.contains("GATE: NOT RUN")
            && !text.contains("GATE: OK")
            && text.contains("\n---\n# Handoff — ")
    );
}

#[test]
fn warn_lines_are_hidden_from_the_reader_and_counted() {
    let env = TestEnv::new();
    let repo = env.repo("r", "main", &[("file.txt", "one\n")]);
    let doc = crate::util::with_pointers(&repo.to_string_lossy(), "main", &["file.txt:1"])
        .replace("- see file.txt:1", "- x")
        .replace(
            "### Traps\n- None.",
            "### Traps\n- Watch a.php:3 and b.php:4 here.",
        );
    env.stored(&repo, &doc);
    let text = context(&start(&env, "compact", &repo));
    assert!(!text.contains("nothing in the prose refers to it"));
    assert!(
        !text.contains("WARN"),
        "authoring-side lines are not the reader's: {text}"
    );
    assert!(
        text.contains(&format!(
            "GATE: OK — 1 of 1 citations resolve against `{}`.",
            repo.display()
        )),
        "{text}"
    );
    assert!(
        !text.contains("OK       file.txt:1"),
        "no line per resolved citation"
    );
}

/// The compaction's sentence comes from this session's own write, not from PreCompact's dedup
/// lock: a lock with no write of its own, beside a handoff the user wrote, is "no handoff was
/// written for it" — never "by its automatic write" (tests/cli/compaction.rs pairs each state
/// of a write with its sentence, note and receipt).
#[test]
fn compact_says_whether_a_write_was_attempted() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    env.use_handoffs(&repo);
    let lock = env.home().join(".claude/state/handoff-fork/sess-1.lock");
    assert_eq!(
        start(&env, "compact", &repo).stdout,
        "",
        "nothing to say without a write or a handoff"
    );
    std::fs::create_dir_all(lock.parent().expect("state")).expect("state dir");
    std::fs::write(&lock, "").expect("lock");
    assert_eq!(
        start(&env, "compact", &repo).stdout,
        "",
        "a lock alone is no write"
    );
    env.stored(&repo, &canonical(&repo.to_string_lossy(), "main"));
    let text = context(&start(&env, "compact", &repo));
    assert!(
        text.contains("no handoff was written for it: the one below, written")
            && !text.contains("by its automatic write"),
        "{text}"
    );
}

#[test]
fn the_cleared_session_marker_is_reported_and_consumed_once() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    let transcript = env.write("t.jsonl", "{}\n");
    let slot = env.stored(&repo, &canonical(&repo.to_string_lossy(), "main"));
    let m = mtime(&slot)
        .duration_since(std::time::UNIX_EPOCH)
        .expect("epoch")
        .as_secs() as i64;
    let marker = write_marker(
        &env,
        &repo,
        "main",
        serde_json::json!({
        "ended_at": "2026-12-02T10:00:00Z", "ended_at_epoch": m + 120, "resident_tokens": 250_400,
        "transcript_path": transcript, "write_attempted": true}),
    );
    let text = context(&start(&env, "clear", &repo));
    assert!(text.contains("The session before this one was cleared (`/clear`, 250k tokens of context). The handoff below was written 2 minutes before that clear, so it covers it."), "{text}");
    assert!(
        !text.contains(&transcript.display().to_string()),
        "a covered session's transcript is not worth its characters"
    );
    assert!(
        !text.contains(", written "),
        "one clock: the handoff is dated by the clear"
    );
    assert!(!marker.exists(), "a shown marker is deleted");
    let text = context(&start(&env, "clear", &repo));
    assert!(!text.contains("The session before this one was cleared"));
    write_marker(
        &env,
        &repo,
        "main",
        serde_json::json!({"ended_at_epoch": m + 5 * 86_000}),
    );
    write_marker(
        &env,
        &repo,
        "main",
        serde_json::json!({"ended_at_epoch": m + 5 * 86_000, "transcript_path": transcript}),
    );
    let text = context(&start(&env, "clear", &repo));
    assert!(
        text.contains("**The handoff below was written 4 days before that clear**: what the cleared session did after it is not in it."),
        "{text}"
    );
    assert!(text.contains(&format!(
        "Its transcript survives at `{}`: read it only if that work matters",
        transcript.display()
    )));
    std::fs::remove_file(&slot).expect("rm slot");
    write_marker(
        &env,
        &repo,
        "main",
        serde_json::json!({"ended_at_epoch": epoch_now()}),
    );
    let text = context(&start(&env, "clear", &repo));
    assert!(text.contains("**No handoff exists for `main`**, so its work is undocumented."));
    let bad = write_marker(&env, &repo, "main", serde_json::json!([1, 2]));
    assert_eq!(
        start(&env, "clear", &repo).stdout,
        "",
        "an unusable marker is ignored"
    );
    assert!(!bad.exists(), "and deleted");
}

#[test]
fn a_guess_needs_a_corroborating_marker_and_is_never_consumed() {
    let env = TestEnv::new();
    let a = env.shop("a", "main");
    let b = env.shop("b", "topic");
    env.use_handoffs(&b);
    let slot = env.stored(&a, &canonical(&a.to_string_lossy(), "main"));
    assert_eq!(
        start(&env, "clear", &b).stdout,
        "",
        "a guess without a marker is silent"
    );
    let m = mtime(&slot)
        .duration_since(std::time::UNIX_EPOCH)
        .expect("epoch")
        .as_secs() as i64;
    write_marker(
        &env,
        &b,
        "topic",
        serde_json::json!({"ended_at_epoch": m + 30}),
    );
    let text = context(&start(&env, "clear", &b));
    assert!(text.contains("**The handoff below is a GUESS**"), "{text}");
    assert!(text.contains("for branch `main`") && text.contains(&a.display().to_string()));
    assert!(
        text.contains(&format!("citations resolve against `{}`", a.display())),
        "a guess names the checkout its verdict was gated against: {text}"
    );
    assert_eq!(
        progress(&slot).as_deref(),
        Some("complete"),
        "a guess stays complete"
    );
    // Another project, the same corroborating clear: never a guess across projects.
    let other = env.repo("other", "topic", &[("x.txt", "unrelated\n")]);
    env.use_handoffs(&other);
    write_marker(
        &env,
        &other,
        "topic",
        serde_json::json!({"ended_at_epoch": m + 30}),
    );
    let text = context(&start(&env, "clear", &other));
    assert!(
        !text.contains("GUESS") && !text.contains(&slot.display().to_string()),
        "{text}"
    );
    assert!(text.contains("**No handoff exists for `topic`**"), "{text}");
    write_marker(
        &env,
        &b,
        "topic",
        serde_json::json!({"ended_at_epoch": m + 900}),
    );
    let text = context(&start(&env, "clear", &b));
    assert!(!text.contains("GUESS") && text.contains("The session before this one was cleared"));
    assert_eq!(
        start(&env, "compact", &b).stdout,
        "",
        "compact never guesses"
    );
}

#[test]
fn silence_on_bad_input_and_unusable_targets() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    env.stored(&repo, &canonical(&repo.to_string_lossy(), "main"));
    let plain = env.path("home");
    let inputs = [
        String::new(),
        "not json".to_string(),
        "[1]".to_string(),
        serde_json::json!({"cwd": repo}).to_string(),
        serde_json::json!({"cwd": repo, "source": 5}).to_string(),
        serde_json::json!({"cwd": plain, "source": "clear"}).to_string(),
        serde_json::json!({"cwd": env.path("missing"), "source": "clear"}).to_string(),
    ];
    for input in inputs {
        let o = run(&mut env.hook("session-start", &input));
        assert_eq!(
            (o.code, o.stdout.as_str(), o.stderr.as_str()),
            (0, "", ""),
            "{input}"
        );
    }
    let o = run(env
        .hook(
            "session-start",
            &serde_json::json!({"source": "clear", "cwd": repo}).to_string(),
        )
        .env("CONTEXT_ECONOMY_CHECKOUT", &plain));
    assert_eq!(
        o.stdout, "",
        "no fall-through from an unusable CONTEXT_ECONOMY_CHECKOUT"
    );
    let o = run(env
        .hook(
            "session-start",
            &serde_json::json!({"source": "clear", "cwd": repo}).to_string(),
        )
        .env("HANDOFF_WRITER_CHILD", "1"));
    assert_eq!(o.stdout, "", "recursion guard");
    // Without `cwd`, the process's working directory is the target.
    let o = run(env
        .hook("session-start", r#"{"source":"clear"}"#)
        .current_dir(&repo));
    assert!(context(&o).contains("Handoff for `main`"));
    let empty = env.shop("empty", "main");
    std::fs::write(env.store_dir().join(env.slot_name(&empty, "main")), "").expect("empty slot");
    assert_eq!(
        start(&env, "clear", &empty).stdout,
        "",
        "an empty slot is not a candidate"
    );
}

#[test]
fn placeholders_are_reported_by_state_and_never_gated() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    let stub = stub_gate(&env);
    run(env
        .store()
        .args(["write", "--placeholder", "--checkout"])
        .arg(&repo)
        .env("HANDOFF_WRITE_SESSION", "writer-7"));
    let slot = env.store_dir().join(env.slot_name(&repo, "main"));
    let input =
        serde_json::json!({"session_id": "s", "cwd": repo, "source": "compact"}).to_string();
    let text = context(&run(env
        .hook("session-start", &input)
        .env("VERIFY_HANDOFF_GATE", &stub)));
    assert!(
        text.contains("**A handoff is being written**")
            && text.contains("handoff-store read '")
            && text.contains("--wait 60` waits up to 60 s")
            && !text.contains("must"),
        "{text}"
    );
    assert!(
        !text.contains("stub-args") && !text.contains("GATE:"),
        "the gate is not run"
    );
    env.age(&slot, 10);
    let text = context(&run(env
        .hook("session-start", &input)
        .env("CTX_FORK_TIMEOUT_SECONDS", "1")));
    assert!(text.contains("appears to have failed"), "{text}");
    let transcript = env.write("home/.claude/projects/p/writer-7.jsonl", "{}\n");
    let text = context(&run(env
        .hook("session-start", &input)
        .env("CTX_FORK_TIMEOUT_SECONDS", "1")));
    assert!(
        text.contains("past its nominal budget") && text.contains("writer-7.jsonl"),
        "{text}"
    );
    env.age(&transcript, 120);
    let text = context(&run(env
        .hook("session-start", &input)
        .env("CTX_FORK_TIMEOUT_SECONDS", "1")));
    assert!(text.contains("appears to have failed") && text.contains("writer-7.jsonl"));
    assert_eq!(
        progress(&slot).as_deref(),
        Some("writing"),
        "a placeholder is never consumed"
    );
}

fn utf16(s: &str) -> usize {
    s.encode_utf16().count()
}

#[test]
fn long_handoffs_are_cut_to_fit_9500_utf16_units() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    let filler: String = (0..600)
        .map(|i| format!("- decision {i} 😀 keeps the emoji count honest\n"))
        .collect();
    let doc = canonical(&repo.to_string_lossy(), "main")
        .replace("### Dead ends", &format!("{filler}\n### Dead ends"));
    assert!(doc.len() > 30_000);
    let slot = env.stored_any(&repo, &doc);
    let text = context(&start(&env, "clear", &repo));
    assert!(utf16(&text) <= 9_500, "{}", utf16(&text));
    assert!(text.contains("**TRUNCATED:**") && text.contains(&slot.display().to_string()));
    assert!(text.contains("GATE: OK"));
    assert!(
        text.contains("[… cut: "),
        "the Do-not-re-derive section was cut"
    );
    assert!(text.contains("## Next\n1. Do Reminder"), "{text}");
    let huge_next: String = (0..900)
        .map(|i| format!("{i}. step with words\n"))
        .collect();
    let doc = canonical(&repo.to_string_lossy(), "main").replace(
        "1. Do Reminder the same way, starting from `app/Mail/Reminder.php`.\n",
        &huge_next,
    );
    env.stored_any(&repo, &doc);
    let text = context(&start(&env, "clear", &repo));
    assert!(utf16(&text) <= 9_500 && text.contains("TRUNCATED") && text.contains("GATE:"));
}

#[test]
fn hostile_session_ids_never_reach_a_path() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    env.use_handoffs(&repo);
    let transcript = env.write("t.jsonl", "{}\n");
    let writer = fake_writer(&env);
    for id in ["../../x", "$(touch pwned)", "a;b", "line\nbreak"] {
        let input =
            serde_json::json!({"session_id": id, "transcript_path": transcript, "cwd": repo})
                .to_string();
        let o = run(env
            .hook("pre-compact", &input)
            .env("HANDOFF_WRITER", &writer)
            .env("FAKE_LOG", env.path("fake"))
            .env("CTX_FORK_TIMEOUT_SECONDS", "5"));
        assert_eq!((o.code, o.stderr.as_str()), (0, ""));
        assert!(o.stdout.starts_with("Keep verbatim"), "{}", o.stdout);
        assert!(!o.stdout.contains(id), "the id never reaches stdout");
    }
    let locks: Vec<String> = std::fs::read_dir(env.home().join(".claude/state/handoff-fork"))
        .expect("state")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".lock"))
        .collect();
    assert_eq!(locks.len(), 4);
    assert!(
        locks
            .iter()
            .all(|l| l.starts_with("x-") && l.len() == "x-".len() + 32 + ".lock".len()),
        "{locks:?}"
    );
    assert!(!env.path("pwned").exists() && !repo.join("pwned").exists());
    assert!(!env.path("x").exists());
}

fn fake_writer(env: &TestEnv) -> PathBuf {
    let p = env.write(
        "fake-writer.sh",
        "#!/bin/sh\nmkdir -p \"$FAKE_LOG\"\nprintf '%s\\n' \"$@\" > \"$FAKE_LOG/argv.tmp\"\ncat > \"$FAKE_LOG/stdin\"\nenv > \"$FAKE_LOG/env\"\nmv \"$FAKE_LOG/argv.tmp\" \"$FAKE_LOG/argv\"\nsleep \"${FAKE_SLEEP:-0}\"\ntouch \"$FAKE_LOG/done\"\n",
    );
    chmod_x(&p);
    p
}

/// The run directories in the store, by name.
fn runs(env: &TestEnv) -> Vec<String> {
    std::fs::read_dir(env.store_dir().join(".runs"))
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn pre_compact_leaves_the_slot_alone_records_a_run_and_spawns_the_writer_with_an_argv() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    let slot = env.stored(&repo, &canonical(&repo.to_string_lossy(), "main"));
    let before = std::fs::read(&slot).expect("slot");
    let transcript = env.write("t.jsonl", "{}\n");
    let writer = fake_writer(&env);
    let fake = env.path("fake");
    let fire = |sid: &str, extra: &[(&str, &str)]| {
        let input = serde_json::json!({"session_id": sid, "transcript_path": transcript, "cwd": repo, "trigger": "auto"}).to_string();
        let mut c = env.hook("pre-compact", &input);
        c.env("HANDOFF_WRITER", &writer)
            .env("FAKE_LOG", &fake)
            .env("CTX_FORK_TIMEOUT_SECONDS", "20");
        for (k, v) in extra {
            c.env(k, v);
        }
        run(&mut c)
    };
    let o = fire("sess-a", &[]);
    assert_eq!((o.code, o.stderr.as_str()), (0, ""));
    assert!(
        o.stdout.contains("decision") && o.stdout.contains("dead end") && o.stdout.contains("trap"),
        "the compaction instructions: {}",
        o.stdout
    );
    assert!(
        o.stdout.contains(&slot.display().to_string()),
        "names the slot"
    );
    assert_eq!(
        std::fs::read(&slot).expect("slot"),
        before,
        "the complete, unread handoff is untouched"
    );
    assert!(
        !env.store_dir().join(".history").exists(),
        "nothing was displaced into history"
    );
    let ids = runs(&env);
    assert_eq!(ids.len(), 1, "one run recorded: {ids:?}");
    let session = ids[0].clone();
    let shape: Vec<usize> = session.split('-').map(str::len).collect();
    assert_eq!(shape, [8, 4, 4, 4, 12], "UUID shape: {session}");
    let job: serde_json::Value = serde_json::from_slice(
        &std::fs::read(
            env.store_dir()
                .join(".runs")
                .join(&session)
                .join("job.json"),
        )
        .expect("job"),
    )
    .expect("job json");
    assert_eq!(
        job["slot"],
        slot.file_name().expect("name").to_string_lossy().as_ref()
    );
    let lock = env.home().join(".claude/state/handoff-fork/sess-a.lock");
    assert!(lock.is_file());
    assert!(
        eventually(10, || fake.join("argv").is_file()),
        "the writer was spawned"
    );
    let argv = std::fs::read_to_string(fake.join("argv")).expect("argv");
    assert_eq!(
        argv,
        format!(
            "-p\n--output-format\njson\n--session-id\n{session}\n--tools\nRead,Grep,Glob\n--allowedTools\nRead,Grep,Glob\n--disallowedTools\nBash,Write,Edit,MultiEdit,NotebookEdit,WebFetch,WebSearch,Task\n--permission-mode\ndontAsk\n--strict-mcp-config\n--add-dir\n{}\n",
            transcript.parent().expect("folder").display()
        )
    );
    let stdin = std::fs::read_to_string(fake.join("stdin")).expect("stdin");
    assert!(
        stdin.contains(&transcript.display().to_string())
            && stdin.contains("Your final answer is the document itself")
    );
    let envs = std::fs::read_to_string(fake.join("env")).expect("env");
    assert!(
        envs.contains("HANDOFF_WRITER_CHILD=1\n")
            && envs.contains(&format!("CONTEXT_ECONOMY_CHECKOUT={}\n", repo.display()))
    );
    let log = env.home().join(".claude/state/handoff-fork/log.txt");
    assert!(
        eventually(10, || std::fs::read_to_string(&log)
            .is_ok_and(|l| l.contains(" rc=no-answer state=failed scratch="))),
        "completion logged: a writer that stored nothing is a failure"
    );
    let logged = std::fs::read_to_string(&log).expect("log");
    assert!(logged.contains(&format!(
        "session=sess-a write_session={session} spawned writer={}",
        writer.display()
    )));

    let lock_mtime = mtime(&lock);
    std::fs::remove_dir_all(&fake).expect("reset fake log");
    let o = fire("sess-a", &[]);
    assert!(o.stdout.starts_with("Keep verbatim"), "still steered");
    assert_eq!(
        mtime(&lock),
        lock_mtime,
        "dedup leaves the lock mtime alone"
    );
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert!(
        !fake.join("argv").exists(),
        "a second firing within the window spawns nothing"
    );
    fire("sess-a", &[("CTX_FORK_DEDUP_WINDOW_SECONDS", "0")]);
    assert!(
        eventually(10, || fake.join("argv").is_file()),
        "window 0 fires again"
    );
    fire("sess-b", &[]);
    let locks = std::fs::read_dir(lock.parent().expect("state"))
        .expect("state")
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".lock"))
        .count();
    assert_eq!(locks, 2);
}

#[test]
fn pre_compact_declines_without_its_inputs() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    let transcript = env.write("t.jsonl", "{}\n");
    let writer = fake_writer(&env);
    let cases = [
        String::new(),
        serde_json::json!({"transcript_path": transcript, "cwd": repo}).to_string(),
        serde_json::json!({"session_id": "s", "transcript_path": env.path("missing.jsonl"), "cwd": repo}).to_string(),
    ];
    for (i, input) in cases.into_iter().enumerate() {
        let o = run(env
            .hook("pre-compact", &input)
            .env("HANDOFF_WRITER", &writer));
        assert_eq!(o.code, 0);
        // Empty stdin is invalid input: silence. Otherwise the summary is still steered.
        assert_eq!(o.stdout.is_empty(), i == 0, "{}", o.stdout);
    }
    let o = run(env
        .hook(
            "pre-compact",
            &serde_json::json!({"session_id": "s", "transcript_path": transcript, "cwd": repo})
                .to_string(),
        )
        .env("HANDOFF_WRITER", env.path("no-writer")));
    assert_eq!(o.code, 0);
    assert!(
        !env.home().join(".claude/state/handoff-fork").exists()
            || std::fs::read_dir(env.home().join(".claude/state/handoff-fork"))
                .expect("state")
                .count()
                == 0,
        "no lock"
    );
    assert!(
        !env.store_dir().join(env.slot_name(&repo, "main")).exists(),
        "no placeholder"
    );
    assert!(runs(&env).is_empty(), "no run recorded");
}

/// The summary is told of a handoff being written in the background only when a writer was
/// really started; on every decline the instructions still steer it, without that sentence.
#[test]
fn pre_compact_promises_a_background_handoff_only_when_a_writer_started() {
    const BACKGROUND: &str = "being written in the background";
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    env.use_handoffs(&repo);
    let transcript = env.write("t.jsonl", "{}\n");
    let writer = fake_writer(&env);
    let fire = |sid: &str, transcript: &Path, extra: &[(&str, &Path)]| {
        let mut input = serde_json::json!({"transcript_path": transcript, "cwd": repo});
        if !sid.is_empty() {
            input["session_id"] = sid.into();
        }
        let mut c = env.hook("pre-compact", &input.to_string());
        c.env("HANDOFF_WRITER", &writer)
            .env("FAKE_LOG", env.path(&format!("fake-{sid}")))
            .env("CTX_FORK_TIMEOUT_SECONDS", "20");
        for (k, v) in extra {
            c.env(k, v);
        }
        let o = run(&mut c);
        assert_eq!((o.code, o.stderr.as_str()), (0, ""), "{sid}");
        assert!(o.stdout.starts_with("Keep verbatim"), "{sid}: {}", o.stdout);
        o.stdout
    };
    let declined = |what: &str, stdout: String| {
        assert!(!stdout.contains(BACKGROUND), "{what}: {stdout}");
    };
    declined("no session_id", fire("", &transcript, &[]));
    declined(
        "transcript missing",
        fire("no-transcript", &env.path("missing.jsonl"), &[]),
    );
    declined(
        "writer program missing",
        fire(
            "no-writer",
            &transcript,
            &[("HANDOFF_WRITER", &env.path("no-such-writer"))],
        ),
    );
    let not_a_dir = env.write("store-is-a-file", "x");
    declined(
        "store unusable",
        fire(
            "no-store",
            &transcript,
            &[("HANDOFF_STORE_DIR", &not_a_dir)],
        ),
    );

    // The slot locked by another holder (flock, as the store locks it).
    let name = env.slot_name(&repo, "main");
    let locks = env.store_dir().join(".locks");
    std::fs::create_dir_all(&locks).expect("locks");
    let holder = std::fs::File::create(locks.join(format!("{name}.lock"))).expect("lock file");
    holder.lock().expect("lock");
    let locked = fire("locked", &transcript, &[]);
    drop(holder);
    declined("slot locked", locked);

    // Another branch's handoff in this branch's slot (a file-name collision).
    std::fs::create_dir_all(env.store_dir()).expect("store");
    let slot = env.store_dir().join(&name);
    std::fs::write(&slot, canonical(&repo.to_string_lossy(), "elsewhere")).expect("slot");
    declined("collision", fire("collision", &transcript, &[]));
    std::fs::remove_file(&slot).expect("slot");
    assert!(runs(&env).is_empty(), "no decline recorded a run");

    let started = fire("started", &transcript, &[]);
    assert!(
        started.contains(BACKGROUND) && started.contains(&slot.display().to_string()),
        "a writer started: {started}\n{}",
        std::fs::read_to_string(env.home().join(".claude/state/handoff-fork/log.txt"))
            .unwrap_or_default()
    );
    assert_eq!(runs(&env).len(), 1);
}

#[test]
fn the_supervisor_returns_at_once_and_kills_a_writer_past_its_time() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    env.use_handoffs(&repo);
    let transcript = env.write("t.jsonl", "{}\n");
    let writer = fake_writer(&env);
    let fake = env.path("fake");
    let input =
        serde_json::json!({"session_id": "slow", "transcript_path": transcript, "cwd": repo})
            .to_string();
    let o = run(env
        .hook("pre-compact", &input)
        .env("HANDOFF_WRITER", &writer)
        .env("FAKE_LOG", &fake)
        .env("FAKE_SLEEP", "30")
        .env("CTX_FORK_TIMEOUT_SECONDS", "1"));
    assert_eq!(o.code, 0);
    assert!(
        !fake.join("done").exists(),
        "the hook did not wait for the writer"
    );
    let log = env.home().join(".claude/state/handoff-fork/log.txt");
    assert!(
        eventually(20, || std::fs::read_to_string(&log)
            .is_ok_and(|l| l.contains(" rc=timeout state=failed scratch="))),
        "timeout logged"
    );
    assert!(!fake.join("done").exists(), "the writer was killed");
}

#[test]
fn session_end_records_a_marker_on_clear_only() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "fix/foo");
    env.use_handoffs(&repo);
    let transcript = env.write(
        "t.jsonl",
        "{\"message\":{\"usage\":{\"input_tokens\":2,\"cache_creation_input_tokens\":1000,\"cache_read_input_tokens\":5000}}}\n{\"message\":{\"usage\":{\"input_tokens\":2,\"cache_creation_input_tokens\":3000,\"cache_read_input_tokens\":297000}}}\n",
    );
    let end = |reason: &str, sid: &str, t: &Path| {
        let input = serde_json::json!({"session_id": sid, "transcript_path": t, "cwd": repo, "reason": reason}).to_string();
        run(&mut env.hook("session-end", &input))
    };
    for reason in ["resume", "logout", "prompt_input_exit", "other"] {
        end(reason, "s", &transcript);
        assert!(!env.marker_dir().exists(), "{reason}");
    }
    let o = end("clear", "weird \"id\"", &transcript);
    assert_eq!((o.code, o.stdout.as_str(), o.stderr.as_str()), (0, "", ""));
    let marker = env.marker_file(&repo, "fix/foo");
    assert!(marker.to_string_lossy().ends_with("-fix-foo.json"));
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&marker).expect("marker")).expect("JSON");
    assert_eq!(v["reason"], "clear");
    assert_eq!(v["session_id"], "weird \"id\"");
    assert_eq!(v["branch"], "fix/foo");
    assert_eq!(v["resident_tokens"], 300_002);
    assert_eq!(v["transcript_path"], transcript.display().to_string());
    assert_eq!(v["handoff"]["present"], false);
    assert_eq!(v["write_attempted"], false);
    assert_eq!(v["repo"], repo.display().to_string());
    assert!(
        v["ended_at_epoch"].is_i64() && v["ended_at"].as_str().is_some_and(|s| s.ends_with('Z'))
    );
    end("clear", "s", &env.path("missing.jsonl"));
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&marker).expect("marker")).expect("JSON");
    assert_eq!(
        v["resident_tokens"],
        serde_json::Value::Null,
        "an unreadable transcript still gives a marker"
    );
    env.git(
        &repo,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "feature/x",
            &env.path("wt").to_string_lossy(),
        ],
    );
    let input = serde_json::json!({"session_id": "s", "cwd": env.path("wt"), "reason": "clear"})
        .to_string();
    run(&mut env.hook("session-end", &input));
    let wt_marker = env.marker_file(&repo, "feature/x");
    assert!(
        wt_marker.is_file() && marker.is_file(),
        "two branches, two markers"
    );
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&wt_marker).expect("marker")).expect("JSON");
    assert_eq!(v["branch"], "feature/x");
}

#[test]
fn the_git_hook_announces_a_branch_with_a_handoff() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    env.git(&repo, &["checkout", "-q", "-b", "other"]);
    env.stored(&repo, &canonical(&repo.to_string_lossy(), "other"));
    env.git(&repo, &["checkout", "-q", "main"]);
    let hooks = Path::new(env!("CARGO_MANIFEST_DIR")).join("hooks");
    env.git(
        &repo,
        &["config", "core.hooksPath", &hooks.to_string_lossy()],
    );
    let bin = assert_cmd::cargo::cargo_bin("handoff-store");
    let checkout = |branch: &str| {
        std::process::Command::new("git")
            .args(["checkout", "-q", branch])
            .current_dir(&repo)
            .env("HOME", env.home())
            .env("HANDOFF_STORE_DIR", env.store_dir())
            .env("HANDOFF_STORE_BIN", &bin)
            .output()
            .expect("git checkout")
    };
    let out = checkout("other");
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with("handoff-store: other has a handoff (complete, last written ")
            && stderr.ends_with(" ago) — show it with: handoff-store read\n"),
        "{stderr}"
    );
    let out = checkout("main");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "",
        "main has no handoff"
    );
    let o = run(env
        .store()
        .args(["hook", "post-checkout", "a", "b", "0"])
        .current_dir(&repo));
    assert_eq!((o.code, o.stderr.as_str()), (0, ""));
    let o = run(env
        .store()
        .args(["hook", "post-checkout", "only-one"])
        .current_dir(&repo));
    assert_eq!((o.code, o.stderr.as_str()), (0, ""));
}

#[test]
fn shipped_wrappers_and_plugin_files_hold_their_contract() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for name in [
        "session-start.sh",
        "user-prompt-submit.sh",
        "pre-compact.sh",
        "post-compact.sh",
        "session-end.sh",
        "post-checkout",
    ] {
        let path = root.join("hooks").join(name);
        let text = std::fs::read_to_string(&path).expect("wrapper");
        assert!(
            text.starts_with("#!/bin/sh\n")
                && text.contains("exec \"$b\" hook ")
                && !text.contains("eval")
        );
        assert!(
            std::process::Command::new("sh")
                .arg("-n")
                .arg(&path)
                .status()
                .expect("sh -n")
                .success()
        );
        let o = std::process::Command::new("/bin/sh")
            .arg(&path)
            .env("PATH", "/nonexistent")
            .env("HANDOFF_STORE_BIN", "")
            .output()
            .expect("run wrapper");
        assert_eq!(
            o.status.code(),
            Some(0),
            "{name} exits 0 when the binary is missing"
        );
        use std::os::unix::fs::PermissionsExt;
        assert_ne!(
            std::fs::metadata(&path).expect("meta").permissions().mode() & 0o111,
            0,
            "{name} is executable"
        );
    }
    let plugin = root.join("contrib/claude-code");
    let hooks: serde_json::Value = serde_json::from_slice(
        &std::fs::read(plugin.join("hooks/hooks.json")).expect("hooks.json"),
    )
    .expect("JSON");
    let events: Vec<&String> = hooks["hooks"].as_object().expect("hooks").keys().collect();
    assert_eq!(
        events,
        [
            "SessionStart",
            "UserPromptSubmit",
            "PreCompact",
            "PostCompact",
            "SessionEnd",
            "PreToolUse"
        ]
    );
    for (event, arg) in [
        ("SessionStart", "session-start"),
        ("UserPromptSubmit", "user-prompt-submit"),
        ("PreCompact", "pre-compact"),
        ("PostCompact", "post-compact"),
        ("SessionEnd", "session-end"),
        ("PreToolUse", "pre-tool-use"),
    ] {
        let reg = &hooks["hooks"][event];
        assert_eq!(reg.as_array().map(Vec::len), Some(1));
        // The tripwire runs only for the tools that run a command or write a file.
        let matcher = if arg == "pre-tool-use" {
            "Bash|Edit|MultiEdit|Write|NotebookEdit"
        } else {
            ""
        };
        assert_eq!(reg[0]["matcher"], matcher);
        let command = reg[0]["hooks"][0]["command"].as_str().expect("command");
        assert_eq!(
            command,
            format!(
                "b=\"${{HANDOFF_STORE_BIN:-handoff-store}}\"; command -v \"$b\" >/dev/null 2>&1 || exit 0; exec \"$b\" hook {arg}"
            )
        );
    }
    let manifest: serde_json::Value = serde_json::from_slice(
        &std::fs::read(plugin.join(".claude-plugin/plugin.json")).expect("plugin.json"),
    )
    .expect("JSON");
    assert_eq!(manifest["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(manifest["name"], "handoff-store");
    let marketplace: serde_json::Value = serde_json::from_slice(
        &std::fs::read(root.join("contrib/.claude-plugin/marketplace.json")).expect("marketplace"),
    )
    .expect("JSON");
    assert_eq!(
        marketplace["metadata"]["version"],
        env!("CARGO_PKG_VERSION")
    );
    // No empty fields (`"repository": ""` once failed a strict validation); matchers aside.
    fn empty_strings(v: &serde_json::Value, key: &str, found: &mut Vec<String>) {
        match v {
            serde_json::Value::String(s) if s.is_empty() && key != "matcher" => {
                found.push(key.to_string())
            }
            serde_json::Value::Array(a) => a.iter().for_each(|x| empty_strings(x, key, found)),
            serde_json::Value::Object(o) => o.iter().for_each(|(k, x)| empty_strings(x, k, found)),
            _ => {}
        }
    }
    let mut empty = Vec::new();
    for v in [&manifest, &marketplace, &hooks] {
        empty_strings(v, "", &mut empty);
    }
    assert!(empty.is_empty(), "empty fields: {empty:?}");
    let skill = std::fs::read(root.join("contrib/skill/SKILL.md")).expect("skill");
    assert_eq!(
        skill,
        std::fs::read(plugin.join("skills/handoff/SKILL.md")).expect("plugin skill"),
        "the two SKILL.md copies are identical"
    );
    let skill = String::from_utf8(skill).expect("utf8");
    assert!(
        !skill
            .as_bytes()
            .windows(2)
            .any(|w| w[0] == b'$' && w[1].is_ascii_digit()),
        "no $<digit>"
    );
    assert!(
        skill.contains("name: handoff")
            && skill.contains("handoff-store orient")
            && skill.contains("--wait 60`")
    );
    assert!(
        !skill.contains("600000") && !skill.contains("--wait 570"),
        "the skill's Read mode never blocks the model for minutes"
    );
    for file in walk(&plugin) {
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        assert!(
            !text.contains("hookSpecificOutput") && !text.contains("systemMessage"),
            "{}",
            file.display()
        );
    }
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).expect("dir").flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p))
        } else {
            out.push(p)
        }
    }
    out
}

/// `status` says whether the handoff reached the last session, per harness: when,
/// which session and source, how many characters, whether it was cut, whether the handoff was
/// marked consumed (text and JSON).
#[test]
fn status_shows_the_last_delivery_of_each_harness() {
    let status = |env: &TestEnv| -> serde_json::Value {
        let o = run(env
            .store()
            .args(["status", "--format", "json", "-C"])
            .arg(env.path("shop")));
        assert_eq!(o.code, 0, "{}", o.stderr);
        serde_json::from_str(&o.stdout).expect("json")
    };
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    let slot = env.stored(&repo, &canonical(&repo.to_string_lossy(), "main"));
    assert_eq!(status(&env)["deliveries"], serde_json::json!([]));
    let text = context(&start(&env, "clear", &repo));
    let v = status(&env);
    let d = &v["deliveries"][0];
    assert_eq!(d["harness"], "claude-code", "{v}");
    assert_eq!(d["session"], "sess-1");
    assert_eq!(d["source"], "clear");
    assert_eq!(d["event"], "SessionStart");
    assert_eq!(d["chars"], text.chars().count());
    assert_eq!(
        (d["cut"].clone(), d["consumed"].clone()),
        (false.into(), true.into())
    );
    assert_eq!(d["handoff"], slot.to_string_lossy().as_ref());
    // Another repository's status never shows this one's delivery.
    let elsewhere = env.shop("elsewhere", "main");
    let o = run(env.store().arg("status").arg("-C").arg(&elsewhere));
    assert!(o.stdout.contains("delivery none yet"), "{}", o.stdout);
    let o = run(env.store().arg("status").arg("-C").arg(&repo));
    assert!(
        o.stdout.contains(&format!(
            "delivery claude-code {} session sess-1 (clear, SessionStart): {} characters, {} marked consumed",
            d["at"].as_str().expect("at"),
            text.chars().count(),
            slot.display()
        )),
        "{}",
        o.stdout
    );

    // A handoff too long for the client is cut to fit, and status says so.
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    let filler: String = (0..600)
        .map(|i| format!("- decision {i} and what it beat\n"))
        .collect();
    let doc = canonical(&repo.to_string_lossy(), "main")
        .replace("### Dead ends", &format!("{filler}\n### Dead ends"));
    env.stored_any(&repo, &doc);
    context(&start(&env, "clear", &repo));
    let v = status(&env);
    assert_eq!(v["deliveries"][0]["cut"], true, "{v}");
    let o = run(env.store().arg("status").arg("-C").arg(&repo));
    assert!(
        o.stdout.contains(" characters, cut to fit, "),
        "{}",
        o.stdout
    );
}

/// The reading rules, as the injection carries them (three sentences; the Next instruction
/// yields to the user).
fn handoff_store_rules() -> &'static str {
    "A red citation only means its pointer rotted: re-derive it before relying on it; it never reopens a decision, dead end or trap. Open a pointer when your current step needs it. Then do the first unblocked `## Next` item — unless the user asks for something else."
}

/// Never silent when a handoff is there. A start in a repository in use whose branch
/// has a handoff of the last `offerMaxDays` says something: unread, the offer; read already,
/// one line (at most 200 characters) naming when it was read, the commits since, and a command
/// that shows it again — which works. `status` says what a start would say, or why nothing.
#[test]
fn a_start_after_the_handoff_was_read_says_so_in_one_line() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    env.stored(&repo, &canonical(&repo.to_string_lossy(), "main"));
    // What a start says is said where a client's hooks are installed.
    let o = run(env.store().args(["install", "claude", "--user"]));
    assert_eq!(o.code, 0, "{}{}", o.stdout, o.stderr);
    let status = |env: &TestEnv| run(env.store().arg("status").arg("-C").arg(&repo)).stdout;
    assert!(
        status(&env).contains("startup  a fresh start offers the handoff for main\n"),
        "{}",
        status(&env)
    );
    let o = run(env.store().arg("read").arg("-C").arg(&repo));
    assert_eq!(o.code, 0, "{}", o.stderr);
    env.write("shop/later.txt", "later\n");
    env.git(&repo, &["add", "-A"]);
    env.git(&repo, &["commit", "-q", "-m", "later"]);
    let line = context(&start(&env, "startup", &repo));
    assert!(
        line.chars().count() <= 200,
        "{} chars: {line}",
        line.chars().count()
    );
    assert!(!line.contains('\n'), "one line: {line}");
    assert!(
        line.starts_with("The handoff for `main` was read ")
            && line.contains(", 1 commit since; `"),
        "{line}"
    );
    let command = line
        .split('`')
        .nth(3)
        .expect("the command in backticks")
        .to_string();
    let words: Vec<String> = command
        .split(' ')
        .skip(1)
        .map(|w| w.trim_matches('\'').to_string())
        .collect();
    assert_eq!(words[..2], ["read", "--no-consume"], "{command}");
    let o = run(env.store().args(&words));
    assert_eq!(o.code, 0, "{command}: {}", o.stderr);
    assert!(o.stdout.contains("type the mailables"), "{}", o.stdout);
    assert!(
        status(&env)
            .contains("startup  a fresh start says in one line that the handoff for main was read"),
        "{}",
        status(&env)
    );
    env.git(&repo, &["config", "handoff.onStartup", "off"]);
    assert!(
        status(&env).contains("startup  a fresh start says nothing: handoff.onStartup is off\n"),
        "{}",
        status(&env)
    );
}

/// The phrases docs/hooks.md §2.9 and §9 promise are the binary's own: every literal piece of
/// them (between `<placeholders>`, numbers and `…`, at least 12 characters) is in the
/// `handoff-store` executable, so a text reworded in the code without the docs (or the reverse)
/// fails here; and each is asserted by a test of this suite, on the output for its case.
#[test]
fn every_phrase_the_hooks_doc_promises_is_in_the_binary() {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/hooks.md"))
        .expect("hooks.md");
    let bytes = std::fs::read(env!("CARGO_BIN_EXE_handoff-store")).expect("binary");
    let binary = String::from_utf8_lossy(&bytes);
    let table = doc
        .split("### 2.9 Key phrases")
        .nth(1)
        .and_then(|rest| rest.split("\n## ").next())
        .expect("§2.9");
    let conformance = doc
        .split("## 9. Minimum conformance tests")
        .nth(1)
        .and_then(|rest| rest.split("\n## ").next())
        .expect("§9");
    // The phrases column of §2.9, and the prose-like spans of §9 (code, paths and names aside).
    let mut spans: Vec<String> = table
        .lines()
        .filter_map(|l| {
            l.strip_prefix("| ")?
                .split(" | ")
                .nth(1)
                .map(str::to_string)
        })
        .flat_map(|cell| backticked(&cell))
        .filter(|s| !s.starts_with('.'))
        .collect();
    spans.extend(
        backticked(conformance)
            .into_iter()
            .filter(|s| s.matches(' ').count() >= 2 && !s.contains(['=', '/', '$', '`'])),
    );
    // The literal pieces: between `<placeholders>`, `…` and numbers (a case's own values).
    let mut pieces: Vec<String> = Vec::new();
    for span in &spans {
        let mut literal = String::new();
        let mut in_placeholder = false;
        for c in span.chars().chain(std::iter::once('<')) {
            match c {
                '<' => in_placeholder = true,
                '>' if in_placeholder => in_placeholder = false,
                _ if in_placeholder => {}
                '…' | '0'..='9' => literal.push('\u{0}'),
                c => literal.push(c),
            }
            if c == '<' {
                literal.push('\u{0}');
            }
        }
        for piece in literal.split('\u{0}') {
            let piece = piece.trim_matches(|c: char| c == '*' || c == ' ' || c == '`');
            if piece.chars().count() >= 12 {
                pieces.push(piece.to_string());
            }
        }
    }
    assert!(pieces.len() >= 15, "too few phrases found: {pieces:?}");
    // Each is asserted, for its case, on the hook's output by a test of this suite.
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/cli");
    let tests: String = std::fs::read_dir(dir)
        .expect("tests/cli")
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "rs"))
        .filter_map(|e| std::fs::read_to_string(e.path()).ok())
        .collect();
    let untested: Vec<&String> = pieces
        .iter()
        .filter(|p| !tests.contains(p.as_str()))
        .collect();
    assert!(
        untested.is_empty(),
        "no test asserts these for their case: {untested:#?}"
    );
    let missing: Vec<&String> = pieces
        .iter()
        .filter(|p| !binary.contains(p.as_str()))
        .collect();
    assert!(
        missing.is_empty(),
        "docs/hooks.md promises what the binary never says: {missing:#?}"
    );
}

/// The spans of `text` between backticks (a double-backtick span whole).
fn backticked(text: &str) -> Vec<String> {
    let mut spans = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find('`') {
        let ticks = if rest[at..].starts_with("``") {
            "``"
        } else {
            "`"
        };
        let open = at + ticks.len();
        let Some(len) = rest[open..].find(ticks) else {
            break;
        };
        spans.push(rest[open..open + len].trim().to_string());
        rest = &rest[open + len + ticks.len()..];
    }
    spans
}

/// `status` says what is true now: a re-delivery of a handoff already read is not "left
/// unread", and with every hook uninstalled no fresh start says anything of ours.
#[test]
fn status_says_read_before_and_nothing_runs_without_hooks() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    env.stored(&repo, &canonical(&repo.to_string_lossy(), "main"));
    let o = run(env.store().args(["install", "claude", "--user"]));
    assert_eq!(o.code, 0, "{}{}", o.stdout, o.stderr);
    for sid in ["one", "two"] {
        let input = serde_json::json!({"session_id": sid, "cwd": repo, "source": "compact"});
        run(&mut env.hook("session-start", &input.to_string()));
    }
    let o = run(env.store().args(["status", "-C"]).arg(&repo));
    let delivery = o
        .stdout
        .lines()
        .find(|l| l.starts_with("delivery "))
        .unwrap_or_else(|| panic!("{}", o.stdout));
    assert!(
        delivery.ends_with("(read before)") && !delivery.contains("left unread"),
        "{delivery}"
    );
    assert!(o.stdout.contains("startup  a fresh start"), "{}", o.stdout);
    let o = run(env.store().args(["uninstall", "claude", "--user"]));
    assert_eq!(o.code, 0, "{}{}", o.stdout, o.stderr);
    let o = run(env.store().args(["status", "-C"]).arg(&repo));
    assert!(
        o.stdout.contains(
            "startup  no client's hooks are installed: a fresh start runs nothing of ours"
        ),
        "{}",
        o.stdout
    );
}
