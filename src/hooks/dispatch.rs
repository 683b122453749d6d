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
    /// Before a tool call runs (the tripwire, where the client speaks to the model there).
    PreToolUse,
    /// After a tool call ran (the tripwire, where the client speaks only then).
    PostToolUse,
    PostCheckout(Vec<String>),
    /// The detached supervisor of a background writer (internal).
    Supervise(PathBuf),
}

/// What a hook computed, for the dispatcher to print: a line for its client (stdout), a line
/// for the person (stderr), and what follows once the client's line got out (a delivery's
/// consume and record).
#[derive(Default)]
pub(crate) struct HookReply {
    pub(crate) out: Option<String>,
    pub(crate) err: Option<String>,
    pub(crate) then: Option<Box<dyn FnOnce()>>,
}

/// Run a hook body with panics caught and silenced: a panic is a reply with nothing in it, and
/// what follows runs guarded too (a hook never fails a session or a checkout).
pub(crate) fn guard(body: impl FnOnce() -> HookReply) -> HookReply {
    std::panic::set_hook(Box::new(|_| {}));
    let mut reply =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(body)).unwrap_or_default();
    if let Some(then) = reply.then.take() {
        reply.then = Some(Box::new(move || {
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(then));
        }));
    }
    reply
}
