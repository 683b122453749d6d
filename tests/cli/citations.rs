//! The resolver (docs/gate.md §3), mostly through `verify-handoff --citations`: every verdict row,
//! confinement, the layout, the one-pass symbol search, summaries and the input guard.

use crate::util::{TestEnv, json, run};

/// A repository with a little of everything the verdict table needs.
fn fixture(env: &TestEnv) -> std::path::PathBuf {
    let long: String = (1..=1000)
        .map(|i| {
            if i == 700 {
                "needle here\n".to_string()
            } else {
                format!("line {i}\n")
            }
        })
        .collect();
    let repo = env.repo(
        "r",
        "main",
        &[
            (
                "src/lib.rs",
                "fn a() {}\nlet x = `quoted`;\r\nstruct FooBar;\nlast line no newline",
            ),
            ("src/empty.rs", ""),
            ("src/newlines.txt", "\n\n\n"),
            ("src/long.txt", &long),
            ("app/Models/User.php", "<?php\nclass User {}\n"),
            ("tools/App/Events.txt", "namespace App\\Events;\n"),
            ("docs/guide.txt", "SymbolOnlyInDocs\n"),
            ("Makefile", "build: TopLevelTarget\n"),
            ("README.md", "SymbolOnlyInReadme\n"),
        ],
    );
    let mut bin = b"head\0".to_vec();
    bin.extend_from_slice(b"\nmore\n");
    env.write("r/src/blob.bin", bin);
    repo
}

fn cite(env: &TestEnv, repo: &std::path::Path, input: &str) -> crate::util::Outcome {
    run(env
        .verify()
        .args(["--citations", "-", "--checkout"])
        .arg(repo)
        .write_stdin(input.to_string()))
}

fn line_for(out: &str, display: &str) -> String {
    out.lines()
        .find(|l| {
            l.get(9..).is_some_and(|rest| {
                rest.starts_with(&format!("{display} ")) || rest.starts_with(&format!("{display}→"))
            })
        })
        .unwrap_or_else(|| panic!("no line for {display} in:\n{out}"))
        .to_string()
}

fn verdict(env: &TestEnv, repo: &std::path::Path, citation: &str) -> String {
    let o = cite(env, repo, citation);
    o.stdout.lines().next().unwrap_or("").to_string()
}

#[test]
fn every_verdict_row_has_its_text() {
    let env = TestEnv::new();
    let r = fixture(&env);
    let cases = [
        ("src/", "OK       src/", "→ src/"),
        (
            "src/blob.bin:1 | head",
            "OK       src/blob.bin:1",
            "→ src/blob.bin (not a text file; no line checked)",
        ),
        (
            "src/lib.rs:3-2 | FooBar",
            "CHANGED  src/lib.rs:3-2",
            "→ src/lib.rs:3-2 is an empty range: 3-2 ends before it starts (found at line 3)",
        ),
        (
            "src/lib.rs:0",
            "CHANGED  src/lib.rs:0",
            "→ src/lib.rs has no line 0; lines are numbered from 1",
        ),
        (
            "src/lib.rs:5",
            "CHANGED  src/lib.rs:5",
            "→ src/lib.rs has 4 lines; line 5 does not exist",
        ),
        (
            "src/lib.rs:4",
            "OK       src/lib.rs:4",
            "→ src/lib.rs (line 4 exists; content not given)",
        ),
        ("src/lib.rs", "OK       src/lib.rs", "→ src/lib.rs"),
        (
            "src/lib.rs:2 | let x = quoted;",
            "OK       src/lib.rs:2",
            "→ src/lib.rs:2 contains the cited content",
        ),
        (
            "src/lib.rs:1 | struct FooBar",
            "CHANGED  src/lib.rs:1",
            "→ src/lib.rs:1 no longer contains: struct FooBar (found at line 3)",
        ),
        (
            "src/lib.rs:1 | nowhere",
            "CHANGED  src/lib.rs:1",
            "→ src/lib.rs:1 no longer contains: nowhere",
        ),
        (
            "src/lib.rs | struct FooBar",
            "OK       src/lib.rs",
            "→ src/lib.rs contains the cited content",
        ),
        (
            "src/lib.rs | nowhere",
            "CHANGED  src/lib.rs",
            "→ src/lib.rs no longer contains: nowhere",
        ),
        (
            "src/empty.rs:1",
            "CHANGED  src/empty.rs:1",
            "→ src/empty.rs has 0 lines; line 1 does not exist",
        ),
        (
            "src/newlines.txt:3",
            "OK       src/newlines.txt:3",
            "→ src/newlines.txt (line 3 exists; content not given)",
        ),
        (
            "src/long.txt:1-1000 | needle here",
            "OK       src/long.txt:1-1000",
            "contains the cited content",
        ),
        (
            "src/gone.rs",
            "MISSING  src/gone.rs",
            "→ no such file or directory",
        ),
        ("main.c", "MISSING  main.c", "→ no such file or directory"),
        ("FooBar", "OK       FooBar", "→ symbol found in source"),
        (
            "Nowhere",
            "MISSING  Nowhere",
            "→ symbol not found in source",
        ),
    ];
    for (input, start, end) in cases {
        let line = verdict(&env, &r, input);
        assert!(
            line.starts_with(start) && line.ends_with(end),
            "{input}: {line}"
        );
    }
}

#[test]
fn huge_line_numbers_neither_overflow_nor_expand() {
    let env = TestEnv::new();
    let r = fixture(&env);
    let line = verdict(&env, &r, "src/lib.rs:1-99999999999999999999");
    assert!(
        line.ends_with("→ src/lib.rs has 4 lines; line 99999999999999999999 does not exist"),
        "{line}"
    );
    let line = verdict(&env, &r, "src/lib.rs:4000000000");
    assert!(line.ends_with("line 4000000000 does not exist"), "{line}");
    let line = verdict(&env, &r, "src/lib.rs:0004");
    assert!(
        line.ends_with("(line 0004 exists; content not given)"),
        "{line}"
    );
}

#[test]
fn nothing_outside_the_checkout_is_opened() {
    let env = TestEnv::new();
    let r = fixture(&env);
    env.write("secret.txt", "top secret\n");
    std::os::unix::fs::symlink(env.path("secret.txt"), r.join("src/escape.txt")).expect("symlink");
    for c in [
        "../secret.txt | top secret",
        "/etc/passwd",
        "src/escape.txt | top secret",
        "src/../../secret.txt",
        "C:/x.php",
        "\\x.php",
    ] {
        let line = verdict(&env, &r, c);
        assert!(
            line.starts_with("MISSING") && line.ends_with("→ outside the checkout; not followed"),
            "{c}: {line}"
        );
    }
    // A symlink that stays inside is followed.
    std::os::unix::fs::symlink(r.join("src/lib.rs"), r.join("src/alias.rs")).expect("symlink");
    assert!(verdict(&env, &r, "src/alias.rs | FooBar").starts_with("OK"));
}

#[test]
fn a_fifo_is_never_opened() {
    let env = TestEnv::new();
    let r = fixture(&env);
    let status = std::process::Command::new("mkfifo")
        .arg(r.join("src/pipe"))
        .status()
        .expect("mkfifo");
    assert!(status.success());
    let line = verdict(&env, &r, "src/pipe:3 | x");
    assert!(
        line.ends_with("→ src/pipe (not a regular file; nothing read)"),
        "{line}"
    );
}

#[test]
fn prefixes_resolve_short_paths_and_report_further_matches() {
    let env = TestEnv::new();
    let r = fixture(&env);
    env.write("r/Models/User.php", "shadow\n");
    env.git(&r, &["add", "-A"]);
    // The root prefix comes first: the shadow at the root is the target, app/ a further match.
    let o = cite(&env, &r, "Models/User.php | class User\n");
    assert!(
        o.stdout.starts_with("CHANGED  Models/User.php"),
        "{}",
        o.stdout
    );
    assert!(
        o.stdout.contains(&format!(
            "\n{}also resolves to app/Models/User.php\n",
            " ".repeat(70)
        )),
        "{}",
        o.stdout
    );
    std::fs::remove_file(r.join("Models/User.php")).expect("rm");
    let o = cite(&env, &r, "Models/User.php | class User\n");
    assert!(
        o.stdout
            .contains("→ app/Models/User.php contains the cited content\n"),
        "{}",
        o.stdout
    );
    let o = cite(&env, &r, "Models/User.php\nUser.php\n");
    assert!(o.stdout.contains("MISSING  User.php"), "{}", o.stdout);
    let o = run(env
        .verify()
        .args(["--citations", "-", "--checkout"])
        .arg(&r)
        .env("VERIFY_CITATIONS_PREFIXES", "app/Models/")
        .write_stdin("User.php\n"));
    assert!(o.stdout.starts_with("OK       User.php"), "{}", o.stdout);
}

#[test]
fn symbols_are_found_in_one_overlapping_pass_with_the_exclusions() {
    let env = TestEnv::new();
    let r = fixture(&env);
    env.write("r/src/node_modules/dep.js", "InNodeModules\n");
    env.write("r/app/vendor/lib.php", "InVendor\n");
    env.write("r/src/notes.md", "InMarkdown\n");
    env.git(&r, &["add", "-A"]);
    let o = cite(
        &env,
        &r,
        "Foo\nFooBar\nApp\\Events\nTopLevelTarget\nSymbolOnlyInDocs\nSymbolOnlyInReadme\nInNodeModules\nInVendor\nInMarkdown\n",
    );
    for found in ["Foo", "FooBar", "App\\Events", "TopLevelTarget"] {
        assert!(
            line_for(&o.stdout, found).starts_with("OK"),
            "{found}: {}",
            o.stdout
        );
    }
    for missing in [
        "SymbolOnlyInDocs",
        "SymbolOnlyInReadme",
        "InNodeModules",
        "InVendor",
        "InMarkdown",
    ] {
        assert!(
            line_for(&o.stdout, missing).starts_with("MISSING"),
            "{missing}: {}",
            o.stdout
        );
    }
    assert!(o.stdout.contains("\nsymbol search roots: app src tools (top-level files)\n5 of 9 citations do not resolve.\n"), "{}", o.stdout);
    assert_eq!(o.code, 1);
    let o = run(env
        .verify()
        .args(["--citations", "-", "--checkout"])
        .arg(&r)
        .env("VERIFY_CITATIONS_SEARCH_ROOTS", "docs ../x /etc")
        .write_stdin("SymbolOnlyInDocs\nTopLevelTarget\n"));
    assert!(line_for(&o.stdout, "SymbolOnlyInDocs").starts_with("OK"));
    assert!(line_for(&o.stdout, "TopLevelTarget").starts_with("MISSING"));
    assert!(
        o.stdout.contains("symbol search roots: docs\n"),
        "{}",
        o.stdout
    );
    let empty = env.repo("empty", "main", &[]);
    let o = cite(&env, &empty, "Anything\n");
    assert!(
        o.stdout.contains("symbol search roots: (none)\n"),
        "{}",
        o.stdout
    );
}

#[test]
fn summaries_count_every_line_and_set_the_exit_code() {
    let env = TestEnv::new();
    let r = fixture(&env);
    let o = cite(&env, &r, "# comment\n\nsrc/lib.rs\nsrc/lib.rs\n");
    assert!(o.stdout.ends_with("\nAll 2 citations resolve.\n"));
    assert_eq!(o.code, 0);
    let o = cite(&env, &r, "src/gone.rs\nsrc/lib.rs:9\nsrc/lib.rs\n");
    assert!(o.stdout.ends_with("\n1 of 3 citations do not resolve.\n1 of 3 citations resolve but no longer say what they were cited for.\n"), "{}", o.stdout);
    assert_eq!(o.code, 1);
    let o = cite(&env, &r, "");
    assert_eq!(o.stdout, "\nAll 0 citations resolve.\n");
    assert_eq!(o.code, 0);
}

#[test]
fn prose_piped_in_is_refused_before_resolving() {
    let env = TestEnv::new();
    let r = fixture(&env);
    let o = cite(
        &env,
        &r,
        "This is a paragraph\nof prose that was\npiped in by mistake\nand should not resolve\nsrc/lib.rs\n",
    );
    assert_eq!(o.stdout, "");
    assert!(o.stderr.starts_with("ERROR: this does not look like a citation list, so nothing was checked.\n\n4 of 5 input lines"), "{}", o.stderr);
    assert_eq!(o.code, 2);
    let o = cite(&env, &r, "a b\nc d\nsrc/lib.rs\n");
    assert!(
        o.stdout.contains("MISSING  a b"),
        "fewer than five lines are resolved: {}",
        o.stdout
    );
}

#[test]
fn citations_read_a_file_or_stdin_against_the_working_directory() {
    let env = TestEnv::new();
    let r = fixture(&env);
    let list = env.write("list.txt", "src/lib.rs\n");
    let o = run(env
        .verify()
        .args(["--citations"])
        .arg(&list)
        .current_dir(r.join("src")));
    assert_eq!(o.code, 0, "{}{}", o.stdout, o.stderr);
    let o = run(env
        .verify()
        .arg("--citations")
        .current_dir(&r)
        .write_stdin("src/lib.rs\n"));
    assert_eq!(o.code, 0);
    let o = run(env
        .verify()
        .arg("--citations")
        .current_dir(env.root())
        .write_stdin("src/lib.rs\n"));
    assert_eq!(
        o.stderr,
        format!(
            "ERROR    checkout {} is not inside a git repository\n",
            env.root().display()
        )
    );
    assert_eq!(o.stdout, "");
    assert_eq!(o.code, 2);
}

#[test]
fn citations_json_has_the_resolution_and_no_size() {
    let env = TestEnv::new();
    let r = fixture(&env);
    let (code, v) = json(
        env.verify()
            .args(["--citations", "-", "--format", "json", "--checkout"])
            .arg(&r)
            .write_stdin("src/lib.rs:1 | struct FooBar\nFooBar\n"),
    );
    assert_eq!(code, 1);
    assert_eq!(v["mode"], "citations");
    assert_eq!(v["input"], "-");
    assert_eq!(v["size"], serde_json::Value::Null);
    assert_eq!(v["checkout"]["origin"], "argument");
    assert_eq!(v["checkout"]["header"], serde_json::Value::Null);
    assert_eq!(v["checkout"]["branch_matches"], serde_json::Value::Null);
    let e = &v["citations"]["entries"];
    assert_eq!(e[0]["verdict"], "changed");
    assert_eq!(e[0]["reason"], "not_contained");
    assert_eq!(e[0]["found_at_line"], 3);
    assert_eq!(e[0]["line_count"], 4);
    assert_eq!(e[1]["kind"], "symbol");
    assert_eq!(e[1]["reason"], "symbol_found");
    assert_eq!(e[1]["line"], 2);
    assert_eq!(v["citations"]["total"], 2);
    assert_eq!(v["citations"]["changed"], 1);
}

#[test]
fn gate_and_citations_resolve_identically() {
    let env = TestEnv::new();
    let r = fixture(&env);
    let pointers = ["src/lib.rs:1 | struct FooBar", "FooBar", "src/gone.rs"];
    let doc = crate::util::with_pointers(&r.to_string_lossy(), "main", &pointers);
    let gate = run(env.verify().arg(env.write("h.md", doc)));
    let list = run(env
        .verify()
        .args(["--citations", "-", "--checkout"])
        .arg(&r)
        .write_stdin(pointers.join("\n")));
    let tail = gate
        .stdout
        .split("\n\n")
        .skip(1)
        .collect::<Vec<_>>()
        .join("\n\n");
    assert_eq!(tail, list.stdout);
    assert_eq!(gate.code, 1);
}

/// One run remembers which `<prefix><first component>` directories are absent; the memory must
/// never hide a file: a first component absent at the root but present under a prefix, present
/// at both, reached through a symlink, or absent everywhere, all in one run, in both orders.
#[test]
fn remembered_absent_directories_never_hide_a_cited_file() {
    let env = TestEnv::new();
    let r = fixture(&env);
    env.write("r/app/Http/Kernel.php", "class Kernel {}\n");
    env.write("r/Http/Routes.php", "routes here\n");
    std::os::unix::fs::symlink("../app/Http", r.join("tools/Web")).expect("symlink");
    env.git(&r, &["add", "-A"]);
    let citations = [
        ("Nowhere/x.php | x", "MISSING  Nowhere/x.php"),
        (
            "Models/User.php | class User",
            "→ app/Models/User.php contains",
        ),
        ("Models/Missing.php | x", "MISSING  Models/Missing.php"),
        (
            "Http/Kernel.php | class Kernel",
            "→ app/Http/Kernel.php contains",
        ),
        (
            "Http/Routes.php | routes here",
            "→ Http/Routes.php contains",
        ),
        (
            "Web/Kernel.php | class Kernel",
            "→ tools/Web/Kernel.php contains",
        ),
        (
            "App/Events.txt | App\\Events",
            "→ tools/App/Events.txt contains",
        ),
    ];
    for order in [
        citations.to_vec(),
        citations.iter().rev().copied().collect::<Vec<_>>(),
    ] {
        let input: String = order.iter().map(|(c, _)| format!("{c}\n")).collect();
        let o = cite(&env, &r, &input);
        for (citation, expected) in &order {
            let path = citation.split(' ').next().unwrap_or("");
            let line = line_for(&o.stdout, path);
            assert!(line.contains(expected), "{citation}: {line}\n{}", o.stdout);
        }
    }
}
