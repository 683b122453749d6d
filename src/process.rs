//! This process's own life around the writes that must never be cut half-way: termination
//! signals held back while a lock in the user's repository is held (so Ctrl-C, `kill` or a
//! closed terminal end the process after the lock is gone, never with it left behind), and the
//! crash-test seam that stops the process before its Nth mutation.

use std::sync::atomic::{AtomicU64, Ordering};

use nix::sys::signal::{SigSet, SigmaskHow, Signal, pthread_sigmask};

static MUTATIONS: AtomicU64 = AtomicU64::new(0);

/// SIGINT, SIGTERM and SIGHUP held back from [`Deferred::begin`] until the value is dropped;
/// one that arrived meanwhile is delivered then, with its usual effect.
pub(crate) struct Deferred {
    previous: Option<SigSet>,
}

impl Deferred {
    pub(crate) fn begin() -> Deferred {
        let mut held = SigSet::empty();
        for signal in [Signal::SIGINT, Signal::SIGTERM, Signal::SIGHUP] {
            held.add(signal);
        }
        let mut previous = SigSet::empty();
        let blocked = pthread_sigmask(SigmaskHow::SIG_BLOCK, Some(&held), Some(&mut previous));
        Deferred {
            previous: blocked.is_ok().then_some(previous),
        }
    }
}

impl Drop for Deferred {
    fn drop(&mut self) {
        if let Some(previous) = self.previous.take() {
            let _ = pthread_sigmask(SigmaskHow::SIG_SETMASK, Some(&previous), None);
        }
    }
}

/// Whether process `pid` is alive (a zombie counts; a pid we may not signal counts too).
pub(crate) fn alive(pid: i32) -> bool {
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None) != Err(nix::errno::Errno::ESRCH)
}

/// The test seam for crash tests: with `HANDOFF_STORE_KILL_AT=N` set, the process signals
/// itself just before its Nth mutation (of the store: a temp file created, a rename, a removal;
/// of a handoff chain: the objects written, the ref locked, the ref moved), so a test can stop
/// any operation at each of its steps. The signal is SIGKILL, or `HANDOFF_STORE_KILL_WITH`
/// (`TERM`, `INT` or `HUP`; `STOP` pauses the process there, for a test to act before it goes
/// on). Unset, it is one env lookup.
pub(crate) fn kill_point() {
    let n = MUTATIONS.fetch_add(1, Ordering::Relaxed) + 1;
    if std::env::var("HANDOFF_STORE_KILL_AT").is_ok_and(|v| v.parse() == Ok(n)) {
        let signal = match std::env::var("HANDOFF_STORE_KILL_WITH").as_deref() {
            Ok("TERM") => Signal::SIGTERM,
            Ok("INT") => Signal::SIGINT,
            Ok("HUP") => Signal::SIGHUP,
            Ok("STOP") => Signal::SIGSTOP,
            _ => Signal::SIGKILL,
        };
        let _ = nix::sys::signal::raise(signal);
    }
}

/// Make this process adopt its orphaned descendants (Linux's child subreaper), so none escapes
/// [`end_descendants`] by outliving its parent or calling `setsid`. Whether it took.
pub(crate) fn adopt_orphans() -> bool {
    #[cfg(target_os = "linux")]
    {
        nix::sys::prctl::set_child_subreaper(true).is_ok()
    }
    #[cfg(not(target_os = "linux"))]
    {
        false
    }
}

/// Cap the size of any file this process and its children write (`RLIMIT_FSIZE`): a write
/// past it fails (the writer gets SIGXFSZ). Whether it took.
pub(crate) fn limit_file_size(bytes: u64) -> bool {
    use nix::sys::resource::{Resource, setrlimit};
    setrlimit(Resource::RLIMIT_FSIZE, bytes, bytes).is_ok()
}

/// End every descendant of this process: SIGTERM, `grace` for them to go, then SIGKILL, each
/// one reaped, until none is left (orphans come back to us as their subreaper, see
/// [`adopt_orphans`]). Call it once every `Child` of ours was waited for.
pub(crate) fn end_descendants(grace: std::time::Duration) {
    let started = std::time::Instant::now();
    let mut signal = if grace.is_zero() {
        Signal::SIGKILL
    } else {
        Signal::SIGTERM
    };
    // One empty scan is not proof: a child forked mid-scan at a pid below the scan's place
    // (pids wrap), whose parent then exits before the scan reaches it, is in neither. Every
    // process alive when a scan starts is in it, so a second empty scan is.
    let mut empty_once = false;
    // Bounded: a descendant that survives SIGKILL for seconds is the kernel's (D state).
    for _ in 0..200 {
        reap();
        let left = descendants();
        if left.is_empty() {
            if empty_once {
                return;
            }
            empty_once = true;
            continue;
        }
        empty_once = false;
        if signal == Signal::SIGTERM && started.elapsed() >= grace {
            signal = Signal::SIGKILL;
        }
        // Stopped first, then signalled: a stopped process forks no successor, so one that
        // re-forks itself cannot outrun the rounds.
        for &pid in &left {
            let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), Signal::SIGSTOP);
        }
        for pid in left {
            let pid = nix::unistd::Pid::from_raw(pid);
            let _ = nix::sys::signal::kill(pid, signal);
            let _ = nix::sys::signal::kill(pid, Signal::SIGCONT);
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Reap every child of ours that has ended.
fn reap() {
    use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
    while let Ok(status) = waitpid(None, Some(WaitPidFlag::WNOHANG)) {
        if status == WaitStatus::StillAlive {
            break;
        }
    }
}

/// The live (not zombie) descendants of this process, from `/proc`.
fn descendants() -> Vec<i32> {
    let me = std::process::id() as i32;
    let mut parent_of = Vec::new();
    for entry in crate::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<i32>().ok())
        else {
            continue;
        };
        let Ok(stat) = crate::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // `pid (comm) state ppid …`: comm may hold anything, so read after its last ')'.
        let mut rest = stat
            .rsplit_once(')')
            .map_or("", |(_, r)| r)
            .split_whitespace();
        let (Some(state), Some(ppid)) =
            (rest.next(), rest.next().and_then(|p| p.parse::<i32>().ok()))
        else {
            continue;
        };
        parent_of.push((pid, ppid, state == "Z"));
    }
    let mut found = vec![me];
    let mut i = 0;
    while i < found.len() {
        let parent = found[i];
        for (pid, ppid, _) in &parent_of {
            if *ppid == parent && !found.contains(pid) {
                found.push(*pid);
            }
        }
        i += 1;
    }
    found
        .into_iter()
        .filter(|pid| *pid != me)
        .filter(|pid| parent_of.iter().any(|(p, _, zombie)| p == pid && !zombie))
        .collect()
}
