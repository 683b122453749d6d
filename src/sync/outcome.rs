//! What the last background push (`handoff.autoPush`) ended with, kept in
//! `<store>/.background-push` so a failure is never silent: nobody reads a detached process's
//! output, so `status` shows this instead. One line, replaced atomically by each background push.

use std::time::Duration;

use serde::Serialize;

use crate::store::{Store, iso, now, slot};

const FILE: &str = ".background-push";
/// The lock the one background push at work holds (a slot lock's name).
pub(crate) const RUNNING: &str = ".background-push";
/// The note a background push that found another at work leaves for it.
const ASK: &str = ".background-push-again";

/// Ask the background push at work to push once more when it is done.
pub(crate) fn ask_again(store: &Store) {
    let _ = crate::durable::write(&store.dir.join(ASK), b"", None);
}

/// Whether a note left by [`ask_again`] is waiting.
pub(crate) fn asked(store: &Store) -> bool {
    crate::fs::symlink_metadata(store.dir.join(ASK)).is_ok()
}

/// Take the note left by [`ask_again`]; whether there was one.
pub(crate) fn clear_ask(store: &Store) -> bool {
    slot::remove(&store.dir.join(ASK)).is_ok()
}

/// Whether a background push is at work now (its lock is held).
pub(crate) fn in_flight(store: &Store) -> bool {
    slot::lock(store, RUNNING, std::time::Duration::ZERO).is_err()
}

/// The last background push.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Outcome {
    /// When it ended (RFC 3339, UTC).
    pub(crate) at: String,
    /// Its exit code (0 pushed or nothing new, 3 refused or failed, 4 nothing to push).
    pub(crate) exit: i32,
    /// The checkout it pushed for.
    pub(crate) checkout: String,
    /// What it said: the error, or `ok`.
    pub(crate) message: String,
}

/// Record how a background push for `checkout` ended. Best effort.
pub(crate) fn record(store: &Store, checkout: &str, exit: i32, message: &str) {
    let one_line = |s: &str| s.replace(['\t', '\n', '\r'], " ").trim().to_string();
    let line = format!(
        "{}\t{exit}\t{}\t{}\n",
        iso(now()),
        one_line(checkout),
        one_line(message)
    );
    let _ = crate::durable::write(&store.dir.join(FILE), line.as_bytes(), None);
}

/// The last background push, if one was recorded.
pub(crate) fn last(store: &Store) -> Option<Outcome> {
    let text = crate::fs::read_to_string(store.dir.join(FILE)).ok()?;
    let mut f = text.trim_end_matches('\n').splitn(4, '\t');
    Some(Outcome {
        at: f.next()?.to_string(),
        exit: f.next()?.parse().ok()?,
        checkout: f.next()?.to_string(),
        message: f.next()?.to_string(),
    })
}

/// Run `round` as the one background push at work, or leave a note for it: `None` when another
/// is at work (it pushes again when it sees the note, so the newest version still goes out).
/// At most one is alive: two started by quick successive writes would race on the remote's
/// ref, and a hanging remote would pile them up.
pub(crate) fn single_flight<T>(store: &Store, mut round: impl FnMut() -> T) -> Option<T> {
    let mut rounds = 0;
    loop {
        let Ok(lock) = slot::lock(store, RUNNING, Duration::ZERO) else {
            ask_again(store);
            return None;
        };
        clear_ask(store);
        let mut result = round();
        // Writes that came meanwhile (a few rounds at most: each pushes the whole chain).
        while rounds < 3 && clear_ask(store) {
            rounds += 1;
            result = round();
        }
        drop(lock);
        // A write that asked after the last look, while the lock was still held, is not lost:
        // once the lock is gone, a note still there means one more round (or, when another
        // push took the lock meanwhile, that one's).
        rounds += 1;
        if rounds > 4 || !asked(store) {
            return Some(result);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_outcome_is_read_back_on_one_line() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = Store {
            dir: dir.path().to_path_buf(),
        };
        assert_eq!(last(&store), None);
        record(
            &store,
            "/w/a",
            3,
            "the remote refused\trefs/handoffs/main\n",
        );
        record(&store, "/w/b", 0, "ok");
        let got = last(&store).expect("recorded");
        assert_eq!(
            (got.exit, got.checkout.as_str(), got.message.as_str()),
            (0, "/w/b", "ok")
        );
        record(
            &store,
            "/w/a",
            3,
            "the remote refused\trefs/handoffs/main\n",
        );
        let got = last(&store).expect("recorded");
        assert_eq!(got.message, "the remote refused refs/handoffs/main");
    }
}
