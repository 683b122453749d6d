//! Pointers that heal: `verify-handoff --fix` and `handoff-store fix` move a citation whose
//! cited text moved to exactly one other line of its file, and touch nothing else.

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

use crate::util::{TestEnv, canonical, json, run, version};

/// The cited file: unique lines (`fn unique_07()`), two lines that say the same (`fn dup()`),
/// and filler.
fn file_lines() -> Vec<String> {
    (1..=30)
        .map(|i| match i {
            5 | 10 => "fn dup() {}".to_string(),
            i if i % 3 == 0 => "// filler".to_string(),
            i => format!("fn unique_{i:02}() {{}}"),
        })
        .collect()
}

/// Cited lines whose fragment is unique, and the ones whose fragment is on two lines.
const UNIQUE: [usize; 5] = [2, 7, 13, 20, 28];
const AMBIGUOUS: [usize; 2] = [5, 10];

fn handoff(checkout: &str) -> String {
    let mut pointers: Vec<String> = UNIQUE
        .iter()
        .map(|i| format!("src/f.rs:{i} | fn unique_{i:02}()"))
        .collect();
    pointers.extend(AMBIGUOUS.iter().map(|i| format!("src/f.rs:{i} | fn dup()")));
    format!(
        "# Handoff — heal\nbranch: main\ncheckout: {checkout}\nstatus: s\n\n## Do not re-derive\n\n### Decisions\n- Keep `src/f.rs:7` as it is; see also src/f.rs:13, and src/f.rs:10.\n\n### Dead ends\n- None.\n\n### Traps\n- src/f.rs:2-4 is a range and src/f.rs:20,28 a list: neither moves.\n\n## Next\n1. Go on.\n\n## Pointers\n```text\n{}\n```\n",
        pointers.join("\n")
    )
}

/// `text` with every run of digits made one `#`: what a rewrite of line numbers leaves alone.
fn shape(text: &str) -> String {
    let mut out = String::new();
    let mut digits = false;
    for c in text.chars() {
        if c.is_ascii_digit() {
            if !digits {
                out.push('#');
            }
            digits = true;
        } else {
            out.push(c);
            digits = false;
        }
    }
    out
}

/// One edit of the cited file: lines inserted before a line, or a filler line deleted.
#[derive(Debug, Clone)]
enum Edit {
    Insert { before: usize, count: usize },
    DeleteFiller { nth: usize },
}

fn edits() -> impl Strategy<Value = Vec<Edit>> {
    let edit = prop_oneof![
        (0usize..40, 1usize..6).prop_map(|(before, count)| Edit::Insert { before, count }),
        (0usize..10).prop_map(|nth| Edit::DeleteFiller { nth }),
    ];
    proptest::collection::vec(edit, 1..8)
}

#[test]
fn fix_moves_every_unique_citation_and_touches_only_line_numbers() {
    let env = TestEnv::new();
    let repo = env.repo(
        "r",
        "main",
        &[("src/f.rs", &(file_lines().join("\n") + "\n"))],
    );
    let doc = handoff(&repo.to_string_lossy());
    let file = repo.join("h.md");
    let mut runner = TestRunner::new(Config {
        cases: 24,
        failure_persistence: None,
        ..Config::default()
    });
    runner
        .run(&edits(), |edits| {
            let mut lines = file_lines();
            for e in &edits {
                match *e {
                    Edit::Insert { before, count } => {
                        let at = before.min(lines.len());
                        for _ in 0..count {
                            lines.insert(at, "// inserted".into());
                        }
                    }
                    Edit::DeleteFiller { nth } => {
                        let fillers: Vec<usize> = (0..lines.len())
                            .filter(|&i| lines[i] == "// filler")
                            .collect();
                        if !fillers.is_empty() {
                            lines.remove(fillers[nth % fillers.len()]);
                        }
                    }
                }
            }
            std::fs::write(repo.join("src/f.rs"), lines.join("\n") + "\n").expect("edit");
            std::fs::write(&file, &doc).expect("handoff");
            let o = run(env.verify().arg("--fix").arg(&file).arg(&repo));
            let after = std::fs::read_to_string(&file).expect("fixed");
            prop_assert_eq!(shape(&after), shape(&doc), "only line numbers change");
            let (_, report) = json(env.verify().arg("--json").arg(&file).arg(&repo));
            let entries = report["citations"]["entries"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            for e in &entries {
                let fragment = e["fragment"].as_str().unwrap_or_default();
                if fragment.starts_with("fn unique_") {
                    prop_assert_eq!(&e["verdict"], "ok", "{}\n{}", o.stdout, after);
                }
            }
            // The ambiguous ones are exactly as they were.
            for i in AMBIGUOUS {
                let cited = format!("src/f.rs:{i} | fn dup()");
                prop_assert!(after.contains(&cited), "{}", after);
            }
            // Where the prose cites a moved line, it moved with it.
            let seven = lines
                .iter()
                .position(|l| l == "fn unique_07() {}")
                .map(|n| n + 1)
                .expect("line 7 kept");
            let prose = format!("Keep `src/f.rs:{seven}` as it is");
            prop_assert!(after.contains(&prose), "{}", after);
            prop_assert!(after.contains("src/f.rs:2-4 is a range and src/f.rs:20,28 a list"));
            let exit = report["exit_code"].as_i64().unwrap_or(-1);
            prop_assert_eq!(
                i64::from(o.code),
                exit,
                "the exit is the verdict on the result"
            );
            // The report --fix prints on the result is the gate's own, line for line (it is
            // computed from the first run, not by a second one).
            let fresh = run(env.verify().arg(&file).arg(&repo));
            let said = o
                .stdout
                .split_once("\n\n")
                .map(|(_, r)| r)
                .unwrap_or_default();
            prop_assert_eq!(said, fresh.stdout.as_str());
            prop_assert_eq!(&o.stderr, &fresh.stderr);
            Ok(())
        })
        .expect("fix heals what moved, and only that");
}

#[test]
fn dry_run_writes_nothing_and_says_what_would_move() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    let doc = canonical(&repo.to_string_lossy(), "main");
    let file = env.write("h.md", &doc);
    // Two lines above the cited one: `app/Mail/Invoice.php:24` is at 26 now.
    let php = std::fs::read_to_string(repo.join("app/Mail/Invoice.php")).expect("php");
    std::fs::write(
        repo.join("app/Mail/Invoice.php"),
        php.replacen("\n", "\n// a\n// b\n", 1),
    )
    .expect("edit");
    let o = run(env.verify().args(["--fix", "--dry-run"]).arg(&file));
    assert_eq!(
        o.code, 0,
        "the verdict on the result: {}{}",
        o.stdout, o.stderr
    );
    assert!(
        o.stdout
            .starts_with("moved    app/Mail/Invoice.php:24 → 26\nwould fix "),
        "{}",
        o.stdout
    );
    assert_eq!(std::fs::read_to_string(&file).expect("h"), doc);
    let o = run(env.verify().arg(&file));
    assert_eq!(o.code, 1, "still failing on disk");
    let (code, v) = json(env.verify().args(["--fix", "--json"]).arg(&file));
    assert_eq!(code, 0);
    assert_eq!(v["moves"][0]["to"], 26);
    assert_eq!(v["written"], true);
    assert_eq!(v["report"]["verdict"], "ok");
    assert_eq!(run(env.verify().arg(&file)).code, 0);
}

#[test]
fn the_store_fixes_its_slot_keeps_the_old_version_and_delivery_names_the_moves() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    let slot = env.stored(&repo, &canonical(&repo.to_string_lossy(), "main"));
    let before = std::fs::read_to_string(&slot).expect("slot");
    let php = std::fs::read_to_string(repo.join("app/Mail/Invoice.php")).expect("php");
    std::fs::write(
        repo.join("app/Mail/Invoice.php"),
        php.replacen("\n", "\n// a\n", 1),
    )
    .expect("edit");
    let chain =
        |repo: &std::path::Path| env.git(repo, &["rev-list", "--count", "refs/handoffs/main"]);
    let versions = chain(&repo);

    // Delivery names the move and changes nothing.
    let o = run(env.store().args(["read", "--no-consume", "-C"]).arg(&repo));
    assert!(
        o.stdout
            .contains("moved    app/Mail/Invoice.php:24 → 25 (the text is on that one line now; handoff-store fix rewrites it)"),
        "{}",
        o.stdout
    );
    let (_, v) = json(
        env.store()
            .args(["read", "--no-consume", "--json", "-C"])
            .arg(&repo),
    );
    assert_eq!(
        (
            v["verdict"]["moves"][0]["from"].clone(),
            v["verdict"]["moves"][0]["to"].clone()
        ),
        (24.into(), 25.into()),
        "{v}"
    );
    let o = run(env
        .store()
        .args(["hook", "session-start"])
        .write_stdin(format!(
            r#"{{"session_id":"s","cwd":"{}","source":"clear"}}"#,
            repo.display()
        )));
    assert!(
        o.stdout.contains(
            "Moved, not gone (`handoff-store fix` rewrites them): `app/Mail/Invoice.php:24` → 25."
        ),
        "{}",
        o.stdout
    );
    assert_eq!(
        std::fs::read_to_string(&slot)
            .expect("slot")
            .replace("progress: consumed", "progress: complete"),
        before
    );

    let o = run(env.store().args(["fix", "--dry-run", "-C"]).arg(&repo));
    assert_eq!(o.code, 0, "{}{}", o.stdout, o.stderr);
    assert!(o.stdout.contains("would fix "), "{}", o.stdout);
    env.age(&slot, 3 * 86_400);
    let written = crate::util::mtime(&slot);
    let before_fix = std::time::Instant::now();
    let o = run(env.store().args(["fix", "-C"]).arg(&repo));
    assert_eq!(o.code, 0, "{}{}", o.stdout, o.stderr);
    assert_eq!(
        crate::util::mtime(&slot),
        written,
        "healed line numbers keep the time the handoff was written"
    );
    let shown = run(env.store().args(["read", "--no-consume", "-C"]).arg(&repo));
    assert!(
        shown.stdout.contains("\nwritten  3 days ago ("),
        "written when it was written: {}",
        shown.stdout
    );
    crate::util::seconds_after(&shown.stdout, "), its line numbers fixed ", before_fix);
    assert!(
        shown.stdout.contains(" ago — progress: "),
        "fixed, when it happened: {}",
        shown.stdout
    );
    assert!(
        o.stdout.contains("fixed    ") && o.stdout.contains("history  "),
        "{}",
        o.stdout
    );
    let after = std::fs::read_to_string(&slot).expect("slot");
    assert!(after.contains("app/Mail/Invoice.php:25 | "), "{after}");
    assert_eq!(
        shape(&after),
        shape(&before.replace("progress: complete", "progress: consumed"))
    );
    let (_, history) = json(env.store().args(["history", "--json", "-C"]).arg(&repo));
    let kept = history["versions"][0]["path"].as_str().expect("kept");
    assert!(
        std::fs::read_to_string(kept)
            .expect("kept")
            .contains("Invoice.php:24 | ")
    );
    assert_ne!(chain(&repo), versions, "the fix is recorded on the chain");
    let o = run(env.store().args(["read", "--no-consume", "-C"]).arg(&repo));
    assert_eq!(o.code, 0, "{}", o.stdout);

    // Nothing to fix, and no handoff.
    let o = run(env.store().args(["fix", "-C"]).arg(&repo));
    assert!(o.stdout.starts_with("nothing to fix"), "{}", o.stdout);
    let other = env.shop("other", "main");
    let o = run(env.store().args(["fix", "-C"]).arg(&other));
    assert_eq!(o.code, 4, "{}", o.stderr);
}

/// `--fix` rewrites through a symlink (the link stays), keeps the file's mode, and what a
/// killed `--fix` left beside the file the next one removes.
#[test]
fn fix_writes_through_a_link_keeps_the_mode_and_cleans_up_after_a_kill() {
    use std::os::unix::fs::PermissionsExt;
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    let doc = canonical(&repo.to_string_lossy(), "main");
    let real = env.write("notes/h.md", &doc);
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o640)).expect("chmod");
    let link = env.path("h.md");
    std::os::unix::fs::symlink(&real, &link).expect("link");
    let php = std::fs::read_to_string(repo.join("app/Mail/Invoice.php")).expect("php");
    std::fs::write(
        repo.join("app/Mail/Invoice.php"),
        php.replacen("\n", "\n// a\n", 1),
    )
    .expect("edit");
    let temps = || -> Vec<String> {
        std::fs::read_dir(env.path("notes"))
            .expect("notes")
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with(".tmp."))
            .collect()
    };

    // Killed after the new text is written beside the file, before the rename.
    let o = run(env
        .verify()
        .args(["--fix"])
        .arg(&link)
        .env("HANDOFF_STORE_KILL_AT", "2"));
    assert_ne!(o.code, 0, "killed");
    assert_eq!(
        std::fs::read_to_string(&real).expect("real"),
        doc,
        "unchanged"
    );
    assert_eq!(temps().len(), 1, "the kill left its temp file");

    let o = run(env.verify().arg("--fix").arg(&link));
    assert_eq!(o.code, 0, "{}{}", o.stdout, o.stderr);
    assert!(temps().is_empty(), "{:?}", temps());
    assert!(
        std::fs::symlink_metadata(&link)
            .expect("link")
            .file_type()
            .is_symlink()
    );
    assert!(
        std::fs::read_to_string(&real)
            .expect("real")
            .contains("Invoice.php:25 | ")
    );
    let mode = std::fs::metadata(&real).expect("meta").permissions().mode() & 0o777;
    assert_eq!(mode, 0o640);
}

/// A rewrite that also changes another pointer's fragment (it cites the moved `path:N`) is
/// judged by the whole gate again, not by the first run's verdicts.
#[test]
fn a_rewrite_inside_another_pointer_is_gated_again() {
    let env = TestEnv::new();
    let repo = env.repo(
        "r",
        "main",
        &[
            ("src/f.rs", "fn one() {}\nfn two() {}\n"),
            ("src/g.rs", "// see src/f.rs:2\n"),
        ],
    );
    let doc = format!(
        "# Handoff — nested\nbranch: main\ncheckout: {}\nstatus: s\n\n## Do not re-derive\n\n### Decisions\n- `src/f.rs:2` and `src/g.rs:1`.\n\n### Dead ends\n- None.\n\n### Traps\n- None.\n\n## Next\n1. Go.\n\n## Pointers\n```text\nsrc/f.rs:2 | fn two()\nsrc/g.rs:1 | see src/f.rs:2\n```\n",
        repo.display()
    );
    let file = env.write("h.md", &doc);
    std::fs::write(repo.join("src/f.rs"), "// new\nfn one() {}\nfn two() {}\n").expect("edit");
    let o = run(env.verify().arg("--fix").arg(&file));
    let fresh = run(env.verify().arg(&file));
    let said = o
        .stdout
        .split_once("\n\n")
        .map(|(_, r)| r)
        .unwrap_or_default();
    assert_eq!(said, fresh.stdout, "{}", o.stdout);
    assert_eq!(o.code, fresh.code);
    assert!(
        fresh
            .stdout
            .contains("src/g.rs:1 no longer contains: see src/f.rs:3"),
        "the rewrite reached g's fragment, and the gate judged it: {}",
        fresh.stdout
    );
}

/// A shop whose Invoice.php gained a line at the top (every citation of it moved by one), and
/// the canonical handoff in `h.md` beside it.
fn moved_shop(env: &TestEnv) -> (std::path::PathBuf, String, std::path::PathBuf) {
    let repo = env.shop("shop", "main");
    let doc = canonical(&repo.to_string_lossy(), "main");
    let file = env.write("h.md", &doc);
    let php = std::fs::read_to_string(repo.join("app/Mail/Invoice.php")).expect("php");
    std::fs::write(
        repo.join("app/Mail/Invoice.php"),
        php.replacen("\n", "\n// a\n", 1),
    )
    .expect("edit");
    (repo, doc, file)
}

/// An edit saved while `--fix` gates (the process paused after the gate, before it writes) is
/// kept: the file is replaced only if it still holds what was gated; nothing is written.
#[test]
fn an_edit_saved_during_fix_is_kept() {
    let env = TestEnv::new();
    let (_repo, doc, file) = moved_shop(&env);
    let child = env
        .std_cmd(
            &assert_cmd::cargo::cargo_bin("verify-handoff"),
            &["--fix".as_ref(), file.as_os_str()],
        )
        .env("HANDOFF_STORE_KILL_AT", "1")
        .env("HANDOFF_STORE_KILL_WITH", "STOP")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("verify-handoff");
    assert!(
        crate::util::eventually(30, || crate::util::paused(child.id())),
        "never paused"
    );
    let edited = doc.replace("status: ", "status: my edit, saved meanwhile. ");
    std::fs::write(&file, &edited).expect("the user's edit");
    crate::util::resume(child.id());
    let out = child.wait_with_output().expect("ends");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        std::fs::read_to_string(&file).expect("file"),
        edited,
        "the edit was overwritten: {text}"
    );
    assert!(text.contains("changed while it was being gated"), "{text}");
    let temps = std::fs::read_dir(env.root())
        .expect("root")
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(".tmp."))
        .count();
    assert_eq!(temps, 0, "a temp file was left");
}

/// `--fix` refuses a hard-linked file (replacing it would part the names), a FIFO (never
/// blocking on it) and standard input, each with its reason and nothing written.
#[test]
fn fix_refuses_a_hard_link_a_fifo_and_stdin_with_a_reason() {
    let env = TestEnv::new();
    let (_repo, doc, file) = moved_shop(&env);
    let twin = env.path("twin.md");
    std::fs::hard_link(&file, &twin).expect("hard link");
    let o = run(env.verify().arg("--fix").arg(&file));
    assert_eq!(o.code, 2, "{}{}", o.stdout, o.stderr);
    assert!(o.stderr.contains("hard link"), "{}", o.stderr);
    assert_eq!(std::fs::read_to_string(&twin).expect("twin"), doc);
    std::fs::remove_file(&twin).expect("unlink");
    let fifo = env.path("pipe.md");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .expect("mkfifo")
            .success()
    );
    let o = run(env
        .verify()
        .arg("--fix")
        .arg(&fifo)
        .timeout(std::time::Duration::from_secs(30)));
    assert_eq!(o.code, 2, "{}{}", o.stdout, o.stderr);
    assert!(o.stderr.contains("regular file"), "{}", o.stderr);
    let o = run(env.verify().args(["--fix", "-"]).write_stdin(doc));
    assert_eq!(o.code, 2, "{}{}", o.stdout, o.stderr);
    assert!(
        o.stderr.contains("standard input is not accepted"),
        "{}",
        o.stderr
    );
}

/// As root, `--fix` of another user's file keeps its owner and group.
#[test]
#[ignore = "needs root"]
fn fix_as_root_keeps_the_owner_and_group() {
    use std::os::unix::fs::MetadataExt;
    let env = TestEnv::new();
    let (_repo, _doc, file) = moved_shop(&env);
    std::os::unix::fs::chown(&file, Some(4242), Some(4343)).expect("chown (needs root)");
    let o = run(env.verify().arg("--fix").arg(&file));
    assert_eq!(o.code, 0, "{}{}", o.stdout, o.stderr);
    let meta = std::fs::metadata(&file).expect("meta");
    assert_eq!((meta.uid(), meta.gid()), (4242, 4343));
    assert!(
        std::fs::read_to_string(&file)
            .expect("file")
            .contains("Invoice.php:25 | ")
    );
}

/// `--fix` moves only single-line citations: a column (`:24:7`), a range (`24-30`, `24–30`,
/// `24..30`, `24 - 30`), a list (`24,30`, `24, 30`), and anything in a fence other than the
/// Pointers block (a quoted log line) stay byte for byte, wherever they stand, while the
/// Pointers citation of the same line moves.
#[test]
fn fix_leaves_every_spelling_that_is_not_one_cited_line() {
    const P: &str = "app/Mail/Invoice.php";
    let spellings: Vec<String> = [
        ":24:7", "-30", "–30", "—30", "..30", " - 30", ",30", ", 30", " – 30",
    ]
    .iter()
    .map(|s| format!("{P}:24{s}"))
    .collect();
    let env = TestEnv::new();
    let (repo, _doc, file) = moved_shop(&env);
    let mut runner = TestRunner::new(Config {
        cases: 16,
        failure_persistence: None,
        ..Config::default()
    });
    let strategy = (
        proptest::sample::subsequence(spellings.clone(), 1..=spellings.len()),
        any::<bool>(),
        any::<bool>(),
    );
    runner
        .run(&strategy, |(chosen, fenced, quoted_single)| {
            let decoys: Vec<String> = chosen.iter().map(|s| format!("- see {s} here")).collect();
            let mut trap = decoys.join("\n");
            if fenced {
                trap = format!("- the log said:\n\n```text\n{trap}\n```\n");
            }
            if quoted_single {
                trap.push_str(&format!("\n\n```log\nerror at {P}:24 in build\n```\n"));
            }
            let doc = canonical(&repo.to_string_lossy(), "main")
                .replace("### Traps\n- None.", &format!("### Traps\n{trap}"));
            std::fs::write(&file, &doc).expect("handoff");
            let o = run(env.verify().arg("--fix").arg(&file).arg(&repo));
            let after = std::fs::read_to_string(&file).expect("fixed");
            prop_assert!(
                after.contains(&format!("{P}:25 | ")),
                "{}{}",
                o.stdout,
                o.stderr
            );
            for d in &chosen {
                prop_assert!(after.contains(d.as_str()), "{d} was rewritten:\n{after}");
            }
            if quoted_single {
                prop_assert!(
                    after.contains(&format!("error at {P}:24 in build")),
                    "{after}"
                );
            }
            Ok(())
        })
        .expect("property");
}

/// A cited file git shows renamed since the handoff's `head:` is MISSING with where it went —
/// an exact rename, or one edited on the way (as git's rename detection pairs them) — and `fix`
/// follows it; files that only share its name are no rename.
#[test]
fn a_renamed_file_is_named_and_fix_follows_it() {
    let env = TestEnv::new();
    let repo = env.repo(
        "ren",
        "main",
        &[
            ("src/a.rs", "fn a() {}\nfn keep() {}\n"),
            ("src/b.rs", "fn b() {}\n"),
            ("src/c.rs", "fn c() {}\n"),
        ],
    );
    let doc = format!(
        "# Handoff — renames\nbranch: main\ncheckout: {}\nstatus: s\n\n## Do not re-derive\n\n### Decisions\n- a `src/a.rs:2`, b `src/b.rs:1`, c `src/c.rs:1`\n\n### Dead ends\n- None.\n\n### Traps\n- None.\n\n## Next\n1. go\n\n## Pointers\n```text\nsrc/a.rs:2 | fn keep()\nsrc/b.rs:1 | fn b()\nsrc/c.rs:1 | fn c()\n```\n",
        repo.display()
    );
    let slot = env.stored(&repo, &doc);
    std::fs::create_dir_all(repo.join("lib")).expect("lib");
    env.git(&repo, &["mv", "src/a.rs", "lib/a.rs"]);
    std::fs::create_dir_all(repo.join("core")).expect("core");
    env.git(&repo, &["mv", "src/b.rs", "core/b.rs"]);
    std::fs::write(repo.join("core/b.rs"), "// moved\nfn b() {}\n").expect("edit b");
    env.git(&repo, &["rm", "-q", "src/c.rs"]);
    std::fs::create_dir_all(repo.join("x")).expect("x");
    std::fs::create_dir_all(repo.join("y")).expect("y");
    // Mostly other code: below git's 50 % similarity, so only their name is src/c.rs's.
    let other = "// another module with the same name and much more in it\n".repeat(3);
    std::fs::write(repo.join("x/c.rs"), format!("fn c() {{}}\n{other}")).expect("x/c");
    std::fs::write(repo.join("y/c.rs"), format!("fn c() {{}}\n{other}// y\n")).expect("y/c");
    env.git(&repo, &["add", "-A"]);
    env.git(&repo, &["commit", "-q", "-m", "move things"]);

    let gate = run(env.verify().arg(&slot).arg(&repo));
    assert_eq!(gate.code, 1, "{}", gate.stdout);
    for (path, to) in [("src/a.rs:2", "lib/a.rs"), ("src/b.rs:1", "core/b.rs")] {
        assert!(
            gate.stdout
                .lines()
                .any(|l| l.starts_with(&format!("MISSING  {path} "))
                    && l.contains(&format!("no such file or directory — renamed to {to}"))),
            "{path}: {}",
            gate.stdout
        );
    }
    assert!(
        gate.stdout.contains("src/c.rs:1")
            && !gate.stdout.contains("renamed to x/")
            && !gate.stdout.contains("renamed to y/"),
        "two candidates are no rename: {}",
        gate.stdout
    );

    let shown = run(env.store().args(["read", "--no-consume", "-C"]).arg(&repo));
    assert!(
        shown
            .stdout
            .contains("\nmoved    src/a.rs:2 → lib/a.rs:2 (the text is on that one line now")
            && shown
                .stdout
                .contains("\nMISSING src/c.rs:1 | fn c(): no such file or directory\n")
            && !shown.stdout.contains("MISSING src/a.rs"),
        "{}",
        shown.stdout
    );
    let fixed = run(env.store().args(["fix", "-C"]).arg(&repo));
    assert_eq!(
        fixed.code, 1,
        "c.rs stays MISSING: {}{}",
        fixed.stdout, fixed.stderr
    );
    assert!(
        fixed.stdout.contains("moved    src/a.rs:2 → lib/a.rs:2")
            && fixed.stdout.contains("moved    src/b.rs:1 → core/b.rs:2"),
        "{}",
        fixed.stdout
    );
    let text = std::fs::read_to_string(&slot).expect("slot");
    assert!(
        text.contains("lib/a.rs:2 | fn keep()")
            && text.contains("core/b.rs:2 | fn b()")
            && text.contains("a `lib/a.rs:2`, b `core/b.rs:2`, c `src/c.rs:1`"),
        "{text}"
    );
}

/// `read` says a handoff's line numbers were fixed only after a fix: a kept version as old as
/// the slot that differs in more than its line numbers (two writes in one second, a sync merge)
/// is no fix.
#[test]
fn a_kept_version_as_old_as_the_slot_is_no_fix_unless_only_its_line_numbers_differ() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    env.stored(&repo, &version(&repo, "one"));
    let slot = env.stored(&repo, &version(&repo, "two"));
    let name = slot.file_name().expect("name").to_owned();
    let kept: Vec<std::path::PathBuf> = crate::util::files_under(&env.store_dir().join(".history"))
        .into_iter()
        .filter(|p| p.to_string_lossy().contains(&*name.to_string_lossy()))
        .collect();
    assert_eq!(kept.len(), 1, "{kept:?}");
    // Written in the slot's second, as two writes in one second would be.
    std::fs::File::options()
        .write(true)
        .open(&kept[0])
        .expect("kept")
        .set_modified(crate::util::mtime(&slot))
        .expect("mtime");
    let shown = run(env.store().args(["read", "--no-consume", "-C"]).arg(&repo));
    assert!(
        !shown.stdout.contains("its line numbers fixed"),
        "{}",
        shown.stdout
    );
}
