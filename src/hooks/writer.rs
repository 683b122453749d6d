//! What the background writer may do, and how its answer comes back (issue 22). The writer is
//! an agent nobody watches, fed a transcript of untrusted text, so it gets read-only tools at
//! most, through each client's own permission mechanism — measured with the real clients
//! (tests/e2e), not trusted from a flag's name:
//!
//! - Claude Code: `--tools Read,Grep,Glob` (no other built-in tool exists in the session), the
//!   same pre-approved, the writing and fetching tools denied, `--permission-mode dontAsk`
//!   (anything else is refused, never asked), no MCP server (`--strict-mcp-config`).
//! - Codex CLI: `--sandbox read-only` with approvals `never` (its shell cannot write or reach
//!   the network, and nothing is escalated), no MCP server, no web search.
//! - Gemini CLI: a policy file of the run (`--policy`, the user's tier: Gemini checks no owner
//!   for it, unlike a system settings file, which it skips unless root owns it and every folder
//!   above it) that denies every tool but the reading ones — it holds even in yolo mode — with
//!   approval mode `default` and no MCP server.
//! - Copilot CLI: only `view`, `grep` and `glob` available, shell and write denied, no built-in
//!   MCP server, no question tool; the transcript's folder added for reading.
//!
//! The writer's final answer is the document: read from the client's structured output with a
//! size cap, never run, never put on a command line. The supervisor gates and stores it.

use std::io::Read;
use std::path::Path;

use serde_json::Value;

use super::texts::Agent;
use crate::store::runs::{Answer, Run};

/// The file Codex writes its last message to (`codex exec -o`), inside the run directory.
const CODEX_ANSWER: &str = "answer.md";
/// Claude Code's reading tools: the only built-in tools its writer session has.
const CLAUDE_TOOLS: &str = "Read,Grep,Glob";
/// Claude Code's tools that write, run or fetch: denied as well, in case a setting adds one.
const CLAUDE_DENIED: &str = "Bash,Write,Edit,MultiEdit,NotebookEdit,WebFetch,WebSearch,Task";
/// Copilot CLI's reading tools (1.0.102).
const COPILOT_TOOLS: [&str; 3] = ["view", "grep", "glob"];
/// How much of a writer's stdout is read to find its answer (the answer itself is capped at
/// the store's 4 MiB; JSON escaping may double it).
pub const OUTPUT_CAP: u64 = 16 * 1024 * 1024;

/// A writer's command lines and where its answer will be.
pub struct Invocation {
    pub argv: Vec<String>,
    pub resume: Option<Vec<String>>,
    pub answer: Answer,
    /// Where it runs, when not in the checkout.
    pub cwd: Option<String>,
}

/// The argument vector of `agent`'s read-only headless writer for checkout `here`. `run_dir`
/// holds the transcript copy (Gemini) and the answer file (Codex); `transcript` is the file the
/// writer reads.
pub fn invocation(
    agent: Agent,
    program: &Path,
    id: &str,
    here: &str,
    run_dir: &str,
    transcript: &str,
    model: Option<&str>,
) -> Invocation {
    let program = program.to_string_lossy().into_owned();
    let folder = Path::new(transcript)
        .parent()
        .map(|p| p.to_string_lossy().into_owned())
        .filter(|p| !p.is_empty())
        .unwrap_or_else(|| run_dir.to_string());
    let strings = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let mut inv = match agent {
        Agent::ClaudeCode => {
            let session = |flag: &str| {
                let mut argv = vec![program.clone()];
                argv.extend(strings(&[
                    "-p",
                    "--output-format",
                    "json",
                    flag,
                    id,
                    "--tools",
                    CLAUDE_TOOLS,
                    "--allowedTools",
                    CLAUDE_TOOLS,
                    "--disallowedTools",
                    CLAUDE_DENIED,
                    "--permission-mode",
                    "dontAsk",
                    "--strict-mcp-config",
                    "--add-dir",
                    &folder,
                ]));
                argv
            };
            Invocation {
                argv: session("--session-id"),
                resume: Some(session("--resume")),
                answer: Answer::JsonField("result".into()),
                cwd: None,
            }
        }
        Agent::Codex => {
            let answer = format!("{run_dir}/{CODEX_ANSWER}");
            let mut argv = vec![program];
            argv.extend(strings(&[
                "exec",
                "--skip-git-repo-check",
                "--sandbox",
                "read-only",
                "-c",
                "approval_policy=\"never\"",
                "-c",
                "mcp_servers={}",
                "-c",
                "web_search=\"disabled\"",
                "--json",
                "-o",
                &answer,
                "-",
            ]));
            Invocation {
                argv,
                resume: None,
                answer: Answer::File(CODEX_ANSWER.into()),
                cwd: None,
            }
        }
        Agent::Copilot => {
            let mut argv = vec![program];
            argv.extend(strings(&["-s", "--no-ask-user", "--available-tools"]));
            argv.extend(strings(&COPILOT_TOOLS));
            argv.extend(strings(&["--allow-tool"]));
            argv.extend(strings(&COPILOT_TOOLS));
            argv.extend(strings(&[
                "--deny-tool",
                "shell",
                "--deny-tool",
                "write",
                "--disable-builtin-mcps",
                "--add-dir",
                &folder,
            ]));
            Invocation {
                argv,
                resume: None,
                answer: Answer::Stdout,
                cwd: None,
            }
        }
        // Headless (`-p`: the prompt on stdin comes first, this line after it), in a workspace
        // of its own: the store's run folder (trusted for this run only; it holds nothing but
        // our files), the checkout included for reading. Gemini CLI cleans its current
        // project's chats at every start and takes a session file holding no conversation yet
        // for garbage, deleting every file of that session; run in the checkout, the writer
        // deleted the user's live session file (0.61.0, measured: about one run in five).
        Agent::Gemini => {
            let policy = format!("{run_dir}/{GEMINI_POLICY}");
            let workspace = Path::new(run_dir)
                .parent()
                .map(|p| p.to_string_lossy().into_owned())
                .unwrap_or_else(|| run_dir.to_string());
            let mut argv = vec![program];
            argv.extend(strings(&[
                "--skip-trust",
                "--include-directories",
                here,
                "--policy",
                &policy,
                "--approval-mode",
                "default",
                "--allowed-mcp-server-names",
                "handoff-store-none",
                "--output-format",
                "json",
                "-p",
                "Write the handoff as the text above says.",
            ]));
            Invocation {
                argv,
                resume: None,
                answer: Answer::JsonField("response".into()),
                cwd: Some(workspace),
            }
        }
    };
    if let Some(model) = model {
        for argv in std::iter::once(&mut inv.argv).chain(inv.resume.as_mut()) {
            argv.extend(["--model".to_string(), model.to_string()]);
        }
    }
    inv
}

/// The Gemini writer's policy file, in the run directory.
const GEMINI_POLICY: &str = "gemini-policy.toml";

/// Gemini CLI's policy for the writer: every tool denied (MCP tools and sub-agents included),
/// then the reading ones allowed, at priorities above any rule a user's settings add.
const GEMINI_POLICY_TEXT: &str = r#"# handoff-store's background writer reads; it never runs, writes or fetches anything.
[[rule]]
toolName = "*"
decision = "deny"
priority = 900

[[rule]]
toolName = ["read_file", "read_many_files", "grep_search", "glob", "list_directory"]
decision = "allow"
priority = 999
"#;

/// The files a writer of `agent` needs in its run directory before it starts: name and text.
pub fn files(agent: Agent) -> Vec<(&'static str, &'static str)> {
    match agent {
        Agent::Gemini => vec![(GEMINI_POLICY, GEMINI_POLICY_TEXT)],
        Agent::ClaudeCode | Agent::Codex | Agent::Copilot => Vec::new(),
    }
}

/// Why a writer's answer could not be taken; the word is the run's recorded exit.
#[derive(Debug, PartialEq, Eq)]
pub enum NoAnswer {
    /// Nothing where the answer should be, or only whitespace.
    Missing,
    /// The client said its run failed.
    Error,
    /// Larger than the store's 4 MiB.
    TooLarge,
}

impl NoAnswer {
    pub fn word(&self) -> &'static str {
        match self {
            NoAnswer::Missing => "no-answer",
            NoAnswer::Error => "writer-error",
            NoAnswer::TooLarge => "answer-too-large",
        }
    }
}

/// The writer's answer, from where its job says it is (`stdout`: what the writer printed, read
/// through the supervisor's own handle, so a run directory removed meanwhile loses nothing);
/// `Ok(None)` for a writer that stores its document itself.
pub fn answer(run: &Run, stdout: impl Read) -> Result<Option<String>, NoAnswer> {
    let read = |from: Box<dyn Read + '_>| -> Result<Vec<u8>, NoAnswer> {
        let mut bytes = Vec::new();
        from.take(OUTPUT_CAP + 1)
            .read_to_end(&mut bytes)
            .map_err(|_| NoAnswer::Missing)?;
        if bytes.len() as u64 > OUTPUT_CAP {
            return Err(NoAnswer::TooLarge);
        }
        Ok(bytes)
    };
    let file = |name: &str| -> Result<Box<dyn Read>, NoAnswer> {
        crate::fs::File::open(run.dir.join(name))
            .map(|f| Box::new(f) as Box<dyn Read>)
            .map_err(|_| NoAnswer::Missing)
    };
    let text = match &run.job.answer {
        Answer::Stored => return Ok(None),
        Answer::Stdout => String::from_utf8_lossy(&read(Box::new(stdout))?).into_owned(),
        Answer::File(name) => String::from_utf8_lossy(&read(file(name)?)?).into_owned(),
        Answer::JsonField(field) => from_json(&read(Box::new(stdout))?, field)?,
    };
    let doc = document_of(&text);
    if doc.is_empty() {
        return Err(NoAnswer::Missing);
    }
    if doc.len() as u64 > crate::input::MAX_BYTES {
        return Err(NoAnswer::TooLarge);
    }
    Ok(Some(doc))
}

/// The string `field` of the JSON object on stdout (the last line holding one, should the
/// client print anything before it). A writer of the user's own that prints markdown rather
/// than JSON is taken at its word.
fn from_json(bytes: &[u8], field: &str) -> Result<String, NoAnswer> {
    let text = String::from_utf8_lossy(bytes);
    let parsed = serde_json::from_str::<Value>(text.trim()).ok().or_else(|| {
        text.lines()
            .rev()
            .find_map(|l| serde_json::from_str::<Value>(l.trim()).ok())
            .filter(Value::is_object)
    });
    let Some(value) = parsed else {
        let plain = text.trim_start();
        return if plain.starts_with('{') || plain.starts_with('[') {
            Err(NoAnswer::Missing)
        } else {
            Ok(text.into_owned())
        };
    };
    if value["is_error"] == Value::Bool(true) || value.get("error").is_some_and(|e| !e.is_null()) {
        return Err(NoAnswer::Error);
    }
    value[field]
        .as_str()
        .map(str::to_string)
        .ok_or(NoAnswer::Missing)
}

/// The document in an answer: from its first `# ` heading on (a model may say a word first),
/// one fence around the whole of it removed.
pub fn document_of(answer: &str) -> String {
    let lines: Vec<&str> = answer.trim().lines().collect();
    let Some(heading) = lines.iter().position(|l| l.starts_with("# ")) else {
        return match answer.trim() {
            "" => String::new(),
            text => format!("{text}\n"),
        };
    };
    // A fence opened on the line before the heading closes on its last bare line: what follows
    // it (the writer's words after the document) is not the document.
    let fence = heading
        .checked_sub(1)
        .map(|i| lines[i].trim())
        .filter(|l| l.starts_with("```"))
        .map(|l| &l[..l.bytes().take_while(|b| *b == b'`').count()]);
    let end = fence
        .and_then(|f| {
            (heading + 1..lines.len())
                .rev()
                .find(|&i| lines[i].trim() == f)
        })
        .unwrap_or(lines.len());
    let text = lines[heading..end].join("\n");
    format!("{}\n", text.trim_end())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_document_is_taken_from_its_heading_and_out_of_one_fence() {
        assert_eq!(
            document_of("# Handoff — x\nbody\n"),
            "# Handoff — x\nbody\n"
        );
        assert_eq!(
            document_of("Here it is:\n\n# Handoff — x\nbody"),
            "# Handoff — x\nbody\n"
        );
        assert_eq!(
            document_of("```markdown\n# Handoff — x\n```text\na:1 | b\n```\n```\n"),
            "# Handoff — x\n```text\na:1 | b\n```\n"
        );
        assert_eq!(document_of("  \n "), "");
    }

    #[test]
    fn words_after_a_fenced_answer_are_not_the_document() {
        assert_eq!(
            document_of(
                "```markdown\n# Handoff — x\n```text\na:1 | b\n```\n```\n\nLet me know if you want changes."
            ),
            "# Handoff — x\n```text\na:1 | b\n```\n"
        );
        assert_eq!(
            document_of("Here it is:\n\n```md\n# Handoff — x\nbody\n```\nThat's all."),
            "# Handoff — x\nbody\n"
        );
        assert_eq!(
            document_of("````\n# Handoff — x\n```\ninner\n```\n````\nbye"),
            "# Handoff — x\n```\ninner\n```\n"
        );
    }

    #[test]
    fn a_json_answer_is_its_field_and_an_error_is_no_answer() {
        let ok = br##"{"type":"result","is_error":false,"result":"# Handoff"}"##;
        assert_eq!(from_json(ok, "result"), Ok("# Handoff".into()));
        let noise = b"warming up\n{\"response\":\"# H\",\"stats\":{}}\n";
        assert_eq!(from_json(noise, "response"), Ok("# H".into()));
        let failed = br#"{"type":"result","is_error":true,"result":"API Error"}"#;
        assert_eq!(from_json(failed, "result"), Err(NoAnswer::Error));
        assert_eq!(
            from_json(b"{\"other\":1}", "result"),
            Err(NoAnswer::Missing)
        );
        assert_eq!(
            from_json(b"# Handoff\n", "result"),
            Ok("# Handoff\n".into())
        );
    }
}
