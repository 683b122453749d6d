//! Whole-process timings of the release binaries — what a user pays per hook or command —
//! printed as a markdown table: the median of 15 runs (after 3 warm-ups) and the peak
//! resident memory (GNU `/usr/bin/time -f %M`, when present) beside each target.
//! Run with `cargo bench --bench process`.

mod fixtures;

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const RUNS: usize = 15;
const WARMUP: usize = 3;

struct Case {
    name: &'static str,
    target_ms: f64,
    bin: &'static str,
    args: Vec<String>,
    stdin: Option<String>,
    cwd: std::path::PathBuf,
    /// Peak RSS target in MB.
    rss_mb: f64,
    /// Run before each run, outside the timing.
    setup: Option<fn(&fixtures::Fixtures)>,
}

fn command(case: &Case, f: &fixtures::Fixtures, program: &Path) -> Command {
    let mut c = Command::new(program);
    c.args(&case.args)
        .current_dir(&case.cwd)
        .env("HOME", &f.home)
        .env("HANDOFF_STORE_DIR", &f.store)
        .env("LAST_CLEAR_STATE_DIR", f.home.join("markers"))
        // Every run of the session-start case must deliver, not find the first run's claim.
        .env("HANDOFF_CLAIM_WINDOW_SECONDS", "0")
        .env_remove("XDG_DATA_HOME")
        .env_remove("CONTEXT_ECONOMY_CHECKOUT")
        .stdin(if case.stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    c
}

fn run_once(mut c: Command, stdin: Option<&str>) -> Duration {
    let start = Instant::now();
    let mut child = c.spawn().expect("spawn");
    if let (Some(text), Some(mut pipe)) = (stdin, child.stdin.take()) {
        let _ = pipe.write_all(text.as_bytes());
    }
    let _ = child.wait();
    start.elapsed()
}

/// Peak RSS in MB of one run, through GNU time.
fn peak_mb(case: &Case, f: &fixtures::Fixtures, program: &Path) -> Option<f64> {
    let time = Path::new("/usr/bin/time");
    if !time.exists() {
        return None;
    }
    if let Some(setup) = case.setup {
        setup(f);
    }
    let inner = command(case, f, program);
    let mut c = Command::new(time);
    c.arg("-f")
        .arg("%M")
        .arg(inner.get_program())
        .args(inner.get_args());
    c.current_dir(&case.cwd)
        .env("HOME", &f.home)
        .env("HANDOFF_STORE_DIR", &f.store)
        .env("LAST_CLEAR_STATE_DIR", f.home.join("markers"))
        .stdin(if case.stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let mut child = c.spawn().ok()?;
    if let (Some(text), Some(mut pipe)) = (case.stdin.as_deref(), child.stdin.take()) {
        let _ = pipe.write_all(text.as_bytes());
    }
    let out = child.wait_with_output().ok()?;
    let text = String::from_utf8_lossy(&out.stderr);
    let kb: f64 = text.lines().last()?.trim().parse().ok()?;
    Some(kb / 1024.0)
}

fn main() {
    // `cargo bench` passes `--bench`; a filter argument is not supported here.
    let f = fixtures::ensure();
    // `HANDOFF_BENCH_AFTER=<dir>`: this build's two binaries, copied there. A freshly linked
    // binary starts slower from the linker's file than from a copy of the same bytes (measured:
    // 2.53 ms against 2.12 ms for `orient`), so a before/after table copies both sides alike.
    let after = std::env::var_os("HANDOFF_BENCH_AFTER").map(std::path::PathBuf::from);
    let verify_at = after.as_ref().map(|d| d.join("verify-handoff"));
    let store_at = after.as_ref().map(|d| d.join("handoff-store"));
    let verify = verify_at
        .as_deref()
        .unwrap_or(Path::new(env!("CARGO_BIN_EXE_verify-handoff")));
    let store = store_at
        .as_deref()
        .unwrap_or(Path::new(env!("CARGO_BIN_EXE_handoff-store")));
    let s = |p: &Path| p.to_string_lossy().into_owned();
    let clear = format!(
        "{{\"session_id\":\"bench\",\"cwd\":{:?},\"source\":\"clear\"}}",
        s(&f.small_repo)
    );
    let startup = clear.replace("\"clear\"", "\"startup\"");
    // The 20k-file repository has no handoff: not in use, the store's 10,000 names scanned.
    let unused_clear = format!(
        "{{\"session_id\":\"bench-unused\",\"cwd\":{:?},\"source\":\"clear\"}}",
        s(&f.big_repo)
    );
    // Claude Code's PreCompact with no transcript: the summary steering, no writer.
    let pre_compact = format!(
        "{{\"session_id\":\"bench-pc\",\"cwd\":{:?},\"trigger\":\"auto\"}}",
        s(&f.small_repo)
    );
    // A session whose SessionStart already ran: every prompt after it is the "nothing to do"
    // path of the UserPromptSubmit fallback.
    let claims = f.home.join(".claude/state/handoff-fork/claims");
    let _ = std::fs::create_dir_all(&claims);
    let _ = std::fs::write(claims.join("bench-prompt.session-start-startup"), "1");
    let prompt = format!(
        "{{\"session_id\":\"bench-prompt\",\"cwd\":{:?},\"prompt\":\"go on\"}}",
        s(&f.small_repo)
    );
    // The tripwire hook, at a tool call: a shell command in the repository not in use; in
    // the small repository, one that trips nothing, and an edit beneath its dead end's
    // `app/Mail/` (said once; every later run finds the session's claim).
    let tool = |repo: &Path, sid: &str, name: &str, input: serde_json::Value| {
        serde_json::json!({"session_id": sid, "cwd": s(repo), "hook_event_name": "PreToolUse",
            "tool_name": name, "tool_input": input})
        .to_string()
    };
    let tool_unused = tool(
        &f.big_repo,
        "bench-tool-unused",
        "Bash",
        serde_json::json!({"command": "cargo build --release"}),
    );
    let tool_command = tool(
        &f.small_repo,
        "bench-tool",
        "Bash",
        serde_json::json!({"command": "cargo build --release"}),
    );
    let tool_edit = tool(
        &f.small_repo,
        "bench-tool",
        "Edit",
        serde_json::json!({"file_path": s(&f.small_repo.join("app/Mail/Invoice.php")),
            "old_string": "a", "new_string": "b"}),
    );
    let cases = [
        Case {
            name: "baseline: spawn /bin/true (not a target)",
            target_ms: f64::INFINITY,
            bin: "true",
            args: vec![],
            stdin: None,
            cwd: f.small_repo.clone(),
            rss_mb: 30.0,
            setup: None,
        },
        Case {
            name: "gate, canonical 2 citations",
            target_ms: 3.0,
            bin: "verify",
            args: vec![s(&f.small_handoff)],
            stdin: None,
            cwd: f.small_repo.clone(),
            rss_mb: 30.0,
            setup: None,
        },
        Case {
            name: "gate, 200 line citations, 20k files",
            target_ms: 8.0,
            bin: "verify",
            args: vec![s(&f.lines_200)],
            stdin: None,
            cwd: f.big_repo.clone(),
            rss_mb: 30.0,
            setup: None,
        },
        Case {
            name: "gate, 1,000 line citations, 20k files",
            target_ms: 25.0,
            bin: "verify",
            args: vec![s(&f.lines_1000)],
            stdin: None,
            cwd: f.big_repo.clone(),
            rss_mb: 30.0,
            setup: None,
        },
        Case {
            name: "gate, 1,000 line citations (100 moved), 20k files",
            target_ms: 25.0,
            bin: "verify",
            args: vec![s(&f.moved_1000)],
            stdin: None,
            cwd: f.big_repo.clone(),
            rss_mb: 30.0,
            setup: None,
        },
        Case {
            name: "verify-handoff --fix --dry-run, 1,000 line citations (100 moved), 20k files",
            target_ms: 50.0,
            bin: "verify",
            args: vec!["--fix".into(), "--dry-run".into(), s(&f.moved_1000)],
            stdin: None,
            cwd: f.big_repo.clone(),
            rss_mb: 30.0,
            setup: None,
        },
        Case {
            name: "gate, 20,000 line citations, 20k files",
            target_ms: 500.0,
            bin: "verify",
            args: vec![s(&f.lines_20000)],
            stdin: None,
            cwd: f.big_repo.clone(),
            rss_mb: 40.0,
            setup: None,
        },
        Case {
            name: "gate, 50 symbol citations, 20k files",
            target_ms: 300.0,
            bin: "verify",
            args: vec![s(&f.symbols_50)],
            stdin: None,
            cwd: f.big_repo.clone(),
            rss_mb: 30.0,
            setup: None,
        },
        Case {
            name: "baseline: rg -F -l, the same 50 symbols, same tree (not a target)",
            target_ms: f64::INFINITY,
            bin: "rg",
            args: {
                let mut a = vec!["-F".to_string(), "-l".to_string()];
                for p in fixtures::symbols() {
                    a.extend(["-e".to_string(), p]);
                }
                a.push(s(&f.big_repo));
                a
            },
            stdin: None,
            cwd: f.big_repo.clone(),
            rss_mb: f64::INFINITY,
            setup: None,
        },
        Case {
            name: "hook session-start (clear, handoff present)",
            target_ms: 10.0,
            bin: "store",
            args: vec!["hook".into(), "session-start".into()],
            stdin: Some(clear),
            cwd: f.small_repo.clone(),
            rss_mb: 30.0,
            setup: None,
        },
        Case {
            name: "hook session-start (startup, handoff offered)",
            target_ms: 10.0,
            bin: "store",
            args: vec!["hook".into(), "session-start".into()],
            stdin: Some(startup),
            cwd: f.small_repo.clone(),
            rss_mb: 30.0,
            // Unread again before each run (the clear case consumes it).
            setup: Some(|f| {
                let _ = std::fs::copy(&f.small_handoff, f.store.join(&f.small_slot));
            }),
        },
        Case {
            name: "hook session-start (clear, a repository not in use, 10,000 other handoffs)",
            target_ms: 10.0,
            bin: "store",
            args: vec!["hook".into(), "session-start".into()],
            stdin: Some(unused_clear),
            cwd: f.big_repo.clone(),
            rss_mb: 30.0,
            setup: None,
        },
        Case {
            name: "hook pre-compact (Claude Code, no transcript: the summary steering)",
            target_ms: 10.0,
            bin: "store",
            args: vec!["hook".into(), "pre-compact".into()],
            stdin: Some(pre_compact),
            cwd: f.small_repo.clone(),
            rss_mb: 30.0,
            setup: None,
        },
        Case {
            name: "hook user-prompt-submit (nothing to do)",
            target_ms: 5.0,
            bin: "store",
            args: vec!["hook".into(), "user-prompt-submit".into()],
            stdin: Some(prompt),
            cwd: f.small_repo.clone(),
            rss_mb: 30.0,
            setup: None,
        },
        Case {
            name: "hook pre-tool-use (a repository not in use, 10,000 other handoffs)",
            target_ms: 3.0,
            bin: "store",
            args: vec!["hook".into(), "pre-tool-use".into()],
            stdin: Some(tool_unused),
            cwd: f.big_repo.clone(),
            rss_mb: 30.0,
            setup: None,
        },
        Case {
            name: "hook pre-tool-use (in use, a command that trips nothing)",
            target_ms: 5.0,
            bin: "store",
            args: vec!["hook".into(), "pre-tool-use".into()],
            stdin: Some(tool_command),
            cwd: f.small_repo.clone(),
            rss_mb: 30.0,
            setup: None,
        },
        Case {
            name: "hook pre-tool-use (in use, an edit of a dead end's path)",
            target_ms: 5.0,
            bin: "store",
            args: vec!["hook".into(), "pre-tool-use".into()],
            stdin: Some(tool_edit),
            cwd: f.small_repo.clone(),
            rss_mb: 30.0,
            setup: None,
        },
        Case {
            name: "hook post-checkout (branch with a handoff)",
            target_ms: 10.0,
            bin: "store",
            args: vec![
                "hook".into(),
                "post-checkout".into(),
                "a".into(),
                "b".into(),
                "1".into(),
            ],
            stdin: None,
            cwd: f.small_repo.clone(),
            rss_mb: 30.0,
            setup: None,
        },
        Case {
            name: "list, 10,000 handoffs",
            target_ms: 40.0,
            bin: "store",
            args: vec!["list".into()],
            stdin: None,
            cwd: f.small_repo.clone(),
            rss_mb: 30.0,
            setup: None,
        },
        Case {
            name: "read exact slot, 10,000 in store",
            target_ms: 5.0,
            bin: "store",
            args: vec!["read".into(), s(&f.small_repo), "--no-consume".into()],
            stdin: None,
            cwd: f.small_repo.clone(),
            rss_mb: 30.0,
            setup: None,
        },
        Case {
            name: "orient exact slot, 10,000 in store",
            target_ms: 5.0,
            bin: "store",
            args: vec!["orient".into(), s(&f.small_repo)],
            stdin: None,
            cwd: f.small_repo.clone(),
            rss_mb: 30.0,
            setup: None,
        },
        Case {
            name: "hook pre-compact --harness gemini (PreCompress, before every model call: 100 KB appended to a 20 MB session file, no compression)",
            target_ms: 10.0,
            bin: "store",
            args: vec![
                "hook".into(),
                "pre-compact".into(),
                "--harness".into(),
                "gemini".into(),
            ],
            stdin: Some(format!(
                "{{\"session_id\":\"bench-g\",\"transcript_path\":{:?},\"cwd\":{:?}}}",
                s(&gemini_session(&f)),
                s(&f.small_repo)
            )),
            cwd: f.small_repo.clone(),
            rss_mb: 30.0,
            setup: Some(gemini_watch_behind),
        },
        Case {
            name: "hook post-compact --harness copilot (agentStop, no compaction pending)",
            target_ms: 5.0,
            bin: "store",
            args: vec![
                "hook".into(),
                "post-compact".into(),
                "--harness".into(),
                "copilot".into(),
            ],
            stdin: Some(format!(
                "{{\"sessionId\":\"bench-c\",\"transcriptPath\":{:?},\"cwd\":{:?}}}",
                s(&gemini_session(&f)),
                s(&f.small_repo)
            )),
            cwd: f.small_repo.clone(),
            rss_mb: 30.0,
            setup: None,
        },
    ];
    let h = hostile(&f);
    let hostile_cases = [
        Case {
            name: "gate, one 40,000-character Pointers path",
            target_ms: 20.0,
            bin: "verify",
            args: vec![s(&h.join("long40k.md")), s(&f.small_repo)],
            stdin: None,
            cwd: f.small_repo.clone(),
            rss_mb: 30.0,
            setup: None,
        },
        Case {
            name: "gate, one 4 MiB single-line Pointers block",
            target_ms: 1000.0,
            bin: "verify",
            args: vec![s(&h.join("single4m.md")), s(&f.small_repo)],
            stdin: None,
            cwd: f.small_repo.clone(),
            rss_mb: 300.0,
            setup: None,
        },
        Case {
            name: "citations into a 2 GiB file (2 citations)",
            target_ms: 5000.0,
            bin: "verify",
            args: vec![
                "--citations".into(),
                s(&h.join("cites2g.txt")),
                "--checkout".into(),
                s(&h.join("big2g")),
            ],
            stdin: None,
            cwd: f.small_repo.clone(),
            rss_mb: 64.0,
            setup: None,
        },
    ];
    // The MCP server, when this build has it (`cargo bench --features mcp`): from the start to
    // the first answer (initialize), then stdin closes and it ends.
    let mcp_cases: Vec<Case> = if cfg!(feature = "mcp") {
        vec![Case {
            name: "mcp: start, answer initialize, end at stdin's close",
            target_ms: 20.0,
            bin: "store",
            args: vec!["mcp".into()],
            stdin: Some(
                r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}"#
                    .to_string()
                    + "\n",
            ),
            cwd: f.small_repo.clone(),
            rss_mb: 30.0,
            setup: None,
        }]
    } else {
        Vec::new()
    };
    // `HANDOFF_BENCH_BEFORE=<dir>` holds an earlier build's two binaries: each case then runs
    // them too, one run of each in turn (a machine whose speed drifts — CPU steal, the disk —
    // drifts under both alike), and the table shows before and after side by side.
    let before = std::env::var_os("HANDOFF_BENCH_BEFORE").map(std::path::PathBuf::from);
    if before.is_some() {
        println!(
            "| case | target (median) | before: median | before: peak RSS | median | min | peak RSS | RSS target | met |"
        );
        println!("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |");
    } else {
        println!("| case | target (median) | median | min | peak RSS | RSS target | met |");
        println!("| --- | ---: | ---: | ---: | ---: | ---: | --- |");
    }
    // `HANDOFF_BENCH_ONLY=<text>`: only the cases whose name holds it.
    let only = std::env::var("HANDOFF_BENCH_ONLY").unwrap_or_default();
    for case in cases
        .iter()
        .chain(&hostile_cases)
        .chain(&mcp_cases)
        .filter(|c| c.name.contains(&only))
    {
        if case.bin == "rg" && !Path::new("/usr/bin/rg").exists() {
            println!("| {} | — | rg not installed | | | | |", case.name);
            continue;
        }
        let program = match case.bin {
            "verify" => verify,
            "store" => store,
            "rg" => Path::new("/usr/bin/rg"),
            _ => Path::new("/bin/true"),
        };
        let old_program = before.as_ref().map(|dir| match case.bin {
            "verify" => dir.join("verify-handoff"),
            "store" => dir.join("handoff-store"),
            _ => program.to_path_buf(),
        });
        let (old, (median, min)) = match &old_program {
            Some(p) => {
                let ((old_median, _), new) = measure_pair(case, &f, p, program);
                (Some((old_median, peak_mb(case, &f, p))), new)
            }
            None => (None, measure(case, &f, program)),
        };
        let peak = peak_mb(case, &f, program);
        let met = median <= case.target_ms && peak.is_none_or(|p| p <= case.rss_mb);
        let target = if case.target_ms.is_finite() {
            format!("≤ {} ms", case.target_ms)
        } else {
            "—".into()
        };
        let rss_target = if case.rss_mb.is_finite() {
            format!("≤ {} MB", case.rss_mb)
        } else {
            "—".into()
        };
        let verdict = if !case.target_ms.is_finite() {
            "—"
        } else if met {
            "yes"
        } else {
            "**no**"
        };
        let mb = |p: Option<f64>| p.map_or("n/a".to_string(), |p| format!("{p:.1} MB"));
        // Before and after side by side: two decimals, for the change.
        let old_cells = old.map_or(String::new(), |(m, p)| format!(" {m:.2} ms | {} |", mb(p)));
        let digits = if old.is_some() { 2 } else { 1 };
        println!(
            "| {} | {target} |{old_cells} {median:.digits$} ms | {min:.1} ms | {} | {rss_target} | {verdict} |",
            case.name,
            mb(peak),
        );
    }
}

/// The median and minimum in ms of `RUNS` runs after `WARMUP` warm-ups.
fn measure(case: &Case, f: &fixtures::Fixtures, program: &Path) -> (f64, f64) {
    let once = || {
        if let Some(setup) = case.setup {
            setup(f);
        }
        run_once(command(case, f, program), case.stdin.as_deref())
    };
    for _ in 0..WARMUP {
        once();
    }
    let mut times: Vec<Duration> = (0..RUNS).map(|_| once()).collect();
    times.sort();
    (
        times[RUNS / 2].as_secs_f64() * 1000.0,
        times[0].as_secs_f64() * 1000.0,
    )
}

/// [`measure`] of two programs at once, alternating one run of each, `HANDOFF_BENCH_RUNS`
/// runs each (default `RUNS`): both (median, min).
fn measure_pair(
    case: &Case,
    f: &fixtures::Fixtures,
    a: &Path,
    b: &Path,
) -> ((f64, f64), (f64, f64)) {
    let once = |program: &Path| {
        if let Some(setup) = case.setup {
            setup(f);
        }
        run_once(command(case, f, program), case.stdin.as_deref())
    };
    for _ in 0..WARMUP {
        once(a);
        once(b);
    }
    let runs = std::env::var("HANDOFF_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(RUNS)
        .max(1);
    let (mut ta, mut tb): (Vec<Duration>, Vec<Duration>) = (0..runs)
        .map(|i| {
            // Who goes first alternates too.
            if i % 2 == 0 {
                let x = once(a);
                (x, once(b))
            } else {
                let y = once(b);
                (once(a), y)
            }
        })
        .unzip();
    let stats = |t: &mut Vec<Duration>| {
        t.sort();
        (
            t[runs / 2].as_secs_f64() * 1000.0,
            t[0].as_secs_f64() * 1000.0,
        )
    };
    (stats(&mut ta), stats(&mut tb))
}

/// Hostile inputs (issue 12), made once beside the fixtures: a 40,000-character Pointers path,
/// a 4 MiB single-line Pointers block, and a checkout holding a 2 GiB text file (sparse: a
/// thousand lines, then a hole read as zeros).
fn hostile(f: &fixtures::Fixtures) -> std::path::PathBuf {
    let dir = f.home.parent().expect("fixtures root").join("hostile");
    if dir.join("done").exists() {
        return dir;
    }
    std::fs::create_dir_all(dir.join("big2g")).expect("hostile dir");
    let init = Command::new("git")
        .args(["init", "-q"])
        .current_dir(dir.join("big2g"))
        .status()
        .expect("git init");
    assert!(init.success(), "git init");
    let example = std::fs::read_to_string(f.small_handoff.as_path()).expect("small handoff");
    let with_line = |line: &str| {
        let at = example.find("## Pointers").expect("Pointers");
        let open = at + example[at..].find('\n').expect("heading end") + 1;
        let fence_end = open + example[open..].find('\n').expect("fence line") + 1;
        format!("{}{line}\n{}", &example[..fence_end], &example[fence_end..])
    };
    std::fs::write(dir.join("long40k.md"), with_line(&"a".repeat(40_000))).expect("40k");
    std::fs::write(dir.join("single4m.md"), with_line(&"a".repeat(4_000_000))).expect("4m");
    let big = dir.join("big2g").join("big.txt");
    let mut file = std::fs::File::create(&big).expect("big");
    for _ in 0..1000 {
        file.write_all(b"line one\n").expect("text");
    }
    file.set_len(2 << 30).expect("2 GiB");
    std::fs::write(
        dir.join("cites2g.txt"),
        "big.txt | the needle is not there\nbig.txt:5 | line one\n",
    )
    .expect("cites");
    std::fs::write(dir.join("done"), "").expect("done");
    dir
}

/// A Gemini CLI session file of 20 MB (20,000 JSONL records of about 1 KB), made once.
fn gemini_session(f: &fixtures::Fixtures) -> std::path::PathBuf {
    let path = f
        .home
        .parent()
        .expect("fixtures root")
        .join("gemini-session.jsonl");
    if !path.exists() {
        let line = format!(
            "{{\"id\":\"m\",\"type\":\"gemini\",\"content\":\"{}\"}}\n",
            "x".repeat(1000)
        );
        std::fs::write(&path, line.repeat(20_000)).expect("session file");
    }
    path
}

/// The watch of the Gemini case, put back 100 KB before the file's end before each run: every
/// run reads what a turn appended, as PreCompress does before each model call.
fn gemini_watch_behind(f: &fixtures::Fixtures) {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(gemini_session(f)).expect("session file");
    let dir = f.home.join(".claude/state/handoff-fork/gemini");
    std::fs::create_dir_all(&dir).expect("watch dir");
    let watch = format!("{} {}\n", meta.ino(), meta.len() - 100 * 1024);
    std::fs::write(dir.join("bench-g.watch"), watch).expect("watch");
}
