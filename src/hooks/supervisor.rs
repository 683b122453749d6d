//! The background writer's supervisor (`hook __supervise <run dir>`, started by PreCompact):
//! it takes a session of its own, so closing the terminal cannot hang up the writer; runs the
//! writer's argument vector from the run record (never a shell) in a process group of its own
//! under the time limit, tied to the supervisor's life (`hook __exec-writer` KILLs the writer's
//! group when the supervisor dies); takes the writer's answer, gates it and stores it as the
//! run's candidate — asking the writer again, at most twice, when the gate refuses it — and
//! records and logs the run's end, so a run is never left looking alive. It also keeps the
//! writer log, which PreCompact appends to.

use crate::fs::OpenOptions;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::{texts, writer};
use crate::document::Document;
use crate::store::runs::{self, Answer, Run};
use crate::store::{Store, Target, iso, now, slot};

/// How many times the writer is asked again after the gate refused its answer.
const RETRIES: usize = 2;

/// The writer log rotates above this size.
const LOG_CAP: u64 = 1024 * 1024;

/// Append one line to the writer log, rotating it above 1 MiB.
pub(crate) fn log(path: &Path, line: &str) {
    if crate::fs::metadata(path).is_ok_and(|m| m.len() > LOG_CAP) {
        let _ = crate::fs::rename(path, path.with_extension("txt.1"));
    }
    let mut options = OpenOptions::new();
    options.create(true).append(true);
    #[cfg(unix)]
    {
        use crate::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    if let Ok(mut f) = options.open(path) {
        let _ = writeln!(f, "{} {line}", iso(now()));
    }
}

/// Put the writer in a process group of its own, so the time limit can end all of it.
fn own_group(cmd: &mut Command) {
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        cmd.process_group(0);
    }
}

/// Start `handoff-store hook __supervise <run dir>` in the background; its pid. It is spawned
/// in the hook's process group, so it is not a group leader and can call setsid itself.
pub(crate) fn spawn_supervisor(run_dir: &Path) -> Option<u32> {
    let exe = std::env::current_exe().ok()?;
    let mut cmd = Command::new(exe);
    cmd.args(["hook", "__supervise"]).arg(run_dir);
    cmd.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    cmd.spawn().ok().map(|c| c.id())
}

/// The supervisor: leave the hook's session (so closing its terminal cannot hang up the
/// writer), run the writer under its time limit, take its answer, record and log the run's
/// end, prune old runs.
pub(crate) fn supervise(run_dir: &Path) {
    #[cfg(unix)]
    let _ = nix::unistd::setsid();
    // Orphans of a writer whose `__exec-writer` was ended (the time limit) come back here.
    crate::process::adopt_orphans();
    let Some(run) = Run::load(run_dir) else {
        return;
    };
    run.record_supervisor(std::process::id());
    let store = Store {
        dir: run_dir
            .parent()
            .and_then(Path::parent)
            .map(Path::to_path_buf)
            .unwrap_or_default(),
    };
    let began = Instant::now();
    let mut usage = crate::store::costs::Usage::default();
    let rc = attempts(&run, &store, &mut usage);
    if run.record_exit(&store, &rc) {
        crate::ops::after::promoted(&run);
    }
    crate::store::costs::record(
        &store,
        &crate::store::costs::Cost {
            at: now(),
            seconds: began.elapsed().as_secs(),
            writer: run
                .job
                .argv
                .first()
                .and_then(|p| Path::new(p).file_name())
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            checkout: run.job.cwd.clone(),
            outcome: run.state(now()).word().to_string(),
            run: Some(run.job.write_session.clone()),
            usage,
        },
    );
    log(
        Path::new(&run.job.log),
        &format!(
            "session={} write_session={} rc={rc} state={} scratch={}",
            run.job.session,
            run.job.write_session,
            state_word(&run.state(now())),
            run_dir.display()
        ),
    );
    runs::prune(&store);
}

/// Run the writer, take its answer, and ask again while the gate refuses it (at most
/// [`RETRIES`] more times, all within the one time limit). The run's exit word.
fn attempts(run: &Run, store: &Store, usage: &mut crate::store::costs::Usage) -> String {
    let deadline = Instant::now() + Duration::from_secs(run.job.timeout);
    let mut argv = run.job.argv.clone();
    let mut stdin = run.prompt_path();
    for attempt in 0..=RETRIES {
        let (rc, stdout) = run_writer(run, &argv, &stdin, deadline);
        // What this attempt cost, as its client reported it (read apart from the answer).
        if let Ok(out) = crate::fs::File::open(run.dir.join(runs::WRITER_OUT)) {
            let mut bytes = Vec::new();
            let _ = std::io::Read::read_to_end(
                &mut std::io::Read::take(out, writer::OUTPUT_CAP),
                &mut bytes,
            );
            *usage = usage.add(writer::usage_of(&bytes));
        }
        let Some(stdout) = stdout.filter(|_| rc == "0") else {
            return rc;
        };
        let doc = match writer::answer(run, stdout) {
            Ok(Some(doc)) => doc,
            Ok(None) => return rc,
            Err(why) => return why.word().into(),
        };
        let (exit, report) = match take(run, store, &doc) {
            Ok(Some(refused)) => refused,
            Ok(None) => return rc,
            Err(word) => return word.into(),
        };
        if attempt == RETRIES || Instant::now() >= deadline {
            return rc;
        }
        let (next, fresh) = match &run.job.resume {
            Some(resume) => (resume.clone(), None),
            None => (run.job.argv.clone(), Some(doc)),
        };
        let prompt = crate::fs::read_to_string(run.prompt_path()).unwrap_or_default();
        let text = texts::writer_retry(
            exit,
            &report,
            fresh.as_deref().map(|doc| (prompt.as_str(), doc)),
        );
        let path = run.dir.join(format!("retry-{}.txt", attempt + 1));
        if crate::durable::write(&path, text.as_bytes(), None).is_err() {
            return rc;
        }
        argv = next;
        stdin = path;
    }
    "0".into()
}

/// Gate the writer's answer as `write` gates a draft, and store it as the run's candidate
/// (one that carries a credential is never stored). `Ok(None)` when it passed; the gate's exit
/// and words when it was refused; the run's exit word when it cannot be stored at all.
fn take(run: &Run, store: &Store, doc: &str) -> Result<Option<(i32, String)>, &'static str> {
    let target = Target::resolve(Some(&run.job.cwd)).map_err(|_| "checkout-gone")?;
    if target.name != run.job.slot {
        return Err("checkout-moved");
    }
    let text = match target.normalise(doc) {
        Ok(text) => text,
        Err(e) => return Ok(Some((2, e.report()))),
    };
    let parsed = Document::parse(&text.replace('\r', ""));
    let report =
        crate::report::run_gate::document(&parsed, "the writer's answer", Some(&target.checkout()));
    let words: String = report
        .text_lines()
        .into_iter()
        .map(|(_, line)| format!("{line}\n"))
        .collect();
    let _ = crate::durable::write(&run.dir.join(runs::ANSWER_GATE), words.as_bytes(), None);
    let code = report.exit_code;
    if report
        .findings
        .iter()
        .any(|f| f.code == crate::finding::Code::Secret)
    {
        return Ok(Some((code.max(2), words)));
    }
    let recorded = run.record_candidate(store, text.as_bytes(), code);
    if matches!(recorded, Ok(runs::RunState::Promoted)) {
        // In the slot now: it joins the chain and travels like any written version.
        crate::ops::after::promoted(run);
    }
    if recorded.is_err() {
        // The run is gone (pruned, removed by hand): its result is kept, never put in the slot.
        let kept = slot::keep_bytes(
            store,
            &run.job.slot,
            text.as_bytes(),
            std::time::SystemTime::now(),
        );
        return Err(if kept.is_ok() {
            "run-gone"
        } else {
            "unstorable"
        });
    }
    Ok((code != 0).then_some((code, words)))
}

fn state_word(state: &runs::RunState) -> &'static str {
    state.word()
}

/// Run the writer once: `argv` with `stdin`, its output in the run directory, until it exits
/// or the deadline passes. Started through `hook __exec-writer`, so it dies with this process.
fn run_writer(
    run: &Run,
    argv: &[String],
    stdin: &Path,
    deadline: Instant,
) -> (String, Option<crate::fs::File>) {
    let job = &run.job;
    if let Answer::File(name) = &job.answer {
        let _ = slot::remove(&run.dir.join(name));
    }
    // The supervisor keeps a handle on the writer's stdout and reads the answer through it.
    let stdout = crate::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(run.dir.join(runs::WRITER_OUT));
    let (Ok(exe), Some(_), Ok(stdin), Ok(mut stdout), Ok(stderr)) = (
        std::env::current_exe(),
        argv.first(),
        crate::fs::File::open(stdin),
        stdout,
        crate::fs::File::create(run.dir.join(runs::WRITER_ERR)),
    ) else {
        return ("spawn-failed".into(), None);
    };
    let Ok(writer_out) = stdout.try_clone() else {
        return ("spawn-failed".into(), None);
    };
    let mut cmd = Command::new(exe);
    cmd.args(["hook", "__exec-writer"])
        .arg(std::process::id().to_string())
        .args(argv)
        .stdin(stdin.into_file())
        .stdout(writer_out.into_file())
        .stderr(stderr.into_file())
        .current_dir(job.writer_cwd.as_deref().unwrap_or(&job.cwd))
        .envs(job.env.iter().map(|(k, v)| (k, v)));
    own_group(&mut cmd);
    let Ok(mut child) = cmd.spawn() else {
        return ("spawn-failed".into(), None);
    };
    let ended = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Ok(status),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(100)),
            Ok(None) => {
                terminate(&mut child);
                break Err("timeout");
            }
            Err(_) => break Err("spawn-failed"),
        }
    };
    // Nothing the writer started outlives its run.
    crate::process::end_descendants(Duration::from_millis(500));
    let status = match ended {
        Ok(status) => status,
        Err(word) => return (word.into(), None),
    };
    if stdout
        .metadata()
        .is_ok_and(|m| m.len() > writer::OUTPUT_CAP)
    {
        return (writer::NoAnswer::TooLarge.word().into(), None);
    }
    use std::io::Seek;
    let rewound = stdout.rewind().is_ok();
    (describe(status), rewound.then_some(stdout))
}

/// `hook __exec-writer <supervisor pid> <argv…>`: run the writer and watch the supervisor.
/// Started as the leader of the writer's process group. It is bounded in everything: every file
/// the writer's tree writes is capped at [`WRITER_FILE_CAP`] (`RLIMIT_FSIZE`); its stdout comes
/// through a pipe copied into the run's `writer.out` up to one byte past the answer's cap, and
/// the writer is ended there; its stderr is kept up to [`WRITER_ERR_CAP`]. When the writer
/// ends — or the supervisor dies (SIGKILL included: the writer's parent is then no longer the
/// supervisor) — every process it started ends too, a `setsid` daemon included: this process
/// is their subreaper.
pub(crate) fn exec_writer(parent: &str, argv: &[std::ffi::OsString]) -> crate::error::Exit {
    let Some((program, args)) = argv.split_first() else {
        return crate::error::Exit::Relayed(127);
    };
    crate::process::adopt_orphans();
    crate::process::limit_file_size(WRITER_FILE_CAP);
    let Ok(mut child) = Command::new(program)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    else {
        return crate::error::Exit::Relayed(127);
    };
    let over = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    // Our own stdout and stderr by descriptor (the command's output handles stay locked by
    // the dispatcher while it runs).
    use std::os::fd::AsFd;
    let own = |fd: std::os::fd::BorrowedFd<'_>| fd.try_clone_to_owned().map(std::fs::File::from);
    let (Ok(stdout), Ok(stderr)) = (
        own(std::io::stdout().as_fd()),
        own(std::io::stderr().as_fd()),
    ) else {
        let _ = child.kill();
        let _ = child.wait();
        return crate::error::Exit::Relayed(127);
    };
    let out = copy_capped(
        child.stdout.take(),
        stdout,
        writer::OUTPUT_CAP + 1,
        Some(over.clone()),
    );
    let err = copy_capped(child.stderr.take(), stderr, WRITER_ERR_CAP, None);
    let code = loop {
        match child.try_wait() {
            Ok(Some(status)) => break exit_code(status),
            Ok(None) => {}
            Err(_) => break 127,
        }
        if !parent_is(parent) {
            let _ = child.kill();
            let _ = child.wait();
            crate::process::end_descendants(Duration::ZERO);
            return crate::error::Exit::Relayed(137);
        }
        if over.load(std::sync::atomic::Ordering::Relaxed) {
            let _ = child.kill();
            let _ = child.wait();
            break 137;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    crate::process::end_descendants(Duration::from_millis(500));
    // The writer is gone, and what it wrote is in the pipe, drained in moments. A descendant
    // that still holds the pipe (one that outran `end_descendants`) never holds its answer
    // back: the copies get a second to finish, then the run goes on without them.
    let until = std::time::Instant::now() + Duration::from_secs(1);
    while !(out.is_finished() && err.is_finished()) && std::time::Instant::now() < until {
        std::thread::sleep(Duration::from_millis(10));
    }
    crate::error::Exit::Relayed(code)
}

/// The largest file the writer's process tree may write (its answer file included).
const WRITER_FILE_CAP: u64 = 32 * 1024 * 1024;
/// How much of the writer's stderr is kept (the rest is read and dropped).
const WRITER_ERR_CAP: u64 = 1024 * 1024;

/// Copy `from` into `to` in a thread, at most `cap` bytes. Past the cap, with `over` given, it
/// is set and the pipe closed (the writer's next write fails); without, the rest is read and
/// dropped, so the writer never blocks on a full pipe.
fn copy_capped(
    from: Option<impl std::io::Read + Send + 'static>,
    mut to: impl Write + Send + 'static,
    cap: u64,
    over: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let Some(mut from) = from else {
            return;
        };
        let mut buf = vec![0u8; 64 * 1024];
        let mut left = cap;
        loop {
            let n = match from.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            let keep = (n as u64).min(left) as usize;
            if keep > 0 && to.write_all(&buf[..keep]).is_err() {
                break;
            }
            left -= keep as u64;
            if left == 0
                && let Some(over) = &over
            {
                over.store(true, std::sync::atomic::Ordering::Relaxed);
                break;
            }
        }
        let _ = to.flush();
    })
}

/// Whether this process's parent is still the supervisor `parent` (an orphan is adopted by
/// init or a subreaper).
fn parent_is(parent: &str) -> bool {
    #[cfg(unix)]
    {
        parent.parse::<i32>().ok() == Some(nix::unistd::getppid().as_raw())
    }
    #[cfg(not(unix))]
    {
        let _ = parent;
        true
    }
}

fn exit_code(status: std::process::ExitStatus) -> u8 {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(sig) = status.signal() {
            return u8::try_from(128 + sig).unwrap_or(u8::MAX);
        }
    }
    // A code past 255 is not one a process can exit with; taken as its low byte, as the shell
    // would.
    status.code().map_or(127, |c| (c & 0xff) as u8)
}

fn describe(status: std::process::ExitStatus) -> String {
    if let Some(code) = status.code() {
        return code.to_string();
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(sig) = status.signal() {
            return format!("signal-{sig}");
        }
    }
    "signal-unknown".into()
}

/// TERM the writer's process group, then KILL it after 5 s.
fn terminate(child: &mut std::process::Child) {
    #[cfg(unix)]
    {
        use nix::sys::signal::{Signal, killpg};
        use nix::unistd::Pid;
        let group = Pid::from_raw(child.id() as i32);
        let _ = killpg(group, Signal::SIGTERM);
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if matches!(child.try_wait(), Ok(Some(_))) {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = killpg(group, Signal::SIGKILL);
    }
    let _ = child.kill();
    let _ = child.wait();
}
