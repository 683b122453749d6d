//! Where a cited path leads, confined to the checkout (docs/gate.md §3): absolute and drive paths,
//! `..` climbing above the root, and symlinks leaving the tree are refused, never opened. Each
//! prefix of the layout is tried, the first hit resolves and the others are named as `also`.

use std::path::PathBuf;

use super::Resolver;

/// Where a cited path led.
pub(super) enum PathMatch {
    Match {
        candidate: String,
        real: PathBuf,
        /// The target's metadata (symlinks followed), taken when it was found.
        meta: Box<crate::fs::Metadata>,
        also: Vec<String>,
    },
    Refused,
    NoMatch,
}

/// Where a lexically confined candidate path leads once symlinks are followed.
enum Confined {
    Inside(PathBuf, crate::fs::Metadata),
    Outside,
    Absent,
}

impl Resolver<'_> {
    pub(super) fn find_target(&self, citation: &str) -> PathMatch {
        if citation.starts_with(['/', '\\']) || is_drive_path(citation) {
            return PathMatch::Refused;
        }
        let mut refused = false;
        let mut first: Option<(String, PathBuf, crate::fs::Metadata)> = None;
        let mut also = Vec::new();
        for prefix in &self.layout.prefixes {
            let candidate = format!("{prefix}{citation}");
            if escapes(&candidate) {
                refused = true;
                continue;
            }
            if self.first_dir_absent(prefix, citation) {
                continue;
            }
            match self.confine(&candidate) {
                Confined::Inside(real, meta) => {
                    if first.is_none() {
                        first = Some((candidate, real, meta));
                    } else {
                        also.push(candidate);
                    }
                }
                Confined::Outside => refused = true,
                Confined::Absent => {}
            }
        }
        match first {
            Some((candidate, real, meta)) => PathMatch::Match {
                candidate,
                real,
                meta: Box::new(meta),
                also,
            },
            None if refused => PathMatch::Refused,
            None => PathMatch::NoMatch,
        }
    }

    /// Whether `<prefix><first component of citation>` is known not to exist beneath the root:
    /// then nothing under it does (the kernel walks the path component by component), so each
    /// prefix that does not hold a cited tree costs one lookup per first component, not one per
    /// citation. Only "no such file" counts; anything else leaves the decision to `confine`.
    fn first_dir_absent(&self, prefix: &str, citation: &str) -> bool {
        let Some((first, _)) = citation.split_once('/') else {
            return false;
        };
        if matches!(first, "" | "." | "..") {
            return false;
        }
        let dir = format!("{prefix}{first}");
        if let Some(&absent) = self.absent_dirs.borrow().get(&dir) {
            return absent;
        }
        let absent = self.lookup_absent(&dir);
        self.absent_dirs.borrow_mut().insert(dir, absent);
        absent
    }

    fn lookup_absent(&self, dir: &str) -> bool {
        #[cfg(target_os = "linux")]
        if let Some(opened) = self.beneath(dir, nix::fcntl::OFlag::O_PATH) {
            return opened.err() == Some(nix::errno::Errno::ENOENT);
        }
        let _ = dir;
        false
    }

    /// Whether the lexically confined `candidate` stays inside the work tree once symlinks are
    /// followed. On Linux one `openat2(RESOLVE_BENEATH)` relative to the opened root answers the
    /// common case (plus an `fstat` on that descriptor) — no per-component `readlink` of a
    /// canonicalisation; the rare path it refuses, and systems without it, are canonicalised.
    fn confine(&self, candidate: &str) -> Confined {
        let joined = self.work_tree.root.join(candidate);
        #[cfg(target_os = "linux")]
        if let Some(opened) = self.beneath(candidate, nix::fcntl::OFlag::O_PATH) {
            use nix::errno::Errno;
            match opened {
                Ok(file) => {
                    return match file.metadata() {
                        Ok(meta) => Confined::Inside(joined, meta),
                        Err(_) => Confined::Absent,
                    };
                }
                // EXDEV: it left the tree on the way, or met an absolute symlink (which may
                // still land inside): the canonical path decides, as it always did.
                Err(
                    Errno::EXDEV | Errno::ENOSYS | Errno::EPERM | Errno::EINVAL | Errno::EAGAIN,
                ) => {}
                Err(_) => return Confined::Absent,
            }
        }
        let Ok(meta) = crate::fs::metadata(&joined) else {
            return Confined::Absent;
        };
        match crate::fs::canonicalize(&joined) {
            Ok(real) if real.starts_with(&self.work_tree.root) => Confined::Inside(real, meta),
            _ => Confined::Outside,
        }
    }

    /// Open `candidate` for reading relative to the root, confined beneath it (Linux), so the
    /// path is not walked again from `/`.
    pub(super) fn open_beneath(&self, candidate: &str) -> Option<crate::fs::FdFile> {
        #[cfg(target_os = "linux")]
        if let Some(opened) = self.beneath(
            candidate,
            nix::fcntl::OFlag::O_RDONLY | nix::fcntl::OFlag::O_NONBLOCK,
        ) {
            return opened.ok();
        }
        let _ = candidate;
        None
    }

    /// `path` opened relative to the work tree's root with `flags`, never leaving it on the way
    /// (`openat2` with `RESOLVE_BENEATH`, no magic links); `None` when the root is not open. The
    /// one place confinement asks the kernel.
    #[cfg(target_os = "linux")]
    fn beneath(
        &self,
        path: &str,
        flags: nix::fcntl::OFlag,
    ) -> Option<nix::Result<crate::fs::FdFile>> {
        use nix::fcntl::{OFlag, OpenHow, ResolveFlag, openat2};
        let root = self.root_dir.as_ref()?;
        let how = OpenHow::new()
            .flags(flags | OFlag::O_CLOEXEC)
            .resolve(ResolveFlag::RESOLVE_BENEATH | ResolveFlag::RESOLVE_NO_MAGICLINKS);
        Some(openat2(root, path, how).map(crate::fs::FdFile::from))
    }
}

/// `C:/…` or `C:\…`: a Windows drive path.
fn is_drive_path(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() >= 3 && b[0].is_ascii_alphabetic() && b[1] == b':' && (b[2] == b'/' || b[2] == b'\\')
}

/// Whether a repo-relative candidate climbs above the root lexically.
fn escapes(candidate: &str) -> bool {
    let mut depth: i64 = 0;
    let separators: &[char] = if cfg!(windows) { &['/', '\\'] } else { &['/'] };
    for comp in candidate.split(separators) {
        match comp {
            "" | "." => {}
            ".." => {
                depth -= 1;
                if depth < 0 {
                    return true;
                }
            }
            _ => depth += 1,
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lexical_escape_counts_depth() {
        assert!(escapes("../x.php"));
        assert!(escapes("a/../../x"));
        assert!(!escapes("a/../x"));
        assert!(!escapes("./a//b"));
    }
}
