//! Property tests: the document, citation, hook-input and `progress:` parsers on
//! grammar-aware random input (headings, fences, `|`, `:`, backticks, CRLF, invalid UTF-8, NUL,
//! huge lines, deep nesting), in-process; and the contracts that hold on any input, through the
//! real binaries with a bounded case count. The coverage-guided campaign is in FUZZING.md.

use std::io::Write;
use std::path::Path;

use handoff_store::citation::{Citation, LineRef};
use handoff_store::document::Document;
use handoff_store::store::slot::{Rewrite, progress_of, rewrite_progress};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

use crate::util::{TestEnv, run, version};

/// One line of a handoff-shaped document: the grammar's tokens, mixed with noise.
fn doc_line() -> impl Strategy<Value = String> {
    let token = prop_oneof![
        Just("# Handoff — x".to_string()),
        Just("## Pointers".to_string()),
        Just("## Do not re-derive".to_string()),
        Just("### Decisions".to_string()),
        Just("### Dead ends".to_string()),
        Just("### Traps".to_string()),
        Just("## Next".to_string()),
        Just("## Unverifiable".to_string()),
        Just("```".to_string()),
        Just("```text".to_string()),
        Just("~~~".to_string()),
        Just("branch: main".to_string()),
        Just("checkout: .".to_string()),
        Just("status: s".to_string()),
        Just("progress: complete".to_string()),
        Just("progress: writing".to_string()),
        Just("progress:".to_string()),
        Just("- `src/a.rs:12` decided".to_string()),
        Just("src/a.rs:1-3,7 | fn main".to_string()),
        Just("1. `app/x.php:0-` | `x`".to_string()),
        Just("|".to_string()),
        Just(":".to_string()),
        Just("`".to_string()),
        Just("\r".to_string()),
        Just(String::new()),
        Just("AKIAIOSFODNN7EXAMPLE".to_string()),
    ];
    prop_oneof![
        4 => token,
        2 => "[ -~]{0,40}",
        1 => any::<String>().prop_map(|s| s.chars().take(60).collect()),
        1 => (1usize..200, "[#>`|: -]").prop_map(|(n, c)| c.repeat(n)),
        1 => (1usize..20_000).prop_map(|n| "a/".repeat(n / 2)),
        1 => (1usize..5_000).prop_map(|n| format!("x.rs:{}", "9".repeat(n))),
    ]
}

/// A document of such lines, LF or CRLF.
fn document() -> impl Strategy<Value = String> {
    (prop::collection::vec(doc_line(), 0..50), any::<bool>())
        .prop_map(|(lines, crlf)| lines.join(if crlf { "\r\n" } else { "\n" }))
}

/// Document bytes, sometimes with a NUL or invalid UTF-8 spliced in.
fn document_bytes() -> impl Strategy<Value = Vec<u8>> {
    (
        document(),
        prop::option::of((
            any::<prop::sample::Index>(),
            prop_oneof![
                Just(vec![0u8]),
                Just(vec![0xff, 0xfe]),
                Just(vec![0xc3]),
                Just(vec![0xef, 0xbb, 0xbf]),
            ],
        )),
    )
        .prop_map(|(text, splice)| {
            let mut bytes = text.into_bytes();
            if let Some((at, junk)) = splice {
                let at = at.index(bytes.len() + 1);
                bytes.splice(at..at, junk);
            }
            bytes
        })
}

fn runner(cases: u32) -> TestRunner {
    TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    })
}

#[test]
fn the_document_parser_is_total() {
    runner(512)
        .run(&document(), |text| {
            let doc = Document::parse(&text);
            let _ = doc.citation_block();
            let _ = doc.field("progress");
            Ok(())
        })
        .expect("no panic");
}

#[test]
fn the_citation_parser_is_total_and_its_output_normal() {
    runner(2048)
        .run(&doc_line(), |line| {
            if let Some(c) = Citation::parse(&line) {
                prop_assert!(!c.citation.is_empty() && !c.citation.starts_with('#'));
                prop_assert!(!c.citation.contains('`'));
                if let Some(lr) = &c.lineref {
                    prop_assert!(!lr.is_empty());
                    prop_assert!(
                        lr.bytes()
                            .all(|b| b.is_ascii_digit() || b == b',' || b == b'-')
                    );
                    let parsed: LineRef = LineRef::parse(lr);
                    let _ = (parsed.covers(1), parsed.largest(), parsed.empty_group());
                }
                if let Some(f) = &c.fragment {
                    prop_assert!(!f.is_empty() && !f.contains('`'));
                    // Trimmed of the contract's whitespace (docs/gate.md §1.6), not of all
                    // Unicode's: a fragment of U+2000 is content (found by this test).
                    prop_assert_eq!(handoff_store::text::trim(f), f.as_str());
                }
                let _ = c.display();
            }
            Ok(())
        })
        .expect("citation parser");
}

#[test]
fn a_progress_rewrite_reads_back_and_is_idempotent() {
    let value = prop_oneof![Just("writing"), Just("complete"), Just("consumed")];
    runner(1024)
        .run(&(document_bytes(), value), |(bytes, value)| {
            match rewrite_progress(&bytes, value) {
                Rewrite::Changed { bytes: new, .. } => {
                    prop_assert_eq!(progress_of(&new), Some(value.to_string()));
                    prop_assert_eq!(rewrite_progress(&new, value), Rewrite::Same);
                }
                Rewrite::Same => prop_assert_eq!(progress_of(&bytes), Some(value.to_string())),
                Rewrite::NoField => prop_assert_eq!(progress_of(&bytes), None),
            }
            Ok(())
        })
        .expect("progress rewrite");
}

/// Lines of the text report that start with `prefix`.
fn count(text: &str, prefix: &str) -> usize {
    text.lines().filter(|l| l.starts_with(prefix)).count()
}

#[test]
fn the_gate_exits_0_1_or_2_on_any_bytes_and_its_text_and_json_agree() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    runner(48)
        .run(&document_bytes(), |bytes| {
            let file = env.write("doc.md", &bytes);
            let text = run(env.verify().arg(&file).arg(&repo));
            let json = run(env
                .verify()
                .arg(&file)
                .arg(&repo)
                .args(["--format", "json"]));
            prop_assert!([0, 1, 2].contains(&text.code), "exit {}", text.code);
            prop_assert_eq!(text.code, json.code);
            let v: serde_json::Value = serde_json::from_str(&json.stdout).expect("JSON report");
            prop_assert_eq!(v["exit_code"].as_i64(), Some(i64::from(json.code)));
            let all = format!("{}{}", text.stdout, text.stderr);
            prop_assert_eq!(
                v["counts"]["errors"].as_u64(),
                Some(count(&all, "ERROR") as u64)
            );
            prop_assert_eq!(
                v["counts"]["warns"].as_u64(),
                Some(count(&all, "WARN") as u64)
            );
            let verdicts = |name: &str| {
                v["citations"]
                    .as_array()
                    .map_or(0, |a| a.iter().filter(|c| c["verdict"] == name).count())
            };
            prop_assert_eq!(verdicts("ok"), count(&text.stdout, "OK       "));
            prop_assert_eq!(verdicts("changed"), count(&text.stdout, "CHANGED  "));
            prop_assert_eq!(verdicts("missing"), count(&text.stdout, "MISSING  "));
            Ok(())
        })
        .expect("gate");
}

/// What remains of a document once the envelope fields `write` rewrites are set aside.
fn without_rewritten_fields(text: &str) -> Vec<&str> {
    text.lines()
        .filter(|l| {
            ![
                "branch:",
                "checkout:",
                "progress:",
                "head:",
                "write_session:",
            ]
            .iter()
            .any(|f| l.starts_with(f))
        })
        .collect()
}

#[test]
fn what_write_accepts_read_returns_byte_identical_but_for_the_header_rewrites() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    let extra = prop::collection::vec("[ -~]{0,60}", 0..6);
    let accepted = std::cell::Cell::new(0);
    runner(16)
        .run(&(extra, any::<bool>()), |(lines, crlf)| {
            let mut doc = version(&repo, "prop");
            let insert: String = lines.iter().map(|l| format!("- {l}\n")).collect();
            doc = doc.replacen("### Traps\n", &format!("### Traps\n{insert}"), 1);
            if crlf {
                doc = doc.replace('\n', "\r\n");
            }
            let o = run(env
                .store()
                .args(["write", "--force", "--checkout"])
                .arg(&repo)
                .write_stdin(doc.clone()));
            if o.code > 1 {
                return Ok(()); // refused: nothing to read back
            }
            accepted.set(accepted.get() + 1);
            let read = run(env
                .store()
                .args(["read", "--no-consume", "--format", "json"])
                .arg(&repo));
            let v: serde_json::Value = serde_json::from_str(&read.stdout).expect("read JSON");
            let got = v["document"].as_str().expect("document").to_string();
            let slot = v["path"].as_str().expect("path");
            prop_assert_eq!(
                got.as_bytes(),
                std::fs::read(Path::new(slot)).expect("slot")
            );
            prop_assert_eq!(
                without_rewritten_fields(&got),
                without_rewritten_fields(&doc)
            );
            Ok(())
        })
        .expect("write then read");
    assert!(accepted.get() > 0, "write accepted none of the documents");
}

#[test]
fn every_hook_exits_zero_and_prints_nothing_or_one_json_object_within_its_cap() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    env.stored(&repo, &version(&repo, "hooked"));
    let cwd = prop_oneof![
        Just(serde_json::json!(repo)),
        Just(serde_json::json!(env.path("nowhere"))),
        Just(serde_json::json!("../../etc")),
        Just(serde_json::json!(42)),
    ];
    let source = prop_oneof![
        Just(serde_json::json!("clear")),
        Just(serde_json::json!("startup")),
        Just(serde_json::json!("compact")),
        "[ -~]{0,12}".prop_map(serde_json::Value::from),
    ];
    let json_input = (cwd, source, "[ -~/.]{0,30}").prop_map(|(cwd, source, sid)| {
        serde_json::json!({"cwd": cwd, "source": source, "session_id": sid,
            "transcript_path": "/dev/null", "trigger": "manual"})
        .to_string()
        .into_bytes()
    });
    let input = prop_oneof![3 => json_input, 1 => document_bytes()];
    let event = prop_oneof![
        Just("session-start"),
        Just("session-end"),
        Just("pre-compact")
    ];
    runner(48)
        .run(&(event, input), |(event, bytes)| {
            let out = env
                .store()
                .args(["hook", event])
                .env("LAST_CLEAR_STATE_DIR", env.marker_dir())
                .env("HANDOFF_WRITER", "/bin/true")
                .write_stdin(bytes)
                .output()
                .expect("hook runs");
            prop_assert_eq!(out.status.code(), Some(0));
            let stdout = String::from_utf8_lossy(&out.stdout);
            if event == "pre-compact" {
                // Plain text: the compaction's custom instructions, never JSON.
                prop_assert!(stdout.is_empty() || stdout.starts_with("Keep verbatim"));
            } else if !stdout.trim().is_empty() {
                let v: serde_json::Value = serde_json::from_str(&stdout).expect("one JSON object");
                prop_assert!(v.is_object());
                let context = v["hookSpecificOutput"]["additionalContext"]
                    .as_str()
                    .unwrap_or("");
                prop_assert!(context.encode_utf16().count() <= 10_000);
            }
            Ok(())
        })
        .expect("hooks");
    let _ = std::io::stdout().flush();
}

/// The case the property test above found: only the contract's whitespace is trimmed from a
/// fragment (docs/gate.md §1.6); U+2000 is content.
#[test]
fn a_fragment_of_a_unicode_space_is_content() {
    let c = Citation::parse("અ|\u{2000}").expect("a citation");
    assert_eq!(c.fragment.as_deref(), Some("\u{2000}"));
    assert_eq!(
        handoff_store::text::trim(c.fragment.as_deref().unwrap_or("")),
        "\u{2000}"
    );
}
