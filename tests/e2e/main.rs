//! End to end against the real clients: the pinned `@anthropic-ai/claude-code` (and Codex CLI,
//! Gemini CLI and Cline for the harness adapters) is
//! installed from the npm registry into a cache folder, pointed at a loopback mock of the model
//! API (`mock.rs`) that records every request, and driven headless through real sessions —
//! startup, `/clear`, manual and automatic compaction, a refused compaction, writers that
//! succeed and fail, plugin and manual hooks together. The binaries are never on PATH: every
//! command the product generates must name them absolutely.
//!
//! Network: where the machine allows it the whole run moves into a network namespace of its
//! own with only loopback up (util-linux `unshare --net`), so nothing can leave the machine;
//! otherwise the client's non-essential traffic is switched off and its API points at the mock.
//! A client that cannot be installed fails the suite with the reason.

mod mock;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::Value;

const CLIENT: &str = "@anthropic-ai/claude-code";
const VERSION: &str = "2.1.197";
const STORE_BIN: &str = env!("CARGO_BIN_EXE_handoff-store");
const ROOT: &str = env!("CARGO_MANIFEST_DIR");
/// The environment variable that marks the re-executed run inside the network namespace.
const IN_NETNS: &str = "HANDOFF_E2E_IN_NETNS";

type Check = Result<(), String>;
/// A named scenario.
type Scenario = (&'static str, fn(&Suite) -> Check);

fn ensure(cond: bool, what: impl FnOnce() -> String) -> Check {
    if cond { Ok(()) } else { Err(what()) }
}

fn main() {
    // Only `cargo test`'s own listing probe is answered specially.
    if std::env::args().any(|a| a == "--list") {
        println!("e2e: test");
        return;
    }
    let install = |client: &Client| match install_client(client) {
        Ok(p) => p,
        Err(e) => {
            eprintln!(
                "e2e: FAILED — the client {}@{} could not be installed from the npm registry: {e}",
                client.package, client.version
            );
            std::process::exit(1);
        }
    };
    let claude = install(&CLAUDE);
    let codex = install(&CODEX);
    let gemini = install(&GEMINI);
    let cline = install(&CLINE);
    let copilot = install(&COPILOT);
    if std::env::var_os(IN_NETNS).is_none()
        && let Some(code) = reexec_in_netns()
    {
        std::process::exit(code);
    }
    let isolated = std::env::var_os(IN_NETNS).is_some();
    println!(
        "e2e: clients {CLIENT}@{VERSION} at {}, {}@{} at {}, {}@{} at {}, {}@{} at {}, {}@{} at {}; network: {}",
        claude.display(),
        CODEX.package,
        CODEX.version,
        codex.display(),
        GEMINI.package,
        GEMINI.version,
        gemini.display(),
        CLINE.package,
        CLINE.version,
        cline.display(),
        COPILOT.package,
        COPILOT.version,
        copilot.display(),
        if isolated {
            "own namespace, loopback only"
        } else {
            "shared (namespace unavailable); API on the loopback mock, non-essential traffic off"
        }
    );
    let mock = mock::Mock::start();
    let suite = Suite {
        claude,
        codex,
        gemini,
        cline,
        copilot,
        mock,
    };
    let started = Instant::now();
    let scenarios: [Scenario; 20] = [
        (
            "manifests pass claude plugin validate --strict",
            Suite::validate,
        ),
        (
            "startup is quiet; /clear injects the handoff once, with the cleared session",
            Suite::clear,
        ),
        (
            "manual /compact: instructions reach the summary; the writer's handoff replaces the slot",
            Suite::manual_compact,
        ),
        ("automatic compaction does the same", Suite::auto_compact),
        (
            "a refused compaction leaves the slot byte-identical",
            Suite::refused_compact,
        ),
        (
            "a writer that stores nothing is reported at once",
            Suite::failing_writer,
        ),
        (
            "plugin and manual hooks together inject once",
            Suite::both_installed,
        ),
        (
            "the UserPromptSubmit fallback stays quiet after SessionStart",
            Suite::prompt_fallback_quiet,
        ),
        (
            "without SessionStart, the first prompt after /clear delivers the handoff",
            Suite::prompt_fallback_delivers,
        ),
        (
            "codex: install codex trusts the hook; a session after /clear carries the handoff",
            Suite::codex_session_start,
        ),
        (
            "codex: an automatic compaction runs the writer through codex exec; its handoff replaces the slot",
            Suite::codex_compaction,
        ),
        (
            "codex: in the real TUI, the session after its own /clear carries the handoff",
            Suite::codex_tui_clear,
        ),
        (
            "codex: the shipped plugin installs from its marketplace; trusted, it carries the handoff after /clear",
            Suite::codex_plugin,
        ),
        (
            "gemini: install gemini merges into settings.json; a session after /clear carries the handoff; uninstall restores the file",
            Suite::gemini_session_start,
        ),
        (
            "gemini: the shipped extension validates and, linked, carries the handoff after /clear",
            Suite::gemini_extension,
        ),
        (
            "gemini: a refused compression leaves the slot alone; a compression runs the writer through gemini -p and its handoff replaces the slot",
            Suite::gemini_compaction,
        ),
        (
            "cline: install cline's TaskStart fires in the real CLI and leaves the handoff unread",
            Suite::cline_task_start,
        ),
        (
            "copilot: install copilot, the folder trusted; with the user's own model provider a session after /clear carries the handoff",
            Suite::copilot_session_start,
        ),
        (
            "copilot: in the real TUI, the session after its own /clear carries the handoff",
            Suite::copilot_tui_clear,
        ),
        (
            "copilot: a failed compaction leaves the slot alone; a compaction runs the writer through copilot's headless mode and its handoff replaces the slot",
            Suite::copilot_compaction,
        ),
    ];
    // A positional argument (as in `cargo test <filter>`) picks the scenarios whose name holds
    // it; `e2e` itself, or none, runs them all.
    let filter: Option<String> = std::env::args()
        .skip(1)
        .find(|a| !a.starts_with('-'))
        .filter(|f| f != "e2e");
    let mut failed = 0;
    let mut ran = 0;
    for (name, scenario) in scenarios {
        if filter.as_ref().is_some_and(|f| !name.contains(f.as_str())) {
            continue;
        }
        ran += 1;
        let t = Instant::now();
        match scenario(&suite) {
            Ok(()) => println!("e2e: ok      {name} ({:.1} s)", t.elapsed().as_secs_f64()),
            Err(e) => {
                failed += 1;
                println!("e2e: FAILED  {name}: {e}");
            }
        }
    }
    println!(
        "e2e: {} passed, {failed} failed in {:.0} s",
        ran - failed,
        started.elapsed().as_secs_f64()
    );
    std::process::exit(i32::from(failed > 0));
}

/// A pinned client from the npm registry: its package, version, program and cache folder name.
struct Client {
    package: &'static str,
    version: &'static str,
    program: &'static str,
    folder: &'static str,
}

const CLAUDE: Client = Client {
    package: CLIENT,
    version: VERSION,
    program: "claude",
    folder: "claude-code",
};

const GEMINI: Client = Client {
    package: "@google/gemini-cli",
    version: "0.61.0",
    program: "gemini",
    folder: "gemini-cli",
};

const CLINE: Client = Client {
    package: "cline",
    version: "3.0.65",
    program: "cline",
    folder: "cline",
};

const COPILOT: Client = Client {
    package: "@github/copilot",
    version: "1.0.102",
    program: "copilot",
    folder: "copilot",
};

const CODEX: Client = Client {
    package: "@openai/codex",
    version: "0.169.0",
    program: "codex",
    folder: "codex",
};

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
fn install_client(client: &Client) -> Result<PathBuf, String> {
    let dir = cache_dir(client);
    let bin = dir.join("node_modules/.bin").join(client.program);
    let works = |bin: &Path| {
        Command::new(bin)
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
/// the machine does not allow it (the run then continues here).
fn reexec_in_netns() -> Option<i32> {
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
        .env(IN_NETNS, "1")
        .status()
        .ok()?;
    Some(status.code().unwrap_or(1))
}

struct Suite {
    claude: PathBuf,
    codex: PathBuf,
    gemini: PathBuf,
    cline: PathBuf,
    copilot: PathBuf,
    mock: mock::Mock,
}

/// One scenario's world: a HOME, a repository, a store.
struct Scene {
    _dir: tempfile::TempDir,
    home: PathBuf,
    repo: PathBuf,
    store: PathBuf,
}

fn git(dir: &Path, args: &[&str]) -> Result<String, String> {
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

/// Kill the processes a client left running with `home` as their HOME (Linux `/proc`).
fn stop_left_behind(home: &Path) {
    let wanted = format!("HOME={}", home.display());
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return;
    };
    for p in procs.flatten() {
        let Ok(pid) = p.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let ours = std::fs::read(p.path().join("environ"))
            .is_ok_and(|env| env.split(|b| *b == 0).any(|v| v == wanted.as_bytes()));
        if ours && pid != std::process::id() as i32 {
            let _ = Command::new("kill").arg(pid.to_string()).status();
        }
    }
}

/// Every file under `dir`, recursively.
fn walk_files(dir: &Path) -> Vec<PathBuf> {
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
fn wait_for(what: &str, done: impl Fn() -> bool) -> Check {
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
fn on_a_terminal(program: &str) -> Command {
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
struct Tui {
    child: std::process::Child,
    input: std::process::ChildStdin,
    screen: std::sync::Arc<std::sync::Mutex<Vec<u8>>>,
    /// How much of the screen the last wait consumed: each wait looks at what came after.
    seen: usize,
}

impl Tui {
    fn start(mut cmd: Command) -> Result<Tui, String> {
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

    /// The text shown since the last wait, without terminal escape sequences.
    fn text(&self) -> (String, usize) {
        let bytes = self.screen.lock().map(|s| s.clone()).unwrap_or_default();
        let mut out = String::new();
        let raw = String::from_utf8_lossy(&bytes[self.seen.min(bytes.len())..]).into_owned();
        let mut chars = raw.chars().peekable();
        while let Some(c) = chars.next() {
            if c != '\u{1b}' {
                out.push(c);
                continue;
            }
            // CSI / OSC / two-character sequences.
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
        (out, bytes.len())
    }

    fn wait(&mut self, what: &str, shown: impl Fn(&str) -> bool) -> Check {
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

    fn keys(&mut self, keys: &str) {
        let _ = self.input.write_all(keys.as_bytes());
        let _ = self.input.flush();
    }

    /// Type a line, then Enter a moment later (typed at once it would read as a paste).
    fn line(&mut self, text: &str) {
        self.keys(text);
        std::thread::sleep(Duration::from_millis(700));
        self.keys("\r");
    }

    /// Ctrl-C twice, then the process is ended if it is still there.
    fn stop(mut self) {
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

/// The manual install: every wrapper in `hooks/`, by event.
const MANUAL: [(&str, &str); 5] = [
    ("SessionStart", "session-start.sh"),
    ("UserPromptSubmit", "user-prompt-submit.sh"),
    ("PreCompact", "pre-compact.sh"),
    ("PostCompact", "post-compact.sh"),
    ("SessionEnd", "session-end.sh"),
];

/// A handoff that passes the gate in any checkout (it cites nothing), told apart by `tag`.
fn handoff(tag: &str) -> String {
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

/// Run an agent client in `scene` with nothing inherited but HOME, a plain PATH, the store and
/// `env`; what it printed, or why it failed.
fn run_client(
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

impl Suite {
    fn scene(&self, plugin: bool, manual: bool) -> Result<Scene, String> {
        let events: &[(&str, &str)] = if manual { &MANUAL } else { &[] };
        self.scene_with(plugin, events)
    }

    /// A scene whose `settings.json` registers the wrappers in `hooks/` for `events` only.
    fn scene_with(&self, plugin: bool, events: &[(&str, &str)]) -> Result<Scene, String> {
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
        let scene = Scene {
            _dir: dir,
            home,
            repo,
            store,
        };
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

    /// The client's environment: nothing inherited but what it needs; the binaries off PATH.
    fn env(&self, scene: &Scene, cmd: &mut Command) {
        cmd.env_clear()
            .current_dir(&scene.repo)
            .env("HOME", &scene.home)
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("ANTHROPIC_BASE_URL", self.mock.url())
            .env("ANTHROPIC_API_KEY", "sk-e2e-not-a-key")
            .env("DISABLE_TELEMETRY", "1")
            .env("DISABLE_ERROR_REPORTING", "1")
            .env("DISABLE_AUTOUPDATER", "1")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .env("HANDOFF_STORE_BIN", STORE_BIN)
            .env("HANDOFF_STORE_DIR", &scene.store)
            .env("HANDOFF_WRITER", &self.claude)
            .env("CTX_FORK_TIMEOUT_SECONDS", "120");
    }

    fn claude_cmd(&self, scene: &Scene, args: &[&str]) -> Result<String, String> {
        let mut cmd = Command::new(&self.claude);
        self.env(scene, &mut cmd);
        let out = cmd
            .args(args)
            .stdin(Stdio::null())
            .output()
            .map_err(|e| e.to_string())?;
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        if out.status.success() {
            Ok(stdout)
        } else {
            Err(format!(
                "claude {args:?} exited {:?}: {stdout}{}",
                out.status.code(),
                String::from_utf8_lossy(&out.stderr)
            ))
        }
    }

    /// One headless process fed `messages` over stream-json, each sent once the previous one
    /// has its result. Returns the result texts.
    fn session(&self, scene: &Scene, messages: &[&str]) -> Result<Vec<String>, String> {
        let mut cmd = Command::new(&self.claude);
        self.env(scene, &mut cmd);
        let mut child = cmd
            .args([
                "-p",
                "--input-format",
                "stream-json",
                "--output-format",
                "stream-json",
                "--verbose",
            ])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| e.to_string())?;
        let stdout = child.stdout.take().ok_or("no stdout")?;
        let (tx, rx) = mpsc::channel::<Value>();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Ok(v) = serde_json::from_str::<Value>(&line) {
                    let _ = tx.send(v);
                }
            }
        });
        let mut stdin = child.stdin.take().ok_or("no stdin")?;
        let mut results = Vec::new();
        for m in messages {
            let line =
                serde_json::json!({"type": "user", "message": {"role": "user", "content": m}});
            writeln!(stdin, "{line}").map_err(|e| e.to_string())?;
            let deadline = Instant::now() + Duration::from_secs(90);
            loop {
                let left = deadline.saturating_duration_since(Instant::now());
                let v = rx
                    .recv_timeout(left)
                    .map_err(|_| format!("no result for {m:?} within 90 s"))?;
                if v["type"] == "result" {
                    results.push(v["result"].as_str().unwrap_or("").to_string());
                    break;
                }
            }
        }
        drop(stdin);
        let deadline = Instant::now() + Duration::from_secs(60);
        while child.try_wait().map_err(|e| e.to_string())?.is_none() {
            if Instant::now() > deadline {
                let _ = child.kill();
                return Err("the client did not exit".into());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(results)
    }

    /// Run `messages` (one of them "after the clear") in one session: every request the model
    /// was sent, and the one for the prompt after the `/clear`.
    fn around_clear(
        &self,
        scene: &Scene,
        messages: &[&str],
    ) -> Result<(Vec<String>, String), String> {
        let mark = self.mock.mark();
        self.session(scene, messages)?;
        let sent = self.mock.since(mark);
        let after = sent
            .iter()
            .find(|r| r.contains("after the clear"))
            .cloned()
            .ok_or("no request for the prompt after /clear")?;
        Ok((sent, after))
    }

    fn store_cmd(&self, scene: &Scene, args: &[&str], stdin: Option<&str>) -> (i32, String) {
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
    fn stored(&self, scene: &Scene, tag: &str) -> Result<PathBuf, String> {
        let repo = scene.repo.to_string_lossy().into_owned();
        let (code, out) =
            self.store_cmd(scene, &["write", "--checkout", &repo], Some(&handoff(tag)));
        ensure(code == 0, || format!("write exited {code}: {out}"))?;
        let (_, path) = self.store_cmd(scene, &["path", &repo], None);
        Ok(PathBuf::from(path.trim()))
    }

    /// Wait (up to 120 s) for the background writer's handoff, `tag`'s, to reach `slot`, once
    /// the session that compacted (`ran`) ended well; the mock's writer document is cleared.
    fn writer_replaces(&self, scene: &Scene, slot: &Path, tag: &str, ran: Check) -> Check {
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

    /// The requests the mock received since `mark` that hold `text`.
    fn sent_since(&self, mark: usize, text: &str) -> Vec<String> {
        self.mock
            .since(mark)
            .into_iter()
            .filter(|r| r.contains(text))
            .collect()
    }

    /// Whether a SessionStart handled as a clear claimed a session in the scene (our hook
    /// records the claim `<sid>.session-start-clear`).
    fn claimed_clear(scene: &Scene) -> bool {
        std::fs::read_dir(scene.home.join(".claude/state/handoff-fork/claims")).is_ok_and(|d| {
            d.flatten().any(|e| {
                e.file_name()
                    .to_string_lossy()
                    .ends_with(".session-start-clear")
            })
        })
    }

    /// Whether `tag`'s handoff is among the slot's older versions (`history`, not the current).
    fn kept_in_history(&self, scene: &Scene, tag: &str) -> Check {
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

    fn log(scene: &Scene) -> String {
        std::fs::read_to_string(scene.home.join(".claude/state/handoff-fork/log.txt"))
            .unwrap_or_default()
    }

    /// Wait for the supervisor to record the writer's end; the log.
    fn writer_end(scene: &Scene) -> Result<String, String> {
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

    fn validate(&self) -> Check {
        let scene = self.scene(false, false)?;
        for dir in ["contrib", "contrib/claude-code"] {
            let path = Path::new(ROOT).join(dir);
            let out = self.claude_cmd(
                &scene,
                &["plugin", "validate", "--strict", &path.to_string_lossy()],
            )?;
            ensure(out.contains("Validation passed"), || {
                format!("{dir}: {out}")
            })?;
        }
        Ok(())
    }

    fn clear(&self) -> Check {
        let scene = self.scene(true, false)?;
        let slot = self.stored(&scene, "tag-clear")?;
        let (sent, after) =
            self.around_clear(&scene, &["first question", "/clear", "after the clear"])?;
        ensure(sent.len() >= 2, || format!("{} requests", sent.len()))?;
        ensure(!sent[0].contains("tag-clear"), || {
            "startup injected the handoff (no /clear had happened)".into()
        })?;
        ensure(after.contains("tag-clear is where"), || {
            "the handoff text is not in the request after /clear".into()
        })?;
        ensure(after.contains("The session you just cleared"), || {
            "SessionEnd's marker did not reach the next session".into()
        })?;
        ensure(after.matches("tag-clear is where").count() == 1, || {
            "injected more than once".into()
        })?;
        let text = std::fs::read_to_string(&slot).map_err(|e| e.to_string())?;
        ensure(text.contains("progress: consumed"), || {
            "the delivered handoff was not marked consumed".into()
        })
    }

    /// Drive a compaction (`messages`), then check the instructions reached the summary and
    /// the writer's handoff replaced the slot with the old one in history.
    fn compaction(&self, messages: &[&str]) -> Check {
        let scene = self.scene(true, false)?;
        let slot = self.stored(&scene, "tag-old")?;
        self.mock.set_writer_doc(Some(handoff("tag-new")));
        let mark = self.mock.mark();
        self.session(&scene, messages)?;
        let sent = self.mock.since(mark);
        let summary = sent
            .iter()
            .find(|r| r.contains("CRITICAL: Respond with TEXT ONLY"))
            .ok_or("no compaction request reached the model")?;
        ensure(summary.contains("Keep verbatim"), || {
            "PreCompact's instructions are not in the compaction request".into()
        })?;
        ensure(
            summary.contains(&slot.to_string_lossy().into_owned()),
            || "the instructions do not name the slot".into(),
        )?;
        let log = Self::writer_end(&scene)?;
        ensure(log.contains(" rc=0 state=promoted "), || {
            format!("the writer's handoff was not installed: {log}")
        })?;
        let text = std::fs::read_to_string(&slot).map_err(|e| e.to_string())?;
        ensure(text.contains("tag-new is where"), || {
            format!("the slot does not hold the writer's handoff: {text}")
        })?;
        let (_, history) =
            self.store_cmd(&scene, &["history", &scene.repo.to_string_lossy()], None);
        ensure(history.lines().count() >= 2, || {
            format!("the displaced handoff is not in history: {history}")
        })
    }

    fn manual_compact(&self) -> Check {
        self.compaction(&["one", "two", "three", "/compact", "after"])
    }

    fn auto_compact(&self) -> Check {
        self.compaction(&["one", "two", "three", "OVERFLOW-NOW please"])
    }

    fn refused_compact(&self) -> Check {
        let scene = self.scene(true, false)?;
        let slot = self.stored(&scene, "tag-kept")?;
        let before = std::fs::read(&slot).map_err(|e| e.to_string())?;
        self.mock.set_writer_doc(Some(handoff("tag-unwanted")));
        // As a user would: one exchange, then `/compact` on the continued session.
        self.session(&scene, &["only one"])?;
        let answer = self.claude_cmd(&scene, &["-p", "--continue", "/compact"])?;
        ensure(answer.contains("Not enough messages"), || {
            format!("the client did not refuse: {answer}")
        })?;
        let log = Self::writer_end(&scene)?;
        ensure(log.contains(" state=held "), || format!("log: {log}"))?;
        let after = std::fs::read(&slot).map_err(|e| e.to_string())?;
        ensure(after == before, || {
            "the slot changed after a refused compaction".into()
        })?;
        let (_, read) = self.store_cmd(
            &scene,
            &["read", "--no-consume", &scene.repo.to_string_lossy()],
            None,
        );
        ensure(
            read.contains("tag-kept is where") && read.contains("never confirmed"),
            || format!("read: {read}"),
        )
    }

    fn failing_writer(&self) -> Check {
        let scene = self.scene(true, false)?;
        self.stored(&scene, "tag-prev")?;
        self.mock.set_writer_doc(None);
        self.session(&scene, &["one", "two", "three", "/compact"])?;
        let repo = scene.repo.to_string_lossy().into_owned();
        let t = Instant::now();
        let (code, read) = self.store_cmd(
            &scene,
            &["read", "--no-consume", &repo, "--wait", "300"],
            None,
        );
        ensure(code == 0 && read.contains("tag-prev is where"), || {
            format!("read exited {code}: {read}")
        })?;
        ensure(read.contains("ended without a handoff"), || {
            format!("no failure note: {read}")
        })?;
        ensure(t.elapsed() < Duration::from_secs(150), || {
            "read waited as if for an abandonment".into()
        })
    }

    fn both_installed(&self) -> Check {
        let scene = self.scene(true, true)?;
        self.stored(&scene, "tag-once")?;
        let (_, after) = self.around_clear(&scene, &["first", "/clear", "after the clear"])?;
        let copies = after.matches("tag-once is where").count();
        ensure(copies == 1, || format!("{copies} copies of the handoff"))
    }

    fn prompt_fallback_quiet(&self) -> Check {
        let scene = self.scene(true, false)?;
        self.stored(&scene, "tag-quiet")?;
        let mark = self.mock.mark();
        self.session(&scene, &["hello", "again"])?;
        let sent = self.mock.since(mark);
        ensure(sent.iter().all(|r| !r.contains("tag-quiet")), || {
            "a startup session received the handoff from the prompt hook".into()
        })
    }

    /// A client release that skips SessionStart after `/clear` is simulated by leaving
    /// SessionStart unregistered: the first prompt of the new session must still carry the
    /// handoff, through UserPromptSubmit's additionalContext, once.
    fn prompt_fallback_delivers(&self) -> Check {
        let scene = self.scene_with(
            false,
            &[
                ("UserPromptSubmit", "user-prompt-submit.sh"),
                ("SessionEnd", "session-end.sh"),
            ],
        )?;
        self.stored(&scene, "tag-fallback")?;
        let (_, after) =
            self.around_clear(&scene, &["first", "/clear", "after the clear", "and again"])?;
        ensure(after.contains("tag-fallback is where"), || {
            "the handoff did not reach the first prompt after /clear".into()
        })?;
        ensure(after.contains("SessionStart did not run"), || {
            "not delivered by the fallback".into()
        })?;
        ensure(after.matches("tag-fallback is where").count() == 1, || {
            "delivered more than once".into()
        })
    }

    /// Codex CLI, installed by `handoff-store install codex` with nothing else done: the install
    /// trusts our hook through `codex app-server` (a hook Codex does not trust is skipped
    /// silently). A plain `codex exec` is quiet; after a `/clear` is recorded (Codex's own /clear
    /// lives in its TUI, which cannot run headless, so the marker is recorded the way our
    /// SessionEnd hook records a cleared session), the next `codex exec` carries the handoff to
    /// the model as a developer message, and the handoff is consumed.
    fn codex_session_start(&self) -> Check {
        let (scene, codex_home) = self.codex_scene("")?;
        self.stored(&scene, "tag-codex")?;
        let env = |cmd: &mut Command| self.codex_env(&scene, &codex_home, cmd);
        let said = self.codex_install(&scene, &codex_home)?;
        ensure(said.contains("trusted"), || {
            format!("install codex did not trust the hook: {said}")
        })?;
        let exec = |prompt: &str| -> Result<Vec<String>, String> {
            let mark = self.mock.mark();
            let mut cmd = Command::new(&self.codex);
            env(&mut cmd);
            let out = cmd
                .args(["exec", "--skip-git-repo-check", prompt])
                .output()
                .map_err(|e| e.to_string())?;
            if !out.status.success() {
                return Err(format!(
                    "codex exec exited {:?}: {}",
                    out.status.code(),
                    String::from_utf8_lossy(&out.stderr)
                ));
            }
            Ok(self.mock.since(mark))
        };
        let quiet = exec("first codex session")?;
        ensure(!quiet.is_empty(), || "codex sent the mock nothing".into())?;
        ensure(
            quiet.iter().all(|r| !r.contains("tag-codex is where")),
            || "a plain startup carried the handoff".into(),
        )?;
        let end = serde_json::json!({
            "session_id": "codex-before", "cwd": scene.repo, "reason": "clear",
            "hook_event_name": "SessionEnd"
        });
        let (code, _) = self.store_cmd(&scene, &["hook", "session-end"], Some(&end.to_string()));
        ensure(code == 0, || "session-end failed".into())?;
        let after = exec("after the clear, codex")?;
        let carried: Vec<&String> = after
            .iter()
            .filter(|r| r.contains("tag-codex is where"))
            .collect();
        ensure(!carried.is_empty(), || {
            format!("the handoff is not in what Codex sent: {after:?}")
        })?;
        let request: Value = serde_json::from_str(carried[0]).map_err(|e| e.to_string())?;
        let as_developer = request["input"].as_array().is_some_and(|items| {
            items
                .iter()
                .any(|i| i["role"] == "developer" && i.to_string().contains("tag-codex is where"))
        });
        ensure(as_developer, || {
            "the handoff did not arrive as a developer message".into()
        })?;
        let (_, orient) = self.store_cmd(&scene, &["orient"], None);
        ensure(orient.contains("progress=consumed"), || {
            format!("the delivered handoff is not consumed: {orient}")
        })
    }

    /// Codex's own `/clear`, in its TUI on a pseudo-terminal (util-linux `script`): the user
    /// answers Codex's folder-trust question, sends a prompt (its request carries no handoff),
    /// types `/clear`, and the next prompt — Codex fires SessionStart with `clear` — has its
    /// request carry the handoff as a developer message; the handoff is then consumed. Each step
    /// waits for what the screen or the mock shows, not for a fixed time.
    fn codex_tui_clear(&self) -> Check {
        let (scene, codex_home) = self.codex_scene("")?;
        self.stored(&scene, "tag-codex-tui")?;
        self.codex_install(&scene, &codex_home)?;
        let mut cmd = on_a_terminal(&format!("'{}' --no-alt-screen", self.codex.display()));
        self.codex_env(&scene, &codex_home, &mut cmd);
        let mut tui = Tui::start(cmd)?;
        let mark = self.mock.mark();
        let sent_with = |text: &str| self.sent_since(mark, text);
        let cleared = || Self::claimed_clear(&scene);
        let steps = (|| -> Check {
            tui.wait("the folder-trust question", |s| {
                s.contains("Trust this folder")
            })?;
            tui.keys("\r");
            tui.wait("the composer", |s| s.contains("Ask Codex to do anything"))?;
            tui.line("first codex tui prompt");
            wait_for("the first prompt's request", || {
                !sent_with("first codex tui prompt").is_empty()
            })?;
            tui.wait("the first answer", |s| s.contains("Worked for"))?;
            tui.line("/clear");
            tui.wait("the new chat", |s| s.contains("OpenAI Codex"))?;
            tui.line("after the codex tui clear");
            wait_for("the request after /clear", || {
                !sent_with("after the codex tui clear").is_empty()
            })?;
            // Codex fired SessionStart with `clear` (the claim our hook records is named so).
            wait_for("SessionStart(clear)", cleared)
        })();
        tui.stop();
        steps?;
        ensure(
            sent_with("first codex tui prompt")
                .iter()
                .all(|r| !r.contains("tag-codex-tui is where")),
            || "the first session carried the handoff".into(),
        )?;
        let after = sent_with("after the codex tui clear");
        let request: Value = serde_json::from_str(&after[0]).map_err(|e| e.to_string())?;
        let as_developer = request["input"].as_array().is_some_and(|items| {
            items.iter().any(|i| {
                i["role"] == "developer" && i.to_string().contains("tag-codex-tui is where")
            })
        });
        ensure(as_developer, || {
            format!("the handoff is not a developer message after /clear: {request}")
        })?;
        let (_, orient) = self.store_cmd(&scene, &["orient"], None);
        ensure(orient.contains("progress=consumed"), || {
            format!("the delivered handoff is not consumed: {orient}")
        })
    }

    /// Gemini CLI: the user's settings.json (a comment, the API-key auth) gets our hook from
    /// `handoff-store install gemini`; the only other step is the folder trust a user gives a
    /// headless run (`GEMINI_CLI_TRUST_WORKSPACE=true`). A plain `gemini -p` is quiet; after a
    /// recorded /clear, the next one carries the handoff inside the model request and consumes
    /// it; `uninstall gemini` leaves settings.json byte-identical to what the user had.
    fn gemini_session_start(&self) -> Check {
        let (scene, settings, mine) = self.gemini_scene()?;
        let (code, said) = self.store_cmd(&scene, &["install", "gemini"], None);
        ensure(code == 0, || format!("install gemini: {said}"))?;
        self.gemini_clear_carries(&scene)?;
        let (code, said) = self.store_cmd(&scene, &["uninstall", "gemini"], None);
        ensure(code == 0, || format!("uninstall gemini: {said}"))?;
        let back = std::fs::read_to_string(&settings).map_err(|e| e.to_string())?;
        ensure(back == mine, || {
            format!("settings.json is not as it was: {back}")
        })
    }

    /// The shipped Gemini CLI extension (`contrib/gemini`): `gemini extensions validate` passes,
    /// and linked the way a user links it (`--consent` acknowledges that it runs hooks), its
    /// SessionStart hook carries the handoff after a recorded /clear like `install gemini` does.
    fn gemini_extension(&self) -> Check {
        let (scene, _, _) = self.gemini_scene()?;
        let extension = Path::new(ROOT).join("contrib/gemini");
        let extension = extension.to_string_lossy();
        self.gemini_cmd(&scene, &["extensions", "validate", &extension])?;
        self.gemini_cmd(&scene, &["extensions", "link", &extension, "--consent"])?;
        self.gemini_clear_carries(&scene)
    }

    /// Gemini CLI's compression, with `install gemini` (SessionStart, PreCompress, AfterAgent).
    /// A first session, then resumed ones (`--resume latest`; a compression needs two prompts of
    /// history, and a resume appends the same restart record a compression does). The user's
    /// settings name the model (the writer uses it too) and set `model.compressionThreshold` to
    /// 0.001 (about 1,000 tokens), and a prompt the mock reports
    /// at 5,000 tokens makes Gemini compress before its next call. First the compressor returns
    /// more than it was given: Gemini refuses (the history would grow), PreCompress has fired,
    /// and yet no writer starts and the slot stays byte-identical. Then a compression that succeeds: the writer
    /// runs through `gemini -p` on a copy of the session file cut where the compression began
    /// (the conversation before it, not the compressed history), and its handoff replaces the
    /// slot, the old one kept in history.
    fn gemini_compaction(&self) -> Check {
        let (scene, settings, _) = self.gemini_scene()?;
        let low = "{\n  \"security\": {\"auth\": {\"selectedType\": \"gemini-api-key\"}},\n  \"model\": {\"name\": \"gemini-2.5-flash\", \"compressionThreshold\": 0.001}\n}\n";
        std::fs::write(&settings, low).map_err(|e| e.to_string())?;
        let slot = self.stored(&scene, "tag-gemini-old")?;
        let (code, said) = self.store_cmd(&scene, &["install", "gemini"], None);
        ensure(code == 0, || format!("install gemini: {said}"))?;
        let original = std::fs::read(&slot).map_err(|e| e.to_string())?;
        let compressions = |requests: &[String]| {
            requests
                .iter()
                .filter(|r| r.contains("generate the updated <state_snapshot>"))
                .count()
        };
        let flash = ["-m", "gemini-2.5-flash"];
        let resumed = |prompt: &str| -> Result<Vec<String>, String> {
            let mark = self.mock.mark();
            let args = [&flash[..], &["--resume", "latest", "-p", prompt]].concat();
            self.gemini_cmd(&scene, &args)?;
            Ok(self.mock.since(mark))
        };
        self.gemini_cmd(
            &scene,
            &[&flash[..], &["-p", "first gemini prompt"]].concat(),
        )?;

        self.mock.set_refuse_summary(true);
        let refused = resumed("OVERFLOW-NOW, and the summary comes back empty");
        self.mock.set_refuse_summary(false);
        let refused = refused?;
        ensure(compressions(&refused) == 1, || {
            format!(
                "Gemini did not try to compress once ({} requests)",
                refused.len()
            )
        })?;
        std::thread::sleep(Duration::from_secs(2));
        ensure(!Self::log(&scene).contains("spawned"), || {
            format!(
                "a writer started for a refused compression: {}",
                Self::log(&scene)
            )
        })?;
        ensure(std::fs::read(&slot).ok() == Some(original), || {
            "a refused compression changed the slot".into()
        })?;

        self.mock.set_writer_doc(Some(handoff("tag-gemini-writer")));
        let mark = self.mock.mark();
        let ran = resumed("OVERFLOW-NOW, second");
        self.writer_replaces(&scene, &slot, "tag-gemini-writer", ran.map(|_| ()))?;
        let sent = self.mock.since(mark);
        let prompt = sent
            .iter()
            .rev()
            .find(|r| r.contains("You are writing a handoff for a Gemini CLI session"))
            .ok_or("the writer's prompt never reached the model")?;
        let copy = prompt
            .split("\\n")
            .skip_while(|l| !l.ends_with("as it was before, a JSONL file at:"))
            .nth(1)
            .filter(|l| l.ends_with("/transcript.jsonl"))
            .ok_or_else(|| format!("the prompt names no transcript copy: {prompt}"))?;
        let copied = std::fs::read(copy).map_err(|e| format!("{copy}: {e}"))?;
        // The copy is the live session file up to the compression's restart record.
        let chats = scene.home.join(".gemini/tmp");
        let live = walk_files(&chats)
            .into_iter()
            .filter_map(|p| std::fs::read(p).ok())
            .find(|b| b.starts_with(&copied) && b.len() > copied.len())
            .ok_or("no session file begins with the writer's copy")?;
        let text = String::from_utf8_lossy(&copied);
        ensure(
            text.contains("OVERFLOW-NOW, second")
                && live[copied.len()..].starts_with(br#"{"$set":{"sessionId":"#),
            || format!("the copy is not the conversation up to the compression: {text}"),
        )?;
        self.kept_in_history(&scene, "tag-gemini-old")
    }

    /// A scene whose user settings.json (a comment, the API-key auth) is the user's own; its
    /// path and text.
    fn gemini_scene(&self) -> Result<(Scene, PathBuf, &'static str), String> {
        let scene = self.scene(false, false)?;
        let settings = scene.home.join(".gemini/settings.json");
        let mine = "{\n  // the key comes from GEMINI_API_KEY\n  \"security\": {\"auth\": {\"selectedType\": \"gemini-api-key\"}}\n}\n";
        std::fs::create_dir_all(scene.home.join(".gemini")).map_err(|e| e.to_string())?;
        std::fs::write(&settings, mine).map_err(|e| e.to_string())?;
        self.stored(&scene, "tag-gemini")?;
        Ok((scene, settings, mine))
    }

    /// Run Gemini CLI in the scene; what it printed.
    fn gemini_cmd(&self, scene: &Scene, args: &[&str]) -> Result<String, String> {
        let url = self.mock.url();
        let gemini = self.gemini.to_string_lossy();
        let env = [
            ("HANDOFF_STORE_BIN", STORE_BIN),
            ("GEMINI_API_KEY", "e2e-not-a-key"),
            ("GOOGLE_GEMINI_BASE_URL", url.as_str()),
            ("GEMINI_CLI_TRUST_WORKSPACE", "true"),
            ("HANDOFF_GEMINI_BIN", &*gemini),
            ("CTX_FORK_TIMEOUT_SECONDS", "120"),
        ];
        run_client(&self.gemini, scene, &env, args)
    }

    /// A plain `gemini -p` is quiet; Gemini's own `/clear` (its clear command runs headless
    /// too) starts a new session whose turn carries the handoff inside the model request
    /// (through BeforeAgent: Gemini drops SessionStart(clear)'s output) and consumes it.
    fn gemini_clear_carries(&self, scene: &Scene) -> Check {
        let prompt = |text: &str| -> Result<Vec<String>, String> {
            let mark = self.mock.mark();
            self.gemini_cmd(scene, &["-m", "gemini-2.5-flash", "-p", text])?;
            Ok(self.mock.since(mark))
        };
        let quiet = prompt("first gemini session")?;
        ensure(!quiet.is_empty(), || "gemini sent the mock nothing".into())?;
        ensure(
            quiet.iter().all(|r| !r.contains("tag-gemini is where")),
            || "a plain startup carried the handoff".into(),
        )?;
        // Gemini's own /clear (its clear command runs headless too): SessionEnd(clear), a new
        // session, SessionStart(clear) — whose output Gemini drops — then the turn's BeforeAgent.
        let after = prompt("/clear")?;
        ensure(
            after.iter().any(|r| r.contains("tag-gemini is where")),
            || format!("the handoff is not in what Gemini sent: {after:?}"),
        )?;
        let (_, orient) = self.store_cmd(scene, &["orient"], None);
        ensure(orient.contains("progress=consumed"), || {
            format!("the delivered handoff is not consumed: {orient}")
        })
    }

    /// Cline's CLI: `handoff-store install cline` puts the TaskStart script into the
    /// repository's `.clinerules/hooks/`; the user's own step is pointing Cline at a provider
    /// (`cline auth`, here the loopback mock). The real CLI discovers the script and runs it
    /// with its payload (hookName `agent_start`), and our hook answers (its claim is recorded).
    /// This is as far as it goes: Cline 3.0.65's CLI runs start hooks detached and does not pass
    /// their output to the model, so the handoff must stay unread for the next task — checked.
    fn cline_task_start(&self) -> Check {
        let scene = self.scene(false, false)?;
        self.stored(&scene, "tag-cline")?;
        let (code, said) = self.store_cmd(&scene, &["install", "cline"], None);
        ensure(code == 0, || format!("install cline: {said}"))?;
        let cline = |args: &[&str]| run_client(&self.cline, &scene, &[], args);
        let base = format!("{}/v1", self.mock.url());
        cline(&[
            "auth",
            "-p",
            "openai-compatible",
            "-k",
            "e2e-not-a-key",
            "-m",
            "mock",
            "-b",
            &base,
        ])?;
        let mark = self.mock.mark();
        cline(&["say ok"])?;
        ensure(!self.mock.since(mark).is_empty(), || {
            "cline sent the mock nothing".into()
        })?;
        let fired = || Self::claimed_clear(&scene);
        let deadline = Instant::now() + Duration::from_secs(20);
        while !fired() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(100));
        }
        let ran = ensure(fired(), || "Cline never ran our TaskStart hook".into());
        // Cline's CLI leaves its hub daemon running after the task; it must not outlive the scene.
        stop_left_behind(&scene.home);
        ran?;
        let (_, orient) = self.store_cmd(&scene, &["orient"], None);
        ensure(orient.contains("progress=complete"), || {
            format!("a delivery whose output Cline drops consumed the handoff: {orient}")
        })
    }

    /// Codex's automatic compaction: with `model_auto_compact_token_limit` set low and the mock
    /// reporting a large usage, the resumed session compacts; PreCompact (installed by
    /// `install codex`) starts the background writer through `codex exec`, whose session writes
    /// the draft and runs the write command with its shell tool; PostCompact confirms; the
    /// writer's handoff replaces the slot and the old one is in history.
    fn codex_compaction(&self) -> Check {
        let (scene, codex_home) = self.codex_scene("model_auto_compact_token_limit = 1000\n")?;
        let slot = self.stored(&scene, "tag-before-compact")?;
        let env = |cmd: &mut Command| self.codex_env(&scene, &codex_home, cmd);
        let said = self.codex_install(&scene, &codex_home)?;
        ensure(
            said.contains("pre_compact") && said.contains("post_compact"),
            || format!("install codex did not trust the compaction hooks: {said}"),
        )?;
        self.mock.set_writer_doc(Some(handoff("tag-codex-writer")));
        let run = |args: &[&str]| -> Check {
            let mut cmd = Command::new(&self.codex);
            env(&mut cmd);
            let out = cmd.args(args).output().map_err(|e| e.to_string())?;
            ensure(out.status.success(), || {
                format!(
                    "codex {args:?} exited {:?}: {}",
                    out.status.code(),
                    String::from_utf8_lossy(&out.stderr)
                )
            })
        };
        run(&[
            "exec",
            "--skip-git-repo-check",
            "OVERFLOW-NOW first codex turn",
        ])?;
        run(&[
            "exec",
            "--skip-git-repo-check",
            "resume",
            "--last",
            "second codex turn",
        ])?;
        let deadline = Instant::now() + Duration::from_secs(90);
        let replaced = || {
            std::fs::read_to_string(&slot).is_ok_and(|t| t.contains("tag-codex-writer is where"))
        };
        while !replaced() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(200));
        }
        self.mock.set_writer_doc(None);
        ensure(replaced(), || {
            format!(
                "the writer's handoff never reached the slot; writer log: {}",
                Self::log(&scene)
            )
        })?;
        self.kept_in_history(&scene, "tag-before-compact")
    }

    /// A scene with a `CODEX_HOME` whose config points Codex at the mock (plus `extra` lines).
    fn codex_scene(&self, extra: &str) -> Result<(Scene, PathBuf), String> {
        let scene = self.scene(false, false)?;
        let codex_home = scene.home.join(".codex");
        std::fs::create_dir_all(&codex_home).map_err(|e| e.to_string())?;
        let config = format!(
            "model = \"gpt-5\"\nmodel_provider = \"mock\"\n{extra}\n[model_providers.mock]\nname = \"mock\"\nbase_url = \"{}/v1\"\nwire_api = \"responses\"\n",
            self.mock.url()
        );
        std::fs::write(codex_home.join("config.toml"), config).map_err(|e| e.to_string())?;
        Ok((scene, codex_home))
    }

    /// The environment Codex and our binary run with in a Codex scene.
    fn codex_env(&self, scene: &Scene, codex_home: &Path, cmd: &mut Command) {
        cmd.env_clear()
            .current_dir(&scene.repo)
            .env("HOME", &scene.home)
            .env("CODEX_HOME", codex_home)
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("HANDOFF_STORE_DIR", &scene.store)
            .env("HANDOFF_CODEX_BIN", &self.codex)
            .env("CTX_FORK_TIMEOUT_SECONDS", "120")
            .stdin(Stdio::null());
    }

    /// `handoff-store install codex` in the scene, as a user would run it; what it said.
    fn codex_install(&self, scene: &Scene, codex_home: &Path) -> Result<String, String> {
        let mut install = Command::new(STORE_BIN);
        self.codex_env(scene, codex_home, &mut install);
        let out = install
            .args(["install", "codex"])
            .output()
            .map_err(|e| e.to_string())?;
        let said = String::from_utf8_lossy(&out.stdout).into_owned();
        ensure(out.status.success(), || {
            format!(
                "install codex failed: {said}{}",
                String::from_utf8_lossy(&out.stderr)
            )
        })?;
        Ok(said)
    }

    /// Copilot CLI with a model provider of the user's own (BYOK: `COPILOT_PROVIDER_BASE_URL` at
    /// the loopback mock and `COPILOT_OFFLINE=true`, which needs no GitHub account and touches no
    /// network). `install copilot` writes `.github/hooks/handoff-store.json`; until the folder is
    /// trusted Copilot does not load it (status says so) and nothing reaches the model. The
    /// user's trust step — the folder listed under `trustedFolders` in ~/.copilot/config.json,
    /// what Copilot's trust prompt records — and a plain `copilot -p` stays quiet (it sends
    /// source `new` with the prompt for every headless session); after a recorded /clear the
    /// next session's request carries the handoff, which is then consumed.
    fn copilot_session_start(&self) -> Check {
        let scene = self.scene(false, false)?;
        self.stored(&scene, "tag-copilot")?;
        let (code, said) = self.store_cmd(&scene, &["install", "copilot"], None);
        ensure(code == 0 && said.contains("trustedFolders"), || {
            format!("install copilot: {said}")
        })?;
        let file = scene.repo.join(".github/hooks/handoff-store.json");
        let hooks: Value = std::fs::read(&file)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .ok_or("no readable .github/hooks/handoff-store.json")?;
        ensure(hooks["version"] == 1, || format!("{hooks}"))?;
        let copilot_row = || {
            let (_, status) = self.store_cmd(&scene, &["status"], None);
            status
                .lines()
                .find(|l| l.starts_with("copilot  project"))
                .unwrap_or("")
                .to_string()
        };
        let prompt = |text: &str| -> Result<Vec<String>, String> {
            let mark = self.mock.mark();
            self.copilot_cmd(&scene, &["-p", text, "--allow-all-tools"])?;
            let sent = self.mock.since(mark);
            ensure(!sent.is_empty(), || "copilot sent the mock nothing".into())?;
            Ok(sent)
        };
        let carried = |sent: &[String]| sent.iter().any(|r| r.contains("tag-copilot is where"));
        let clear = |id: &str| -> Check {
            let end = serde_json::json!({
                "session_id": id, "cwd": scene.repo, "reason": "clear",
                "hook_event_name": "SessionEnd"
            });
            let (code, _) =
                self.store_cmd(&scene, &["hook", "session-end"], Some(&end.to_string()));
            ensure(code == 0, || "session-end failed".into())
        };

        ensure(copilot_row().contains("runs=no"), || {
            format!("status before the trust step: {}", copilot_row())
        })?;
        clear("copilot-untrusted")?;
        let untrusted = prompt("an untrusted folder")?;
        ensure(!carried(&untrusted), || {
            "Copilot ran the hook of a folder it does not trust".into()
        })?;

        Self::copilot_trust(&scene)?;
        ensure(copilot_row().contains("runs=yes"), || {
            format!("status after the trust step: {}", copilot_row())
        })?;
        // The marker of the untrusted run was never taken: this session delivers it.
        let after = prompt("after the clear, copilot")?;
        ensure(carried(&after), || {
            format!("the handoff is not in what Copilot sent: {after:?}")
        })?;
        let (_, orient) = self.store_cmd(&scene, &["orient"], None);
        ensure(orient.contains("progress=consumed"), || {
            format!("the delivered handoff is not consumed: {orient}")
        })?;
        let plain = prompt("a plain copilot session")?;
        ensure(!carried(&plain), || {
            "a plain headless session carried the handoff again".into()
        })
    }

    /// Run Copilot CLI in the scene with a model provider of the user's own (the loopback mock,
    /// `COPILOT_OFFLINE=true`: no account, no network); what it printed.
    ///
    /// Copilot removes its provider settings (`COPILOT_OFFLINE`, `COPILOT_PROVIDER_*`) from the
    /// environment of the hooks it runs (1.0.102, measured), so the background writer started from
    /// preCompact would look for a GitHub login. A user of their own provider points
    /// `HANDOFF_COPILOT_BIN` at a script that sets those variables and runs copilot — the one
    /// the README shows, written here into the scene's home.
    fn copilot_cmd(&self, scene: &Scene, args: &[&str]) -> Result<String, String> {
        let env = self.copilot_env(scene)?;
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
        run_client(&self.copilot, scene, &env, args)
    }

    /// The environment of a Copilot run in `scene`: the user's own provider, and the writer's
    /// wrapper that sets it again (see [`Self::copilot_cmd`]).
    fn copilot_env(&self, scene: &Scene) -> Result<Vec<(&'static str, String)>, String> {
        let provider = [
            ("COPILOT_OFFLINE", "true".to_string()),
            (
                "COPILOT_PROVIDER_BASE_URL",
                format!("{}/v1", self.mock.url()),
            ),
            ("COPILOT_PROVIDER_API_KEY", "e2e-not-a-key".to_string()),
        ];
        let script: String = provider
            .iter()
            .map(|(k, v)| format!("export {k}='{v}'\n"))
            .collect();
        let wrapper = scene.home.join("bin/copilot-with-my-provider");
        std::fs::create_dir_all(scene.home.join("bin")).map_err(|e| e.to_string())?;
        std::fs::write(
            &wrapper,
            format!(
                "#!/bin/sh\n{script}exec '{}' \"$@\"\n",
                self.copilot.display()
            ),
        )
        .map_err(|e| e.to_string())?;
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755))
                .map_err(|e| e.to_string())?;
        }
        let mut env = vec![
            ("HANDOFF_STORE_BIN", STORE_BIN.to_string()),
            (
                "HANDOFF_COPILOT_BIN",
                wrapper.to_string_lossy().into_owned(),
            ),
            ("CTX_FORK_TIMEOUT_SECONDS", "120".to_string()),
            ("COPILOT_MODEL", "gpt-4o".to_string()),
        ];
        env.extend(provider);
        Ok(env)
    }

    /// Copilot's own `/clear`, in its TUI on a pseudo-terminal, the folder trusted: a quiet first
    /// prompt, `/clear`, and the next prompt's request carries the handoff, which is then
    /// consumed. Copilot (1.0.102, measured here) ends the session at /clear with
    /// `reason: user_exit` and starts the next one with `source: new` and the prompt — what a
    /// fresh start sends too; only the same Copilot process having ended a session tells them
    /// apart. A plain `copilot -p` afterwards, another process, stays quiet.
    fn copilot_tui_clear(&self) -> Check {
        let scene = self.scene(false, false)?;
        self.stored(&scene, "tag-copilot-tui")?;
        let (code, said) = self.store_cmd(&scene, &["install", "copilot"], None);
        ensure(code == 0, || format!("install copilot: {said}"))?;
        Self::copilot_trust(&scene)?;
        let mut cmd = on_a_terminal(&format!("'{}'", self.copilot.display()));
        cmd.env_clear()
            .current_dir(&scene.repo)
            .env("HOME", &scene.home)
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("HANDOFF_STORE_DIR", &scene.store)
            .envs(self.copilot_env(&scene)?);
        let mut tui = Tui::start(cmd)?;
        let mark = self.mock.mark();
        let sent_with = |text: &str| self.sent_since(mark, text);
        let cleared = || Self::claimed_clear(&scene);
        let steps = (|| -> Check {
            tui.wait("the prompt", |s| s.contains("/ commands"))?;
            tui.line("first copilot tui prompt");
            wait_for("the first prompt's request", || {
                !sent_with("first copilot tui prompt").is_empty()
            })?;
            // The turn is over when Copilot's own events file says so.
            wait_for("the first turn's end", || {
                std::fs::read_dir(scene.home.join(".copilot/session-state")).is_ok_and(|d| {
                    d.flatten().any(|e| {
                        std::fs::read_to_string(e.path().join("events.jsonl"))
                            .is_ok_and(|t| t.contains("\"assistant.turn_end\""))
                    })
                })
            })?;
            tui.line("/clear");
            // The first Enter takes the completion Copilot offers; the second runs it.
            std::thread::sleep(Duration::from_millis(700));
            tui.keys("\r");
            tui.wait("the new session", |s| s.contains("Started a fresh session"))?;
            tui.line("after the copilot tui clear");
            wait_for("the request after /clear", || {
                !sent_with("after the copilot tui clear").is_empty()
            })?;
            // Handled as a clear: this Copilot process had just ended a session.
            wait_for("sessionStart after /clear", cleared)
        })();
        tui.stop();
        steps?;
        ensure(
            sent_with("first copilot tui prompt")
                .iter()
                .all(|r| !r.contains("tag-copilot-tui is where")),
            || "the first session carried the handoff".into(),
        )?;
        ensure(
            sent_with("after the copilot tui clear")
                .iter()
                .any(|r| r.contains("tag-copilot-tui is where")),
            || "the handoff is not in the request after /clear".into(),
        )?;
        let (_, orient) = self.store_cmd(&scene, &["orient"], None);
        ensure(orient.contains("progress=consumed"), || {
            format!("the delivered handoff is not consumed: {orient}")
        })?;
        self.stored(&scene, "tag-copilot-tui-next")?;
        let mark = self.mock.mark();
        self.copilot_cmd(
            &scene,
            &["-p", "a plain copilot start", "--allow-all-tools"],
        )?;
        ensure(
            self.mock
                .since(mark)
                .iter()
                .all(|r| !r.contains("tag-copilot-tui-next is where")),
            || "a fresh copilot process took its start for a /clear".into(),
        )
    }

    /// The user's trust step: the repository listed under `trustedFolders` in
    /// ~/.copilot/config.json, what Copilot's folder-trust prompt records.
    fn copilot_trust(scene: &Scene) -> Check {
        let config = scene.home.join(".copilot/config.json");
        std::fs::create_dir_all(scene.home.join(".copilot")).map_err(|e| e.to_string())?;
        std::fs::write(
            &config,
            format!(
                "// the trust prompt's record\n{}\n",
                serde_json::json!({ "trustedFolders": [scene.repo] })
            ),
        )
        .map_err(|e| e.to_string())
    }

    /// Copilot CLI's compaction, with `install copilot` (sessionStart, preCompact, agentStop,
    /// sessionEnd) and the folder trusted. A prompt the mock refuses once as too large (413)
    /// makes Copilot compact and retry (`trigger: context_limit_retry`, a second prompt of a
    /// resumed session so there is history to compact). First the summary call fails: Copilot
    /// records `session.compaction_complete` with `success: false`, the writer's handoff stays
    /// out of the slot (byte-identical) and is kept in history. Then a compaction that succeeds:
    /// the writer run through Copilot's headless mode (the prompt on stdin) has its handoff
    /// replace the slot, the old one kept in history.
    fn copilot_compaction(&self) -> Check {
        let scene = self.scene(false, false)?;
        let slot = self.stored(&scene, "tag-copilot-old")?;
        let (code, said) = self.store_cmd(&scene, &["install", "copilot"], None);
        ensure(code == 0, || format!("install copilot: {said}"))?;
        Self::copilot_trust(&scene)?;
        let original = std::fs::read(&slot).map_err(|e| e.to_string())?;
        let session = |second: &str| -> Check {
            self.copilot_cmd(&scene, &["-p", "first copilot prompt", "--allow-all-tools"])?;
            self.copilot_cmd(&scene, &["--continue", "-p", second, "--allow-all-tools"])?;
            Ok(())
        };

        self.mock
            .set_writer_doc(Some(handoff("tag-copilot-refused")));
        self.mock.set_refuse_summary(true);
        let refused = session("OVERFLOW-NOW, and the summary fails");
        self.mock.set_refuse_summary(false);
        refused?;
        let log = Self::writer_end(&scene);
        self.mock.set_writer_doc(None);
        let log = log?;
        ensure(log.contains(" rc=0 state=held "), || {
            format!("the writer of a failed compaction was not held out: {log}")
        })?;
        ensure(std::fs::read(&slot).ok() == Some(original), || {
            "a failed compaction changed the slot".into()
        })?;
        self.kept_in_history(&scene, "tag-copilot-refused")?;

        self.mock
            .set_writer_doc(Some(handoff("tag-copilot-writer")));
        let ran = session("OVERFLOW-NOW, second");
        self.writer_replaces(&scene, &slot, "tag-copilot-writer", ran)?;
        self.kept_in_history(&scene, "tag-copilot-old")
    }

    /// The shipped Codex plugin (`contrib/codex`, listed by `contrib/.agents/plugins/
    /// marketplace.json`): added with Codex's own `plugin marketplace add` and `plugin add`,
    /// trusted with `handoff-store trust codex` (what Codex's /hooks "Trust" records), its
    /// SessionStart hook carries the handoff after a recorded /clear.
    fn codex_plugin(&self) -> Check {
        let (scene, codex_home) = self.codex_scene("")?;
        self.stored(&scene, "tag-codex-plugin")?;
        let codex = |args: &[&str]| -> Result<String, String> {
            let mut cmd = Command::new(&self.codex);
            self.codex_env(&scene, &codex_home, &mut cmd);
            let out = cmd
                .env("HANDOFF_STORE_BIN", STORE_BIN)
                .args(args)
                .output()
                .map_err(|e| e.to_string())?;
            if !out.status.success() {
                return Err(format!(
                    "codex {args:?} exited {:?}: {}",
                    out.status.code(),
                    String::from_utf8_lossy(&out.stderr)
                ));
            }
            Ok(String::from_utf8_lossy(&out.stdout).into_owned())
        };
        let contrib = Path::new(ROOT).join("contrib");
        codex(&["plugin", "marketplace", "add", &contrib.to_string_lossy()])?;
        codex(&["plugin", "add", "handoff-store@handoff-store"])?;
        let mut trust = Command::new(STORE_BIN);
        self.codex_env(&scene, &codex_home, &mut trust);
        let out = trust
            .args(["trust", "codex"])
            .output()
            .map_err(|e| e.to_string())?;
        let said = String::from_utf8_lossy(&out.stdout).into_owned();
        ensure(
            out.status.success() && said.contains("handoff-store@handoff-store"),
            || {
                format!(
                    "trust codex: {said}{}",
                    String::from_utf8_lossy(&out.stderr)
                )
            },
        )?;
        let mut status = Command::new(STORE_BIN);
        self.codex_env(&scene, &codex_home, &mut status);
        let out = status
            .args(["status", "--format", "json"])
            .output()
            .map_err(|e| e.to_string())?;
        let rows: Value = serde_json::from_slice(&out.stdout).map_err(|e| e.to_string())?;
        let plugin_runs = rows["harnesses"].as_array().is_some_and(|rows| {
            rows.iter()
                .any(|r| r["harness"] == "codex" && r["scope"] == "plugin" && r["runs"] == "yes")
        });
        ensure(plugin_runs, || {
            format!("status does not see the trusted plugin: {rows}")
        })?;
        let end = serde_json::json!({
            "session_id": "codex-plugin-before", "cwd": scene.repo, "reason": "clear",
            "hook_event_name": "SessionEnd"
        });
        let (code, _) = self.store_cmd(&scene, &["hook", "session-end"], Some(&end.to_string()));
        ensure(code == 0, || "session-end failed".into())?;
        let mark = self.mock.mark();
        codex(&[
            "exec",
            "--skip-git-repo-check",
            "after the clear, codex plugin",
        ])?;
        let sent = self.mock.since(mark);
        ensure(
            sent.iter().any(|r| r.contains("tag-codex-plugin is where")),
            || format!("the plugin's hook did not carry the handoff: {sent:?}"),
        )
    }
}
