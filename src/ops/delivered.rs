//! The last delivery per harness and repository (`<state>/deliveries/<harness>-<hash8>.json`,
//! the slot names' hash of the main worktree), so `status` in a repository answers "did the
//! handoff reach my last session here?" — and never shows another project's: when, which
//! session and source, how much was injected, whether it was cut to fit, whether the handoff
//! was marked consumed. Written after the injection was printed; a failure to record never
//! fails the hook.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// One injection that was printed.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Delivered {
    /// When, ISO 8601 (UTC).
    pub(crate) at: String,
    pub(crate) harness: String,
    pub(crate) session: Option<String>,
    /// The source as the injection names it (`clear`, `compact`, `startup, handled as clear`…).
    pub(crate) source: String,
    /// The hook event that printed it.
    pub(crate) event: String,
    /// The injected text's length in characters.
    pub(crate) chars: usize,
    /// Whether the handoff was cut to fit the client's limit.
    pub(crate) cut: bool,
    /// Whether the delivered handoff was marked consumed.
    pub(crate) consumed: bool,
    /// Whether it had been read before (a reminder, a re-delivery): nothing was left unread.
    #[serde(default)]
    pub(crate) read_before: bool,
    /// The handoff shown, if one was.
    pub(crate) handoff: Option<String>,
    /// The main worktree of the repository it was delivered in.
    pub(crate) main: String,
}

fn path(harness: &str, main: &str) -> Option<PathBuf> {
    let safe: String = harness
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-')
        .collect();
    let repo = &crate::text::hex_md5(main.as_bytes())[..8];
    Some(
        crate::store::state_dir()?
            .join("deliveries")
            .join(format!("{safe}-{repo}.json")),
    )
}

/// Record `d` as its harness's last delivery in its repository.
pub(crate) fn record(d: &Delivered) {
    let Some(path) = path(&d.harness, &d.main) else {
        return;
    };
    let Some(dir) = path.parent() else {
        return;
    };
    if crate::store::slot::create_private_dir(dir).is_err() {
        return;
    }
    if let Ok(bytes) = serde_json::to_vec(d) {
        let _ = crate::durable::write(&path, &bytes, None);
    }
}

/// The last delivery recorded for `harness` in the repository of main worktree `main`.
pub(crate) fn last(harness: &str, main: &str) -> Option<Delivered> {
    let bytes = crate::input::read_path(&path(harness, main)?).ok()?;
    serde_json::from_slice::<Delivered>(&bytes)
        .ok()
        .filter(|d| d.main == main)
}
