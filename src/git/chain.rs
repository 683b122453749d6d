//! The handoff chains in a repository's own object database (sync): one commit per stored
//! version on `refs/handoffs/<branch>`, whose tree holds `handoff.md` and a small `meta` file,
//! and whose parent is the previous version. Objects and refs are written here with gix and
//! nothing else: the work tree, the index, HEAD and the user's branches are never touched.
//! Callers get ids as hex strings and documents as bytes, never a gix type.

use std::path::{Path, PathBuf};

use gix::refs::transaction::{Change, PreviousValue, RefEdit, RefLog};

use super::journal::lock_of;

/// The document's file name in a version's tree.
pub(crate) const DOCUMENT: &str = "handoff.md";
/// The metadata's file name in a version's tree.
pub(crate) const META: &str = "meta";

/// One version read back from a chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Version {
    /// Full hex id of the commit.
    pub(crate) id: String,
    pub(crate) document: Vec<u8>,
    /// The `meta` file's text (empty when the tree has none).
    pub(crate) meta: String,
    /// Full hex ids of the parents.
    pub(crate) parents: Vec<String>,
}

/// The largest `handoff.md` a version may hold: the store's own cap on a document.
pub(crate) const DOCUMENT_CAP: u64 = crate::input::MAX_BYTES;
/// The largest commit object a version may be (ours: a tree, two parents, a one-line message).
pub(crate) const COMMIT_CAP: u64 = 64 * 1024;
/// The largest tree a version may have (ours: two entries).
pub(crate) const TREE_CAP: u64 = 4 * 1024;
/// The largest `meta` a version may hold (ours are a few lines).
pub(crate) const META_CAP: u64 = 64 * 1024;

/// An error gix reported, kept whole: its text is gix's, its cause stays reachable.
#[derive(Debug)]
pub(crate) struct GitError(Box<dyn std::error::Error + Send + Sync>);

impl GitError {
    fn new(e: impl std::error::Error + Send + Sync + 'static) -> GitError {
        GitError(Box::new(e))
    }
}

impl std::fmt::Display for GitError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for GitError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.0.source()
    }
}

/// Why commit `id` (its first twelve digits) is not read as a handoff version.
#[derive(Debug)]
pub(crate) struct NotAVersion {
    pub(crate) id: String,
    pub(crate) why: Unfit,
}

/// What is wrong with a commit offered as a handoff version.
#[derive(Debug)]
pub(crate) enum Unfit {
    NotACommit,
    /// Its tree holds an entry other than `handoff.md` and `meta`.
    Foreign {
        name: String,
    },
    NotAFile {
        name: String,
    },
    TooLarge {
        name: String,
        size: u64,
        cap: u64,
    },
    NoDocument,
    Unreadable(GitError),
}

impl std::fmt::Display for NotAVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: ", self.id)?;
        match &self.why {
            Unfit::NotACommit => write!(f, "not a commit"),
            Unfit::Foreign { name } => {
                write!(f, "its tree holds {name:?}, not only {DOCUMENT} and {META}")
            }
            Unfit::NotAFile { name } => write!(f, "{name} is not a file"),
            Unfit::TooLarge { name, size, cap } => {
                write!(f, "{name} is {size} bytes, over the {cap}-byte limit")
            }
            Unfit::NoDocument => write!(f, "its tree has no {DOCUMENT}"),
            Unfit::Unreadable(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for NotAVersion {}

/// Why a capped blob was not read.
enum Capped {
    Over(u64),
    Unreadable(GitError),
}

/// Why a ref was not moved.
#[derive(Debug)]
pub(crate) enum RefError {
    /// Another process moved the ref since it was read.
    Moved,
    /// The ref's lock could not be taken.
    Lock {
        path: PathBuf,
        source: GitError,
    },
    Git(GitError),
}

impl std::fmt::Display for RefError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RefError::Moved => write!(f, "it moved since it was read"),
            RefError::Lock { path, source } => write!(
                f,
                "cannot take the lock {} (another git process holds it; if none runs, \
                 remove that file): {source}",
                path.display()
            ),
            RefError::Git(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for RefError {}

/// How long we wait for a lock of the user's repository (a ref's, `packed-refs.lock`): git
/// holds one for the moment of one update. One still held after it is reported, never removed
/// on its age — only a lock this store's dead process provably took is ([`super::journal`]).
pub(crate) const STALE_LOCK: std::time::Duration = std::time::Duration::from_secs(2);

/// A repository opened for its handoff chains (the path alone decides, as for the gate).
pub(crate) struct Chains {
    pub(super) repo: gix::Repository,
    main: PathBuf,
}

pub(super) fn other(e: impl std::error::Error + Send + Sync + 'static) -> GitError {
    GitError::new(e)
}

fn same_id(a: Option<&str>, b: Option<&str>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => a.eq_ignore_ascii_case(b),
        (None, None) => true,
        _ => false,
    }
}

fn oid(hex: &str) -> Result<gix::ObjectId, GitError> {
    gix::ObjectId::from_hex(hex.as_bytes()).map_err(other)
}

impl Chains {
    /// Open the repository containing `dir`; `None` when there is none.
    pub(crate) fn open(dir: &Path) -> Option<Chains> {
        let real = crate::fs::canonicalize(dir).ok()?;
        let repo = super::discover(&real, false)?;
        let main = super::main_worktree(&repo);
        Some(Chains { repo, main })
    }

    /// The main worktree's real path, as the store keys its slots (docs/store.md §2.2).
    pub(crate) fn main(&self) -> PathBuf {
        self.main.clone()
    }

    /// The git dir shared by every worktree (where `refs/handoffs/*` live).
    pub(crate) fn common_dir(&self) -> PathBuf {
        self.repo.common_dir().to_path_buf()
    }

    /// The id a ref points to, if the ref exists: a direct ref's own id, never looked up (a
    /// remote's tip may be a 100 MB commit, and peeling reads the object whole); a symbolic one
    /// is followed.
    pub(crate) fn tip(&self, name: &str) -> Option<String> {
        let mut r = self.repo.try_find_reference(name).ok()??;
        match r.target().try_id() {
            Some(id) => Some(id.to_string()),
            None => r.peel_to_id().ok().map(|id| id.to_string()),
        }
    }

    /// Every ref under `prefix` (e.g. `refs/handoffs/`): the name after the prefix, and the id.
    pub(crate) fn list(&self, prefix: &str) -> Vec<(String, String)> {
        let Ok(platform) = self.repo.references() else {
            return Vec::new();
        };
        let Ok(iter) = platform.prefixed(prefix) else {
            return Vec::new();
        };
        let mut out: Vec<(String, String)> = iter
            .flatten()
            .filter_map(|mut r| {
                let full = r.name().as_bstr().to_string();
                let rest = full.strip_prefix(prefix)?.to_string();
                // A direct ref's own id, without looking the object up (10,000 tracking refs
                // are 10,000 object lookups otherwise); a symbolic one is followed.
                let id = match r.target().try_id() {
                    Some(id) => id.to_owned(),
                    None => r.peel_to_id().ok()?.detach(),
                }
                .to_string();
                Some((rest, id))
            })
            .collect();
        out.sort();
        out
    }

    /// The first handoff chain ref found (`refs/handoffs/…`, `refs/handoff-slots/…`, a
    /// remote's `refs/handoff-remotes/…`), if any: stops at the first, sorts nothing.
    pub(crate) fn any_chain(&self) -> Option<String> {
        let platform = self.repo.references().ok()?;
        [
            "refs/handoffs/",
            "refs/handoff-slots/",
            "refs/handoff-remotes/",
        ]
        .into_iter()
        .find_map(|prefix| {
            platform
                .prefixed(prefix)
                .ok()?
                .flatten()
                .next()
                .map(|r| r.name().as_bstr().to_string())
        })
    }

    /// The short names of the local branches (`refs/heads/*`).
    pub(crate) fn branches(&self) -> Vec<String> {
        self.list("refs/heads/")
            .into_iter()
            .map(|(n, _)| n)
            .collect()
    }

    /// Whether `refs/heads/<branch>` exists.
    pub(crate) fn has_branch(&self, branch: &str) -> bool {
        self.tip(&format!("refs/heads/{branch}")).is_some()
    }

    /// Read version `id`: its document, meta and parents. `None` when it is not a version
    /// (see [`Chains::version`]).
    pub(crate) fn read(&self, id: &str) -> Option<Version> {
        self.version(id).ok()
    }

    /// Read version `id`, which may come from anyone who can push to a remote: a commit whose
    /// tree holds `handoff.md` (at most [`DOCUMENT_CAP`] bytes) and optionally `meta` (at most
    /// [`META_CAP`]), both plain blobs, and nothing else. Sizes are known from the objects'
    /// headers before anything is read, so a blob of any size costs nothing.
    pub(crate) fn version(&self, id: &str) -> Result<Version, NotAVersion> {
        let short = &id[..id.len().min(12)];
        let not = |why: Unfit| NotAVersion {
            id: short.to_string(),
            why,
        };
        let object = oid(id).map_err(|_| not(Unfit::NotACommit))?;
        // The commit and its tree are sized from their headers before either is read: a remote
        // can make either as large as it likes (a 100 MB commit message).
        self.sized(object, gix::object::Kind::Commit, COMMIT_CAP, "commit")
            .map_err(not)?;
        let commit = self
            .repo
            .find_commit(object)
            .map_err(|_| not(Unfit::NotACommit))?;
        let parents = commit.parent_ids().map(|p| p.to_string()).collect();
        let tree_id = commit
            .tree_id()
            .map_err(|e| not(Unfit::Unreadable(other(e))))?;
        self.sized(tree_id.detach(), gix::object::Kind::Tree, TREE_CAP, "tree")
            .map_err(not)?;
        let tree = commit
            .tree()
            .map_err(|e| not(Unfit::Unreadable(other(e))))?;
        let mut document = None;
        let mut meta = String::new();
        for entry in tree.iter() {
            let entry = entry.map_err(|e| not(Unfit::Unreadable(other(e))))?;
            let name = entry.filename().to_string();
            let cap = match name.as_str() {
                DOCUMENT => DOCUMENT_CAP,
                META => META_CAP,
                _ => return Err(not(Unfit::Foreign { name })),
            };
            if !entry.mode().is_blob() {
                return Err(not(Unfit::NotAFile { name }));
            }
            let data = self.blob_capped(entry.oid().to_owned(), cap).map_err(|e| {
                not(match e {
                    Capped::Over(size) => Unfit::TooLarge {
                        name: name.clone(),
                        size,
                        cap,
                    },
                    Capped::Unreadable(e) => Unfit::Unreadable(e),
                })
            })?;
            if name == DOCUMENT {
                document = Some(data);
            } else {
                meta = String::from_utf8_lossy(&data).into_owned();
            }
        }
        let document = document.ok_or_else(|| not(Unfit::NoDocument))?;
        Ok(Version {
            id: id.to_string(),
            document,
            meta,
            parents,
        })
    }

    /// The `meta` text of version `id` alone (bounded like [`Chains::version`]), without
    /// reading its document.
    pub(crate) fn meta_of(&self, id: &str) -> Option<String> {
        let object = oid(id).ok()?;
        self.sized(object, gix::object::Kind::Commit, COMMIT_CAP, "commit")
            .ok()?;
        let commit = self.repo.find_commit(object).ok()?;
        self.sized(
            commit.tree_id().ok()?.detach(),
            gix::object::Kind::Tree,
            TREE_CAP,
            "tree",
        )
        .ok()?;
        let tree = commit.tree().ok()?;
        let entry = tree.find_entry(META)?;
        let data = self.blob_capped(entry.oid().to_owned(), META_CAP).ok()?;
        Some(String::from_utf8_lossy(&data).into_owned())
    }

    /// Whether object `id` is a `kind` of at most `cap` bytes, from its header alone.
    fn sized(
        &self,
        id: gix::ObjectId,
        kind: gix::object::Kind,
        cap: u64,
        name: &str,
    ) -> Result<(), Unfit> {
        let header = self.repo.find_header(id).map_err(|_| Unfit::NotACommit)?;
        if header.kind() != kind {
            return Err(if kind == gix::object::Kind::Commit {
                Unfit::NotACommit
            } else {
                Unfit::NotAFile {
                    name: name.to_string(),
                }
            });
        }
        if header.size() > cap {
            return Err(Unfit::TooLarge {
                name: name.to_string(),
                size: header.size(),
                cap,
            });
        }
        Ok(())
    }

    /// A blob's bytes, its size known from the object's header before anything is read.
    fn blob_capped(&self, id: gix::ObjectId, cap: u64) -> Result<Vec<u8>, Capped> {
        let header = self
            .repo
            .find_header(id)
            .map_err(|e| Capped::Unreadable(other(e)))?;
        if header.size() > cap {
            return Err(Capped::Over(header.size()));
        }
        let blob = self
            .repo
            .find_blob(id)
            .map_err(|e| Capped::Unreadable(other(e)))?;
        Ok(blob.data.clone())
    }

    /// The first-parent line from `tip` back to its root, newest first, at most `cap` commits
    /// (a chain's versions in order: each version's first parent is the one it replaced).
    pub(crate) fn first_parents(&self, tip: &str, cap: usize) -> Vec<String> {
        let mut line = Vec::new();
        let mut next = oid(tip).ok();
        while let Some(id) = next {
            if line.len() >= cap {
                break;
            }
            let Ok(commit) = self.repo.find_commit(id) else {
                break;
            };
            line.push(id.to_string());
            next = commit.parent_ids().next().map(|p| p.detach());
        }
        line
    }

    /// Whether commit `ancestor` is reachable from `of` (or is it).
    pub(crate) fn is_ancestor(&self, ancestor: &str, of: &str) -> bool {
        if ancestor.eq_ignore_ascii_case(of) {
            return true;
        }
        let (Ok(a), Ok(o)) = (oid(ancestor), oid(of)) else {
            return false;
        };
        let Ok(walk) = self.repo.rev_walk([o]).all() else {
            return false;
        };
        walk.flatten().any(|info| info.id == a)
    }

    fn signature(&self, seconds: i64) -> gix::actor::Signature {
        let (name, email) = match self.repo.committer() {
            Some(Ok(sig)) => (sig.name.to_owned(), sig.email.to_owned()),
            _ => ("handoff-store".into(), "handoff-store@localhost".into()),
        };
        gix::actor::Signature {
            name,
            email,
            time: gix::date::Time { seconds, offset: 0 },
        }
    }

    /// Write a version: a tree of `document` and `meta`, a commit with `parents` and
    /// `message`, authored at `written_at` (epoch seconds) and committed at `now`. The ref is
    /// not moved ([`Chains::set`] does that).
    pub(crate) fn commit(
        &self,
        document: &[u8],
        meta: &str,
        parents: &[String],
        message: &str,
        written_at: i64,
        now: i64,
    ) -> Result<String, GitError> {
        let doc = self.repo.write_blob(document).map_err(other)?.detach();
        let meta = self
            .repo
            .write_blob(meta.as_bytes())
            .map_err(other)?
            .detach();
        let blob = gix::object::tree::EntryKind::Blob;
        let tree = gix::objs::Tree {
            entries: vec![
                gix::objs::tree::Entry {
                    mode: blob.into(),
                    filename: DOCUMENT.into(),
                    oid: doc,
                },
                gix::objs::tree::Entry {
                    mode: blob.into(),
                    filename: META.into(),
                    oid: meta,
                },
            ],
        };
        let tree = self.repo.write_object(&tree).map_err(other)?.detach();
        self.commit_tree(tree, parents, message, written_at, now)
    }

    /// A commit with the tree of version `like` and the given parents (a merge keeps the
    /// winner's tree as it is).
    pub(crate) fn commit_like(
        &self,
        like: &str,
        parents: &[String],
        message: &str,
        now: i64,
    ) -> Result<String, GitError> {
        let commit = self.repo.find_commit(oid(like)?).map_err(other)?;
        let tree = commit.tree_id().map_err(other)?.detach();
        let written = commit.author().map(|a| a.seconds()).unwrap_or(now);
        self.commit_tree(tree, parents, message, written, now)
    }

    fn commit_tree(
        &self,
        tree: gix::ObjectId,
        parents: &[String],
        message: &str,
        written_at: i64,
        now: i64,
    ) -> Result<String, GitError> {
        let parents = parents
            .iter()
            .map(|p| oid(p))
            .collect::<Result<Vec<_>, _>>()?;
        let commit = gix::objs::Commit {
            tree,
            parents: parents.into(),
            author: self.signature(written_at),
            committer: self.signature(now),
            encoding: None,
            message: message.into(),
            extra_headers: Vec::new(),
        };
        Ok(self.repo.write_object(&commit).map_err(other)?.to_string())
    }

    /// Point ref `name` at `new`, only if it still points at `expected` (`None`: only if it
    /// does not exist) — a compare-and-swap, so a concurrent writer is never overwritten.
    ///
    /// Done as git does a plain update: the loose ref's own lock (`<name>.lock`), the value
    /// compared under it, the new value renamed into place. `packed-refs.lock` is never taken
    /// (gix's transaction takes it for every update of a repository with a `packed-refs` file,
    /// and a process killed holding it broke the user's own `git gc` and `git branch -d`).
    /// Termination signals wait until the lock is gone; a lock left by a killed process (SIGKILL
    /// cannot wait) is removed by the next change of ours, when the journal proves it its own.
    pub(crate) fn set(
        &self,
        name: &str,
        new: &str,
        expected: Option<&str>,
    ) -> Result<(), RefError> {
        let full: gix::refs::FullName = name.try_into().map_err(|e| RefError::Git(other(e)))?;
        let new = oid(new).map_err(RefError::Git)?;
        let path = self.repo.common_dir().join(full.as_bstr().to_string());
        let _deferred = crate::process::Deferred::begin();
        let common = self.repo.common_dir();
        super::journal::recover(common);
        let mut journal = super::journal::Journal::begin(common);
        crate::process::kill_point();
        let lock = self.lock_ref(&path)?;
        if !same_id(self.tip(name).as_deref(), expected) {
            return Err(RefError::Moved);
        }
        let mut lock = lock;
        std::io::Write::write_all(&mut lock, format!("{new}\n").as_bytes())
            .map_err(|e| RefError::Git(other(e)))?;
        // Noted once written: a write changes the ctime the note proves the file by.
        journal.taken(&super::journal::taken(&[lock_of(&path)]));
        crate::process::kill_point();
        lock.commit().map_err(|e| RefError::Git(other(e.error)))?;
        Ok(())
    }

    /// The lock of the loose ref at `path` (its directories created up to the git dir).
    fn lock_ref(&self, path: &Path) -> Result<gix::lock::File, RefError> {
        gix::lock::File::acquire_to_update_resource(
            path,
            gix::lock::acquire::Fail::AfterDurationWithBackoff(STALE_LOCK),
            Some(self.repo.common_dir().to_path_buf()),
            Default::default(),
        )
        .map_err(|e| RefError::Lock {
            path: lock_of(path),
            source: other(e),
        })
    }

    /// Delete every ref of `refs` (name, expected id) that still points where expected:
    /// `packed-refs` is rewritten once, not once per ref, and a ref that is only a line there
    /// takes no loose lock of its own ([`super::packed`]). A ref that moved or is gone is left
    /// alone; false only when a deletion itself failed.
    pub(crate) fn delete_all(&self, refs: &[(String, String)]) -> bool {
        let _deferred = crate::process::Deferred::begin();
        let common = self.repo.common_dir();
        let (packed, refs) = super::packed::split(common, refs);
        let packed_ok = super::packed::delete(common, &packed, STALE_LOCK).is_ok();
        packed_ok & self.delete_loose(&refs)
    }

    /// [`Chains::delete_all`] for refs with a loose file or a reflog: one gix transaction.
    fn delete_loose(&self, refs: &[(String, String)]) -> bool {
        let edit_of = |(name, expected): &(String, String)| {
            Some(RefEdit {
                change: Change::Delete {
                    expected: PreviousValue::MustExistAndMatch(gix::refs::Target::Object(
                        oid(expected).ok()?,
                    )),
                    log: RefLog::AndReference,
                },
                name: name.as_str().try_into().ok()?,
                deref: false,
            })
        };
        let edits: Vec<RefEdit> = refs.iter().filter_map(edit_of).collect();
        // Most often every ref still holds its id: one transaction, no lookup before it.
        if edits.is_empty() || self.edit(edits).is_ok() {
            return true;
        }
        let held: Vec<RefEdit> = refs
            .iter()
            .filter(|(name, expected)| same_id(self.tip(name).as_deref(), Some(expected)))
            .filter_map(edit_of)
            .collect();
        held.is_empty() || self.edit(held).is_ok()
    }

    /// Remove the locks a dead process of ours provably left ([`super::journal::recover`]),
    /// before a command of the user's git (a fetch) meets them.
    pub(crate) fn recover_locks(&self) {
        super::journal::recover(self.repo.common_dir());
    }

    /// One journaled ref transaction ([`super::journal::edit`]), signed now.
    fn edit(&self, edits: Vec<RefEdit>) -> Result<(), GitError> {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() as i64);
        super::journal::edit(&self.repo, &self.signature(now), edits, STALE_LOCK).map_err(GitError)
    }
}
