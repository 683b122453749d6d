//! From an event to its hook: the recursion guard (a background writer's own hooks stay
//! inert), stdin read once, and every panic caught — a hook always exits 0.

use std::path::PathBuf;

use serde_json::{Map, Value};

use super::input::{is_writer_child, read_input};
use super::{
    post_checkout, post_compact, pre_compact, session_end, session_start, supervisor, user_prompt,
};

/// Which hook to run.
#[derive(Debug, Clone)]
pub enum Event {
    SessionStart,
    PreCompact,
    PostCompact,
    UserPromptSubmit,
    SessionEnd,
    PostCheckout(Vec<String>),
    /// The detached supervisor of a background writer (internal).
    Supervise(PathBuf),
}

/// Run a hook. Always 0: a panic is caught and silenced, because a hook must never fail a
/// session or a checkout.
pub fn run(
    event: Event,
    out: &mut dyn std::io::Write,
    err: &mut dyn std::io::Write,
) -> crate::error::Exit {
    guard(|| dispatch(event, out, err))
}

/// Run a hook body with panics caught and silenced; always 0 (a hook never fails a session or
/// a checkout). The harness adapters run through it too.
pub fn guard(body: impl FnOnce()) -> crate::error::Exit {
    std::panic::set_hook(Box::new(|_| {}));
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(body));
    crate::error::Exit::Ok
}

fn dispatch(event: Event, out: &mut dyn std::io::Write, err: &mut dyn std::io::Write) {
    let claude = |f: &mut dyn FnMut(&Map<String, Value>)| {
        if is_writer_child() {
            return;
        }
        if let Some(input) = read_input(std::io::stdin()) {
            f(&input);
        }
    };
    match event {
        Event::SessionStart => claude(&mut |i| {
            session_start::run(i, &mut session_start::claude_output(out, "SessionStart"))
        }),
        Event::PreCompact => claude(&mut |i| pre_compact::run(i, out)),
        Event::PostCompact => claude(&mut post_compact::run),
        Event::UserPromptSubmit => claude(&mut |i| {
            user_prompt::run(
                i,
                &mut session_start::claude_output(out, "UserPromptSubmit"),
            )
        }),
        Event::SessionEnd => claude(&mut session_end::run),
        Event::PostCheckout(args) => post_checkout::run(&args, err),
        Event::Supervise(dir) => supervisor::supervise(&dir),
    }
}
