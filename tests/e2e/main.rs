//! End to end against the real clients: each pinned agent CLI (Claude Code, Codex CLI, Gemini
//! CLI, Cline, Copilot CLI, OpenCode) and the MCP Inspector (a real MCP client) is installed from the npm registry into a cache folder, pointed at a
//! loopback mock of the model APIs (`mock.rs`) that records every request, and driven through
//! real sessions. The binaries are never on PATH: every command the product generates must name
//! them absolutely.
//!
//! An explicit step, never part of `cargo test`: `cargo test --locked --features e2e --test e2e`
//! (a positional argument picks the scenarios whose name holds it).
//!
//! Network: where the machine allows it the whole run moves into a network namespace of its
//! own with only loopback up (util-linux `unshare --net`), so nothing can leave the machine;
//! otherwise the client's non-essential traffic is switched off and its API points at the mock.
//! A client that cannot be installed fails the suite with the reason.
//!
//! The shared harness (installing a client, the network namespace, scenes, terminal driving,
//! waiting on conditions, what a failure prints) is `harness.rs`; one file per client holds its
//! scenarios, so a failure names its client and this file reads as a table of contents.

mod claude;
mod cline;
mod codex;
mod copilot;
mod gemini;
mod harness;
mod impact;
mod mcp;
mod mock;
mod opencode;
mod tripwire;

use std::time::Instant;

use harness::{Scenario, Suite, install_client, reexec_in_netns};

/// The environment variable that marks the re-executed run inside the network namespace.
const IN_NETNS: &str = "HANDOFF_E2E_IN_NETNS";

fn main() {
    // Only `cargo test`'s own listing probe is answered specially.
    if std::env::args().any(|a| a == "--list") {
        println!("e2e: test");
        return;
    }
    let install = |client: &harness::Client| match install_client(client) {
        Ok(p) => p,
        Err(e) => {
            eprintln!(
                "e2e: FAILED — the client {}@{} could not be installed from the npm registry: {e}",
                client.package, client.version
            );
            std::process::exit(1);
        }
    };
    let clients = [
        &claude::CLIENT,
        &codex::CLIENT,
        &gemini::CLIENT,
        &cline::CLIENT,
        &copilot::CLIENT,
        &opencode::CLIENT,
        &mcp::CLIENT,
    ];
    let programs: Vec<_> = clients.iter().map(|c| install(c)).collect();
    if std::env::var_os(IN_NETNS).is_none()
        && let Some(code) = reexec_in_netns(IN_NETNS)
    {
        std::process::exit(code);
    }
    let isolated = std::env::var_os(IN_NETNS).is_some();
    let listed: Vec<String> = clients
        .iter()
        .zip(&programs)
        .map(|(c, p)| format!("{}@{} at {}", c.package, c.version, p.display()))
        .collect();
    println!(
        "e2e: clients {}; network: {}",
        listed.join(", "),
        if isolated {
            "own namespace, loopback only"
        } else {
            "shared (namespace unavailable); API on the loopback mock, non-essential traffic off"
        }
    );
    let programs = <[_; 7]>::try_from(programs).unwrap_or_else(|_| {
        eprintln!("e2e: FAILED — seven clients expected");
        std::process::exit(1)
    });
    let suite = Suite::new(programs);
    let scenarios: Vec<Scenario> = [
        claude::SCENARIOS,
        codex::SCENARIOS,
        gemini::SCENARIOS,
        cline::SCENARIOS,
        copilot::SCENARIOS,
        opencode::SCENARIOS,
        mcp::SCENARIOS,
        tripwire::SCENARIOS,
        impact::SCENARIOS,
    ]
    .concat();
    // A positional argument (as in `cargo test <filter>`) picks the scenarios whose name holds
    // it; `e2e` itself, or none, runs them all.
    let filter: Option<String> = std::env::args()
        .skip(1)
        .find(|a| !a.starts_with('-'))
        .filter(|f| f != "e2e");
    let started = Instant::now();
    let mut failed = 0;
    let mut ran = 0;
    for (name, scenario) in scenarios {
        if filter.as_ref().is_some_and(|f| !name.contains(f.as_str())) {
            continue;
        }
        ran += 1;
        let t = Instant::now();
        let mark = suite.begin();
        let outcome = scenario(&suite);
        match &outcome {
            Ok(()) => println!("e2e: ok      {name} ({:.1} s)", t.elapsed().as_secs_f64()),
            Err(e) => {
                failed += 1;
                println!("e2e: FAILED  {name}: {e}");
                println!("{}", suite.explain(mark));
            }
        }
        suite.end(outcome.is_err());
    }
    println!(
        "e2e: {} passed, {failed} failed in {:.0} s",
        ran - failed,
        started.elapsed().as_secs_f64()
    );
    std::process::exit(i32::from(failed > 0));
}
