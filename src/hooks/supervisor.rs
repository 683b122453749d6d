//! The background writer's supervisor (`hook __supervise <run dir>`, started by PreCompact):
//! it takes a session of its own, so closing the terminal cannot hang up the writer; runs the
//! writer's argument vector from the run record (never a shell) in a process group of its own
//! under the time limit; and records and logs the writer's end, so a run is never left looking
//! alive. It also keeps the writer log, which PreCompact appends to.

use std::fs::OpenOptions;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::store::runs::{self, Run};
use crate::store::{Store, iso, now};

/// The writer log rotates above this size.
const LOG_CAP: u64 = 1024 * 1024;

/// Append one line to the writer log, rotating it above 1 MiB.
pub fn log(path: &Path, line: &str) {
    if std::fs::metadata(path).is_ok_and(|m| m.len() > LOG_CAP) {
        let _ = std::fs::rename(path, path.with_extension("txt.1"));
    }
    let mut options = OpenOptions::new();
    options.create(true).append(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
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
pub fn spawn_supervisor(run_dir: &Path) -> Option<u32> {
    let exe = std::env::current_exe().ok()?;
    let mut cmd = Command::new(exe);
    cmd.args(["hook", "__supervise"]).arg(run_dir);
    cmd.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    cmd.spawn().ok().map(|c| c.id())
}

/// The supervisor: leave the hook's session (so closing its terminal cannot hang up the
/// writer), run the writer under its time limit, record and log its end, prune old runs.
pub fn supervise(run_dir: &Path) {
    #[cfg(unix)]
    let _ = nix::unistd::setsid();
    let Some(run) = Run::load(run_dir) else {
        return;
    };
    run.record_supervisor(std::process::id());
    let rc = run_writer(&run);
    let store = Store {
        dir: run_dir
            .parent()
            .and_then(Path::parent)
            .map(Path::to_path_buf)
            .unwrap_or_default(),
    };
    if run.record_exit(&store, &rc) {
        crate::sync::promoted(&store, &run);
    }
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

fn state_word(state: &runs::RunState) -> &'static str {
    match state {
        runs::RunState::Writing => "writing",
        runs::RunState::Failed { .. } => "failed",
        runs::RunState::Held { .. } => "held",
        runs::RunState::Promoted => "promoted",
        runs::RunState::Superseded { .. } => "superseded",
    }
}

fn run_writer(run: &Run) -> String {
    let job = &run.job;
    let open = |name: &str| std::fs::File::create(run.dir.join(name));
    let (Some(program), Ok(stdin), Ok(stdout), Ok(stderr)) = (
        job.argv.first(),
        std::fs::File::open(run.prompt_path()),
        open("writer.out.json"),
        open("writer.err.log"),
    ) else {
        return "spawn-failed".into();
    };
    let mut cmd = Command::new(program);
    cmd.args(&job.argv[1..])
        .stdin(stdin)
        .stdout(stdout)
        .stderr(stderr)
        .current_dir(&job.cwd)
        .envs(job.env.iter().map(|(k, v)| (k, v)));
    own_group(&mut cmd);
    let Ok(mut child) = cmd.spawn() else {
        return "spawn-failed".into();
    };
    let deadline = Instant::now() + Duration::from_secs(job.timeout);
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return describe(status),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(100)),
            Ok(None) => {
                terminate(&mut child);
                return "timeout".into();
            }
            Err(_) => return "spawn-failed".into(),
        }
    }
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
