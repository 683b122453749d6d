//! Honest labels: in every state of the delivery table, the person's receipt says what reached
//! the model, and no injection says two things that contradict each other.

use std::path::{Path, PathBuf};

use crate::util::{Outcome, TestEnv, canonical, chmod_x, run};

/// SessionStart's injected text and the person's receipt.
fn both(o: &Outcome) -> (String, String) {
    assert_eq!((o.code, o.stderr.as_str()), (0, ""));
    let v: serde_json::Value =
        serde_json::from_str(&o.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {}", o.stdout));
    (
        v["hookSpecificOutput"]["additionalContext"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
        v["systemMessage"].as_str().unwrap_or_default().to_string(),
    )
}

fn hook(env: &TestEnv, event: &str, repo: &Path, sid: &str, extra: serde_json::Value) -> Outcome {
    let mut v =
        serde_json::json!({"session_id": sid, "transcript_path": env.path("t.jsonl"), "cwd": repo});
    if let (Some(o), Some(e)) = (v.as_object_mut(), extra.as_object()) {
        o.extend(e.clone());
    }
    run(&mut env.hook(event, &v.to_string()))
}

/// `/clear` as Claude Code fires it: the session ends, the next starts.
fn clear(env: &TestEnv, repo: &Path, sid: &str) -> (String, String) {
    hook(
        env,
        "session-end",
        repo,
        sid,
        serde_json::json!({"reason": "clear"}),
    );
    both(&hook(
        env,
        "session-start",
        repo,
        &format!("{sid}-next"),
        serde_json::json!({"source": "clear"}),
    ))
}

/// Contradictions no injection may carry.
fn never_contradicts(state: &str, text: &str) {
    let pairs = [
        ("No handoff exists", "is being written"),
        ("none was written automatically", "is being written"),
        ("GUESS", "do the first unblocked `## Next` item"),
        ("GUESS", "so it covers it"),
        ("was never completed", "is being written"),
        ("is being written", "must"),
    ];
    for (a, b) in pairs {
        assert!(
            !(text.contains(a) && text.contains(b)),
            "{state}: says both \"{a}\" and \"{b}\":\n{text}"
        );
    }
}

fn slow_writer(env: &TestEnv) -> PathBuf {
    let p = env.write("slow-writer.sh", "#!/bin/sh\ncat > /dev/null\nsleep 20\n");
    chmod_x(&p);
    p
}

#[test]
fn every_receipt_says_what_reached_the_model() {
    let env = TestEnv::new();
    env.write("t.jsonl", "{}\n");
    let repo = env.shop("shop", "main");
    let slot = env.stored(&repo, &canonical(&repo.to_string_lossy(), "main"));

    // Exact.
    let (text, receipt) = clear(&env, &repo, "exact");
    never_contradicts("exact", &text);
    assert!(text.contains("Handoff for `main`"), "{text}");
    assert!(
        receipt.starts_with("handoff-store: handoff for main injected (gate OK, "),
        "{receipt}"
    );

    // A guess: a new branch with no handoff of its own, right after main's was written.
    let main_slot = env.stored(&repo, &canonical(&repo.to_string_lossy(), "main"));
    env.git(&repo, &["checkout", "-q", "-b", "feat/json-output"]);
    let (text, receipt) = clear(&env, &repo, "guess");
    never_contradicts("guess", &text);
    assert!(text.contains("GUESS"), "{text}");
    assert!(
        text.contains("Take no `## Next` item from a guess until the user confirms"),
        "{text}"
    );
    assert!(
        receipt.starts_with(
            "handoff-store: guessed: handoff for main, on feat/json-output, injected (gate OK, "
        ),
        "{receipt}"
    );
    assert_eq!(main_slot, slot);

    // Nothing: a repository in use by setting, with no handoff at all.
    let empty = env.repo("empty", "main", &[("x.txt", "unrelated\n")]);
    env.use_handoffs(&empty);
    let (text, receipt) = clear(&env, &empty, "nothing");
    never_contradicts("nothing", &text);
    assert!(text.contains("No handoff exists"), "{text}");
    assert_eq!(
        receipt,
        "handoff-store: no handoff for main; the model was told"
    );

    // A background write at work at a compaction.
    env.git(&repo, &["checkout", "-q", "main"]);
    let writer = slow_writer(&env);
    let o = run(env
        .hook(
            "pre-compact",
            &serde_json::json!({"session_id": "bg", "transcript_path": env.path("t.jsonl"), "cwd": repo, "trigger": "auto"})
                .to_string(),
        )
        .env("HANDOFF_WRITER", &writer)
        .env("CTX_FORK_TIMEOUT_SECONDS", "60"));
    assert!(o.stdout.contains("background"), "{}", o.stdout);
    let (text, receipt) = both(&hook(
        &env,
        "session-start",
        &repo,
        "bg",
        serde_json::json!({"source": "compact"}),
    ));
    never_contradicts("compaction with a write at work", &text);
    assert!(
        text.contains("A fresher handoff is being written"),
        "{text}"
    );
    assert!(
        receipt.starts_with("handoff-store: handoff for main injected (gate OK, ")
            && receipt.ends_with("; a fresher one is being written and follows at the next prompt"),
        "{receipt}"
    );

    // An abandoned placeholder.
    let fresh = env.shop("fresh", "main");
    env.use_handoffs(&fresh);
    let o = run(env
        .store()
        .args(["write", "--placeholder", "--checkout"])
        .arg(&fresh));
    assert_eq!(o.code, 0, "{}", o.stderr);
    let placeholder = env.store_dir().join(env.slot_name(&fresh, "main"));
    env.age(&placeholder, 3 * 3600);
    let o = run(env
        .hook(
            "session-start",
            &serde_json::json!({"session_id": "ab", "cwd": fresh, "source": "compact"}).to_string(),
        )
        .env("CTX_FORK_TIMEOUT_SECONDS", "1"));
    let (text, receipt) = both(&o);
    never_contradicts("abandoned", &text);
    assert!(!text.contains("is being written"), "{text}");
    assert_eq!(
        receipt,
        "handoff-store: the background write for main was abandoned; the model was told no handoff is coming"
    );

    // A gate that ended with an exit it has no meaning for.
    let gate = env.write("gate.sh", "#!/bin/sh\nexit 7\n");
    chmod_x(&gate);
    let again = env.shop("again", "main");
    env.stored(&again, &canonical(&again.to_string_lossy(), "main"));
    let o = run(env
        .hook(
            "session-start",
            &serde_json::json!({"session_id": "g7", "cwd": again, "source": "compact"}).to_string(),
        )
        .env("VERIFY_HANDOFF_GATE", &gate));
    let (_, receipt) = both(&o);
    assert!(
        receipt.starts_with("handoff-store: handoff for main injected (gate error, exit 7, "),
        "{receipt}"
    );
}
