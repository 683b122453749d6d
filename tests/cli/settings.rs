//! Settings in git config (`handoff.*`, every scope, the environment overriding) and the rule
//! that the automatic paths act only in a repository that uses handoffs.

use std::path::{Path, PathBuf};

use crate::util::{Outcome, TestEnv, canonical, chmod_x, run};

fn fake_writer(env: &TestEnv) -> PathBuf {
    let p = env.write(
        "writer.sh",
        "#!/bin/sh\nmkdir -p \"$FAKE_LOG\"\ncat > /dev/null\ntouch \"$FAKE_LOG/started\"\n",
    );
    chmod_x(&p);
    p
}

/// Every automatic path once in `repo`, as Claude Code fires them: a `/clear` (session end,
/// then start), a fresh start, a compaction (pre-compact with a writer, then its start).
struct Fired {
    clear: Outcome,
    startup: Outcome,
    pre_compact: Outcome,
    compact: Outcome,
    writer_started: bool,
    marker_written: bool,
}

fn fire_all(env: &TestEnv, repo: &Path, sid: &str) -> Fired {
    let transcript = env.write("t.jsonl", "{}\n");
    let writer = fake_writer(env);
    let fake = env.path(&format!("fake-{sid}"));
    let input = |extra: serde_json::Value| {
        let mut v =
            serde_json::json!({"session_id": sid, "transcript_path": transcript, "cwd": repo});
        if let (Some(o), Some(e)) = (v.as_object_mut(), extra.as_object()) {
            o.extend(e.clone());
        }
        v.to_string()
    };
    let hook = |event: &str, extra: serde_json::Value| {
        run(env
            .hook(event, &input(extra))
            .env("HANDOFF_WRITER", &writer)
            .env("FAKE_LOG", &fake))
    };
    hook("session-end", serde_json::json!({"reason": "clear"}));
    let marker_written = env.marker_dir().is_dir()
        && std::fs::read_dir(env.marker_dir()).is_ok_and(|mut d| d.next().is_some());
    let clear = hook("session-start", serde_json::json!({"source": "clear"}));
    let startup = hook("session-start", serde_json::json!({"source": "startup"}));
    let pre_compact = hook("pre-compact", serde_json::json!({"trigger": "auto"}));
    let writer_started = crate::util::eventually(3, || fake.join("started").is_file());
    let compact = hook("session-start", serde_json::json!({"source": "compact"}));
    Fired {
        clear,
        startup,
        pre_compact,
        compact,
        writer_started,
        marker_written,
    }
}

fn status(env: &TestEnv, repo: &Path) -> String {
    run(env.store().arg("status").arg("-C").arg(repo)).stdout
}

#[test]
fn a_repository_that_never_used_handoffs_gets_nothing_from_the_automatic_paths() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    let f = fire_all(&env, &repo, "unused");
    for (what, o) in [
        ("clear", &f.clear),
        ("startup", &f.startup),
        ("compact", &f.compact),
    ] {
        assert_eq!(
            (o.code, o.stdout.as_str(), o.stderr.as_str()),
            (0, "", ""),
            "{what}: nothing injected, no receipt"
        );
    }
    assert!(!f.writer_started, "no second model run");
    assert!(!env.store_dir().join(".runs").exists(), "no run recorded");
    assert!(!f.marker_written, "no /clear marker");
    // The summary steering costs no model run: it stays, without promising a handoff.
    assert!(
        f.pre_compact.stdout.starts_with("Keep verbatim")
            && !f.pre_compact.stdout.contains("background"),
        "{}",
        f.pre_compact.stdout
    );
    assert!(
        status(&env, &repo).contains(
            "in use   no: no handoff for any branch yet — session starts, /clear and compactions stay silent"
        ),
        "{}",
        status(&env, &repo)
    );

    // handoff.enabled=true: every path acts although there is no handoff yet.
    env.use_handoffs(&repo);
    let f = fire_all(&env, &repo, "enabled");
    assert!(f.marker_written);
    assert!(
        f.clear.stdout.contains("No handoff exists"),
        "{}",
        f.clear.stdout
    );
    assert!(f.writer_started, "the writer runs where it is wanted");
    assert!(
        f.pre_compact.stdout.contains("background"),
        "{}",
        f.pre_compact.stdout
    );
    assert!(status(&env, &repo).contains("in use   yes: handoff.enabled is true"));
}

#[test]
fn a_handoff_on_any_branch_puts_the_repository_in_use_and_enabled_false_turns_it_off() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    let doc = canonical(&repo.to_string_lossy(), "other");
    let o = run(env
        .store()
        .args(["write", "--branch", "other", "-C"])
        .arg(&repo)
        .write_stdin(doc));
    assert_eq!(o.code, 0, "{}{}", o.stdout, o.stderr);
    assert!(
        status(&env, &repo).contains("in use   yes: "),
        "{}",
        status(&env, &repo)
    );
    let f = fire_all(&env, &repo, "other-branch");
    assert!(f.clear.stdout.contains("(`main`)"), "{}", f.clear.stdout);
    assert!(f.writer_started);

    // The store alone (no chain: the repository's refs are gone) still counts.
    env.git(&repo, &["update-ref", "-d", "refs/handoffs/other"]);
    assert!(
        status(&env, &repo).contains("in use   yes: the store holds shop-other-"),
        "{}",
        status(&env, &repo)
    );

    env.git(&repo, &["config", "handoff.enabled", "false"]);
    let slot = env.stored(&repo, &canonical(&repo.to_string_lossy(), "main"));
    let f = fire_all(&env, &repo, "disabled");
    for o in [&f.clear, &f.startup, &f.compact] {
        assert_eq!(o.stdout, "");
    }
    assert!(!f.writer_started && !f.marker_written);
    assert!(status(&env, &repo).contains("in use   no: handoff.enabled is false"));
    assert!(slot.is_file(), "the handoff itself is left alone");
}

#[test]
fn the_writer_and_clear_settings_steer_their_own_path_only() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    env.stored(&repo, &canonical(&repo.to_string_lossy(), "main"));
    env.git(&repo, &["config", "handoff.writer", "off"]);
    env.git(&repo, &["config", "handoff.onClear", "off"]);
    let f = fire_all(&env, &repo, "steered");
    assert!(!f.writer_started, "handoff.writer=off: no second model run");
    assert_eq!(
        f.clear.stdout, "",
        "handoff.onClear=off: /clear says nothing"
    );
    assert!(
        f.compact.stdout.contains("type the mailables"),
        "a compaction still delivers: {}",
        f.compact.stdout
    );

    // handoff.writer=on runs it also where no handoff exists yet.
    let fresh = env.shop("fresh", "main");
    env.git(&fresh, &["config", "handoff.writer", "on"]);
    let f = fire_all(&env, &fresh, "writer-on");
    assert!(f.writer_started);
    assert_eq!(
        f.clear.stdout, "",
        "the other paths still wait for a handoff"
    );
}

#[test]
fn config_lists_each_setting_with_the_scope_and_file_it_came_from() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    env.git(&repo, &["config", "--global", "handoff.writer", "off"]);
    env.git(&repo, &["config", "--global", "handoff.autoPush", "false"]);
    env.git(&repo, &["config", "handoff.autoPush", "yes"]);
    env.git(&repo, &["config", "handoff.onClear", "sometimes"]);
    env.git(&repo, &["config", "extensions.worktreeConfig", "true"]);
    env.git(&repo, &["config", "--worktree", "handoff.staleHours", "12"]);
    // The system scope from its own file, the command scope as `git -c` passes it.
    let system = env.write(
        "etc/gitconfig",
        "[handoff]\n\tofferMaxDays = 3\n\tenabled\n",
    );
    let o = run(env
        .store()
        .args(["config", "-C"])
        .arg(&repo)
        .env("GIT_CONFIG_SYSTEM", &system)
        .env("GIT_CONFIG_COUNT", "1")
        .env("GIT_CONFIG_KEY_0", "handoff.onClear")
        .env("GIT_CONFIG_VALUE_0", "off")
        .env("HANDOFF_ON_STARTUP", "deliver")
        .env("HANDOFF_OFFER_MAX_DAYS", "soon"));
    assert_eq!(o.code, 0, "{}", o.stderr);
    let home = env.home().join(".gitconfig");
    let local = repo.join(".git/config");
    let worktree = repo.join(".git/config.worktree");
    let expected = format!(
        "handoff.enabled        true     system   {sys}
handoff.writer         off      global   {}
handoff.onStartup      deliver  env      HANDOFF_ON_STARTUP
handoff.onClear        off      command  (git -c, GIT_CONFIG_*)
handoff.autoPush       true     local    {}
handoff.offerMaxDays   3        system   {sys}
handoff.staleHours     12       worktree {}
handoff.tripwires      true     default
handoff.holdout        0        default
ignored  handoff.offerMaxDays=soon (env HANDOFF_OFFER_MAX_DAYS): it takes a whole number",
        home.display(),
        local.display(),
        worktree.display(),
        sys = system.display(),
    );
    let got: Vec<&str> = o.stdout.lines().collect();
    let want: Vec<&str> = expected.lines().collect();
    assert_eq!(got[..got.len() - 1], want[..], "{}", o.stdout);
    assert_eq!(
        got.last().copied(),
        Some("in use   yes: handoff.enabled is true"),
        "{}",
        o.stdout
    );
    // A value a key does not take, where it would win, is named and passed over.
    let o = run(env.store().args(["config", "-C"]).arg(&repo));
    assert!(
        o.stdout
            .contains("handoff.onClear        deliver  default\nhandoff.autoPush")
            && o.stdout.contains(&format!(
                "ignored  handoff.onClear=sometimes (local {}): it takes deliver, off\n",
                local.display()
            )),
        "{}",
        o.stdout
    );

    let (code, v) = crate::util::json(env.store().args(["config", "--json", "-C"]).arg(&repo));
    assert_eq!(code, 0);
    assert_eq!(v["values"][1]["key"], "handoff.writer");
    assert_eq!(v["values"][1]["origin"]["from"], "git");
    assert_eq!(v["values"][1]["origin"]["scope"], "global");
    assert_eq!(v["values"][1]["origin"]["file"], home.display().to_string());
    assert_eq!(v["values"][0]["origin"]["from"], "default");
    assert_eq!(v["in_use"]["use"], "unused");

    // The setting is what the paths obey: the global writer=off holds in another repository.
    let other = env.shop("other", "main");
    env.use_handoffs(&other);
    let f = fire_all(&env, &other, "global-off");
    assert!(!f.writer_started, "global handoff.writer=off");
    assert!(f.clear.stdout.contains("No handoff exists"));
}

/// Outside a checkout, `config` shows the settings every repository starts from (exit 0); a
/// global git config that does not parse is said as that, not as "not a checkout".
#[test]
fn config_outside_a_checkout_shows_the_global_settings() {
    let env = TestEnv::new();
    let plain = env.path("plain");
    std::fs::create_dir_all(&plain).expect("plain");
    let gitconfig = env.home().join(".gitconfig");
    std::fs::write(&gitconfig, "[handoff]\n\twriter = off\n").expect("gitconfig");
    let o = run(env.store().args(["config", "-C"]).arg(&plain));
    assert_eq!(o.code, 0, "{}{}", o.stdout, o.stderr);
    assert!(
        o.stdout
            .contains("handoff.writer         off      global   ")
            && o.stdout.contains("in use   — not inside a git checkout"),
        "{}",
        o.stdout
    );
    let (code, v) = crate::util::json(env.store().args(["config", "--json", "-C"]).arg(&plain));
    assert_eq!(code, 0);
    assert!(v["checkout"].is_null() && v["in_use"].is_null(), "{v}");
    let repo = env.shop("shop", "main");
    std::fs::write(&gitconfig, "[handoff\n\twriter = off\n").expect("gitconfig");
    let o = run(env.store().args(["config", "-C"]).arg(&repo));
    assert_eq!(o.code, 3, "{}{}", o.stdout, o.stderr);
    assert!(
        o.stderr.contains("git's configuration cannot be read")
            && !o.stderr.contains("not inside a git checkout"),
        "{}",
        o.stderr
    );
}

/// A typo where it would win gives way to the next source (the global `off` beneath a local
/// `of`), not to the default; `git -c` reaches a hook git runs (`GIT_CONFIG_PARAMETERS`), and
/// the post-checkout hook obeys `handoff.enabled false` too.
#[test]
fn a_value_a_key_does_not_take_gives_way_to_the_next_source_and_git_c_is_heard() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    env.use_handoffs(&repo);
    env.git(&repo, &["config", "--global", "handoff.writer", "off"]);
    env.git(&repo, &["config", "handoff.writer", "of"]);
    let o = run(env.store().args(["config", "-C"]).arg(&repo));
    assert!(
        o.stdout
            .contains("handoff.writer         off      global   "),
        "the typo fell to the default: {}",
        o.stdout
    );
    let f = fire_all(&env, &repo, "typo");
    assert!(
        !f.writer_started,
        "the global off did not hold under a typo"
    );
    let o = run(env.store().args(["config", "-C"]).arg(&repo).env(
        "GIT_CONFIG_PARAMETERS",
        "'handoff.onClear'='off' 'core.x'='y'",
    ));
    assert!(
        o.stdout
            .contains("handoff.onClear        off      command  (git -c, GIT_CONFIG_*)"),
        "{}",
        o.stdout
    );
    // The git hook: a switch to a branch with a handoff says so, unless git -c turns it off.
    env.stored(&repo, &canonical(&repo.to_string_lossy(), "main"));
    let hook = env.write(
        "hooks/post-checkout",
        format!(
            "#!/bin/sh\nexec '{}' hook post-checkout \"$1\" \"$2\" \"$3\"\n",
            assert_cmd::cargo::cargo_bin("handoff-store").display()
        ),
    );
    chmod_x(&hook);
    env.git(
        &repo,
        &[
            "config",
            "core.hooksPath",
            &env.path("hooks").to_string_lossy(),
        ],
    );
    env.git(&repo, &["checkout", "-q", "-b", "side"]);
    let switch = |extra: &[&str]| {
        let o = std::process::Command::new("git")
            .args(extra)
            .args(["checkout", "-q", "main"])
            .current_dir(&repo)
            .env("HOME", env.home())
            .env("HANDOFF_STORE_DIR", env.store_dir())
            .output()
            .expect("git checkout");
        assert!(o.status.success());
        let said = String::from_utf8_lossy(&o.stderr).into_owned();
        let back = std::process::Command::new("git")
            .args(["checkout", "-q", "side"])
            .current_dir(&repo)
            .env("HOME", env.home())
            .env("HANDOFF_STORE_DIR", env.store_dir())
            .output()
            .expect("git checkout");
        assert!(back.status.success());
        said
    };
    assert!(
        switch(&[]).contains("main has a handoff"),
        "the hook is not wired"
    );
    let said = switch(&["-c", "handoff.enabled=false"]);
    assert!(
        !said.contains("has a handoff"),
        "enabled=false spoke: {said}"
    );
}

/// A committed project file may put environment into a client's hooks: for the writer and
/// `enabled`, it narrows the user's git config, never widens it.
#[test]
fn the_environment_never_switches_on_what_git_config_switched_off() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    env.use_handoffs(&repo);
    env.git(&repo, &["config", "--global", "handoff.writer", "off"]);
    let o = run(env
        .store()
        .args(["config", "-C"])
        .arg(&repo)
        .env("HANDOFF_BACKGROUND_WRITER", "on")
        .env("HANDOFF_ON_CLEAR", "off"));
    assert!(
        o.stdout
            .contains("handoff.writer         off      global   ")
            && o.stdout
                .contains("ignored  handoff.writer=on (env HANDOFF_BACKGROUND_WRITER)")
            && o.stdout.contains("handoff.onClear        off      env"),
        "{}",
        o.stdout
    );
    let o = run(env
        .store()
        .args(["config", "-C"])
        .arg(&repo)
        .env("HANDOFF_BACKGROUND_WRITER", "off"));
    assert!(
        o.stdout.contains("handoff.writer         off      env"),
        "{}",
        o.stdout
    );
}

/// A repository owned by another user, which git refuses to open (not in `safe.directory`):
/// its own `.git/config` is not heard — the user's global `enabled false` holds.
#[test]
#[ignore = "needs root"]
fn another_users_repository_has_its_own_settings_passed_over() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    env.git(&repo, &["config", "--global", "handoff.enabled", "false"]);
    env.git(&repo, &["config", "handoff.enabled", "true"]);
    let o = run(env.store().args(["config", "-C"]).arg(&repo));
    assert!(
        o.stdout.contains("handoff.enabled        true     local"),
        "{}",
        o.stdout
    );
    let chown = std::process::Command::new("chown")
        .args(["-R", "1234:1234"])
        .arg(&repo)
        .status()
        .expect("chown");
    assert!(chown.success());
    let git = std::process::Command::new("git")
        .args(["status"])
        .current_dir(&repo)
        .env("HOME", env.home())
        .output()
        .expect("git status");
    assert!(
        !git.status.success(),
        "git trusts it: the case is not set up"
    );
    let o = run(env.store().args(["config", "-C"]).arg(&repo));
    assert!(
        o.stdout.contains("handoff.enabled        false    global"),
        "another user's .git/config was heard: {}{}",
        o.stdout,
        o.stderr
    );
}

/// `handoff.staleHours` in the repository's git config sets the STALE threshold (the
/// environment still overrides it).
#[test]
fn the_stale_threshold_comes_from_git_config() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    let slot = env.stored(&repo, &canonical(&repo.to_string_lossy(), "main"));
    env.age(&slot, 3 * 3600 + 60);
    let read =
        |env: &TestEnv| run(env.store().args(["read", "--no-consume", "-C"]).arg(&repo)).stdout;
    assert!(!read(&env).contains("STALE"), "under the default 24 hours");
    env.git(&repo, &["config", "handoff.staleHours", "2"]);
    assert!(
        read(&env).contains("STALE: last written 3 hours ago, over the 2-hour threshold"),
        "{}",
        read(&env)
    );
    let o = run(env
        .store()
        .args(["read", "--no-consume", "-C"])
        .arg(&repo)
        .env("HANDOFF_STALE_HOURS", "0"));
    assert!(!o.stdout.contains("STALE"), "the environment overrides it");
}
