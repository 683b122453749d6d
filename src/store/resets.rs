//! The log of resets (docs/store.md §9.20): one record per context reset a hook answered — the
//! handoff delivered, held out (`handoff.holdout`), or none given (and why) — with what
//! `impact` needs to read the session's own transcript after it and compare: the client, the
//! session, the transcript's path as the client gave it, the handoff's cited paths and the
//! triggers of its dead ends and traps. Nothing of the transcript is copied. One file per day
//! under `<store>/.resets/`, a line appended under a lock per record (an audit, rare, rewrites
//! its day whole: temp, fsync, rename); days older than 90 go at the next record.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::Store;
use super::slot;
use super::tripwire::Wire;

const DIR: &str = ".resets";
/// How long a day's file is kept.
const KEEP_DAYS: i64 = 90;
/// The most of one day's file read (a record is under a few kilobytes).
const DAY_CAP: u64 = 16 * 1024 * 1024;

/// What a reset was given.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Arm {
    /// The handoff, as every reset gets it.
    Delivered,
    /// Drawn for the holdout: one line that a handoff exists, not the handoff.
    Holdout,
    /// Nothing (no handoff, a repository not in use, a setting off): `why` says.
    None,
}

impl Arm {
    pub(crate) fn word(self) -> &'static str {
        match self {
            Arm::Delivered => "delivered",
            Arm::Holdout => "holdout",
            Arm::None => "none",
        }
    }
}

/// One reset.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Reset {
    /// When (seconds since the epoch).
    pub(crate) at: i64,
    pub(crate) client: String,
    pub(crate) session: Option<String>,
    /// The session's transcript, where the client said where it is.
    pub(crate) transcript: Option<String>,
    /// `clear`, `compact` or `startup`.
    pub(crate) source: String,
    pub(crate) arm: Arm,
    /// Why nothing was given (arm `none`).
    #[serde(default)]
    pub(crate) why: Option<String>,
    /// Characters injected.
    pub(crate) chars: usize,
    /// The gate's verdict of the handoff shown or held out (`OK`, `FAILED`, …).
    #[serde(default)]
    pub(crate) verdict: Option<String>,
    /// The handoff's file, where there was one.
    #[serde(default)]
    pub(crate) handoff: Option<String>,
    /// The checkout the reset happened in, and its repository's main worktree.
    pub(crate) checkout: String,
    pub(crate) main: String,
    /// The paths the handoff's Pointers block cites (repository-relative).
    #[serde(default)]
    pub(crate) cited: Vec<String>,
    /// Its dead ends' and traps' triggers, as the tripwires read them.
    #[serde(default)]
    pub(crate) wires: Vec<Wire>,
    /// At a compaction whose client hands over its summary: what the summary kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) audit: Option<Audit>,
}

/// Kept and total of one kind of item.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Count {
    pub(crate) kept: usize,
    pub(crate) of: usize,
}

/// What a compaction's summary kept of the handoff delivered at it (`ops::audit`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Audit {
    pub(crate) decisions: Count,
    pub(crate) dead_ends: Count,
    pub(crate) traps: Count,
    pub(crate) next: Count,
    pub(crate) paths: Count,
    /// The items it dropped (their first line, shortened), dead ends and traps first.
    pub(crate) dropped: Vec<String>,
}

impl Audit {
    /// For the person: `the compaction kept 7 of 9 decisions, 2 of 3 traps, …`.
    pub(crate) fn sentence(&self) -> String {
        let parts: Vec<String> = [
            (self.decisions, "decisions"),
            (self.dead_ends, "dead ends"),
            (self.traps, "traps"),
            (self.next, "next steps"),
            (self.paths, "cited paths"),
        ]
        .iter()
        .filter(|(c, _)| c.of > 0)
        .map(|(c, what)| format!("{} of {} {what}", c.kept, c.of))
        .collect();
        if parts.is_empty() {
            return "the handoff has no item to look for in the compaction's summary".into();
        }
        format!("the compaction's summary kept {}", parts.join(", "))
    }
}

fn day_of(at: i64) -> String {
    chrono::DateTime::from_timestamp(at, 0)
        .map(|t| t.format("%Y-%m-%d").to_string())
        .unwrap_or_else(|| "1970-01-01".into())
}

fn dir(store: &Store) -> PathBuf {
    store.dir.join(DIR)
}

/// Append `reset` to its day's file and drop the days past 90. Best effort: a hook is never
/// failed (or held up past the lock's 2 s) by its bookkeeping. One line appended under the lock,
/// without a sync: the record costs a hook a few dozen microseconds, where a rewrite with its
/// syncs cost about a millisecond (BENCHMARKS.md); a crash leaves at most a line cut short,
/// which readers skip and the next record starts after.
pub(crate) fn record(store: &Store, reset: &Reset) {
    let Ok(_lock) = slot::lock(store, "resets", std::time::Duration::from_secs(2)) else {
        return;
    };
    let dir = dir(store);
    if slot::create_private_dir(&dir).is_err() {
        return;
    }
    let Ok(line) = serde_json::to_string(reset) else {
        return;
    };
    let _ = append(&dir.join(format!("{}.jsonl", day_of(reset.at))), &line);
    let oldest = day_of(reset.at - KEEP_DAYS * 86_400);
    for (day, path) in days(&dir) {
        if day < oldest {
            let _ = crate::fs::remove_file(&path);
        }
    }
}

/// Append `line` to `file` (0600, never through a link), on a line of its own.
fn append(file: &Path, line: &str) -> std::io::Result<()> {
    use crate::fs::OpenOptionsExt;
    use std::io::{Read, Seek, Write};
    let mut f = crate::fs::OpenOptions::new()
        .create(true)
        .read(true)
        .append(true)
        .mode(0o600)
        .custom_flags(nix::fcntl::OFlag::O_NOFOLLOW.bits())
        .open(file)?;
    let meta = f.metadata()?;
    if !meta.is_file() || meta.len() > DAY_CAP {
        return Ok(());
    }
    let mut text = String::new();
    if meta.len() > 0 {
        let mut last = [0u8; 1];
        f.seek(std::io::SeekFrom::Start(meta.len() - 1))?;
        f.read_exact(&mut last)?;
        if last[0] != b'\n' {
            text.push('\n');
        }
    }
    text.push_str(line);
    text.push('\n');
    f.write_all(text.as_bytes())
}

/// Add `audit` to session `session`'s newest compaction in the log (today's or yesterday's
/// file), when it has none yet: the summary is known after the compaction's delivery. Whether
/// one was found.
pub(crate) fn annotate(store: &Store, session: &str, audit: &Audit) -> bool {
    let Ok(_lock) = slot::lock(store, "resets", std::time::Duration::from_secs(2)) else {
        return false;
    };
    for (_, path) in days(&dir(store)).into_iter().rev().take(2) {
        let Some(bytes) = crate::fs::read_regular(&path, DAY_CAP) else {
            continue;
        };
        let text = String::from_utf8_lossy(&bytes);
        let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
        let found = lines.iter().rposition(|l| {
            serde_json::from_str::<Reset>(l).is_ok_and(|r| {
                r.session.as_deref() == Some(session) && r.source == "compact" && r.audit.is_none()
            })
        });
        let Some(i) = found else { continue };
        let Ok(mut reset) = serde_json::from_str::<Reset>(&lines[i]) else {
            continue;
        };
        reset.audit = Some(audit.clone());
        let Ok(line) = serde_json::to_string(&reset) else {
            return false;
        };
        lines[i] = line;
        let out: String = lines.iter().map(|l| format!("{l}\n")).collect();
        return slot::replace(&path, out.as_bytes(), None, None).is_ok();
    }
    false
}

/// The day files in `dir`, by day.
fn days(dir: &Path) -> Vec<(String, PathBuf)> {
    let mut found: Vec<(String, PathBuf)> = crate::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_str()?.to_string();
            let day = name.strip_suffix(".jsonl")?;
            (day.len() == 10 && day.bytes().all(|b| b.is_ascii_digit() || b == b'-'))
                .then(|| (day.to_string(), e.path()))
        })
        .collect();
    found.sort();
    found
}

/// Every reset recorded at or after `since`, oldest first; lines that do not parse (one cut
/// short by a crash) are skipped. A FIFO or a link planted at a day's place reads as empty.
pub(crate) fn read(store: &Store, since: i64) -> Vec<Reset> {
    let first = day_of(since);
    let mut out = Vec::new();
    for (day, path) in days(&dir(store)) {
        if day < first {
            continue;
        }
        let Some(bytes) = crate::fs::read_regular(&path, DAY_CAP) else {
            continue;
        };
        out.extend(
            String::from_utf8_lossy(&bytes)
                .lines()
                .filter_map(|l| serde_json::from_str::<Reset>(l).ok())
                .filter(|r| r.at >= since),
        );
    }
    out.sort_by_key(|r| r.at);
    out
}

/// The paths `doc`'s Pointers block cites, repository-relative, each once.
pub(crate) fn cited_paths(doc: &crate::document::Document) -> Vec<String> {
    let Some(block) = doc.citation_block() else {
        return Vec::new();
    };
    let mut paths: Vec<String> = Vec::new();
    for line in crate::citation::parse_lines(block.iter().map(|b| (b.line, b.text.as_str()))) {
        let path = line.citation.citation.trim_start_matches("./").to_string();
        if !paths.contains(&path) && paths.len() < 200 {
            paths.push(path);
        }
    }
    paths
}
