//! Shell words, for the commands we *show* (to the model, in a handoff's notes, in `status`):
//! quoting so a path with spaces or quotes stays one word, and the command that runs this very
//! binary. Nothing here runs a shell.

/// Quote a path for a POSIX shell: single quotes, with `'` written as `'\''`.
pub(crate) fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// A shell word for `s`: itself when it holds only characters no shell treats specially,
/// else single-quoted.
pub(crate) fn word(s: &str) -> String {
    let plain = !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'/' | b'.' | b'_' | b'-' | b'+'));
    if plain { s.to_string() } else { quote(s) }
}

/// `install --on-path`: from here on, this process names itself by the bare command name, for a
/// hooks file a team commits (each clone's PATH finds its own binary).
static ON_PATH: std::sync::OnceLock<()> = std::sync::OnceLock::new();

pub(crate) fn name_on_path() {
    let _ = ON_PATH.set(());
}

/// The command that runs this very binary, as a shell word: its absolute path, else
/// `HANDOFF_STORE_BIN`, else the bare name (and the bare name after `name_on_path`). Every
/// command we hand to the writer or the model uses it, so nothing depends on PATH.
pub(crate) fn self_command() -> String {
    word(&self_program())
}

/// This binary as [`self_command`] names it, unquoted: for a caller that runs it by argument
/// vector (a plugin), never through a shell.
pub(crate) fn self_program() -> String {
    if ON_PATH.get().is_some() {
        return "handoff-store".into();
    }
    std::env::current_exe()
        .ok()
        .filter(|p| p.is_absolute())
        .map(|p| p.to_string_lossy().into_owned())
        .or_else(|| crate::env::settings().store_bin.clone())
        .unwrap_or_else(|| "handoff-store".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_survives_single_quotes() {
        assert_eq!(quote("/a b/it's"), "'/a b/it'\\''s'");
        assert_eq!(word("/usr/bin/handoff-store"), "/usr/bin/handoff-store");
        assert_eq!(word("/a b"), "'/a b'");
    }
}
