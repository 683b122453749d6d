//! The process environment, read in one place: the home directory, `~` expansion, and the
//! integer knobs. Everything above asks here, so that `HOME` and `~` mean the same thing to
//! the gate, the store and the hooks.

use std::path::PathBuf;

/// The home directory: `$HOME` if non-empty, else the user database.
pub fn home() -> Option<PathBuf> {
    std::env::home_dir().filter(|h| !h.as_os_str().is_empty())
}

/// A leading tilde, expanded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tilde {
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
pub fn tilde(value: &str) -> Tilde {
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
pub fn expand_home(path: &str) -> PathBuf {
    match tilde(path) {
        Tilde::Expanded(p) => p,
        _ => PathBuf::from(path),
    }
}

/// A non-negative decimal environment integer; anything else (or unset) means `default`.
pub fn u64_var(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .filter(|v| !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
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
