//! A real MCP client: the MCP Inspector's command-line mode (`@modelcontextprotocol/inspector`,
//! `mcp-inspector --cli`) starts `handoff-store mcp` over stdio, as every MCP client does, and
//! speaks to it through the official TypeScript SDK. (A line that is not JSON-RPC cannot be sent
//! through a client; tests/cli/mcp.rs sends those over a pipe.)

use std::process::{Command, Stdio};

use serde_json::Value;

use crate::harness::{Check, Client, STORE_BIN, Scenario, Scene, Suite, ensure, handoff};

pub const SCENARIOS: &[Scenario] = &[(
    "mcp: the MCP Inspector lists the tools and the prompt and calls each tool; bad arguments get tool errors",
    Suite::mcp_inspector,
)];

pub const CLIENT: Client = Client {
    package: "@modelcontextprotocol/inspector",
    version: "0.15.0",
    program: "mcp-inspector",
    folder: "inspector",
};

/// The tools the server must list.
const TOOLS: [&str; 9] = [
    "handoff_read",
    "handoff_write",
    "handoff_verify",
    "handoff_list",
    "handoff_history",
    "handoff_reground",
    "handoff_brief",
    "handoff_log",
    "handoff_fix",
];

impl Suite {
    /// One Inspector call (`--method` and its arguments) against `handoff-store mcp` in the
    /// scene's checkout; the JSON it printed.
    fn inspect(&self, scene: &Scene, args: &[&str]) -> Result<Value, String> {
        let out = Command::new(&self.inspector)
            .current_dir(&scene.repo)
            .env_clear()
            .env("HOME", &scene.home)
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("HANDOFF_STORE_DIR", &scene.store)
            .args(["--cli", STORE_BIN, "mcp", "--method"])
            .args(args)
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("mcp-inspector: {e}"))?;
        self.saw_output(&out);
        serde_json::from_slice(&out.stdout).map_err(|e| {
            format!(
                "mcp-inspector {args:?} printed no JSON ({e}): {}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            )
        })
    }

    /// A tool call's result: its text, and whether it is a tool error.
    fn call_tool(
        &self,
        scene: &Scene,
        tool: &str,
        args: &[&str],
    ) -> Result<(String, bool), String> {
        let mut argv = vec!["tools/call", "--tool-name", tool];
        for a in args {
            argv.extend(["--tool-arg", a]);
        }
        let result = self.inspect(scene, &argv)?;
        let text = result["content"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|c| c["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n");
        Ok((text, result["isError"] == Value::Bool(true)))
    }

    fn mcp_inspector(&self) -> Check {
        let scene = self.scene(false, false)?;
        let listed = self.inspect(&scene, &["tools/list"])?;
        let names: Vec<&str> = listed["tools"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|t| t["name"].as_str())
            .collect();
        for tool in TOOLS {
            ensure(names.contains(&tool), || {
                format!("{tool} not listed: {names:?}")
            })?;
        }
        let prompts = self.inspect(&scene, &["prompts/list"])?;
        ensure(prompts["prompts"][0]["name"] == "handoff", || {
            format!("no prompt handoff: {prompts}")
        })?;
        let prompt = self.inspect(&scene, &["prompts/get", "--prompt-name", "handoff"])?;
        ensure(prompt.to_string().contains("handoff_write"), || {
            format!("the prompt does not name the tool that stores: {prompt}")
        })?;

        let doc = handoff("tag-inspector");
        let document = format!("document={doc}");
        let (said, error) = self.call_tool(&scene, "handoff_verify", &[&document])?;
        ensure(!error, || format!("handoff_verify: {said}"))?;
        let (said, error) = self.call_tool(&scene, "handoff_write", &[&document])?;
        ensure(!error && said.contains("stored"), || {
            format!("handoff_write: {said}")
        })?;
        let (said, error) = self.call_tool(&scene, "handoff_read", &["consume=false"])?;
        ensure(!error && said.contains("tag-inspector is where"), || {
            format!("handoff_read: {said}")
        })?;
        let slot = scene
            .repo
            .file_name()
            .map(|n| n.to_string_lossy().into_owned());
        let slot = format!("{}-main-", slot.unwrap_or_default());
        for (tool, shows) in [
            ("handoff_list", slot.as_str()),
            ("handoff_history", slot.as_str()),
            ("handoff_reground", "tag-inspector"),
            ("handoff_brief", "tag-inspector"),
        ] {
            let (said, error) = self.call_tool(&scene, tool, &[])?;
            ensure(!error && said.contains(shows), || format!("{tool}: {said}"))?;
        }
        for tool in ["handoff_log", "handoff_fix"] {
            let (said, error) = self.call_tool(&scene, tool, &[])?;
            ensure(!error, || format!("{tool}: {said}"))?;
        }

        let (said, error) = self.call_tool(&scene, "handoff_verify", &[])?;
        ensure(error && said.contains("document or as path"), || {
            format!("handoff_verify without a document: {said}")
        })?;
        let (said, error) =
            self.call_tool(&scene, "handoff_history", &["checkout=/nonexistent"])?;
        ensure(error && said.contains("/nonexistent"), || {
            format!("a checkout that does not exist: {said}")
        })?;
        let (said, error) =
            self.call_tool(&scene, "handoff_write", &["document=# not a handoff"])?;
        ensure(error, || format!("a malformed document was stored: {said}"))?;
        let (said, _) = self.call_tool(&scene, "handoff_read", &["consume=false"])?;
        ensure(said.contains("tag-inspector is where"), || {
            format!("a refused write changed the slot: {said}")
        })
    }
}
