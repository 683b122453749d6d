//! `read` (docs/store.md §9.5), the verdict procedure (§7) and the drift signals (§8).

use std::path::{Path, PathBuf};

use crate::util::{TestEnv, canonical, json, mtime, run};

fn stub_gate(env: &TestEnv) -> PathBuf {
    crate::util::stub_gate(env, "echo \"stub $1 $2\"\necho \"WARN     advice\" >&2")
}

fn progress(path: &Path) -> String {
    crate::util::progress(path).unwrap_or_default()
}

#[test]
fn exact_pick_is_shown_verified_and_consumed_with_its_mtime_kept() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    let other = env.shop("other", "main");
    let slot = env.stored(&repo, &canonical(&repo.to_string_lossy(), "main"));
    env.age(&slot, 3 * 86_400 + 5);
    let before = mtime(&slot);
    env.stored(&other, &canonical(&other.to_string_lossy(), "main"));
    let o = run(env.store().arg("read").arg(&repo));
    assert_eq!(o.code, 0, "{}{}", o.stdout, o.stderr);
    let lines: Vec<&str> = o.stdout.lines().collect();
    assert_eq!(lines[0], format!("handoff  {}", slot.display()));
    assert_eq!(
        lines[1],
        format!(
            "pick     exact — the handoff for main in {}",
            repo.display()
        )
    );
    assert!(
        lines[2].starts_with("written  3 days ago (")
            && lines[2].ends_with(") — progress: complete"),
        "{}",
        lines[2]
    );
    assert_eq!(
        lines[3],
        format!(
            "GATE: OK — every citation resolved against {}.",
            repo.display()
        )
    );
    assert!(
        !o.stdout.contains("size ") && !o.stdout.contains("OK       "),
        "an OK read is its verdict line, no size, no table: {}",
        o.stdout
    );
    assert!(
        o.stdout
            .contains("\n\n----- begin handoff -----\n# Handoff — type the mailables\n")
    );
    assert!(o.stdout.ends_with("----- end handoff -----\n"));
    assert_eq!(progress(&slot), "consumed");
    assert_eq!(mtime(&slot), before, "consuming keeps the mtime");
    let o = run(env.store().arg("read").arg(&repo));
    assert!(
        o.stdout
            .contains("\nnote     already delivered at an earlier read (progress: consumed)\n")
    );
    assert_eq!(o.code, 0);
}

#[test]
fn no_consume_and_json_leave_the_slot_unread() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    let slot = env.stored(&repo, &canonical(&repo.to_string_lossy(), "main"));
    run(env.store().args(["read", "--no-consume"]).arg(&repo));
    assert_eq!(progress(&slot), "complete");
    let (code, v) = json(
        env.store()
            .args(["read", "--no-consume", "--format", "json"])
            .arg(&repo),
    );
    assert_eq!(code, 0);
    assert_eq!(v["pick"], "exact");
    assert_eq!(v["state"], "ready");
    assert_eq!(v["verdict"]["status"], "ok");
    assert_eq!(v["verdict"]["report"]["verdict"], "ok");
    assert_eq!(v["target"]["branch"], "main");
    assert_eq!(v["handoff"]["progress"], "complete");
    assert!(
        v["document"]
            .as_str()
            .is_some_and(|d| d.starts_with("# Handoff"))
    );
    assert_eq!(progress(&slot), "complete");
}

#[test]
fn a_guess_is_labelled_lists_others_and_is_never_consumed() {
    let env = TestEnv::new();
    let a = env.shop("a", "main");
    let b = env.shop("b", "main");
    let c = env.shop("c", "topic");
    let slot_a = env.stored(&a, &canonical(&a.to_string_lossy(), "main"));
    env.age(&slot_a, 100);
    let slot_b = env.stored(&b, &canonical(&b.to_string_lossy(), "main"));
    let o = run(env.store().arg("read").arg(&c));
    assert!(o.stdout.contains(&format!(
        "pick     GUESS — no handoff exists for this target's branch (topic); the most recent handoff in the store was picked instead: branch main, checkout {}. That is a GUESS, made on recency alone.\n",
        b.display()
    )), "{}", o.stdout);
    assert!(o.stdout.contains(&format!(
        "other    main in {} — 1 minute ago — {}\n",
        a.display(),
        slot_a.display()
    )));
    assert!(o.stdout.contains(&format!(
        "DRIFT    repo mismatch: this handoff describes {}, but the target is {}\n",
        b.display(),
        c.display()
    )));
    assert_eq!(progress(&slot_b), "complete", "a guess is never consumed");
    // Outside a checkout there is nothing to read: the one error, never another project's.
    let o = run(env.store().arg("read").current_dir(env.root()));
    assert_eq!(
        (o.code, o.stdout.as_str(), o.stderr.as_str()),
        (
            3,
            "",
            format!(
                "handoff-store: {} is not inside a git checkout (name one with -C DIR)\n",
                env.root().display()
            )
            .as_str()
        )
    );
    let o = run(env.store().arg("read").arg(env.path("nowhere")));
    assert_eq!(o.code, 3, "a named target that is unusable never guesses");
    // `c`, not `a`: a's own git refs carry its handoff (sync), which `read` would offer.
    let o = run(env
        .store()
        .env("HANDOFF_STORE_DIR", env.path("empty"))
        .arg("read")
        .arg(&c));
    assert_eq!(
        o.stderr,
        format!(
            "handoff-store: no handoff for this repository in the store ({})\n",
            env.path("empty").display()
        )
    );
    assert_eq!((o.code, o.stdout.as_str()), (4, ""));
}

/// A guess is made only among the handoffs of the target's project — a commit its
/// repository holds, or a remote both have — never across projects; a fresh clone of the
/// project still finds the other clone's handoff.
#[test]
fn a_guess_never_crosses_projects() {
    let env = TestEnv::new();
    let shop = env.shop("shop", "main");
    let slot = env.stored(&shop, &canonical(&shop.to_string_lossy(), "main"));
    let other = env.repo("other", "topic", &[("x.txt", "unrelated\n")]);
    let o = run(env.store().arg("read").arg(&other));
    assert_eq!((o.code, o.stdout.as_str()), (4, ""), "{}", o.stderr);
    assert_eq!(
        o.stderr,
        format!(
            "handoff-store: no handoff for this repository in the store ({})\n",
            env.store_dir().display()
        )
    );
    // A clone holds the commit the handoff describes: one project.
    env.git(
        &env.root(),
        &["clone", "-q", &shop.to_string_lossy(), "clone"],
    );
    let clone = env.path("clone");
    env.git(&clone, &["checkout", "-q", "-b", "topic"]);
    let o = run(env.store().args(["read", "--no-consume"]).arg(&clone));
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stdout.contains("pick     GUESS"), "{}", o.stdout);
    assert!(o.stdout.contains(&slot.display().to_string()));
    // Two clones of one remote, the handoff's commit never pushed: the remote decides.
    let remote = env.path("remote.git");
    env.git(
        &env.root(),
        &[
            "init",
            "-q",
            "--bare",
            "-b",
            "main",
            &remote.to_string_lossy(),
        ],
    );
    let first = env.repo("first", "main", &[("a.txt", "first\n")]);
    env.git(
        &first,
        &[
            "remote",
            "add",
            "origin",
            &format!("file://{}", remote.display()),
        ],
    );
    env.git(&first, &["push", "-q", "origin", "main"]);
    env.git(
        &env.root(),
        &["clone", "-q", &remote.to_string_lossy(), "second"],
    );
    let second = env.path("second");
    env.write("first/local.txt", "not pushed\n");
    env.git(&first, &["add", "-A"]);
    env.git(&first, &["commit", "-q", "-m", "local"]);
    std::fs::remove_file(&slot).expect("rm the shop's handoff");
    let first_slot = env.stored(
        &first,
        &crate::util::with_pointers(&first.to_string_lossy(), "main", &["a.txt:1"]),
    );
    env.git(&second, &["checkout", "-q", "-b", "topic"]);
    let o = run(env.store().args(["read", "--no-consume"]).arg(&second));
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(
        o.stdout.contains(&first_slot.display().to_string()),
        "{}",
        o.stdout
    );
    let o = run(env.store().arg("read").arg(&other));
    assert_eq!(o.code, 4, "still nothing for the unrelated repository");
}

#[test]
fn placeholders_are_pending_abandoned_or_alive_and_never_shown() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    run(env
        .store()
        .args(["write", "--placeholder", "--checkout"])
        .arg(&repo)
        .env("HANDOFF_WRITE_SESSION", "sess-9"));
    let slot = env.store_dir().join(env.slot_name(&repo, "main"));
    let o = run(env.store().arg("read").arg(&repo));
    assert!(
        o.stdout.starts_with(&format!(
            "PENDING  {} is still being written (started ",
            slot.display()
        )),
        "{}",
        o.stdout
    );
    assert!(o.stdout.ends_with("ago; abandoned after 600 s)\n"));
    assert!(!o.stdout.contains("begin handoff"));
    assert_eq!(o.code, 4);
    env.age(&slot, 3 * 3600 + 60);
    let o = run(env
        .store()
        .arg("read")
        .arg(&repo)
        .env("CTX_FORK_TIMEOUT_SECONDS", "1"));
    assert_eq!(
        o.stdout,
        format!(
            "ABANDONED {} was never completed (last change 3 hours ago) — no handoff is coming; write a new one\n",
            slot.display(),
        )
    );
    assert_eq!(o.code, 4);
    env.write("home/.claude/projects/proj/sess-9.jsonl", "{}\n");
    let o = run(env
        .store()
        .arg("read")
        .arg(&repo)
        .env("CTX_FORK_TIMEOUT_SECONDS", "1"));
    assert!(
        o.stdout.starts_with("PENDING  "),
        "a fresh transcript keeps it alive: {}",
        o.stdout
    );
    let (code, v) = json(env.store().args(["read", "--format", "json"]).arg(&repo));
    assert_eq!(code, 4);
    assert_eq!(v["state"], "pending");
    assert_eq!(v["document"], serde_json::Value::Null);
}

#[test]
fn wait_returns_the_document_once_the_writer_completes_it() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    run(env
        .store()
        .args(["write", "--placeholder", "--checkout"])
        .arg(&repo));
    let bin = assert_cmd::cargo::cargo_bin("handoff-store");
    let reader = std::process::Command::new(bin)
        .args(["read", "--wait", "20"])
        .arg(&repo)
        .env("HANDOFF_STORE_DIR", env.store_dir())
        .env("HOME", env.home())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("spawn reader");
    std::thread::sleep(std::time::Duration::from_millis(1500));
    env.stored(&repo, &canonical(&repo.to_string_lossy(), "main"));
    let out = reader.wait_with_output().expect("reader");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("----- begin handoff -----\n# Handoff — type the mailables"));
}

#[test]
fn the_gate_seam_gives_the_four_status_lines_and_hides_warn_lines() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    let slot = env.stored(&repo, &canonical(&repo.to_string_lossy(), "main"));
    let stub = stub_gate(&env);
    let ok = format!(
        "GATE: OK — every citation resolved against {}.",
        repo.display()
    );
    let cases = [
        ("0", 0, ok.as_str()),
        (
            "1",
            1,
            "GATE: FAILED (exit 1) — at least one citation is MISSING or CHANGED, or a claim cites a path:line absent from ## Pointers.",
        ),
        (
            "2",
            2,
            "GATE: MALFORMED (exit 2) — the document violates the format contract, so its citations were NOT checked at all. Treat every pointer below as unverified.",
        ),
        (
            "7",
            1,
            "GATE: unexpected exit status 7; treat every pointer below as unverified.",
        ),
    ];
    for (exit, code, line) in cases {
        let lean = run(env
            .store()
            .args(["read", "--no-consume"])
            .arg(&repo)
            .env("VERIFY_HANDOFF_GATE", &stub)
            .env("STUB_GATE_EXIT", exit));
        assert!(
            lean.stdout.contains(&format!("\n{line}\n")),
            "{}",
            lean.stdout
        );
        assert!(
            !lean.stdout.contains("\nstub "),
            "the whole report only with -v: {}",
            lean.stdout
        );
        let o = run(env
            .store()
            .args(["read", "--no-consume", "-v"])
            .arg(&repo)
            .env("VERIFY_HANDOFF_GATE", &stub)
            .env("STUB_GATE_EXIT", exit));
        assert_eq!(o.code, code, "{}", o.stdout);
        assert!(o.stdout.contains(&format!("\n{line}\n")), "{}", o.stdout);
        assert!(
            o.stdout
                .contains(&format!("\nstub {} {}\n", slot.display(), repo.display())),
            "argv: {}",
            o.stdout
        );
        assert!(!o.stdout.contains("WARN     advice"));
        assert!(o.stdout.contains("\n(1 authoring-side WARN line(s) omitted: they address the handoff's author, not its reader.)\n"));
    }
    let o = run(env
        .store()
        .args(["read", "--no-consume"])
        .arg(&repo)
        .env("VERIFY_HANDOFF_GATE", env.path("no-such-gate")));
    assert!(o.stdout.contains(&format!(
        "GATE: NOT RUN — VERIFY_HANDOFF_GATE names {}, which could not be started. Every pointer below is UNVERIFIED; none of them has been checked against the tree.\n",
        env.path("no-such-gate").display()
    )), "{}", o.stdout);
    assert_eq!(o.code, 1);
}

#[test]
fn a_slot_replaced_while_it_was_shown_is_not_consumed() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    let slot = env.stored(&repo, &canonical(&repo.to_string_lossy(), "main"));
    // The stub gate stands in for a writer that replaces the slot during the read.
    let stub = env.write("replacing-gate.sh", "#!/bin/sh\nprintf '# Handoff — newer\\nstatus: new\\nprogress: complete\\n' > \"$1.new\" && mv \"$1.new\" \"$1\"\nexit 0\n");
    assert!(
        std::process::Command::new("chmod")
            .arg("+x")
            .arg(&stub)
            .status()
            .expect("chmod")
            .success()
    );
    let o = run(env
        .store()
        .arg("read")
        .arg(&repo)
        .env("VERIFY_HANDOFF_GATE", &stub));
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_eq!(
        progress(&slot),
        "complete",
        "the newer version must not be marked read"
    );
}

#[test]
fn a_checkout_that_is_gone_is_not_gated() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    let elsewhere = env.shop("elsewhere", "main");
    let doc = canonical(&repo.to_string_lossy(), "main");
    env.stored(&repo, &doc);
    std::fs::remove_dir_all(&repo).expect("rm");
    let o = run(env.store().arg("read").arg(&elsewhere));
    assert!(o.stdout.contains(&format!(
        "GATE: NOT RUN — the handoff's checkout {} is not a git checkout on this machine. Every pointer below is UNVERIFIED; none of them has been checked against the tree.\n",
        repo.display()
    )), "{}", o.stdout);
    assert!(o.stdout.contains(&format!(
        "DRIFT    checkout gone: {} is not a git checkout on this machine\n",
        repo.display()
    )));
    assert_eq!(o.code, 1);
}

fn drift_lines(env: &TestEnv, dir: &Path) -> Vec<String> {
    let o = run(env.store().args(["read", "--no-consume"]).arg(dir));
    o.stdout
        .lines()
        .filter_map(|l| l.strip_prefix("DRIFT    ").map(str::to_string))
        .collect()
}

#[test]
fn drift_counts_commits_detects_rewrites_and_age() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    let slot = env.stored(&repo, &canonical(&repo.to_string_lossy(), "main"));
    assert!(drift_lines(&env, &repo).is_empty());
    let h = env.git(&repo, &["rev-parse", "HEAD"]);
    for i in 0..3 {
        env.git(
            &repo,
            &["commit", "-q", "--allow-empty", "-m", &format!("c{i}")],
        );
    }
    let now = env.git(&repo, &["rev-parse", "HEAD"]);
    assert_eq!(
        drift_lines(&env, &repo),
        [format!(
            "3 commit(s) since this handoff was written ({}..{} in {})",
            &h[..7],
            &now[..7],
            repo.display()
        )]
    );
    let (_, v) = json(
        env.store()
            .args(["read", "--no-consume", "--format", "json"])
            .arg(&repo),
    );
    assert_eq!(v["drift"][0]["kind"], "commits_since");
    assert_eq!(v["drift"][0]["count"], 3);
    env.git(&repo, &["reset", "-q", "--hard", &h]);
    env.git(&repo, &["commit", "-q", "--allow-empty", "-m", "sibling"]);
    let sibling = env.git(&repo, &["rev-parse", "HEAD"]);
    env.git(&repo, &["reset", "-q", "--hard", &h]);
    let text = std::fs::read_to_string(&slot)
        .expect("slot")
        .replace(&h, &now);
    std::fs::write(&slot, text).expect("rewrite");
    env.git(&repo, &["reset", "-q", "--hard", &sibling]);
    assert_eq!(
        drift_lines(&env, &repo),
        [format!(
            "diverged: recorded head {} is not in the history of {} (now at {}) — rebased, reset or switched",
            &now[..7],
            repo.display(),
            &sibling[..7]
        )]
    );
    let text = std::fs::read_to_string(&slot)
        .expect("slot")
        .replace(&now, &"d".repeat(40));
    std::fs::write(&slot, text).expect("rewrite");
    assert_eq!(
        drift_lines(&env, &repo),
        [format!(
            "head unknown: recorded head ddddddd is not a commit in {} — history rewritten, or another clone",
            repo.display()
        )]
    );
    env.age(&slot, 30 * 3600);
    assert_eq!(
        drift_lines(&env, &repo).last().map(String::as_str),
        Some("STALE: last written 30 hours ago, over the 24-hour threshold")
    );
    let o = run(env
        .store()
        .args(["read", "--no-consume"])
        .arg(&repo)
        .env("HANDOFF_STALE_HOURS", "0"));
    assert!(!o.stdout.contains("STALE"));
}

#[test]
fn drift_names_a_branch_switch_but_not_a_matching_detached_head() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    env.stored(&repo, &canonical(&repo.to_string_lossy(), "main"));
    env.git(&repo, &["checkout", "-q", "-b", "other"]);
    assert!(drift_lines(&env, &repo).contains(&format!(
        "branch mismatch: this handoff was written on main, but {} is now on other",
        repo.display()
    )));
    let detached = env.shop("detached", "main");
    env.git(&detached, &["checkout", "-q", "--detach"]);
    let short = env.git(&detached, &["rev-parse", "--short=10", "HEAD"]);
    let slot = env.stored(&detached, &canonical(&detached.to_string_lossy(), &short));
    // `write` forces the 7-character form; a handoff written elsewhere may carry a longer one.
    let seven = &short[..7];
    let text = std::fs::read_to_string(&slot)
        .expect("slot")
        .replace(&format!("branch: {seven}\n"), &format!("branch: {short}\n"));
    assert!(text.contains(&format!("branch: {short}\n")));
    std::fs::write(&slot, text).expect("rewrite");
    assert!(
        drift_lines(&env, &detached).is_empty(),
        "a longer short SHA still matches"
    );
}

/// Two unrelated repositories whose remotes are spelled alike — `../remote.git` (each its own
/// sibling) and `.` (each itself) — are not one project: neither's handoff is guessed for the
/// other, by `read` or after a `/clear`. Two clones of one relative remote still are.
#[test]
fn a_relative_or_dot_remote_url_never_joins_unrelated_repositories() {
    let env = TestEnv::new();
    for (i, url) in ["../remote.git", "."].iter().enumerate() {
        let a = env.repo(&format!("a{i}/repo"), "main", &[("a.txt", "a\n")]);
        let b = env.repo(&format!("b{i}/repo"), "topic", &[("b.txt", "b\n")]);
        for (dir, repo) in [(format!("a{i}"), &a), (format!("b{i}"), &b)] {
            env.git(&env.path(&dir), &["init", "-q", "--bare", "remote.git"]);
            env.git(repo, &["remote", "add", "origin", url]);
        }
        let doc = crate::util::with_pointers(&a.to_string_lossy(), "main", &["a.txt:1 | a"]);
        env.stored(&a, &doc);
        let o = run(env.store().args(["read", "--no-consume", "-C"]).arg(&b));
        assert_eq!(o.code, 4, "{url}: {}{}", o.stdout, o.stderr);
        let input = serde_json::json!({"session_id": format!("s{i}"), "cwd": b, "source": "clear"});
        let hook = run(env
            .store()
            .args(["hook", "session-start"])
            .env("LAST_CLEAR_STATE_DIR", env.path("markers"))
            .write_stdin(input.to_string()));
        assert!(
            !hook.stdout.contains("GUESS") && !hook.stdout.contains(&a.display().to_string()),
            "{url}: {}",
            hook.stdout
        );
    }
    // One bare remote, two clones naming it relatively: one project.
    let shared = env.path("c/remote.git");
    env.git(
        &env.root(),
        &[
            "init",
            "-q",
            "--bare",
            "-b",
            "main",
            &shared.to_string_lossy(),
        ],
    );
    let first = env.repo("c/first", "main", &[("a.txt", "first\n")]);
    let second = env.repo("c/second", "topic", &[("b.txt", "second\n")]);
    for repo in [&first, &second] {
        env.git(repo, &["remote", "add", "origin", "../remote.git"]);
    }
    env.stored(
        &first,
        &crate::util::with_pointers(&first.to_string_lossy(), "main", &["a.txt:1 | first"]),
    );
    let o = run(env
        .store()
        .args(["read", "--no-consume", "-C"])
        .arg(&second));
    assert_eq!(o.code, 0, "{}{}", o.stdout, o.stderr);
    assert!(o.stdout.contains("pick     GUESS"), "{}", o.stdout);
}

/// `read` is as lean as the injection: the verdict, then only what failed — a moved citation
/// as its `moved` line, a changed or missing one with its fragment — no size line, no table;
/// `-v` shows the whole report. `write` says no size and no `[from argument]` either.
#[test]
fn read_shows_only_what_failed_and_the_whole_report_under_v() {
    let env = TestEnv::new();
    let repo = env.repo(
        "lean",
        "main",
        &[
            ("f.txt", "one\ntwo\nthree\n"),
            ("g.txt", "alpha\n"),
            ("h.txt", "first\n"),
        ],
    );
    let doc = format!(
        "# Handoff — lean\nbranch: main\ncheckout: {}\nstatus: s\n\n## Do not re-derive\n\n### Decisions\n- keep f `f.txt:2`, g `g.txt:1`, h `h.txt:1`\n\n### Dead ends\n- None.\n\n### Traps\n- None.\n\n## Next\n1. go\n\n## Pointers\n```text\nf.txt:2 | two\ng.txt:1 | alpha\nh.txt:1 | first\n```\n",
        repo.display()
    );
    let written = run(env
        .store()
        .args(["write", "--checkout"])
        .arg(&repo)
        .write_stdin(doc));
    assert_eq!(written.code, 0, "{}{}", written.stdout, written.stderr);
    assert!(
        !written.stdout.contains("size ") && !written.stdout.contains("[from argument]"),
        "{}",
        written.stdout
    );
    std::fs::write(repo.join("f.txt"), "zero\none\ntwo\nthree\n").expect("move");
    std::fs::remove_file(repo.join("g.txt")).expect("rm");
    std::fs::write(repo.join("h.txt"), "second\n").expect("change");
    let o = run(env.store().args(["read", "--no-consume"]).arg(&repo));
    assert_eq!(o.code, 1, "{}", o.stdout);
    let head = o.stdout.split("----- begin handoff").next().unwrap_or("");
    assert!(
        head.contains("\nmoved    f.txt:2 → 3 ")
            && head.contains("\nMISSING g.txt:1 | alpha: no such file or directory\n")
            && head.contains("\nCHANGED h.txt:1 no longer contains: first"),
        "{head}"
    );
    assert!(
        !head.contains("CHANGED f.txt:2") && !head.contains("size ") && !head.contains(" → h.txt"),
        "{head}"
    );
    let v = run(env.store().args(["read", "--no-consume", "-v"]).arg(&repo));
    assert!(
        v.stdout.contains("\nMISSING  g.txt:1 ")
            && v.stdout.contains("\nsize ")
            && v.stdout.contains("1 of 3 citations do not resolve."),
        "{}",
        v.stdout
    );
}

/// `verify-handoff FILE --checkout DIR` is `verify-handoff FILE DIR`.
#[test]
fn verify_takes_the_checkout_as_an_option_too() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    let file = env.write("h.md", canonical(&repo.to_string_lossy(), "main"));
    let positional = run(env.verify().arg(&file).arg(&repo));
    let named = run(env.verify().arg(&file).arg("--checkout").arg(&repo));
    assert_eq!(positional.code, 0, "{}", positional.stdout);
    assert_eq!(
        (named.code, named.stdout),
        (positional.code, positional.stdout)
    );
}
