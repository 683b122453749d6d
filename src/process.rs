//! This process's own life around the writes that must never be cut half-way: termination
//! signals held back while a lock in the user's repository is held (so Ctrl-C, `kill` or a
//! closed terminal end the process after the lock is gone, never with it left behind), and the
//! crash-test seam that stops the process before its Nth mutation.

use std::sync::atomic::{AtomicU64, Ordering};

use nix::sys::signal::{SigSet, SigmaskHow, Signal, pthread_sigmask};

static MUTATIONS: AtomicU64 = AtomicU64::new(0);

/// SIGINT, SIGTERM and SIGHUP held back from [`Deferred::begin`] until the value is dropped;
/// one that arrived meanwhile is delivered then, with its usual effect.
pub struct Deferred {
    previous: Option<SigSet>,
}

impl Deferred {
    pub fn begin() -> Deferred {
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
pub fn alive(pid: i32) -> bool {
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None) != Err(nix::errno::Errno::ESRCH)
}

/// The test seam for crash tests: with `HANDOFF_STORE_KILL_AT=N` set, the process signals
/// itself just before its Nth mutation (of the store: a temp file created, a rename, a removal;
/// of a handoff chain: the objects written, the ref locked, the ref moved), so a test can stop
/// any operation at each of its steps. The signal is SIGKILL, or `HANDOFF_STORE_KILL_WITH`
/// (`TERM`, `INT` or `HUP`). Unset, it is one env lookup.
pub fn kill_point() {
    let n = MUTATIONS.fetch_add(1, Ordering::Relaxed) + 1;
    if std::env::var("HANDOFF_STORE_KILL_AT").is_ok_and(|v| v.parse() == Ok(n)) {
        let signal = match std::env::var("HANDOFF_STORE_KILL_WITH").as_deref() {
            Ok("TERM") => Signal::SIGTERM,
            Ok("INT") => Signal::SIGINT,
            Ok("HUP") => Signal::SIGHUP,
            _ => Signal::SIGKILL,
        };
        let _ = nix::sys::signal::raise(signal);
    }
}
