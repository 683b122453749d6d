//! What the background writer may do, and how its answer comes back. The writer is an agent
//! nobody watches, fed a transcript of untrusted text, so it gets read-only tools at most,
//! through each client's own permission mechanism — measured with the real clients (tests/e2e),
//! not trusted from a flag's name. Each client describes its writer in a [`Profile`] in its own
//! file (`harness/<client>.rs`); this file turns a profile into the run's command lines.
//!
//! The writer's final answer is the document: read from the client's structured output with a
//! size cap, never run, never put on a command line. The supervisor gates and stores it.

use std::io::Read;
use std::path::Path;

use serde_json::Value;

use crate::store::runs::{Answer, Run};

/// How much of a writer's stdout is read to find its answer (the answer itself is capped at
/// the store's 4 MiB; JSON escaping may double it).
pub(crate) const OUTPUT_CAP: u64 = 16 * 1024 * 1024;

/// A client's background writer: its headless mode, read-only.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Profile {
    /// The client's name as the writer's prompt says it (`Claude Code`).
    pub(crate) name: &'static str,
    /// How the writer explores the transcript, as the prompt says it.
    pub(crate) explore: &'static str,
    /// Its command lines for one run.
    pub(crate) invocation: fn(&Call) -> Invocation,
    /// The files it needs in its run directory before it starts: name and text.
    pub(crate) files: &'static [(&'static str, &'static str)],
}

/// What one run's command lines are made of.
pub(crate) struct Call<'a> {
    /// The writer program.
    pub(crate) program: String,
    /// The writer's own session id.
    pub(crate) id: &'a str,
    /// The checkout.
    pub(crate) here: &'a str,
    /// The run directory (absolute).
    pub(crate) run_dir: &'a str,
    /// The folder of the transcript the writer reads (else the run directory).
    pub(crate) folder: String,
}

/// A writer's command lines and where its answer will be.
pub(crate) struct Invocation {
    pub(crate) argv: Vec<String>,
    pub(crate) resume: Option<Vec<String>>,
    pub(crate) answer: Answer,
    /// Where it runs, when not in the checkout.
    pub(crate) cwd: Option<String>,
}

/// `program` followed by `args`.
pub(crate) fn argv(program: &str, args: &[&str]) -> Vec<String> {
    std::iter::once(program)
        .chain(args.iter().copied())
        .map(str::to_string)
        .collect()
}

/// The argument vector of `profile`'s read-only headless writer for checkout `here`. `run_dir`
/// holds the run's files; `transcript` is the file the writer reads.
pub(crate) fn invocation(
    profile: &Profile,
    program: &Path,
    id: &str,
    here: &str,
    run_dir: &str,
    transcript: &str,
    model: Option<&str>,
) -> Invocation {
    let folder = Path::new(transcript)
        .parent()
        .map(|p| p.to_string_lossy().into_owned())
        .filter(|p| !p.is_empty())
        .unwrap_or_else(|| run_dir.to_string());
    let mut inv = (profile.invocation)(&Call {
        program: program.to_string_lossy().into_owned(),
        id,
        here,
        run_dir,
        folder,
    });
    if let Some(model) = model {
        for argv in std::iter::once(&mut inv.argv).chain(inv.resume.as_mut()) {
            argv.extend(["--model".to_string(), model.to_string()]);
        }
    }
    inv
}

/// Why a writer's answer could not be taken; the word is the run's recorded exit.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum NoAnswer {
    /// Nothing where the answer should be, or only whitespace.
    Missing,
    /// The client said its run failed.
    Error,
    /// Larger than the store's 4 MiB.
    TooLarge,
}

impl NoAnswer {
    pub(crate) fn word(&self) -> &'static str {
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
pub(crate) fn answer(run: &Run, stdout: impl Read) -> Result<Option<String>, NoAnswer> {
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
        Answer::LastText => last_text(&read(Box::new(stdout))?)?,
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

/// The text of the last `{"type":"text","part":{"text":…}}` event among JSON lines; an
/// `{"type":"error"}` event after it means the run failed.
fn last_text(bytes: &[u8]) -> Result<String, NoAnswer> {
    let text = String::from_utf8_lossy(bytes);
    let mut answer = Err(NoAnswer::Missing);
    for event in text
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
    {
        match event["type"].as_str() {
            Some("text") => {
                if let Some(t) = event["part"]["text"].as_str() {
                    answer = Ok(t.to_string());
                }
            }
            Some("error") => answer = Err(NoAnswer::Error),
            _ => {}
        }
    }
    answer
}

/// The tokens and money a writer's stdout reports, summed over every JSON object in it (the
/// whole output, or one per line), in the shapes the clients print: a `result` object (`usage`,
/// its cache tokens counted as input, and `total_cost_usd`), `turn.completed` events (`usage`),
/// and `stats.models.*.tokens` (`prompt`, `candidates`). Nothing found: all `None`.
pub(crate) fn usage_of(stdout: &[u8]) -> crate::store::costs::Usage {
    use crate::store::costs::Usage;
    let text = String::from_utf8_lossy(stdout);
    let whole = serde_json::from_str::<Value>(text.trim()).ok();
    let values: Vec<Value> = match whole {
        Some(v) => vec![v],
        None => text
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l.trim()).ok())
            .collect(),
    };
    let n = |v: &Value, key: &str| v.get(key).and_then(Value::as_u64);
    let mut usage = Usage::default();
    for v in &values {
        let one = if v["type"] == "result" && v["usage"].is_object() {
            let u = &v["usage"];
            Usage {
                input_tokens: Some(
                    [
                        "input_tokens",
                        "cache_creation_input_tokens",
                        "cache_read_input_tokens",
                    ]
                    .iter()
                    .filter_map(|k| n(u, k))
                    .sum(),
                ),
                output_tokens: n(u, "output_tokens"),
                cost_usd: v["total_cost_usd"].as_f64(),
            }
        } else if v["type"] == "turn.completed" && v["usage"].is_object() {
            Usage {
                input_tokens: n(&v["usage"], "input_tokens"),
                output_tokens: n(&v["usage"], "output_tokens"),
                cost_usd: None,
            }
        } else if let Some(models) = v["stats"]["models"].as_object() {
            models.values().fold(Usage::default(), |acc, m| {
                acc.add(Usage {
                    input_tokens: n(&m["tokens"], "prompt"),
                    output_tokens: n(&m["tokens"], "candidates"),
                    cost_usd: None,
                })
            })
        } else {
            continue;
        };
        usage = usage.add(one);
    }
    usage
}

/// The document in an answer: from its first `# ` heading on (a model may say a word first),
/// one fence around the whole of it removed.
pub(crate) fn document_of(answer: &str) -> String {
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
    fn the_last_text_event_is_the_answer() {
        let events = b"{\"type\":\"text\",\"part\":{\"text\":\"first\"}}\n{\"type\":\"tool_use\"}\nnot json\n{\"type\":\"text\",\"part\":{\"text\":\"# H\"}}\n{\"type\":\"step_finish\"}\n";
        assert_eq!(last_text(events), Ok("# H".to_string()));
        assert_eq!(
            last_text(b"{\"type\":\"step_finish\"}\n"),
            Err(NoAnswer::Missing)
        );
        let failed = b"{\"type\":\"text\",\"part\":{\"text\":\"# H\"}}\n{\"type\":\"error\"}\n";
        assert_eq!(last_text(failed), Err(NoAnswer::Error));
    }

    #[test]
    fn each_clients_usage_is_read_where_it_reports_it() {
        use crate::store::costs::Usage;
        let result = br##"{"type":"result","is_error":false,"result":"# H","total_cost_usd":0.25,"usage":{"input_tokens":10,"cache_creation_input_tokens":1000,"cache_read_input_tokens":5000,"output_tokens":700}}"##;
        let events = b"{\"type\":\"thread.started\"}\n{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":21294,\"cached_input_tokens\":6912,\"output_tokens\":47}}\n";
        let stats = br##"{"response":"# H","stats":{"models":{"m-2.5":{"tokens":{"prompt":900,"candidates":80,"total":980}}}}}"##;
        let plain = b"# Handoff\n";
        let read: Vec<Usage> = [&result[..], events, stats, plain]
            .into_iter()
            .map(usage_of)
            .collect();
        assert_eq!(
            read,
            [
                Usage {
                    input_tokens: Some(6010),
                    output_tokens: Some(700),
                    cost_usd: Some(0.25)
                },
                Usage {
                    input_tokens: Some(21294),
                    output_tokens: Some(47),
                    cost_usd: None
                },
                Usage {
                    input_tokens: Some(900),
                    output_tokens: Some(80),
                    cost_usd: None
                },
                Usage::default()
            ]
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
