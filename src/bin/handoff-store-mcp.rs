//! The MCP server binary, which `handoff-store mcp` becomes (docs/store.md §9.19): a binary of
//! its own so that the hooks' binary does not carry the server's runtime.
fn main() -> std::process::ExitCode {
    handoff_store::cli::store::mcp_main(&mut std::io::stdout(), &mut std::io::stderr()).into()
}
