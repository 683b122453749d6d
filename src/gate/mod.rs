//! The gate (gate.md §2): pure checks over the parsed `Document`, then the checkout, then the
//! resolver when the document is well-formed. `run` computes a `Report`; rendering is
//! `report.rs`'s job, so text and JSON come from the same result.

pub mod contract;
pub mod coverage;
pub mod secrets;
pub mod size;

use std::path::{Path, PathBuf};

use crate::citation;
use crate::document::Document;
use crate::git::{self, WorkTreeError};
use crate::report::{CheckoutInfo, Finding, Mode, Phase, Report};
use crate::resolve::{self, Resolver};

/// Severity of a finding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    Error,
    Fail,
    Warn,
}

/// Where the checkout came from (gate.md §2.9, JSON `origin`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    Argument,
    ArgumentOverriding,
    Header,
    Cwd,
    CwdHeaderNotAbsolute,
}

impl Origin {
    pub fn as_str(self) -> &'static str {
        match self {
            Origin::Argument => "argument",
            Origin::ArgumentOverriding => "argument_overriding",
            Origin::Header => "header",
            Origin::Cwd => "cwd",
            Origin::CwdHeaderNotAbsolute => "cwd_header_not_absolute",
        }
    }
}

/// The `checkout:` header after expansion.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HeaderCheckout {
    Absent,
    Empty,
    Usable(PathBuf),
    NotAbsolute,
    HomeUnknown,
}

/// Expand a `checkout:` value: `~` and `~/` to home, a relative value against the directory
/// holding the handoff file.
pub fn expand_checkout(value: &str, file: &Path) -> HeaderCheckout {
    if value.is_empty() {
        return HeaderCheckout::Empty;
    }
    if value == "~" || value.starts_with("~/") {
        return match std::env::home_dir() {
            Some(home) => HeaderCheckout::Usable(home.join(value[1..].trim_start_matches('/'))),
            None => HeaderCheckout::HomeUnknown,
        };
    }
    if value.starts_with('~') {
        return HeaderCheckout::NotAbsolute;
    }
    let path = Path::new(value);
    if path.is_absolute() {
        return HeaderCheckout::Usable(path.to_path_buf());
    }
    let dir = file
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    HeaderCheckout::Usable(dir.join(path))
}

fn display_path(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

/// The message of a `checkout_*` error for path text `p`.
pub fn checkout_error(err: WorkTreeError, p: &str, line: Option<usize>) -> Finding {
    let (code, text) = match err {
        WorkTreeError::NotFound => ("checkout_not_found", format!("checkout {p} does not exist")),
        WorkTreeError::NotDirectory => (
            "checkout_not_directory",
            format!("checkout {p} is not a directory"),
        ),
        WorkTreeError::NotGit => (
            "checkout_not_git",
            format!("checkout {p} is not inside a git repository"),
        ),
        WorkTreeError::Bare => (
            "checkout_bare",
            format!("checkout {p} is a bare repository; citations need a work tree"),
        ),
    };
    Finding::new(Severity::Error, code, text, line, None).in_phase(Phase::Checkout)
}

/// Gate a parsed document. `file` is FILE as given; `checkout_arg` the CHECKOUT argument.
pub fn run(doc: &Document, file: &str, checkout_arg: Option<&str>) -> Report {
    let mut report = Report::new(Mode::Gate, file);
    let header = doc.field("checkout");
    let header_state = match &header {
        None => HeaderCheckout::Absent,
        Some(f) => expand_checkout(&f.value, Path::new(file)),
    };
    report.findings.extend(contract::check(doc, &header_state));
    let block = doc.citation_block();
    let citations =
        citation::parse_lines(block.iter().flatten().map(|b| (b.line, b.text.as_str())));
    report.findings.extend(contract::path_symbols(&citations));
    if let Some(refusal) = resolve::input_guard(&citations) {
        report.findings.push(refusal.finding());
    }
    report.findings.extend(coverage::check(
        doc,
        block.is_some().then_some(&citations[..]),
    ));
    let size = size::measure(doc.size_bytes);
    report.findings.extend(size.findings.iter().cloned());
    report.size = Some(size);

    // Checkout (step 12).
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let arg = checkout_arg.filter(|a| !a.is_empty());
    let header_line = header.as_ref().map(|f| f.line);
    let (path, path_text, origin, err_line) = match (&arg, &header_state) {
        (Some(a), _) => (PathBuf::from(a), a.to_string(), Origin::Argument, None),
        (None, HeaderCheckout::Usable(p)) => {
            (p.clone(), display_path(p), Origin::Header, header_line)
        }
        (None, HeaderCheckout::Absent | HeaderCheckout::Empty) => {
            (cwd.clone(), display_path(&cwd), Origin::Cwd, None)
        }
        (None, _) => (
            cwd.clone(),
            display_path(&cwd),
            Origin::CwdHeaderNotAbsolute,
            None,
        ),
    };
    let errors_so_far = report.count(Severity::Error);
    let wants_index = errors_so_far == 0 && !citations.is_empty();
    let work_tree = match git::open_work_tree(&path, wants_index) {
        Ok(w) => Some(w),
        Err(e) => {
            report
                .findings
                .push(checkout_error(e, &path_text, err_line));
            None
        }
    };
    if let Some(wt) = &work_tree {
        let (origin, overriding) = match (&arg, &header_state) {
            (Some(_), HeaderCheckout::Usable(h)) if !git::same_work_tree(h, &wt.root) => {
                (Origin::ArgumentOverriding, Some(display_path(h)))
            }
            _ => (origin, None),
        };
        let declared = doc
            .field("branch")
            .and_then(|f| crate::document::envelope::declared_branch(&f.value).map(str::to_string));
        let matches = declared.as_deref().map(|d| branch_matches(d, &wt.head));
        report.checkout = Some(CheckoutInfo {
            root: display_path(&wt.root),
            requested: path_text.clone(),
            origin,
            overriding,
            header: header.as_ref().map(|f| f.value.clone()),
            head: wt.head.current.clone(),
            detached: wt.head.detached,
            declared_branch: declared.clone(),
            branch_matches: matches,
        });
        if let (Some(d), Some(false)) = (&declared, matches) {
            let branch_line = doc.field("branch").map(|f| f.line);
            report.findings.push(
                Finding::new(
                    Severity::Warn,
                    "branch_mismatch",
                    format!(
                        "handoff declares branch {d} but this checkout is on {cur} — citations resolve against {cur}",
                        cur = wt.head.current
                    ),
                    branch_line,
                    Some(d.clone()),
                )
                .in_phase(Phase::Checkout),
            );
        }
    }

    if report.count(Severity::Error) == 0
        && let Some(wt) = work_tree
    {
        report.citations = Some(Resolver::new(&wt).resolve(&citations));
    }
    report.finish();
    report
}

/// The branch check (gate.md §2.10).
pub fn branch_matches(declared: &str, head: &git::Head) -> bool {
    if !head.detached {
        return declared == head.current;
    }
    let is_hex =
        (4..=40).contains(&declared.len()) && declared.bytes().all(|b| b.is_ascii_hexdigit());
    is_hex
        && head
            .id
            .as_deref()
            .is_some_and(|id| id.starts_with(&declared.to_ascii_lowercase()))
}
