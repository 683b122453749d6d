//! What an injection costs the next session's context, in characters: for each shipped fixture
//! (2, 28 and 200 citations, all resolving; 28 with three that do not) and each client's
//! SessionStart after `/clear` (Gemini CLI: its first-prompt delivery) and the prompt fallback,
//! the injection minus the handoff it carries — the overhead — against the budget: 700
//! characters, plus 160 per failing citation. The startup offer carries no handoff: all of it
//! counts, against 400. With `HANDOFF_BENCH_BEFORE=<folder of an earlier build>`, that build's
//! overhead too, on the same fixtures. Characters, not time: run with
//! `cargo bench --bench injection`.

mod fixtures;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// One way a client asks for the handoff: its hook, its input, where its output holds the text.
struct Ask {
    name: &'static str,
    args: &'static [&'static str],
    input: fn(&Path, &str) -> serde_json::Value,
    /// A start that offers rather than delivers (no handoff in it).
    offer: bool,
}

const ASKS: &[Ask] = &[
    Ask {
        name: "Claude Code SessionStart (clear)",
        args: &["hook", "session-start"],
        input: |cwd, id| serde_json::json!({"session_id": id, "cwd": cwd, "source": "clear"}),
        offer: false,
    },
    Ask {
        name: "Claude Code UserPromptSubmit (fallback)",
        args: &["hook", "user-prompt-submit"],
        input: |cwd, id| serde_json::json!({"session_id": id, "cwd": cwd, "prompt": "go"}),
        offer: false,
    },
    Ask {
        name: "Codex SessionStart (clear)",
        args: &["hook", "session-start", "--harness", "codex"],
        input: |cwd, id| serde_json::json!({"session_id": id, "cwd": cwd, "source": "clear"}),
        offer: false,
    },
    Ask {
        name: "Gemini CLI BeforeAgent (after its clear)",
        args: &["hook", "user-prompt-submit", "--harness", "gemini"],
        input: |cwd, id| serde_json::json!({"session_id": id, "cwd": cwd, "prompt": "go"}),
        offer: false,
    },
    Ask {
        name: "Copilot CLI sessionStart (new)",
        args: &["hook", "session-start", "--harness", "copilot"],
        input: |cwd, id| serde_json::json!({"sessionId": id, "cwd": cwd, "source": "new"}),
        offer: false,
    },
    Ask {
        name: "Cline TaskStart",
        args: &["hook", "session-start", "--harness", "cline"],
        input: |cwd, id| serde_json::json!({"taskId": id, "workspaceRoots": [cwd], "hookName": "TaskStart"}),
        offer: false,
    },
    Ask {
        name: "Cursor sessionStart",
        args: &["hook", "session-start", "--harness", "cursor"],
        input: |cwd, id| serde_json::json!({"conversation_id": id, "workspace_roots": [cwd]}),
        offer: false,
    },
    Ask {
        name: "Claude Code SessionStart (startup: the offer)",
        args: &["hook", "session-start"],
        input: |cwd, id| serde_json::json!({"session_id": id, "cwd": cwd, "source": "startup"}),
        offer: true,
    },
];

/// The injected text in a client's output, wherever its shape keeps it.
fn injected(stdout: &str) -> Option<String> {
    let v: serde_json::Value = serde_json::from_str(stdout.trim()).ok()?;
    [
        &v["hookSpecificOutput"]["additionalContext"],
        &v["additionalContext"],
        &v["contextModification"],
        &v["additional_context"],
    ]
    .into_iter()
    .find_map(|t| t.as_str().filter(|t| !t.is_empty()).map(str::to_string))
}

/// Store `doc` for `repo` in a fresh store and ask as `ask` does; the injected text.
fn ask(
    bin: &Path,
    home: &Path,
    (repo, doc, slots): (&Path, &Path, &[&str]),
    ask: &Ask,
) -> Option<String> {
    let store = tempdir(home, "store");
    let env = |c: &mut Command| {
        c.env("HOME", home)
            .env("HANDOFF_STORE_DIR", &store)
            .env("LAST_CLEAR_STATE_DIR", store.join("markers"))
            .env("HANDOFF_CLAIM_WINDOW_SECONDS", "0")
            .env_remove("XDG_DATA_HOME")
            .env_remove("CONTEXT_ECONOMY_CHECKOUT")
            .current_dir(repo);
    };
    let mut write = Command::new(bin.join("handoff-store"));
    env(&mut write);
    let written = write
        .args(["write", "--from"])
        .arg(doc)
        .arg("--checkout")
        .arg(repo)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .ok()?;
    if !matches!(written.code(), Some(0 | 1)) {
        return None;
    }
    // Named slots beside it: listed in the injection, never delivered.
    for slot in slots {
        let mut write = Command::new(bin.join("handoff-store"));
        env(&mut write);
        let _ = write
            .args(["write", "--slot", slot, "--from"])
            .arg(doc)
            .arg("--checkout")
            .arg(repo)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
    let mut hook = Command::new(bin.join("handoff-store"));
    env(&mut hook);
    let mut child = hook
        .args(ask.args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    if let Some(mut pipe) = child.stdin.take() {
        let id = store
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let _ = pipe.write_all((ask.input)(repo, &id).to_string().as_bytes());
    }
    let out = child.wait_with_output().ok()?;
    let _ = std::fs::remove_dir_all(&store);
    injected(&String::from_utf8_lossy(&out.stdout))
}

fn tempdir(home: &Path, what: &str) -> PathBuf {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static N: AtomicUsize = AtomicUsize::new(0);
    let dir = home.join(format!(
        "bench-injection-{what}-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// The overhead of `text` carrying the handoff `doc`: everything before the handoff's title
/// line (a cut injection carries an excerpt, from the same title on); all of it for an offer.
fn overhead(text: &str, doc: &str, offer: bool) -> Option<usize> {
    if offer {
        return Some(text.chars().count());
    }
    let title = doc.lines().next()?;
    let at = text.find(&format!("\n{title}\n"))?;
    Some(text[..at].chars().count())
}

fn main() {
    let f = fixtures::ensure();
    let base = fixtures::base();
    let lines_28 = base.join("lines28.md");
    std::fs::write(&lines_28, fixtures::line_handoff(&f.big_repo, 28)).expect("28");
    // Three of the 28 no longer hold: a fragment gone, a line moved, a file gone.
    let failing = fixtures::line_handoff(&f.big_repo, 28);
    let mut lines: Vec<String> = failing.lines().map(str::to_string).collect();
    let pointers: Vec<usize> = lines
        .iter()
        .enumerate()
        .filter(|(_, l)| l.starts_with("src/") && l.contains(" | "))
        .map(|(i, _)| i)
        .collect();
    lines[pointers[3]] = lines[pointers[3]].replace("pub fn", "fn gone");
    lines[pointers[4]] = lines[pointers[4]].replacen(":", ":4", 1);
    lines[pointers[5]] = lines[pointers[5]].replacen("src/", "src/moved/", 1);
    let failing_28 = base.join("lines28-failing.md");
    std::fs::write(&failing_28, lines.join("\n") + "\n").expect("28 failing");
    let cases: [(&str, &Path, &Path, usize, &[&str]); 5] = [
        ("2 citations", &f.small_repo, &f.small_handoff, 0, &[]),
        ("28 citations", &f.big_repo, &lines_28, 0, &[]),
        ("200 citations", &f.big_repo, &f.lines_200, 0, &[]),
        ("28 citations, 3 failing", &f.big_repo, &failing_28, 3, &[]),
        (
            "2 citations, 2 named slots beside",
            &f.small_repo,
            &f.small_handoff,
            0,
            &["api", "ui"],
        ),
    ];
    let after = std::env::current_exe()
        .ok()
        .and_then(|e| e.parent()?.parent().map(Path::to_path_buf))
        .expect("target dir");
    let before = std::env::var_os("HANDOFF_BENCH_BEFORE").map(PathBuf::from);
    println!(
        "| fixture | client, event | before: injection − handoff | after: injection − handoff | after: whole injection | budget | met |"
    );
    println!("| --- | --- | ---: | ---: | ---: | ---: | --- |");
    for (name, repo, doc, failing, slots) in cases {
        let text = std::fs::read_to_string(doc).expect("fixture handoff");
        for a in ASKS {
            if a.offer && failing > 0 {
                continue;
            }
            let measure = |bin: &Path| {
                ask(bin, &f.home, (repo, doc, slots), a)
                    .and_then(|t| overhead(&t, &text, a.offer).map(|o| (o, t.chars().count())))
            };
            let now = measure(&after);
            let then = before.as_deref().map(measure);
            // A named slot costs its line, and the list its head and the command that reads one.
            let listed = if slots.is_empty() {
                0
            } else {
                160 + 80 * slots.len()
            };
            let budget = if a.offer {
                400
            } else {
                700 + 160 * failing + listed
            };
            let shown =
                |m: Option<(usize, usize)>| m.map_or("—".to_string(), |(o, _)| o.to_string());
            println!(
                "| {name} | {} | {} | {} | {} | ≤ {budget} | {} |",
                a.name,
                then.map_or("not run".to_string(), shown),
                shown(now),
                now.map_or("—".to_string(), |(_, t)| t.to_string()),
                match now {
                    Some((o, _)) if o <= budget => "yes",
                    Some(_) => "**no**",
                    None => "nothing injected",
                }
            );
        }
    }
}
