//! Reading a document once, capped at 4 MiB + 1 byte, and refusing what is not text.
//! The gate, `--citations` and the store's `write` share these checks; each caller words the
//! refusal its own contract asks for from the returned `InputError`.

use std::io::Read;

use crate::text::line_of_offset;

/// The largest accepted document.
pub(crate) const MAX_BYTES: u64 = 4 * 1024 * 1024;

/// Why a document was refused before any check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum InputError {
    NotFound,
    IsDirectory,
    PermissionDenied,
    /// Any other I/O error, with the OS text (first letter lowercase, no `(os error N)`).
    Unreadable(String),
    TooLarge,
    Empty,
    NulByte {
        line: usize,
    },
    InvalidUtf8 {
        line: usize,
    },
    /// Readable, but not a file this command may use, and why (`--fix` on a hard link).
    Refused(String),
}

impl InputError {
    /// The JSON `input_error.kind`.
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            InputError::NotFound => "not_found",
            InputError::IsDirectory => "is_directory",
            InputError::PermissionDenied => "permission_denied",
            InputError::Unreadable(_) => "unreadable",
            InputError::TooLarge => "too_large",
            InputError::Empty => "empty",
            InputError::NulByte { .. } => "nul_byte",
            InputError::InvalidUtf8 { .. } => "invalid_utf8",
            InputError::Refused(_) => "refused",
        }
    }

    pub(crate) fn line(&self) -> Option<usize> {
        match self {
            InputError::NulByte { line } | InputError::InvalidUtf8 { line } => Some(*line),
            _ => None,
        }
    }

    /// The gate's wording (docs/gate.md §5), without the `verify-handoff: ` prefix.
    pub(crate) fn gate_message(&self, path: &str) -> String {
        match self {
            InputError::NotFound => format!("cannot read {path}: no such file or directory"),
            InputError::IsDirectory => format!("cannot read {path}: is a directory"),
            InputError::PermissionDenied => format!("cannot read {path}: permission denied"),
            InputError::Unreadable(why) => format!("cannot read {path}: {why}"),
            InputError::TooLarge => format!("{path} is too large (over {MAX_BYTES} bytes)"),
            InputError::Empty => format!("{path} is empty"),
            InputError::NulByte { line } => {
                format!("{path} contains a NUL byte on line {line} — not a text file")
            }
            InputError::InvalidUtf8 { line } => format!("{path} is not valid UTF-8 (line {line})"),
            InputError::Refused(why) => format!("{path} was not changed: {why}"),
        }
    }
}

/// Classify an I/O error the way the contracts word it.
pub(crate) fn classify(err: &std::io::Error) -> InputError {
    match err.kind() {
        std::io::ErrorKind::NotFound => InputError::NotFound,
        std::io::ErrorKind::PermissionDenied => InputError::PermissionDenied,
        std::io::ErrorKind::IsADirectory => InputError::IsDirectory,
        _ => InputError::Unreadable(os_text(err)),
    }
}

/// The OS error text with a lowercase first letter and without Rust's `(os error N)` suffix.
pub(crate) fn os_text(err: &std::io::Error) -> String {
    let full = crate::fs::cause(err).to_string();
    let text = match full.find(" (os error ") {
        Some(at) => &full[..at],
        None => &full,
    };
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_lowercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// Read at most `MAX_BYTES + 1` bytes from `reader`; more than `MAX_BYTES` is `TooLarge`.
pub(crate) fn read_capped(reader: impl Read) -> Result<Vec<u8>, InputError> {
    let mut bytes = Vec::new();
    reader
        .take(MAX_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| classify(&e))?;
    if bytes.len() as u64 > MAX_BYTES {
        return Err(InputError::TooLarge);
    }
    Ok(bytes)
}

/// Read a named file (or FIFO) once, refusing directories before opening them for reading.
pub(crate) fn read_path(path: &std::path::Path) -> Result<Vec<u8>, InputError> {
    let meta = crate::fs::metadata(path).map_err(|e| classify(&e))?;
    if meta.is_dir() {
        return Err(InputError::IsDirectory);
    }
    let (file, _) = crate::fs::File::open(path)
        .map_err(|e| classify(&e))?
        .into_parts();
    read_capped(file)
}

/// Validate bytes as a text document and delete every CR. `allow_empty` is false for the gate.
pub(crate) fn to_text(bytes: Vec<u8>, allow_empty: bool) -> Result<String, InputError> {
    if bytes.is_empty() && !allow_empty {
        return Err(InputError::Empty);
    }
    if let Some(at) = memchr::memchr(0, &bytes) {
        return Err(InputError::NulByte {
            line: line_of_offset(&bytes, at),
        });
    }
    let text = String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        InputError::InvalidUtf8 {
            line: line_of_offset(e.as_bytes(), at),
        }
    })?;
    Ok(if text.contains('\r') {
        text.replace('\r', "")
    } else {
        text
    })
}

/// Split CR-free text into lines; a final `\n` does not start an extra empty line.
pub(crate) fn split_lines(text: &str) -> Vec<&str> {
    let body = text.strip_suffix('\n').unwrap_or(text);
    if text.is_empty() {
        Vec::new()
    } else {
        body.split('\n').collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn final_newline_does_not_add_a_line() {
        assert_eq!(split_lines("a\nb\n"), vec!["a", "b"]);
        assert_eq!(split_lines("a\n\n"), vec!["a", ""]);
        assert!(split_lines("").is_empty());
    }

    #[test]
    fn nul_and_invalid_utf8_report_their_line() {
        assert_eq!(
            to_text(b"a\nb\0".to_vec(), false),
            Err(InputError::NulByte { line: 2 })
        );
        assert_eq!(
            to_text(b"a\n\nb\xff".to_vec(), false),
            Err(InputError::InvalidUtf8 { line: 3 })
        );
        assert_eq!(to_text(b"a\r\nb\r".to_vec(), false).as_deref(), Ok("a\nb"));
    }
}
