//! Named slots: beside a branch's default slot, each with its own file, history, lock and
//! chain; hostile names refused before anything is made; `split` writes all or none; the
//! session start lists them.

use crate::util::{TestEnv, canonical, json, run};

fn titled(checkout: &str, title: &str) -> String {
    canonical(checkout, "main").replacen(
        "# Handoff — type the mailables",
        &format!("# Handoff — {title}"),
        1,
    )
}

#[test]
fn two_slots_never_see_each_others_content_history_lock_or_chain() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    let r = repo.to_string_lossy().into_owned();
    let default = env.stored(&repo, &titled(&r, "the default"));
    let write = |slot: &str, title: &str| {
        let o = run(env
            .store()
            .args(["write", "--slot", slot, "-C"])
            .arg(&repo)
            .write_stdin(titled(&r, title)));
        assert_eq!(o.code, 0, "{}", o.stderr);
    };
    write("api", "api one");
    write("api", "api two");
    write("ui", "ui one");

    // The default slot's file and ref names are what they always were.
    let o = run(env.store().args(["path", "-C"]).arg(&repo));
    assert_eq!(o.stdout.trim(), default.to_string_lossy());
    assert_eq!(
        default.file_name().expect("name").to_string_lossy(),
        env.slot_name(&repo, "main")
    );
    let tip = |r: &str| env.git(&repo, &["rev-parse", r]);
    let default_tip = tip("refs/handoffs/main");
    let o = run(env.store().args(["path", "--slot", "api", "-C"]).arg(&repo));
    let api = std::path::PathBuf::from(o.stdout.trim());
    assert_eq!(
        api.file_name().expect("name").to_string_lossy(),
        env.slot_name(&repo, "main").replace(".md", "@api.md")
    );

    // Content: each read shows its own.
    let read = |slot: Option<&str>| {
        let mut c = env.store();
        c.args(["read", "--no-consume", "-C"]).arg(&repo);
        if let Some(s) = slot {
            c.args(["--slot", s]);
        }
        run(&mut c).stdout
    };
    assert!(read(None).contains("# Handoff — the default"));
    assert!(read(Some("api")).contains("# Handoff — api two"));
    assert!(read(Some("ui")).contains("# Handoff — ui one") && !read(Some("ui")).contains("api"));

    // History: api kept its first version; ui and the default have none.
    let versions = |slot: &str| {
        let (_, v) = json(
            env.store()
                .args(["history", "--json", "--slot", slot, "-C"])
                .arg(&repo),
        );
        v["versions"].as_array().map_or(0, Vec::len)
    };
    assert_eq!((versions("api"), versions("ui")), (1, 0));
    let (_, v) = json(env.store().args(["history", "--json", "-C"]).arg(&repo));
    assert_eq!(v["versions"].as_array().map_or(0, Vec::len), 0);

    // Chains: one each, under a namespace no branch can take; the default's untouched.
    let count = |r: &str| env.git(&repo, &["rev-list", "--count", r]);
    assert_eq!(count("refs/handoff-slots/api/main"), "2");
    assert_eq!(count("refs/handoff-slots/ui/main"), "1");
    assert_eq!(tip("refs/handoffs/main"), default_tip);
    let (_, log) = json(
        env.store()
            .args(["log", "--json", "--slot", "api", "-C"])
            .arg(&repo),
    );
    assert_eq!(log["versions"].as_array().map_or(0, Vec::len), 2, "{log}");

    // Locks: ui's lock held by another process does not stop a write to api.
    let lock = env.store_dir().join(".locks").join(
        api.file_name()
            .expect("name")
            .to_string_lossy()
            .replace("@api.md", "@ui.md.lock"),
    );
    assert!(
        lock.exists(),
        "ui has its own lock file: {}",
        lock.display()
    );
    let mut holder = std::process::Command::new("flock")
        .arg("-x")
        .arg(&lock)
        .args(["sleep", "20"])
        .spawn()
        .expect("flock (util-linux) holds ui's lock");
    assert!(crate::util::eventually(5, || {
        std::process::Command::new("flock")
            .args(["-n", "-x"])
            .arg(&lock)
            .arg("true")
            .status()
            .is_ok_and(|s| !s.success())
    }));
    write("api", "api three");
    let _ = holder.kill();
    let _ = holder.wait();
    assert!(read(Some("api")).contains("api three"));

    // `list` shows every slot.
    let o = run(env.store().arg("list"));
    assert_eq!(o.stdout.lines().count(), 3, "{}", o.stdout);
}

#[test]
fn a_hostile_slot_name_is_refused_and_nothing_is_made() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    let doc = canonical(&repo.to_string_lossy(), "main");
    let long = "a".repeat(65);
    for name in [
        "../x", "", &long, "a/b", "a b", "x.lock", "a..b", ".hidden", "é",
    ] {
        for args in [vec!["write"], vec!["path"], vec!["read"], vec!["history"]] {
            let o = run(env
                .store()
                .args(&args)
                .arg(format!("--slot={name}"))
                .arg("-C")
                .arg(&repo)
                .write_stdin(doc.clone()));
            assert_eq!(o.code, 2, "{args:?} --slot {name:?}: {}", o.stderr);
            assert!(o.stderr.contains("cannot name a slot"), "{}", o.stderr);
        }
        assert!(!env.store_dir().exists(), "nothing made for {name:?}");
    }
    let refs = env.git(&repo, &["for-each-ref", "--format=%(refname)"]);
    assert!(!refs.contains("handoff"), "{refs}");
}

#[test]
fn split_writes_every_slot_or_none() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    let r = repo.to_string_lossy().into_owned();
    let api = env.write("api.md", titled(&r, "the api thread"));
    let ui = env.write("ui.md", titled(&r, "the ui thread"));
    let bad = env.write("bad.md", "# Handoff — broken\nstatus: no sections\n");
    let part = |slot: &str, file: &std::path::Path| format!("{slot}={}", file.display());
    let o = run(env
        .store()
        .arg("split")
        .arg(part("api", &api))
        .arg(part("ui", &ui))
        .arg(part("bad", &bad))
        .arg("-C")
        .arg(&repo));
    assert_eq!(o.code, 2, "{}{}", o.stdout, o.stderr);
    assert!(o.stdout.contains("refused  bad ← "), "{}", o.stdout);
    assert!(o.stderr.contains("split wrote no slot"), "{}", o.stderr);
    let listed = run(env.store().arg("list")).stdout;
    assert!(listed.is_empty(), "none written: {listed}");

    // A part that is not NAME=FILE, or a slot named twice: a usage error, nothing written.
    for parts in [
        vec!["api".to_string()],
        vec![part("api", &api), part("api", &ui)],
    ] {
        let o = run(env.store().arg("split").args(&parts).arg("-C").arg(&repo));
        assert_eq!(o.code, 2, "{parts:?}: {}", o.stderr);
    }
    assert!(run(env.store().arg("list")).stdout.is_empty());

    let (code, v) = json(
        env.store()
            .args(["split", "--json"])
            .arg(part("api", &api))
            .arg(part("ui", &ui))
            .arg("-C")
            .arg(&repo),
    );
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["stored"], true);
    let o = run(env
        .store()
        .args(["read", "--no-consume", "--slot", "ui", "-C"])
        .arg(&repo));
    assert!(
        o.stdout.contains("# Handoff — the ui thread"),
        "{}",
        o.stdout
    );

    // The session start delivers the default slot and lists the others, with how to read one.
    env.stored(&repo, &titled(&r, "the default"));
    let o = run(env
        .store()
        .args(["hook", "session-start"])
        .write_stdin(format!(
            r#"{{"session_id":"s","cwd":"{}","source":"clear"}}"#,
            repo.display()
        )));
    let context = crate::util::context(&o);
    assert!(
        context.contains(
            "Other handoffs of `main`, in named slots:\n- `api`: \"the api thread\" (complete, "
        ),
        "{context}"
    );
    assert!(context.contains("- `ui`: \"the ui thread\""), "{context}");
    assert!(context.contains(" read --slot <name> -C "), "{context}");
    assert!(
        context.contains("# Handoff — the default")
            && !context.contains("# Handoff — the ui thread")
    );
}

/// `prune` treats a named slot's chain like a default one: gone with its branch.
#[test]
fn prune_removes_a_named_slots_chain_when_its_branch_is_gone() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    env.git(&repo, &["checkout", "-q", "-b", "topic"]);
    let doc = canonical(&repo.to_string_lossy(), "topic");
    let o = run(env
        .store()
        .args(["write", "--slot", "api", "-C"])
        .arg(&repo)
        .write_stdin(doc));
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(
        !env.git(&repo, &["rev-parse", "refs/handoff-slots/api/topic"])
            .is_empty()
    );
    env.git(&repo, &["checkout", "-q", "main"]);
    env.git(&repo, &["branch", "-q", "-D", "topic"]);
    let o = run(env.store().args(["prune", "--older-than", "0"]));
    assert!(
        o.stdout
            .contains("refs/handoff-slots/api/topic  (branch gone"),
        "{}",
        o.stdout
    );
    let o = run(env.store().args(["prune", "--older-than", "0", "--apply"]));
    assert_eq!(o.code, 0, "{}{}", o.stdout, o.stderr);
    assert_eq!(env.git(&repo, &["for-each-ref", "refs/handoff-slots"]), "");
}

/// `split` reads each part once: a part's file broken after the check (the process paused at
/// its first write) is stored as it was gated, and every part is stored.
#[test]
fn split_stores_exactly_the_bytes_it_gated() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    let r = repo.to_string_lossy().into_owned();
    let api = env.write("api.md", titled(&r, "the api thread"));
    let ui = env.write("ui.md", titled(&r, "the ui thread"));
    let child = env
        .store_process()
        .arg("split")
        .arg(format!("api={}", api.display()))
        .arg(format!("ui={}", ui.display()))
        .arg("-C")
        .arg(&repo)
        .env("HANDOFF_STORE_KILL_AT", "1")
        .env("HANDOFF_STORE_KILL_WITH", "STOP")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("split");
    assert!(
        crate::util::eventually(30, || crate::util::paused(child.id())),
        "never paused"
    );
    std::fs::write(&ui, "# Handoff — broken\nstatus: no sections\n").expect("break");
    crate::util::resume(child.id());
    let out = child.wait_with_output().expect("ends");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let o = run(env
        .store()
        .args(["read", "--no-consume", "--slot", "ui", "-C"])
        .arg(&repo));
    assert!(
        o.stdout.contains("# Handoff — the ui thread"),
        "{}",
        o.stdout
    );
}

/// After a `split` put the session's latest work into named slots, `/clear` does not say the
/// older default slot covers the session: it says the named slots are newer.
#[test]
fn a_clear_after_a_split_points_at_the_newer_named_slots() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    let r = repo.to_string_lossy().into_owned();
    let default = env.stored(&repo, &titled(&r, "the default"));
    env.age(&default, 5);
    let o = run(env
        .store()
        .args(["write", "--slot", "api", "-C"])
        .arg(&repo)
        .write_stdin(titled(&r, "api one")));
    assert_eq!(o.code, 0, "{}", o.stderr);
    let transcript = env.write("t.jsonl", "{}\n");
    let input = |extra: serde_json::Value| {
        let mut v =
            serde_json::json!({"session_id": "s", "transcript_path": transcript, "cwd": repo});
        if let (Some(o), Some(e)) = (v.as_object_mut(), extra.as_object()) {
            o.extend(e.clone());
        }
        v.to_string()
    };
    run(&mut env.hook(
        "session-end",
        &input(serde_json::json!({"reason": "clear"})),
    ));
    let text = crate::util::context(&run(&mut env.hook(
        "session-start",
        &input(serde_json::json!({"source": "clear", "session_id": "t"})),
    )));
    assert!(
        text.contains("The named slots listed below were written after the handoff below")
            && !text.contains("so it covers it")
            && text.contains("`api`"),
        "{text}"
    );
}
