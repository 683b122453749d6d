//! The `progress:` rewrite (docs/store.md §9.6): every other byte kept, the mtime preserved.

use crate::fs::OpenOptions;
use std::io::Read;
use std::path::Path;
use std::time::SystemTime;

use crate::document::envelope::{ENVELOPE_LINES, envelope_len, field_value_bytes};
use crate::error::Error;

use super::atomic::{mode_of, replace};

/// The envelope lines of raw bytes: (start, end-without-newline, has-newline) per line.
fn envelope_lines(bytes: &[u8]) -> Vec<(usize, usize, bool)> {
    let mut out = Vec::new();
    let mut start = 0;
    while start < bytes.len() && out.len() < ENVELOPE_LINES {
        let end = memchr::memchr(b'\n', &bytes[start..]).map_or(bytes.len(), |i| start + i);
        out.push((start, end, end < bytes.len()));
        start = end + 1;
    }
    let n = envelope_len(out.iter().map(|&(s, e, _)| &bytes[s..e]));
    out.truncate(n);
    out
}

fn field_of<'a>(bytes: &'a [u8], start: usize, end: usize, name: &str) -> Option<&'a [u8]> {
    field_value_bytes(&bytes[start..end], name)
}

/// The `progress:` value a store reader sees (trimmed; empty counts as absent).
pub fn progress_of(bytes: &[u8]) -> Option<String> {
    envelope_lines(bytes).into_iter().find_map(|(s, e, _)| {
        let v = field_of(bytes, s, e, "progress")?;
        let v = String::from_utf8_lossy(v)
            .trim_matches([' ', '\t'])
            .to_string();
        (!v.is_empty()).then_some(v)
    })
}

/// The outcome of a `progress:` rewrite.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rewrite {
    /// Neither `progress:` nor `status:` in the envelope.
    NoField,
    /// Already the requested value.
    Same,
    Changed {
        old: Option<String>,
        bytes: Vec<u8>,
    },
}

/// Rewrite every envelope `progress:` line to `value`, or insert one after the first
/// `status:` line (docs/store.md §9.6). Every other byte is kept.
pub fn rewrite_progress(bytes: &[u8], value: &str) -> Rewrite {
    let lines = envelope_lines(bytes);
    let progress: Vec<&(usize, usize, bool)> = lines
        .iter()
        .filter(|(s, e, _)| field_of(bytes, *s, *e, "progress").is_some())
        .collect();
    let new_line = format!("progress: {value}");
    if let Some(first) = progress.first() {
        let old = field_of(bytes, first.0, first.1, "progress").map(|v| {
            String::from_utf8_lossy(v)
                .trim_matches([' ', '\t'])
                .to_string()
        });
        if old.as_deref() == Some(value) && progress.len() == 1 {
            return Rewrite::Same;
        }
        let mut out = Vec::with_capacity(bytes.len() + 16);
        let mut at = 0;
        for (s, e, _) in &progress {
            out.extend_from_slice(&bytes[at..*s]);
            out.extend_from_slice(new_line.as_bytes());
            if bytes[*s..*e].ends_with(b"\r") {
                out.push(b'\r');
            }
            at = *e;
        }
        out.extend_from_slice(&bytes[at..]);
        if out == bytes {
            return Rewrite::Same;
        }
        return Rewrite::Changed {
            old: old.filter(|o| !o.is_empty()),
            bytes: out,
        };
    }
    let Some((index, &(s, e, has_newline))) = lines
        .iter()
        .enumerate()
        .find(|(_, (s, e, _))| field_of(bytes, *s, *e, "status").is_some())
    else {
        return Rewrite::NoField;
    };
    // A line inserted after the 20th would fall outside the envelope, where no reader looks
    // (found by the property tests): then there is no place for the field.
    if index + 1 >= ENVELOPE_LINES {
        return Rewrite::NoField;
    }
    let crlf = bytes[s..e].ends_with(b"\r");
    let mut out = Vec::with_capacity(bytes.len() + 24);
    out.extend_from_slice(&bytes[..e]);
    if has_newline {
        out.push(b'\n');
        out.extend_from_slice(new_line.as_bytes());
        if crlf {
            out.push(b'\r');
        }
        out.push(b'\n');
        out.extend_from_slice(&bytes[e + 1..]);
    } else {
        // The status line ended the file without a newline: give it one, and the inserted
        // line ends without one.
        out.push(b'\n');
        out.extend_from_slice(new_line.as_bytes());
    }
    Rewrite::Changed {
        old: None,
        bytes: out,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rewritten(input: &str, value: &str) -> Rewrite {
        rewrite_progress(input.as_bytes(), value)
    }

    #[test]
    fn replaces_every_envelope_progress_line_keeping_cr() {
        let r = rewritten(
            "# H\r\nprogress: complete\r\nx\tprogress: no\r\nprogress: x\n## N\nprogress: body\n",
            "consumed",
        );
        let Rewrite::Changed { old, bytes } = r else {
            panic!("not changed")
        };
        assert_eq!(old.as_deref(), Some("complete"));
        assert_eq!(
            String::from_utf8_lossy(&bytes),
            "# H\r\nprogress: consumed\r\nx\tprogress: no\r\nprogress: consumed\n## N\nprogress: body\n"
        );
    }

    #[test]
    fn inserts_after_the_first_status_line() {
        let Rewrite::Changed { bytes, .. } = rewritten("# H\nstatus: a\nstatus: b\n", "consumed")
        else {
            panic!()
        };
        assert_eq!(bytes, b"# H\nstatus: a\nprogress: consumed\nstatus: b\n");
        let Rewrite::Changed { bytes, .. } = rewritten("# H\r\nstatus: a", "consumed") else {
            panic!()
        };
        assert_eq!(bytes, b"# H\r\nstatus: a\nprogress: consumed");
        let Rewrite::Changed { bytes, .. } = rewritten("# H\r\nstatus: a\r\nz", "consumed") else {
            panic!()
        };
        assert_eq!(bytes, b"# H\r\nstatus: a\r\nprogress: consumed\r\nz");
    }

    #[test]
    fn same_value_and_missing_fields() {
        assert_eq!(
            rewritten("# H\nprogress: consumed\n", "consumed"),
            Rewrite::Same
        );
        assert_eq!(
            rewritten("# H\n## x\nstatus: a\n", "consumed"),
            Rewrite::NoField
        );
        let late = format!("# H\n{}status: a\n", "x\n".repeat(20));
        assert_eq!(rewritten(&late, "consumed"), Rewrite::NoField);
        // Regression (property tests): a `status:` on line 20 has no room after it; the
        // inserted `progress:` on line 21 was invisible to every reader.
        let last = format!("# H\n{}status: a\n", "x\n".repeat(18));
        assert_eq!(rewritten(&last, "consumed"), Rewrite::NoField);
        let room = format!("# H\n{}status: a\n", "x\n".repeat(17));
        assert!(matches!(
            rewritten(&room, "consumed"),
            Rewrite::Changed { .. }
        ));
    }
}

/// What a `progress:` flip did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Flip {
    Changed {
        old: Option<String>,
    },
    Same,
    NoField,
    /// The file is no longer the version the caller saw.
    Replaced,
}

/// Rewrite `path`'s `progress:` to `value` atomically, keeping its mtime and permission bits.
/// With `expect`, the file's (mtime, size) must still be those; otherwise nothing is written.
/// The caller holds the slot lock when the file is a slot.
pub(in crate::store) fn flip_progress(
    path: &Path,
    value: &str,
    expect: Option<(Option<SystemTime>, u64)>,
) -> Result<Flip, Error> {
    let meta = crate::fs::symlink_metadata(path).map_err(|e| Error::io(path, e))?;
    if !meta.file_type().is_file() {
        return Err(Error::NotRegular(path.to_path_buf()));
    }
    if meta.len() > crate::input::MAX_BYTES {
        return Err(Error::TooLarge(path.to_path_buf()));
    }
    if let Some((mtime, size)) = expect
        && (meta.modified().ok() != mtime || meta.len() != size)
    {
        return Ok(Flip::Replaced);
    }
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .map_err(|e| Error::io(path, e))?;
    let mut bytes = Vec::new();
    (&mut file)
        .take(crate::input::MAX_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io(path, e))?;
    if bytes.len() as u64 > crate::input::MAX_BYTES {
        return Err(Error::TooLarge(path.to_path_buf()));
    }
    match rewrite_progress(&bytes, value) {
        Rewrite::NoField => Ok(Flip::NoField),
        Rewrite::Same => Ok(Flip::Same),
        Rewrite::Changed { old, bytes } => {
            let mtime = meta.modified().map_err(|e| Error::io(path, e))?;
            replace(path, &bytes, Some(mtime), mode_of(&meta))?;
            Ok(Flip::Changed { old })
        }
    }
}
