//! The hooks (hooks.md, issue 9): Claude Code SessionStart / UserPromptSubmit / PreCompact /
//! PostCompact / SessionEnd and git post-checkout. Every hook exits 0 on every input, never prints except where its contract
//! says, treats stdin strings as data (never a shell word, never a path without the safe-id
//! rule), and changes the store only through `store::slot`.

pub mod claude;
pub mod delivery;
pub mod git_hook;
pub mod marker;
pub mod post_checkout;
pub mod post_compact;
pub mod pre_compact;
pub mod session_end;
pub mod session_start;
pub mod supervisor;
pub mod texts;
pub mod user_prompt;
pub mod writer;

use std::io::{IsTerminal, Read};
use std::path::{Path, PathBuf};

use md5::{Digest, Md5};
use serde_json::{Map, Value};

use crate::store::skeleton::is_safe_id;
use crate::store::{Store, Target, home};

/// The most stdin a hook reads.
const STDIN_CAP: u64 = 1024 * 1024;

/// The hook's JSON object from stdin, or `None` when stdin is a terminal, too large, or not a
/// JSON object.
pub fn read_input(stdin: impl Read + IsTerminal) -> Option<Map<String, Value>> {
    if stdin.is_terminal() {
        return None;
    }
    let mut bytes = Vec::new();
    stdin.take(STDIN_CAP + 1).read_to_end(&mut bytes).ok()?;
    if bytes.len() as u64 > STDIN_CAP {
        return None;
    }
    match serde_json::from_slice(&bytes).ok()? {
        Value::Object(map) => Some(map),
        _ => None,
    }
}

/// A string field; a missing field or one of another type is `None`; empty counts as missing.
pub fn string_field<'a>(input: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    input.get(key)?.as_str().filter(|s| !s.is_empty())
}

/// The safe form of a session id: itself when safe, else `x-<md5 hex>`.
pub fn safe_session_id(id: &str) -> String {
    if is_safe_id(id) {
        id.to_string()
    } else {
        format!("x-{}", md5_hex(id.as_bytes()))
    }
}

/// Lowercase hex MD5.
pub fn md5_hex(bytes: &[u8]) -> String {
    Md5::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Whether the recursion guard is on (the background writer's own hooks stay inert).
pub fn is_writer_child() -> bool {
    crate::env::settings().writer_child
}

/// The hook's target (docs/hooks.md §0): `CONTEXT_ECONOMY_CHECKOUT`, else stdin `cwd`, else the
/// process cwd. An unusable choice never falls through to the next source.
pub fn target(input: &Map<String, Value>) -> Option<Target> {
    if crate::env::settings().checkout.is_some() {
        return Target::resolve(None).ok();
    }
    match string_field(input, "cwd") {
        Some(cwd) => Target::at(Path::new(cwd)),
        None => Target::at(&std::env::current_dir().ok()?),
    }
}

/// `<home>/.claude/state/handoff-fork/`.
pub fn state_dir() -> Option<PathBuf> {
    Some(home()?.join(".claude/state/handoff-fork"))
}

/// The dedup lock of a session: `<state>/<safe-sid>.lock`.
pub fn dedup_lock(safe_sid: &str) -> Option<PathBuf> {
    Some(state_dir()?.join(format!("{safe_sid}.lock")))
}

/// The store, if one can be located (hooks never fail on it).
pub fn store() -> Option<Store> {
    Store::locate().ok()
}

/// Quote a path for a POSIX shell: single quotes, with `'` written as `'\''`.
pub fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// A shell word for `s`: itself when it holds only characters no shell treats specially,
/// else single-quoted.
pub fn shell_word(s: &str) -> String {
    let plain = !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'/' | b'.' | b'_' | b'-' | b'+'));
    if plain { s.to_string() } else { shell_quote(s) }
}

/// The command that runs this very binary, as a shell word: its absolute path, else
/// `HANDOFF_STORE_BIN`, else the bare name. Every command we hand to the writer or the model
/// uses it, so nothing depends on PATH (issue 9).
pub fn self_command() -> String {
    let exe = std::env::current_exe()
        .ok()
        .filter(|p| p.is_absolute())
        .map(|p| p.to_string_lossy().into_owned())
        .or_else(|| crate::env::settings().store_bin.clone())
        .unwrap_or_else(|| "handoff-store".into());
    shell_word(&exe)
}

/// What [`stamp`] found.
pub enum Stamp {
    /// Stamped now; the file stays locked while this is held.
    Fresh(crate::fs::File),
    /// Another firing stamped it within the window.
    Taken,
    /// It could not be opened or locked within 2 s.
    Unavailable,
}

/// Stamp the file at `path` (created 0600) unless another firing did so less than `window` ago
/// (`None`: ever). Decided under an exclusive lock from the file's own content and mtime, so
/// two firings started together cannot both see "not yet": one stamps, the other is `Taken`.
/// Used for PreCompact's dedup lock and for the delivery claims.
pub fn stamp(path: &Path, window: Option<std::time::Duration>) -> Stamp {
    use std::io::Write;
    use std::time::{Duration, Instant, SystemTime};
    let mut options = crate::fs::OpenOptions::new();
    options.create(true).truncate(false).write(true);
    #[cfg(unix)]
    {
        use crate::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let Ok(file) = options.open(path) else {
        return Stamp::Unavailable;
    };
    let deadline = Instant::now() + Duration::from_secs(2);
    while file.try_lock().is_err() {
        if Instant::now() >= deadline {
            return Stamp::Unavailable;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let now = SystemTime::now();
    let taken = file.metadata().is_ok_and(|m| {
        m.len() > 0
            && m.modified()
                .ok()
                .and_then(|t| now.duration_since(t).ok())
                .is_some_and(|age| window.is_none_or(|w| age < w))
    });
    if taken {
        return Stamp::Taken;
    }
    if (&file).write_all(b"1").is_err() || file.set_modified(now).is_err() {
        return Stamp::Unavailable;
    }
    Stamp::Fresh(file)
}

/// Claim the delivery for one hook firing, so that the plugin and manual hooks, both installed,
/// inject once: [`stamp`] on `<state>/claims/<safe-sid>.<what>`. `false` only when another
/// firing holds the claim; anything that stops the claim from being recorded delivers anyway.
pub fn claim(safe_sid: &str, what: &str, window: Option<std::time::Duration>) -> bool {
    let Some(dir) = state_dir().map(|d| d.join("claims")) else {
        return true;
    };
    if crate::store::slot::create_private_dir(&dir).is_err() {
        return true;
    }
    !matches!(
        stamp(&dir.join(format!("{safe_sid}.{what}")), window),
        Stamp::Taken
    )
}

/// Delete the files in `dir` whose names end in `suffix` and that are older than 30 days
/// (dedup locks, delivery claims: one or two per session, kept no longer than that).
pub fn clean_old(dir: &Path, suffix: &str) {
    let Ok(entries) = crate::fs::read_dir(dir) else {
        return;
    };
    let month = std::time::Duration::from_secs(30 * 86_400);
    for e in entries.flatten() {
        let old = e.file_name().to_string_lossy().ends_with(suffix)
            && e.metadata()
                .ok()
                .and_then(|m| m.modified().ok())
                .and_then(|t| std::time::SystemTime::now().duration_since(t).ok())
                .is_some_and(|age| age > month);
        if old {
            let _ = crate::fs::remove_file(e.path());
        }
    }
}

/// Whether a claim exists for the session (any age).
pub fn claimed(safe_sid: &str, what: &str) -> bool {
    state_dir()
        .map(|d| d.join("claims").join(format!("{safe_sid}.{what}")))
        .is_some_and(|p| p.is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unsafe_ids_are_hashed() {
        assert_eq!(safe_session_id("abc-123"), "abc-123");
        let hashed = safe_session_id("../../x");
        assert!(hashed.starts_with("x-") && hashed.len() == 34);
        assert_ne!(safe_session_id("a;b"), safe_session_id("a;c"));
        assert!(safe_session_id("$(id)").starts_with("x-"));
    }

    #[test]
    fn quoting_survives_single_quotes() {
        assert_eq!(shell_quote("/a b/it's"), "'/a b/it'\\''s'");
    }
}

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
pub fn run(event: Event, out: &mut dyn std::io::Write, err: &mut dyn std::io::Write) -> i32 {
    guard(|| dispatch(event, out, err))
}

/// Run a hook body with panics caught and silenced; always 0 (a hook never fails a session or
/// a checkout). The harness adapters run through it too.
pub fn guard(body: impl FnOnce()) -> i32 {
    std::panic::set_hook(Box::new(|_| {}));
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(body));
    0
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
        Event::SessionStart => claude(&mut |i| session_start::run(i, out)),
        Event::PreCompact => claude(&mut |i| pre_compact::run(i, out)),
        Event::PostCompact => claude(&mut post_compact::run),
        Event::UserPromptSubmit => claude(&mut |i| user_prompt::run(i, out)),
        Event::SessionEnd => claude(&mut session_end::run),
        Event::PostCheckout(args) => post_checkout::run(&args, err),
        Event::Supervise(dir) => supervisor::supervise(&dir),
    }
}
