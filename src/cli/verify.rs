//! `verify-handoff`: the gate (`<FILE> [CHECKOUT]`) and the standalone resolver
//! (`--citations [FILE|-] [--checkout DIR]`), in text or JSON. The exit code is the report's:
//! 0 ok, 1 a citation or coverage failed, 2 malformed input or document.

use std::ffi::OsString;
use std::io::Write;

use clap::builder::NonEmptyStringValueParser;
use clap::{CommandFactory, Parser};

use super::paint::{ColorChoice, Paint, choice_in};
use super::reply::Reply;
use crate::error::Exit;
use crate::report::run_gate::{citations, gate_file};

pub(crate) use super::Format;

/// Check a handoff file against the format contract, then verify its citations.
#[derive(Debug, Parser)]
#[command(
    name = "verify-handoff",
    version,
    about = "Check a handoff file against the format contract, then verify its citations.",
    override_usage = "verify-handoff <FILE> [CHECKOUT] [--format text|json]\n       \
                      verify-handoff --fix [--dry-run] <FILE> [CHECKOUT] [--format text|json]\n       \
                      verify-handoff --citations [FILE|-] [--checkout DIR] [--format text|json]",
    after_help = "Examples:\n  \
                  verify-handoff handoff.md                 # against its checkout: header\n  \
                  verify-handoff handoff.md ~/src/shop      # against this checkout\n  \
                  verify-handoff handoff.md --json | jq .verdict\n  \
                  verify-handoff --fix --dry-run handoff.md   # which moved pointers it would heal\n  \
                  printf 'src/a.rs:12 | fn main\\n' | verify-handoff --citations"
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
    /// Rewrite the line number of every citation whose fragment moved to one other line of the
    /// same file, in Pointers and in the prose, keeping every other byte; exit with the gate's
    /// verdict on the result.
    #[arg(long, conflicts_with = "citations")]
    fix: bool,
    /// With --fix: say what would move, and write nothing.
    #[arg(long, requires = "fix")]
    dry_run: bool,
    /// The work tree to resolve against: the same as CHECKOUT, and with --citations the one
    /// way to name it (default there: the working directory).
    #[arg(
        long = "checkout",
        id = "checkout_dir",
        value_name = "DIR",
        conflicts_with = "checkout"
    )]
    checkout_dir: Option<String>,
    /// Output form.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// The same as --format json.
    #[arg(long)]
    json: bool,
    /// Colour the verdicts: auto (on a terminal, unless NO_COLOR is set), always, never.
    #[arg(long, value_enum, value_name = "WHEN", default_value_t = ColorChoice::Auto)]
    color: ColorChoice,
}

/// The whole command line, its help ending with the exit codes.
pub(crate) fn command() -> clap::Command {
    super::with_exit_status(bare_command(), &Exit::GATE_MEANINGS)
}

/// The command line as declared (for the man page, which gives the exit codes a section).
pub(crate) fn bare_command() -> clap::Command {
    VerifyArgs::command()
}

/// Run `verify-handoff` with `args`; returns the exit code.
pub fn run(
    args: impl IntoIterator<Item = OsString>,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Exit {
    let args: Vec<OsString> = args.into_iter().collect();
    let paint = Paint::of(choice_in(&args));
    reply(args, paint).deliver(out, err, "verify-handoff")
}

/// The report the command line asks for, rendered; a failed write of it ends with 2.
fn reply(args: Vec<OsString>, paint: Paint) -> Reply {
    let json = super::paint::json_in(&args);
    let parsed = match command()
        .try_get_matches_from(args)
        .and_then(|m| <VerifyArgs as clap::FromArgMatches>::from_arg_matches(&m))
    {
        Ok(a) => a,
        Err(e) => return Reply::clap(&e, paint, json),
    };
    let format = if parsed.json {
        Format::Json
    } else {
        parsed.format
    };
    let checkout = parsed
        .checkout
        .as_deref()
        .or(parsed.checkout_dir.as_deref());
    if parsed.fix {
        let Some(file) = parsed.file.as_deref() else {
            let e = command().error(
                clap::error::ErrorKind::MissingRequiredArgument,
                "--fix needs the handoff <FILE>",
            );
            return Reply::clap(&e, paint, json);
        };
        let fixed = crate::report::fix::fix_file(file, checkout, parsed.dry_run);
        let exit = Exit::of_gate(fixed.report.exit_code);
        let reply = match format {
            Format::Text => Reply::new(exit)
                .lines(fixed.text_lines(file, parsed.dry_run))
                .painted(paint),
            Format::Json => match Reply::show(Format::Json, &fixed.json(), |_| String::new()) {
                Ok(r) => r.exit(exit),
                Err(e) => Reply::error(e, Format::Json),
            },
        };
        return reply.output_failed(Exit::Malformed);
    }
    let report = if parsed.citations {
        citations(parsed.file.as_deref(), parsed.checkout_dir.as_deref())
    } else {
        let Some(file) = parsed.file.as_deref() else {
            let e = command().error(
                clap::error::ErrorKind::MissingRequiredArgument,
                "the handoff <FILE> is required (or use --citations)",
            );
            return Reply::clap(&e, paint, json);
        };
        gate_file(file, checkout)
    };
    let exit = Exit::of_gate(report.exit_code);
    let reply = match format {
        Format::Text => Reply::new(exit).lines(report.text_lines()).painted(paint),
        Format::Json => match Reply::show(Format::Json, &report.json(), |_| String::new()) {
            Ok(r) => r.exit(exit),
            Err(e) => Reply::error(e, Format::Json),
        },
    };
    reply.output_failed(Exit::Malformed)
}
