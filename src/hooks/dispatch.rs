//! The hook events, and the guard every hook body runs under: every panic caught — a hook
//! always exits 0. The door that reads a client's input is `harness::hook`.

use std::path::PathBuf;

/// Which hook to run.
#[derive(Debug, Clone)]
pub(crate) enum Event {
    SessionStart,
    PreCompact,
    PostCompact,
    UserPromptSubmit,
    SessionEnd,
    PostCheckout(Vec<String>),
    /// The detached supervisor of a background writer (internal).
    Supervise(PathBuf),
}

/// Run a hook body with panics caught and silenced; always 0 (a hook never fails a session or
/// a checkout).
pub(crate) fn guard(body: impl FnOnce()) -> crate::error::Exit {
    std::panic::set_hook(Box::new(|_| {}));
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(body));
    crate::error::Exit::Ok
}
