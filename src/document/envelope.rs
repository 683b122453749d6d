//! Header fields and the `progress:` lifecycle. The gate reads fields from the whole envelope
//! (everything before the first level 2–6 heading); store readers see only lines 1–20 of it.
//! Both rules live here so the field syntax is written once.

/// How far down the store and the hooks look for fields.
pub(crate) const ENVELOPE_LINES: usize = 20;

/// The lifecycle of a handoff document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Progress {
    Writing,
    Complete,
    Consumed,
}

impl Progress {
    pub(crate) fn parse(value: &str) -> Option<Progress> {
        [Progress::Writing, Progress::Complete, Progress::Consumed]
            .into_iter()
            .find(|p| p.as_str() == value)
    }

    /// The value as the `progress:` line spells it.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Progress::Writing => "writing",
            Progress::Complete => "complete",
            Progress::Consumed => "consumed",
        }
    }
}

/// One header field line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    /// 1-based line number.
    pub(crate) line: usize,
    /// The rest of the line after `name:`, trimmed.
    pub(crate) value: String,
}

/// The value of `name:` on this line, if the line starts with it at column 0.
pub(crate) fn field_value<'a>(line: &'a str, name: &str) -> Option<&'a str> {
    line.strip_prefix(name)?.strip_prefix(':')
}

/// The first line of `lines` (0-based offset `first`) that holds field `name`.
pub(crate) fn find_field<S: AsRef<str>>(lines: &[S], first: usize, name: &str) -> Option<Field> {
    lines.iter().enumerate().find_map(|(i, line)| {
        field_value(line.as_ref(), name).map(|v| Field {
            line: first + i + 1,
            value: crate::text::trim(v).to_string(),
        })
    })
}

/// How many of `lines` (each without its `\n`; a trailing `\r` is ignored) form the store's
/// envelope (docs/store.md §4.1): at most 20, ending before the first `## ` line. Every reader and
/// writer of the 20-line header — `read`, the hooks, `write`'s normaliser, the `progress:`
/// rewrite — counts it here.
pub(crate) fn envelope_len<L: AsRef<[u8]>>(lines: impl IntoIterator<Item = L>) -> usize {
    lines
        .into_iter()
        .take(ENVELOPE_LINES)
        .take_while(|l| {
            let l = l.as_ref();
            !l.strip_suffix(b"\r").unwrap_or(l).starts_with(b"## ")
        })
        .count()
}

/// The store's 20-line view (docs/store.md §4.1): lines 1–20, stopping at the first `## ` line.
pub(crate) fn store_envelope(text: &str) -> Vec<&str> {
    let lines = text.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l));
    let n = envelope_len(lines.clone());
    lines.take(n).collect()
}

/// The value bytes of `name:` on a raw line (a trailing `\r` ignored), for byte-exact rewrites.
pub(crate) fn field_value_bytes<'a>(line: &'a [u8], name: &str) -> Option<&'a [u8]> {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    line.strip_prefix(name.as_bytes())?.strip_prefix(b":")
}

/// A field as store readers see it: spaces and tabs trimmed; empty counts as absent.
pub(crate) fn store_field<'a>(envelope: &[&'a str], name: &str) -> Option<&'a str> {
    envelope
        .iter()
        .find_map(|l| field_value(l, name))
        .and_then(|v| {
            let v = v.trim_matches([' ', '\t']);
            (!v.is_empty()).then_some(v)
        })
}

/// The first whitespace-separated word of a `branch:` value.
pub(crate) fn declared_branch(value: &str) -> Option<&str> {
    crate::text::words(value).next()
}
