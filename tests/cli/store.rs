//! The store (store.md): location, naming against real repositories, orient/path, write,
//! list, set-progress, history/restore, prune and concurrency. `read` and drift are in
//! `read.rs`.

use std::path::Path;

use crate::util::{TestEnv, canonical, json, mtime, run, version};

fn orient_value(out: &str, key: &str) -> String {
    out.lines()
        .find_map(|l| l.strip_prefix(&format!("{key}=")))
        .unwrap_or_else(|| panic!("no {key}= in {out}"))
        .to_string()
}

/// `--format` is one global option: before the command or after it, the same answer.
#[test]
fn format_is_accepted_before_or_after_the_command() {
    let env = TestEnv::new();
    let repo = env.repo("r", "main", &[("a.txt", "a\n")]);
    let after = run(env.store().args(["path", "--format", "json"]).arg(&repo));
    let before = run(env.store().args(["--format", "json", "path"]).arg(&repo));
    assert_eq!(
        (after.code, before.code),
        (0, 0),
        "{}{}",
        after.stderr,
        before.stderr
    );
    assert!(
        after.stdout.starts_with("{\"schema_version\":1,\"path\":"),
        "{}",
        after.stdout
    );
    assert_eq!(before.stdout, after.stdout);
}

#[test]
fn store_directory_follows_the_three_rules() {
    let env = TestEnv::new();
    let repo = env.repo("r", "main", &[("a.txt", "a\n")]);
    let name = env.slot_name(&repo, "main");
    let path = |c: &mut assert_cmd::Command| run(c.arg("path").arg(&repo)).stdout;
    assert_eq!(
        path(&mut env.store()),
        format!("{}/{name}\n", env.store_dir().display())
    );
    assert_eq!(
        path(env.store().env(
            "HANDOFF_STORE_DIR",
            format!("{}/", env.store_dir().display())
        )),
        format!("{}/{name}\n", env.store_dir().display()),
        "one trailing slash is removed"
    );
    assert_eq!(
        path(
            env.cmd("handoff-store")
                .env("XDG_DATA_HOME", env.path("xdg"))
        ),
        format!(
            "{}/context-economy/handoffs/{name}\n",
            env.path("xdg").display()
        )
    );
    let default = format!(
        "{}/.local/share/context-economy/handoffs/{name}\n",
        env.home().display()
    );
    assert_eq!(path(&mut env.cmd("handoff-store")), default, "unset");
    assert_eq!(
        path(env.cmd("handoff-store").env("XDG_DATA_HOME", "")),
        default,
        "empty counts as unset"
    );
    assert_eq!(
        path(
            env.cmd("handoff-store")
                .env("XDG_DATA_HOME", "relative/data")
                .current_dir(env.path(""))
        ),
        default,
        "a relative XDG_DATA_HOME is ignored, as the XDG specification requires"
    );
    assert_eq!(
        path(env.store().env("XDG_DATA_HOME", env.path("xdg"))),
        format!("{}/{name}\n", env.store_dir().display()),
        "HANDOFF_STORE_DIR wins over XDG_DATA_HOME"
    );
    let o = run(env
        .cmd("handoff-store")
        .env("HOME", "")
        .arg("path")
        .arg(&repo));
    let from_passwd = std::process::Command::new("sh")
        .arg("-c")
        .arg("getent passwd $(id -u) | cut -d: -f6")
        .output()
        .expect("getent");
    let home = String::from_utf8_lossy(&from_passwd.stdout)
        .trim()
        .to_string();
    assert_eq!(
        o.stdout,
        format!("{home}/.local/share/context-economy/handoffs/{name}\n"),
        "HOME empty falls back to passwd"
    );
    env.write("notdir", "x");
    let o = run(env
        .store()
        .env("HANDOFF_STORE_DIR", env.path("notdir"))
        .arg("list"));
    assert_eq!(
        o.stderr,
        format!(
            "handoff-store: the handoff store {} is not a directory\n",
            env.path("notdir").display()
        )
    );
    assert_eq!(o.code, 3);
}

#[test]
fn slots_are_named_from_the_main_worktree_and_the_branch() {
    let env = TestEnv::new();
    let repo = env.repo("my repo", "main", &[("sub/a.txt", "a\n")]);
    let path = |dir: &Path| {
        run(env.store().arg("path").arg(dir))
            .stdout
            .trim()
            .to_string()
    };
    let main_slot = env
        .store_dir()
        .join(env.slot_name(&repo, "main"))
        .display()
        .to_string();
    assert!(main_slot.contains("my_repo-main-"));
    assert_eq!(path(&repo), main_slot);
    assert_eq!(path(&repo.join("sub")), main_slot, "subdirectory");
    std::os::unix::fs::symlink(&repo, env.path("link")).expect("symlink");
    assert_eq!(
        path(&env.path("link")),
        main_slot,
        "symlinked invocation path"
    );
    env.git(&repo, &["branch", "feature/x"]);
    env.git(
        &repo,
        &[
            "worktree",
            "add",
            "-q",
            &env.path("wt").to_string_lossy(),
            "feature/x",
        ],
    );
    let feature_slot = env
        .store_dir()
        .join(env.slot_name(&repo, "feature/x"))
        .display()
        .to_string();
    assert!(feature_slot.contains("-feature-x-"));
    assert_eq!(
        path(&env.path("wt")),
        feature_slot,
        "a linked worktree keys by the main worktree"
    );
    let o = run(env
        .store()
        .arg("path")
        .env("CONTEXT_ECONOMY_CHECKOUT", env.path("wt")));
    assert_eq!(o.stdout.trim(), feature_slot, "CONTEXT_ECONOMY_CHECKOUT");
    let o = run(env
        .store()
        .arg("path")
        .current_dir(env.root())
        .env("GIT_DIR", repo.join(".git")));
    assert_eq!(o.stdout.trim(), main_slot, "GIT_DIR is honoured");
    let short = env.git(&repo, &["rev-parse", "--short", "HEAD"]);
    env.git(&repo, &["checkout", "-q", "--detach"]);
    assert_eq!(
        path(&repo),
        env.store_dir()
            .join(env.slot_name(&repo, &short))
            .display()
            .to_string(),
        "detached"
    );
}

#[test]
fn targets_without_a_slot_are_refused_with_the_exact_message() {
    let env = TestEnv::new();
    env.write("plain/x", "x");
    env.git(&env.root(), &["init", "-q", "--bare", "bare.git"]);
    let cases = [
        (env.path("plain"), "is not inside a git checkout"),
        (env.path("plain/x"), "is not a directory"),
        (
            env.path("bare.git"),
            "is a bare repository; a handoff needs a work tree",
        ),
    ];
    for (dir, text) in cases {
        // One rule for every command that needs a checkout: exit 3, one line naming -C DIR.
        for cmd in [
            "orient", "path", "read", "history", "new", "config", "log", "fix", "restore",
        ] {
            if cmd == "config" && text == "is not inside a git checkout" {
                // `config` outside a checkout shows the global settings (settings.rs).
                continue;
            }
            let o = run(env.store().arg(cmd).arg("-C").arg(&dir));
            assert_eq!(
                o.stderr,
                format!(
                    "handoff-store: {} {text} (name one with -C DIR)\n",
                    dir.display()
                ),
                "{cmd}"
            );
            assert_eq!(o.stdout, "", "{cmd}");
            assert_eq!(o.code, 3, "{cmd}");
        }
        let o = run(env
            .store()
            .args(["write", "--checkout"])
            .arg(&dir)
            .write_stdin("# Handoff\n"));
        assert_eq!(o.code, 3, "write exits 3: {}", o.stderr);
        assert!(!env.store_dir().exists(), "nothing written");
    }
    let o = run(env
        .store()
        .arg("orient")
        .env("CONTEXT_ECONOMY_CHECKOUT", env.path("plain")));
    assert_eq!(
        o.stderr,
        format!(
            "handoff-store: CONTEXT_ECONOMY_CHECKOUT={} is not inside a git checkout (name one with -C DIR)\n",
            env.path("plain").display()
        )
    );
}

#[test]
fn orient_prints_eight_keys_then_drift() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    let o = run(env.store().arg("orient").arg(&repo));
    let keys: Vec<&str> = o
        .stdout
        .lines()
        .map(|l| l.split('=').next().unwrap_or(""))
        .collect();
    assert_eq!(
        keys,
        [
            "main", "checkout", "branch", "handoff", "exists", "mtime", "progress", "gate"
        ]
    );
    assert_eq!(
        orient_value(&o.stdout, "handoff"),
        format!(
            "{}/{}",
            env.store_dir().display(),
            env.slot_name(&repo, "main")
        )
    );
    assert_eq!(orient_value(&o.stdout, "exists"), "0");
    assert_eq!(orient_value(&o.stdout, "mtime"), "");
    assert!(Path::new(&orient_value(&o.stdout, "gate")).is_file());
    assert!(env.store_dir().is_dir(), "orient creates the store");
    env.stored(&repo, &canonical(&repo.to_string_lossy(), "main"));
    let o = run(env.store().arg("orient").arg(&repo));
    assert_eq!(orient_value(&o.stdout, "exists"), "1");
    assert_eq!(orient_value(&o.stdout, "progress"), "complete");
    assert!(!orient_value(&o.stdout, "mtime").is_empty());
    env.git(&repo, &["commit", "-q", "--allow-empty", "-m", "next"]);
    let o = run(env.store().arg("orient").arg(&repo));
    assert!(
        o.stdout.contains("\ngate=")
            && o.stdout
                .contains("\ndrift=1 commit(s) since this handoff was written ("),
        "{}",
        o.stdout
    );
    let short = env.git(&repo, &["rev-parse", "--short", "HEAD"]);
    env.git(&repo, &["checkout", "-q", "--detach"]);
    let (code, v) = json(env.store().args(["orient", "--format", "json"]).arg(&repo));
    assert_eq!(code, 0);
    assert_eq!(v["branch"], short.as_str());
    assert_eq!(v["detached"], true);
    assert_eq!(v["exists"], false);
}

fn slot_text(env: &TestEnv, repo: &Path, reference: &str) -> String {
    std::fs::read_to_string(env.store_dir().join(env.slot_name(repo, reference))).expect("slot")
}

#[test]
fn write_forces_the_envelope_fields() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    let head = env.git(&repo, &["rev-parse", "HEAD"]);
    let doc = canonical("/somewhere/else", "old-branch")
        .replace("progress: complete\n", "write_session: abc\n");
    let o = run(env
        .store()
        .args(["write", "--checkout"])
        .arg(&repo)
        .write_stdin(doc));
    assert_eq!(o.code, 0, "{}{}", o.stdout, o.stderr);
    let text = slot_text(&env, &repo, "main");
    assert!(text.starts_with(&format!(
        "# Handoff — type the mailables\nbranch: main\ncheckout: {}\nstatus: Invoice done; Reminder not started. Gate run, format held.\nprogress: complete\nhead: {head}\n\n## Do not re-derive",
        repo.display()
    )), "{text}");
    assert!(!text.contains("write_session"));
    let bare = "# Handoff — x\nstatus: s\n\n## Do not re-derive\n\n### Decisions\n- None.\n\n### Dead ends\n- None.\n\n### Traps\n- None.\n\n## Next\n1. x\n\n## Pointers\n```\n```\n";
    let o = run(env
        .store()
        .args(["write", "--checkout"])
        .arg(&repo)
        .write_stdin(bare.replace('\n', "\r\n")));
    assert_eq!(o.code, 0, "{}{}", o.stdout, o.stderr);
    let text = slot_text(&env, &repo, "main");
    assert!(text.starts_with(&format!(
        "# Handoff — x\r\nbranch: main\r\ncheckout: {}\r\nstatus: s\r\nprogress: complete\r\nhead: {head}\r\n\r\n",
        repo.display()
    )), "CRLF is kept and used for inserted lines: {text:?}");
    let low = format!("{}{bare}", "\n".repeat(17));
    let o = run(env
        .store()
        .args(["write", "--checkout"])
        .arg(&repo)
        .write_stdin(low));
    assert_eq!(
        o.stderr,
        "handoff-store: the title must be near the top: the envelope would end after line 20; nothing was stored\n"
    );
    assert_eq!(o.code, 2);
}

#[test]
fn a_malformed_draft_never_replaces_the_stored_handoff() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    let good = canonical(&repo.to_string_lossy(), "main");
    let slot = env.stored(&repo, &good);
    env.stored(
        &repo,
        &good.replace("status: Invoice done", "status: Invoice really done"),
    );
    let before = std::fs::read(&slot).expect("slot");
    let history_before: Vec<_> = std::fs::read_dir(env.store_dir().join(".history"))
        .expect("history")
        .flatten()
        .map(|e| e.path())
        .collect();
    let o = run(env
        .store()
        .args(["write", "--checkout"])
        .arg(&repo)
        .write_stdin(good.replace("### Traps", "### Gotchas")));
    assert_eq!(o.code, 2);
    assert!(
        o.stderr
            .contains("ERROR    required section missing: Traps\n")
    );
    assert!(o.stderr.ends_with(&format!(
        "handoff-store: not stored — the document violates the format contract (gate exit 2); {} is unchanged\n",
        slot.display()
    )), "{}", o.stderr);
    assert_eq!(std::fs::read(&slot).expect("slot"), before);
    let history_after: Vec<_> = std::fs::read_dir(env.store_dir().join(".history"))
        .expect("history")
        .flatten()
        .map(|e| e.path())
        .collect();
    assert_eq!(history_before, history_after);
    let (code, v) = json(
        env.store()
            .args(["write", "--format", "json", "--checkout"])
            .arg(&repo)
            .write_stdin(good.replace("### Traps", "### Gotchas")),
    );
    assert_eq!(code, 2);
    assert_eq!(v["stored"], false);
    assert_eq!(v["gate"]["exit"], 2);
    assert_eq!(v["gate"]["report"]["verdict"], "malformed");
}

#[test]
fn a_failing_gate_still_stores_with_exit_1() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    let doc = canonical(&repo.to_string_lossy(), "main")
        .replace("public function build", "private function gone");
    let o = run(env
        .store()
        .args(["write", "--checkout"])
        .arg(&repo)
        .write_stdin(doc));
    assert_eq!(o.code, 1);
    let slot = env.store_dir().join(env.slot_name(&repo, "main"));
    assert!(
        o.stdout.ends_with(&format!(
            "\nstored   {} (gate: FAILED, exit 1 — fix the citations and write again)\n",
            slot.display()
        )),
        "{}",
        o.stdout
    );
    assert!(slot.is_file());
}

#[test]
fn history_keeps_the_previous_ten_versions_with_their_mtimes() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    let slot = env.stored(&repo, &version(&repo, "v0"));
    env.age(&slot, 7200);
    let first_mtime = mtime(&slot);
    let o = run(env
        .store()
        .args(["write", "--checkout"])
        .arg(&repo)
        .write_stdin(version(&repo, "v1")));
    let kept = o
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("history  "))
        .expect("history line")
        .to_string();
    assert_eq!(mtime(Path::new(&kept)), first_mtime);
    assert!(
        std::fs::read_to_string(&kept)
            .expect("kept")
            .contains("status: v0 ")
    );
    for i in 2..14 {
        env.stored(&repo, &version(&repo, &format!("v{i}")));
    }
    let o = run(env.store().arg("history").arg(&repo));
    let lines: Vec<&str> = o.stdout.lines().collect();
    assert_eq!(lines.len(), 11, "the slot and ten versions: {}", o.stdout);
    assert!(lines[0].starts_with("0\t") && lines[10].starts_with("10\t"));
    assert!(lines[0].ends_with(&format!("\t{}", slot.display())));
    let version_1 = lines[1].rsplit('\t').next().expect("path");
    assert!(
        std::fs::read_to_string(version_1)
            .expect("v1")
            .contains("status: v12 ")
    );
    // Identical bytes add nothing.
    let same = std::fs::read_to_string(&slot).expect("slot");
    let o = run(env
        .store()
        .args(["write", "--checkout"])
        .arg(&repo)
        .write_stdin(same));
    assert!(!o.stdout.contains("history  "), "{}", o.stdout);
}

#[test]
fn placeholders_pass_the_gate_and_are_never_kept_in_history() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    let o = run(env
        .store()
        .args(["write", "--placeholder", "--checkout"])
        .arg(&repo)
        .env("HANDOFF_WRITE_SESSION", "sess-1"));
    assert_eq!(o.code, 0, "{}", o.stderr);
    let slot = env.store_dir().join(env.slot_name(&repo, "main"));
    assert_eq!(
        o.stdout,
        format!(
            "\nstored   {} (placeholder, progress: writing)\n",
            slot.display()
        )
    );
    let text = std::fs::read_to_string(&slot).expect("slot");
    assert!(text.contains("progress: writing\n") && text.contains("write_session: sess-1\n"));
    assert!(text.contains("(handoff-store read --wait 600 does this)"));
    let gate = run(env.verify().arg(&slot));
    assert_eq!(gate.code, 0, "{}", gate.stderr);
    assert!(
        gate.stdout
            .contains("no citations to check (Pointers is empty)")
    );
    let o = run(env
        .store()
        .args(["write", "--checkout"])
        .arg(&repo)
        .write_stdin(canonical(&repo.to_string_lossy(), "main")));
    assert!(
        !o.stdout.contains("history  "),
        "a placeholder is not kept: {}",
        o.stdout
    );
    let o = run(env
        .store()
        .args(["write", "--placeholder", "--checkout"])
        .arg(&repo)
        .env("HANDOFF_WRITE_SESSION", "../x;rm"));
    assert!(
        o.stdout.contains("history  "),
        "the real document is kept: {}",
        o.stdout
    );
    assert!(
        !std::fs::read_to_string(&slot)
            .expect("slot")
            .contains("write_session"),
        "unsafe id not written"
    );
    let o = run(env
        .store()
        .args(["write", "--placeholder", "--from", "x", "--checkout"])
        .arg(&repo));
    assert_eq!(o.code, 2);
}

#[test]
fn a_slot_owned_by_another_branch_is_refused_without_force() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "fix/foo");
    let slot = env.stored(&repo, &canonical(&repo.to_string_lossy(), "fix/foo"));
    env.git(&repo, &["checkout", "-q", "-b", "fix-foo"]);
    let doc = canonical(&repo.to_string_lossy(), "fix-foo");
    let o = run(env
        .store()
        .args(["write", "--checkout"])
        .arg(&repo)
        .write_stdin(doc.clone()));
    assert_eq!(
        o.stderr,
        format!(
            "handoff-store: refusing to overwrite {}: it holds the handoff for fix/foo in {}, not for fix-foo in {} (their file names collide)\nhint: pass --force to replace it (the old version goes to history)\n",
            slot.display(),
            repo.display(),
            repo.display()
        )
    );
    assert_eq!(o.stdout, "");
    assert_eq!(o.code, 3);
    let o = run(env
        .store()
        .args(["write", "--force", "--checkout"])
        .arg(&repo)
        .write_stdin(doc));
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stdout.contains("history  "));
}

#[test]
fn bad_drafts_exit_2_and_store_nothing() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    let write = |input: Vec<u8>| {
        run(env
            .store()
            .args(["write", "--checkout"])
            .arg(&repo)
            .write_stdin(input))
    };
    let cases: [(Vec<u8>, &str); 5] = [
        (
            Vec::new(),
            "handoff-store: the document is empty; nothing was stored\n",
        ),
        (
            b" \n\t\n".to_vec(),
            "handoff-store: the document is empty; nothing was stored\n",
        ),
        (
            b"# Handoff\n\xff\n".to_vec(),
            "handoff-store: the document is not valid UTF-8 (line 2); nothing was stored\n",
        ),
        (
            b"# Handoff\n\nx\0\n".to_vec(),
            "handoff-store: the document contains a NUL byte (line 3); nothing was stored\n",
        ),
        (
            vec![b'a'; 4 * 1024 * 1024 + 1],
            "handoff-store: the document is too large (more than 4 MiB); nothing was stored\n",
        ),
    ];
    for (input, message) in cases {
        let o = write(input);
        assert_eq!(o.stderr, message);
        assert_eq!(o.code, 2);
    }
    assert!(!env.store_dir().exists());
    let o = run(env
        .store()
        .args(["write", "--from", "missing.md", "--checkout"])
        .arg(&repo));
    assert_eq!(
        o.stderr,
        "handoff-store: cannot read missing.md: no such file or directory\n"
    );
    assert_eq!(o.code, 2);
    let secret = canonical(&repo.to_string_lossy(), "main").replace(
        "- None.",
        "- token=ghp_abcdefghijklmnopqrstuvwxyz0123456789",
    );
    let o = run(env
        .store()
        .args(["write", "--no-gate", "--checkout"])
        .arg(&repo)
        .write_stdin(secret));
    assert_eq!(o.code, 2);
    assert!(o.stderr.contains("looks like a credential (GitHub token)"));
    assert!(!o.stderr.contains("ghp_"));
    assert!(!env.store_dir().join(env.slot_name(&repo, "main")).exists());
    let o = run(env
        .store()
        .args(["write", "--no-gate", "--checkout"])
        .arg(&repo)
        .write_stdin("# Handoff — rough\nstatus: s\n"));
    assert_eq!(
        o.code, 0,
        "--no-gate stores a malformed draft: {}",
        o.stderr
    );
    assert!(o.stdout.ends_with("(gate: not run, --no-gate)\n"));
}

#[test]
fn list_shows_candidates_only_newest_first() {
    let env = TestEnv::new();
    let a = env.shop("a", "main");
    let b = env.shop("b", "main");
    let slot_a = env.stored(&a, &canonical(&a.to_string_lossy(), "main"));
    let slot_b = env.stored(&b, &canonical(&b.to_string_lossy(), "main"));
    env.age(&slot_b, 3600);
    let store = env.store_dir();
    std::fs::write(store.join("empty.md"), "").expect("empty");
    std::fs::write(store.join(".tmp.x.md.1.2"), "x").expect("tmp");
    std::fs::write(store.join("old.md.tmp.123"), "x").expect("bash tmp");
    std::os::unix::fs::symlink(&slot_a, store.join("link.md")).expect("symlink");
    std::fs::create_dir_all(store.join("dir.md")).expect("dir");
    let o = run(env.store().arg("list"));
    let paths: Vec<&str> = o
        .stdout
        .lines()
        .map(|l| l.rsplit('\t').next().unwrap_or(""))
        .collect();
    assert_eq!(paths, [slot_a.to_string_lossy(), slot_b.to_string_lossy()]);
    assert!(o.stdout.lines().all(|l| l.split('\t').count() == 5));
    let epoch = mtime(&slot_a)
        .duration_since(std::time::UNIX_EPOCH)
        .expect("epoch")
        .as_secs();
    let date = std::process::Command::new("date")
        .args(["-u", "-d", &format!("@{epoch}"), "+%Y-%m-%dT%H:%M:%SZ"])
        .output()
        .expect("date");
    let iso = String::from_utf8_lossy(&date.stdout).trim().to_string();
    assert!(
        o.stdout
            .starts_with(&format!("{iso}\tcomplete\tmain\t{}\t", a.display())),
        "{}",
        o.stdout
    );
    assert_eq!(
        o.stderr,
        "handoff-store: note: 3 empty or unreadable file(s) skipped\n"
    );
    let (code, v) = json(env.store().args(["list", "--format", "json"]));
    assert_eq!(code, 0);
    assert_eq!(v["skipped"], 3);
    assert_eq!(
        v["handoffs"][1]["name"],
        slot_b
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    );
    let o = run(env
        .store()
        .env("HANDOFF_STORE_DIR", env.path("none"))
        .arg("list"));
    assert_eq!((o.code, o.stdout.as_str()), (0, ""));
}

#[test]
fn set_progress_rewrites_one_line_and_keeps_everything_else() {
    let env = TestEnv::new();
    let body =
        "# Handoff\r\nstatus: s\r\nx\t\\ `y` \"q\"\r\n## Do not re-derive\r\nprogress: decoy\r\n";
    let file = env.write("store/h.md", body);
    env.age(&file, 5000);
    let before = mtime(&file);
    let o = run(env
        .store()
        .args(["set-progress"])
        .arg(&file)
        .arg("consumed"));
    assert_eq!(
        o.stdout,
        format!("progress {}: (absent) -> consumed\n", file.display())
    );
    assert_eq!(
        std::fs::read_to_string(&file).expect("file"),
        body.replace("status: s\r\n", "status: s\r\nprogress: consumed\r\n")
    );
    assert_eq!(mtime(&file), before, "mtime kept");
    let o = run(env
        .store()
        .args(["set-progress"])
        .arg(&file)
        .arg("complete"));
    assert_eq!(
        o.stdout,
        format!("progress {}: consumed -> complete\n", file.display())
    );
    let o = run(env
        .store()
        .args(["set-progress"])
        .arg(&file)
        .arg("complete"));
    assert_eq!(o.code, 0, "idempotent");
    let (_, v) = json(
        env.store()
            .args(["set-progress", "--format", "json"])
            .arg(&file)
            .arg("complete"),
    );
    assert_eq!(v["changed"], false);
    let none = env.write("store/n.md", "# Handoff\n## x\nstatus: late\n");
    let o = run(env
        .store()
        .args(["set-progress"])
        .arg(&none)
        .arg("consumed"));
    assert_eq!(
        o.stdout,
        format!(
            "unchanged {} (no progress: or status: line in the first 20 lines)\n",
            none.display()
        )
    );
    assert_eq!(o.code, 1);
    let link = env.store_dir().join("l.md");
    std::os::unix::fs::symlink(&file, &link).expect("symlink");
    let o = run(env
        .store()
        .args(["set-progress"])
        .arg(&link)
        .arg("consumed"));
    assert_eq!(o.code, 3);
    assert_eq!(
        o.stderr,
        format!("handoff-store: {} is not a regular file\n", link.display())
    );
    let o = run(env.store().args(["set-progress"]).arg(&file).arg("done"));
    assert_eq!(o.code, 2);
}

/// `set-progress VALUE` changes this checkout's slot; a FILE outside the store is refused,
/// untouched, with what to do instead.
#[test]
fn set_progress_works_on_this_checkouts_slot_and_refuses_a_file_outside_the_store() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    let slot = env.stored(&repo, &canonical(&repo.to_string_lossy(), "main"));
    let o = run(env
        .store()
        .args(["set-progress", "consumed"])
        .current_dir(&repo));
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_eq!(
        o.stdout,
        format!("progress {}: complete -> consumed\n", slot.display())
    );
    assert!(
        std::fs::read_to_string(&slot)
            .expect("slot")
            .contains("progress: consumed\n")
    );
    let o = run(env
        .store()
        .args(["set-progress", "complete", "-C"])
        .arg(&repo));
    assert_eq!(o.code, 0, "{}", o.stderr);

    let draft_text = "# Handoff\nprogress: complete\n";
    let draft = env.write("draft.md", draft_text);
    let o = run(env.store().arg("set-progress").arg(&draft).arg("consumed"));
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert_eq!(
        o.stderr,
        format!(
            "handoff-store: set-progress changes a stored handoff, and {} is not in the store\nhint: without FILE it changes this checkout's (handoff-store path names it); a draft's progress: line is yours to edit\n",
            draft.display()
        )
    );
    assert_eq!(std::fs::read_to_string(&draft).expect("draft"), draft_text);
    let o = run(env
        .store()
        .args(["set-progress", "done"])
        .current_dir(&repo));
    assert_eq!(o.code, 2, "{}", o.stderr);
    // Not in a checkout: the target is unusable (exit 3, as for every command but orient/path).
    let o = run(env
        .store()
        .args(["set-progress", "consumed"])
        .current_dir(env.root()));
    assert_eq!(o.code, 3, "{}", o.stderr);
}

#[test]
fn restore_swaps_a_version_back_and_again_undoes_it() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    let doc = |s: &str| version(&repo, s);
    let slot = env.stored(&repo, &doc("first"));
    env.age(&slot, 86_400);
    let first_mtime = mtime(&slot);
    env.stored(&repo, &doc("second"));
    let o = run(env.store().arg("restore").arg(&repo));
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(
        o.stdout
            .starts_with(&format!("restored {} from version 1 (", slot.display())),
        "{}",
        o.stdout
    );
    assert!(o.stdout.contains("\nhistory  "));
    assert!(
        std::fs::read_to_string(&slot)
            .expect("slot")
            .contains("status: first ")
    );
    assert_eq!(mtime(&slot), first_mtime);
    run(env.store().arg("restore").arg(&repo));
    assert!(
        std::fs::read_to_string(&slot)
            .expect("slot")
            .contains("status: second "),
        "undo"
    );
    let o = run(env.store().args(["restore", "--version", "5"]).arg(&repo));
    assert_eq!(
        o.stderr,
        format!(
            "handoff-store: {} has no version 5 in history (it has 1)\n",
            slot.display()
        )
    );
    assert_eq!(o.code, 4);
}

#[test]
fn prune_deletes_only_what_the_dry_run_listed() {
    let env = TestEnv::new();
    let live = env.shop("live", "main");
    let gone = env.shop("gone", "main");
    let consumed = env.shop("consumed", "main");
    let unread = env.stored(&live, &canonical(&live.to_string_lossy(), "main"));
    let orphan = env.stored(&gone, &canonical(&gone.to_string_lossy(), "main"));
    let read = env.stored(&consumed, &canonical(&consumed.to_string_lossy(), "main"));
    run(env
        .store()
        .args(["set-progress"])
        .arg(&read)
        .arg("consumed"));
    std::fs::remove_dir_all(&gone).expect("rm repo");
    for f in [&unread, &orphan, &read] {
        env.age(f, 40 * 86_400);
    }
    let temp = env.store_dir().join(".tmp.x.md.1.abc");
    std::fs::write(&temp, "x").expect("temp");
    env.age(&temp, 7200);
    let fresh_temp = env.store_dir().join(".tmp.y.md.1.abc");
    std::fs::write(&fresh_temp, "x").expect("temp");
    let dry = run(env.store().arg("prune"));
    assert!(
        dry.stdout.contains(&format!(
            "would delete  {}  (checkout gone, 40 days old)\n",
            orphan.display()
        )),
        "{}",
        dry.stdout
    );
    assert!(dry.stdout.contains(&format!(
        "would delete  {}  (consumed, 40 days old)\n",
        read.display()
    )));
    assert!(dry.stdout.contains(&format!(
        "would delete  {}  (stale temp file, 2 hours old)\n",
        temp.display()
    )));
    assert!(
        !dry.stdout.contains(&unread.display().to_string()),
        "an unread handoff on a live branch stays"
    );
    assert!(
        dry.stdout
            .ends_with("3 item(s) would be deleted; run with --apply to delete them.\n")
    );
    assert!(
        orphan.exists() && read.exists() && temp.exists(),
        "the dry run deletes nothing"
    );
    let applied = run(env.store().args(["prune", "--apply"]));
    assert_eq!(
        applied.stdout,
        dry.stdout.replace("would delete", "deleted     ").replace(
            "3 item(s) would be deleted; run with --apply to delete them.",
            "3 item(s) deleted."
        )
    );
    assert!(!orphan.exists() && !read.exists() && !temp.exists());
    assert!(unread.exists() && fresh_temp.exists());
    assert_eq!(run(env.store().arg("prune")).stdout, "nothing to prune.\n");
}

#[test]
fn completions_cover_the_subcommands() {
    let env = TestEnv::new();
    let o = run(env.store().args(["completions", "bash"]));
    assert_eq!(o.code, 0);
    for word in ["orient", "set-progress", "--no-consume", "--placeholder"] {
        assert!(o.stdout.contains(word), "{word}");
    }
    assert_eq!(run(env.store().args(["completions", "tcsh"])).code, 2);
}

#[test]
fn the_store_is_private_to_its_user() {
    use std::os::unix::fs::PermissionsExt;
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    let slot = env.stored(&repo, &canonical(&repo.to_string_lossy(), "main"));
    env.stored(&repo, &version(&repo, "again"));
    let mode = |p: &Path| std::fs::metadata(p).expect("meta").permissions().mode() & 0o777;
    assert_eq!(mode(&env.store_dir()), 0o700);
    assert_eq!(mode(&env.store_dir().join(".locks")), 0o700);
    assert_eq!(mode(&env.store_dir().join(".history")), 0o700);
    assert_eq!(mode(&slot), 0o600);
    let lock = env.store_dir().join(".locks").join(format!(
        "{}.lock",
        slot.file_name().expect("name").to_string_lossy()
    ));
    assert_eq!(mode(&lock), 0o600);
    for v in std::fs::read_dir(
        env.store_dir()
            .join(".history")
            .join(slot.file_name().expect("name")),
    )
    .expect("history")
    .flatten()
    {
        assert_eq!(mode(&v.path()), 0o600);
    }
}

#[test]
fn twenty_concurrent_writers_leave_one_whole_document_and_clean_history() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    let slot_path = env.store_dir().join(env.slot_name(&repo, "main"));
    env.stored(&repo, &canonical(&repo.to_string_lossy(), "main"));
    // A reader in a loop must only ever see a whole document.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let reader = {
        let (stop, slot_path) = (stop.clone(), slot_path.clone());
        std::thread::spawn(move || {
            let mut reads = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let text = std::fs::read_to_string(&slot_path).expect("the slot always exists");
                assert!(text.starts_with("# Handoff") && text.ends_with("## Unverifiable\n- `ops-config/mail/transport.php` lives in the ops repository, not in this checkout.\n"), "partial read: {text:?}");
                reads += 1;
            }
            reads
        })
    };
    let bin = assert_cmd::cargo::cargo_bin("handoff-store");
    let children: Vec<_> = (0..20)
        .map(|i| {
            let doc = version(&repo, &format!("writer {i}"));
            let mut child = std::process::Command::new(&bin)
                .args(["write", "--checkout"])
                .arg(&repo)
                .env("HANDOFF_STORE_DIR", env.store_dir())
                .env("HOME", env.home())
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn()
                .expect("spawn");
            use std::io::Write;
            child
                .stdin
                .take()
                .expect("stdin")
                .write_all(doc.as_bytes())
                .expect("feed");
            child
        })
        .collect();
    for mut c in children {
        assert!(c.wait().expect("wait").success());
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    assert!(reader.join().expect("reader") > 0);
    let slot = env.store_dir().join(env.slot_name(&repo, "main"));
    let gate = run(env.verify().arg(&slot));
    assert_eq!(gate.code, 0, "{}{}", gate.stdout, gate.stderr);
    let versions: Vec<_> = std::fs::read_dir(
        env.store_dir()
            .join(".history")
            .join(slot.file_name().expect("name")),
    )
    .expect("history")
    .flatten()
    .collect();
    assert_eq!(versions.len(), 10);
    for v in versions {
        let g = run(env.verify().arg(v.path()));
        assert_eq!(g.code, 0, "torn history entry {}", v.path().display());
    }
    let temps = std::fs::read_dir(env.store_dir())
        .expect("store")
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(".tmp."))
        .count();
    assert_eq!(temps, 0);
}

#[test]
fn bad_input_rows_of_the_store() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    let doc = canonical(&repo.to_string_lossy(), "main");
    // The store path is a file: every command exits 3 with the exact message.
    env.write("notdir", "x");
    let msg = format!(
        "handoff-store: the handoff store {} is not a directory\n",
        env.path("notdir").display()
    );
    let args: [&[&str]; 4] = [&["orient"], &["read"], &["history"], &["prune"]];
    for a in args {
        let o = run(env
            .store()
            .env("HANDOFF_STORE_DIR", env.path("notdir"))
            .args(a)
            .arg(if a[0] == "prune" { "--apply" } else { "." })
            .current_dir(&repo));
        assert_eq!((o.code, o.stderr.as_str()), (3, msg.as_str()), "{a:?}");
    }
    let o = run(env
        .store()
        .env("HANDOFF_STORE_DIR", env.path("notdir"))
        .args(["set-progress"])
        .arg(env.write("loose.md", "# Handoff\nstatus: s\n"))
        .arg("consumed"));
    assert_eq!(
        (o.code, o.stderr.as_str()),
        (3, msg.as_str()),
        "set-progress"
    );
    let o = run(env
        .store()
        .env("HANDOFF_STORE_DIR", env.path("notdir"))
        .args(["write", "--checkout"])
        .arg(&repo)
        .write_stdin(doc.clone()));
    assert_eq!((o.code, o.stderr.as_str()), (3, msg.as_str()));

    // A slot that is a symlink is never written through.
    std::fs::create_dir_all(env.store_dir()).expect("store");
    let slot = env.store_dir().join(env.slot_name(&repo, "main"));
    let target = env.write("elsewhere.md", "# Handoff — not mine\n");
    std::os::unix::fs::symlink(&target, &slot).expect("symlink");
    let o = run(env
        .store()
        .args(["write", "--checkout"])
        .arg(&repo)
        .write_stdin(doc.clone()));
    assert_eq!(
        o.stderr,
        format!("handoff-store: {} is not a regular file\n", slot.display())
    );
    assert_eq!(o.code, 3);
    assert_eq!(
        std::fs::read_to_string(&target).expect("target"),
        "# Handoff — not mine\n"
    );
    std::fs::remove_file(&slot).expect("rm");

    // --wait is bounded and numeric.
    for bad in ["3601", "abc", "-1"] {
        let o = run(env.store().args(["read", "--wait", bad]).arg(&repo));
        assert_eq!(o.code, 2, "--wait {bad}");
    }
    // set-progress on a directory in the store.
    let folder = env.store_dir().join("folder.md");
    std::fs::create_dir_all(&folder).expect("folder");
    let o = run(env
        .store()
        .args(["set-progress"])
        .arg(&folder)
        .arg("consumed"));
    assert_eq!(o.code, 3, "{}", o.stderr);
    std::fs::remove_dir(&folder).expect("folder");
    // write cleans stale temp files: an hour old, or made by a dead process; never a live
    // writer's (this test process stands for one).
    let name = slot
        .file_name()
        .expect("name")
        .to_string_lossy()
        .into_owned();
    let stale = env.store_dir().join(format!(".tmp.{name}.1.abc"));
    std::fs::write(&stale, "half").expect("stale");
    env.age(&stale, 7200);
    let fresh = env
        .store_dir()
        .join(format!(".tmp.{name}.{}.abc", std::process::id()));
    std::fs::write(&fresh, "in flight").expect("fresh");
    env.stored(&repo, &doc);
    assert!(!stale.exists() && fresh.exists());
}

#[test]
fn a_symlinked_or_relative_store_keeps_its_configured_spelling() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    std::fs::create_dir_all(env.path("real-store")).expect("real store");
    std::os::unix::fs::symlink(env.path("real-store"), env.path("link-store")).expect("symlink");
    let o = run(env
        .store()
        .env("HANDOFF_STORE_DIR", env.path("link-store"))
        .arg("path")
        .arg(&repo));
    assert_eq!(
        o.stdout,
        format!(
            "{}/{}\n",
            env.path("link-store").display(),
            env.slot_name(&repo, "main")
        )
    );
    let o = run(env
        .store()
        .env("HANDOFF_STORE_DIR", env.path("link-store"))
        .args(["write", "--checkout"])
        .arg(&repo)
        .write_stdin(canonical(&repo.to_string_lossy(), "main")));
    assert_eq!(o.code, 0);
    assert!(
        env.path("real-store")
            .join(env.slot_name(&repo, "main"))
            .is_file(),
        "the symlink is followed"
    );
    let o = run(env
        .cmd("handoff-store")
        .env("HANDOFF_STORE_DIR", "rel")
        .arg("path")
        .arg(&repo)
        .current_dir(env.root()));
    assert_eq!(
        o.stdout,
        format!("rel/{}\n", env.slot_name(&repo, "main")),
        "a relative HANDOFF_STORE_DIR is used as given (a relative XDG_DATA_HOME is ignored: \
         store_directory_follows_the_three_rules)"
    );
    let o = run(env
        .cmd("handoff-store")
        .env("XDG_DATA_HOME", "")
        .arg("path")
        .arg(&repo));
    assert_eq!(
        o.stdout,
        format!(
            "{}/.local/share/context-economy/handoffs/{}\n",
            env.home().display(),
            env.slot_name(&repo, "main")
        ),
        "an empty XDG_DATA_HOME counts as unset"
    );
}

#[test]
#[ignore = "needs root"]
fn an_unwritable_store_refuses_writes_but_still_reads() {
    use std::os::unix::fs::PermissionsExt;
    let env = TestEnv::new();
    let shared = env.shared_dir();
    let repo = env.repo("shared/repo", "main", &[("a.txt", "a\n")]);
    let store = shared.join("store");
    let o = run(env
        .store()
        .env("HANDOFF_STORE_DIR", &store)
        .args(["write", "--no-gate", "--checkout"])
        .arg(&repo)
        .write_stdin("# Handoff — x\nstatus: s\n"));
    assert_eq!(o.code, 0, "{}", o.stderr);
    let slot = store.join(env.slot_name(&repo, "main"));
    for (p, mode) in [
        (&store, 0o755),
        (&store.join(".locks"), 0o755),
        (&slot, 0o644),
    ] {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).expect("chmod");
    }
    let envs = [("HANDOFF_STORE_DIR", store.as_os_str())];
    let o = crate::util::as_user(
        65534,
        "handoff-store",
        &["read".as_ref(), repo.as_os_str()],
        &envs,
    );
    assert!(
        o.stdout
            .starts_with(&format!("handoff  {}\npick     exact", slot.display())),
        "{}",
        o.stdout
    );
    assert!(
        o.stderr.starts_with(&format!(
            "handoff-store: note: could not mark {} consumed: ",
            slot.display()
        )),
        "{}",
        o.stderr
    );
    assert!(o.stderr.contains("permission denied"));
    assert_ne!(o.code, 3, "reading still works");
    let before = std::fs::read(&slot).expect("slot");
    let o = crate::util::as_user(
        65534,
        "handoff-store",
        &[
            "write".as_ref(),
            "--placeholder".as_ref(),
            "--checkout".as_ref(),
            repo.as_os_str(),
        ],
        &envs,
    );
    assert_eq!(o.code, 3);
    assert!(
        o.stderr.starts_with("handoff-store: ")
            && o.stderr.contains(&store.display().to_string())
            && o.stderr.contains("permission denied"),
        "{}",
        o.stderr
    );
    assert_eq!(
        std::fs::read(&slot).expect("slot"),
        before,
        "nothing changed"
    );
}

#[test]
fn write_from_a_terminal_is_a_usage_error_and_never_blocks() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    if !Path::new("/usr/bin/script").exists() {
        crate::util::skipped("needs util-linux script for a pseudo-terminal");
        return;
    }
    let bin = assert_cmd::cargo::cargo_bin("handoff-store");
    // `script` gives the command a pseudo-terminal as stdin; `timeout` guards against a hang.
    let command = format!("'{}' write --checkout '{}'", bin.display(), repo.display());
    let o = run(assert_cmd::Command::new("timeout")
        .args(["10", "script", "-qec", &command, "/dev/null"])
        .env("HANDOFF_STORE_DIR", env.store_dir())
        .env("HOME", env.home()));
    assert!(
        o.stdout
            .contains("handoff-store: no document\r\nhint: pipe it on stdin or pass --from FILE"),
        "{}{}",
        o.stdout,
        o.stderr
    );
    assert_eq!(o.code, 2);
    assert!(!env.store_dir().exists());
}

#[test]
fn prune_clears_orphaned_history_and_old_writer_runs() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    let slot = env.stored(&repo, &canonical(&repo.to_string_lossy(), "main"));
    env.stored(&repo, &version(&repo, "v2"));
    let history = env
        .store_dir()
        .join(".history")
        .join(slot.file_name().expect("name"));
    for v in std::fs::read_dir(&history).expect("history").flatten() {
        env.age(&v.path(), 40 * 86_400);
    }
    std::fs::remove_file(&slot).expect("rm slot");
    let run_dir = env
        .store_dir()
        .join(".runs/0f0f0f0f-0000-4000-8000-000000000000");
    std::fs::create_dir_all(&run_dir).expect("run dir");
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(40 * 86_400);
    std::fs::File::open(&run_dir)
        .expect("open")
        .set_modified(old)
        .expect("age run dir");
    let (code, v) = json(env.store().args(["prune", "--apply", "--format", "json"]));
    assert_eq!(code, 0);
    let reasons: Vec<&str> = v["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter_map(|i| i["reason"].as_str())
        .collect();
    assert_eq!(reasons, ["orphaned history", "old writer run"]);
    assert!(
        v["items"]
            .as_array()
            .expect("items")
            .iter()
            .all(|i| i["deleted"] == true)
    );
    assert!(!history.exists() && !run_dir.exists());
    assert!(
        env.store_dir().join(".locks").is_dir(),
        "lock files are never pruned"
    );
}

/// `prune --apply` deletes orphan chains that are only lines of `packed-refs` in one rewrite of
/// that file (no loose lock per ref): every other line stays byte for byte (an annotated tag's
/// peel line too); a loose orphan and one with a reflog go through git's usual transaction;
/// nothing is left behind and git is content afterwards.
#[test]
fn prune_deletes_packed_orphan_chains_keeping_every_other_line() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    env.stored(&repo, &canonical(&repo.to_string_lossy(), "main"));
    let id = env.git(&repo, &["rev-parse", "refs/handoffs/main"]);
    env.git(&repo, &["branch", "keep"]);
    env.git(&repo, &["tag", "-a", "-m", "t", "v1"]);
    let mut create = String::new();
    for name in ["gone-1", "gone-2", "gone-3", "keep"] {
        create.push_str(&format!("create refs/handoffs/{name} {id}\n"));
    }
    let git_stdin = |args: &[&str], input: &str| {
        let mut child = std::process::Command::new("git")
            .args(args)
            .current_dir(&repo)
            .stdin(std::process::Stdio::piped())
            .spawn()
            .expect("git");
        std::io::Write::write_all(&mut child.stdin.take().expect("stdin"), input.as_bytes())
            .expect("feed git");
        assert!(child.wait().expect("git ran").success());
    };
    git_stdin(&["update-ref", "--stdin"], &create);
    env.git(
        &repo,
        &[
            "update-ref",
            "--create-reflog",
            "refs/handoffs/gone-logged",
            &id,
        ],
    );
    env.git(&repo, &["pack-refs", "--all"]);
    env.git(&repo, &["update-ref", "refs/handoffs/gone-loose", &id]);
    let packed = repo.join(".git/packed-refs");
    let before = std::fs::read_to_string(&packed).expect("packed-refs");
    assert!(before.contains("refs/tags/v1\n^"), "{before}");
    assert!(repo.join(".git/logs/refs/handoffs/gone-logged").is_file());

    let dry = run(env
        .store()
        .args(["prune", "--older-than", "0"])
        .current_dir(&repo));
    assert!(
        dry.stdout.ends_with(
            "5 of them hold earlier versions (history, chains): once deleted, restore and log cannot bring them back.\n"
        ),
        "{}",
        dry.stdout
    );
    let o = run(env
        .store()
        .args(["prune", "--apply", "--older-than", "0"])
        .current_dir(&repo));
    assert_eq!(o.code, 0, "{}{}", o.stdout, o.stderr);
    assert!(
        o.stdout.ends_with(
            "5 of them held earlier versions (history, chains): they can no longer be restored.\n"
        ),
        "{}",
        o.stdout
    );
    assert_eq!(
        env.git(
            &repo,
            &["for-each-ref", "--format=%(refname)", "refs/handoffs"]
        ),
        "refs/handoffs/keep\nrefs/handoffs/main"
    );
    let expected: String = before
        .split_inclusive('\n')
        .filter(|l| !l.contains("refs/handoffs/gone-"))
        .collect();
    assert_eq!(
        std::fs::read_to_string(&packed).expect("packed-refs"),
        expected
    );
    assert!(!repo.join(".git/logs/refs/handoffs/gone-logged").exists());
    let left: Vec<String> = crate::util::files_under(&repo.join(".git"))
        .into_iter()
        .map(|p| p.to_string_lossy().into_owned())
        .filter(|p| p.ends_with(".lock") || p.contains("handoff-store-txn"))
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
    env.git(&repo, &["pack-refs", "--all"]);
    env.git(&repo, &["fsck", "--no-progress"]);
    assert_eq!(
        env.git(&repo, &["rev-parse", "v1^{commit}"]),
        env.git(&repo, &["rev-parse", "HEAD"])
    );
}

#[test]
fn history_json_numbers_versions_newest_first() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    let slot = env.stored(&repo, &version(&repo, "one"));
    env.age(&slot, 600);
    env.stored(&repo, &version(&repo, "two"));
    env.stored(&repo, &version(&repo, "three"));
    let (code, v) = json(env.store().args(["history", "--format", "json"]).arg(&repo));
    assert_eq!(code, 0);
    assert_eq!(v["slot"], slot.display().to_string());
    assert!(
        v["current"]["status"]
            .as_str()
            .is_some_and(|s| s.starts_with("three "))
    );
    let versions = v["versions"].as_array().expect("versions");
    assert_eq!(versions.len(), 2);
    assert_eq!(versions[0]["version"], 1);
    let first = std::fs::read_to_string(versions[1]["path"].as_str().expect("path")).expect("v2");
    assert!(first.contains("status: one "), "version 2 is the oldest");
    assert_eq!(versions[0]["progress"], "complete");
}

/// A large store is listed through `<store>/.list-index`; the index never shows a state the
/// file no longer has, even a same-size edit with its mtime put back, and a broken index is
/// only a slower listing.
#[test]
fn list_index_never_shows_a_changed_file_as_it_was() {
    let env = TestEnv::new();
    let store = env.store_dir();
    std::fs::create_dir_all(&store).expect("store");
    let doc = |i: usize, progress: &str| {
        format!(
            "# Handoff — task {i}\nbranch: main\ncheckout: /nonexistent/r{i:03}\nstatus: s\nprogress: {progress}\n\n## Next\n1. x\n"
        )
    };
    for i in 0..300 {
        std::fs::write(
            store.join(format!("r{i:03}-main-00000000.md")),
            doc(i, "complete"),
        )
        .expect("handoff");
    }
    let listed = |env: &TestEnv| {
        let o = run(env.store().arg("list"));
        assert_eq!(o.code, 0, "{}", o.stderr);
        o.stdout
    };
    // Files changed within the last two seconds are never entered (their stamp could still
    // hide a change); wait until these have settled.
    std::thread::sleep(std::time::Duration::from_millis(2200));
    let first = listed(&env);
    let index = store.join(".list-index");
    let held = std::fs::read(&index).expect("the listing wrote the index");
    assert_eq!(
        held.iter().filter(|&&b| b == b'\n').count(),
        302,
        "magic line, 300 records, end line"
    );
    assert_eq!(listed(&env), first, "listed from the index, the same");
    assert_eq!(first.lines().count(), 300);
    assert!(!first.contains(".list-index"));

    // Same size, same mtime: only the inode's ctime tells.
    let edited = store.join("r007-main-00000000.md");
    let before = mtime(&edited);
    std::fs::write(&edited, doc(7, "consumed")).expect("edit in place");
    std::fs::File::options()
        .write(true)
        .open(&edited)
        .and_then(|f| f.set_modified(before))
        .expect("mtime put back");
    let line = |out: &str| {
        out.lines()
            .find(|l| l.contains("/nonexistent/r007"))
            .map(|l| l.split('\t').nth(1).unwrap_or("").to_string())
    };
    assert_eq!(line(&first).as_deref(), Some("complete"));
    assert_eq!(line(&listed(&env)).as_deref(), Some("consumed"));

    for broken in [b"garbage\n".to_vec(), held[..held.len() / 2].to_vec()] {
        std::fs::write(&index, broken).expect("break the index");
        let out = listed(&env);
        assert_eq!(out.lines().count(), 300);
        assert_eq!(line(&out).as_deref(), Some("consumed"));
    }
}

/// The list index is read only as a regular file — a FIFO or a link to `/dev/zero`
/// at `<store>/.list-index` hung `list` and `read`'s guess; now they read as no index.
#[test]
fn a_fifo_or_a_device_at_the_list_index_never_hangs_list() {
    for what in ["fifo", "/dev/zero"] {
        let env = TestEnv::new();
        let a = env.shop("a", "main");
        let slot = env.stored(&a, &canonical(&a.to_string_lossy(), "main"));
        let index = env.store_dir().join(".list-index");
        let _ = std::fs::remove_file(&index);
        if what == "fifo" {
            let made = std::process::Command::new("mkfifo")
                .arg(&index)
                .status()
                .expect("mkfifo");
            assert!(made.success());
        } else {
            std::os::unix::fs::symlink(what, &index).expect("link");
        }
        let o = run(env
            .store()
            .arg("list")
            .timeout(std::time::Duration::from_secs(20)));
        assert_eq!(o.code, 0, "{what}: {}", o.stderr);
        assert!(
            o.stdout.contains(&*slot.to_string_lossy()),
            "{what}: {}",
            o.stdout
        );
        // A checkout of another branch: `read` guesses through the index.
        let other = env.shop("other", "topic");
        let guess = run(env
            .store()
            .args(["read", "--no-consume", "-C"])
            .arg(&other)
            .timeout(std::time::Duration::from_secs(20)));
        assert!(
            guess.stdout.contains("GUESS"),
            "{what}: {}{}",
            guess.stdout,
            guess.stderr
        );
    }
}

/// During a rebase the handoff is keyed to the branch being rebased (git records it),
/// and the session-start of that checkout finds it; on any other detached HEAD, `write` stores
/// it under the commit and says plainly that no branch will show it, naming `--branch`, which
/// keys it to one.
#[test]
fn a_rebase_keys_to_its_branch_and_a_detached_write_says_so() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "feature");
    env.write("shop/a.txt", "one\n");
    env.git(&repo, &["add", "-A"]);
    env.git(&repo, &["commit", "-q", "-m", "two"]);
    // A rebase stopped at its first step (`edit`): HEAD detached, the branch recorded.
    env.git(
        &repo,
        &[
            "-c",
            "sequence.editor=sed -i s/^pick/edit/",
            "rebase",
            "-q",
            "-i",
            "HEAD~1",
        ],
    );
    assert!(repo.join(".git/rebase-merge/head-name").is_file());
    let o = run(env
        .store()
        .args(["write", "--checkout"])
        .arg(&repo)
        .write_stdin(canonical(&repo.to_string_lossy(), "feature")));
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(!o.stderr.contains("detached"), "{}", o.stderr);
    let slot = env.store_dir().join(env.slot_name(&repo, "feature"));
    assert!(slot.is_file(), "keyed to the branch being rebased");
    env.git(&repo, &["rebase", "--abort"]);
    // Any other detached HEAD: stored under the commit, with a word and the way out.
    env.git(&repo, &["checkout", "-q", "--detach", "HEAD~1"]);
    let short = env
        .git(&repo, &["rev-parse", "--short", "HEAD"])
        .trim()
        .to_string();
    let o = run(env
        .store()
        .args(["write", "--checkout"])
        .arg(&repo)
        .write_stdin(canonical(&repo.to_string_lossy(), &short)));
    assert!(matches!(o.code, 0 | 1), "{}", o.stderr);
    assert!(
        o.stderr.contains(&format!(
            "handoff-store: HEAD is detached: this handoff is keyed to commit {short} and will not be shown on any branch; pass --branch NAME to key it to one"
        )),
        "{}",
        o.stderr
    );
    let o = run(env
        .store()
        .args(["write", "--branch", "feature", "--checkout"])
        .arg(&repo)
        .write_stdin(canonical(&repo.to_string_lossy(), "feature")));
    assert!(matches!(o.code, 0 | 1), "{}", o.stderr);
    assert!(!o.stderr.contains("detached"), "{}", o.stderr);
    let text = std::fs::read_to_string(&slot).expect("the branch's slot");
    assert!(text.contains("branch: feature\n"));
}

/// A new project before its first commit stores its handoff under the branch's name,
/// and the citations resolve against the files on disk; the hooks deliver it after `/clear`.
#[test]
fn an_unborn_branch_stores_and_resolves_against_the_files_on_disk() {
    let env = TestEnv::new();
    env.git(&env.root(), &["init", "-q", "-b", "fresh", "unborn"]);
    let repo = std::fs::canonicalize(env.path("unborn")).expect("repo");
    env.write("unborn/notes.txt", "alpha\nbeta\n");
    let doc = crate::util::with_pointers(&repo.to_string_lossy(), "fresh", &["notes.txt:2 | beta"]);
    let o = run(env
        .store()
        .args(["write", "--checkout"])
        .arg(&repo)
        .write_stdin(doc));
    assert_eq!(o.code, 0, "{}{}", o.stdout, o.stderr);
    let slot = env.store_dir().join(env.slot_name(&repo, "fresh"));
    let text = std::fs::read_to_string(&slot).expect("stored under the branch's name");
    assert!(
        text.contains("branch: fresh\n") && !text.contains("\nhead:"),
        "{text}"
    );
    let input = serde_json::json!({"session_id": "u", "cwd": repo, "source": "clear"});
    let o = run(&mut env.hook("session-start", &input.to_string()));
    let injected = crate::util::context(&o);
    assert!(
        injected.contains(&format!(
            "GATE: OK — 1 of 1 citations resolve against `{}`.",
            repo.display()
        )),
        "{injected}"
    );
}
