//! The gate's and the resolver's result, and its two renderings. Everything is computed first
//! into a `Report`; `text_lines` and `json` only read it, so text and JSON cannot disagree and
//! nothing is printed half-way through a check.

use crate::finding::{Finding, Origin, Phase, Severity};
use crate::gate::size::Size;
use crate::input::InputError;
use crate::resolve::{Resolution, Verdict};

/// Which command ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    Gate,
    Citations,
}

/// The located checkout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CheckoutInfo {
    pub(crate) root: String,
    pub(crate) requested: String,
    pub(crate) origin: Origin,
    /// The header path an argument overrode.
    pub(crate) overriding: Option<String>,
    pub(crate) header: Option<String>,
    pub(crate) head: String,
    pub(crate) detached: bool,
    pub(crate) declared_branch: Option<String>,
    pub(crate) branch_matches: Option<bool>,
}

impl CheckoutInfo {
    /// The compat checkout line.
    pub(crate) fn line(&self) -> String {
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
pub(crate) enum Stream {
    Out,
    Err,
}

/// A whole run's result.
#[derive(Debug, Clone)]
pub struct Report {
    pub(crate) mode: Mode,
    pub(crate) input: String,
    pub(crate) input_error: Option<InputError>,
    pub(crate) findings: Vec<Finding>,
    pub(crate) size: Option<Size>,
    pub(crate) checkout: Option<CheckoutInfo>,
    pub(crate) citations: Option<Resolution>,
    pub exit_code: i32,
}

impl Report {
    pub(crate) fn new(mode: Mode, input: &str) -> Report {
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
    pub(crate) fn from_input_error(mode: Mode, input: &str, err: InputError) -> Report {
        let mut r = Report::new(mode, input);
        r.input_error = Some(err);
        r.exit_code = 2;
        r
    }

    pub(crate) fn count(&self, s: Severity) -> usize {
        self.findings.iter().filter(|f| f.severity == s).count()
    }

    fn uncovered(&self) -> usize {
        self.findings
            .iter()
            .filter(|f| f.code == crate::finding::Code::UncoveredEvidence)
            .count()
    }

    /// Decide the exit code from what was computed.
    pub(crate) fn finish(&mut self) {
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
    pub(crate) fn text_lines(&self) -> Vec<(Stream, String)> {
        self.lines_where(|_| true)
    }

    /// The report as `write` shows it: without the size line, and the checkout without the
    /// `[from argument]` no person gave (the store names the checkout to the gate itself); the
    /// gate's own report keeps both (its compatible lines).
    pub(crate) fn store_lines(&self) -> Vec<(Stream, String)> {
        let size = self.size.as_ref().map(Size::line);
        let checkout = self.checkout.as_ref();
        self.text_lines()
            .into_iter()
            .filter(|(_, l)| Some(l) != size.as_ref())
            .map(|(stream, l)| match checkout {
                Some(c) if c.origin == Origin::Argument && l == c.line() => {
                    (stream, format!("checkout {} (HEAD {})", c.root, c.head))
                }
                _ => (stream, l),
            })
            .collect()
    }

    /// The report as its reader sees it (docs/store.md §7 step 6): every line except the WARN
    /// findings, which address the handoff's author; and how many lines were left out.
    pub(crate) fn reader_lines(&self) -> (Vec<String>, usize) {
        let all = self.text_lines().len();
        let kept: Vec<String> = self
            .lines_where(|f| f.severity != Severity::Warn)
            .into_iter()
            .map(|(_, l)| l)
            .collect();
        let omitted = all - kept.len();
        (kept, omitted)
    }

    /// The text lines, with only the findings `keep` accepts.
    fn lines_where(&self, keep: impl Fn(&Finding) -> bool) -> Vec<(Stream, String)> {
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
            if !keep(f) {
                return;
            }
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
                        format!("{errors} contract violation(s); citations were not checked. The format: `handoff-store new` prints a handoff to fill in; docs/guide.md explains it."),
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

    /// The JSON rendering (docs/gate.md §4).
    pub(crate) fn json(&self) -> serde_json::Value {
        serde_json::to_value(JsonReport::from(self)).unwrap_or(serde_json::Value::Null)
    }
}

/// The resolver's lines (docs/gate.md §3.7–§3.9), always on stdout.
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
    if let Some(crate::resolve::HeadUse::NotHeld(head)) = &c.head {
        out.push((
            Stream::Out,
            format!("head: {head} is not a commit of this repository (fetch it to follow moved lines); citations were checked by their text alone."),
        ));
    }
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

pub(crate) mod fix;
mod json;
pub mod run_gate;

use json::JsonReport;
