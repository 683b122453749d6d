//! Durability (docs/store.md §6): a process killed at any instant, or failing on a full
//! disk, loses no version, leaves the slot whole, and leaves nothing the next write does not
//! clean; memory stays bounded whatever is cited or stored.

use std::collections::BTreeSet;
use std::ffi::OsStr;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::util::{TestEnv, run, version};

/// Every file below `dir` whose name starts with `.tmp.`.
fn temp_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in entries.flatten() {
        let path = e.path();
        if e.file_type().is_ok_and(|t| t.is_dir()) {
            out.extend(temp_files(&path));
        } else if e.file_name().to_string_lossy().starts_with(".tmp.") {
            out.push(path);
        }
    }
    out
}

/// The slot's bytes, and each history version's bytes.
fn contents(env: &TestEnv, slot: &Path) -> (Option<Vec<u8>>, Vec<Vec<u8>>) {
    let name = slot.file_name().expect("slot name");
    let dir = env.store_dir().join(".history").join(name);
    let mut history = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            let n = e.file_name().to_string_lossy().into_owned();
            if n.ends_with(".md") && !n.starts_with('.') {
                history.push(std::fs::read(e.path()).expect("history version"));
            }
        }
    }
    (std::fs::read(slot).ok(), history)
}

/// What makes a version that version: its text less the `progress:` line a consume flip
/// rewrites and the `head:` line `write` adds.
fn identity(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes)
        .lines()
        .filter(|l| !l.starts_with("progress:") && !l.starts_with("head:"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn identities(slot: &Option<Vec<u8>>, history: &[Vec<u8>]) -> BTreeSet<String> {
    slot.iter().chain(history).map(|b| identity(b)).collect()
}

/// Every version in `before` is still somewhere; the slot is one whole known document.
fn assert_kept(
    before: &BTreeSet<String>,
    known: &BTreeSet<String>,
    env: &TestEnv,
    slot: &Path,
    what: &str,
) {
    let (now_slot, history) = contents(env, slot);
    let now = identities(&now_slot, &history);
    for v in before {
        assert!(now.contains(v), "{what}: a version was lost:\n{v}");
    }
    let slot_bytes = now_slot.unwrap_or_else(|| panic!("{what}: the slot is gone"));
    assert!(
        known.contains(&identity(&slot_bytes)),
        "{what}: the slot is not a whole known version:\n{}",
        String::from_utf8_lossy(&slot_bytes)
    );
}

/// History after a completed operation: at most 10 versions, no two with the same bytes.
fn assert_history_distinct(env: &TestEnv, slot: &Path, what: &str) {
    let (_, history) = contents(env, slot);
    let distinct: BTreeSet<&Vec<u8>> = history.iter().collect();
    assert_eq!(
        distinct.len(),
        history.len(),
        "{what}: history holds identical bytes twice"
    );
    assert!(history.len() <= 10, "{what}: {} versions", history.len());
}

/// Store `tags` in order for `repo`; returns the slot.
fn store_versions(env: &TestEnv, repo: &Path, tags: &[&str]) -> PathBuf {
    let mut slot = PathBuf::new();
    for tag in tags {
        slot = env.stored(repo, &version(repo, tag));
    }
    slot
}

/// Run `op` killed before its 1st, 2nd, … store mutation (the `HANDOFF_STORE_KILL_AT` seam)
/// until it completes, each time on a fresh store holding `tags`; after every kill, nothing
/// is lost, the slot is whole, and the next normal write leaves no temp file and a clean
/// history.
fn kill_at_every_step(tags: &[&str], new: &str, op: &dyn Fn(&TestEnv, &Path) -> Vec<String>) {
    for n in 1..64 {
        let kills = n - 1;
        let env = TestEnv::new();
        let repo = env.shop("shop", "main");
        let slot = store_versions(&env, &repo, tags);
        let (s, h) = contents(&env, &slot);
        let before = identities(&s, &h);
        let mut known = before.clone();
        known.insert(identity(version(&repo, new).as_bytes()));
        let args = op(&env, &repo);
        let o = run(env
            .store()
            .args(&args)
            .env("HANDOFF_STORE_KILL_AT", n.to_string()));
        let what = format!("{args:?} killed before mutation {n}");
        assert_kept(&before, &known, &env, &slot, &what);
        if o.code == 0 {
            assert!(kills >= 2, "{args:?} had only {kills} kill points");
            assert_history_distinct(&env, &slot, &format!("{args:?} completed"));
            return;
        }
        assert_eq!(o.code, -1, "{what}: not killed: {}{}", o.stdout, o.stderr);
        env.stored(&repo, &version(&repo, "after"));
        let after = format!("{what}, then a normal write");
        assert_eq!(
            temp_files(&env.store_dir()),
            Vec::<PathBuf>::new(),
            "{after}"
        );
        assert_history_distinct(&env, &slot, &after);
        let (s, h) = contents(&env, &slot);
        let now = identities(&s, &h);
        assert!(before.iter().all(|v| now.contains(v)), "{after}: lost one");
    }
    panic!("the operation never completed");
}

#[test]
fn restore_killed_at_each_step_loses_no_version() {
    // The reported loss: slot v3, history v2, v1; restoring version 2 (v1) lost v1 when killed
    // at its second rename.
    kill_at_every_step(&["v1", "v2", "v3"], "v1", &|_, repo| {
        vec![
            "restore".into(),
            "--version".into(),
            "2".into(),
            repo.to_string_lossy().into_owned(),
        ]
    });
}

#[test]
fn write_killed_at_each_step_loses_no_version() {
    kill_at_every_step(&["v1", "v2", "v3"], "v4", &|env, repo| {
        let draft = env.write("draft.md", version(repo, "v4"));
        vec![
            "write".into(),
            "--checkout".into(),
            repo.to_string_lossy().into_owned(),
            "--from".into(),
            draft.to_string_lossy().into_owned(),
        ]
    });
}

#[test]
fn killed_writers_never_push_a_real_version_out_of_history() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    let tags: Vec<String> = (0..=10).map(|i| format!("v{i}")).collect();
    let tag_refs: Vec<&str> = tags.iter().map(String::as_str).collect();
    let slot = store_versions(&env, &repo, &tag_refs);
    let draft = env.write("draft.md", version(&repo, "v11"));
    // Killed at each of its first steps in turn, some after the slot was copied to history and
    // before it was replaced (each such kill used to add another copy, and retention then
    // deleted a real version to make room for it).
    for n in 1..=6 {
        run(env
            .store()
            .args(["write", "--checkout"])
            .arg(&repo)
            .arg("--from")
            .arg(&draft)
            .env("HANDOFF_STORE_KILL_AT", n.to_string()));
    }
    env.stored(&repo, &version(&repo, "v11"));
    let (_, history) = contents(&env, &slot);
    let kept: BTreeSet<String> = history.iter().map(|b| identity(b)).collect();
    let expected: BTreeSet<String> = (1..=10)
        .map(|i| identity(version(&repo, &format!("v{i}")).as_bytes()))
        .collect();
    assert_eq!(history.len(), 10, "ten versions");
    assert_eq!(
        kept, expected,
        "the ten newest distinct versions, v1 to v10"
    );
}

#[test]
fn two_versions_written_in_the_same_second_are_both_kept() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    let slot = store_versions(&env, &repo, &["a", "b", "c"]);
    let (_, history) = contents(&env, &slot);
    let kept: BTreeSet<String> = history.iter().map(|b| identity(b)).collect();
    for tag in ["a", "b"] {
        assert!(
            kept.contains(&identity(version(&repo, tag).as_bytes())),
            "{tag}"
        );
    }
}

/// A tiny deterministic generator: the crash loop prints its seed, so a failure replays.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

#[test]
fn random_kills_of_writers_consumers_and_restorers_lose_nothing() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    let pool = ["p1", "p2", "p3", "p4"];
    let slot = store_versions(&env, &repo, &pool);
    let known: BTreeSet<String> = pool
        .iter()
        .map(|t| identity(version(&repo, t).as_bytes()))
        .collect();
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.as_nanos() as u64)
        | 1;
    let mut rng = Rng(seed);
    let drafts: Vec<PathBuf> = pool
        .iter()
        .map(|t| env.write(&format!("{t}.md"), version(&repo, t)))
        .collect();
    let started = Instant::now();
    let mut kills = 0;
    for i in 0..400 {
        if started.elapsed() > Duration::from_secs(40) {
            break;
        }
        let (s, h) = contents(&env, &slot);
        let before = identities(&s, &h);
        let mut cmd = env.store_process();
        let op = match rng.below(4) {
            0 | 1 => {
                let draft = &drafts[rng.below(drafts.len() as u64) as usize];
                cmd.args([
                    OsStr::new("write"),
                    OsStr::new("--force"),
                    OsStr::new("--checkout"),
                ])
                .arg(&repo)
                .arg("--from")
                .arg(draft);
                "write"
            }
            2 => {
                cmd.arg("read").arg(&repo);
                "read"
            }
            _ => {
                let v = 1 + rng.below(h.len().max(1) as u64);
                cmd.args(["restore", "--version", &v.to_string()])
                    .arg(&repo);
                "restore"
            }
        };
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn");
        std::thread::sleep(Duration::from_micros(rng.below(12_000)));
        if child.kill().is_ok() {
            kills += 1;
        }
        let _ = child.wait();
        let what = format!("iteration {i} ({op}), seed {seed}");
        assert_kept(&before, &known, &env, &slot, &what);
        let (_, history) = contents(&env, &slot);
        let distinct: BTreeSet<&Vec<u8>> = history.iter().collect();
        assert!(distinct.len() <= 10, "{what}: {} distinct", distinct.len());
        // A consumed slot would make `read` a no-op: bring an unread one back now and then.
        if rng.below(4) == 0 {
            let mut flip = env.store_process();
            flip.arg("set-progress").arg(&slot).arg("complete");
            let _ = flip.output();
        }
    }
    assert!(kills > 10, "only {kills} processes were killed mid-way");
    let draft = &drafts[0];
    let o = run(env
        .store()
        .args(["write", "--force", "--checkout"])
        .arg(&repo)
        .arg("--from")
        .arg(draft));
    assert!(o.code == 0 || o.code == 1, "{}", o.stderr);
    assert_eq!(temp_files(&env.store_dir()), Vec::<PathBuf>::new());
    assert_history_distinct(&env, &slot, "after the loop");
}

/// `restore` on a store whose disk is full: run inside a private mount namespace (unshare, no
/// privilege needed) on a small tmpfs filled to leave `free` bytes.
fn restore_on_full_disk(env: &TestEnv, repo: &Path, free: u64) -> (i32, String, PathBuf) {
    let out = env.path(&format!("out-{free}"));
    std::fs::create_dir_all(out.join("store")).expect("out dir");
    let mnt = env.path(&format!("mnt-{free}"));
    std::fs::create_dir_all(&mnt).expect("mount point");
    let script = r#"set -e
mnt=$1; prepared=$2; out=$3; free=$4; shift 4
mount -t tmpfs -o size=4m tmpfs "$mnt"
cp -a "$prepared/." "$mnt/"
head -c 8m /dev/zero > "$mnt/filler" 2>/dev/null || true
if [ "$free" -gt 0 ]; then truncate -s -"$free" "$mnt/filler"; fi
set +e
HANDOFF_STORE_DIR="$mnt" "$@" > "$out/stdout" 2> "$out/stderr"
echo $? > "$out/code"
rm -f "$mnt/filler"
cp -a "$mnt/." "$out/store/"
"#;
    let bin = assert_cmd::cargo::cargo_bin("handoff-store");
    let o = env
        .std_cmd(Path::new("unshare"), &[])
        .args(["-rm", "sh", "-c", script, "sh"])
        .arg(&mnt)
        .arg(env.store_dir())
        .arg(&out)
        .arg(free.to_string())
        .arg(bin)
        .args(["restore", "--version", "2"])
        .arg(repo)
        .output()
        .expect("unshare runs");
    assert!(
        o.status.success(),
        "a private tmpfs could not be mounted (unshare -rm, mount -t tmpfs): {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let code = std::fs::read_to_string(out.join("code")).expect("code");
    let stderr = std::fs::read_to_string(out.join("stderr")).expect("stderr");
    (
        code.trim().parse().expect("exit code"),
        stderr,
        out.join("store"),
    )
}

/// Whether this machine lets an unprivileged process mount a tmpfs in a private mount namespace
/// (user namespaces may be switched off, or util-linux missing); why not, when it does not.
fn private_tmpfs_unavailable(env: &TestEnv) -> Option<String> {
    let mnt = env.path("probe-mnt");
    std::fs::create_dir_all(&mnt).expect("probe mount point");
    let probe = env
        .std_cmd(Path::new("unshare"), &[])
        .args(["-rm", "mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs"])
        .arg(&mnt)
        .output();
    match probe {
        Ok(o) if o.status.success() => None,
        Ok(o) => Some(String::from_utf8_lossy(&o.stderr).trim().to_string()),
        Err(e) => Some(format!("unshare could not be run: {e}")),
    }
}

#[test]
fn restore_on_a_full_disk_loses_no_version() {
    let env = TestEnv::new();
    if let Some(why) = private_tmpfs_unavailable(&env) {
        crate::util::skipped(&format!(
            "needs user namespaces (unshare -rm, mount -t tmpfs): {why}"
        ));
        return;
    }
    let repo = env.shop("shop", "main");
    // The version to restore is large; the slot it displaces is small.
    let padding: String = (0..4000)
        .map(|i| format!("- filler line {i} that makes this version large\n"))
        .collect();
    let big = format!("{}{padding}", version(&repo, "big"));
    let o = run(env
        .store()
        .args(["write", "--no-gate", "--checkout"])
        .arg(&repo)
        .write_stdin(big.clone()));
    assert_eq!(o.code, 0, "{}", o.stderr);
    let slot = store_versions(&env, &repo, &["middle", "small"]);
    let name = slot.file_name().expect("name").to_owned();
    let before = {
        let (s, h) = contents(&env, &slot);
        identities(&s, &h)
    };
    for (free, fails) in [(0, true), (64 * 1024, true), (1024 * 1024, false)] {
        let (code, stderr, store) = restore_on_full_disk(&env, &repo, free);
        let slot_copy = store.join(&name);
        let history = store.join(".history").join(&name);
        let mut now: BTreeSet<String> = BTreeSet::new();
        now.insert(identity(&std::fs::read(&slot_copy).expect("slot")));
        let mut versions = 0;
        for e in std::fs::read_dir(&history).expect("history").flatten() {
            if !e.file_name().to_string_lossy().starts_with('.') {
                versions += 1;
                now.insert(identity(&std::fs::read(e.path()).expect("version")));
            }
        }
        for v in &before {
            assert!(now.contains(v), "free {free}: a version was lost");
        }
        if fails {
            assert_eq!(code, 3, "free {free}: {stderr}");
            assert!(stderr.contains("no space left on device"), "{stderr}");
            assert_eq!(
                std::fs::read(&slot_copy).expect("slot"),
                std::fs::read(&slot).expect("slot"),
                "free {free}: the slot is untouched"
            );
        } else {
            assert_eq!(code, 0, "free {free}: {stderr}");
            assert_eq!(
                identity(&std::fs::read(&slot_copy).expect("slot")),
                identity(big.as_bytes())
            );
        }
        if free == 64 * 1024 {
            // The displaced slot reached history before the slot write failed.
            assert_eq!(versions, 3, "free {free}: the displaced slot is kept");
        }
        assert_eq!(temp_files(&store), Vec::<PathBuf>::new(), "free {free}");
    }
}

#[test]
fn a_two_gib_cited_file_is_searched_in_bounded_memory() {
    let env = TestEnv::new();
    let repo = env.repo("big", "main", &[("README", "x\n")]);
    let big = repo.join("big.txt");
    let mut f = std::fs::File::create(&big).expect("big");
    for _ in 0..1000 {
        f.write_all(b"line one\n").expect("text");
    }
    // The rest is a hole: read as zeros, stored as nothing.
    f.set_len(2 << 30).expect("grow");
    drop(f);
    let list = env.write(
        "cites.txt",
        "big.txt | the needle is not there\nbig.txt:5 | line one\n",
    );
    let o = run(&mut env.limited(
        64 << 20,
        "verify-handoff",
        &[
            OsStr::new("--citations"),
            list.as_os_str(),
            OsStr::new("--checkout"),
            repo.as_os_str(),
        ],
    ));
    assert_eq!(o.code, 1, "{}{}", o.stdout, o.stderr);
    assert!(o.stdout.contains("CHANGED  big.txt "), "{}", o.stdout);
    assert!(o.stdout.contains("OK       big.txt:5 "), "{}", o.stdout);
}

#[test]
fn a_huge_slot_is_refused_by_read_and_session_start_in_bounded_memory() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    let slot = env.stored(&repo, &version(&repo, "huge"));
    std::fs::OpenOptions::new()
        .write(true)
        .open(&slot)
        .and_then(|f| f.set_len(3 << 30))
        .expect("grow the slot");
    let o = run(&mut env.limited(
        64 << 20,
        "handoff-store",
        &[OsStr::new("read"), repo.as_os_str()],
    ));
    assert_eq!(o.code, 2, "{}{}", o.stdout, o.stderr);
    assert!(o.stderr.contains("too large"), "{}", o.stderr);
    let input = serde_json::json!({"source": "clear", "cwd": repo}).to_string();
    let o = run(env
        .limited(
            64 << 20,
            "handoff-store",
            &[OsStr::new("hook"), OsStr::new("session-start")],
        )
        .env("LAST_CLEAR_STATE_DIR", env.marker_dir())
        .write_stdin(input));
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stdout.contains("not loaded"), "{}", o.stdout);
    let o = run(&mut env.limited(64 << 20, "handoff-store", &[OsStr::new("list")]));
    assert_eq!(o.code, 0, "{}", o.stderr);
}

#[test]
fn prune_older_than_zero_prunes_a_consumed_handoff_written_a_moment_ago() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    let written = std::time::Instant::now();
    let slot = env.stored(&repo, &version(&repo, "now"));
    let o = run(env.store().arg("set-progress").arg(&slot).arg("consumed"));
    assert_eq!(o.code, 0, "{}", o.stderr);
    let o = run(env.store().args(["prune", "--older-than", "0", "--apply"]));
    assert_eq!(o.code, 0, "{}", o.stderr);
    crate::util::seconds_after(&o.stdout, "(consumed, ", written);
    assert!(o.stdout.contains(" old)"), "{}", o.stdout);
    assert!(!slot.exists());
}

#[test]
fn a_forty_thousand_character_citation_gates_in_linear_time() {
    // Quadratic before: a 40,000-character Pointers path took about a minute, and every hook
    // gating the slot with it. The bound here is two orders of magnitude above linear.
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    for line in [
        "a".repeat(40_000),
        format!("app/Mail/Invoice.php:{}", "1".repeat(40_000)),
    ] {
        let doc = crate::util::with_pointers(&repo.to_string_lossy(), "main", &[line.as_str()]);
        let file = env.write("long.md", doc);
        let o = run(env
            .verify()
            .arg(&file)
            .arg(&repo)
            .timeout(Duration::from_secs(20)));
        assert!(o.code == 1 || o.code == 0, "{}{}", o.stdout, o.stderr);
    }
}

/// A remote's tip commit with a 100 MB message, fetched into the tracking refs: `post-checkout`,
/// `read` and SessionStart never inflate it (each runs with its address space capped at 64 MiB)
/// and offer nothing from it.
#[test]
fn a_huge_remote_tip_is_never_inflated_by_the_hooks_or_read() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    env.git(&repo, &["remote", "add", "origin", "/nowhere"]);
    let doc = env.write(
        "forged/handoff.md",
        crate::util::canonical(&repo.to_string_lossy(), "main"),
    );
    let meta = env.write(
        "forged/meta",
        "written-at: 1764800000\nbranch: main\nhost: alice\n",
    );
    let message = env.write("forged/message", "x".repeat(100 << 20));
    let blob = |p: &std::path::Path| env.git(&repo, &["hash-object", "-w", &p.to_string_lossy()]);
    let listing = env.write(
        "forged/tree",
        format!(
            "100644 blob {}\thandoff.md\n100644 blob {}\tmeta\n",
            blob(&doc),
            blob(&meta)
        ),
    );
    let tree = {
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!("git mktree < '{}'", listing.display()))
            .current_dir(&repo)
            .output()
            .expect("mktree");
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    let commit = env.git(
        &repo,
        &["commit-tree", &tree, "-F", &message.to_string_lossy()],
    );
    env.git(
        &repo,
        &["update-ref", "refs/handoff-remotes/origin/main", &commit],
    );
    let head = env.git(&repo, &["rev-parse", "HEAD"]);
    // Each command's peak RSS, by GNU time: a commit inflated whole is over 100 MB.
    let peak = |what: &str, args: &[&OsStr], stdin: &str| -> u64 {
        let report = env.path(&format!("rss-{what}"));
        let mut all: Vec<&OsStr> = vec![
            OsStr::new("-f"),
            OsStr::new("%M"),
            OsStr::new("-o"),
            report.as_os_str(),
        ];
        let bin = assert_cmd::cargo::cargo_bin("handoff-store");
        all.push(bin.as_os_str());
        all.extend_from_slice(args);
        let mut c = env.std_cmd(std::path::Path::new("/usr/bin/time"), &all);
        c.env("HANDOFF_STORE_DIR", env.store_dir())
            .env("LAST_CLEAR_STATE_DIR", env.marker_dir())
            .current_dir(&repo);
        let o = run(assert_cmd::Command::from_std(c).write_stdin(stdin.to_string()));
        assert!(
            !o.stdout.contains("type the mailables") && !o.stderr.contains("has a handoff"),
            "{what} offered the huge version: {}{}",
            o.stdout,
            o.stderr
        );
        std::fs::read_to_string(&report)
            .expect("GNU time's report")
            .trim()
            .lines()
            .last()
            .and_then(|l| l.parse().ok())
            .expect("a peak RSS in KiB")
    };
    let input = serde_json::json!({"source": "clear", "cwd": repo}).to_string();
    for (what, args, stdin) in [
        (
            "post-checkout",
            vec!["hook", "post-checkout", head.as_str(), head.as_str(), "1"],
            "",
        ),
        ("read", vec!["read"], ""),
        (
            "session-start",
            vec!["hook", "session-start"],
            input.as_str(),
        ),
    ] {
        let args: Vec<&OsStr> = args.iter().map(OsStr::new).collect();
        let kib = peak(what, &args, stdin);
        assert!(kib < 48 << 10, "{what} peaked at {kib} KiB");
    }
}
