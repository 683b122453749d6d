//! The gate binary: parse, run, exit code. Everything else is in the library.
fn main() -> std::process::ExitCode {
    handoff_store::cli::verify::run(
        std::env::args_os(),
        &mut std::io::stdout().lock(),
        &mut std::io::stderr().lock(),
    )
    .into()
}
