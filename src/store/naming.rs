//! Slot names (docs/store.md §3): `<repo>-<branch>-<hash8>.md`, byte-compatible with the bash store,
//! so a store written by either tool is read by the other.

use std::path::Path;

/// Slugify bytes: everything outside `A–Z a–z 0–9 . _ -` becomes `_`, byte by byte.
pub(crate) fn slugify(bytes: &[u8]) -> String {
    bytes
        .iter()
        .map(|&b| {
            if b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-') {
                b as char
            } else {
                '_'
            }
        })
        .collect()
}

/// `<repo>-<branch>-<hash8>.md` for main worktree `main` and ref `reference` (docs/store.md §3).
pub fn slot_name(main: &[u8], reference: &str) -> String {
    let (repo, hex) = repo_parts(main);
    format!(
        "{repo}-{}-{hex}.md",
        slugify(reference.replace('/', "-").as_bytes())
    )
}

/// The `<repo>` and `<hash8>` of every slot of main worktree `main`.
fn repo_parts(main: &[u8]) -> (String, String) {
    let last = main
        .rsplit(|&b| b == b'/')
        .find(|c| !c.is_empty())
        .unwrap_or(main);
    (slugify(last), crate::text::hex_md5(main)[..8].to_string())
}

/// What every slot name (default or named, any branch) of main worktree `main` starts and ends
/// with, computed once for a scan of the store.
pub(crate) struct RepositorySlots {
    head: String,
    tail: String,
}

impl RepositorySlots {
    pub(crate) fn of(main: &[u8]) -> RepositorySlots {
        let (repo, hex) = repo_parts(main);
        RepositorySlots {
            head: format!("{repo}-"),
            tail: format!("-{hex}"),
        }
    }

    /// Whether store file `file_name` is one of them.
    pub(crate) fn holds(&self, file_name: &str) -> bool {
        let Some(stem) = file_name.strip_suffix(".md") else {
            return false;
        };
        let stem = stem.split_once('@').map_or(stem, |(s, _)| s);
        stem.starts_with(&self.head) && stem.ends_with(&self.tail)
    }
}

/// Why `name` cannot name a slot, or `None` when it can: 1–64 of `A–Z a–z 0–9 . _ -`,
/// starting with a letter or digit, with no `..` and not ending in `.lock` (so it lives in a
/// file name and in a git ref as it is).
pub(crate) fn slot_name_problem(name: &str) -> Option<&'static str> {
    if name.is_empty() {
        return Some("it is empty");
    }
    if name.len() > 64 {
        return Some("it is longer than 64 characters");
    }
    if !name
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
    {
        return Some("only letters, digits, '.', '_' and '-' can name a slot");
    }
    if !name.as_bytes()[0].is_ascii_alphanumeric() {
        return Some("it must start with a letter or a digit");
    }
    if name.contains("..") || name.ends_with(".lock") {
        return Some("git cannot keep it in a ref name ('..', a '.lock' end)");
    }
    None
}

/// The file of named slot `slot` beside the default slot `default` (`<repo>-<branch>-<hash8>.md`):
/// `<repo>-<branch>-<hash8>@<slot>.md`. A default slot's name never holds `@` (slugs do not),
/// so the two can never collide.
pub(crate) fn named_slot(default: &str, slot: &str) -> String {
    let stem = default.strip_suffix(".md").unwrap_or(default);
    format!("{stem}@{slot}.md")
}

/// The slot a store file name names, when it is a named one (`…@<slot>.md`).
pub(crate) fn slot_in(file_name: &str) -> Option<&str> {
    let stem = file_name.strip_suffix(".md")?;
    let (_, slot) = stem.rsplit_once('@')?;
    slot_name_problem(slot).is_none().then_some(slot)
}

/// The bytes of a path (its OS representation).
pub(crate) fn path_bytes(p: &Path) -> Vec<u8> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        p.as_os_str().as_bytes().to_vec()
    }
    #[cfg(not(unix))]
    {
        p.to_string_lossy().replace('\\', "/").into_bytes()
    }
}

/// Whether `id` is safe to write into a file or use in a path.
/// The rule is `^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`.
pub(crate) fn is_safe_id(id: &str) -> bool {
    let b = id.as_bytes();
    (1..=128).contains(&b.len())
        && b[0].is_ascii_alphanumeric()
        && b[1..]
            .iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'_' | b'-'))
}

/// The chain of `branch`'s slot: the default one's `refs/handoffs/<branch>`, a named slot's
/// `refs/handoff-slots/<slot>/<branch>` — a namespace of its own, since every ref under
/// `refs/handoffs/` could be some branch's.
pub(crate) fn chain_ref(branch: &str, slot: Option<&str>) -> String {
    match slot {
        None => handoff_ref(branch),
        Some(slot) => format!("refs/handoff-slots/{slot}/{branch}"),
    }
}

/// The local chain of `branch`.
pub(crate) fn handoff_ref(branch: &str) -> String {
    format!("refs/handoffs/{branch}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn naming_worked_examples() {
        let cases = [
            (
                "/c/checkouts/emmie",
                "EMMIE-0477",
                "emmie-EMMIE-0477-f8a8fe06.md",
            ),
            ("/c/one/emmie", "main", "emmie-main-8e09c2bf.md"),
            ("/c/two/emmie", "main", "emmie-main-16d9a09d.md"),
            ("/home/u/repo", "feature/x", "repo-feature-x-2bcea0c2.md"),
            ("/home/u/repo", "1a2b3c4", "repo-1a2b3c4-2bcea0c2.md"),
            ("/home/u/café", "main", "caf__-main-6bba6fba.md"),
            ("/home/u/proj", "feat/ä+b", "proj-feat-___b-4fafce67.md"),
            ("/srv/git/tool.git", "topic", "tool.git-topic-40b0152e.md"),
            (
                "/c/my checkouts/the repo",
                "fix-a b",
                "the_repo-fix-a_b-02565336.md",
            ),
        ];
        for (main, reference, name) in cases {
            assert_eq!(
                slot_name(main.as_bytes(), reference),
                name,
                "{main} {reference}"
            );
        }
    }
}
