//! Views of a stored handoff that change nothing: its lineage (`log`), the mid-session
//! reground (`read --reground`) and a subagent's brief (`brief`).

use crate::util::{TestEnv, canonical, invoice_php, json, run};

/// Lineage: `log` lists the chain's versions newest first with their sequence numbers and
/// parents, and what each added and removed; after a compaction the title names it.
#[test]
fn log_shows_the_lineage_and_the_delta_of_each_version() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    let first = canonical(&repo.to_string_lossy(), "main").replace(
        "### Traps\n- None.",
        "### Traps\n- The queue serialises the class name: rename it and old jobs fail.",
    );
    env.stored(&repo, &first);
    let second = first
        .replace(
            "### Dead ends",
            "- Queue the mail, not the render: the render needs the request.\n\n### Dead ends",
        )
        .replace(
            "### Traps\n- The queue serialises the class name: rename it and old jobs fail.",
            "### Traps\n- None.",
        );
    env.stored(&repo, &second);

    let (code, v) = json(env.store().args(["log", "--json", "-C"]).arg(&repo));
    assert_eq!(code, 0, "{v}");
    let versions = v["versions"].as_array().expect("versions");
    assert_eq!(versions.len(), 2, "{v}");
    assert_eq!(versions[0]["seq"], 2);
    assert_eq!(versions[1]["seq"], 1);
    assert_eq!(versions[0]["parents"][0], versions[1]["id"], "parent order");
    assert_eq!(
        versions[0]["changes"]["decisions"]["added"][0],
        "Queue the mail, not the render: the render needs the request."
    );
    assert_eq!(
        versions[0]["changes"]["traps"]["removed"][0],
        "The queue serialises the class name: rename it and old jobs fail."
    );
    assert_eq!(
        versions[0]["changes"]["traps"]["added"],
        serde_json::json!([])
    );
    let o = run(env.store().args(["log", "-C"]).arg(&repo));
    assert!(o.stdout.starts_with("#2 "), "{}", o.stdout);
    assert!(
        o.stdout
            .contains("      + decision: Queue the mail, not the render"),
        "{}",
        o.stdout
    );
    let o = run(env.store().args(["log", "-n", "1", "-C"]).arg(&repo));
    assert_eq!(o.stdout.lines().filter(|l| l.starts_with('#')).count(), 1);

    // After a compaction, the title names the version and what changed since the last one.
    let o = run(env
        .store()
        .args(["hook", "session-start"])
        .write_stdin(format!(
            r#"{{"session_id":"s","cwd":"{}","source":"compact"}}"#,
            repo.display()
        )));
    assert!(
        o.stdout
            .contains("# Context reset (SessionStart, source: compact) — handoff #2: +1 decision, −1 trap since #1"),
        "{}",
        o.stdout
    );
    // The compaction's delivery consumed it: the same version, now read — no new number.
    let o = run(env.store().args(["log", "-n", "1", "-C"]).arg(&repo));
    assert!(
        o.stdout.starts_with("#2 ") && o.stdout.contains(" consumed "),
        "{}",
        o.stdout
    );
    // No chain: nothing to show.
    let other = env.shop("other", "main");
    let o = run(env.store().args(["log", "-C"]).arg(&other));
    assert_eq!(o.code, 4, "{}", o.stderr);
}

/// Reading is not writing. Ten reads of one handoff leave it #1, and the compaction title
/// names no lineage for a first version (nothing a model acts on); a reworded item is one item reworded, not one removed
/// and one added; a long item ends in `…` at a word.
#[test]
fn lineage_counts_texts_not_reads_and_knows_a_reworded_item() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    let first = canonical(&repo.to_string_lossy(), "main").replace(
        "### Traps\n- None.",
        "### Traps\n- The queue serialises the class name: rename it and old jobs fail.",
    );
    let slot = env.stored(&repo, &first);
    for _ in 0..10 {
        let o = run(env.store().arg("set-progress").arg(&slot).arg("complete"));
        assert_eq!(o.code, 0, "{}", o.stderr);
        let o = run(env.store().args(["read", "-C"]).arg(&repo));
        assert_eq!(o.code, 0, "{}", o.stderr);
    }
    let commits = env.git(&repo, &["rev-list", "--count", "refs/handoffs/main"]);
    assert!(
        commits.parse::<u32>().unwrap_or(0) >= 11,
        "every flip is recorded: {commits}"
    );
    let (code, v) = json(env.store().args(["log", "--json", "-C"]).arg(&repo));
    assert_eq!(code, 0, "{v}");
    let versions = v["versions"].as_array().expect("versions");
    assert_eq!(versions.len(), 1, "one text, read ten times: {v}");
    assert_eq!(versions[0]["seq"], 1);
    assert_eq!(versions[0]["progress"], "consumed");
    let title = |env: &TestEnv| {
        let o = run(env
            .store()
            .args(["hook", "session-start"])
            .write_stdin(format!(
                r#"{{"session_id":"s","cwd":"{}","source":"compact"}}"#,
                repo.display()
            )));
        o.stdout
    };
    let o = title(&env);
    assert!(
        o.contains("source: compact)\\n") && !o.contains("handoff #"),
        "{o}"
    );

    let long = "Long items stay whole in the lineage because a reader must see what the item says before deciding whether it still holds true here and now";
    let second = first
        .replace(
            "- The queue serialises the class name: rename it and old jobs fail.",
            "- The queue serialises the class name, so renaming it makes old jobs fail.",
        )
        .replace("### Dead ends\n", &format!("### Dead ends\n- {long}.\n"));
    env.stored(&repo, &second);
    let o = title(&env);
    assert!(
        o.contains("handoff #2: +1 dead end, ~1 trap reworded since #1"),
        "{o}"
    );
    let o = run(env.store().args(["log", "-n", "1", "-C"]).arg(&repo));
    assert!(o.stdout.starts_with("#2 "), "{}", o.stdout);
    assert!(
        o.stdout.contains(
            "      ~ trap: The queue serialises the class name, so renaming it makes old jobs fail.\n"
        ),
        "{}",
        o.stdout
    );
    let cut = o
        .stdout
        .lines()
        .find(|l| l.starts_with("      + dead end: Long items"))
        .unwrap_or_default();
    assert!(
        cut.ends_with(" whether it still…") || cut.ends_with('…'),
        "{cut}"
    );
    assert!(
        !cut.contains("holds true here and now"),
        "cut at a word: {cut}"
    );
}

/// A handoff with long sections and pointers in two folders.
fn long_handoff(checkout: &str) -> String {
    let decisions: String = (0..60)
        .map(|i| {
            format!(
                "- Decision {i}: pin the autoloader, whatever the caller does: `composer.json:1`.\n"
            )
        })
        .collect();
    canonical(checkout, "main")
        .replace("### Dead ends", &format!("{decisions}- About the composer file: `composer.json:1`.\n\n### Dead ends"))
        .replace("### Traps\n- None.", "### Traps\n- The queue keeps class names. `app/Mail/Invoice.php:24`\n- Composer caches: `composer.json:1`.\n- Any branch may be rebased.")
        .replace("```text\n", "```text\ncomposer.json:1 | {}\n")
}

#[test]
fn reground_is_short_never_consumes_and_names_the_file_when_cut() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    let slot = env.stored(&repo, &canonical(&repo.to_string_lossy(), "main"));
    let o = run(env.store().args(["read", "--reground", "-C"]).arg(&repo));
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stdout.starts_with("# Reground — "), "{}", o.stdout);
    assert!(
        o.stdout.contains("GATE: OK")
            && o.stdout.contains("### Decisions")
            && o.stdout.contains("## Next"),
        "{}",
        o.stdout
    );
    assert!(
        !o.stdout.contains("## Pointers") && !o.stdout.contains("DRIFT"),
        "{}",
        o.stdout
    );
    let text = std::fs::read_to_string(&slot).expect("slot");
    assert!(
        text.contains("progress: complete"),
        "never consumed: {text}"
    );

    let slot = env.stored(&repo, &long_handoff(&repo.to_string_lossy()));
    let (code, v) = json(
        env.store()
            .args(["read", "--reground", "--json", "-C"])
            .arg(&repo),
    );
    assert_eq!(code, 0);
    let said = v["text"].as_str().expect("text");
    assert!(said.chars().count() <= 2_000, "{}", said.chars().count());
    assert_eq!(v["cut"], true);
    assert!(
        said.ends_with(&format!("the whole handoff is {}]\n", slot.display())),
        "{said}"
    );
    assert!(
        std::fs::read_to_string(&slot)
            .expect("slot")
            .contains("progress: complete")
    );
}

#[test]
fn brief_is_short_and_keeps_what_touches_its_paths() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    let slot = env.stored(&repo, &long_handoff(&repo.to_string_lossy()));
    let o = run(env
        .store()
        .args([
            "brief",
            "--task",
            "type Reminder",
            "--paths",
            "app/**",
            "-C",
        ])
        .arg(&repo));
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(
        o.stdout.chars().count() <= 1_500,
        "{}",
        o.stdout.chars().count()
    );
    assert!(
        o.stdout.starts_with("# Brief — type Reminder\n"),
        "{}",
        o.stdout
    );
    assert!(
        o.stdout.contains("- The queue keeps class names."),
        "a matching trap: {}",
        o.stdout
    );
    assert!(
        o.stdout.contains("- Any branch may be rebased."),
        "a trap citing nothing: {}",
        o.stdout
    );
    assert!(
        !o.stdout.contains("composer"),
        "nothing outside app/: {}",
        o.stdout
    );
    let (_, v) = json(
        env.store()
            .args(["brief", "--json", "--paths", "app/Mail", "-C"])
            .arg(&repo),
    );
    let text = v["text"].as_str().expect("text");
    assert!(text.contains("- `app/Mail/Invoice.php:24` — OK"), "{text}");
    let (_, v) = json(
        env.store()
            .args(["brief", "--json", "--paths", "composer.json", "-C"])
            .arg(&repo),
    );
    let text = v["text"].as_str().expect("text");
    assert!(
        text.contains("Decision 0: pin the autoloader") && !text.contains("class names"),
        "{text}"
    );
    assert_eq!(v["cut"], true, "sixty decisions do not fit");
    assert!(text.chars().count() <= 1_500 && text.contains("the whole handoff is "));
    assert!(
        std::fs::read_to_string(&slot)
            .expect("slot")
            .contains("progress: complete"),
        "never consumed"
    );
    let other = env.shop("other", "main");
    assert_eq!(run(env.store().args(["brief", "-C"]).arg(&other)).code, 4);
}

/// A brief whose paths match nothing says so in one line (exit 0), not an empty brief.
#[test]
fn a_brief_with_no_match_says_so_in_one_line() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    env.stored(&repo, &canonical(&repo.to_string_lossy(), "main"));
    let o = run(env
        .store()
        .args(["brief", "--paths", "nowhere/**", "-C"])
        .arg(&repo));
    assert_eq!(
        (o.code, o.stdout.as_str()),
        (
            0,
            "Nothing in the handoff for `main` touches nowhere/**: no decision, trap or pointer.\n"
        )
    );
}

/// Lineage counts what a reader calls a change: a `fix` that moved line numbers only is the same
/// version (no new number, no title); an item said anew at its place is reworded, not one
/// removed and one added; a restore is the version it brought back, said as such.
#[test]
fn lineage_knows_a_line_number_fix_a_rewording_and_a_restore() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    let first = canonical(&repo.to_string_lossy(), "main");
    env.stored(&repo, &first);
    let title = |env: &TestEnv| {
        run(env
            .store()
            .args(["hook", "session-start"])
            .write_stdin(format!(
                r#"{{"session_id":"s","cwd":"{}","source":"compact"}}"#,
                repo.display()
            )))
        .stdout
    };
    // The cited line moves down two lines; `fix` heals the pointer.
    let php = repo.join("app/Mail/Invoice.php");
    let moved = format!(
        "<?php\n// new 1\n// new 2\n{}",
        &invoice_php()["<?php\n".len()..]
    );
    std::fs::write(&php, moved).expect("edit");
    let o = run(env.store().args(["fix", "-C"]).arg(&repo));
    assert_eq!(o.code, 0, "{}{}", o.stdout, o.stderr);
    let o = run(env.store().args(["log", "-C"]).arg(&repo));
    assert_eq!(
        o.stdout.lines().filter(|l| l.starts_with('#')).count(),
        1,
        "a line-number fix is no new version: {}",
        o.stdout
    );
    let t = title(&env);
    assert!(t.contains("source: compact)\\n"), "{t}");
    // The decision said anew, at its place.
    let slot = env.store_dir().join(env.slot_name(&repo, "main"));
    let second = std::fs::read_to_string(&slot).expect("slot");
    let reworded = second.replace(
        "- Type the builder's return, not each caller — chosen over annotating every call\n  site, because the type is lost at the boundary.",
        "- Annotate the return type once in the builder: per-caller hints lose it at the boundary.",
    );
    assert_ne!(reworded, second, "the decision was not found");
    env.stored(&repo, &reworded);
    let t = title(&env);
    assert!(
        t.contains("— handoff #2: ~1 decision reworded since #1"),
        "{t}"
    );
    // Bring the first text back.
    let o = run(env.store().args(["restore", "-C"]).arg(&repo));
    assert_eq!(o.code, 0, "{}{}", o.stdout, o.stderr);
    let t = title(&env);
    assert!(t.contains("— restored handoff #1"), "{t}");
    let o = run(env.store().args(["log", "-n", "1", "-C"]).arg(&repo));
    assert!(o.stdout.starts_with("#1 restored "), "{}", o.stdout);
    // A new text after it is #3, not #2 again.
    env.stored(
        &repo,
        &reworded.replace("### Traps\n- None.", "### Traps\n- A third text."),
    );
    let o = run(env.store().args(["log", "-n", "1", "-C"]).arg(&repo));
    assert!(o.stdout.starts_with("#3 "), "{}", o.stdout);
}

/// A chain recorded before versions carried their number (`seq:`), pulled or left from an older
/// build: a read (a consume) records its flip without counting the chain (its number stays
/// unknown: no `seq:`), `log` shows an unknown number as `#?` past the 2,000 commits it counts,
/// and the next new text is numbered once, from the first-parent line as git counts it.
#[test]
fn a_chain_without_numbers_is_counted_once_at_its_next_new_text() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    let first = canonical(&repo.to_string_lossy(), "main");
    let slot = env.stored(&repo, &first);
    // 2,100 commits of the slot's text, none with a number, as the chain of the branch.
    let doc = std::fs::read(&slot).expect("slot");
    let mut stream = Vec::new();
    stream.extend_from_slice(format!("blob\nmark :1\ndata {}\n", doc.len()).as_bytes());
    stream.extend_from_slice(&doc);
    stream.push(b'\n');
    for i in 1..=2_100u64 {
        let meta = format!("written-at: {}\nbranch: main\nhost: h\n", 1_764_800_000 + i);
        stream.extend_from_slice(
            format!(
                "commit refs/handoffs/main\nmark :{}\ncommitter a <a@b> {} +0000\ndata 2\nv\n",
                i + 1,
                1_764_800_000 + i
            )
            .as_bytes(),
        );
        if i > 1 {
            stream.extend_from_slice(format!("from :{i}\n").as_bytes());
        }
        stream.extend_from_slice(
            format!(
                "M 100644 :1 handoff.md\nM 100644 inline meta\ndata {}\n{meta}\n",
                meta.len()
            )
            .as_bytes(),
        );
    }
    let mut import = std::process::Command::new("git")
        .args(["fast-import", "--quiet", "--force"])
        .current_dir(&repo)
        .stdin(std::process::Stdio::piped())
        .spawn()
        .expect("git fast-import");
    use std::io::Write;
    import
        .stdin
        .take()
        .expect("stdin")
        .write_all(&stream)
        .expect("stream");
    assert!(import.wait().expect("import").success());
    let meta = |env: &TestEnv| env.git(&repo, &["cat-file", "-p", "refs/handoffs/main:meta"]);
    assert!(!meta(&env).contains("seq:"), "{}", meta(&env));

    let o = run(env.store().args(["read", "-C"]).arg(&repo));
    assert_eq!(o.code, 0, "{}", o.stderr);
    let flipped = meta(&env);
    assert!(flipped.contains("progress: consumed"), "{flipped}");
    assert!(
        !flipped.contains("seq:"),
        "a consume counts nothing: {flipped}"
    );
    let (code, v) = json(
        env.store()
            .args(["log", "--json", "-n", "1", "-C"])
            .arg(&repo),
    );
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["versions"][0]["seq"], serde_json::Value::Null, "{v}");
    let o = run(env.store().args(["log", "-n", "1", "-C"]).arg(&repo));
    assert!(o.stdout.starts_with("#? "), "{}", o.stdout);

    let line = env.git(
        &repo,
        &[
            "rev-list",
            "--first-parent",
            "--count",
            "refs/handoffs/main",
        ],
    );
    let second = first.replace(
        "### Traps\n- None.",
        "### Traps\n- The queue serialises the class name: rename it and old jobs fail.",
    );
    env.stored(&repo, &second);
    let numbered = meta(&env);
    let expected = line.parse::<u64>().expect("count") + 1;
    assert!(
        numbered.contains(&format!("\nseq: {expected}\n")),
        "{expected}: {numbered}"
    );
    let o = run(env.store().args(["log", "-n", "1", "-C"]).arg(&repo));
    assert!(
        o.stdout.starts_with(&format!("#{expected} ")),
        "{}",
        o.stdout
    );
}
