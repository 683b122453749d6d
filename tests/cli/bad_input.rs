//! Bad input and the command line (docs/gate.md §2.1, §2.2, §5): each row ends with its stated
//! message and exit code, and nothing panics.

use crate::util::{TestEnv, canonical, json, run};

fn input_error(env: &TestEnv, file: &std::path::Path, expected: &str) {
    let o = run(env.verify().arg(file));
    assert_eq!(o.stderr, format!("verify-handoff: {expected}\n"));
    assert_eq!(o.stdout, "");
    assert_eq!(o.code, 2);
    let o = run(env.verify().args(["--citations"]).arg(file));
    if !expected.ends_with("is empty") {
        assert_eq!(
            o.stderr,
            format!("verify-handoff: {expected}\n"),
            "citations mode"
        );
        assert_eq!(o.code, 2);
    }
}

#[test]
fn unreadable_inputs_exit_2_with_a_clear_message() {
    let env = TestEnv::new();
    let missing = env.path("nope.md");
    input_error(
        &env,
        &missing,
        &format!(
            "cannot read {}: no such file or directory",
            missing.display()
        ),
    );
    let dir = env.path("home");
    input_error(
        &env,
        &dir,
        &format!("cannot read {}: is a directory", dir.display()),
    );
    let empty = env.write("empty.md", "");
    input_error(&env, &empty, &format!("{} is empty", empty.display()));
    let nul = env.write("nul.md", "# Handoff\n\nab\0c\n");
    input_error(
        &env,
        &nul,
        &format!(
            "{} contains a NUL byte on line 3 — not a text file",
            nul.display()
        ),
    );
    let bad = env.write("bad.md", b"# Handoff\n\xC3\x28\n");
    input_error(
        &env,
        &bad,
        &format!("{} is not valid UTF-8 (line 2)", bad.display()),
    );
}

#[test]
fn size_limit_is_exactly_four_mebibytes() {
    let env = TestEnv::new();
    let limit = 4 * 1024 * 1024;
    let big = env.write("big.md", vec![b'a'; limit + 1]);
    input_error(
        &env,
        &big,
        &format!("{} is too large (over 4194304 bytes)", big.display()),
    );
    let exact = env.write("exact.md", vec![b'a'; limit]);
    let o = run(env.verify().arg(&exact));
    assert!(!o.stderr.contains("too large"));
    assert!(
        o.stderr.contains("first heading is not"),
        "a whitespace-free blob is gated normally"
    );
}

#[test]
fn whitespace_only_is_not_empty() {
    let env = TestEnv::new();
    let o = run(env.verify().arg(env.write("ws.md", "  \n\n")));
    assert!(o.stderr.contains("ERROR    first heading is not"));
    assert!(
        o.stderr
            .contains("ERROR    required section missing: Pointers")
    );
    assert_eq!(o.code, 2);
}

#[test]
fn empty_citation_input_is_zero_citations() {
    let env = TestEnv::new();
    let repo = env.repo("r", "main", &[]);
    let o = run(env
        .verify()
        .arg("--citations")
        .arg(env.write("e.txt", ""))
        .current_dir(&repo));
    assert_eq!(o.stdout, "\nAll 0 citations resolve.\n");
    assert_eq!(o.code, 0);
}

#[test]
fn crlf_documents_behave_like_lf() {
    let env = TestEnv::new();
    let shop = env.shop("shop", "main");
    let doc = canonical(&shop.to_string_lossy(), "main");
    let lf = run(env.verify().arg(env.write("lf.md", &doc)));
    let crlf = run(env
        .verify()
        .arg(env.write("crlf.md", doc.replace('\n', "\r\n"))));
    assert_eq!(lf.stdout, crlf.stdout);
    assert_eq!(lf.code, 0);
    assert_eq!(crlf.code, 0);
}

#[test]
fn json_reports_input_errors() {
    let env = TestEnv::new();
    let nul = env.write("nul.md", "x\0");
    let (code, v) = json(env.verify().arg(&nul).args(["--format", "json"]));
    assert_eq!(code, 2);
    assert_eq!(v["input_error"]["kind"], "nul_byte");
    assert_eq!(v["input_error"]["line"], 1);
    assert_eq!(
        v["input_error"]["message"],
        format!(
            "{} contains a NUL byte on line 1 — not a text file",
            nul.display()
        )
    );
    assert_eq!(v["verdict"], "malformed");
    assert_eq!(v["size"], serde_json::Value::Null);
    assert_eq!(v["diagnostics"], serde_json::json!([]));
    let o = run(env.verify().arg(&nul).args(["--format", "json"]));
    assert_eq!(o.stderr, "", "JSON mode writes nothing to stderr");
    let (_, v) = json(
        env.verify()
            .args(["--citations", "--format", "json"])
            .write_stdin("\u{0}"),
    );
    assert_eq!(
        v["input_error"]["message"],
        "(stdin) contains a NUL byte on line 1 — not a text file"
    );
}

#[test]
fn usage_errors_exit_2_and_help_exits_0() {
    let env = TestEnv::new();
    let file = env.write("h.md", "# Handoff\n");
    let bad: [&[&str]; 6] = [
        &[],
        &[""],
        &["--bogus", "h.md"],
        &["h.md", "a", "b"],
        &["h.md", "y", "--checkout", "x"],
        &["h.md", "--format", "yaml"],
    ];
    for args in bad {
        let o = run(env.verify().args(args));
        assert_eq!(o.code, 2, "{args:?}");
        assert_eq!(o.stdout, "", "{args:?}");
        assert!(o.stderr.starts_with("error:"), "{args:?}: {}", o.stderr);
    }
    assert!(file.exists());
    let o = run(env.verify().arg("--help"));
    assert_eq!(o.code, 0);
    assert_eq!(
        o.stdout.lines().next(),
        Some("Check a handoff file against the format contract, then verify its citations.")
    );
    assert!(
        o.stdout
            .contains("verify-handoff <FILE> [CHECKOUT] [--format text|json]")
    );
    assert!(
        o.stdout
            .contains("verify-handoff --citations [FILE|-] [--checkout DIR] [--format text|json]")
    );
    let o = run(env.verify().arg("-V"));
    assert_eq!(
        o.stdout,
        format!("verify-handoff {}\n", env!("CARGO_PKG_VERSION"))
    );
    assert_eq!(o.code, 0);
}

#[test]
fn a_process_substitution_can_be_gated() {
    let env = TestEnv::new();
    let shop = env.shop("shop", "main");
    let file = env.write("h.md", canonical(&shop.to_string_lossy(), "main"));
    let bin = assert_cmd::cargo::cargo_bin("verify-handoff");
    let o = run(assert_cmd::Command::new("bash").arg("-c").arg(format!(
        "'{}' <(cat '{}') '{}'",
        bin.display(),
        file.display(),
        shop.display()
    )));
    assert_eq!(o.code, 0, "{}{}", o.stdout, o.stderr);
}

#[test]
fn a_closed_stdout_is_quiet_and_keeps_the_exit_code() {
    let env = TestEnv::new();
    let shop = env.shop("shop", "main");
    let file = env.write("h.md", canonical(&shop.to_string_lossy(), "main"));
    let bin = assert_cmd::cargo::cargo_bin("verify-handoff");
    let o = run(assert_cmd::Command::new("bash").arg("-c").arg(format!(
        "set -o pipefail; '{}' '{}' | head -c 0; echo \"rc=${{PIPESTATUS[0]}}\"",
        bin.display(),
        file.display()
    )));
    assert!(o.stdout.contains("rc=0"), "{}", o.stdout);
    assert_eq!(o.stderr, "");
}

#[test]
#[ignore = "needs root"]
fn an_unreadable_file_is_permission_denied() {
    use std::os::unix::fs::PermissionsExt;
    let env = TestEnv::new();
    let dir = env.shared_dir();
    let file = dir.join("private.md");
    std::fs::write(&file, "# Handoff\n").expect("write");
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    let o = crate::util::as_user(65534, "verify-handoff", &[file.as_os_str()], &[]);
    assert_eq!(
        o.stderr,
        format!(
            "verify-handoff: cannot read {}: permission denied\n",
            file.display()
        )
    );
    assert_eq!((o.code, o.stdout.as_str()), (2, ""));
}

#[test]
#[ignore = "needs root"]
fn tilde_without_any_home_is_an_error() {
    use std::os::unix::fs::PermissionsExt;
    let env = TestEnv::new();
    let dir = env.shared_dir();
    let file = dir.join("h.md");
    std::fs::write(&file, canonical("~", "main")).expect("write");
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    // uid 54321 has no passwd entry, and HOME is unset: no home directory is known.
    let o = crate::util::as_user(54321, "verify-handoff", &[file.as_os_str()], &[]);
    assert!(
        o.stderr
            .contains("ERROR    checkout: starts with ~ but no home directory is known\n"),
        "{}",
        o.stderr
    );
    // It falls back to the working directory, `/`, which is no checkout.
    assert!(
        o.stderr
            .contains("ERROR    checkout / is not inside a git repository\n"),
        "{}",
        o.stderr
    );
    assert!(
        o.stdout
            .ends_with("2 contract violation(s); citations were not checked. The format: `handoff-store new` prints a handoff to fill in; docs/guide.md explains it.\n")
    );
    assert_eq!(o.code, 2);
}
