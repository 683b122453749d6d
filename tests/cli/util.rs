//! `TestEnv`: a temporary HOME and work area, real git repositories built with the git CLI
//! (fixed identity and dates), and the real binaries run with a clean environment.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command as Process;

use assert_cmd::Command;

/// The canonical handoff of docs/gate.md §1.8, with its checkout and branch substituted.
pub fn canonical(checkout: &str, branch: &str) -> String {
    format!(
        "# Handoff — type the mailables
branch: {branch}
checkout: {checkout}
status: Invoice done; Reminder not started. Gate run, format held.
progress: complete

## Do not re-derive

### Decisions
- Type the builder's return, not each caller — chosen over annotating every call
  site, because the type is lost at the boundary. `app/Mail/Invoice.php:24`

### Dead ends
- A docblock on the caller: the analyser still inferred `mixed`. `app/Mail/`

### Traps
- None.

## Next
1. Do Reminder the same way, starting from `app/Mail/Reminder.php`.

## Pointers
```text
# the boundary this whole ticket turns on
app/Mail/Invoice.php:24 | public function build
app/Mail/
```

## Unverifiable
- `ops-config/mail/transport.php` lives in the ops repository, not in this checkout.
"
    )
}

/// The canonical handoff for `repo` on `main`, told apart by `tag` in its status line.
pub fn version(repo: &Path, tag: &str) -> String {
    canonical(&repo.to_string_lossy(), "main").replace("status: ", &format!("status: {tag} "))
}

/// A minimal well-formed handoff whose Pointers block is `pointers` and whose Decisions cite
/// each pointer (so nothing is dead or uncovered).
pub fn with_pointers(checkout: &str, branch: &str, pointers: &[&str]) -> String {
    let refs: Vec<String> = pointers
        .iter()
        .filter_map(|p| {
            let left = p.split('|').next()?.trim();
            (!left.is_empty() && !left.starts_with('#')).then(|| format!("- see {left}"))
        })
        .collect();
    format!(
        "# Handoff — test\nbranch: {branch}\ncheckout: {checkout}\nstatus: testing\n\n## Do not re-derive\n\n### Decisions\n{}\n\n### Dead ends\n- None.\n\n### Traps\n- None.\n\n## Next\n1. Go on.\n\n## Pointers\n```\n{}\n```\n",
        if refs.is_empty() {
            "- None.".to_string()
        } else {
            refs.join("\n")
        },
        pointers.join("\n")
    )
}

/// The lines 25–40 filler for the canonical repository's Invoice.php (40 lines, line 24 holds
/// `public function build`).
pub fn invoice_php() -> String {
    let mut lines = vec!["<?php".to_string()];
    lines.extend((2..24).map(|i| format!("// line {i}")));
    lines.push("    public function build()".into());
    lines.extend((25..=40).map(|i| format!("// tail {i}")));
    lines.join("\n") + "\n"
}

pub struct TestEnv {
    pub dir: tempfile::TempDir,
}

impl TestEnv {
    pub fn new() -> TestEnv {
        let dir = tempfile::Builder::new()
            .prefix("hs-test")
            .tempdir()
            .expect("temp dir");
        std::fs::create_dir_all(dir.path().join("home")).expect("home");
        TestEnv { dir }
    }

    /// The canonical (real) path of the work area.
    pub fn root(&self) -> PathBuf {
        std::fs::canonicalize(self.dir.path()).expect("canonical temp dir")
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.root().join(rel)
    }

    pub fn home(&self) -> PathBuf {
        self.path("home")
    }

    /// Write a file (parents created) and return its path.
    pub fn write(&self, rel: &str, content: impl AsRef<[u8]>) -> PathBuf {
        let p = self.path(rel);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).expect("parent dirs");
        }
        std::fs::write(&p, content).expect("write file");
        p
    }

    /// Run git in `dir` with a fixed identity and dates; panics on failure.
    pub fn git(&self, dir: &Path, args: &[&str]) -> String {
        let out = Process::new("git")
            .args(args)
            .current_dir(dir)
            .env("HOME", self.home())
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_NAME", "Test")
            .env("GIT_AUTHOR_EMAIL", "test@example.com")
            .env("GIT_COMMITTER_NAME", "Test")
            .env("GIT_COMMITTER_EMAIL", "test@example.com")
            .env("GIT_AUTHOR_DATE", "2026-01-01T00:00:00Z")
            .env("GIT_COMMITTER_DATE", "2026-01-01T00:00:00Z")
            .env_remove("GIT_DIR")
            .env_remove("GIT_WORK_TREE")
            .output()
            .expect("git runs");
        assert!(
            out.status.success(),
            "git {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// A repository at `rel` on `branch` with `files` committed.
    pub fn repo(&self, rel: &str, branch: &str, files: &[(&str, &str)]) -> PathBuf {
        let dir = self.path(rel);
        std::fs::create_dir_all(&dir).expect("repo dir");
        self.git(&dir, &["init", "-q", "-b", branch]);
        for (name, content) in files {
            self.write(&format!("{rel}/{name}"), content);
        }
        self.git(&dir, &["add", "-A"]);
        self.git(&dir, &["commit", "-q", "--allow-empty", "-m", "init"]);
        std::fs::canonicalize(dir).expect("canonical repo")
    }

    /// The canonical shop repository of docs/gate.md §1.8 (a 40-line Invoice.php).
    pub fn shop(&self, rel: &str, branch: &str) -> PathBuf {
        let php = invoice_php();
        self.repo(
            rel,
            branch,
            &[("app/Mail/Invoice.php", &php), ("composer.json", "{}\n")],
        )
    }

    /// A command for one of the crate's binaries with a clean environment.
    pub fn cmd(&self, bin: &str) -> Command {
        Command::from_std(self.std_cmd(&assert_cmd::cargo::cargo_bin(bin), &[]))
    }

    /// `program args…` as a std process with this env's clean environment (for tests that
    /// spawn and kill, or wrap a binary in another program).
    pub fn std_cmd(&self, program: &Path, args: &[&std::ffi::OsStr]) -> Process {
        let mut c = Process::new(program);
        c.args(args).current_dir(self.root());
        for (k, _) in std::env::vars_os() {
            let k = k.to_string_lossy().into_owned();
            if k.starts_with("CTX_")
                || k.starts_with("VERIFY_")
                || k.starts_with("HANDOFF_")
                || k.starts_with("GIT_")
                || k == "CONTEXT_ECONOMY_CHECKOUT"
                || k == "XDG_DATA_HOME"
            {
                c.env_remove(&k);
            }
        }
        c.env("HOME", self.home());
        c
    }

    /// `handoff-store` as a std process using this env's store.
    pub fn store_process(&self) -> Process {
        let mut c = self.std_cmd(&assert_cmd::cargo::cargo_bin("handoff-store"), &[]);
        c.env("HANDOFF_STORE_DIR", self.store_dir());
        c
    }

    /// `bin args…` run with its address space capped at `bytes` (util-linux `prlimit`): what
    /// it maps can never exceed the cap, so its peak RSS cannot either.
    pub fn limited(&self, bytes: u64, bin: &str, args: &[&std::ffi::OsStr]) -> Command {
        let limit = format!("--as={bytes}");
        let bin = assert_cmd::cargo::cargo_bin(bin);
        let mut all: Vec<&std::ffi::OsStr> = vec![limit.as_ref(), "--".as_ref(), bin.as_os_str()];
        all.extend_from_slice(args);
        let mut c = self.std_cmd(Path::new("prlimit"), &all);
        c.env("HANDOFF_STORE_DIR", self.store_dir());
        Command::from_std(c)
    }

    pub fn verify(&self) -> Command {
        self.cmd("verify-handoff")
    }
}

/// The MD5 of a path's bytes, from the system's `md5sum` (32 hex digits).
pub fn md5sum(path: &Path) -> String {
    let out = Process::new("sh")
        .arg("-c")
        .arg("printf %s \"$1\" | md5sum")
        .arg("sh")
        .arg(path)
        .output()
        .expect("md5sum");
    String::from_utf8_lossy(&out.stdout)[..32].to_string()
}

/// The store's slug, written again independently: bytes outside `A-Za-z0-9._-` become `_`.
pub fn slug(s: &str) -> String {
    s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b".-_".contains(&b) {
                b as char
            } else {
                '_'
            }
        })
        .collect()
}

/// Output of a finished command, as strings.
pub struct Outcome {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

pub fn run(cmd: &mut Command) -> Outcome {
    let out = cmd.output().expect("command runs");
    Outcome {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

pub fn json(cmd: &mut Command) -> (i32, serde_json::Value) {
    let o = run(cmd);
    let v =
        serde_json::from_str(&o.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {}", o.stdout));
    (o.code, v)
}

impl TestEnv {
    /// The store directory every `handoff-store` command of this env uses.
    pub fn store_dir(&self) -> PathBuf {
        self.path("store")
    }

    /// `handoff-store` with `HANDOFF_STORE_DIR` set to this env's store.
    pub fn store(&self) -> Command {
        let mut c = self.cmd("handoff-store");
        c.env("HANDOFF_STORE_DIR", self.store_dir());
        // Most hook tests fire SessionStart many times for one session id; the exactly-once
        // tests put the window back.
        c.env("HANDOFF_CLAIM_WINDOW_SECONDS", "0");
        c
    }

    /// The slot name computed by hand: `<slug(basename)>-<slug(ref)>-<md5sum(main)[..8]>.md`,
    /// with the MD5 from the system's `md5sum`.
    pub fn slot_name(&self, main: &Path, reference: &str) -> String {
        let base = main
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        format!(
            "{}-{}-{}.md",
            slug(&base),
            slug(&reference.replace('/', "-")),
            &md5sum(main)[..8]
        )
    }

    /// Set a file's modification time to `secs_ago` seconds in the past.
    /// Turn the automatic paths on in `repo` although it has no handoff yet
    /// (`git config handoff.enabled true`, as a user would).
    pub fn use_handoffs(&self, repo: &Path) {
        self.git(repo, &["config", "handoff.enabled", "true"]);
    }

    pub fn age(&self, path: &Path, secs_ago: u64) {
        let t = std::time::SystemTime::now() - std::time::Duration::from_secs(secs_ago);
        std::fs::File::options()
            .write(true)
            .open(path)
            .expect("open for mtime")
            .set_modified(t)
            .expect("set mtime");
    }

    /// Store `doc` for checkout `dir` through `handoff-store write`; panics unless the gate
    /// passed (exit 0). Returns the slot path.
    pub fn stored(&self, dir: &Path, doc: &str) -> PathBuf {
        self.write_doc(dir, doc, &[0])
    }

    /// Store `doc` for `dir` whatever the citations say (exit 0 or 1); the slot path.
    pub fn stored_any(&self, dir: &Path, doc: &str) -> PathBuf {
        self.write_doc(dir, doc, &[0, 1])
    }

    fn write_doc(&self, dir: &Path, doc: &str, accepted: &[i32]) -> PathBuf {
        let o = run(self
            .store()
            .args(["write", "--checkout"])
            .arg(dir)
            .write_stdin(doc.to_string()));
        assert!(
            accepted.contains(&o.code),
            "write failed: {}{}",
            o.stdout,
            o.stderr
        );
        let line = o
            .stdout
            .lines()
            .find(|l| l.starts_with("stored   "))
            .expect("stored line");
        PathBuf::from(line["stored   ".len()..].split(" (").next().expect("path"))
    }
}

/// File modification time.
pub fn mtime(path: &Path) -> std::time::SystemTime {
    std::fs::metadata(path)
        .and_then(|m| m.modified())
        .expect("mtime")
}

impl TestEnv {
    /// `LAST_CLEAR_STATE_DIR` of this env.
    pub fn marker_dir(&self) -> PathBuf {
        self.path("markers")
    }

    /// The `/clear` marker file for (`main`, `reference`), computed by hand with `md5sum`.
    pub fn marker_file(&self, main: &Path, reference: &str) -> PathBuf {
        let name = format!(
            "{}-{}.json",
            md5sum(main),
            slug(&reference.replace('/', "-"))
        );
        self.marker_dir().join(name)
    }

    /// `handoff-store hook <event>` with `stdin`.
    pub fn hook(&self, event: &str, stdin: &str) -> Command {
        let mut c = self.store();
        c.args(["hook", event])
            .env("LAST_CLEAR_STATE_DIR", self.marker_dir())
            .write_stdin(stdin.to_string());
        c
    }
}

/// The `additionalContext` of a session-start output (which must be exactly one JSON line).
pub fn context(o: &Outcome) -> String {
    assert_eq!(o.code, 0);
    assert_eq!(o.stderr, "", "hooks keep stderr empty");
    assert_eq!(o.stdout.matches('\n').count(), 1, "one line: {}", o.stdout);
    let v: serde_json::Value =
        serde_json::from_str(&o.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {}", o.stdout));
    let obj = v.as_object().expect("object");
    let keys: Vec<&String> = obj.keys().collect();
    assert_eq!(
        keys,
        ["hookSpecificOutput", "systemMessage"],
        "{}",
        o.stdout
    );
    assert!(
        v["systemMessage"]
            .as_str()
            .is_some_and(|m| m.starts_with("handoff-store: ")),
        "the receipt for the person: {}",
        o.stdout
    );
    assert_eq!(v["hookSpecificOutput"]["hookEventName"], "SessionStart");
    v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .expect("additionalContext")
        .to_string()
}

/// Make a file executable.
pub fn chmod_x(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

/// Wait (up to `secs`) for `check` to hold.
pub fn eventually(secs: u64, mut check: impl FnMut() -> bool) -> bool {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    while std::time::Instant::now() < deadline {
        if check() {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    check()
}

/// Say on the real stderr — past libtest's capture, so a passing run shows it too — that a case
/// was skipped because the machine lacks what it needs (a kernel feature, a tool), and why.
pub fn skipped(why: &str) {
    use std::io::Write;
    let case = std::thread::current()
        .name()
        .unwrap_or("a test")
        .to_string();
    let _ = writeln!(std::io::stderr(), "skipped: {case}: {why}");
}

/// Run one of the crate's binaries as the unprivileged user `uid` through `setpriv`, from `/`,
/// with HOME unset. Only root can: the tests that call it are `#[ignore = "needs root"]`, and
/// CI, which is root, runs them (`--include-ignored`); anywhere else they fail, saying why.
pub fn as_user(
    uid: u32,
    bin: &str,
    args: &[&std::ffi::OsStr],
    envs: &[(&str, &std::ffi::OsStr)],
) -> Outcome {
    let id = Process::new("id").arg("-u").output().expect("id -u");
    assert!(
        String::from_utf8_lossy(&id.stdout).trim() == "0" && Path::new("/usr/bin/setpriv").exists(),
        "needs root and /usr/bin/setpriv to act as another user"
    );
    let mut c = Command::new("/usr/bin/setpriv");
    c.arg(format!("--reuid={uid}"))
        .arg(format!("--regid={uid}"))
        .arg("--clear-groups")
        .arg(assert_cmd::cargo::cargo_bin(bin))
        .args(args)
        .current_dir("/")
        .env_remove("HOME");
    for (k, v) in envs {
        c.env(k, v);
    }
    let o = run(&mut c);
    assert!(
        !o.stderr.starts_with("setpriv:"),
        "the binary is not reachable by uid {uid}: {}",
        o.stderr
    );
    o
}

impl TestEnv {
    /// A work area other users can enter (the temp dir is private to its creator).
    pub fn shared_dir(&self) -> PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let dir = self.path("shared");
        std::fs::create_dir_all(&dir).expect("shared dir");
        for d in [self.root(), dir.clone()] {
            std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        }
        dir
    }
}

/// `text` with every run of spaces made one, for output aligned in columns.
pub fn squeezed(text: &str) -> String {
    text.lines()
        .map(|l| {
            l.split(' ')
                .filter(|w| !w.is_empty())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Whether process `pid` is stopped (state `T` in /proc): paused by the kill seam's `STOP`.
pub fn paused(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            s.rsplit_once(')')
                .map(|(_, r)| r.trim_start().starts_with('T'))
        })
        .unwrap_or(false)
}

/// Let a paused process go on (SIGCONT).
pub fn resume(pid: u32) {
    let ok = Process::new("kill")
        .args(["-CONT", &pid.to_string()])
        .status()
        .expect("kill");
    assert!(ok.success());
}

/// The `progress:` value of the handoff at `path`, if it has one.
pub fn progress(path: &Path) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix("progress: ").map(str::to_string))
}

/// An external gate (`VERIFY_HANDOFF_GATE`) that runs `says` (shell lines, `$1 $2` its
/// arguments) and exits with `$STUB_GATE_EXIT` (0 when unset).
pub fn stub_gate(env: &TestEnv, says: &str) -> PathBuf {
    let p = env.write(
        "stub-gate.sh",
        format!("#!/bin/sh\n{says}\nexit \"${{STUB_GATE_EXIT:-0}}\"\n"),
    );
    chmod_x(&p);
    p
}

/// Every file under `dir`, folders walked (never through a link).
pub fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if e.file_type().is_ok_and(|t| t.is_dir()) {
            out.extend(files_under(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// The whole seconds `text` says right after `before` (`… fixed 3 seconds ago`), checked to be
/// no more than the seconds `since` has run (plus the second a truncated clock may add): an
/// assertion on a relative time that holds wherever the wall clock's second falls.
pub fn seconds_after(text: &str, before: &str, since: std::time::Instant) -> u64 {
    let rest = text
        .split_once(before)
        .unwrap_or_else(|| panic!("{before:?} not in: {text}"))
        .1;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    let n: u64 = digits
        .parse()
        .unwrap_or_else(|_| panic!("no number after {before:?}: {text}"));
    let unit = &rest[digits.len()..];
    assert!(
        unit.starts_with(" second"),
        "{before:?} is not followed by seconds: {text}"
    );
    let bound = since.elapsed().as_secs() + 1;
    assert!(
        n <= bound,
        "{n} seconds after {before:?}, but only {bound} passed: {text}"
    );
    n
}
