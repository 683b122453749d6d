//! A handoff promised to a session. After a compaction whose background writer is still at
//! work, SessionStart delivers what the slot holds now and promises the fresh handoff; where the
//! client runs our prompt hook, the next prompt after it landed carries it — exactly once — so a
//! working session is never told to wait (docs/hooks.md §2.6 C). The promise is one small file,
//! `<state>/promised/<safe-sid>`, holding the run's id and the key of the handoff delivered
//! beside the promise (so a fresh one that says the same is not sent again): a prompt without
//! one costs a `stat`.

use std::path::PathBuf;

use super::claims::state_dir;
use super::input::safe_session_id;
use crate::store::Store;
use crate::store::naming::is_safe_id;
use crate::store::runs::{self, Run};

/// Where session `safe_sid`'s promise is kept.
pub(crate) fn path(safe_sid: &str) -> Option<PathBuf> {
    Some(state_dir()?.join("promised").join(safe_sid))
}

/// The key a promise records of the handoff delivered beside it: its text as a chain compares
/// texts (`progress:`, checkout and line numbers aside), hashed.
pub(crate) fn key_of(document: &[u8]) -> String {
    crate::text::hex_md5(crate::store::chain::text_key(document).as_bytes())
}

/// The key of the handoff delivered beside the promise at `p`, when one was.
pub(crate) fn delivered_key(p: &std::path::Path) -> Option<String> {
    let text = crate::fs::read_to_string(p).ok()?;
    text.lines()
        .nth(1)
        .map(str::to_string)
        .filter(|k| !k.is_empty())
}

/// Promise session `raw_sid` the handoff `run` is writing, beside the handoff whose key is
/// `delivered` (best effort).
pub(crate) fn make(raw_sid: &str, run: &Run, delivered: Option<&str>) {
    let (Some(p), Some(id)) = (
        path(&safe_session_id(raw_sid)),
        run.dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned()),
    ) else {
        return;
    };
    if let Some(dir) = p.parent()
        && crate::store::slot::create_private_dir(dir).is_ok()
    {
        let text = format!("{id}\n{}\n", delivered.unwrap_or_default());
        let _ = crate::durable::write(&p, text.as_bytes(), None);
    }
}

/// The run a promise at `p` names, when it is still there; a promise naming nothing is removed.
pub(crate) fn run_of(p: &std::path::Path, store: Option<&Store>) -> Option<Run> {
    let text = crate::fs::read_to_string(p).unwrap_or_default();
    let id = text.lines().next().unwrap_or_default().trim();
    let run = store
        .filter(|_| is_safe_id(id))
        .and_then(|s| Run::load(&runs::run_dir(s, id)));
    if run.is_none() {
        let _ = crate::fs::remove_file(p);
    }
    run
}

/// A delivery of the handoff at `shown` to session `raw_sid` settles the session's promise for
/// that slot once the promised write has ended: the session was just given the freshest handoff
/// there is, so the next prompt has nothing to add (a second compaction after the write landed).
pub(crate) fn settle(raw_sid: &str, shown: &std::path::Path) {
    let Some(p) = path(&safe_session_id(raw_sid)).filter(|p| p.is_file()) else {
        return;
    };
    let store = super::input::store();
    let Some(run) = run_of(&p, store.as_ref()) else {
        return;
    };
    let slot = store.map(|s| s.path_of(&run.job.slot));
    if slot.as_deref() == Some(shown)
        && run.state(crate::store::now()) != crate::store::runs::RunState::Writing
    {
        let _ = crate::fs::remove_file(&p);
    }
}
