//! Once per firing: the stamp files under `<home>/.claude/state/handoff-fork/` that make the
//! plugin's and the manual hooks (both installed) deliver once, and PreCompact's per-session
//! dedup lock; decided under an exclusive file lock, cleaned after 30 days.

use std::path::{Path, PathBuf};

pub(crate) use crate::store::state_dir;

/// The dedup lock of a session: `<state>/<safe-sid>.lock`.
pub(crate) fn dedup_lock(safe_sid: &str) -> Option<PathBuf> {
    Some(state_dir()?.join(format!("{safe_sid}.lock")))
}

/// What [`stamp`] found.
pub(crate) enum Stamp {
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
pub(crate) fn stamp(path: &Path, window: Option<std::time::Duration>) -> Stamp {
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
pub(crate) fn claim(safe_sid: &str, what: &str, window: Option<std::time::Duration>) -> bool {
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
pub(crate) fn clean_old(dir: &Path, suffix: &str) {
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
pub(crate) fn claimed(safe_sid: &str, what: &str) -> bool {
    state_dir()
        .map(|d| d.join("claims").join(format!("{safe_sid}.{what}")))
        .is_some_and(|p| p.is_file())
}
