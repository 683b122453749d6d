//! Where citations are looked up (docs/gate.md §3.3): the prefixes tried in order and the symbol
//! search roots, derived by exclusion from the index's top-level entries, or replaced by
//! `VERIFY_CITATIONS_PREFIXES` / `VERIFY_CITATIONS_SEARCH_ROOTS`.

use std::path::Path;

/// Top-level names that are never prefixes or search roots (compat).
pub(crate) const EXCLUDED: [&str; 22] = [
    ".git",
    ".github",
    ".claude",
    "docs",
    "doc",
    "documentation",
    "site",
    "website",
    "wiki",
    "reports",
    "notes",
    "adr",
    "vendor",
    "node_modules",
    "dist",
    "build",
    "target",
    "coverage",
    ".venv",
    "venv",
    "__pycache__",
    "",
];

/// The derived or configured layout.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Layout {
    /// In resolution order, starting with `""`.
    pub(crate) prefixes: Vec<String>,
    /// Repo-relative directories searched for symbols.
    pub(crate) search_roots: Vec<String>,
    /// Regular, non-hidden, non-`.md` files directly in the root, searched for symbols.
    pub(crate) top_level_files: Vec<String>,
    /// Whether top-level files are part of the search set.
    pub(crate) includes_top_level_files: bool,
}

fn env_words(name: &str) -> Option<Vec<String>> {
    let value = std::env::var(name).ok()?;
    let words: Vec<String> = crate::text::words(&value).map(str::to_string).collect();
    (!words.is_empty()).then_some(words)
}

impl Layout {
    /// Derive the layout of work tree `root` from its index's top-level entries.
    pub(crate) fn derive(root: &Path, top_level: &[String]) -> Layout {
        let included = || top_level.iter().filter(|e| !EXCLUDED.contains(&e.as_str()));
        let mut prefixes = vec![String::new()];
        match env_words("VERIFY_CITATIONS_PREFIXES") {
            Some(words) => prefixes.extend(words),
            None => prefixes.extend(
                included()
                    .filter(|e| root.join(e).is_dir())
                    .map(|e| format!("{e}/")),
            ),
        }
        let (search_roots, top_level_files) = match env_words("VERIFY_CITATIONS_SEARCH_ROOTS") {
            Some(words) => (
                words
                    .into_iter()
                    .filter(|w| is_confined_dir(root, w))
                    .collect(),
                Vec::new(),
            ),
            None => (
                included()
                    .filter(|e| crate::fs::symlink_metadata(root.join(e)).is_ok_and(|m| m.is_dir()))
                    .cloned()
                    .collect(),
                top_level_files(root),
            ),
        };
        Layout {
            prefixes,
            includes_top_level_files: !top_level_files.is_empty(),
            search_roots,
            top_level_files,
        }
    }
}

/// A configured search root: relative, no `..`, a real directory reached through no symlink.
fn is_confined_dir(root: &Path, word: &str) -> bool {
    let rel = Path::new(word);
    if rel.is_absolute() || word.starts_with('\\') {
        return false;
    }
    let mut at = root.to_path_buf();
    for comp in rel.components() {
        match comp {
            std::path::Component::Normal(c) => {
                at.push(c);
                if !crate::fs::symlink_metadata(&at).is_ok_and(|m| m.is_dir()) {
                    return false;
                }
            }
            std::path::Component::CurDir => {}
            _ => return false,
        }
    }
    true
}

fn top_level_files(root: &Path) -> Vec<String> {
    let Ok(entries) = crate::fs::read_dir(root) else {
        return Vec::new();
    };
    let mut files: Vec<String> = entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| !n.starts_with('.') && !n.ends_with(".md"))
        .collect();
    files.sort();
    files
}
