//! `verify-handoff`: the gate (`<FILE> [CHECKOUT]`) and the standalone resolver
//! (`--citations [FILE|-] [--checkout DIR]`), in text or JSON. The exit code is the report's:
//! 0 ok, 1 a citation or coverage failed, 2 malformed input or document.

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};

use clap::builder::NonEmptyStringValueParser;
use clap::{CommandFactory, Parser, ValueEnum};

use crate::citation;
use crate::document::Document;
use crate::gate::{self, Origin};
use crate::git;
use crate::input::{self, InputError};
use crate::report::{CheckoutInfo, Mode, Report};
use crate::resolve::{self, Resolver};

/// Output form.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Text,
    Json,
}

/// Check a handoff file against the format contract, then verify its citations.
#[derive(Debug, Parser)]
#[command(
    name = "verify-handoff",
    version,
    about = "Check a handoff file against the format contract, then verify its citations.",
    override_usage = "verify-handoff <FILE> [CHECKOUT] [--format text|json]\n       \
                      verify-handoff --citations [FILE|-] [--checkout DIR] [--format text|json]",
    after_help = "Exit codes: 0 every check passed; 1 a citation is MISSING or CHANGED, or prose cites a \
                  path:line absent from Pointers; 2 the input or the document violates the contract."
)]
struct VerifyArgs {
    /// The handoff file (with --citations: a citation list, `-` or absent for stdin).
    #[arg(value_parser = NonEmptyStringValueParser::new())]
    file: Option<String>,
    /// The work tree citations resolve against (default: the handoff's `checkout:`).
    #[arg(conflicts_with = "citations")]
    checkout: Option<String>,
    /// Resolve a citation list (one per line) instead of gating a handoff.
    #[arg(long)]
    citations: bool,
    /// With --citations: the work tree to resolve against (default: the working directory).
    #[arg(
        long = "checkout",
        id = "checkout_dir",
        value_name = "DIR",
        requires = "citations"
    )]
    checkout_dir: Option<String>,
    /// Output form.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

/// Run `verify-handoff` with `args`; returns the exit code.
pub fn run(
    args: impl IntoIterator<Item = OsString>,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> i32 {
    let parsed = match VerifyArgs::try_parse_from(args) {
        Ok(a) => a,
        Err(e) => return super::clap_exit(e, out, err),
    };
    let report = if parsed.citations {
        citations(parsed.file.as_deref(), parsed.checkout_dir.as_deref())
    } else {
        let Some(file) = parsed.file.as_deref() else {
            let e = VerifyArgs::command().error(
                clap::error::ErrorKind::MissingRequiredArgument,
                "the handoff <FILE> is required (or use --citations)",
            );
            return super::clap_exit(e, out, err);
        };
        gate_file(file, parsed.checkout.as_deref())
    };
    write_report(&report, parsed.format, out, err)
}

/// Gate the handoff at `file`.
pub fn gate_file(file: &str, checkout: Option<&str>) -> Report {
    match input::read_path(Path::new(file)) {
        Ok(bytes) => gate_bytes(file, bytes, checkout),
        Err(e) => Report::from_input_error(Mode::Gate, file, e),
    }
}

/// Gate a handoff already read from `file` (the store passes the bytes it shows, so the file
/// is not read again).
pub fn gate_bytes(file: &str, bytes: Vec<u8>, checkout: Option<&str>) -> Report {
    if bytes.len() as u64 > input::MAX_BYTES {
        return Report::from_input_error(Mode::Gate, file, InputError::TooLarge);
    }
    match input::to_text(bytes, false) {
        Ok(text) => gate::run(&Document::parse(&text), file, checkout),
        Err(e) => Report::from_input_error(Mode::Gate, file, e),
    }
}

fn read_citations(file: Option<&str>) -> Result<String, InputError> {
    let bytes = match file {
        None | Some("-") => input::read_capped(std::io::stdin().lock()),
        Some(f) => input::read_path(Path::new(f)),
    }?;
    input::to_text(bytes, true)
}

/// Resolve a citation list (gate.md §3.1).
pub fn citations(file: Option<&str>, checkout: Option<&str>) -> Report {
    let name = file.unwrap_or("-");
    let text = match read_citations(file) {
        Ok(t) => t,
        Err(e) => return Report::from_input_error(Mode::Citations, name, e),
    };
    let mut report = Report::new(Mode::Citations, name);
    let (path, origin) = match checkout.filter(|c| !c.is_empty()) {
        Some(dir) => (PathBuf::from(dir), Origin::Argument),
        None => (
            std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")),
            Origin::Cwd,
        ),
    };
    let requested = path.to_string_lossy().into_owned();
    let wt = match git::open_work_tree(&path, true) {
        Ok(wt) => wt,
        Err(e) => {
            report
                .findings
                .push(gate::checkout_error(e, &requested, None));
            report.finish();
            return report;
        }
    };
    report.checkout = Some(CheckoutInfo {
        root: wt.root.to_string_lossy().into_owned(),
        requested,
        origin,
        overriding: None,
        header: None,
        head: wt.head.current.clone(),
        detached: wt.head.detached,
        declared_branch: None,
        branch_matches: None,
    });
    let lines = citation::parse_lines(
        input::split_lines(&text)
            .into_iter()
            .enumerate()
            .map(|(i, l)| (i + 1, l)),
    );
    if let Some(refusal) = resolve::input_guard(&lines) {
        report.findings.push(refusal.finding());
    } else {
        report.citations = Some(Resolver::new(&wt).resolve(&lines));
    }
    report.finish();
    report
}

/// Print a report; a closed stdout is not an error.
pub fn write_report(
    report: &Report,
    format: Format,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> i32 {
    let result = match format {
        Format::Text => super::emit(&report.text_lines(), out, err),
        Format::Json => serde_json::to_writer(&mut *out, &report.json())
            .map_err(std::io::Error::from)
            .and_then(|()| writeln!(out))
            .and_then(|()| out.flush()),
    };
    match result {
        Err(e) if !super::is_broken_pipe(&e) => {
            let _ = writeln!(err, "verify-handoff: {}", crate::error::Error::Output(e));
            2
        }
        _ => report.exit_code,
    }
}
