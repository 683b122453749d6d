//! The gate (docs/gate.md §1–§2): canonical runs, every contract message, coverage, size, checkout
//! resolution and the branch check.

use crate::util::{TestEnv, canonical, json, run, with_pointers};

/// A checkout whose path has exactly the length of `/home/dev/src/shop`, so the canonical
/// document has the byte count of docs/gate.md §2.13.
fn eighteen_char_checkout(env: &TestEnv) -> (tempfile::TempDir, String) {
    let dir = tempfile::Builder::new()
        .prefix("hs")
        .rand_bytes(11)
        .tempdir_in("/tmp")
        .expect("tmp dir");
    let path = dir.path().to_string_lossy().into_owned();
    assert_eq!(path.len(), "/home/dev/src/shop".len());
    env.git(dir.path(), &["init", "-q", "-b", "feature/typed-mail"]);
    std::fs::create_dir_all(dir.path().join("app/Mail")).expect("dirs");
    std::fs::write(
        dir.path().join("app/Mail/Invoice.php"),
        crate::util::invoice_php(),
    )
    .expect("php");
    std::fs::write(dir.path().join("composer.json"), "{}\n").expect("json");
    env.git(dir.path(), &["add", "-A"]);
    env.git(dir.path(), &["commit", "-q", "-m", "init"]);
    (dir, path)
}

#[test]
fn canonical_run_prints_the_contract_report_and_exits_0() {
    let env = TestEnv::new();
    let (_keep, shop) = eighteen_char_checkout(&env);
    let file = env.write("shop.md", canonical(&shop, "feature/typed-mail"));
    let o = run(env.verify().arg(&file));
    let pad = |s: &str| format!("{s}{}", " ".repeat(58 - s.len()));
    let expected = format!(
        "size     784 chars ≈ 292 tokens ≈ 0.1 turns of work\n\
         checkout {shop} (HEAD feature/typed-mail) [from checkout: header]\n\n\
         OK       {} → app/Mail/Invoice.php:24 contains the cited content\n\
         OK       {} → app/Mail/\n\nAll 2 citations resolve.\n",
        pad("app/Mail/Invoice.php:24"),
        pad("app/Mail/")
    );
    assert_eq!(o.stdout, expected);
    assert_eq!(o.stderr, "");
    assert_eq!(o.code, 0);
}

#[test]
fn canonical_run_with_traps_renamed_and_a_path_symbol_anchor_exits_2() {
    let env = TestEnv::new();
    let (_keep, shop) = eighteen_char_checkout(&env);
    let doc = canonical(&shop, "feature/typed-mail")
        .replace("### Traps", "### Gotchas")
        .replace(
            "app/Mail/Invoice.php:24 | public function build",
            "app/Mail/Invoice.php:build",
        );
    let file = env.write("shop.md", doc);
    let o = run(env.verify().arg(&file));
    assert_eq!(
        o.stderr,
        "ERROR    required section missing: Traps\n\
         ERROR    path:symbol anchor is a known false MISSING (O7): app/Mail/Invoice.php:build — cite the line instead, as `path:line | build`\n"
    );
    assert_eq!(
        o.stdout,
        format!(
            "FAIL     cited in prose but not in Pointers, so never checked: app/Mail/Invoice.php:24\n\
             WARN     in Pointers but nothing in the prose refers to it: app/Mail/Invoice.php:build\n\
             size     765 chars ≈ 285 tokens ≈ 0.1 turns of work\n\
             checkout {shop} (HEAD feature/typed-mail) [from checkout: header]\n\n\
             2 contract violation(s); citations were not checked. The format: `handoff-store new` prints a handoff to fill in; docs/guide.md explains it.\n"
        )
    );
    assert_eq!(o.code, 2);
}

fn gate(env: &TestEnv, doc: &str) -> crate::util::Outcome {
    let file = env.write("h.md", doc);
    run(env.verify().arg(file))
}

#[test]
fn title_must_be_the_first_heading_named_handoff() {
    let env = TestEnv::new();
    let shop = env.shop("shop", "main");
    let good = canonical(&shop.to_string_lossy(), "main");
    for bad in ["# Handoffs — x", "# Handoff: x", "## Handoff — x"] {
        let o = gate(
            &env,
            &good.replacen("# Handoff — type the mailables", bad, 1),
        );
        assert!(
            o.stderr
                .contains("ERROR    first heading is not \"# Handoff — <task>\"\n"),
            "{bad}: {}",
            o.stderr
        );
        assert_eq!(o.code, 2);
    }
    let o = gate(&env, &format!("\nsome preamble\n{good}"));
    assert_eq!(o.code, 0, "{}", o.stderr);
}

#[test]
fn missing_fields_are_reported_in_order_with_the_below_envelope_hint() {
    let env = TestEnv::new();
    let shop = env.shop("shop", "main");
    let doc = canonical(&shop.to_string_lossy(), "main")
        .replace("branch: main\n", "")
        .replace(
            "status: Invoice done; Reminder not started. Gate run, format held.\n",
            "",
        )
        .replace(
            "### Traps\n- None.",
            "### Traps\n- None.\nstatus: not a header here",
        );
    let o = gate(&env, &doc);
    assert!(o.stderr.starts_with(
        "ERROR    header field missing: status: — line 16 has one, but below the first ## heading it does not count\n"
    ), "{}", o.stderr);
    assert!(
        !o.stderr.contains("branch:"),
        "a draft may leave branch: out"
    );
    assert_eq!(o.code, 2);
    // A draft without branch: and checkout: is valid, as `write` takes it: it is
    // gated against the checkout it is given (here the working directory).
    let draft = canonical(&shop.to_string_lossy(), "main")
        .replace(&format!("checkout: {}\n", shop.display()), "")
        .replace("branch: main\n", "");
    let o = run(env
        .verify()
        .arg(env.write("h.md", &draft))
        .current_dir(&shop));
    assert_eq!(o.code, 0, "{}{}", o.stdout, o.stderr);
    assert!(
        o.stdout
            .contains("[from $PWD — the handoff declares no checkout:]"),
        "{}",
        o.stdout
    );
}

#[test]
fn empty_checkout_and_bad_progress_are_errors() {
    let env = TestEnv::new();
    let shop = env.shop("shop", "main");
    let good = canonical(&shop.to_string_lossy(), "main");
    let empty = env.write(
        "h.md",
        good.replace(&format!("checkout: {}", shop.display()), "checkout:"),
    );
    let o = run(env.verify().arg(&empty).current_dir(&shop));
    assert!(o.stderr.contains(
        "ERROR    header field is empty: checkout: (absolute path of the tree the citations resolve against)\n"
    ));
    assert!(
        o.stdout
            .contains("[from $PWD — the handoff declares no checkout:]")
    );
    assert_eq!(o.code, 2);
    for bad in ["Complete", "", "done"] {
        let o = gate(
            &env,
            &good.replace("progress: complete", &format!("progress: {bad}")),
        );
        assert!(
            o.stderr.contains(&format!(
                "ERROR    progress: must be writing, complete or consumed, not \"{bad}\" (leave the field out to mean complete)\n"
            )),
            "{}",
            o.stderr
        );
        assert_eq!(o.code, 2);
    }
    for ok in ["writing", "consumed"] {
        assert_eq!(
            gate(
                &env,
                &good.replace("progress: complete", &format!("progress: {ok}"))
            )
            .code,
            0
        );
    }
    assert_eq!(
        gate(&env, &good.replace("progress: complete\n", "")).code,
        0
    );
}

#[test]
fn tilde_user_checkout_is_not_absolute_and_falls_back_to_the_working_directory() {
    let env = TestEnv::new();
    let shop = env.shop("shop", "main");
    let doc = canonical("~bob/src", "main");
    let file = env.write("h.md", &doc);
    let o = run(env.verify().arg(&file).current_dir(&shop));
    assert!(o.stderr.contains(
        "ERROR    checkout: cannot be resolved: ~bob/src — write the absolute path of the tree the citations resolve against\n"
    ));
    assert!(o.stdout.contains(&format!(
        "checkout {} (HEAD main) [from $PWD — the handoff's checkout: is not an absolute path]\n",
        shop.display()
    )), "{}", o.stdout);
    assert!(
        o.stdout
            .ends_with("1 contract violation(s); citations were not checked. The format: `handoff-store new` prints a handoff to fill in; docs/guide.md explains it.\n")
    );
    assert_eq!(o.code, 2);
    // A CHECKOUT argument replaces it, as `write` would (one meaning of valid).
    let o = run(env.verify().arg(&file).arg(&shop));
    assert!(o.stdout.contains("[from argument"));
    assert_eq!(o.code, 0, "{}{}", o.stdout, o.stderr);
}

#[test]
fn tilde_and_relative_checkouts_resolve() {
    let env = TestEnv::new();
    env.shop("home/src/shop", "main");
    let o = gate(&env, &canonical("~/src/shop", "main"));
    assert_eq!(o.code, 0, "{}{}", o.stdout, o.stderr);
    assert!(o.stdout.contains("[from checkout: header]"));
    let shop = env.shop("proj", "main");
    // A handoff kept inside the repository at docs/handoffs/h.md says `checkout: ../..`.
    let file = env.write("proj/docs/handoffs/h.md", canonical("../..", "main"));
    let o = run(env.verify().arg(&file).current_dir("/"));
    assert_eq!(o.code, 0, "{}{}", o.stdout, o.stderr);
    assert!(o.stdout.contains(&format!(
        "checkout {} (HEAD main) [from checkout: header]",
        shop.display()
    )));
}

#[test]
fn sections_need_exact_level_and_name_and_content() {
    let env = TestEnv::new();
    let shop = env.shop("shop", "main");
    let good = canonical(&shop.to_string_lossy(), "main");
    let o = gate(&env, &good.replace("## Next\n", "## Nextcloud\n"));
    assert!(
        o.stderr
            .contains("ERROR    required section missing: Next\n")
    );
    let o = gate(&env, &good.replace("### Decisions", "#### Decisions"));
    assert!(
        o.stderr
            .contains("ERROR    required section missing: Decisions\n")
    );
    let o = gate(
        &env,
        &good.replace("## Do not re-derive", "## Do not rederive"),
    );
    assert!(
        o.stderr
            .contains("ERROR    required section missing: Do not re-derive\n")
    );
    let o = gate(
        &env,
        &good.replace("### Traps\n- None.\n", "### Traps\n   \n"),
    );
    assert!(o.stderr.contains(
        "ERROR    section is empty: Traps — write \"None.\" if that is the answer, so a reader can tell it was considered\n"
    ));
    // `#123` is body text, and a deeper heading belongs to the section.
    let o = gate(
        &env,
        &good.replace("### Traps\n- None.\n", "### Traps\n#123 is flaky\n"),
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    let o = gate(
        &env,
        &good.replace("### Traps\n- None.\n", "### Traps\n#### Detail\ntext\n"),
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    // A heading inside a fence is not a heading.
    let o = gate(
        &env,
        &good.replace("### Traps\n- None.\n", "### Traps\n```\n## Next\n```\n"),
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
}

#[test]
fn pointers_need_a_closed_fence_inside_their_section() {
    let env = TestEnv::new();
    let shop = env.shop("shop", "main");
    let good = canonical(&shop.to_string_lossy(), "main");
    let o = gate(
        &env,
        &good
            .replace("## Pointers\n```text\n", "## Pointers\n")
            .replace("app/Mail/\n```\n", "app/Mail/\n"),
    );
    assert!(o.stderr.contains(
        "ERROR    Pointers section has no ``` fence — an unfenced list is prose to every tool that reads it\n"
    ));
    let o = gate(
        &env,
        good.split("## Unverifiable")
            .next()
            .unwrap_or("")
            .trim_end()
            .strip_suffix("```")
            .unwrap_or(""),
    );
    assert!(
        o.stderr
            .contains("ERROR    Pointers fence is never closed\n"),
        "{}",
        o.stderr
    );
    assert!(
        !o.stdout.contains("fence_unclosed") && !o.stdout.contains("is never closed — a markdown")
    );
    let o = gate(
        &env,
        &good.replace("## Pointers\n", "## Pointers\nProse first is allowed.\n"),
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    let o = gate(
        &env,
        &good
            .replace("## Pointers\n", "## Pointers\n~~~~\n")
            .replace("app/Mail/\n```\n", "app/Mail/\n~~~~\n")
            .replace("```text\n", ""),
    );
    assert_eq!(o.code, 0, "tilde fence: {}", o.stderr);
    let o = gate(
        &env,
        &good
            .replace("```text\n", "   ````text\n")
            .replace("app/Mail/\n```\n", "app/Mail/\n`````\n"),
    );
    assert_eq!(o.code, 0, "indented, longer closer: {}", o.stderr);
    // A fence in a later section is never the Pointers fence.
    let moved = good
        .replace("## Pointers\n```text\n# the boundary this whole ticket turns on\napp/Mail/Invoice.php:24 | public function build\napp/Mail/\n```\n", "## Pointers\n")
        .replace("## Unverifiable\n", "## Unverifiable\n```\napp/Mail/\n```\n");
    let o = gate(&env, &moved);
    assert!(
        o.stderr.contains("Pointers section has no ``` fence"),
        "{}",
        o.stderr
    );
}

#[test]
fn unclosed_fences_and_late_fields_warn() {
    let env = TestEnv::new();
    let shop = env.shop("shop", "main");
    let good = canonical(&shop.to_string_lossy(), "main");
    let o = gate(&env, &format!("{good}\n## Notes\n```sh\necho\n"));
    assert!(o.stdout.contains("WARN     fence opened on line 33 is never closed — a markdown reader treats everything after it as code\n"), "{}", o.stdout);
    assert_eq!(o.code, 0);
    let late = good.replace(
        "progress: complete\n",
        &format!("{}progress: complete\n", "filler\n".repeat(20)),
    );
    let o = gate(&env, &late);
    assert!(o.stdout.contains(
        "WARN     header field progress: is on line 25; the store and hooks read only the first 20 lines — move it up\n"
    ), "{}", o.stdout);
}

#[test]
fn path_symbol_guard_refuses_anchors_even_behind_a_list_marker() {
    let env = TestEnv::new();
    let shop = env.shop("shop", "main");
    for (line, ident) in [
        ("- app/x.php:foo", "foo"),
        ("a.b:c1", "c1"),
        ("file.ts:L42", "L42"),
        ("lib/foo.rs:Foo::bar", "bar"),
    ] {
        let o = gate(
            &env,
            &with_pointers(&shop.to_string_lossy(), "main", &[line]),
        );
        assert!(
            o.stderr
                .contains(&format!("cite the line instead, as `path:line | {ident}`")),
            "{line}: {}",
            o.stderr
        );
        assert_eq!(o.code, 2);
    }
    for line in ["Foo::bar", "std::io::Read", "composer.json:1"] {
        let o = gate(
            &env,
            &with_pointers(&shop.to_string_lossy(), "main", &[line]),
        );
        assert!(!o.stderr.contains("path:symbol"), "{line}: {}", o.stderr);
    }
}

#[test]
fn prose_in_pointers_trips_the_input_guard_as_one_error() {
    let env = TestEnv::new();
    let shop = env.shop("shop", "main");
    let prose = [
        "this is a sentence",
        "another one here",
        "and a third",
        "plus four",
        "app/Mail/",
    ];
    let o = gate(
        &env,
        &with_pointers(&shop.to_string_lossy(), "main", &prose),
    );
    assert!(o.stderr.starts_with("ERROR: this does not look like a citation list, so nothing was checked.\n\n4 of 5 input lines contain whitespace where a path or\n"), "{}", o.stderr);
    assert!(o.stderr.contains("First lines that are not citation-shaped:\n  this is a sentence\n  another one here\n  and a third\n"));
    assert!(
        o.stdout
            .ends_with("1 contract violation(s); citations were not checked. The format: `handoff-store new` prints a handoff to fill in; docs/guide.md explains it.\n"),
        "{}",
        o.stdout
    );
    assert_eq!(o.code, 2);
}

#[test]
fn secrets_are_errors_and_never_echoed() {
    let env = TestEnv::new();
    let shop = env.shop("shop", "main");
    let secret = "Tr0ub4dor3horsebattery";
    let doc = canonical(&shop.to_string_lossy(), "main").replace(
        "### Traps\n- None.",
        &format!("### Traps\n- DB_PASSWORD={secret} in `app/x.php:3`"),
    );
    for format in ["text", "json"] {
        let o = run(env
            .verify()
            .arg(env.write("h.md", &doc))
            .args(["--format", format]));
        assert!(!o.stdout.contains(secret) && !o.stderr.contains(secret));
        assert_eq!(o.code, 2);
        if format == "text" {
            assert!(o.stderr.contains("ERROR    line 17: looks like a credential (password or token assignment) — a handoff must never carry one; remove it (the value is not shown)\n"), "{}", o.stderr);
            // The blanked line no longer holds evidence, so it is not reported as uncovered.
            assert!(!o.stdout.contains("app/x.php:3"));
        }
    }
    let key =
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk\n-----END OPENSSH PRIVATE KEY-----";
    let o = gate(
        &env,
        &canonical(&shop.to_string_lossy(), "main")
            .replace("- None.", &format!("- None.\n```\n{key}\n```")),
    );
    assert!(
        o.stderr
            .contains("ERROR    line 19: looks like a credential (private key block)"),
        "{}",
        o.stderr
    );
    assert!(!o.stderr.contains("b3Bl") && !o.stdout.contains("b3Bl"));
}

#[test]
fn evidence_outside_pointers_fails_with_the_closing_line() {
    let env = TestEnv::new();
    let shop = env.shop("shop", "main");
    let doc = canonical(&shop.to_string_lossy(), "main").replace(
        "### Traps\n- None.",
        "### Traps\n- Watch `composer.json:1`, and `(app/Mail/Invoice.php:24)`.",
    );
    let o = gate(&env, &doc);
    assert!(
        o.stdout.contains(
            "FAIL     cited in prose but not in Pointers, so never checked: composer.json:1\n"
        ),
        "{}",
        o.stdout
    );
    assert!(
        !o.stdout.contains("never checked: app/Mail/Invoice.php:24"),
        "wrapping is normalised"
    );
    assert!(o.stdout.ends_with("All 2 citations resolve.\n1 citation(s) in the prose are not in Pointers, so they were never checked.\n"), "{}", o.stdout);
    assert_eq!(o.code, 1);
}

#[test]
fn list_markers_in_pointers_still_cover_the_prose() {
    let env = TestEnv::new();
    let shop = env.shop("shop", "main");
    let doc = canonical(&shop.to_string_lossy(), "main").replace(
        "app/Mail/Invoice.php:24 | public",
        "- `app/Mail/Invoice.php:24` | public",
    );
    let o = gate(&env, &doc);
    assert_eq!(o.code, 0, "{}", o.stdout);
}

#[test]
fn mentions_dead_pointers_and_unbackticked_citations_warn() {
    let env = TestEnv::new();
    let shop = env.shop("shop", "main");
    let doc = canonical(&shop.to_string_lossy(), "main")
        .replace("### Traps\n- None.", "### Traps\n- Watch app/Mail/Reminder.php:9, it moves. See `app/Other/` and `http://localhost:8080`, `10:30`, `localhost:8080`, `/clear`, `~/.claude/lib/`, `$HOME/x.sh`, `<project>/x/<branch>.md`, `CLAUDE.md`. Also https://example.com/a.php:3.")
        .replace("app/Mail/\n```", "app/Mail/\ncomposer.json\n```");
    let o = gate(&env, &doc);
    assert!(
        o.stdout.contains(
            "WARN     mentioned in prose but not in Pointers, so unchecked: app/Other/\n"
        ),
        "{}",
        o.stdout
    );
    assert!(
        o.stdout.contains(
            "WARN     in Pointers but nothing in the prose refers to it: composer.json\n"
        )
    );
    assert!(o.stdout.contains("WARN     looks like a citation but is not backticked, so it is not checked: app/Mail/Reminder.php:9\n"));
    assert!(
        !o.stdout.contains("FAIL"),
        "none of the other tokens is evidence: {}",
        o.stdout
    );
    assert!(!o.stdout.contains("example.com"));
    assert_eq!(o.code, 0);
    // A pointer named only in Next is not dead.
    let doc = canonical(&shop.to_string_lossy(), "main")
        .replace("app/Mail/\n```", "app/Mail/\ncomposer.json\n```")
        .replace("1. Do Reminder", "1. Check composer.json, then do Reminder");
    assert!(!gate(&env, &doc).stdout.contains("refers to it"));
}

#[test]
fn size_warnings_use_thresholds_that_are_parsed_never_run() {
    let env = TestEnv::new();
    let shop = env.shop("shop", "main");
    let good = canonical(&shop.to_string_lossy(), "main");
    let file = env.write("h.md", &good);
    let o = run(env.verify().arg(&file).env("HANDOFF_TARGET_TOKENS", "100"));
    assert!(
        o.stdout
            .contains("WARN     over the target of 100 tokens by "),
        "{}",
        o.stdout
    );
    assert_eq!(o.code, 0);
    let o = run(env
        .verify()
        .arg(&file)
        .env("HANDOFF_CEILING_TOKENS", "50")
        .env("HANDOFF_TARGET_TOKENS", "10"));
    assert!(
        o.stdout
            .contains("WARN     over the ceiling of 50 tokens by ")
            && !o.stdout.contains("over the target")
    );
    let o = run(env.verify().arg(&file).env("HANDOFF_TARGET_TOKENS", "abc"));
    assert!(o.stdout.contains("WARN     ignoring HANDOFF_TARGET_TOKENS=abc from the environment: not a positive whole number\n"));
    let pwned = env.path("pwned");
    let thresholds = env.write(
        "t.env",
        format!(
            "export HANDOFF_TARGET_TOKENS=\"100\"\nX=$(touch {})\n`touch {}`\n",
            pwned.display(),
            pwned.display()
        ),
    );
    let o = run(env
        .verify()
        .arg(&file)
        .env("CTX_THRESHOLDS_FILE", &thresholds)
        .env("HANDOFF_TARGET_TOKENS", "99999"));
    assert!(
        o.stdout.contains("over the target of 100 tokens"),
        "the file wins: {}",
        o.stdout
    );
    assert!(!pwned.exists(), "the thresholds file was executed");
    let o = run(env
        .verify()
        .arg(&file)
        .env("CTX_THRESHOLDS_FILE", env.path("nope.env")));
    assert!(o.stdout.contains(&format!(
        "WARN     no thresholds file at {} — using built-in thresholds\n",
        env.path("nope.env").display()
    )));
    assert_eq!(o.code, 0);
}

#[test]
fn overriding_is_decided_on_canonical_work_trees() {
    let env = TestEnv::new();
    let shop = env.shop("shop", "main");
    let other = env.shop("other", "main");
    std::os::unix::fs::symlink(&shop, env.path("link")).expect("symlink");
    let file = env.write("h.md", canonical(&shop.to_string_lossy(), "main"));
    for same in [env.path("link"), shop.join("app"), shop.clone()] {
        let o = run(env.verify().arg(&file).arg(&same));
        assert!(
            o.stdout.contains("[from argument]\n"),
            "{}: {}",
            same.display(),
            o.stdout
        );
    }
    let o = run(env.verify().arg(&file).arg("shop/"));
    assert!(
        o.stdout.contains("[from argument]\n"),
        "relative spelling: {}",
        o.stdout
    );
    let o = run(env.verify().arg(&file).arg(&other));
    assert!(
        o.stdout.contains(&format!(
            "checkout {} (HEAD main) [from argument, OVERRIDING checkout: {}]\n",
            other.display(),
            shop.display()
        )),
        "{}",
        o.stdout
    );
    let o = run(env.verify().arg(&file).arg(""));
    assert!(
        o.stdout.contains("[from checkout: header]"),
        "an empty CHECKOUT counts as not given"
    );
}

#[test]
fn checkout_errors_print_everything_else_then_the_summary() {
    let env = TestEnv::new();
    env.write("plain/file.txt", "x");
    env.git(&env.root(), &["init", "-q", "--bare", "bare.git"]);
    let cases = [
        (env.path("missing").display().to_string(), "does not exist"),
        (
            env.path("plain/file.txt").display().to_string(),
            "is not a directory",
        ),
        (
            env.path("plain").display().to_string(),
            "is not inside a git repository",
        ),
        (
            env.path("bare.git").display().to_string(),
            "is a bare repository; citations need a work tree",
        ),
    ];
    for (p, text) in cases {
        let o = gate(&env, &canonical(&p, "main"));
        assert!(
            o.stderr
                .contains(&format!("ERROR    checkout {p} {text}\n")),
            "{}",
            o.stderr
        );
        assert!(o.stdout.contains("size     "));
        assert!(!o.stdout.contains("\ncheckout "));
        assert!(
            o.stdout
                .ends_with("\n1 contract violation(s); citations were not checked. The format: `handoff-store new` prints a handoff to fill in; docs/guide.md explains it.\n")
        );
        assert_eq!(o.code, 2);
    }
}

#[test]
fn branch_mismatch_warns_and_detached_heads_compare_short_shas() {
    let env = TestEnv::new();
    let shop = env.shop("shop", "main");
    let s = shop.to_string_lossy();
    let o = gate(&env, &canonical(&s, "feature/other"));
    assert!(o.stdout.contains("WARN     handoff declares branch feature/other but this checkout is on main — citations resolve against main\n"));
    assert_eq!(o.code, 0);
    let short = env.git(&shop, &["rev-parse", "--short", "HEAD"]);
    env.git(&shop, &["checkout", "-q", "--detach"]);
    let o = gate(&env, &canonical(&s, &short));
    assert!(
        o.stdout.contains(&format!("(HEAD {short})")),
        "{}",
        o.stdout
    );
    assert!(!o.stdout.contains("WARN"), "{}", o.stdout);
    let o = gate(&env, &canonical(&s, "HEAD"));
    assert!(o.stdout.contains(&format!("this checkout is on {short}")));
    let o = gate(&env, &canonical(&s, ""));
    assert!(!o.stdout.contains("declares branch"));
}

#[test]
fn linked_worktrees_and_branches_with_slashes_are_their_own_checkouts() {
    let env = TestEnv::new();
    let shop = env.shop("shop", "main");
    env.git(
        &shop,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "feat/x",
            &env.path("wt").to_string_lossy(),
        ],
    );
    let wt = env.path("wt");
    let o = gate(&env, &canonical(&wt.to_string_lossy(), "feat/x"));
    assert!(
        o.stdout.contains(&format!(
            "checkout {} (HEAD feat/x) [from checkout: header]",
            wt.display()
        )),
        "{}",
        o.stdout
    );
    assert_eq!(o.code, 0);
}

#[test]
fn git_environment_variables_do_not_redirect_the_gate() {
    let env = TestEnv::new();
    let shop = env.shop("shop", "main");
    let other = env.repo("other", "elsewhere", &[]);
    let file = env.write("h.md", canonical(&shop.to_string_lossy(), "main"));
    let o = run(env
        .verify()
        .arg(&file)
        .env("GIT_DIR", other.join(".git"))
        .env("GIT_WORK_TREE", &other));
    assert!(
        o.stdout
            .contains(&format!("checkout {} (HEAD main)", shop.display())),
        "{}",
        o.stdout
    );
    assert_eq!(o.code, 0);
}

#[test]
fn the_gate_spawns_no_process() {
    let env = TestEnv::new();
    let shop = env.shop("shop", "main");
    let file = env.write("h.md", canonical(&shop.to_string_lossy(), "main"));
    let o = run(env.verify().arg(&file).env("PATH", ""));
    assert_eq!(o.code, 0, "{}", o.stderr);
}

#[test]
fn json_report_has_every_key_in_order_and_the_same_exit_code() {
    let env = TestEnv::new();
    let shop = env.shop("shop", "feature/typed-mail");
    let file = env.write(
        "shop.md",
        canonical(&shop.to_string_lossy(), "feature/typed-mail"),
    );
    let (code, v) = json(env.verify().arg(&file).args(["--format", "json"]));
    assert_eq!(code, 0);
    let keys: Vec<&str> = v
        .as_object()
        .map(|o| o.keys().map(String::as_str).collect())
        .unwrap_or_default();
    assert_eq!(
        keys,
        [
            "schema_version",
            "mode",
            "input",
            "exit_code",
            "verdict",
            "input_error",
            "counts",
            "diagnostics",
            "size",
            "checkout",
            "citations"
        ]
    );
    assert_eq!(v["mode"], "gate");
    assert_eq!(v["verdict"], "ok");
    assert_eq!(v["size"]["target_tokens"], 4000);
    assert_eq!(v["size"]["chars_per_token_x100"], 268);
    assert_eq!(v["checkout"]["origin"], "header");
    assert_eq!(v["checkout"]["branch_matches"], true);
    assert_eq!(v["citations"]["prefixes"], serde_json::json!(["", "app/"]));
    assert_eq!(v["citations"]["search_roots"], serde_json::json!(["app"]));
    assert_eq!(v["citations"]["includes_top_level_files"], true);
    let e = &v["citations"]["entries"][0];
    let entry_keys: Vec<&str> = e
        .as_object()
        .map(|o| o.keys().map(String::as_str).collect())
        .unwrap_or_default();
    assert_eq!(
        entry_keys,
        [
            "line",
            "raw",
            "display",
            "citation",
            "lineref",
            "fragment",
            "kind",
            "verdict",
            "reason",
            "resolved",
            "also_resolves_to",
            "line_count",
            "found_at_line",
            "followed",
            "now",
            "message"
        ]
    );
    assert_eq!(e["line"], 25);
    assert_eq!(e["line_count"], 40);
    assert_eq!(e["reason"], "contains");

    let doc = canonical(&shop.to_string_lossy(), "main").replace("### Traps", "### Gotchas");
    let (code, v) = json(
        env.verify()
            .arg(env.write("bad.md", doc))
            .arg("--format=json"),
    );
    assert_eq!(code, 2);
    assert_eq!(v["verdict"], "malformed");
    assert_eq!(v["citations"], serde_json::Value::Null);
    assert_eq!(v["diagnostics"][0]["code"], "section_missing");
    assert_eq!(v["diagnostics"][0]["subject"], "Traps");
    assert_eq!(
        v["diagnostics"][0]["message"],
        "required section missing: Traps"
    );
    assert_eq!(v["diagnostics"][1]["code"], "branch_mismatch");
    assert_eq!(v["diagnostics"][1]["line"], 2);
    assert_eq!(
        v["counts"],
        serde_json::json!({"errors": 1, "fails": 0, "warns": 1})
    );
}

#[test]
fn the_shipped_example_passes_against_this_repository() {
    let env = TestEnv::new();
    let example =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("contrib/examples/handoff.md");
    let o = run(env.verify().arg(&example));
    assert_eq!(o.code, 0, "{}{}", o.stdout, o.stderr);
    assert!(o.stdout.ends_with("citations resolve.\n"));
}

/// Up to three Pointers entries that no prose refers to get a WARN each; from four on, one
/// WARN line gives their count (docs/compatibility.md).
#[test]
fn unreferenced_pointers_past_three_are_one_summary_line() {
    let env = TestEnv::new();
    let repo = env.repo("dead", "main", &[("f.txt", "a\nb\nc\nd\ne\n")]);
    let handoff = |n: usize| {
        let pointers: String = (1..=n)
            .map(|i| format!("f.txt:{i} | {}\n", ["a", "b", "c", "d", "e"][i - 1]))
            .collect();
        format!(
            "# Handoff — dead\nbranch: main\ncheckout: {}\nstatus: s\n\n## Do not re-derive\n\n### Decisions\n- none cited\n\n### Dead ends\n- None.\n\n### Traps\n- None.\n\n## Next\n1. go\n\n## Pointers\n```text\n{pointers}```\n",
            repo.display()
        )
    };
    let warns = |n: usize| {
        let file = env.write(&format!("dead-{n}.md"), handoff(n));
        let o = run(env.verify().arg(&file));
        assert_eq!(o.code, 0, "{}{}", o.stdout, o.stderr);
        o.stdout
            .lines()
            .filter(|l| l.starts_with("WARN") && l.contains("Pointers"))
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    assert_eq!(warns(3).len(), 3, "{:?}", warns(3));
    assert_eq!(
        warns(5),
        ["WARN     5 entries in Pointers are not referred to in the prose (the first: f.txt:1)"]
    );
}
