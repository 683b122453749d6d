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
    let last = main
        .rsplit(|&b| b == b'/')
        .find(|c| !c.is_empty())
        .unwrap_or(main);
    let hex = &crate::text::hex_md5(main)[..8];
    format!(
        "{}-{}-{hex}.md",
        slugify(last),
        slugify(reference.replace('/', "-").as_bytes())
    )
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
