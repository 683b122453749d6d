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

/// End every descendant of this process: SIGTERM, `grace` for them to go, then SIGKILL, until
/// none is left. Call it once every `Child` of ours was waited for. Orphans come back to us
/// as their subreaper (see [`adopt_orphans`]), so "no child left" is the kernel's word that no
/// descendant is: that, not a scan of `/proc`, ends the rounds.
pub(crate) fn end_descendants(grace: std::time::Duration) {
    let until = std::time::Instant::now() + grace;
    let mut asked = Vec::new();
    while reap() && std::time::Instant::now() < until {
        for pid in descendants() {
            if !asked.contains(&pid) {
                let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), Signal::SIGTERM);
                asked.push(pid);
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // Bounded: a descendant that survives SIGKILL for seconds is the kernel's (D state).
    let until = std::time::Instant::now() + std::time::Duration::from_secs(3);
    while reap() && std::time::Instant::now() < until {
        let tree = freeze();
        for &pid in &tree {
            let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), Signal::SIGKILL);
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

/// Stop every descendant (SIGSTOP: a stopped process forks no successor) and return them. A
/// descendant that re-forks itself lives less than one scan of `/proc`, so after one whole
/// scan the rounds read only the pids handed out since (the kernel's `ns_last_pid`): the
/// newest generation is among them, and each round stops what it finds, until every one found
/// is stopped and no new pid is ours. One missed still ends up our child: the next call finds it.
fn freeze() -> Vec<i32> {
    let mut since = last_pid();
    let mut tree = descendants();
    for _ in 0..1000 {
        for &pid in &tree {
            let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), Signal::SIGSTOP);
        }
        // Once stopped, a process's forks are done: its children have pids below the next read.
        let waited = std::time::Instant::now();
        while !tree.iter().all(|&pid| stopped_or_gone(pid))
            && waited.elapsed() < std::time::Duration::from_millis(50)
        {
            std::thread::yield_now();
        }
        let now = last_pid();
        let new = match (since, now) {
            (Some(from), Some(to)) if from == to => Vec::new(),
            (Some(from), Some(to)) => born_between(from, to, &tree),
            _ => descendants()
                .into_iter()
                .filter(|p| !tree.contains(p))
                .collect(),
        };
        if new.is_empty() {
            break;
        }
        tree.extend(new);
        since = now;
    }
    tree
}

/// The last pid the kernel handed out in our PID namespace, where it says.
fn last_pid() -> Option<i32> {
    crate::fs::read_to_string("/proc/sys/kernel/ns_last_pid")
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// The live processes with a pid handed out after `from` up to `to` (pids wrap) whose parent is
/// this process, one of `tree` or one of them.
fn born_between(from: i32, to: i32, tree: &[i32]) -> Vec<i32> {
    let after = |pid: i32| {
        if from < to {
            pid > from && pid <= to
        } else {
            pid > from || pid <= to
        }
    };
    let table = processes(after);
    let mut ours = vec![std::process::id() as i32];
    ours.extend_from_slice(tree);
    let mut new = Vec::new();
    loop {
        let before = new.len();
        for (pid, ppid, zombie) in &table {
            if !zombie && ours.contains(ppid) && !ours.contains(pid) {
                ours.push(*pid);
                new.push(*pid);
            }
        }
        if new.len() == before {
            return new;
        }
    }
}

/// Whether `pid` is stopped, a zombie or gone.
fn stopped_or_gone(pid: i32) -> bool {
    stat(pid).is_none_or(|(_, state)| matches!(state, 'T' | 't' | 'Z' | 'X'))
}

/// Reap every child of ours that has ended; whether any child is left.
fn reap() -> bool {
    use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
    loop {
        match waitpid(None, Some(WaitPidFlag::WNOHANG)) {
            Ok(WaitStatus::StillAlive) => return true,
            Ok(_) => {}
            Err(nix::errno::Errno::EINTR) => {}
            Err(_) => return false,
        }
    }
}

/// The live (not zombie) descendants of this process, from `/proc`.
fn descendants() -> Vec<i32> {
    let me = std::process::id() as i32;
    let table = processes(|_| true);
    let mut found = vec![me];
    let mut i = 0;
    while i < found.len() {
        let parent = found[i];
        for (pid, ppid, _) in &table {
            if *ppid == parent && !found.contains(pid) {
                found.push(*pid);
            }
        }
        i += 1;
    }
    found
        .into_iter()
        .filter(|pid| *pid != me)
        .filter(|pid| table.iter().any(|(p, _, zombie)| p == pid && !zombie))
        .collect()
}

/// Every process whose pid `wanted` takes, as (pid, parent, zombie), from `/proc`.
fn processes(wanted: impl Fn(i32) -> bool) -> Vec<(i32, i32, bool)> {
    let mut table = Vec::new();
    for entry in crate::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse().ok()) else {
            continue;
        };
        if let Some((ppid, state)) = wanted(pid).then(|| stat(pid)).flatten() {
            table.push((pid, ppid, state == 'Z'));
        }
    }
    table
}

/// A process's parent and state, from `/proc/<pid>/stat`.
fn stat(pid: i32) -> Option<(i32, char)> {
    let stat = crate::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // `pid (comm) state ppid …`: comm may hold anything, so read after its last ')'.
    let mut rest = stat.rsplit_once(')')?.1.split_whitespace();
    let state = rest.next()?.chars().next()?;
    Some((rest.next()?.parse().ok()?, state))
}
