//! Output like the tools people like: colour only for a person at a terminal (`--color`,
//! `NO_COLOR`), never in JSON, a pipe or what a hook hands its client.

use std::path::Path;

use crate::util::{TestEnv, canonical, run};

const ESC: char = '\u{1b}';

/// `bin args…` run on a pseudo-terminal (util-linux `script`), with `env` set; what it printed.
fn on_a_terminal(env: &TestEnv, bin: &str, args: &[&str], vars: &[(&str, &str)]) -> String {
    let program = assert_cmd::cargo::cargo_bin(bin);
    let line: Vec<String> = std::iter::once(program.to_string_lossy().into_owned())
        .chain(args.iter().map(|a| a.to_string()))
        .map(|w| format!("'{}'", w.replace('\'', r"'\''")))
        .collect();
    let mut c = env.std_cmd(
        Path::new("script"),
        &[
            "-qec".as_ref(),
            line.join(" ").as_ref(),
            "/dev/null".as_ref(),
        ],
    );
    c.env("HANDOFF_STORE_DIR", env.store_dir())
        .env("TERM", "xterm")
        .env_remove("NO_COLOR");
    for (k, v) in vars {
        c.env(k, v);
    }
    let out = c
        .output()
        .unwrap_or_else(|e| panic!("util-linux `script` gives these tests a terminal: {e}"));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn colour_only_for_a_person_at_a_terminal() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    let doc = canonical(&repo.to_string_lossy(), "main");
    let file = env.write("h.md", &doc);
    let file = file.to_string_lossy().into_owned();
    let repo_s = repo.to_string_lossy().into_owned();

    // A terminal: coloured, unless NO_COLOR or --color never; --color always beats NO_COLOR.
    let verify = |args: &[&str], vars: &[(&str, &str)]| {
        let mut all = vec![file.as_str()];
        all.extend_from_slice(args);
        on_a_terminal(&env, "verify-handoff", &all, vars)
    };
    let coloured = verify(&[], &[]);
    assert!(
        coloured.contains(&format!("{ESC}[")) && coloured.contains("OK"),
        "{coloured:?}"
    );
    let no_color = verify(&[], &[("NO_COLOR", "1")]);
    assert!(
        no_color.contains("OK") && !no_color.contains(ESC),
        "{no_color:?}"
    );
    let dumb = verify(&[], &[("TERM", "dumb")]);
    assert!(dumb.contains("OK") && !dumb.contains(ESC), "{dumb:?}");
    let never = verify(&["--color", "never"], &[]);
    assert!(never.contains("OK") && !never.contains(ESC), "{never:?}");
    assert!(verify(&["--color=always"], &[("NO_COLOR", "1")]).contains(ESC));
    // JSON is never coloured, not even on a terminal.
    assert!(!verify(&["--json"], &[]).contains(ESC));
    let status = on_a_terminal(
        &env,
        "handoff-store",
        &["status", "--all", "-C", &repo_s],
        &[],
    );
    assert!(status.contains(ESC), "{status:?}");

    // A pipe: plain, whatever the command.
    for args in [
        vec!["status", "--all", "-C", &repo_s],
        vec!["--help"],
        vec!["write", "--dry-run", &file, "-C", &repo_s],
    ] {
        let o = run(env.store().args(&args));
        assert!(!o.stdout.contains(ESC), "{args:?}: {}", o.stdout);
    }
    let o = run(env.verify().arg(&file));
    assert!(o.stdout.contains("OK") && !o.stdout.contains(ESC));
    // Asked for, colour reaches a pipe too, but never JSON.
    let o = run(env.verify().args([&file, "--color", "always"]));
    assert!(o.stdout.contains(ESC), "{}", o.stdout);
    let o = run(env
        .store()
        .args(["status", "--json", "--color", "always", "-C", &repo_s]));
    assert!(!o.stdout.contains(ESC), "{}", o.stdout);

    // What a hook hands its client is never coloured.
    env.stored(&repo, &doc);
    let o = run(env
        .store()
        .args(["--color", "always", "hook", "session-start"])
        .write_stdin(format!(
            r#"{{"session_id":"s","cwd":"{}","source":"clear"}}"#,
            repo.display()
        )));
    assert!(
        o.stdout.contains("GATE: OK") && !o.stdout.contains(ESC),
        "{}",
        o.stdout
    );
}

/// A man page for both binaries and each command, and completions for both, from clap.
#[test]
fn man_pages_and_completions_for_both_binaries() {
    let env = TestEnv::new();
    let o = run(env.store().arg("man"));
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stdout.contains(".TH handoff-store 1"), "{}", o.stdout);
    for command in ["write", "read", "status", "new", "man"] {
        assert!(
            o.stdout
                .contains(&format!("handoff\\-store\\-{command}(1)")),
            "{command}: {}",
            o.stdout
        );
    }
    let o = run(env.store().args(["man", "read"]));
    assert!(
        o.stdout.contains(".TH handoff-store-read 1") && o.stdout.contains("no\\-consume"),
        "{}",
        o.stdout
    );
    let o = run(env.store().args(["man", "verify-handoff"]));
    assert!(
        o.stdout.contains(".TH verify-handoff 1") && o.stdout.contains("citations"),
        "{}",
        o.stdout
    );
    let o = run(env.store().args(["man", "no-such-page"]));
    assert_eq!(o.code, 2);
    assert!(
        o.stderr
            .contains("no man page named \"no-such-page\"\nhint: "),
        "{}",
        o.stderr
    );
    let o = run(env.store().args(["man", "--json"]));
    assert_eq!(o.code, 2, "nothing to format: {}", o.stderr);

    let o = run(env.store().args(["completions", "bash", "verify-handoff"]));
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stdout.contains("verify-handoff") && o.stdout.contains("--citations"));
    assert!(!o.stdout.contains("set-progress"), "not handoff-store's");
    let o = run(env.store().args(["completions", "zsh"]));
    assert!(o.stdout.contains("#compdef handoff-store") && o.stdout.contains("set-progress"));
}

/// A failure in JSON carries the hint its text form gives (and none when the text has none).
#[test]
fn json_errors_carry_the_texts_hint() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    let outside = env.path("outside");
    std::fs::create_dir_all(&outside).expect("outside");
    let cases: [(&Path, &[&str]); 6] = [
        (&repo, &["push"]),
        (&repo, &["write"]),
        (&repo, &["read"]),
        (&outside, &["read"]),
        (&repo, &["set-progress", "/etc/hostname", "complete"]),
        (&repo, &["restore", "-n", "9"]),
    ];
    let mut hinted = 0;
    for (dir, args) in cases {
        let text = run(env.store().args(args).current_dir(dir).write_stdin(""));
        let json = run(env
            .store()
            .args(args)
            .arg("--json")
            .current_dir(dir)
            .write_stdin(""));
        assert_ne!(text.code, 0, "{args:?} fails");
        assert_eq!(json.code, text.code, "{args:?}");
        let v: serde_json::Value = serde_json::from_str(&json.stdout)
            .unwrap_or_else(|_| panic!("{args:?}: one JSON object: {}", json.stdout));
        let said = text
            .stderr
            .lines()
            .find_map(|l| l.strip_prefix("hint: "))
            .map(str::to_string);
        hinted += usize::from(said.is_some());
        assert_eq!(
            v["error"]["hint"].as_str().map(str::to_string),
            said,
            "{args:?}: {}",
            json.stdout
        );
    }
    assert!(hinted >= 2, "the table holds errors with hints");
}
