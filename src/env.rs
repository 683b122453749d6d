//! The process environment, read in one place: the home directory, `~` expansion, and the
//! integer knobs. Everything above asks here, so that `HOME` and `~` mean the same thing to
//! the gate, the store and the hooks.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The home directory: `$HOME` if non-empty, else the user database (as `directories` finds
/// it, so the store's location and `~` agree).
pub(crate) fn home() -> Option<PathBuf> {
    directories::BaseDirs::new().map(|b| b.home_dir().to_path_buf())
}

/// The MCP server's binary, beside `handoff-store`; it also reads a client's transcript store
/// for `impact` (`--transcript-rows`).
pub(crate) const MCP_BINARY: &str = "handoff-store-mcp";

/// A program of ours installed beside this one (`handoff-store-mcp` beside `handoff-store`).
pub(crate) fn beside_me(name: &str) -> Option<PathBuf> {
    std::env::current_exe()
        .ok()
        .and_then(|me| Some(me.parent()?.join(name)))
        .filter(|p| p.is_file())
}

/// A leading tilde, expanded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Tilde {
    /// No tilde: the value as written.
    None,
    /// `~` or `~/…` under the home directory.
    Expanded(PathBuf),
    /// `~` or `~/…`, but no home directory is known.
    HomeUnknown,
    /// `~user` and the like, which we never expand.
    Other,
}

/// Expand `~` and `~/…` in `value`.
pub(crate) fn tilde(value: &str) -> Tilde {
    if value == "~" || value.starts_with("~/") {
        return match home() {
            Some(h) => Tilde::Expanded(h.join(value[1..].trim_start_matches('/'))),
            None => Tilde::HomeUnknown,
        };
    }
    if value.starts_with('~') {
        Tilde::Other
    } else {
        Tilde::None
    }
}

/// A path for reading: `~` and `~/…` expanded when the home is known, anything else as is.
pub(crate) fn expand_home(path: &str) -> PathBuf {
    match tilde(path) {
        Tilde::Expanded(p) => p,
        _ => PathBuf::from(path),
    }
}

/// A non-negative decimal environment integer; anything else (or unset) means `default`.
pub(crate) fn u64_var(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .filter(|v| !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The first `name` in a `PATH` directory that `accept` takes (a file, an executable).
pub(crate) fn on_path(name: impl AsRef<Path>, accept: impl Fn(&Path) -> bool) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join(&name))
        .find(|p| accept(p))
}

/// Whether `p` is a regular file someone may execute (what a program lookup accepts).
pub(crate) fn is_executable(p: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        crate::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    }
    #[cfg(not(unix))]
    {
        crate::fs::metadata(p).is_ok_and(|m| m.is_file())
    }
}

/// A non-empty environment value.
pub(crate) fn non_empty(name: &str) -> Option<OsString> {
    std::env::var_os(name).filter(|v| !v.is_empty())
}

fn non_empty_string(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// The knobs for scripts and tests (docs/configuration.md), read from the environment once per
/// process, at first use. What a user changes is a git config key (`crate::settings`); the
/// gate's own knobs (thresholds, prefixes) stay with the gate.
#[derive(Debug, Clone)]
pub(crate) struct Settings {
    /// `CONTEXT_ECONOMY_CHECKOUT`: the target when no directory is given.
    pub(crate) checkout: Option<String>,
    /// `CTX_FORK_TIMEOUT_SECONDS`: the background writer's time limit.
    pub(crate) fork_timeout: u64,
    /// `CTX_FORK_LIVENESS_WINDOW_SECONDS`: a writer transcript this fresh means alive.
    pub(crate) liveness_window: u64,
    /// `CTX_FORK_DEDUP_WINDOW_SECONDS`: PreCompact fires once per session in this window.
    pub(crate) dedup_window: u64,
    /// `HANDOFF_CLAIM_WINDOW_SECONDS`: a second SessionStart for one session stays silent.
    pub(crate) claim_window: u64,
    /// `HANDOFF_WRITER`: the background writer program.
    pub(crate) writer: Option<OsString>,
    /// `CTX_FORK_AUTHOR_MODEL`.
    pub(crate) author_model: Option<String>,
    /// `HANDOFF_WRITER_CHILD`: set for the writer; the agent hooks stay inert.
    pub(crate) writer_child: bool,
    /// `HANDOFF_WRITE_SESSION`: the writer's run id.
    pub(crate) write_session: Option<String>,
    /// `LAST_CLEAR_STATE_DIR`.
    pub(crate) last_clear_dir: Option<OsString>,
    /// `VERIFY_HANDOFF_GATE`: an external gate program.
    pub(crate) external_gate: Option<OsString>,
    /// `HANDOFF_STORE_BIN`.
    pub(crate) store_bin: Option<String>,
}

impl Settings {
    fn from_env() -> Settings {
        Settings {
            checkout: non_empty_string("CONTEXT_ECONOMY_CHECKOUT"),
            fork_timeout: u64_var("CTX_FORK_TIMEOUT_SECONDS", 600),
            liveness_window: u64_var("CTX_FORK_LIVENESS_WINDOW_SECONDS", 90),
            dedup_window: u64_var("CTX_FORK_DEDUP_WINDOW_SECONDS", 90),
            claim_window: u64_var("HANDOFF_CLAIM_WINDOW_SECONDS", 30),
            writer: non_empty("HANDOFF_WRITER"),
            author_model: non_empty_string("CTX_FORK_AUTHOR_MODEL"),
            writer_child: non_empty("HANDOFF_WRITER_CHILD").is_some(),
            write_session: non_empty_string("HANDOFF_WRITE_SESSION"),
            last_clear_dir: non_empty("LAST_CLEAR_STATE_DIR"),
            external_gate: non_empty("VERIFY_HANDOFF_GATE"),
            store_bin: non_empty_string("HANDOFF_STORE_BIN"),
        }
    }
}

/// The settings of this process.
pub(crate) fn settings() -> &'static Settings {
    static SETTINGS: OnceLock<Settings> = OnceLock::new();
    SETTINGS.get_or_init(Settings::from_env)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tildes_other_than_the_users_own_are_left_alone() {
        assert_eq!(tilde("/abs"), Tilde::None);
        assert_eq!(tilde("~bob/x"), Tilde::Other);
        assert_eq!(expand_home("rel/x"), PathBuf::from("rel/x"));
    }
}
