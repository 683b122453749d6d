//! `handoff-store impact` (docs/store.md §9.20): what happened after each logged reset, read
//! from the session's own transcript — tool calls, model tokens and minutes to the first file
//! edit, reads of files the handoff already cited, calls that repeated one of its dead ends or
//! traps (the tripwires' matching) — and, per client, each arm's medians and the difference
//! between arms with a bootstrap interval. The client's transcript format is read by the
//! caller's [`LineReader`] (each client's in its own file); a transcript gone or unreadable is
//! counted as such, never a failure. Transcripts are streamed a line at a time: a line past
//! [`LINE_CAP`] is skipped, so memory stays bounded whatever the file's size.

mod stats;

use std::io::BufRead;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::tripwire::{Call, trips};
use crate::store::Store;
use crate::store::resets::{Arm, Reset};
pub(crate) use stats::{Compared, ENOUGH, Summary};

/// The longest transcript line read; a longer one is skipped (a pasted blob, an image).
pub(crate) const LINE_CAP: usize = 16 * 1024 * 1024;

/// What one transcript line records, as its client's reader says.
#[derive(Debug, Default)]
pub(crate) struct Line {
    /// When (seconds since the epoch), where the line says.
    pub(crate) at: Option<i64>,
    /// A model request's usage: its id where the client repeats the usage on several lines (each
    /// request is counted once), and its tokens, cache included.
    pub(crate) usage: Option<(Option<String>, u64)>,
    /// The tool calls the line records.
    pub(crate) tools: Vec<Tool>,
}

impl Line {
    /// An empty line at the line's `timestamp` (RFC 3339, as every transcript read writes it);
    /// `None` without one.
    pub(crate) fn at_timestamp(line: &serde_json::Value) -> Option<Line> {
        let at = line["timestamp"]
            .as_str()
            .and_then(crate::store::time::parse_iso)?;
        Some(Line {
            at: Some(at),
            ..Line::default()
        })
    }
}

/// One tool call in a transcript.
#[derive(Debug)]
pub(crate) struct Tool {
    /// Its id, where a client writes one call on several lines (counted once).
    pub(crate) id: Option<String>,
    /// A shell command or an edit, as the tripwires read it; `None` for any other tool.
    pub(crate) call: Option<Call>,
    /// What the call names — a read's path, a search's path, a shell command line — where a
    /// cited path is looked for: reading it again is re-deriving what the handoff said.
    pub(crate) names: Option<String>,
}

/// A client's transcript reader: `client` names it, the line is parsed JSON, a relative path in
/// it is read against `checkout` unless the line says its own directory; `None` when the
/// client's transcripts are not read (or the line records nothing).
pub(crate) type LineReader =
    fn(client: &str, line: &serde_json::Value, checkout: &str) -> Option<Line>;

/// A client whose transcript is a store, not a file of JSON lines: `each` is given, in order,
/// the records the store at `path` holds for `session` from `from_ms` (milliseconds since the
/// epoch) on, each as the JSON its [`LineReader`] reads, until it returns `false`. `None`: the
/// client's transcript is a file of lines.
pub(crate) type RowReader = fn(
    client: &str,
    path: &Path,
    session: &str,
    from_ms: i64,
    each: &mut dyn FnMut(serde_json::Value) -> bool,
) -> Option<std::io::Result<()>>;

/// Which resets to measure.
pub(crate) struct Request {
    /// The repository's main worktree (`-C DIR`), or every repository (`--all`).
    pub(crate) main: Option<String>,
    /// Only resets of the last this many days.
    pub(crate) since_days: u64,
    /// The bootstrap's seed (the same seed, the same interval).
    pub(crate) seed: u64,
    pub(crate) reader: LineReader,
    pub(crate) rows: RowReader,
}

/// What a reset's transcript gave.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Transcript {
    /// Read to its end.
    Read,
    /// The client gave no transcript path.
    NotGiven,
    /// The file is gone.
    Missing,
    /// It could not be read, or its client's format is not read.
    Unreadable,
}

/// One reset and what followed it.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Measured {
    pub(crate) at: i64,
    pub(crate) client: String,
    pub(crate) session: Option<String>,
    pub(crate) source: String,
    pub(crate) arm: Arm,
    pub(crate) transcript: Transcript,
    /// Up to the first file edit: tool calls before it, tokens through the request that made it,
    /// minutes from the reset. `None` when no edit followed.
    pub(crate) to_first_edit: Option<ToEdit>,
    /// Tool calls after the reset in all (up to the session's next logged reset).
    pub(crate) tool_calls: u64,
    /// Calls that named a file the handoff cited (a read, a search, a shell command).
    pub(crate) cited_reads: u64,
    /// Calls that repeated a dead end or trap of the handoff.
    pub(crate) repeats: u64,
    /// At a compaction whose summary the client handed over: what it kept of the handoff.
    pub(crate) audit: Option<crate::store::resets::Audit>,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub(crate) struct ToEdit {
    pub(crate) tool_calls: u64,
    pub(crate) tokens: u64,
    pub(crate) minutes: f64,
}

/// The report: every reset measured, then per client and arm a summary, and the comparisons.
#[derive(Debug, Serialize)]
pub(crate) struct Impact {
    pub(crate) resets: Vec<Measured>,
    pub(crate) summaries: Vec<Summary>,
    pub(crate) compared: Vec<Compared>,
}

/// Measure every reset the request selects.
pub(crate) fn impact(store: &Store, request: &Request) -> Impact {
    let since = crate::store::now() - (request.since_days.min(36_500) as i64) * 86_400;
    let resets: Vec<Reset> = crate::store::resets::read(store, since)
        .into_iter()
        .filter(|r| request.main.as_deref().is_none_or(|m| r.main == m))
        .collect();
    let measured: Vec<Measured> = resets
        .iter()
        .enumerate()
        .map(|(i, r)| {
            // The span ends at the same session's next reset in the same transcript (a store
            // holds every session's).
            let until = resets[i + 1..]
                .iter()
                .find(|n| {
                    n.transcript.is_some()
                        && n.transcript == r.transcript
                        && (n.session.is_none() || r.session.is_none() || n.session == r.session)
                })
                .map(|n| n.at);
            measure(r, until, request)
        })
        .collect();
    let (summaries, compared) = stats::report(&measured, request.seed);
    Impact {
        resets: measured,
        summaries,
        compared,
    }
}

/// What followed reset `r` in its transcript, up to `until`.
fn measure(r: &Reset, until: Option<i64>, request: &Request) -> Measured {
    let mut m = Measured {
        at: r.at,
        client: r.client.clone(),
        session: r.session.clone(),
        source: r.source.clone(),
        arm: r.arm,
        transcript: Transcript::NotGiven,
        to_first_edit: None,
        tool_calls: 0,
        cited_reads: 0,
        repeats: 0,
        audit: r.audit.clone(),
    };
    let Some(path) = r.transcript.as_deref().map(PathBuf::from) else {
        return m;
    };
    m.transcript = match follow(r, &path, until, request, &mut m) {
        Ok(()) => Transcript::Read,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Transcript::Missing,
        Err(_) => Transcript::Unreadable,
    };
    m
}

/// Stream the transcript at `path`, adding what follows the reset to `m`.
fn follow(
    r: &Reset,
    path: &Path,
    until: Option<i64>,
    request: &Request,
    m: &mut Measured,
) -> std::io::Result<()> {
    let mut span = Span::default();
    let mut understood = false;
    // One record: `false` once the span has ended.
    let mut take = |value: serde_json::Value| {
        let Some(line) = (request.reader)(&r.client, &value, &r.checkout) else {
            return true;
        };
        understood = true;
        let Some(at) = line.at else { return true };
        if at < r.at {
            return true;
        }
        if until.is_some_and(|u| at >= u) {
            return false;
        }
        span.take(r, at, line, m);
        true
    };
    let from_ms = r.at.saturating_mul(1000);
    match r
        .session
        .as_deref()
        .and_then(|s| (request.rows)(&r.client, path, s, from_ms, &mut take))
    {
        Some(rows) => rows?,
        None => each_line(path, &mut take)?,
    }
    if !understood && m.tool_calls == 0 {
        return Err(std::io::Error::other("no line of its client's format"));
    }
    Ok(())
}

/// Each JSON line of the file at `path`, to `take` until it returns `false`; a line past
/// [`LINE_CAP`], or not JSON, is skipped.
fn each_line(path: &Path, take: &mut dyn FnMut(serde_json::Value) -> bool) -> std::io::Result<()> {
    let file = crate::fs::File::open(path)?;
    if !file.metadata()?.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    each_json_line(std::io::BufReader::new(file), take).map(|_| ())
}

/// Each JSON line `lines` gives, to `take` until it returns `false` (then `Ok(false)`); a line
/// past [`LINE_CAP`], or not JSON, is skipped.
pub(crate) fn each_json_line(
    mut lines: impl BufRead,
    take: &mut dyn FnMut(serde_json::Value) -> bool,
) -> std::io::Result<bool> {
    let mut buf = Vec::new();
    loop {
        buf.clear();
        let n = std::io::Read::take(&mut lines, LINE_CAP as u64 + 1).read_until(b'\n', &mut buf)?;
        if n == 0 {
            return Ok(true);
        }
        if buf.len() > LINE_CAP {
            // Skip the rest of an overlong line.
            while !buf.ends_with(b"\n") {
                buf.clear();
                if std::io::Read::take(&mut lines, LINE_CAP as u64).read_until(b'\n', &mut buf)?
                    == 0
                {
                    break;
                }
            }
            continue;
        }
        if let Ok(value) = serde_json::from_slice::<serde_json::Value>(&buf)
            && !take(value)
        {
            return Ok(false);
        }
    }
}

/// What a reset's span has counted so far: tool calls and tokens before the first edit, and the
/// requests and calls already counted (a client may write one on several lines).
#[derive(Default)]
struct Span {
    tools: u64,
    tokens: u64,
    seen_usage: std::collections::HashSet<String>,
    seen_tools: std::collections::HashSet<String>,
}

impl Span {
    /// Count `line` (at `at`) of reset `r`'s span into `m`.
    fn take(&mut self, r: &Reset, at: i64, line: Line, m: &mut Measured) {
        if let Some((id, n)) = line.usage
            && id.is_none_or(|id| self.seen_usage.insert(id))
            && m.to_first_edit.is_none()
        {
            self.tokens = self.tokens.saturating_add(n);
        }
        for tool in line.tools {
            if tool.id.is_some_and(|id| !self.seen_tools.insert(id)) {
                continue;
            }
            m.tool_calls += 1;
            let edit = matches!(tool.call, Some(Call::Edit { .. } | Call::Patch(_)));
            if let Some(call) = &tool.call
                && !trips(&r.wires, Path::new(&r.checkout), call).is_empty()
            {
                m.repeats += 1;
            }
            if !edit
                && let Some(names) = &tool.names
                && r.cited.iter().any(|c| names_path(names, c))
            {
                m.cited_reads += 1;
            }
            if m.to_first_edit.is_none() {
                if edit {
                    m.to_first_edit = Some(ToEdit {
                        tool_calls: self.tools,
                        tokens: self.tokens,
                        minutes: (at - r.at) as f64 / 60.0,
                    });
                } else {
                    self.tools += 1;
                }
            }
        }
    }
}

/// Whether `text` names the repository path `cited`: the path itself, or as the end of a longer
/// one (`/abs/checkout/src/a.rs`), never inside another name (`src/a.rs.bak`).
fn names_path(text: &str, cited: &str) -> bool {
    let cited = cited.trim_end_matches('/');
    if cited.is_empty() {
        return false;
    }
    text.match_indices(cited).any(|(i, _)| {
        let before = text[..i].chars().next_back();
        let after = text[i + cited.len()..].chars().next();
        before.is_none_or(|c| c == '/' || !is_name_char(c))
            && after.is_none_or(|c| c == '/' || !is_name_char(c))
    })
}

fn is_name_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '-' | '.')
}

#[cfg(test)]
mod tests {
    use super::names_path;

    #[test]
    fn a_cited_path_is_named_whole() {
        assert!(names_path("/w/repo/src/a.rs", "src/a.rs"));
        assert!(names_path("sed -n 1,20p src/a.rs", "src/a.rs"));
        assert!(names_path(
            "grep -rn x vendor/cache/y.json",
            "vendor/cache/"
        ));
        assert!(!names_path("cat src/a.rs.bak", "src/a.rs"));
        assert!(!names_path("cat xsrc/a.rs", "src/a.rs"));
    }
}
