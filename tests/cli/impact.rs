//! `impact` (docs/store.md §9.20) and the reset log under it (docs/hooks.md §11): the hooks log
//! each reset with its arm; `impact` reads the session's transcript from the reset on, counts
//! what followed, and compares arms only with enough resets in each.

use std::path::Path;

use crate::util::*;

/// `at` (seconds since the epoch) as transcripts write times: RFC 3339 with milliseconds.
fn rfc3339(at: i64) -> String {
    chrono::DateTime::from_timestamp(at, 0)
        .expect("time")
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// `base` with the fields of `extra` added.
fn with(mut base: serde_json::Value, extra: serde_json::Value) -> serde_json::Value {
    if let (Some(o), Some(e)) = (base.as_object_mut(), extra.as_object()) {
        o.extend(e.clone());
    }
    base
}

/// `hook <event> --harness opencode` for session `sid` in `repo`, with `extra` input fields.
fn opencode(
    env: &TestEnv,
    repo: &Path,
    sid: &str,
    event: &str,
    extra: serde_json::Value,
) -> Outcome {
    let input = with(serde_json::json!({"session_id": sid, "cwd": repo}), extra);
    run(env
        .hook(event, &input.to_string())
        .args(["--harness", "opencode"]))
}

/// A Claude Code transcript line at `at` (seconds since the epoch): `kind` `user` or
/// `assistant`, the assistant's tool calls as (name, input), its message id and usage.
fn claude_line(at: i64, cwd: &Path, tools: &[(&str, serde_json::Value)], id: &str) -> String {
    let time = rfc3339(at);
    let content: Vec<serde_json::Value> = tools
        .iter()
        .enumerate()
        .map(|(i, (name, input))| {
            serde_json::json!({"type": "tool_use", "id": format!("toolu_{id}_{i}"), "name": name, "input": input})
        })
        .collect();
    serde_json::json!({"parentUuid": null, "isSidechain": false, "userType": "external",
        "cwd": cwd, "sessionId": "s1", "version": "2.1.197", "type": "assistant",
        "message": {"id": id, "type": "message", "role": "assistant", "model": "claude-sonnet",
            "content": content, "stop_reason": "tool_use",
            "usage": {"input_tokens": 100, "cache_creation_input_tokens": 20,
                "cache_read_input_tokens": 1000, "output_tokens": 10}},
        "uuid": format!("u-{id}"), "timestamp": time})
    .to_string()
}

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_secs() as i64
}

/// A `/clear` in `repo` for session `sid` whose transcript is `transcript`: the hook's reply.
fn clear(
    env: &TestEnv,
    repo: &Path,
    sid: &str,
    transcript: &Path,
    extra: &[(&str, &str)],
) -> Outcome {
    let mut c = env.hook(
        "session-start",
        &serde_json::json!({"session_id": sid, "cwd": repo, "source": "clear",
            "transcript_path": transcript})
        .to_string(),
    );
    for (k, v) in extra {
        c.env(k, v);
    }
    run(&mut c)
}

fn impact(env: &TestEnv, repo: &Path, args: &[&str]) -> serde_json::Value {
    let (code, v) = json(
        env.store()
            .current_dir(repo)
            .arg("impact")
            .args(args)
            .arg("--json"),
    );
    assert_eq!(code, 0, "{v}");
    v
}

/// After a logged `/clear`, the session's own transcript is read from the reset on: 4 tool
/// calls before the first edit (a dead end's command and two reads of a cited file among them),
/// the tokens of the requests up to the edit (a message's usage counted once, though Claude
/// Code repeats it on each of the message's lines), the minutes; what came before the reset is
/// not counted.
#[test]
fn a_clear_is_logged_and_its_transcript_read_from_there_on() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    let doc = version(&repo, "fresh").replace(
        "### Dead ends\n",
        "### Dead ends\n- `make test-slow` hangs on the fixture lock.\n",
    );
    env.stored(&repo, &doc);
    let transcript = env.path("t.jsonl");
    std::fs::write(&transcript, "").expect("transcript");
    let o = clear(&env, &repo, "s1", &transcript, &[]);
    assert!(context(&o).contains("status: fresh"), "delivered");
    let t = now();
    let invoice = repo.join("app/Mail/Invoice.php");
    let lines = [
        // Before the reset: not counted.
        claude_line(
            t - 3600,
            &repo,
            &[("Bash", serde_json::json!({"command": "ls"}))],
            "m0",
        ),
        claude_line(
            t + 1,
            &repo,
            &[("Read", serde_json::json!({"file_path": invoice}))],
            "m1",
        ),
        // One message, two lines, the same usage.
        claude_line(
            t + 2,
            &repo,
            &[("Bash", serde_json::json!({"command": "make test-slow"}))],
            "m2",
        ),
        claude_line(
            t + 2,
            &repo,
            &[(
                "Grep",
                serde_json::json!({"pattern": "build", "path": "app/Mail/Invoice.php"}),
            )],
            "m2",
        ),
        claude_line(
            t + 3,
            &repo,
            &[("Bash", serde_json::json!({"command": "git status"}))],
            "m3",
        ),
        claude_line(
            t + 120,
            &repo,
            &[(
                "Edit",
                serde_json::json!({"file_path": invoice, "old_string": "a", "new_string": "b"}),
            )],
            "m4",
        ),
        claude_line(
            t + 130,
            &repo,
            &[("Bash", serde_json::json!({"command": "make test"}))],
            "m5",
        ),
    ];
    std::fs::write(&transcript, lines.join("\n") + "\n").expect("transcript");
    let v = impact(&env, &repo, &[]);
    let resets = v["resets"].as_array().expect("resets");
    assert_eq!(resets.len(), 1, "{v}");
    let r = &resets[0];
    assert_eq!(r["arm"], "delivered");
    assert_eq!(r["source"], "clear");
    assert_eq!(r["transcript"], "read");
    assert_eq!(r["to_first_edit"]["tool_calls"], 4, "{r}");
    assert_eq!(r["to_first_edit"]["tokens"], 4 * 1130, "{r}");
    let minutes = r["to_first_edit"]["minutes"].as_f64().expect("minutes");
    assert!((1.9..=2.1).contains(&minutes), "{r}");
    assert_eq!(r["tool_calls"], 6, "{r}");
    assert_eq!(
        r["cited_reads"], 2,
        "the Read and the Grep of a cited file: {r}"
    );
    // `make test-slow`, and the edit beneath `app/Mail/`, which the handoff's other dead end
    // cites.
    assert_eq!(r["repeats"], 2, "{r}");
    let summary = &v["summaries"][0];
    assert_eq!(summary["median_tool_calls_to_edit"], 4.0);
    // Nothing to compare with: no other arm.
    assert_eq!(v["compared"], serde_json::json!([]));
    // The transcript gone: counted as such, not a failure.
    std::fs::remove_file(&transcript).expect("gone");
    let v = impact(&env, &repo, &[]);
    assert_eq!(v["resets"][0]["transcript"], "missing", "{v}");
}

/// A reset given nothing (a repository not in use) is logged with why; a held-out reset gets
/// the one-line offer, never the handoff, and is logged in its arm; nothing is consumed.
#[test]
fn a_holdout_reset_gets_one_line_and_is_logged_in_its_arm() {
    let env = TestEnv::new();
    let used = env.shop("shop", "main");
    let slot = env.stored(&used, &version(&used, "fresh"));
    let unused = env.repo("other", "main", &[("a.txt", "a\n")]);
    let transcript = env.write("t.jsonl", "");
    let o = clear(&env, &unused, "s0", &transcript, &[]);
    assert_eq!(o.stdout, "", "a repository not in use hears nothing");
    env.git(&used, &["config", "handoff.holdout", "3"]);
    let o = clear(
        &env,
        &used,
        "s1",
        &transcript,
        &[("HANDOFF_HOLDOUT_DRAW", "held")],
    );
    let text = context(&o);
    assert!(
        text.starts_with("# Handoff available (SessionStart, source: clear, held out)")
            && !text.contains("## Do not re-derive"),
        "only the line that a handoff exists: {text}"
    );
    assert!(
        std::fs::read_to_string(&slot)
            .expect("slot")
            .contains("progress: complete"),
        "a held-out handoff is not consumed"
    );
    let o = clear(
        &env,
        &used,
        "s2",
        &transcript,
        &[("HANDOFF_HOLDOUT_DRAW", "given")],
    );
    assert!(
        context(&o).contains("## Do not re-derive"),
        "the other arm gets it"
    );
    let v = impact(&env, &used, &["--all"]);
    let arms: Vec<(String, String)> = v["resets"]
        .as_array()
        .expect("resets")
        .iter()
        .map(|r| {
            (
                r["session"].as_str().unwrap_or_default().to_string(),
                r["arm"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    assert_eq!(
        arms,
        [
            ("s0".to_string(), "none".to_string()),
            ("s1".to_string(), "holdout".to_string()),
            ("s2".to_string(), "delivered".to_string())
        ]
    );
    let log = files_under(&env.store_dir().join(".resets"));
    let text: String = log
        .iter()
        .map(|p| std::fs::read_to_string(p).expect("log"))
        .collect();
    assert!(text.contains("\"why\":\"not in use\""), "{text}");
    // Only this checkout's resets without --all.
    let v = impact(&env, &used, &[]);
    assert_eq!(v["resets"].as_array().map(Vec::len), Some(2), "{v}");
}

/// The log's records for `n` resets of `arm`, each with its own transcript whose first edit
/// comes after `calls(i)` tool calls; written as the hooks write them (one day's file).
fn logged(
    env: &TestEnv,
    repo: &Path,
    arm: &str,
    n: usize,
    calls: impl Fn(usize) -> usize,
) -> String {
    let t = now() - 86_400 / 2;
    let mut out = String::new();
    for i in 0..n {
        let transcript = env.path(&format!("t-{arm}-{i}.jsonl"));
        let mut lines: Vec<String> = (0..calls(i))
            .map(|k| {
                claude_line(
                    t + 1 + k as i64,
                    repo,
                    &[("Bash", serde_json::json!({"command": "ls"}))],
                    &format!("{arm}{i}-{k}"),
                )
            })
            .collect();
        lines.push(claude_line(
            t + 100,
            repo,
            &[(
                "Write",
                serde_json::json!({"file_path": repo.join("x"), "content": "x"}),
            )],
            &format!("{arm}{i}-w"),
        ));
        std::fs::write(&transcript, lines.join("\n") + "\n").expect("transcript");
        out.push_str(
            &serde_json::json!({"at": t, "client": "claude-code", "session": format!("{arm}{i}"),
                "transcript": transcript, "source": "clear", "arm": arm, "chars": 10,
                "checkout": repo, "main": repo, "cited": [], "wires": []})
            .to_string(),
        );
        out.push('\n');
    }
    out
}

/// An arm below 30 resets gives no figure; at 30 each, the difference of medians has a 95 %
/// interval, the same for the same seed.
#[test]
fn arms_are_compared_only_with_thirty_resets_each_and_the_seed_fixes_the_interval() {
    let env = TestEnv::new();
    let repo = env.repo("r", "main", &[("a.txt", "a\n")]);
    let main = std::fs::canonicalize(&repo).expect("real path");
    let day = chrono::DateTime::from_timestamp(now() - 86_400 / 2, 0)
        .expect("day")
        .format("%Y-%m-%d")
        .to_string();
    let file = env.store_dir().join(".resets").join(format!("{day}.jsonl"));
    std::fs::create_dir_all(file.parent().expect("dir")).expect("dir");
    let compare = |holdout: usize| {
        let text = logged(&env, &main, "delivered", 30, |i| 2 + i % 3)
            + &logged(&env, &main, "holdout", holdout, |i| 6 + i % 5);
        std::fs::write(&file, text).expect("log");
        impact(&env, &repo, &["--seed", "7"])
    };
    let v = compare(29);
    let c = &v["compared"][0];
    assert_eq!(c["measure"], "tool_calls_to_first_edit");
    assert_eq!(c["against"], "holdout");
    assert_eq!(c["observational"], false);
    assert_eq!(c["n"], serde_json::json!([30, 29]));
    assert_eq!(c["difference"], serde_json::Value::Null, "29 is not enough");
    let text = run(env.store().current_dir(&repo).args(["impact"])).stdout;
    assert!(
        text.contains("not enough data (30 and 29 resets; 30 in each arm needed)"),
        "{text}"
    );
    let v = compare(30);
    let d = &v["compared"][0]["difference"];
    assert_eq!(d["median"], -5.0, "medians 3 and 8: {v}");
    assert!(
        d["low"].as_f64() <= Some(-5.0) && d["high"].as_f64() >= Some(-5.0),
        "{d}"
    );
    assert_eq!(
        &compare(30)["compared"],
        &v["compared"],
        "the same seed, the same interval"
    );
    // The picture: one bar series per arm.
    let svg = env.path("impact.svg");
    let o = run(env
        .store()
        .current_dir(&repo)
        .arg("impact")
        .arg("--svg")
        .arg(&svg));
    assert_eq!(o.code, 0, "{}", o.stderr);
    let drawn = std::fs::read_to_string(&svg).expect("the SVG file");
    assert!(
        drawn.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""),
        "{drawn}"
    );
    assert!(
        drawn.contains(">delivered (n = 30)</text>") && drawn.contains(">holdout (n = 30)</text>"),
        "{drawn}"
    );
    // Delivered took 2, 3 or 4 calls: three bars, and the legend's box.
    assert_eq!(drawn.matches("fill=\"#1f77b4\"").count(), 4, "{drawn}");
}

/// A transcript's last line cut short (a client killed mid-write) and a line past the cap (a
/// pasted blob) are passed over; the lines around them still count.
#[test]
fn a_cut_line_and_an_overlong_line_are_passed_over() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    env.stored(&repo, &version(&repo, "fresh"));
    let transcript = env.write("t.jsonl", "");
    context(&clear(&env, &repo, "s1", &transcript, &[]));
    let t = now();
    let ls = |at: i64, id: &str| {
        claude_line(
            at,
            &repo,
            &[("Bash", serde_json::json!({"command": "ls"}))],
            id,
        )
    };
    let blob = format!(
        "{{\"type\":\"user\",\"x\":\"{}\"}}",
        "x".repeat(17 * 1024 * 1024)
    );
    let text = [
        ls(t + 1, "a"),
        blob,
        ls(t + 2, "b"),
        claude_line(
            t + 3,
            &repo,
            &[(
                "Write",
                serde_json::json!({"file_path": repo.join("n.txt"), "content": "n"}),
            )],
            "c",
        ),
        ls(t + 4, "d")[..40].to_string(),
    ]
    .join("\n");
    std::fs::write(&transcript, text).expect("transcript");
    let v = impact(&env, &repo, &[]);
    let r = &v["resets"][0];
    assert_eq!(r["transcript"], "read", "{r}");
    assert_eq!(r["to_first_edit"]["tool_calls"], 2, "{r}");
    assert_eq!(r["tool_calls"], 3, "{r}");
}

/// At PostCompact, Claude Code's `compact_summary` is held against the handoff delivered at that
/// compaction: the person's receipt and the reset log say what it kept, `impact` sums it; a
/// client that hands over no summary gets no audit.
#[test]
fn a_compaction_summary_is_audited_against_the_handoff_delivered() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    env.stored(&repo, &version(&repo, "fresh"));
    let transcript = env.write("t.jsonl", "");
    let input = |event: &str, extra: serde_json::Value| {
        let base = serde_json::json!({"session_id": "c1", "cwd": repo,
            "transcript_path": transcript, "hook_event_name": event});
        with(base, extra).to_string()
    };
    let o = run(&mut env.hook(
        "session-start",
        &input("SessionStart", serde_json::json!({"source": "compact"})),
    ));
    assert!(context(&o).contains("source: compact"));
    // The canonical handoff: one decision (typing the builder's return), one dead end (a
    // docblock on the caller), no trap, one next step, two cited paths.
    let summary = "We typed the builder return rather than annotating every caller at each call site. Next: Reminder, the same way.";
    let o = run(&mut env.hook(
        "post-compact",
        &input(
            "PostCompact",
            serde_json::json!({"trigger": "auto", "compact_summary": summary}),
        ),
    ));
    assert_eq!(o.code, 0);
    let v: serde_json::Value = serde_json::from_str(&o.stdout).expect("one JSON line");
    assert_eq!(
        v["systemMessage"],
        "handoff-store: the compaction's summary kept 1 of 1 decisions, 0 of 1 dead ends, 1 of 1 next steps, 0 of 2 cited paths",
        "{}",
        o.stdout
    );
    let v = impact(&env, &repo, &[]);
    let audit = &v["resets"][0]["audit"];
    assert_eq!(
        audit["decisions"],
        serde_json::json!({"kept": 1, "of": 1}),
        "{v}"
    );
    assert_eq!(audit["dead_ends"], serde_json::json!({"kept": 0, "of": 1}));
    assert!(
        audit["dropped"][0]
            .as_str()
            .is_some_and(|d| d.starts_with("A docblock on the caller")),
        "{audit}"
    );
    assert_eq!(v["summaries"][0]["audited"], 1);
    // Without a summary (another client, or none given): confirmed, not audited, nothing said.
    let o = run(&mut env.hook("post-compact", &input("PostCompact", serde_json::json!({}))));
    assert_eq!(o.stdout, "");
}

/// A Codex rollout (its shape as the real client writes it, made small): `exec_command` is its
/// shell, a `custom_tool_call` `apply_patch` its edit, `token_count` events its usage (one
/// request each, cached input inside `input_tokens`); a relative path runs from its `workdir`.
#[test]
fn a_codex_rollout_is_read_in_its_own_shape() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    env.stored(&repo, &version(&repo, "fresh"));
    let rollout = env.write("rollout.jsonl", "");
    let mut c = env.hook(
        "session-start",
        &serde_json::json!({"session_id": "x1", "cwd": repo, "source": "clear",
            "transcript_path": rollout, "hook_event_name": "SessionStart", "model": "gpt-5"})
        .to_string(),
    );
    let o = run(c.args(["--harness", "codex"]));
    assert!(o.stdout.contains("status: fresh"), "{}", o.stdout);
    let t = now();
    let ts = |s: i64| rfc3339(t + s);
    let exec = |s: i64, cmd: &str| {
        serde_json::json!({"timestamp": ts(s), "type": "response_item", "payload": {"type": "function_call",
            "name": "exec_command", "arguments": serde_json::json!({"cmd": cmd, "workdir": repo}).to_string(),
            "call_id": format!("call_{s}")}})
        .to_string()
    };
    let tokens = |s: i64| {
        serde_json::json!({"timestamp": ts(s), "type": "event_msg", "payload": {"type": "token_count",
            "info": {"total_token_usage": {"input_tokens": 9999}, "last_token_usage": {"input_tokens": 200,
            "cached_input_tokens": 150, "output_tokens": 20, "reasoning_output_tokens": 0, "total_tokens": 220}}}})
        .to_string()
    };
    let lines = [
        serde_json::json!({"timestamp": ts(0), "type": "session_meta", "payload": {"id": "x1", "cwd": repo}}).to_string(),
        tokens(1),
        exec(1, "sed -n 20,30p app/Mail/Invoice.php"),
        tokens(2),
        exec(2, "ls app"),
        tokens(3),
        serde_json::json!({"timestamp": ts(60), "type": "response_item", "payload": {"type": "custom_tool_call",
            "name": "apply_patch", "call_id": "c9",
            "input": "*** Begin Patch\n*** Update File: app/Mail/Invoice.php\n@@\n-a\n+b\n*** End Patch\n"}})
        .to_string(),
    ];
    std::fs::write(&rollout, lines.join("\n") + "\n").expect("rollout");
    // From elsewhere: the patch's relative path is read against the reset's checkout.
    let (code, v) = json(
        env.store()
            .current_dir(env.root())
            .args(["impact", "--all", "--json"]),
    );
    assert_eq!(code, 0, "{v}");
    let r = &v["resets"][0];
    assert_eq!(r["client"], "codex");
    assert_eq!(
        r["repeats"], 1,
        "the patch beneath app/Mail/, a dead end's folder: {r}"
    );
    assert_eq!(r["to_first_edit"]["tool_calls"], 2, "{r}");
    assert_eq!(r["to_first_edit"]["tokens"], 3 * 220, "{r}");
    assert_eq!(r["cited_reads"], 1, "{r}");
}

/// The reset log is appended a line at a time: a line a crash cut short is skipped, and the next
/// record starts on a line of its own.
#[test]
fn a_cut_line_in_the_reset_log_loses_no_later_record() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    env.stored(&repo, &version(&repo, "fresh"));
    let dir = env.store_dir().join(".resets");
    std::fs::create_dir_all(&dir).expect("dir");
    // The day's file the record goes to, cut short — this day's and the next minute's, should
    // the record fall after midnight (UTC).
    let day = |at: i64| {
        let day = chrono::DateTime::from_timestamp(at, 0).expect("day");
        dir.join(format!("{}.jsonl", day.format("%Y-%m-%d")))
    };
    for file in [day(now()), day(now() + 60)] {
        std::fs::write(file, "{\"at\": 1, \"client\": \"claude-co").expect("a cut line");
    }
    let transcript = env.write("t.jsonl", "");
    context(&clear(&env, &repo, "after-crash", &transcript, &[]));
    let written: Vec<String> = [day(now() - 60), day(now())]
        .iter()
        .filter_map(|f| std::fs::read_to_string(f).ok())
        .filter(|t| t.contains("after-crash"))
        .collect();
    assert!(
        written.iter().any(|t| t.contains("claude-co\n{")),
        "a line of its own: {written:?}"
    );
    let v = impact(&env, &repo, &[]);
    assert_eq!(v["resets"][0]["session"], "after-crash", "{v}");
}

/// A Gemini CLI chat file (its shape as 0.61.0 writes it, from the e2e run, made small): a line
/// per message, a model message written again as it grows (its usage and its calls counted
/// once), `$set` lines between; `run_shell_command` its shell, `write_file` its edit.
#[test]
fn a_gemini_chat_file_is_read_in_its_own_shape() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    env.stored(&repo, &version(&repo, "fresh"));
    let chat = env.write("session.jsonl", "");
    // Gemini CLI's /clear reaches us as the new session's first prompt (BeforeAgent).
    let o = run(env
        .hook(
            "user-prompt-submit",
            &serde_json::json!({"session_id": "g1", "cwd": repo, "transcript_path": chat,
                "hook_event_name": "BeforeAgent", "prompt": "go on"})
            .to_string(),
        )
        .args(["--harness", "gemini"]));
    assert!(o.stdout.contains("status: fresh"), "{}", o.stdout);
    let t = now();
    let ts = |s: i64| rfc3339(t + s);
    let model = |s: i64, id: &str, calls: serde_json::Value| {
        let mut v = serde_json::json!({"id": id, "timestamp": ts(s), "type": "gemini", "content": "",
            "thoughts": [], "tokens": {"input": 100, "output": 5, "cached": 0, "thoughts": 0,
            "tool": 0, "total": 105}, "model": "gemini-2.5-flash"});
        if !calls.is_null() {
            v["toolCalls"] = calls;
        }
        v.to_string()
    };
    let call = |id: &str, name: &str, args: serde_json::Value| serde_json::json!([{"id": id, "name": name, "args": args, "result": []}]);
    let set = |s: i64| serde_json::json!({"$set": {"lastUpdated": ts(s)}}).to_string();
    let invoice = repo.join("app/Mail/Invoice.php");
    let lines = [
        serde_json::json!({"sessionId": "g1", "projectHash": "f3e2", "startTime": ts(0), "kind": "main"}).to_string(),
        serde_json::json!({"id": "u1", "timestamp": ts(1), "type": "user", "content": [{"text": "go on"}]}).to_string(),
        model(2, "m1", serde_json::Value::Null),
        set(2),
        model(2, "m1", call("c1", "read_file", serde_json::json!({"absolute_path": invoice}))),
        set(3),
        model(3, "m2", call("c2", "run_shell_command", serde_json::json!({"command": "ls"}))),
        model(3, "m2", call("c2", "run_shell_command", serde_json::json!({"command": "ls"}))),
        model(60, "m3", call("c3", "write_file", serde_json::json!({"file_path": "notes.md", "content": "x"}))),
    ];
    std::fs::write(&chat, lines.join("\n") + "\n").expect("chat");
    let v = impact(&env, &repo, &[]);
    let r = &v["resets"][0];
    assert_eq!(r["client"], "gemini", "{v}");
    assert_eq!(r["transcript"], "read", "{r}");
    assert_eq!(r["to_first_edit"]["tool_calls"], 2, "each call once: {r}");
    assert_eq!(
        r["to_first_edit"]["tokens"],
        3 * 105,
        "each message once: {r}"
    );
    assert_eq!(r["cited_reads"], 1, "{r}");
}

/// A Copilot CLI events file (its shape as 1.0.102 writes it, from the e2e run, made small):
/// `tool.execution_start` per call, `session.usage_record` per request, other events between.
#[test]
fn a_copilot_events_file_is_read_in_its_own_shape() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    env.stored(&repo, &version(&repo, "fresh"));
    let events = env.write("events.jsonl", "");
    // A new session of a running Copilot (its /clear): no initial prompt.
    let o = run(env
        .hook(
            "session-start",
            &serde_json::json!({"sessionId": "p1", "cwd": repo, "source": "new",
                "timestamp": 1, "transcriptPath": events})
            .to_string(),
        )
        .args(["--harness", "copilot"]));
    assert!(o.stdout.contains("status: fresh"), "{}", o.stdout);
    let t = now();
    let ts = |s: i64| rfc3339(t + s);
    let event = |s: i64, kind: &str, data: serde_json::Value| {
        serde_json::json!({"type": kind, "data": data, "id": format!("e{s}"), "timestamp": ts(s),
            "parentId": null})
        .to_string()
    };
    let usage = |s: i64, call: &str| {
        event(
            s,
            "session.usage_record",
            serde_json::json!({"usage": {"model": "gpt-4o",
            "inputTokens": 100, "outputTokens": 5, "cacheReadTokens": 0, "cacheWriteTokens": 0,
            "apiCallId": call}}),
        )
    };
    let start = |s: i64, id: &str, name: &str, args: serde_json::Value| {
        event(
            s,
            "tool.execution_start",
            serde_json::json!({"toolCallId": id, "toolName": name,
            "arguments": args, "turnId": "0", "model": "gpt-4o"}),
        )
    };
    let lines = [
        event(
            0,
            "session.start",
            serde_json::json!({"sessionId": "p1", "copilotVersion": "1.0.102"}),
        ),
        event(
            1,
            "assistant.turn_start",
            serde_json::json!({"turnId": "0"}),
        ),
        usage(1, "chatcmpl_1"),
        start(
            1,
            "call_1",
            "bash",
            serde_json::json!({"command": "make test-slow", "description": "Run"}),
        ),
        event(
            2,
            "tool.execution_complete",
            serde_json::json!({"toolCallId": "call_1", "success": true}),
        ),
        usage(2, "chatcmpl_2"),
        start(
            2,
            "call_2",
            "view",
            serde_json::json!({"path": repo.join("app/Mail/Invoice.php")}),
        ),
        usage(90, "chatcmpl_3"),
        start(
            90,
            "call_3",
            "apply_patch",
            serde_json::json!("*** Begin Patch\n*** Add File: notes.md\n+x\n*** End Patch\n"),
        ),
    ];
    std::fs::write(&events, lines.join("\n") + "\n").expect("events");
    let v = impact(&env, &repo, &[]);
    let r = &v["resets"][0];
    assert_eq!(r["client"], "copilot", "{v}");
    assert_eq!(r["to_first_edit"]["tool_calls"], 2, "{r}");
    assert_eq!(r["to_first_edit"]["tokens"], 3 * 105, "{r}");
    assert_eq!(r["cited_reads"], 1, "the view of a cited file: {r}");
    assert_eq!(
        r["repeats"], 0,
        "make test-slow is no dead end of this handoff: {r}"
    );
}

/// Where the summary comes before the compaction's delivery (OpenCode: `session.compacted`, then
/// the next model call asks), the audit waits and is logged with the compaction's reset.
#[test]
fn an_audit_before_its_delivery_waits_for_the_compactions_reset() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    env.stored(&repo, &version(&repo, "fresh"));
    let fire = |event: &str, extra: serde_json::Value| opencode(&env, &repo, "o1", event, extra);
    let o = fire(
        "post-compact",
        serde_json::json!({"compact_summary": "We typed the builder return rather than annotating every caller at each call site."}),
    );
    assert_eq!(
        (o.code, o.stdout.as_str()),
        (0, ""),
        "OpenCode shows no receipt"
    );
    let o = fire("session-start", serde_json::json!({"source": "compact"}));
    assert!(o.stdout.contains("source: compact"), "{}", o.stdout);
    let v = impact(&env, &repo, &[]);
    let r = &v["resets"][0];
    assert_eq!(r["source"], "compact", "{v}");
    assert_eq!(
        r["audit"]["decisions"],
        serde_json::json!({"kept": 1, "of": 1}),
        "{r}"
    );
}

/// Where the summary is known before the compaction's delivery (OpenCode), the delivery is what
/// the summary dropped — whole, dead ends first —, what it kept in one sentence, and where the
/// whole handoff is; nothing it kept is repeated.
#[test]
fn a_summary_known_before_the_delivery_gets_only_what_it_dropped() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    let slot = env.stored(&repo, &version(&repo, "fresh"));
    let fire = |event: &str, extra: serde_json::Value| opencode(&env, &repo, "o2", event, extra);
    fire(
        "post-compact",
        serde_json::json!({"compact_summary": "We typed the builder return rather than annotating every caller at each call site. Next: Reminder, the same way."}),
    );
    let o = fire("session-start", serde_json::json!({"source": "compact"}));
    let v: serde_json::Value = serde_json::from_str(&o.stdout).expect("the plugin's JSON");
    let text = v["context"].as_str().unwrap_or_default();
    assert!(
        text.starts_with("# Context reset (SessionStart, source: compact)\n\nThis session was just compacted, and the compaction's summary kept 1 of 1 decisions, 0 of 1 dead ends, 1 of 1 next steps"),
        "{text}"
    );
    assert!(
        text.contains("### Dead ends\n- A docblock on the caller"),
        "the dropped dead end, whole: {text}"
    );
    assert!(
        !text.contains("Type the builder's return") && !text.contains("Do Reminder the same way"),
        "nothing the summary kept: {text}"
    );
    assert!(
        text.contains(&format!("`{}`", slot.display())) && text.contains("read --no-consume"),
        "where the whole handoff is: {text}"
    );
}

/// What a known summary dropped of a teammate's handoff keeps the teammate's frame; and an audit
/// whose compaction was never delivered does not outlive its hour.
#[test]
fn a_teammates_dropped_items_keep_their_frame_and_stale_audits_go() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    let slot = env.stored(&repo, &version(&repo, "fresh"));
    let text = std::fs::read_to_string(&slot).expect("slot");
    let pulled = text.replacen(
        "status: ",
        "from: alice-laptop via origin, written 2026-12-01T10:00:00Z\nstatus: ",
        1,
    );
    std::fs::write(&slot, pulled).expect("placed");
    let audits = env.home().join(".claude/state/handoff-fork/audits");
    std::fs::create_dir_all(&audits).expect("audits");
    let stale = audits.join("gone-session");
    std::fs::write(&stale, "{}").expect("stale");
    env.age(&stale, 2 * 3600);
    let summary = serde_json::json!({"compact_summary": "Next: Reminder, the same way."});
    opencode(&env, &repo, "o3", "post-compact", summary);
    assert!(!stale.exists(), "an audit past its hour is removed");
    let o = opencode(
        &env,
        &repo,
        "o3",
        "session-start",
        serde_json::json!({"source": "compact"}),
    );
    let v: serde_json::Value = serde_json::from_str(&o.stdout).expect("the plugin's JSON");
    let text = v["context"].as_str().unwrap_or_default();
    assert!(
        text.contains("The handoff is from another machine (\"alice-laptop\" via origin): treat it as a teammate's notes"),
        "{text}"
    );
}

/// OpenCode's sessions are rows of its own SQLite database (its schema as 1.18.33 writes it, from
/// the e2e run, made small; WAL mode, the database held open as a running OpenCode holds it): the
/// reset names the database, the session id picks its rows — another session's are not counted —
/// `step-finish` parts are its requests, `tool` parts its calls (`read` with `filePath`, `bash`,
/// `edit` its edit). Read without writing.
#[test]
fn an_opencode_session_is_read_from_its_database() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    env.stored(&repo, &version(&repo, "fresh"));
    let dir = env.home().join(".local/share/opencode");
    std::fs::create_dir_all(&dir).expect("data dir");
    let db = rusqlite::Connection::open(dir.join("opencode.db")).expect("db");
    db.execute_batch(
        "PRAGMA journal_mode = WAL;
         CREATE TABLE `part` (`id` text PRIMARY KEY, `message_id` text NOT NULL,
           `session_id` text NOT NULL, `time_created` integer NOT NULL,
           `time_updated` integer NOT NULL, `data` text NOT NULL);
         CREATE INDEX `part_session_idx` ON `part` (`session_id`);",
    )
    .expect("schema");
    let part = |n: u32, session: &str, at: i64, data: serde_json::Value| {
        let at = at * 1000 + i64::from(n);
        db.execute(
            "INSERT INTO part VALUES (?1, ?2, ?3, ?4, ?4, ?5)",
            (
                format!("prt_{n:03}"),
                format!("msg_{}", at / 1000),
                session,
                at,
                data.to_string(),
            ),
        )
        .expect("part");
    };
    let step = serde_json::json!({"type": "step-finish", "reason": "tool-calls",
        "tokens": {"total": 110, "input": 100, "output": 10, "reasoning": 0,
            "cache": {"write": 0, "read": 0}}, "cost": 0});
    let tool = |id: &str, name: &str, input: serde_json::Value| {
        serde_json::json!({"type": "tool", "tool": name, "callID": id,
            "state": {"status": "completed", "input": input, "output": "",
                "time": {"start": 0, "end": 0}}})
    };
    let invoice = repo.join("app/Mail/Invoice.php");
    // Before the reset: not counted.
    part(
        1,
        "ses_1",
        now() - 100,
        tool("c0", "bash", serde_json::json!({"command": "ls"})),
    );
    let o = opencode(
        &env,
        &repo,
        "ses_1",
        "session-start",
        serde_json::json!({"source": "clear"}),
    );
    assert!(o.stdout.contains("status: fresh"), "{}", o.stdout);
    let t = now();
    let part =
        |n: u32, session: &str, s: i64, data: serde_json::Value| part(n, session, t + s, data);
    part(2, "ses_1", 1, serde_json::json!({"type": "step-start"}));
    part(
        3,
        "ses_1",
        1,
        tool("c1", "read", serde_json::json!({"filePath": invoice})),
    );
    part(4, "ses_1", 1, step.clone());
    part(
        5,
        "ses_2",
        2,
        tool("x1", "bash", serde_json::json!({"command": "make"})),
    );
    part(
        6,
        "ses_1",
        2,
        tool(
            "c2",
            "bash",
            serde_json::json!({"command": "git status", "description": "Run"}),
        ),
    );
    part(7, "ses_1", 2, step.clone());
    part(
        8,
        "ses_1",
        120,
        tool(
            "c3",
            "edit",
            serde_json::json!({"filePath": repo.join("notes.md"), "oldString": "a", "newString": "b"}),
        ),
    );
    part(9, "ses_1", 120, step);
    let bytes =
        || ["opencode.db", "opencode.db-wal"].map(|f| std::fs::read(dir.join(f)).expect("db"));
    let before = bytes();
    let v = impact(&env, &repo, &[]);
    let r = &v["resets"][0];
    assert_eq!(r["client"], "opencode", "{v}");
    assert_eq!(r["transcript"], "read", "{r}");
    assert_eq!(
        r["to_first_edit"]["tool_calls"], 2,
        "the session's own calls: {r}"
    );
    assert_eq!(r["to_first_edit"]["tokens"], 2 * 110, "{r}");
    let minutes = r["to_first_edit"]["minutes"].as_f64().unwrap_or_default();
    assert!((2.0..2.05).contains(&minutes), "{r}");
    assert_eq!(r["cited_reads"], 1, "the read of a cited file: {r}");
    assert_eq!(r["tool_calls"], 3, "{r}");
    assert!(bytes() == before, "read without writing");
    // SQLite is in the MCP binary: a handoff-store without it beside (a build without `mcp`)
    // counts the transcript unreadable, never fails.
    let alone = env.path("alone/handoff-store");
    std::fs::create_dir_all(alone.parent().expect("folder")).expect("folder");
    std::fs::copy(assert_cmd::cargo::cargo_bin("handoff-store"), &alone).expect("copy");
    let mut c = env.std_cmd(&alone, &["impact".as_ref(), "--json".as_ref()]);
    c.current_dir(&repo)
        .env("HANDOFF_STORE_DIR", env.store_dir());
    let (code, v) = json(&mut assert_cmd::Command::from_std(c));
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["resets"][0]["transcript"], "unreadable", "{v}");
    // OpenCode gone, its database closed (the write-ahead log checkpointed and removed): still
    // read, and nothing is left beside it.
    drop(db);
    assert!(!dir.join("opencode.db-wal").exists(), "the writer closed");
    let v = impact(&env, &repo, &[]);
    assert_eq!(v["resets"][0]["to_first_edit"]["tool_calls"], 2, "{v}");
    let mut left: Vec<_> = std::fs::read_dir(&dir)
        .expect("data dir")
        .map(|e| e.expect("entry").file_name())
        .collect();
    left.sort();
    assert_eq!(left, ["opencode.db"], "nothing left beside the database");
}

/// A Cline task's messages file (its shape as the CLI 3.0.65 writes it, from the e2e run, made
/// small): its hooks name the session (`sessionContext.rootSessionId`), the file is one JSON
/// document read a message at a time; `run_commands` its shell, `editor` its edit, an
/// assistant's `metrics` its request's tokens.
#[test]
fn a_cline_task_is_read_from_its_messages_file() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    env.stored(&repo, &version(&repo, "fresh"));
    let root = "1796612502362_3bc9o";
    let o = run(env
        .hook(
            "session-start",
            &serde_json::json!({"clineVersion": "", "hookName": "agent_start",
                "taskId": "conv_1", "sessionContext": {"rootSessionId": root},
                "workspaceRoots": [repo], "taskStart": {"taskMetadata": {}}})
            .to_string(),
        )
        .args(["--harness", "cline"]));
    assert!(o.stdout.contains("status: fresh"), "{}", o.stdout);
    let t = now() * 1000;
    let metrics = serde_json::json!({"inputTokens": 100, "outputTokens": 5,
        "cacheReadTokens": 0, "cacheWriteTokens": 0});
    let call = |s: i64, id: &str, name: &str, input: serde_json::Value| {
        serde_json::json!({"id": format!("msg_{id}"), "role": "assistant", "ts": t + s,
            "content": [{"type": "tool_use", "id": id, "name": name, "input": input}],
            "modelInfo": {"id": "mock", "provider": "openai-compatible"}, "metrics": metrics})
    };
    let result = |s: i64, id: &str| {
        serde_json::json!({"id": format!("r_{id}"), "role": "user", "ts": t + s,
            "content": [{"type": "tool_result", "tool_use_id": id, "name": "run_commands",
                "content": [{"query": "x", "result": "", "success": true}]}]})
    };
    let doc = serde_json::json!({"version": 1, "updated_at": "2026-12-07T03:01:43.832Z",
        "agent": "cline", "sessionId": root, "messages": [
            call(-90_000, "c0", "run_commands", serde_json::json!({"commands": ["ls"]})),
            {"id": "u1", "role": "user", "ts": t + 500,
                "content": [{"type": "text", "text": "<user_input mode=\"act\">go on</user_input>"}]},
            call(1_000, "c1", "run_commands", serde_json::json!({"commands": ["cat app/Mail/Invoice.php"]})),
            result(1_100, "c1"),
            call(2_000, "c2", "run_commands", serde_json::json!({"commands": ["git status --short"]})),
            result(2_100, "c2"),
            call(60_000, "c3", "editor", serde_json::json!({"path": repo.join("notes.md"),
                "old_text": "a", "new_text": "b"})),
        ], "system_prompt": "You are Cline"});
    let dir = env.home().join(".cline/data/sessions").join(root);
    std::fs::create_dir_all(&dir).expect("session dir");
    std::fs::write(dir.join(format!("{root}.messages.json")), doc.to_string()).expect("messages");
    let v = impact(&env, &repo, &[]);
    let r = &v["resets"][0];
    assert_eq!(r["client"], "cline", "{v}");
    assert_eq!(r["transcript"], "read", "{r}");
    assert_eq!(r["to_first_edit"]["tool_calls"], 2, "{r}");
    assert_eq!(r["to_first_edit"]["tokens"], 3 * 105, "{r}");
    assert_eq!(r["cited_reads"], 1, "the cat of a cited file: {r}");
    assert_eq!(
        r["tool_calls"], 3,
        "the call before the task's reset is not counted: {r}"
    );
}
