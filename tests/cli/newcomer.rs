//! A handoff in hand. `new` prints one that passes the gate as it stands (every section,
//! one citation from the tree); filled in, it is written and read back; and `verify-handoff` and
//! `write --dry-run` give every draft the same verdict — one meaning of "valid".

use crate::util::{TestEnv, canonical, run};

#[test]
fn new_then_fill_then_write_then_read() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    let o = run(env.store().arg("new").arg(&repo));
    assert_eq!(o.code, 0, "{}", o.stderr);
    let skeleton = o.stdout;
    assert!(skeleton.starts_with("# Handoff — "), "{skeleton}");
    assert!(
        skeleton.contains("app/Mail/Invoice.php:1 | <?php"),
        "one citation from the tree: {skeleton}"
    );
    let o = run(env
        .verify()
        .arg(env.write("skeleton.md", &skeleton))
        .arg(&repo));
    assert_eq!(
        o.code, 0,
        "the skeleton passes the gate: {}{}",
        o.stdout, o.stderr
    );
    let filled = skeleton
        .replace("the task, in a few words", "type the mailables")
        .replace(
            "where the task stands, in one line",
            "Invoice typed; Reminder next.",
        )
        .replace(
            "1. The next step, concrete enough to start on.",
            "1. Type Reminder the same way.",
        );
    let o = run(env
        .store()
        .args(["write", "--checkout"])
        .arg(&repo)
        .write_stdin(filled));
    assert_eq!(o.code, 0, "{}{}", o.stdout, o.stderr);
    let o = run(env.store().arg("read").arg(&repo));
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(
        o.stdout.contains("# Handoff — type the mailables"),
        "{}",
        o.stdout
    );
    assert!(o.stdout.contains("1. Type Reminder the same way."));
}

#[test]
fn verify_and_write_dry_run_agree_on_every_draft() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    let good = canonical(&repo.to_string_lossy(), "main");
    let drafts: Vec<(&str, String)> = vec![
        ("canonical", good.clone()),
        ("no branch", good.replace("branch: main\n", "")),
        (
            "no checkout",
            good.replace(&format!("checkout: {}\n", repo.display()), ""),
        ),
        (
            "neither",
            good.replace("branch: main\n", "")
                .replace(&format!("checkout: {}\n", repo.display()), ""),
        ),
        (
            "no status",
            good.replace(
                "status: Invoice done; Reminder not started. Gate run, format held.\n",
                "",
            ),
        ),
        (
            "no title",
            good.replace("# Handoff — type the mailables", "# Notes"),
        ),
        ("no Next", good.replace("## Next", "## Later")),
        ("no Pointers", good.replace("## Pointers", "## Links")),
        ("no Decisions", good.replace("### Decisions", "### Choices")),
        (
            "a moved line",
            good.replace(
                "Invoice.php:24 | public function build",
                "Invoice.php:3 | public function build",
            ),
        ),
        (
            "a missing file",
            good.replace("app/Mail/Invoice.php:24 |", "app/Mail/Gone.php:24 |"),
        ),
        (
            "a gone fragment",
            good.replace("| public function build", "| public function send"),
        ),
        (
            "prose cites past Pointers",
            good.replace("- None.\n\n## Next", "- See composer.json:1.\n\n## Next"),
        ),
        (
            "a credential",
            good.replace(
                "- None.\n\n## Next",
                "- token=ghp_abcdefghijklmnopqrstuvwxyz0123456789\n\n## Next",
            ),
        ),
        (
            "empty checkout",
            good.replace(&format!("checkout: {}", repo.display()), "checkout:"),
        ),
        (
            "bad progress",
            good.replace("progress: complete", "progress: done"),
        ),
        (
            "an unclosed fence",
            good.trim_end().trim_end_matches("```").to_string(),
        ),
        (
            "a relative checkout",
            good.replace(&format!("checkout: {}", repo.display()), "checkout: shop"),
        ),
        (
            "another branch",
            good.replace("branch: main", "branch: other"),
        ),
        ("only a title", "# Handoff — x\n".to_string()),
    ];
    assert_eq!(drafts.len(), 20);
    for (name, draft) in drafts {
        let file = env.write(&format!("{}.md", name.replace(' ', "-")), &draft);
        let verify = run(env.verify().arg(&file).arg(&repo));
        let dry = run(env
            .store()
            .args(["write", "--dry-run", "--from"])
            .arg(&file)
            .arg("--checkout")
            .arg(&repo));
        assert_eq!(
            verify.code, dry.code,
            "{name}: verify-handoff {} vs write --dry-run {}\n{}{}\n{}{}",
            verify.code, dry.code, verify.stdout, verify.stderr, dry.stdout, dry.stderr
        );
        assert!(
            !env.store_dir().join(env.slot_name(&repo, "main")).exists(),
            "{name}: a dry run stores nothing"
        );
    }
}

/// Every JSON object a command prints carries `schema_version`, and a command that
/// fails with `--format json` prints its error as an object on stdout (the exit unchanged).
#[test]
fn every_json_object_is_versioned_and_a_failure_is_an_object_too() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    env.stored(&repo, &canonical(&repo.to_string_lossy(), "main"));
    let repo_s = repo.to_string_lossy().into_owned();
    let commands: Vec<Vec<&str>> = vec![
        vec!["orient", &repo_s],
        vec!["path", &repo_s],
        vec!["list"],
        vec!["read", "--no-consume", &repo_s],
        vec!["history", &repo_s],
        vec!["status", &repo_s],
        vec!["new", &repo_s],
        vec!["prune"],
    ];
    for args in commands {
        let o = run(env.store().args(["--format", "json"]).args(&args));
        let v: serde_json::Value = serde_json::from_str(o.stdout.trim())
            .unwrap_or_else(|e| panic!("{args:?}: not one JSON object ({e}): {}", o.stdout));
        assert_eq!(v["schema_version"], 1, "{args:?}: {}", o.stdout);
    }
    let o = run(env
        .store()
        .args(["--format", "json", "restore", "--version", "9"])
        .arg(&repo));
    assert_eq!(o.code, 4, "{}", o.stderr);
    let v: serde_json::Value = serde_json::from_str(o.stdout.trim()).expect("an error object");
    assert_eq!(v["schema_version"], 1);
    assert!(
        v["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("has no version 9")),
        "{v}"
    );
    assert!(v["error"].get("hint").is_some(), "{v}");
    let o = run(env
        .store()
        .args(["--format", "json", "push", "nowhere", "--checkout"])
        .arg(&repo));
    assert_eq!(o.code, 2, "{}", o.stderr);
    let v: serde_json::Value = serde_json::from_str(o.stdout.trim()).expect("an error object");
    assert!(
        v["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("no remote named")),
        "{v}"
    );
}

/// `--json` is `--format json`; a command that prints no result refuses a format;
/// `history` without a handoff says so.
#[test]
fn json_is_an_alias_and_format_is_refused_where_nothing_is_formatted() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    let a = run(env.store().args(["--json", "path"]).arg(&repo));
    let b = run(env.store().args(["--format", "json", "path"]).arg(&repo));
    assert_eq!((a.code, &a.stdout), (0, &b.stdout));
    let v = run(env
        .verify()
        .arg("--json")
        .arg(env.write("h.md", canonical(&repo.to_string_lossy(), "main"))));
    assert!(
        v.stdout.starts_with("{\"schema_version\":1"),
        "{}",
        v.stdout
    );
    let o = run(env
        .store()
        .args(["install", "git-hook", "--format", "json"])
        .arg(&repo));
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(o.stderr.contains("no result to format"), "{}", o.stderr);
    assert!(
        !repo.join(".git/hooks/post-checkout").exists(),
        "nothing was installed"
    );
    let o = run(env.store().arg("history").arg(&repo));
    assert_eq!(o.code, 0);
    assert!(
        o.stdout
            .starts_with("no handoff here yet, and no earlier version: "),
        "{}",
        o.stdout
    );
}

/// Every command's help ends with examples, and every argument says what it is.
#[test]
fn every_command_has_examples_and_every_argument_a_description() {
    let env = TestEnv::new();
    // Every command `--help` lists, so a new one is covered as it lands.
    let help = run(env.store().arg("--help")).stdout;
    let commands: Vec<String> = help
        .split("Commands:\n")
        .nth(1)
        .unwrap_or_default()
        .lines()
        .take_while(|l| !l.trim().is_empty())
        // A command's line; its wrapped description is indented further.
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .filter(|c| c != "help")
        .collect();
    assert!(commands.len() >= 20, "{help}");
    let o = run(env.verify().arg("--help"));
    assert!(
        o.stdout.contains("\nExamples:\n  verify-handoff "),
        "{}",
        o.stdout
    );
    for c in &commands {
        let o = run(env.store().args([c, "-h"]));
        assert_eq!(o.code, 0, "{c}");
        assert!(
            o.stdout.contains("\nExamples"),
            "{c}: no examples\n{}",
            o.stdout
        );
        let bare: Vec<&str> = o
            .stdout
            .lines()
            .filter(|l| {
                let t = l.trim();
                l.starts_with("  ")
                    && !l.starts_with("        ")
                    && (t.starts_with('-') || t.starts_with('<') || t.starts_with('['))
                    && !t.contains("  ")
                    && !t.contains("Print help")
            })
            .collect();
        assert!(
            bare.is_empty(),
            "{c}: arguments without a description: {bare:?}"
        );
    }
}

/// `status` says what this branch has and whether anything was delivered yet.
#[test]
fn status_says_what_this_branch_has_and_whether_a_delivery_happened() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    let o = run(env.store().arg("status").arg(&repo));
    assert!(
        o.stdout
            .contains("handoff  none for main yet — handoff-store new prints one to fill in"),
        "{}",
        o.stdout
    );
    assert!(o.stdout.contains("delivery none yet"), "{}", o.stdout);
    let slot = env.stored(&repo, &canonical(&repo.to_string_lossy(), "main"));
    env.age(&slot, 3 * 3600 + 60);
    let o = run(env.store().arg("status").arg(&repo));
    assert!(
        o.stdout.contains(&format!(
            "handoff  for main: complete, 3 hours ago, gate OK — {}",
            slot.display()
        )),
        "{}",
        o.stdout
    );
    let o = run(env.store().args(["status", "--json"]).arg(&repo));
    let v: serde_json::Value = serde_json::from_str(o.stdout.trim()).expect("json");
    assert_eq!(v["handoff"]["gate"], "ok", "{v}");
}

/// `install` names the next step, and warns that a project file names this machine's
/// binary.
#[test]
fn install_names_the_next_step_and_warns_about_a_committed_path() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    let o = run(env
        .store()
        .args(["install", "claude", "--project"])
        .arg(&repo));
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(
        o.stdout
            .contains("\nnext      start a new claude-code session"),
        "{}",
        o.stdout
    );
    assert!(
        o.stdout
            .contains("names this machine's handoff-store by its absolute path")
            && o.stdout
                .contains("`handoff-store install claude --project --on-path`"),
        "{}",
        o.stdout
    );

    // The form for a committed file: the command as PATH finds it.
    let o = run(env
        .store()
        .args(["install", "claude", "--project", "--on-path", "-C"])
        .arg(&repo));
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(
        o.stdout.contains("runs handoff-store as PATH finds it"),
        "{}",
        o.stdout
    );
    let settings = std::fs::read_to_string(repo.join(".claude/settings.json")).expect("settings");
    assert!(
        settings.contains("\"handoff-store hook session-start\"")
            && !settings.contains("/handoff-store hook"),
        "{settings}"
    );
    let bin_dir = assert_cmd::cargo::cargo_bin("handoff-store")
        .parent()
        .expect("bin dir")
        .to_path_buf();
    let row = |path: &str| {
        let o = run(env
            .store()
            .args(["status", "-C"])
            .arg(&repo)
            .env("PATH", path));
        crate::util::squeezed(&o.stdout)
            .lines()
            .find(|l| l.starts_with("claude-code project"))
            .map(str::to_string)
            .unwrap_or_default()
    };
    let without = row("/usr/bin:/bin");
    assert!(
        without.contains("runs=no") && without.contains("from PATH, and there is none"),
        "{without}"
    );
    let with = row(&format!("{}:/usr/bin:/bin", bin_dir.display()));
    assert!(with.contains("installed=yes runs=yes"), "{with}");
    assert!(!with.contains("npm's shim"), "{with}");
    // PATH's handoff-store is npm's shim (a Node script): status says so, and how to name the
    // binary instead.
    let shim = env.write(
        "npm/bin/handoff-store",
        "#!/usr/bin/env node\nrequire('x');\n",
    );
    crate::util::chmod_x(&shim);
    let through = row(&format!(
        "{}:/usr/bin:/bin",
        shim.parent().expect("dir").display()
    ));
    assert!(
        through.contains("npm's shim") && through.contains("without --on-path"),
        "{through}"
    );
    let o = run(env
        .store()
        .args(["uninstall", "claude", "--project", "-C"])
        .arg(&repo));
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(
        !std::fs::read_to_string(repo.join(".claude/settings.json"))
            .unwrap_or_default()
            .contains("handoff-store"),
        "uninstall finds the hooks named on PATH"
    );
}

/// `write FILE` is `write --from FILE`; `restore -n N` names the version without the
/// global `--version` (which still works); `status` honours CONTEXT_ECONOMY_CHECKOUT.
#[test]
fn write_takes_a_file_restore_takes_n_and_status_the_environment() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    let file = env.write("h.md", canonical(&repo.to_string_lossy(), "main"));
    let o = run(env
        .store()
        .arg("write")
        .arg(&file)
        .arg("--checkout")
        .arg(&repo));
    assert_eq!(o.code, 0, "{}", o.stderr);
    let second = env.write(
        "h2.md",
        canonical(&repo.to_string_lossy(), "main").replace("Gate run, format held.", "Later."),
    );
    let o = run(env
        .store()
        .arg("write")
        .arg(&second)
        .arg("--checkout")
        .arg(&repo));
    assert_eq!(o.code, 0, "{}", o.stderr);
    let o = run(env.store().args(["restore", "-n", "1"]).arg(&repo));
    assert_eq!(o.code, 0, "{}", o.stderr);
    let o = run(env.store().args(["restore", "--version", "1"]).arg(&repo));
    assert_eq!(o.code, 0, "--version still works: {}", o.stderr);
    let o = run(env
        .store()
        .arg("status")
        .env("CONTEXT_ECONOMY_CHECKOUT", &repo)
        .current_dir(env.root()));
    assert!(o.stdout.contains("handoff  for main: "), "{}", o.stdout);
}

/// One way to name the checkout: `-C DIR` / `--checkout DIR` on every command that works on
/// one, from anywhere, giving what the command gives inside the checkout; the positional DIR
/// older scripts use still works where it did.
#[test]
fn every_command_names_the_checkout_with_dash_c() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    let doc = canonical(&repo.to_string_lossy(), "main");
    let slot = env.stored(&repo, &doc);
    // Hours old: "N seconds ago" would differ between two runs a second apart.
    env.age(&slot, 3 * 3600 + 60);
    let draft = env.write("draft.md", &doc);
    let draft = draft.to_string_lossy().into_owned();
    // What may differ between two runs a second apart: `status`'s age in seconds.
    let settled =
        |o: &crate::util::Outcome| match serde_json::from_str::<serde_json::Value>(&o.stdout) {
            Ok(mut v) if v.get("handoff").is_some() => {
                v["handoff"]["age"] = serde_json::Value::Null;
                v.to_string()
            }
            _ => o.stdout.clone(),
        };
    let commands: Vec<Vec<&str>> = vec![
        vec!["orient"],
        vec!["path"],
        vec!["read", "--no-consume"],
        vec!["history"],
        vec!["new"],
        vec!["status", "--json"],
        vec!["write", "--dry-run", &draft],
        vec!["install", "git-hook"],
    ];
    for args in commands {
        let inside = run(env.store().args(&args).current_dir(&repo));
        assert!(
            inside.code == 0 || args[0] == "install",
            "{args:?} inside: {}",
            inside.stderr
        );
        for flag in ["-C", "--checkout"] {
            if args[0] == "install" {
                run(env
                    .store()
                    .args(["uninstall", "git-hook"])
                    .current_dir(&repo));
            }
            let named = run(env
                .store()
                .args(&args)
                .arg(flag)
                .arg(&repo)
                .current_dir(env.root()));
            assert_eq!(
                (named.code, settled(&named)),
                (inside.code, settled(&inside)),
                "{args:?} {flag}: {}",
                named.stderr
            );
        }
    }
    // The older spelling: a positional DIR, where a command had one.
    let o = run(env.store().arg("path").arg(&repo).current_dir(env.root()));
    let inside = run(env.store().arg("path").current_dir(&repo));
    assert_eq!((o.code, o.stdout), (0, inside.stdout));
    // Both at once is a usage error, not a guess.
    let o = run(env.store().arg("path").arg(&repo).arg("-C").arg(&repo));
    assert_eq!(o.code, 2, "{}", o.stderr);
}

/// The README is the front door: its minimal handoff, written with its own commands in a fresh
/// checkout, is gated, stored and read back clean — and the README stays short.
#[test]
fn the_readme_takes_a_newcomer_to_a_stored_gated_handoff() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).expect("README");
    assert!(readme.lines().count() <= 250, "README over 250 lines");
    let first = readme
        .split("## Your first handoff")
        .nth(1)
        .expect("a first-handoff section");
    let handoff = first
        .split("````markdown\n")
        .nth(1)
        .and_then(|rest| rest.split("\n````").next())
        .expect("the minimal handoff")
        .to_string()
        + "\n";
    assert!(handoff.lines().count() <= 25, "{handoff}");
    let commands: Vec<Vec<String>> = first
        .split("```sh\n")
        .nth(1)
        .and_then(|rest| rest.split("\n```").next())
        .expect("the commands")
        .lines()
        .map(|l| {
            l.split('#')
                .next()
                .unwrap_or_default()
                .split_whitespace()
                .map(str::to_string)
                .collect()
        })
        .collect();

    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    let mut ran = 0;
    for words in &commands {
        if words[0] == "rm" {
            std::fs::remove_file(repo.join(&words[1])).expect("the draft is there to remove");
            continue;
        }
        assert_eq!(words[0], "handoff-store", "{words:?}");
        if words.contains(&">".to_string()) {
            // `new > handoff.md`, then "fill it in": the README's handoff is the filled one.
            let o = run(env.store().args(&words[1..2]).current_dir(&repo));
            assert_eq!(o.code, 0, "{}", o.stderr);
            std::fs::write(repo.join(&words[3]), &handoff).expect("handoff.md");
            continue;
        }
        let o = run(env.store().args(&words[1..]).current_dir(&repo));
        assert_eq!(o.code, 0, "{words:?}: {}{}", o.stdout, o.stderr);
        if words[1] == "read" {
            assert!(
                o.stdout.contains("Type Reminder the same way."),
                "{}",
                o.stdout
            );
        }
        ran += 1;
    }
    assert_eq!(ran, 3, "dry run, write, read: {commands:?}");
    assert_eq!(
        env.git(&repo, &["status", "--porcelain"]),
        "",
        "the flow leaves nothing in the user's tree"
    );
    // Then the first start of the client offers it (the flow never leaves it read).
    let o = run(&mut env.hook(
        "session-start",
        &serde_json::json!({"session_id": "first", "cwd": repo, "source": "startup"}).to_string(),
    ));
    assert!(
        o.stdout
            .contains("# Handoff available (SessionStart, source: startup)")
            && o.stdout.contains("type the mailables"),
        "{}",
        o.stdout
    );
}
