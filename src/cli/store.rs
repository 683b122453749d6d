//! `handoff-store`: the central store of handoffs. Its subcommands are being built (see
//! store.md); until then it prints its usage and exits 2 on any subcommand.

use std::ffi::OsString;
use std::io::Write;

use clap::Parser;

/// Keep one handoff per repository and branch, and carry it across a context reset.
#[derive(Debug, Parser)]
#[command(name = "handoff-store", version)]
struct StoreArgs {}

/// Run `handoff-store` with `args`; returns the exit code.
pub fn run(
    args: impl IntoIterator<Item = OsString>,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> i32 {
    match StoreArgs::try_parse_from(args) {
        Ok(_) => {
            let _ = writeln!(
                err,
                "handoff-store: no subcommand yet; see verify-handoff for the gate"
            );
            2
        }
        Err(e) => super::clap_exit(e, out, err),
    }
}
