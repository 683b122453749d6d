//! The injection, pinned. For a handoff of 2, 28 and 200 citations, all resolving,
//! and one of 28 with three that do not, the text before the handoff is exactly what a model
//! needs — the title, which handoff, one verdict line (and one line per failing citation), the
//! reading rules — and nothing else; its size stays within the budget (650 characters besides
//! the handoff and its paths, plus 160 per failing citation) whatever the number of citations.

use std::path::Path;

use crate::util::{TestEnv, canonical, context, run};

/// A repository of `n` files (`src/f<i>.rs`, three lines each) and a handoff citing each once.
fn cited_repo(env: &TestEnv, name: &str, n: usize) -> (std::path::PathBuf, String) {
    let files: Vec<(String, String)> = (0..n)
        .map(|i| {
            (
                format!("src/f{i:03}.rs"),
                format!("// file {i}\npub fn f{i}() -> u32 {{ {i} }}\n// end\n"),
            )
        })
        .collect();
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, c)| (p.as_str(), c.as_str()))
        .collect();
    let repo = env.repo(name, "main", &refs);
    let pointers: Vec<String> = (0..n)
        .map(|i| format!("src/f{i:03}.rs:2 | pub fn f{i}()"))
        .collect();
    let doc = format!(
        "# Handoff — {n} pointers\nbranch: main\ncheckout: {}\nstatus: measuring\n\n## Do not re-derive\n\n### Decisions\n- Cite every file once, chosen over citing none. `src/f000.rs:2`\n\n### Dead ends\n- None.\n\n### Traps\n- None.\n\n## Next\n1. Measure.\n\n## Pointers\n```text\n{}\n```\n",
        repo.display(),
        pointers.join("\n")
    );
    (repo, doc)
}

/// The injection after `/clear` in `repo` (no marker), split at the handoff: what comes before
/// it, and the handoff as stored.
fn injected(env: &TestEnv, repo: &Path, slot: &Path) -> (String, String) {
    let stored = std::fs::read_to_string(slot).expect("slot");
    let input = serde_json::json!({"session_id": "pin", "cwd": repo, "source": "clear"});
    let text = context(&run(&mut env.hook("session-start", &input.to_string())));
    let at = text
        .find("\n\n---\n# Handoff")
        .expect("the handoff follows the rules");
    assert_eq!(
        &text[at + "\n\n---\n".len()..],
        stored.trim_end(),
        "the handoff is injected whole"
    );
    (text[..at].to_string(), stored)
}

const RULES: &str = "A red citation only means its pointer rotted: re-derive it before relying on it; it never reopens a decision, dead end or trap. Open a pointer when your current step needs it. Then do the first unblocked `## Next` item — unless the user asks for something else.";

#[test]
fn the_injection_is_pinned_for_2_28_and_200_citations() {
    let env = TestEnv::new();
    let shop = env.shop("shop", "main");
    let small = env.stored(&shop, &canonical(&shop.to_string_lossy(), "main"));
    env.age(&small, 3 * 3600 + 60);
    let (head, _) = injected(&env, &shop, &small);
    assert_eq!(
        head,
        format!(
            "# Context reset (SessionStart, source: clear)\n\nHandoff for `main`, written 3 hours ago: `{}`.\n\nGATE: OK — 2 of 2 citations resolve against `{}`.\n\n{RULES}",
            small.display(),
            shop.display()
        )
    );
    assert!(head.chars().count() <= 700, "{}", head.chars().count());
    // The person's line: what reached the model, its verdict and size.
    std::fs::write(&small, canonical(&shop.to_string_lossy(), "main")).expect("unread again");
    let input = serde_json::json!({"session_id": "receipt", "cwd": shop, "source": "clear"});
    let o = run(&mut env.hook("session-start", &input.to_string()));
    let chars = context(&o).chars().count();
    let v: serde_json::Value = serde_json::from_str(&o.stdout).expect("json");
    assert_eq!(
        v["systemMessage"],
        format!(
            "handoff-store: handoff for main injected (gate OK, {:.1}k chars)",
            chars as f64 / 1000.0
        )
    );
    for n in [28, 200] {
        let (repo, doc) = cited_repo(&env, &format!("r{n}"), n);
        let slot = env.stored(&repo, &doc);
        env.age(&slot, 3 * 3600 + 60);
        let (head, _) = injected(&env, &repo, &slot);
        assert_eq!(
            head,
            format!(
                "# Context reset (SessionStart, source: clear)\n\nHandoff for `main`, written 3 hours ago: `{}`.\n\nGATE: OK — {n} of {n} citations resolve against `{}`.\n\n{RULES}",
                slot.display(),
                repo.display()
            )
        );
        assert!(head.chars().count() <= 700, "{n}: {}", head.chars().count());
    }
}

#[test]
fn failing_citations_cost_one_unpadded_line_each() {
    let env = TestEnv::new();
    let (repo, doc) = cited_repo(&env, "r28", 28);
    let doc = doc
        .replace("src/f005.rs:2 | pub fn f5()", "src/f005.rs:1 | pub fn f5()")
        .replace(
            "src/f006.rs:2 | pub fn f6()",
            "src/f006.rs:2 | pub fn gone()",
        )
        .replace(
            "src/f007.rs:2 | pub fn f7()",
            "src/moved.rs:2 | pub fn f7()",
        );
    let slot = env.stored_any(&repo, &doc);
    env.age(&slot, 3 * 3600 + 60);
    let (head, _) = injected(&env, &repo, &slot);
    assert_eq!(
        head,
        format!(
            "# Context reset (SessionStart, source: clear)\n\nHandoff for `main`, written 3 hours ago: `{}`.\n\nGATE: FAILED — 3 of 28 citations do not hold against `{}`:\n- CHANGED src/f005.rs:1 no longer contains: pub fn f5() (found at line 2)\n- CHANGED src/f006.rs:2 no longer contains: pub fn gone()\n- MISSING src/moved.rs:2 | pub fn f7(): no such file or directory\nMoved, not gone (`handoff-store fix` rewrites them): `src/f005.rs:1` → 2.\n\n{RULES}",
            slot.display(),
            repo.display()
        )
    );
    assert!(
        head.chars().count() <= 700 + 3 * 160,
        "{}",
        head.chars().count()
    );
}

/// The budget of docs/hooks.md §2.6 holds in every delivery state of a handoff whose citations
/// all hold — a first delivery after `/clear`, a re-delivery of one already read, after a
/// compaction with and without its automatic write, after a `/clear` whose session went on past
/// the handoff — besides the handoff and the paths it names; the startup offer, paths and all.
#[test]
fn every_delivery_state_keeps_the_budget() {
    let env = TestEnv::new();
    let shop = env.shop("shop", "main");
    let slot = env.stored(&shop, &canonical(&shop.to_string_lossy(), "main"));
    env.age(&slot, 3 * 3600 + 60);
    let stored = std::fs::read_to_string(&slot).expect("slot");
    let transcript = env.write("cleared.jsonl", "{}\n");
    let lock = env.home().join(".claude/state/handoff-fork/e.lock");
    std::fs::create_dir_all(lock.parent().expect("state")).expect("state dir");
    std::fs::write(&lock, "").expect("the automatic write's lock");
    let besides = |source: &str, session: &str| {
        let input = serde_json::json!({"session_id": session, "cwd": shop, "source": source});
        let text = context(&run(&mut env.hook("session-start", &input.to_string())));
        let document = std::fs::read_to_string(&slot).expect("slot");
        let handoff = [stored.trim_end(), document.trim_end()]
            .into_iter()
            .find(|d| text.contains(d));
        let rest = match handoff {
            Some(d) => text.replacen(d, "", 1),
            None => text.clone(),
        };
        // The paths are the user's file system's, not ours to budget.
        let rest = rest
            .replace(&slot.display().to_string(), "")
            .replace(&shop.display().to_string(), "")
            .replace(&transcript.display().to_string(), "");
        (rest.encode_utf16().count(), handoff.is_some(), text)
    };
    let mut states = Vec::new();
    for (state, source, session) in [
        ("clear, first delivery", "clear", "a"),
        ("clear, already read", "clear", "b"),
        ("compact, no automatic write", "compact", "c"),
        ("compact, after its automatic write", "compact", "e"),
    ] {
        let (n, whole, text) = besides(source, session);
        assert!(whole, "{state}: the handoff is delivered: {text}");
        states.push((state, n, 650, text));
    }
    std::fs::write(&slot, &stored).expect("unread again");
    env.age(&slot, 3 * 3600 + 60);
    let (n, whole, text) = besides("startup", "d");
    assert!(!whole, "the offer does not carry the handoff: {text}");
    states.push(("startup offer", n, 400, text));
    // A clear whose marker says the cleared session went on after the handoff (not covered).
    let written = crate::util::mtime(&slot)
        .duration_since(std::time::UNIX_EPOCH)
        .expect("epoch")
        .as_secs() as i64;
    std::fs::create_dir_all(env.marker_dir()).expect("marker dir");
    std::fs::write(
        env.marker_file(&shop, "main"),
        serde_json::json!({
            "ended_at": "2026-12-02T10:00:00Z", "ended_at_epoch": written + 7200,
            "resident_tokens": 250_400, "transcript_path": transcript, "write_attempted": false,
            "handoff": {"present": true}
        })
        .to_string(),
    )
    .expect("marker");
    let (n, whole, text) = besides("clear", "f");
    assert!(
        whole && text.contains("The session before this one was cleared"),
        "{text}"
    );
    states.push(("clear after a marker, not covered", n, 700, text));
    let over: Vec<String> = states
        .iter()
        .filter(|(_, n, max, _)| n > max)
        .map(|(state, n, max, text)| format!("{state}: {n} > {max}\n{text}"))
        .collect();
    assert!(over.is_empty(), "{}", over.join("\n---\n"));
}

/// The `/handoff` skill words the reading rules as the injection does, whole.
#[test]
fn the_skill_gives_the_injections_reading_rules() {
    for file in [
        "contrib/skill/SKILL.md",
        "contrib/claude-code/skills/handoff/SKILL.md",
    ] {
        let skill = std::fs::read_to_string(format!("{}/{file}", env!("CARGO_MANIFEST_DIR")))
            .expect("skill");
        assert!(skill.contains(RULES), "{file} words the rules otherwise");
    }
}
