//! The store binary: parse, run, exit code. Everything else is in the library.
fn main() -> std::process::ExitCode {
    handoff_store::cli::store::run(
        std::env::args_os(),
        &mut std::io::stdout(),
        &mut std::io::stderr(),
    )
    .into()
}
