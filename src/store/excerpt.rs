//! Two short views of a stored handoff that change nothing (docs/store.md §9.16, §9.17):
//! the **reground** — Decisions, Dead ends, Traps and Next with one verdict line, for a session
//! that drifted mid-way — and the **brief** for a subagent — its task, the decisions and traps
//! that touch its paths (or none), and those paths' pointers with their verdicts. Neither
//! consumes the handoff; each has a hard size cap and says where the whole file is when cut.

use serde::Serialize;

use super::verdict::{GateVerdict, gate_stored};
use super::{HandoffInfo, Store, Target};
use crate::document::{Document, markdown};

/// The reground's cap, in characters.
pub(crate) const REGROUND_MAX: usize = 2_000;
/// The brief's cap, in characters.
pub(crate) const BRIEF_MAX: usize = 1_500;

/// The stored handoff of the target's branch, gated: its path, document and verdict. `None`
/// when the slot holds no handoff (or a placeholder).
pub(crate) struct Stored {
    pub(crate) path: String,
    /// As the gate parsed it (credential lines blanked), or parsed here for an external gate.
    pub(crate) document: std::sync::Arc<Document>,
    pub(crate) verdict: GateVerdict,
    /// The frame of a teammate's handoff ([`super::authorship::teammate_frame`]).
    pub(crate) teammate: Option<String>,
}

impl Stored {
    pub(crate) fn of(store: &Store, target: &Target) -> Option<Stored> {
        let info = HandoffInfo::read(store, &target.name).filter(|i| !i.is_placeholder())?;
        let path = store.path_of(&target.name);
        let bytes = super::slot::read_capped(&path).ok()?;
        let verdict = gate_stored(&path, &bytes, &info, Some(&target.facts.checkout));
        let document = verdict.document.clone().unwrap_or_else(|| {
            std::sync::Arc::new(Document::parse(
                &String::from_utf8_lossy(&bytes).replace('\r', ""),
            ))
        });
        Some(Stored {
            path: path.to_string_lossy().into_owned(),
            document,
            verdict,
            teammate: info.teammate,
        })
    }

    /// The document's task (its title without `# Handoff — `).
    fn title(&self) -> String {
        self.document
            .lines
            .iter()
            .find_map(|l| crate::document::title_of(l))
            .unwrap_or_default()
            .to_string()
    }
}

/// A view, and whether it was cut to its cap.
#[derive(Debug, Serialize)]
pub(crate) struct View {
    pub(crate) path: String,
    /// Set when the handoff is a teammate's: how its text is to be taken.
    pub(crate) teammate: Option<String>,
    pub(crate) text: String,
    pub(crate) cut: bool,
}

/// `text` within `max` characters: whole lines, then the line saying where the rest is.
fn capped(lines: Vec<String>, max: usize, path: &str) -> (String, bool) {
    let tail = format!("[… cut to {max} characters: the whole handoff is {path}]");
    let whole: String = lines.iter().map(|l| format!("{l}\n")).collect();
    if whole.chars().count() <= max {
        return (whole, false);
    }
    let room = max.saturating_sub(tail.chars().count() + 1);
    let mut text = String::new();
    let mut used = 0;
    for line in &lines {
        let n = line.chars().count() + 1;
        if used + n > room {
            break;
        }
        text.push_str(line);
        text.push('\n');
        used += n;
    }
    if used == 0 {
        // Not even the first line fits whole: its start, at a character boundary.
        text = lines
            .first()
            .map(|l| l.chars().take(room.saturating_sub(1)).collect::<String>() + "\n")
            .unwrap_or_default();
    }
    text.push_str(&tail);
    text.push('\n');
    (text, true)
}

/// `## <name>` (or `###`) and its lines, trailing blank lines dropped; nothing when empty.
fn section(out: &mut Vec<String>, doc: &Document, level: usize, name: &str) {
    let mut lines: Vec<String> = doc
        .section_lines(level, name)
        .into_iter()
        .map(str::to_string)
        .collect();
    while lines
        .last()
        .is_some_and(|l| crate::text::trim(l).is_empty())
    {
        lines.pop();
    }
    while lines
        .first()
        .is_some_and(|l| crate::text::trim(l).is_empty())
    {
        lines.remove(0);
    }
    if lines.is_empty() {
        return;
    }
    out.push(format!("{} {name}", "#".repeat(level)));
    out.extend(lines);
}

/// The reground of the target's handoff (no drift, nothing consumed).
pub(crate) fn reground(stored: &Stored, reference: &str) -> View {
    let doc = &stored.document;
    let mut lines = vec![
        format!("# Reground — {} (`{reference}`)", stored.title()),
        stored.verdict.line.clone(),
    ];
    if let Some(frame) = &stored.teammate {
        lines.insert(1, format!("This handoff was {frame}"));
    }
    for name in ["Decisions", "Dead ends", "Traps"] {
        section(&mut lines, doc, 3, name);
    }
    section(&mut lines, doc, 2, "Next");
    let (text, cut) = capped(lines, REGROUND_MAX, &stored.path);
    View {
        path: stored.path.clone(),
        teammate: stored.teammate.clone(),
        text,
        cut,
    }
}

/// The paths an item cites in backticks (`src/a.rs:24`, `app/Mail/`), as written.
fn cited_paths(item: &str) -> Vec<String> {
    item.lines()
        .flat_map(markdown::backtick_spans)
        .filter_map(crate::citation::Citation::parse)
        .map(|c| c.citation)
        .filter(|c| crate::text::is_path_shaped(c) && !c.contains("://"))
        .collect()
}

/// Whether `path` (as cited) falls under one of `globs`; every path does without globs.
fn wanted(path: &str, globs: &[String]) -> bool {
    globs.is_empty() || globs.iter().any(|g| crate::git::glob_matches(g, path))
}

/// The brief for a subagent: the task, the decisions and traps that cite a path under `globs`
/// or none, and the pointers under `globs` with their verdicts.
pub(crate) fn brief(
    stored: &Stored,
    reference: &str,
    globs: &[String],
    task: Option<&str>,
) -> View {
    let doc = &stored.document;
    let task = task.map_or_else(|| stored.title(), str::to_string);
    let mut lines = vec![
        format!("# Brief — {task}"),
        match &stored.teammate {
            // A teammate's decisions are claims to check, never settled for this session.
            Some(frame) => format!("From the handoff for `{reference}`, {frame}"),
            None => format!(
                "From the handoff for `{reference}`; decided there, not to be reopened without the user."
            ),
        },
    ];
    for (name, heading) in [("Decisions", "## Decisions"), ("Traps", "## Traps")] {
        let items: Vec<String> = doc
            .item_blocks(3, name)
            .into_iter()
            .filter(|item| {
                let paths = cited_paths(item);
                paths.is_empty() || paths.iter().any(|p| wanted(p, globs))
            })
            .collect();
        if !items.is_empty() {
            lines.push(heading.to_string());
            lines.extend(items);
        }
    }
    let pointers = pointer_lines(&stored.verdict, globs);
    if !pointers.is_empty() {
        lines.push("## Pointers".into());
        lines.extend(pointers);
    }
    // Nothing under the paths: one line that says so, not an empty brief.
    if lines.len() == 2 && !globs.is_empty() {
        lines = vec![format!(
            "Nothing in the handoff for `{reference}` touches {}: no decision, trap or pointer.",
            globs.join(", ")
        )];
    }
    let (text, cut) = capped(lines, BRIEF_MAX, &stored.path);
    View {
        path: stored.path.clone(),
        teammate: stored.teammate.clone(),
        text,
        cut,
    }
}

/// A line per pointer under `globs`: the citation and its verdict (from the gate's report).
fn pointer_lines(verdict: &GateVerdict, globs: &[String]) -> Vec<String> {
    let entries = verdict
        .report
        .as_ref()
        .and_then(|r| r["citations"]["entries"].as_array().cloned())
        .unwrap_or_default();
    entries
        .iter()
        .filter(|e| {
            let cited = e["citation"].as_str().unwrap_or_default();
            let resolved = e["resolved"].as_str().unwrap_or_default();
            wanted(cited, globs) || (!resolved.is_empty() && wanted(resolved, globs))
        })
        .map(|e| {
            let shown = e["display"].as_str().unwrap_or_default();
            let verdict = e["verdict"].as_str().unwrap_or_default();
            // Where it is now, when one place is known: a line of the same file, or another file.
            let now = match (e["now"]["path"].as_str(), e["now"]["line"].as_u64()) {
                (Some(path), Some(n)) if Some(path) == e["resolved"].as_str() => {
                    Some(format!("line {n}"))
                }
                // A path of the tree, not of the handoff: nothing in it may act on a reader.
                (Some(path), Some(n)) => Some(format!("{}:{n}", crate::text::visible(path))),
                (Some(path), None) => Some(crate::text::visible(path).into_owned()),
                _ => None,
            };
            let word = match (verdict, now) {
                ("ok", _) => "OK".to_string(),
                ("changed", Some(now)) => format!("CHANGED (now at {now})"),
                ("changed", None) => "CHANGED".into(),
                (_, Some(now)) => format!("MISSING (now at {now})"),
                (_, None) => "MISSING".into(),
            };
            format!("- `{shown}` — {word}")
        })
        .collect()
}
