//! The shared harness of the end-to-end suite: installing a pinned client from the npm registry,
//! the network namespace, a scene (HOME, repository, store), waiting on a condition, driving a
//! terminal client on a pseudo-terminal, running our own binary, and what a failing scenario
//! prints so that a product bug can be told from a harness bug without a rerun.

use std::cell::RefCell;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::mock;

pub const STORE_BIN: &str = env!("CARGO_BIN_EXE_handoff-store");
pub const ROOT: &str = env!("CARGO_MANIFEST_DIR");

pub type Check = Result<(), String>;
/// A named scenario.
pub type Scenario = (&'static str, fn(&Suite) -> Check);

pub fn ensure(cond: bool, what: impl FnOnce() -> String) -> Check {
    if cond { Ok(()) } else { Err(what()) }
}

/// A pinned client from the npm registry: its package, version, program and cache folder name.
pub struct Client {
    pub package: &'static str,
    pub version: &'static str,
    pub program: &'static str,
    pub folder: &'static str,
}

/// `${HANDOFF_E2E_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/handoff-store-e2e}/<folder>-<v>`.
fn cache_dir(client: &Client) -> PathBuf {
    let leaf = format!("{}-{}", client.folder, client.version);
    if let Some(d) = std::env::var_os("HANDOFF_E2E_CACHE").filter(|v| !v.is_empty()) {
        return PathBuf::from(d).join(leaf);
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    base.join("handoff-store-e2e").join(leaf)
}

/// The pinned client, installed once into the cache folder.
pub fn install_client(client: &Client) -> Result<PathBuf, String> {
    let dir = cache_dir(client);
    let bin = dir.join("node_modules/.bin").join(client.program);
    // The pinned version is installed: the program says so, or (a program without
    // `--version`, the Inspector) its package's manifest does.
    let manifest = dir
        .join("node_modules")
        .join(client.package)
        .join("package.json");
    // The manifest first: a program without `--version` may start and serve instead (the
    // Inspector opens its web app and never exits).
    let works = |bin: &Path| {
        (bin.is_file()
            && std::fs::read(&manifest)
                .ok()
                .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
                .is_some_and(|m| m["version"] == client.version))
            || Command::new(bin)
                .arg("--version")
                .output()
                .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains(client.version))
    };
    if works(&bin) {
        return Ok(bin);
    }
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let out = Command::new("npm")
        .args(["install", "--no-audit", "--no-fund", "--prefix"])
        .arg(&dir)
        .arg(format!("{}@{}", client.package, client.version))
        .output()
        .map_err(|e| format!("npm could not be run: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "npm install exited {:?}: {}",
            out.status.code(),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    if works(&bin) {
        Ok(bin)
    } else {
        Err(format!(
            "installed, but {} --version does not print {}",
            bin.display(),
            client.version
        ))
    }
}

/// Run this same binary again inside a fresh network namespace with loopback up. `None` when
/// the machine does not allow it (the run then continues here). The new run has `marker` set.
pub fn reexec_in_netns(marker: &str) -> Option<i32> {
    let probe = Command::new("unshare")
        .args(["--net", "--", "ip", "link", "set", "lo", "up"])
        .output()
        .ok()?;
    if !probe.status.success() {
        return None;
    }
    let me = std::env::current_exe().ok()?;
    let status = Command::new("unshare")
        .args([
            "--net",
            "--",
            "sh",
            "-c",
            "ip link set lo up && exec \"$0\" \"$@\"",
        ])
        .arg(me)
        .args(std::env::args_os().skip(1))
        .env(marker, "1")
        .status()
        .ok()?;
    Some(status.code().unwrap_or(1))
}

pub struct Suite {
    pub claude: PathBuf,
    pub codex: PathBuf,
    pub gemini: PathBuf,
    pub cline: PathBuf,
    pub copilot: PathBuf,
    pub opencode: PathBuf,
    pub inspector: PathBuf,
    pub mock: mock::Mock,
    /// The running scenario's scene folders, kept until it has been reported (a failure prints
    /// their hook logs), then removed.
    scenes: RefCell<Vec<tempfile::TempDir>>,
    /// The last thing a client printed (or showed on its screen), for a failure's report.
    last_output: RefCell<String>,
}

/// One scenario's world: a HOME, a repository, a store (under a folder the suite keeps until
/// the scenario has been reported).
pub struct Scene {
    pub home: PathBuf,
    pub repo: PathBuf,
    pub store: PathBuf,
}

pub fn git(dir: &Path, args: &[&str]) -> Result<String, String> {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "e2e")
        .env("GIT_AUTHOR_EMAIL", "e2e@example.invalid")
        .env("GIT_COMMITTER_NAME", "e2e")
        .env("GIT_COMMITTER_EMAIL", "e2e@example.invalid")
        .output()
        .map_err(|e| format!("git: {e}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(format!(
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

/// Kill the processes a client left running with `home` as their HOME, or run from a program
/// under it (Codex's app-server daemon runs its own copy from `<home>/.codex/packages/`; it was
/// found alive after the suite) — Linux `/proc`.
pub fn stop_left_behind(home: &Path) {
    let wanted = format!("HOME={}", home.display());
    let under = home.to_string_lossy().into_owned();
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return;
    };
    for p in procs.flatten() {
        let Ok(pid) = p.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let ours = std::fs::read(p.path().join("environ"))
            .is_ok_and(|env| env.split(|b| *b == 0).any(|v| v == wanted.as_bytes()))
            || std::fs::read(p.path().join("cmdline"))
                .is_ok_and(|cmd| String::from_utf8_lossy(&cmd).starts_with(&under));
        if ours && pid != std::process::id() as i32 {
            let _ = Command::new("kill").arg(pid.to_string()).status();
        }
    }
}

/// Every file under `dir`, recursively.
pub fn walk_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk_files(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// Wait (up to 60 s) until `done`; `what` names it in the error.
pub fn wait_for(what: &str, done: impl Fn() -> bool) -> Check {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !done() {
        if Instant::now() > deadline {
            return Err(format!("timed out waiting for {what}"));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    Ok(())
}

/// `program` (a shell word list) on a 120×40 pseudo-terminal through util-linux `script`; the
/// caller sets the environment (TERM is set after an `env_clear`, so it is in the command).
pub fn on_a_terminal(program: &str) -> Command {
    let mut cmd = Command::new("script");
    cmd.args([
        "-qfec",
        &format!("stty cols 120 rows 40; TERM=xterm-256color exec {program}"),
        "/dev/null",
    ]);
    cmd
}

/// A terminal client on a pseudo-terminal: keys in, the screen's text (escape sequences
/// stripped) collected as it comes.
pub struct Tui {
    child: std::process::Child,
    input: std::process::ChildStdin,
    screen: std::sync::Arc<std::sync::Mutex<Vec<u8>>>,
    /// How much of the screen the last wait consumed: each wait looks at what came after.
    seen: usize,
}

/// Terminal output as text: CSI, OSC and two-character escape sequences dropped.
fn strip_escapes(bytes: &[u8]) -> String {
    let mut out = String::new();
    let raw = String::from_utf8_lossy(bytes).into_owned();
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\u{1b}' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('[') => {
                for c in chars.by_ref() {
                    if c.is_ascii_alphabetic() || c == '~' {
                        break;
                    }
                }
            }
            Some(']') => {
                while let Some(c) = chars.next() {
                    if c == '\u{7}' || (c == '\u{1b}' && chars.next_if_eq(&'\\').is_some()) {
                        break;
                    }
                }
            }
            _ => {}
        }
    }
    out
}

impl Tui {
    pub fn start(mut cmd: Command) -> Result<Tui, String> {
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("script: {e}"))?;
        let input = child.stdin.take().ok_or("no stdin")?;
        let mut output = child.stdout.take().ok_or("no stdout")?;
        let screen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let sink = std::sync::Arc::clone(&screen);
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = std::io::Read::read(&mut output, &mut buf) {
                if n == 0 {
                    break;
                }
                if let Ok(mut s) = sink.lock() {
                    s.extend_from_slice(&buf[..n]);
                }
            }
        });
        Ok(Tui {
            child,
            input,
            screen,
            seen: 0,
        })
    }

    /// The text shown since the last wait, without terminal escape sequences; how far the
    /// screen's bytes go.
    pub fn text(&self) -> (String, usize) {
        let bytes = self.screen.lock().map(|s| s.clone()).unwrap_or_default();
        (
            strip_escapes(&bytes[self.seen.min(bytes.len())..]),
            bytes.len(),
        )
    }

    /// Everything the screen showed, without terminal escape sequences.
    pub fn everything(&self) -> String {
        strip_escapes(&self.screen.lock().map(|s| s.clone()).unwrap_or_default())
    }

    pub fn wait(&mut self, what: &str, shown: impl Fn(&str) -> bool) -> Check {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let (text, len) = self.text();
            if shown(&text) {
                self.seen = len;
                return Ok(());
            }
            if Instant::now() > deadline {
                return Err(format!(
                    "timed out waiting for {what}; the screen showed: {text}"
                ));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    pub fn keys(&mut self, keys: &str) {
        let _ = self.input.write_all(keys.as_bytes());
        let _ = self.input.flush();
    }

    /// Type a line; once the client shows it, Enter a moment later (typed at once it would
    /// read as the end of a paste: the clients tell a paste from typing by time).
    pub fn line(&mut self, text: &str) -> Check {
        self.keys(text);
        self.wait(&format!("{text:?} to show"), |s| s.contains(text))?;
        std::thread::sleep(Duration::from_millis(700));
        self.keys("\r");
        Ok(())
    }

    /// Ctrl-C twice, then the process is ended if it is still there.
    pub fn stop(mut self) {
        for _ in 0..2 {
            self.keys("\u{3}");
            std::thread::sleep(Duration::from_millis(700));
        }
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if matches!(self.child.try_wait(), Ok(Some(_))) {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A handoff that passes the gate in any checkout (it cites nothing), told apart by `tag`.
pub fn handoff(tag: &str) -> String {
    format!(
        "# Handoff — e2e {tag}
status: {tag} is where the e2e scenario stands

## Do not re-derive

### Decisions
None.

### Dead ends
None.

### Traps
- The mock answers every prompt the same way; {tag} marks this version.

## Next
1. Carry on from {tag}.

## Pointers

```
```
"
    )
}

impl Suite {
    /// The suite over the installed clients, in the order main lists them.
    pub fn new(
        [claude, codex, gemini, cline, copilot, opencode, inspector]: [PathBuf; 7],
    ) -> Suite {
        Suite {
            claude,
            codex,
            gemini,
            cline,
            copilot,
            opencode,
            inspector,
            mock: mock::Mock::start(),
            scenes: RefCell::new(Vec::new()),
            last_output: RefCell::new(String::new()),
        }
    }

    /// A scenario begins: where the mock's record stands.
    pub fn begin(&self) -> usize {
        self.last_output.borrow_mut().clear();
        self.mock.mark()
    }

    /// A scenario ended: what its clients left running is stopped, and its scenes go, unless it failed and `HANDOFF_E2E_KEEP` is set (then
    /// their folders stay for a look, and are named).
    pub fn end(&self, failed: bool) {
        let scenes = std::mem::take(&mut *self.scenes.borrow_mut());
        // Daemons a client leaves behind (Codex's app-server, Cline's hub) end with the scene.
        for dir in &scenes {
            stop_left_behind(&dir.path().join("home"));
        }
        if failed && std::env::var_os("HANDOFF_E2E_KEEP").is_some() {
            for dir in scenes {
                println!("  kept {}", dir.keep().display());
            }
        }
    }

    /// Remember what a client printed or showed, for a failure's report.
    pub fn saw(&self, output: &str) {
        *self.last_output.borrow_mut() = output.to_string();
    }

    /// What the client printed last (its output for the person).
    pub fn printed(&self) -> String {
        self.last_output.borrow().clone()
    }

    /// What a failed scenario leaves to read: the last lines the client printed or showed, the
    /// requests the mock recorded since `mark` (how many, and the head of the last), and each of
    /// the scenario's hook logs.
    pub fn explain(&self, mark: usize) -> String {
        let tail = |text: &str, n: usize| {
            let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
            lines[lines.len().saturating_sub(n)..].join("\n    ")
        };
        let sent = self.mock.since(mark);
        let last: String = sent
            .last()
            .map(|r| r.chars().take(400).collect())
            .unwrap_or_else(|| "(none)".into());
        let mut out = format!(
            "  the client's last output:\n    {}\n  the mock recorded {} request(s); the last begins: {last}",
            tail(&self.last_output.borrow(), 15),
            sent.len()
        );
        for dir in self.scenes.borrow().iter() {
            let log = dir.path().join("home/.claude/state/handoff-fork/log.txt");
            let text = std::fs::read_to_string(&log).unwrap_or_else(|_| "(no hook log)".into());
            out.push_str(&format!(
                "\n  hook log {}:\n    {}",
                log.display(),
                tail(&text, 15)
            ));
        }
        out
    }

    /// Run an agent client in `scene` with nothing inherited but HOME, a plain PATH, the store
    /// and `env`; what it printed, or why it failed.
    pub fn run_client(
        &self,
        program: &Path,
        scene: &Scene,
        env: &[(&str, &str)],
        args: &[&str],
    ) -> Result<String, String> {
        let out = Command::new(program)
            .env_clear()
            .current_dir(&scene.repo)
            .env("HOME", &scene.home)
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("HANDOFF_STORE_DIR", &scene.store)
            .envs(env.iter().copied())
            .args(args)
            .stdin(Stdio::null())
            .output()
            .map_err(|e| e.to_string())?;
        self.saw_output(&out);
        if !out.status.success() {
            return Err(format!(
                "{} {args:?} exited {:?}: {}",
                program.display(),
                out.status.code(),
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// [`Self::saw`] a finished process's stdout and stderr.
    pub fn saw_output(&self, out: &std::process::Output) {
        self.saw(&format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ));
    }

    pub fn scene(&self, plugin: bool, manual: bool) -> Result<Scene, String> {
        let events: &[(&str, &str)] = if manual { &crate::claude::MANUAL } else { &[] };
        self.scene_with(plugin, events)
    }

    /// A scene whose `settings.json` registers the wrappers in `hooks/` for `events` only.
    pub fn scene_with(&self, plugin: bool, events: &[(&str, &str)]) -> Result<Scene, String> {
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let home = dir.path().join("home");
        let repo = dir.path().join("repo");
        let store = dir.path().join("store");
        for d in [&home, &repo] {
            std::fs::create_dir_all(d).map_err(|e| e.to_string())?;
        }
        git(&repo, &["init", "-q", "-b", "main"])?;
        std::fs::write(repo.join("README.md"), "e2e\n").map_err(|e| e.to_string())?;
        git(&repo, &["add", "README.md"])?;
        git(&repo, &["commit", "-q", "-m", "init"])?;
        self.scenes.borrow_mut().push(dir);
        let scene = Scene { home, repo, store };
        if plugin {
            let contrib = Path::new(ROOT).join("contrib");
            let contrib = contrib.to_string_lossy();
            self.claude_cmd(&scene, &["plugin", "marketplace", "add", &contrib])?;
            self.claude_cmd(
                &scene,
                &["plugin", "install", "handoff-store@handoff-store"],
            )?;
        }
        if !events.is_empty() {
            let settings_path = scene.home.join(".claude/settings.json");
            let mut settings: Value = std::fs::read(&settings_path)
                .ok()
                .and_then(|b| serde_json::from_slice(&b).ok())
                .unwrap_or_else(|| serde_json::json!({}));
            let mut hooks = serde_json::Map::new();
            for (event, file) in events {
                let command = format!("sh {}/hooks/{file}", ROOT);
                hooks.insert(
                    (*event).into(),
                    serde_json::json!([{"matcher": "", "hooks": [{"type": "command", "command": command}]}]),
                );
            }
            settings["hooks"] = Value::Object(hooks);
            std::fs::create_dir_all(scene.home.join(".claude")).map_err(|e| e.to_string())?;
            std::fs::write(&settings_path, settings.to_string()).map_err(|e| e.to_string())?;
        }
        Ok(scene)
    }

    pub fn store_cmd(&self, scene: &Scene, args: &[&str], stdin: Option<&str>) -> (i32, String) {
        let mut cmd = Command::new(STORE_BIN);
        cmd.args(args)
            .current_dir(&scene.repo)
            .env("HOME", &scene.home)
            .env("HANDOFF_STORE_DIR", &scene.store)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let Ok(mut child) = cmd.spawn() else {
            return (-1, String::new());
        };
        if let Some(mut i) = child.stdin.take() {
            let _ = i.write_all(stdin.unwrap_or("").as_bytes());
        }
        match child.wait_with_output() {
            Ok(o) => (
                o.status.code().unwrap_or(-1),
                String::from_utf8_lossy(&o.stdout).into_owned()
                    + &String::from_utf8_lossy(&o.stderr),
            ),
            Err(_) => (-1, String::new()),
        }
    }

    /// Store `tag`'s handoff in the scene's slot; its path.
    pub fn stored(&self, scene: &Scene, tag: &str) -> Result<PathBuf, String> {
        let repo = scene.repo.to_string_lossy().into_owned();
        let (code, out) =
            self.store_cmd(scene, &["write", "--checkout", &repo], Some(&handoff(tag)));
        ensure(code == 0, || format!("write exited {code}: {out}"))?;
        let (_, path) = self.store_cmd(scene, &["path", &repo], None);
        Ok(PathBuf::from(path.trim()))
    }

    /// Wait (up to 120 s) for the background writer's handoff, `tag`'s, to reach `slot`, once
    /// the session that compacted (`ran`) ended well; the mock's writer document is cleared.
    pub fn writer_replaces(&self, scene: &Scene, slot: &Path, tag: &str, ran: Check) -> Check {
        let deadline = Instant::now() + Duration::from_secs(120);
        let replaced =
            || std::fs::read_to_string(slot).is_ok_and(|t| t.contains(&format!("{tag} is where")));
        while ran.is_ok() && !replaced() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(200));
        }
        self.mock.set_writer_doc(None);
        ran?;
        ensure(replaced(), || {
            format!(
                "the writer's handoff never reached the slot; writer log: {}",
                Self::log(scene)
            )
        })
    }

    /// The mock played a writer talked into a shell command and a file write beside the
    /// checkout before it answered (`mock::writer_step`): the client refused both (or never
    /// offered the tools) — neither file exists — and the writer went on to its answer.
    pub fn writer_had_no_shell(&self, scene: &Scene, mark: usize, agent: &str) -> Check {
        let opening = format!("You are writing a handoff for a {agent} session");
        let dir = scene.repo.parent().ok_or("the checkout has no parent")?;
        for name in ["PWNED", "PWNED-write"] {
            ensure(!dir.join(name).exists(), || {
                format!("the {agent} writer created {name}: it ran with a shell or a write tool")
            })?;
        }
        let asked = self.sent_since(mark, &opening).len();
        ensure(asked >= 3, || {
            format!(
                "the {agent} writer asked the model {asked} time(s); the mock's shell and write requests were never answered"
            )
        })
    }

    /// The requests the mock received since `mark` that hold `text`.
    pub fn sent_since(&self, mark: usize, text: &str) -> Vec<String> {
        self.mock
            .since(mark)
            .into_iter()
            .filter(|r| r.contains(text))
            .collect()
    }

    /// Whether a SessionStart handled as a clear claimed a session in the scene (our hook
    /// records the claim `<sid>.session-start-clear`).
    pub fn claimed_clear(scene: &Scene) -> bool {
        std::fs::read_dir(scene.home.join(".claude/state/handoff-fork/claims")).is_ok_and(|d| {
            d.flatten().any(|e| {
                e.file_name()
                    .to_string_lossy()
                    .ends_with(".session-start-clear")
            })
        })
    }

    /// Whether `tag`'s handoff is among the slot's older versions (`history`, not the current).
    pub fn kept_in_history(&self, scene: &Scene, tag: &str) -> Check {
        let (_, history) = self.store_cmd(scene, &["history"], None);
        let kept = history
            .lines()
            .filter(|l| !l.starts_with('0'))
            .filter_map(|l| l.split('\t').next_back())
            .any(|p| {
                std::fs::read_to_string(p.trim())
                    .is_ok_and(|t| t.contains(&format!("{tag} is where")))
            });
        ensure(kept, || {
            format!("the replaced handoff is not in history: {history}")
        })
    }

    pub fn log(scene: &Scene) -> String {
        std::fs::read_to_string(scene.home.join(".claude/state/handoff-fork/log.txt"))
            .unwrap_or_default()
    }

    /// Wait for the supervisor to record the writer's end; the log.
    pub fn writer_end(scene: &Scene) -> Result<String, String> {
        let deadline = Instant::now() + Duration::from_secs(150);
        loop {
            let log = Self::log(scene);
            if log.contains(" rc=") {
                return Ok(log);
            }
            if Instant::now() > deadline {
                return Err(format!("the writer never ended; log: {log:?}"));
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}
