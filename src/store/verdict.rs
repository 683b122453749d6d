//! The verdict procedure shared by `read` and `hook session-start` (docs/store.md §7): which
//! checkout to gate against, the in-process gate (or the `VERIFY_HANDOFF_GATE` test seam, run
//! with an argument vector and no shell), the status line, and the reader-facing report.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde::Serialize;

use super::HandoffInfo;
use super::drift::checkout_path;
use crate::git;
use crate::report::Report;

/// How long a gate may take.
const GATE_BUDGET: Duration = Duration::from_secs(30);

/// What the gate said of a stored handoff.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum GateStatus {
    Ok,
    Failed,
    Malformed,
    /// An external gate exited with another code.
    Unexpected,
    NotRun,
}

/// The outcome of gating one stored handoff (the resolver's per-citation verdict is
/// `resolve::Verdict`).
#[derive(Debug, Clone, Serialize)]
pub(crate) struct GateVerdict {
    pub(crate) status: GateStatus,
    pub(crate) exit: Option<i32>,
    /// The exact status line.
    pub(crate) line: String,
    pub(crate) reason: Option<String>,
    pub(crate) report: Option<serde_json::Value>,
    /// The full report text, WARN lines included.
    pub(crate) report_text: Option<String>,
    /// The report as a reader sees it (WARN lines removed and counted).
    #[serde(skip)]
    pub(crate) reader_report: Vec<String>,
    /// The document as the in-process gate parsed it (CR removed, credential lines blanked),
    /// for a reader that shows an excerpt.
    #[serde(skip)]
    pub(crate) document: Option<std::sync::Arc<crate::document::Document>>,
    /// What a model can act on, in brief (the injection's verdict). In JSON, its moves: the
    /// failing citations whose text is on one other line now (`fix`).
    #[serde(rename = "moves", serialize_with = "moves_of")]
    pub(crate) brief: Brief,
}

/// The verdict in brief: how many citations were checked and against which checkout, and one
/// unpadded line per citation that does not hold (its cited fragment and where the line went)
/// or per contract violation.
#[derive(Debug, Clone, Default)]
pub(crate) struct Brief {
    /// Citations checked; `None` when unknown (an external gate).
    pub(crate) checked: Option<usize>,
    /// One line per failing citation or contract error.
    pub(crate) failing: Vec<String>,
    /// Prose citations absent from `## Pointers`.
    pub(crate) uncovered: usize,
    /// The checkout the citations were checked against.
    pub(crate) against: Option<String>,
    /// Failing citations whose text is now on one other line: what `fix` would rewrite.
    pub(crate) moves: Vec<crate::report::fix::Move>,
}

impl Brief {
    /// From the in-process gate's report.
    fn of(report: &Report) -> Brief {
        use crate::finding::Severity;
        use crate::resolve::Verdict;
        let mut failing: Vec<String> = report
            .findings
            .iter()
            .filter(|f| f.severity == Severity::Error)
            .filter_map(|f| f.lines().into_iter().next())
            .map(|l| squeeze(&l))
            .collect();
        let entries = report.citations.as_ref().map(|c| c.entries.as_slice());
        for e in entries.unwrap_or_default() {
            match e.verdict {
                Verdict::Ok => {}
                Verdict::Changed => failing.push(format!("CHANGED {}", e.message)),
                Verdict::Missing => {
                    let fragment = e
                        .citation
                        .fragment
                        .as_deref()
                        .map(|f| format!(" | {f}"))
                        .unwrap_or_default();
                    failing.push(format!(
                        "MISSING {}{fragment}: {}",
                        e.citation.display(),
                        e.message
                    ));
                }
            }
        }
        Brief {
            checked: entries.map(<[_]>::len),
            failing,
            uncovered: report
                .findings
                .iter()
                .filter(|f| f.code == crate::finding::Code::UncoveredEvidence)
                .count(),
            against: report.checkout.as_ref().map(|c| c.root.clone()),
            moves: crate::report::fix::moves(report).moves,
        }
    }

    /// From an external gate's text: its MISSING, CHANGED and ERROR lines, unpadded.
    fn of_text(lines: &[String], against: Option<&Path>) -> Brief {
        Brief {
            checked: None,
            failing: lines
                .iter()
                .filter(|l| {
                    ["MISSING", "CHANGED", "ERROR"]
                        .iter()
                        .any(|w| l.starts_with(w))
                })
                .map(|l| squeeze(l))
                .collect(),
            uncovered: 0,
            against: against.map(|p| p.to_string_lossy().into_owned()),
            moves: Vec::new(),
        }
    }
}

/// A brief's moves, as JSON.
fn moves_of<S: serde::Serializer>(brief: &Brief, s: S) -> Result<S::Ok, S::Error> {
    serde::Serialize::serialize(&brief.moves, s)
}

/// `line` with its runs of spaces (the report's column padding) made one.
fn squeeze(line: &str) -> String {
    line.split(' ')
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

impl GateVerdict {
    pub(crate) fn not_run(reason: String) -> GateVerdict {
        GateVerdict {
            status: GateStatus::NotRun,
            exit: None,
            line: format!(
                "GATE: NOT RUN — {reason}. Every pointer below is UNVERIFIED; none of them has been checked against the tree."
            ),
            reason: Some(reason),
            report: None,
            report_text: None,
            reader_report: Vec::new(),
            document: None,
            brief: Brief::default(),
        }
    }

    /// The verdict of the in-process gate: the reader's lines come from the report itself
    /// (its WARN findings left out), never from re-reading the rendered text.
    fn from_report(report: &Report) -> GateVerdict {
        let lines: Vec<String> = report.text_lines().into_iter().map(|(_, l)| l).collect();
        let (reader, omitted) = report.reader_lines();
        let mut verdict = GateVerdict::build(
            report.exit_code,
            &lines,
            reader,
            omitted,
            Some(report.json()),
        );
        verdict.brief = Brief::of(report);
        verdict.name_the_checkout();
        verdict
    }

    /// A verdict always names the checkout it was gated against (a guess may come from
    /// another checkout of the project).
    fn name_the_checkout(&mut self) {
        if self.status == GateStatus::Ok
            && let Some(c) = &self.brief.against
        {
            self.line = format!("GATE: OK — every citation resolved against {c}.");
        }
    }

    /// The verdict of an external gate, which only gives text: its `WARN` lines are dropped.
    fn from_text(code: i32, lines: Vec<String>, against: Option<&Path>) -> GateVerdict {
        let brief = Brief::of_text(&lines, against);
        let reader: Vec<String> = lines
            .iter()
            .filter(|l| !l.starts_with("WARN"))
            .cloned()
            .collect();
        let omitted = lines.len() - reader.len();
        let mut verdict = GateVerdict::build(code, &lines, reader, omitted, None);
        verdict.brief = brief;
        verdict.name_the_checkout();
        verdict
    }

    fn build(
        code: i32,
        lines: &[String],
        mut reader: Vec<String>,
        omitted: usize,
        report: Option<serde_json::Value>,
    ) -> GateVerdict {
        let (status, line) = match code {
            0 => (GateStatus::Ok, "GATE: OK — every citation resolved against this checkout.".to_string()),
            1 => (
                GateStatus::Failed,
                "GATE: FAILED (exit 1) — at least one citation is MISSING or CHANGED, or a claim cites a path:line absent from ## Pointers.".to_string(),
            ),
            2 => (
                GateStatus::Malformed,
                "GATE: MALFORMED (exit 2) — the document violates the format contract, so its citations were NOT checked at all. Treat every pointer below as unverified.".to_string(),
            ),
            n => (GateStatus::Unexpected, format!("GATE: unexpected exit status {n}; treat every pointer below as unverified.")),
        };
        if omitted > 0 {
            reader.push(String::new());
            reader.push(format!(
                "({omitted} authoring-side WARN line(s) omitted: they address the handoff's author, not its reader.)"
            ));
        }
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        GateVerdict {
            status,
            exit: Some(code),
            line,
            reason: None,
            report,
            report_text: Some(text),
            reader_report: reader,
            document: None,
            brief: Brief::default(),
        }
    }

    /// The exit code a reader command returns for this verdict.
    pub(crate) fn reader_exit(&self) -> crate::error::Exit {
        use crate::error::Exit;
        match self.status {
            GateStatus::Ok => Exit::Ok,
            GateStatus::Malformed => Exit::Malformed,
            _ => Exit::Negative,
        }
    }
}

/// Gate the stored handoff at `file`, whose bytes the caller has already read (docs/store.md §7).
pub(crate) fn gate_stored(
    file: &Path,
    bytes: &[u8],
    info: &HandoffInfo,
    target_checkout: Option<&Path>,
) -> GateVerdict {
    let checkout: Option<PathBuf> = if info.checkout.is_some() {
        checkout_path(info).or_else(|| info.checkout.as_ref().map(PathBuf::from))
    } else {
        target_checkout.map(Path::to_path_buf)
    };
    if let Some(c) = &checkout
        && git::open_work_tree(c, false).is_err()
    {
        return GateVerdict::not_run(format!(
            "the handoff's checkout {} is not a git checkout on this machine",
            c.display()
        ));
    }
    if let Some(program) = crate::env::settings().external_gate.clone() {
        return external(Path::new(&program), file, checkout.as_deref());
    }
    let (tx, rx) = mpsc::channel();
    let file_arg = file.to_string_lossy().into_owned();
    let checkout_arg = checkout.map(|c| c.to_string_lossy().into_owned());
    let bytes = bytes.to_vec();
    std::thread::spawn(move || {
        let parsed =
            crate::report::run_gate::gate_bytes_parsed(&file_arg, bytes, checkout_arg.as_deref());
        let _ = tx.send(parsed);
    });
    match rx.recv_timeout(GATE_BUDGET) {
        Ok((report, doc)) => {
            let mut verdict = GateVerdict::from_report(&report);
            verdict.document = doc.map(std::sync::Arc::new);
            verdict
        }
        Err(_) => GateVerdict::not_run("the gate did not finish within 30 s".into()),
    }
}

/// Run the external gate `[program, file, checkout]` with stdout and stderr on one pipe.
fn external(program: &Path, file: &Path, checkout: Option<&Path>) -> GateVerdict {
    let cannot = || {
        GateVerdict::not_run(format!(
            "VERIFY_HANDOFF_GATE names {}, which could not be started",
            program.display()
        ))
    };
    let Ok((mut reader, writer)) = std::io::pipe() else {
        return cannot();
    };
    let Ok(writer2) = writer.try_clone() else {
        return cannot();
    };
    let mut cmd = Command::new(program);
    cmd.arg(file)
        .stdin(Stdio::null())
        .stdout(writer)
        .stderr(writer2);
    if let Some(c) = checkout {
        cmd.arg(c);
    }
    let Ok(mut child) = cmd.spawn() else {
        return cannot();
    };
    // The parent's copies of the write end are gone with `cmd`, so the reader sees EOF.
    drop(cmd);
    let collector = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = reader.read_to_end(&mut buf);
        buf
    });
    let status = match wait_timeout::ChildExt::wait_timeout(&mut child, GATE_BUDGET) {
        Ok(Some(status)) => Some(status),
        _ => {
            let _ = child.kill();
            let _ = child.wait();
            None
        }
    };
    let output = collector.join().unwrap_or_default();
    match status {
        None => GateVerdict::not_run("the gate did not finish within 30 s".into()),
        Some(status) => {
            let text = String::from_utf8_lossy(&output);
            let lines = text.lines().map(str::to_string).collect();
            GateVerdict::from_text(status.code().unwrap_or(-1), lines, checkout)
        }
    }
}
