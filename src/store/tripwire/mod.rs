//! Tripwires (docs/hooks.md §10): what each dead end and trap of a slot's handoff points at —
//! the paths it cites (its backticked `path:N` evidence and `dir/file` mentions, by the gate's
//! own classification) and the commands it quotes in backticks (`command.rs`) — computed once
//! per version of the slot and kept beside it in `<store>/.tripwires/<slot>.json`, keyed by
//! the slot file's state, so a tool call reads one small file and never parses, gates or walks
//! git. A cited pointer's verdict is resolved when the wires are built (the text rule only,
//! against the checkout the tool call came from).

pub(crate) mod command;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::Store;
use super::info::FileState;
use crate::document::Document;
use crate::document::markdown::backtick_spans;
use crate::gate::coverage::{Claim, classify};
pub(crate) use command::Simple;

/// The most of a cache file read (a handoff's wires are a few kilobytes; the bounds below keep
/// a hostile one under this, so it is never rebuilt at every call for its size).
const CACHE_CAP: u64 = 1024 * 1024;
/// The most items a handoff arms, triggers an item has of each kind, and characters a quoted
/// span may hold.
const MAX_WIRES: usize = 100;
const MAX_TRIGGERS: usize = 8;
const MAX_SPAN: usize = 200;
/// The longest quote of an item a note carries.
const QUOTE_CHARS: usize = 140;

/// Which list an item is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Kind {
    DeadEnd,
    Trap,
}

impl Kind {
    pub(crate) fn word(self) -> &'static str {
        match self {
            Kind::DeadEnd => "dead end",
            Kind::Trap => "trap",
        }
    }
}

/// A path an item cites: repository-relative, a folder when it ends in `/`, with the line
/// range of a `path:N` and the verdict of its pointer when the Pointers block lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct CitedPath {
    pub(crate) path: String,
    pub(crate) shown: String,
    pub(crate) lines: Option<(u64, u64)>,
    pub(crate) verdict: Option<String>,
}

/// One dead end or trap and what trips it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Wire {
    pub(crate) kind: Kind,
    /// Stable for the item's text: what the once-per-session claim is named by.
    pub(crate) id: String,
    /// The item's first line, shortened, its hidden characters made visible.
    pub(crate) quote: String,
    pub(crate) commands: Vec<Simple>,
    pub(crate) paths: Vec<CitedPath>,
}

/// A slot's wires, with the slot state they were built from and the handoff's `from:` (a
/// teammate's handoff keeps its frame).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Wires {
    pub(crate) state: (u64, u64, (i64, i64), (i64, i64)),
    pub(crate) from: Option<String>,
    pub(crate) wires: Vec<Wire>,
}

/// What trips each dead end and trap of `doc` (no verdicts), the items with nothing to trip
/// on left out.
pub(crate) fn wires_of(doc: &Document) -> Vec<Wire> {
    let mut wires = Vec::new();
    for (kind, name) in [(Kind::DeadEnd, "Dead ends"), (Kind::Trap, "Traps")] {
        for item in doc.item_blocks(3, name) {
            let wire = wire_of(kind, &item);
            if (!wire.commands.is_empty() || !wire.paths.is_empty()) && wires.len() < MAX_WIRES {
                wires.push(wire);
            }
        }
    }
    wires
}

impl Wires {
    /// The wires of `doc` (no verdicts yet), for a slot in `state`.
    fn of(doc: &Document, state: FileState) -> Wires {
        Wires {
            state: key(state),
            from: doc.field("from").map(|f| f.value),
            wires: wires_of(doc),
        }
    }

    /// The wires of the slot `name` in `store`, from its cache when that was built from the
    /// slot as it is; else built now (verdicts resolved against `checkout`), and kept as the
    /// cache when `keep` (the hook; `status` reads and writes nothing). `None`: no slot (a slot
    /// with nothing to trip on gives an empty list).
    pub(crate) fn load(store: &Store, name: &str, checkout: &Path, keep: bool) -> Option<Wires> {
        let slot = store.path_of(name);
        let state = FileState::of(&crate::fs::metadata(&slot).ok()?);
        let cache = cache_path(store, name);
        if let Some(cached) = read_cache(&cache).filter(|w| w.state == key(state)) {
            return Some(cached);
        }
        let bytes = super::slot::read_capped(&slot).ok()?;
        let text = String::from_utf8_lossy(&bytes);
        let doc = Document::parse(&text);
        let mut wires = Wires::of(&doc, state);
        wires.resolve(&doc, checkout);
        if keep
            && let Ok(bytes) = serde_json::to_vec(&wires)
            && crate::store::slot::create_private_dir(&store.dir.join(".tripwires")).is_ok()
        {
            let _ = crate::durable::write(&cache, &bytes, None);
        }
        Some(wires)
    }

    /// Each cited path's verdict, where the Pointers block lists it: that pointer line
    /// resolved by the text rule against `checkout`.
    fn resolve(&mut self, doc: &Document, checkout: &Path) {
        let Some(block) = doc.citation_block() else {
            return;
        };
        let lines = crate::citation::parse_lines(block.iter().map(|b| (b.line, b.text.as_str())));
        let wanted: Vec<crate::citation::CitationLine> = lines
            .into_iter()
            .filter(|l| {
                let shown = l.citation.display();
                self.wires
                    .iter()
                    .any(|w| w.paths.iter().any(|p| p.shown == shown))
            })
            .collect();
        if wanted.is_empty() {
            return;
        }
        let Ok(work_tree) = crate::git::open_work_tree(checkout, true) else {
            return;
        };
        let resolution = crate::resolve::Resolver::new(&work_tree).resolve(&wanted);
        for entry in resolution.entries {
            let shown = entry.citation.display();
            for path in self.wires.iter_mut().flat_map(|w| w.paths.iter_mut()) {
                if path.shown == shown {
                    path.verdict = Some(entry.verdict.as_str().to_ascii_uppercase());
                }
            }
        }
    }
}

/// Where the wires of slot `name` are kept.
pub(crate) fn cache_path(store: &Store, name: &str) -> PathBuf {
    store.dir.join(".tripwires").join(format!("{name}.json"))
}

fn read_cache(path: &Path) -> Option<Wires> {
    let bytes = crate::fs::read_regular(path, CACHE_CAP)?;
    serde_json::from_slice(&bytes).ok()
}

fn key(s: FileState) -> (u64, u64, (i64, i64), (i64, i64)) {
    (s.ino, s.size, s.mtime, s.ctime)
}

/// One item's wire: its quoted commands and cited paths.
fn wire_of(kind: Kind, item: &str) -> Wire {
    let mut commands: Vec<Simple> = Vec::new();
    let mut paths: Vec<CitedPath> = Vec::new();
    for line in item.lines() {
        for span in backtick_spans(line).filter(|s| s.chars().count() <= MAX_SPAN) {
            if let Some((claim, shown)) = classify(span) {
                if paths.len() < MAX_TRIGGERS && paths.iter().all(|p| p.shown != shown) {
                    paths.push(cited(claim, shown));
                }
            } else if let Some(c) = command::quoted(span)
                && commands.len() < MAX_TRIGGERS
                && !commands.contains(&c)
            {
                commands.push(c);
            }
        }
    }
    let first = item.lines().next().unwrap_or_default();
    let first = first
        .trim_start()
        .trim_start_matches(['-', '*', '+'])
        .trim_start();
    let shown = crate::text::visible(first);
    let cut: String = shown.chars().take(QUOTE_CHARS).collect();
    // An ellipsis where the quote stops short: of its line, or of the item's further lines.
    let quote = if item.lines().count() > 1 {
        format!("{} …", cut.trim_end())
    } else if cut.chars().count() < shown.chars().count() {
        format!("{}…", cut.trim_end())
    } else {
        cut
    };
    Wire {
        kind,
        id: crate::text::hex_md5(format!("{kind:?}\n{item}").as_bytes())[..12].to_string(),
        quote,
        commands,
        paths,
    }
}

/// A cited path from a classified token: `path:N` (its range) or a mention.
fn cited(claim: Claim, shown: String) -> CitedPath {
    let (path, lines) = match claim {
        Claim::Evidence => {
            let c = crate::citation::Citation::parse(&shown);
            let range = c
                .as_ref()
                .and_then(|c| c.line_ref())
                .and_then(|r| Some((r.smallest()?.value()?, r.largest()?.value()?)));
            (c.map_or_else(|| shown.clone(), |c| c.citation), range)
        }
        Claim::Mention => (shown.clone(), None),
    };
    CitedPath {
        path: path.trim_start_matches("./").to_string(),
        shown,
        lines,
        verdict: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = "# Handoff — t\n\n## Do not re-derive\n\n### Decisions\n- Keep `make all`.\n\n### Dead ends\n- `make test-slow` hangs on the fixture lock; see `src/fixture.rs:12`.\n- Tried the cache in `vendor/cache/`: stale.\n\n### Traps\n- `src/legacy.rs` looks dead and is loaded by name.\n- None of this matters.\n\n## Next\n1. `make deploy`\n";

    fn state() -> FileState {
        FileState {
            ino: 1,
            size: 2,
            mtime: (3, 4),
            ctime: (5, 6),
        }
    }

    #[test]
    fn dead_ends_and_traps_yield_their_commands_and_paths_and_nothing_else_does() {
        let wires = Wires::of(&Document::parse(DOC), state()).wires;
        assert_eq!(wires.len(), 3, "{wires:#?}");
        assert_eq!(wires[0].kind, Kind::DeadEnd);
        assert_eq!(wires[0].commands[0].shown(), "make test-slow");
        assert_eq!(wires[0].paths[0].path, "src/fixture.rs");
        assert_eq!(wires[0].paths[0].lines, Some((12, 12)));
        assert_eq!(wires[1].paths[0].path, "vendor/cache/");
        assert_eq!(wires[2].kind, Kind::Trap);
        assert_eq!(wires[2].paths[0].path, "src/legacy.rs");
        assert!(wires[2].quote.starts_with("`src/legacy.rs` looks dead"));
        let all: Vec<String> = wires
            .iter()
            .flat_map(|w| w.commands.iter().map(Simple::shown))
            .collect();
        assert_eq!(all, ["make test-slow"], "Decisions and Next trip nothing");
        assert_ne!(wires[0].id, wires[1].id);
    }

    /// A hostile handoff (two hundred items of twenty long quotes each) arms a bounded set whose
    /// cache stays under what a tool call reads.
    #[test]
    fn a_hostile_handoff_arms_a_bounded_set() {
        let spans: String = (0..20)
            .map(|i| format!("`make target-{i} {}` ", "x".repeat(150)))
            .collect();
        let items: String = (0..200).map(|i| format!("- {i} {spans}\n")).collect();
        let doc = DOC.replace("### Traps\n", &format!("### Traps\n{items}"));
        let wires = Wires::of(&Document::parse(&doc), state());
        assert_eq!(wires.wires.len(), MAX_WIRES);
        assert!(wires.wires.iter().all(|w| w.commands.len() <= MAX_TRIGGERS));
        let bytes = serde_json::to_vec(&wires).unwrap_or_default();
        assert!((bytes.len() as u64) < CACHE_CAP, "{} bytes", bytes.len());
    }
}
