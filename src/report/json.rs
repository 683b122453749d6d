//! The report as JSON (docs/gate.md §2.11, §3.3): serde structs borrowed from the `Report`, so the
//! JSON and the text lines render one computed result.

use serde::Serialize;

use super::*;
use crate::finding::{Finding, GuardDetails, Severity};
use crate::resolve::HeadUse;

#[derive(Serialize)]
pub(super) struct JsonReport<'a> {
    schema_version: u32,
    mode: &'static str,
    input: &'a str,
    exit_code: i32,
    verdict: &'static str,
    input_error: Option<JsonInputError>,
    counts: JsonCounts,
    diagnostics: Vec<JsonDiagnostic<'a>>,
    size: Option<JsonSize>,
    checkout: Option<JsonCheckout<'a>>,
    citations: Option<JsonCitations<'a>>,
}

#[derive(Serialize)]
struct JsonInputError {
    kind: &'static str,
    message: String,
    line: Option<usize>,
}

#[derive(Serialize)]
struct JsonCounts {
    errors: usize,
    fails: usize,
    warns: usize,
}

#[derive(Serialize)]
struct JsonDiagnostic<'a> {
    severity: &'static str,
    code: &'static str,
    message: &'a str,
    line: Option<usize>,
    subject: Option<&'a str>,
    details: Option<&'a GuardDetails>,
}

#[derive(Serialize)]
struct JsonSize {
    bytes: u64,
    tokens: u64,
    turns_tenths: u64,
    turns: String,
    chars_per_token_x100: u64,
    growth_tokens_per_turn: u64,
    target_tokens: u64,
    ceiling_tokens: u64,
    over: Option<&'static str>,
}

#[derive(Serialize)]
struct JsonCheckout<'a> {
    root: &'a str,
    requested: &'a str,
    origin: &'static str,
    header: Option<&'a str>,
    head: &'a str,
    detached: bool,
    declared_branch: Option<&'a str>,
    branch_matches: Option<bool>,
}

#[derive(Serialize)]
struct JsonCitations<'a> {
    prefixes: &'a [String],
    search_roots: &'a [String],
    includes_top_level_files: bool,
    total: usize,
    ok: usize,
    changed: usize,
    missing: usize,
    /// The handoff's `head:` and whether citations were followed from it.
    head: Option<JsonHead<'a>>,
    entries: Vec<JsonEntry<'a>>,
}

#[derive(Serialize)]
struct JsonHead<'a> {
    commit: &'a str,
    held: bool,
}

/// Where a citation's line is now, when it is not where it was cited.
#[derive(Serialize)]
struct JsonNow<'a> {
    path: &'a str,
    line: Option<u64>,
}

#[derive(Serialize)]
struct JsonEntry<'a> {
    line: usize,
    raw: &'a str,
    display: String,
    citation: &'a str,
    lineref: Option<&'a str>,
    fragment: Option<&'a str>,
    kind: &'static str,
    verdict: &'static str,
    reason: &'static str,
    resolved: Option<&'a str>,
    also_resolves_to: &'a [String],
    line_count: Option<u64>,
    found_at_line: Option<u64>,
    followed: &'static str,
    now: Option<JsonNow<'a>>,
    message: &'a str,
}

impl<'a> From<&'a Report> for JsonReport<'a> {
    fn from(r: &'a Report) -> Self {
        let shown = if r.input == "-" {
            "(stdin)"
        } else {
            r.input.as_str()
        };
        JsonReport {
            schema_version: 1,
            mode: match r.mode {
                Mode::Gate => "gate",
                Mode::Citations => "citations",
            },
            input: &r.input,
            exit_code: r.exit_code,
            verdict: match r.exit_code {
                0 => "ok",
                1 => "failed",
                _ => "malformed",
            },
            input_error: r.input_error.as_ref().map(|e| JsonInputError {
                kind: e.kind(),
                message: e.gate_message(shown),
                line: e.line(),
            }),
            counts: JsonCounts {
                errors: r.count(Severity::Error),
                fails: r.count(Severity::Fail),
                warns: r.count(Severity::Warn),
            },
            diagnostics: r
                .ordered_findings()
                .into_iter()
                .map(JsonDiagnostic::from)
                .collect(),
            size: r.size.as_ref().map(|s| JsonSize {
                bytes: s.bytes,
                tokens: s.tokens,
                turns_tenths: s.tenths,
                turns: s.turns(),
                chars_per_token_x100: s.chars_per_token_x100,
                growth_tokens_per_turn: s.growth,
                target_tokens: s.target,
                ceiling_tokens: s.ceiling,
                over: s.over,
            }),
            checkout: r.checkout.as_ref().map(|c| JsonCheckout {
                root: &c.root,
                requested: &c.requested,
                origin: c.origin.as_str(),
                header: c.header.as_deref(),
                head: &c.head,
                detached: c.detached,
                declared_branch: c.declared_branch.as_deref(),
                branch_matches: c.branch_matches,
            }),
            citations: r.citations.as_ref().map(|c| JsonCitations {
                prefixes: &c.layout.prefixes,
                search_roots: &c.layout.search_roots,
                includes_top_level_files: c.layout.includes_top_level_files,
                total: c.entries.len(),
                ok: c.count(Verdict::Ok),
                changed: c.count(Verdict::Changed),
                missing: c.count(Verdict::Missing),
                head: c.head.as_ref().map(|h| match h {
                    HeadUse::Held(commit) => JsonHead { commit, held: true },
                    HeadUse::NotHeld(commit) => JsonHead {
                        commit,
                        held: false,
                    },
                }),
                entries: c.entries.iter().map(JsonEntry::from).collect(),
            }),
        }
    }
}

impl<'a> From<&'a crate::resolve::Entry> for JsonEntry<'a> {
    fn from(e: &'a crate::resolve::Entry) -> Self {
        JsonEntry {
            line: e.line,
            raw: &e.raw,
            display: e.citation.display(),
            citation: &e.citation.citation,
            lineref: e.citation.lineref.as_deref(),
            fragment: e.citation.fragment.as_deref(),
            kind: if e.symbol { "symbol" } else { "path" },
            verdict: e.verdict.as_str(),
            reason: e.reason,
            resolved: e.resolved.as_deref(),
            also_resolves_to: &e.also_resolves_to,
            line_count: e.line_count,
            found_at_line: e.found_at_line,
            followed: e.followed.as_str(),
            now: match (&e.renamed_to, e.found_at_line) {
                (Some(path), line) => Some(JsonNow { path, line }),
                (None, Some(line)) if e.fragment_lines == Some(1) => {
                    e.resolved.as_deref().map(|path| JsonNow {
                        path,
                        line: Some(line),
                    })
                }
                (None, _) => None,
            },
            message: &e.message,
        }
    }
}

impl<'a> From<&'a Finding> for JsonDiagnostic<'a> {
    fn from(f: &'a Finding) -> Self {
        JsonDiagnostic {
            severity: match f.severity {
                Severity::Error => "error",
                Severity::Fail => "fail",
                Severity::Warn => "warn",
            },
            code: f.code.as_str(),
            message: &f.message,
            line: f.line,
            subject: f.subject.as_deref(),
            details: f.details.as_ref(),
        }
    }
}

impl Report {
    /// Findings in text-output order.
    fn ordered_findings(&self) -> Vec<&Finding> {
        let phase = |p: Phase| self.findings.iter().filter(move |f| f.phase == p);
        phase(Phase::Document)
            .chain(phase(Phase::AfterSize))
            .chain(phase(Phase::Checkout).filter(|f| f.severity == Severity::Error))
            .chain(phase(Phase::Checkout).filter(|f| f.severity != Severity::Error))
            .collect()
    }
}
