//! Sync timings of the release binary (issue 10), printed as a markdown table: `push` and
//! `pull` with 1 and with 1,000 branches' handoffs against a bare remote on the local disk, and
//! the hooks with 1,000 remote-tracking handoff refs present. Every measured run starts from the
//! same state (a fresh bare remote, a fresh store, reset refs), rebuilt outside the timing.
//! Run with `cargo bench --bench sync`; `cargo bench --bench sync -- prune` runs only the
//! issue-21 cases (a remote with 10,000 chains whose branches are gone: `push --prune`, with
//! the tracking refs loose and packed, and `pull` with the 10,000 refs unchanged).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const RUNS: usize = 5;
const BRANCHES: usize = 1000;

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "Bench")
        .env("GIT_AUTHOR_EMAIL", "bench@example.com")
        .env("GIT_COMMITTER_NAME", "Bench")
        .env("GIT_COMMITTER_EMAIL", "bench@example.com")
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn git_stdin(dir: &Path, args: &[&str], input: &str) {
    use std::io::Write;
    let mut child = Command::new("git")
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::piped())
        .spawn()
        .expect("git runs");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input.as_bytes())
        .expect("feed git");
    assert!(child.wait().is_ok_and(|s| s.success()), "git {args:?}");
}

fn doc(repo: &Path, branch: &str) -> String {
    format!(
        "# Handoff — bench {branch}\nbranch: {branch}\ncheckout: {}\nstatus: benchmark\nprogress: complete\n\n## Do not re-derive\n\n### Decisions\n- keep `a.txt`\n\n### Dead ends\n- none\n\n### Traps\n- none\n\n## Next\n- nothing\n\n## Pointers\n```\na.txt:1 | hello\n```\n",
        repo.display()
    )
}

struct World {
    root: PathBuf,
    seed: PathBuf,
}

impl World {
    fn new() -> World {
        let root = std::env::var_os("CARGO_TARGET_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target"))
            .join("bench-sync");
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).expect("bench dir");
        let root = std::fs::canonicalize(&root).expect("canonical");
        let seed = root.join("seed");
        std::fs::create_dir_all(&seed).expect("seed");
        git(&seed, &["init", "-q", "-b", "main"]);
        std::fs::write(seed.join("a.txt"), "hello\n").expect("a.txt");
        git(&seed, &["add", "-A"]);
        git(&seed, &["commit", "-q", "-m", "init"]);
        let head = git(&seed, &["rev-parse", "HEAD"]);
        let mut refs = String::new();
        for i in 0..BRANCHES {
            refs.push_str(&format!("create refs/heads/b{i:04} {head}\n"));
        }
        git_stdin(&seed, &["update-ref", "--stdin"], &refs);
        World { root, seed }
    }

    /// A fresh bare remote holding every branch (and no handoffs).
    fn remote(&self, name: &str) -> PathBuf {
        let bare = self.root.join(name);
        let _ = std::fs::remove_dir_all(&bare);
        git(
            &self.root,
            &["clone", "-q", "--bare", &self.seed.to_string_lossy(), name],
        );
        bare
    }

    /// A clone of `bare` with every branch local, and a store path for it.
    fn clone(&self, bare: &Path, name: &str) -> (PathBuf, PathBuf) {
        let repo = self.root.join(name);
        let _ = std::fs::remove_dir_all(&repo);
        git(
            &self.root,
            &["clone", "-q", &format!("file://{}", bare.display()), name],
        );
        let head = git(&repo, &["rev-parse", "HEAD"]);
        let mut refs = String::new();
        for i in 0..BRANCHES {
            refs.push_str(&format!("create refs/heads/b{i:04} {head}\n"));
        }
        git_stdin(&repo, &["update-ref", "--stdin"], &refs);
        let store = self.root.join(format!("{name}-store"));
        (std::fs::canonicalize(&repo).expect("clone"), store)
    }

    /// Slots for `n` branches (main first) written straight into `store`.
    fn fill(&self, repo: &Path, store: &Path, n: usize) {
        let _ = std::fs::remove_dir_all(store);
        std::fs::create_dir_all(store).expect("store");
        let branches = std::iter::once("main".to_string())
            .chain((0..BRANCHES).map(|i| format!("b{i:04}")))
            .take(n);
        for b in branches {
            let name = handoff_store::store::slot_name(repo.to_string_lossy().as_bytes(), &b);
            std::fs::write(store.join(name), doc(repo, &b)).expect("slot");
        }
    }
}

/// The binaries to time: this build's, and first an earlier build's when
/// `HANDOFF_BENCH_BEFORE=<dir>` holds one (then every case runs both, one run of each in turn,
/// so a machine whose speed drifts drifts under both alike).
fn programs() -> Vec<PathBuf> {
    let this = PathBuf::from(env!("CARGO_BIN_EXE_handoff-store"));
    match std::env::var_os("HANDOFF_BENCH_BEFORE") {
        Some(dir) => vec![PathBuf::from(dir).join("handoff-store"), this],
        None => vec![this],
    }
}

/// Run `case(program)` `runs` times for every program of [`programs`], interleaved (who goes
/// first alternates); the times per program.
fn interleaved(runs: usize, mut case: impl FnMut(&Path) -> Duration) -> Vec<Vec<Duration>> {
    let programs = programs();
    // More runs for a before/after table: `HANDOFF_BENCH_REPEAT` times as many.
    let runs = if programs.len() > 1 {
        runs * std::env::var("HANDOFF_BENCH_REPEAT")
            .ok()
            .and_then(|v| v.parse::<usize>().ok())
            .unwrap_or(1)
            .max(1)
    } else {
        runs
    };
    let mut times = vec![Vec::new(); programs.len()];
    for i in 0..runs {
        for k in 0..programs.len() {
            let k = if i % 2 == 0 {
                k
            } else {
                programs.len() - 1 - k
            };
            times[k].push(case(&programs[k]));
        }
    }
    times
}

fn store_cmd(repo: &Path, store: &Path, home: &Path, args: &[&str]) -> Command {
    program_cmd(
        Path::new(env!("CARGO_BIN_EXE_handoff-store")),
        repo,
        store,
        home,
        args,
    )
}

fn program_cmd(program: &Path, repo: &Path, store: &Path, home: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(program);
    c.args(args)
        .current_dir(repo)
        .env("HOME", home)
        .env("HANDOFF_STORE_DIR", store)
        .env("HANDOFF_CLAIM_WINDOW_SECONDS", "0")
        .env("LAST_CLEAR_STATE_DIR", home.join("markers"))
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env_remove("XDG_DATA_HOME")
        .env_remove("CONTEXT_ECONOMY_CHECKOUT")
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    c
}

fn timed(mut c: Command, stdin: Option<&str>) -> Duration {
    use std::io::Write;
    if stdin.is_some() {
        c.stdin(Stdio::piped());
    }
    let start = Instant::now();
    let mut child = c.spawn().expect("spawn");
    if let (Some(text), Some(mut pipe)) = (stdin, child.stdin.take()) {
        let _ = pipe.write_all(text.as_bytes());
    }
    let status = child.wait().expect("wait");
    let elapsed = start.elapsed();
    assert!(status.code().is_some(), "the command ran to its end");
    elapsed
}

fn median(mut times: Vec<Duration>) -> (f64, f64) {
    times.sort();
    (
        times[times.len() / 2].as_secs_f64() * 1000.0,
        times[0].as_secs_f64() * 1000.0,
    )
}

/// One row per case: with an earlier build, its median and the change beside this build's.
fn rows(name: &str, target: Option<f64>, mut times: Vec<Vec<Duration>>) {
    let now = median(times.pop().expect("this build's times"));
    match times.pop() {
        Some(before) => {
            let (b, _) = median(before);
            let change = (now.0 - b) / b * 100.0;
            println!(
                "| {name} | {b:.1} ms | {:.1} ms | {:.1} ms | {change:+.1} % |",
                now.0, now.1
            );
        }
        None => row(name, target, now),
    }
}

fn row(name: &str, target: Option<f64>, (median, min): (f64, f64)) {
    let (t, met) = match target {
        Some(t) => (
            format!("≤ {t:.0} ms"),
            if median <= t { "yes" } else { "**no**" },
        ),
        None => ("—".to_string(), "—"),
    };
    println!("| {name} | {t} | {median:.1} ms | {min:.1} ms | {met} |");
}

fn main() {
    let w = World::new();
    let home = w.root.join("home");
    std::fs::create_dir_all(&home).expect("home");
    if programs().len() > 1 {
        println!("| case | before: median | median | min | change |");
        println!("| --- | ---: | ---: | ---: | ---: |");
    } else {
        println!("| case | target (median) | median | min | met |");
        println!("| --- | ---: | ---: | ---: | --- |");
    }
    if std::env::args().any(|a| a == "prune") {
        prune_cases(&w, &home);
        return;
    }

    for (n, label) in [(1usize, "1 branch"), (BRANCHES, "1,000 branches")] {
        // push: the slots are recorded as commits, then sent to an empty remote.
        // Fresh folders for every run, nothing deleted before it (on this machine's ext4
        // without a journal a file created after many deletions scans the freed inodes first:
        // deleting the last run's fixture made the next run's timing noise).
        let mut run = 0;
        let times = interleaved(RUNS, |program| {
            run += 1;
            let bare = w.remote(&format!("push-{n}-{run}.git"));
            let (repo, store) = w.clone(&bare, &format!("pusher-{n}-{run}"));
            w.fill(&repo, &store, n);
            let args: &[&str] = if n == 1 {
                &["push"]
            } else {
                &["push", "--all"]
            };
            timed(program_cmd(program, &repo, &store, &home, args), None)
        });
        rows(&format!("push, {label} (record + send)"), None, times);

        // pull: a fresh clone and an empty store take every handoff the remote has.
        let bare = w.remote("remote.git");
        let (repo, store) = w.clone(&bare, "pusher");
        w.fill(&repo, &store, n);
        let args: &[&str] = if n == 1 {
            &["push"]
        } else {
            &["push", "--all"]
        };
        let status = store_cmd(&repo, &store, &home, args)
            .status()
            .expect("seed push");
        assert!(status.success(), "seeding push");
        let mut run = 0;
        let times = interleaved(RUNS, |program| {
            run += 1;
            let (repo, store) = w.clone(&bare, &format!("puller-{n}-{run}"));
            timed(program_cmd(program, &repo, &store, &home, &["pull"]), None)
        });
        rows(
            &format!("pull, {label} (fetch + merge + gated import)"),
            None,
            times,
        );
    }

    // Hooks with 1,000 remote-tracking handoff refs present.
    let bare = w.remote("remote.git");
    let (repo, store) = w.clone(&bare, "pusher");
    w.fill(&repo, &store, BRANCHES);
    assert!(
        store_cmd(&repo, &store, &home, &["push", "--all"])
            .status()
            .expect("push")
            .success()
    );
    let (reader, reader_store) = w.clone(&bare, "reader");
    git(
        &reader,
        &[
            "fetch",
            "-q",
            "origin",
            "+refs/handoffs/*:refs/handoff-remotes/origin/*",
        ],
    );
    let clear = format!(
        "{{\"session_id\":\"bench\",\"cwd\":{:?},\"source\":\"clear\"}}",
        reader.to_string_lossy()
    );
    let slot = reader_store.join(handoff_store::store::slot_name(
        reader.to_string_lossy().as_bytes(),
        "main",
    ));
    let in_reader = |program: &Path, args: &[&str], stdin: Option<&str>| {
        timed(
            program_cmd(program, &reader, &reader_store, &home, args),
            stdin,
        )
    };
    let session_start =
        |program: &Path| in_reader(program, &["hook", "session-start"], Some(&clear));
    // The slot present: the refs are never looked at.
    let times = interleaved(15, |program| {
        std::fs::create_dir_all(&reader_store).expect("store");
        std::fs::write(&slot, doc(&reader, "main")).expect("slot");
        session_start(program)
    });
    rows(
        "hook session-start, slot present, 1,000 tracking refs",
        Some(10.0),
        times,
    );
    // The slot empty: the newest unread handoff is taken from the refs, gated and delivered.
    let times = interleaved(15, |program| {
        let _ = std::fs::remove_dir_all(&reader_store);
        let _ = Command::new("git")
            .args(["update-ref", "-d", "refs/handoffs/main"])
            .current_dir(&reader)
            .status();
        session_start(program)
    });
    rows(
        "hook session-start, slot empty, offered from 1,000 tracking refs",
        Some(10.0),
        times,
    );
    let head = git(&reader, &["rev-parse", "HEAD"]);
    let times = interleaved(15, |program| {
        let _ = std::fs::remove_dir_all(&reader_store);
        in_reader(program, &["hook", "post-checkout", &head, &head, "1"], None)
    });
    rows(
        "hook post-checkout, slot empty, named from 1,000 tracking refs",
        Some(10.0),
        times,
    );
}

/// How many remote chains the issue-21 cases hold.
const GONE: usize = 10_000;

/// Issue 21: a remote with 10,000 chains `refs/handoffs/gone-N` (packed, as a server keeps
/// them; each its own version, written 60 days ago on another host) whose branches exist
/// nowhere; `push --prune` deletes them all in one push (target ≤ 5 s), once with the
/// remote-tracking refs as `git fetch` leaves them (loose) and once after `git pack-refs`; and
/// `pull` with the 10,000 refs unchanged.
///
/// Every run works on fresh copies of templates built once, and nothing is deleted between the
/// runs: on an ext4 without a journal (this machine's), allocating an inode skips every inode
/// freed in the last one to six minutes, so a file created after 10,000 deletions scans
/// 10,000 inodes first — rebuilding the fixture before each run measured the fixture's own
/// deletions (pack-refs, the previous run) several times over. The remote sits on tmpfs
/// (`/dev/shm`) when there is one, as a server's disk is not the user's: its `receive-pack`
/// creates a lock file per deleted ref there. `HANDOFF_BENCH_REMOTE_ON_DISK=1` puts it beside
/// the clone instead.
fn prune_cases(w: &World, home: &Path) {
    let template = w.remote("prune-template.git");
    let when = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_secs()
        - 60 * 86_400;
    let mut stream = String::new();
    for i in 0..GONE {
        let branch = format!("gone-{i}");
        let handoff = doc(Path::new("/elsewhere/repo"), &branch);
        let meta = format!("written-at: {when}\nbranch: {branch}\nhost: old-host\n");
        stream.push_str(&format!(
            "commit refs/handoffs/{branch}\ncommitter Bench <bench@example.com> {when} +0000\ndata 7\nhandoff\nM 100644 inline handoff.md\ndata {}\n{handoff}\nM 100644 inline meta\ndata {}\n{meta}\n",
            handoff.len(),
            meta.len()
        ));
    }
    git_stdin(&template, &["fast-import", "--quiet"], &stream);
    git(&template, &["pack-refs", "--all"]);
    let (loose, _) = w.clone(&template, "prune-template-loose");
    git(
        &loose,
        &[
            "fetch",
            "-q",
            "origin",
            "+refs/handoffs/*:refs/handoff-remotes/origin/*",
        ],
    );
    let packed = w.root.join("prune-template-packed");
    copy(&loose, &packed);
    git(&packed, &["pack-refs", "--all"]);
    let shm = Path::new("/dev/shm");
    let remotes = if std::env::var_os("HANDOFF_BENCH_REMOTE_ON_DISK").is_none() && shm.is_dir() {
        shm.join(format!("handoff-bench-{}", std::process::id()))
    } else {
        w.root.join("prune-remotes")
    };
    let mut n = 0;
    for (template_clone, label) in [(&loose, "loose"), (&packed, "packed")] {
        let times = interleaved(3, |program| {
            n += 1;
            let bare = remotes.join(format!("{n}.git"));
            copy(&template, &bare);
            let repo = w.root.join(format!("prune-run-{n}"));
            copy(template_clone, &repo);
            let url = format!("file://{}", bare.display());
            git(&repo, &["remote", "set-url", "origin", &url]);
            let store = w.root.join(format!("prune-run-{n}-store"));
            let took = timed(
                program_cmd(program, &repo, &store, home, &["push", "--prune", "origin"]),
                None,
            );
            let left =
                |dir: &Path, prefix: &str| git(dir, &["for-each-ref", prefix]).lines().count();
            assert_eq!(left(&bare, "refs/handoffs"), 0, "every chain deleted");
            assert_eq!(
                left(&repo, "refs/handoff-remotes"),
                0,
                "every tracking ref deleted"
            );
            took
        });
        rows(
            &format!("push --prune, 10,000 chains of gone branches, tracking refs {label}"),
            Some(5000.0),
            times,
        );
    }
    let mut times = Vec::new();
    for _ in 0..3 {
        times.push(timed(
            store_cmd(&loose, &w.root.join("prune-pull-store"), home, &["pull"]),
            None,
        ));
    }
    row("pull, 10,000 remote chains unchanged", None, median(times));
    let _ = std::fs::remove_dir_all(&remotes);
}

/// `cp -a from to`: a copy that deletes nothing.
fn copy(from: &Path, to: &Path) {
    if let Some(parent) = to.parent() {
        std::fs::create_dir_all(parent).expect("parent");
    }
    let status = Command::new("cp")
        .arg("-a")
        .arg(from)
        .arg(to)
        .status()
        .expect("cp runs");
    assert!(
        status.success(),
        "cp -a {} {}",
        from.display(),
        to.display()
    );
}
