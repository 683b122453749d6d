//! The tripwire check (docs/hooks.md §10): a tool call an agent is making — a shell command,
//! or an edit of a file — against the dead ends and traps of the handoff of its own branch.
//! Reading one small cache beside the slot (`store::tripwire`); no gate, no git history.
//! Which match is said, and once per session, is the hook's business.

use std::path::{Component, Path, PathBuf};

use serde::Serialize;

use crate::store::tripwire::{CitedPath, Kind, Simple, Wire, Wires};
use crate::store::{Store, Target};

/// A tool call, as the client's hook input gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Call {
    /// A shell command line.
    Shell(String),
    /// A file written or edited: its path (absolute, or relative to the session's directory),
    /// and the lines it changes where the client says.
    Edit {
        path: PathBuf,
        lines: Option<(u64, u64)>,
    },
    /// The files one patch adds, updates, deletes or moves (an `apply_patch` envelope).
    Patch(Vec<PathBuf>),
}

/// One dead end or trap the call repeats.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Trip {
    pub(crate) kind: Kind,
    /// Names the item for the once-per-session rule.
    pub(crate) id: String,
    pub(crate) quote: String,
    /// The quoted command or the cited path the call matched.
    pub(crate) matched: String,
    /// The pointer the item cites and its verdict, where the Pointers block lists it.
    pub(crate) pointer: Option<(String, String)>,
    /// The handoff's `from:` (a teammate's handoff), as stored.
    pub(crate) from: Option<String>,
}

/// The items of `target`'s handoff that `call` repeats, in the handoff's order; nothing where
/// the repository's settings switch tripwires (or everything) off, or the branch has no
/// handoff.
pub(crate) fn check(store: &Store, target: &Target, call: &Call) -> Vec<Trip> {
    let settings = target.settings();
    if settings.enabled() == crate::settings::Enabled::Off || !settings.tripwires() {
        return Vec::new();
    }
    let Some(wires) = Wires::load(store, &target.name, &target.facts.checkout, true) else {
        return Vec::new();
    };
    trips(&wires.wires, &target.facts.checkout, call)
        .into_iter()
        .map(|(wire, matched, path)| {
            // The pointer: the path that matched, else the item's first one that has a verdict.
            let pointer = path
                .filter(|p| p.verdict.is_some())
                .or_else(|| wire.paths.iter().find(|p| p.verdict.is_some()))
                .and_then(|p| Some((p.shown.clone(), p.verdict.clone()?)));
            Trip {
                kind: wire.kind,
                id: wire.id.clone(),
                quote: wire.quote.clone(),
                matched,
                pointer,
                from: wires.from.clone(),
            }
        })
        .collect()
}

/// The items of `wires` that `call` repeats, in their order, each with what matched (the
/// quoted command as shown, or the cited path) and the cited path when a path did: the one
/// matching rule, for the tripwires and for `impact`. `root`: the checkout the call's paths
/// are read against.
pub(crate) fn trips<'w>(
    wires: &'w [Wire],
    root: &Path,
    call: &Call,
) -> Vec<(&'w Wire, String, Option<&'w CitedPath>)> {
    let edited: Vec<(String, Option<(u64, u64)>)> = match call {
        Call::Edit { path, lines } => relative(path, root)
            .map(|r| (r, *lines))
            .into_iter()
            .collect(),
        Call::Patch(paths) => paths
            .iter()
            .filter_map(|p| relative(p, root))
            .map(|r| (r, None))
            .collect(),
        Call::Shell(_) => Vec::new(),
    };
    let run = match call {
        Call::Shell(line) => crate::store::tripwire::command::simple_commands(line),
        Call::Edit { .. } | Call::Patch(_) => Vec::new(),
    };
    let mut found = Vec::new();
    for wire in wires {
        let matched = match call {
            Call::Shell(_) => wire
                .commands
                .iter()
                .find(|q| run.iter().any(|r| q.matches(r)))
                .map(|q| (Simple::shown(q), None)),
            Call::Edit { .. } | Call::Patch(_) => edited.iter().find_map(|(rel, lines)| {
                wire.paths
                    .iter()
                    .find(|p| edits(p, rel, *lines))
                    .map(|p| (p.path.clone(), Some(p)))
            }),
        };
        if let Some((matched, path)) = matched {
            found.push((wire, matched, path));
        }
    }
    found
}

/// What `status` says of the tripwires of a checkout: off and why, or how many dead ends and
/// traps of its branch's handoff a tool call can trip (`None`: the branch has no handoff).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Armed {
    /// The setting that switches them off here.
    Off(&'static str),
    Items(usize),
}

/// [`Armed`] for `target`: its settings, then its slot's wires (built if need be, as the first
/// tool call would).
pub(crate) fn armed(store: &Store, target: &Target) -> Option<Armed> {
    let settings = target.settings();
    if !settings.tripwires() {
        return Some(Armed::Off("handoff.tripwires false"));
    }
    if settings.enabled() == crate::settings::Enabled::Off {
        return Some(Armed::Off("handoff.enabled false"));
    }
    Wires::load(store, &target.name, &target.facts.checkout, false)
        .map(|w| Armed::Items(w.wires.len()))
}

/// Whether an edit of `rel` (lines `lines` where known) touches the cited path: the same file
/// (and, where both say lines, overlapping ones), or a file beneath a cited folder.
fn edits(cited: &CitedPath, rel: &str, lines: Option<(u64, u64)>) -> bool {
    if cited.path.ends_with('/') {
        return rel.starts_with(&cited.path);
    }
    if cited.path != rel {
        return false;
    }
    match (cited.lines, lines) {
        (Some((a, b)), Some((c, d))) => a <= d && c <= b,
        _ => true,
    }
}

/// `path` relative to the checkout `root` (slash-separated), when it lies inside it: taken as
/// written, else through its folder's real path (a file about to be created has none of its
/// own); `..` never climbs out.
pub(crate) fn relative(path: &Path, root: &Path) -> Option<String> {
    let inside = |p: &Path| -> Option<String> {
        let rest = p.strip_prefix(root).ok()?;
        let mut parts = Vec::new();
        for c in rest.components() {
            match c {
                Component::Normal(s) => parts.push(s.to_str()?.to_string()),
                Component::CurDir => {}
                _ => return None,
            }
        }
        (!parts.is_empty()).then(|| parts.join("/"))
    };
    inside(path).or_else(|| {
        let folder = crate::fs::canonicalize(path.parent()?).ok()?;
        inside(&folder.join(path.file_name()?))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_edit_is_of_a_cited_path_inside_the_checkout_only() {
        let root = Path::new("/w/repo");
        assert_eq!(
            relative(Path::new("/w/repo/src/a.rs"), root).as_deref(),
            Some("src/a.rs")
        );
        assert_eq!(relative(Path::new("/w/repo-2/src/a.rs"), root), None);
        assert_eq!(relative(Path::new("/w/repo/../x/a.rs"), root), None);
        let file = CitedPath {
            path: "src/a.rs".into(),
            shown: "src/a.rs:10-20".into(),
            lines: Some((10, 20)),
            verdict: None,
        };
        assert!(edits(&file, "src/a.rs", None));
        assert!(edits(&file, "src/a.rs", Some((20, 30))));
        assert!(!edits(&file, "src/a.rs", Some((21, 30))));
        assert!(!edits(&file, "src/a.rs.bak", None));
        let folder = CitedPath {
            path: "vendor/cache/".into(),
            shown: "vendor/cache/".into(),
            lines: None,
            verdict: None,
        };
        assert!(edits(&folder, "vendor/cache/x.json", None));
        assert!(!edits(&folder, "vendor/cache2/x.json", None));
    }
}
