//! The gate's and the resolver's result, and its two renderings. Everything is computed first
//! into a `Report`; `text_lines` and `json` only read it, so text and JSON cannot disagree and
//! nothing is printed half-way through a check.

use serde::Serialize;

use crate::gate::size::Size;
use crate::gate::{Origin, Severity};
use crate::input::InputError;
use crate::resolve::{Resolution, Verdict};

/// Which command ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Gate,
    Citations,
}

/// Where a finding is printed relative to the size and checkout lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Document,
    AfterSize,
    Checkout,
}

/// The `not_a_citation_list` details.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GuardDetails {
    pub candidates: usize,
    pub with_whitespace: usize,
    pub examples: Vec<String>,
}

/// One diagnostic.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub severity: Severity,
    pub code: &'static str,
    pub message: String,
    pub line: Option<usize>,
    pub subject: Option<String>,
    pub details: Option<GuardDetails>,
    pub phase: Phase,
}

impl Finding {
    pub fn new(
        severity: Severity,
        code: &'static str,
        message: String,
        line: Option<usize>,
        subject: Option<String>,
    ) -> Finding {
        Finding {
            severity,
            code,
            message,
            line,
            subject,
            details: None,
            phase: Phase::Document,
        }
    }

    pub fn in_phase(mut self, phase: Phase) -> Finding {
        self.phase = phase;
        self
    }

    /// Text lines: the 9-column prefix plus the message, or the guard's block.
    fn lines(&self) -> Vec<String> {
        if let Some(details) = &self.details {
            return crate::resolve::GuardRefusal {
                details: details.clone(),
            }
            .block();
        }
        let prefix = match self.severity {
            Severity::Error => "ERROR    ",
            Severity::Fail => "FAIL     ",
            Severity::Warn => "WARN     ",
        };
        vec![format!("{prefix}{}", self.message)]
    }
}

/// The located checkout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckoutInfo {
    pub root: String,
    pub requested: String,
    pub origin: Origin,
    /// The header path an argument overrode.
    pub overriding: Option<String>,
    pub header: Option<String>,
    pub head: String,
    pub detached: bool,
    pub declared_branch: Option<String>,
    pub branch_matches: Option<bool>,
}

impl CheckoutInfo {
    /// The compat checkout line.
    pub fn line(&self) -> String {
        let origin = match (self.origin, &self.overriding) {
            (Origin::ArgumentOverriding, Some(h)) => {
                format!("from argument, OVERRIDING checkout: {h}")
            }
            (Origin::Argument | Origin::ArgumentOverriding, _) => "from argument".into(),
            (Origin::Header, _) => "from checkout: header".into(),
            (Origin::Cwd, _) => "from $PWD — the handoff declares no checkout:".into(),
            (Origin::CwdHeaderNotAbsolute, _) => {
                "from $PWD — the handoff's checkout: is not an absolute path".into()
            }
        };
        format!("checkout {} (HEAD {}) [{origin}]", self.root, self.head)
    }
}

/// Which stream a text line goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    Out,
    Err,
}

/// A whole run's result.
#[derive(Debug, Clone)]
pub struct Report {
    pub mode: Mode,
    pub input: String,
    pub input_error: Option<InputError>,
    pub findings: Vec<Finding>,
    pub size: Option<Size>,
    pub checkout: Option<CheckoutInfo>,
    pub citations: Option<Resolution>,
    pub exit_code: i32,
}

impl Report {
    pub fn new(mode: Mode, input: &str) -> Report {
        Report {
            mode,
            input: input.to_string(),
            input_error: None,
            findings: Vec::new(),
            size: None,
            checkout: None,
            citations: None,
            exit_code: 0,
        }
    }

    /// A run that ended on its input.
    pub fn from_input_error(mode: Mode, input: &str, err: InputError) -> Report {
        let mut r = Report::new(mode, input);
        r.input_error = Some(err);
        r.exit_code = 2;
        r
    }

    pub fn count(&self, s: Severity) -> usize {
        self.findings.iter().filter(|f| f.severity == s).count()
    }

    fn uncovered(&self) -> usize {
        self.findings
            .iter()
            .filter(|f| f.code == "uncovered_evidence")
            .count()
    }

    /// Decide the exit code from what was computed.
    pub fn finish(&mut self) {
        let unresolved = self
            .citations
            .as_ref()
            .is_some_and(|c| c.count(Verdict::Missing) + c.count(Verdict::Changed) > 0);
        self.exit_code = if self.input_error.is_some() || self.count(Severity::Error) > 0 {
            2
        } else if unresolved || (self.mode == Mode::Gate && self.uncovered() > 0) {
            1
        } else {
            0
        };
    }

    /// The text rendering, line by line, each with its stream.
    pub fn text_lines(&self) -> Vec<(Stream, String)> {
        let mut out = Vec::new();
        if let Some(err) = &self.input_error {
            let shown = if self.input == "-" {
                "(stdin)"
            } else {
                &self.input
            };
            out.push((
                Stream::Err,
                format!("verify-handoff: {}", err.gate_message(shown)),
            ));
            return out;
        }
        let emit = |out: &mut Vec<(Stream, String)>, f: &Finding| {
            let stream = if f.severity == Severity::Error {
                Stream::Err
            } else {
                Stream::Out
            };
            out.extend(f.lines().into_iter().map(|l| (stream, l)));
        };
        for f in self.findings.iter().filter(|f| f.phase == Phase::Document) {
            emit(&mut out, f);
        }
        if let Some(size) = &self.size {
            out.push((Stream::Out, size.line()));
        }
        for f in self.findings.iter().filter(|f| f.phase == Phase::AfterSize) {
            emit(&mut out, f);
        }
        let checkout_phase = || self.findings.iter().filter(|f| f.phase == Phase::Checkout);
        for f in checkout_phase().filter(|f| f.severity == Severity::Error) {
            emit(&mut out, f);
        }
        if self.mode == Mode::Gate
            && let Some(c) = &self.checkout
        {
            out.push((Stream::Out, c.line()));
        }
        for f in checkout_phase().filter(|f| f.severity != Severity::Error) {
            emit(&mut out, f);
        }
        match self.mode {
            Mode::Gate => {
                out.push((Stream::Out, String::new()));
                let errors = self.count(Severity::Error);
                if errors > 0 {
                    out.push((
                        Stream::Out,
                        format!("{errors} contract violation(s); citations were not checked."),
                    ));
                    return out;
                }
                match &self.citations {
                    Some(c) if !c.entries.is_empty() => out.extend(resolver_lines(c)),
                    _ => out.push((
                        Stream::Out,
                        "no citations to check (Pointers is empty)".into(),
                    )),
                }
                let f = self.uncovered();
                if f > 0 {
                    out.push((
                        Stream::Out,
                        format!("{f} citation(s) in the prose are not in Pointers, so they were never checked."),
                    ));
                }
            }
            Mode::Citations => {
                if let Some(c) = &self.citations {
                    out.extend(resolver_lines(c));
                }
            }
        }
        out
    }

    /// The JSON rendering (gate.md §4).
    pub fn json(&self) -> serde_json::Value {
        serde_json::to_value(JsonReport::from(self)).unwrap_or(serde_json::Value::Null)
    }
}

/// The resolver's lines (gate.md §3.7–§3.9), always on stdout.
fn resolver_lines(c: &Resolution) -> Vec<(Stream, String)> {
    let mut out = Vec::new();
    for e in &c.entries {
        let display = e.citation.display();
        let pad = 58usize.saturating_sub(display.chars().count());
        out.push((
            Stream::Out,
            format!(
                "{}{display}{} → {}",
                e.verdict.label(),
                " ".repeat(pad),
                e.message
            ),
        ));
        for also in &e.also_resolves_to {
            out.push((
                Stream::Out,
                format!("{}also resolves to {also}", " ".repeat(70)),
            ));
        }
    }
    out.push((Stream::Out, String::new()));
    let n = c.entries.len();
    let (m, ch) = (c.count(Verdict::Missing), c.count(Verdict::Changed));
    if c.symbol_missing() {
        let mut items: Vec<String> = c.layout.search_roots.clone();
        if c.layout.includes_top_level_files {
            items.push("(top-level files)".into());
        }
        let shown = if items.is_empty() {
            "(none)".to_string()
        } else {
            items.join(" ")
        };
        out.push((Stream::Out, format!("symbol search roots: {shown}")));
    }
    if m > 0 {
        out.push((Stream::Out, format!("{m} of {n} citations do not resolve.")));
    }
    if ch > 0 {
        out.push((
            Stream::Out,
            format!("{ch} of {n} citations resolve but no longer say what they were cited for."),
        ));
    }
    if m + ch == 0 {
        out.push((Stream::Out, format!("All {n} citations resolve.")));
    }
    out
}

#[derive(Serialize)]
struct JsonReport<'a> {
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
    entries: Vec<JsonEntry<'a>>,
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
                entries: c
                    .entries
                    .iter()
                    .map(|e| JsonEntry {
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
                        message: &e.message,
                    })
                    .collect(),
            }),
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
            code: f.code,
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
