//! EVERY use of gix lives here. Callers get plain owned structs (`WorkTree`, `Head`), so the
//! rest of the crate never touches a repository handle and no code path spawns `git`.
//! The gate decides a checkout by its path alone (it ignores `GIT_DIR`/`GIT_WORK_TREE`, which
//! git hooks point elsewhere); the repository is opened once and its index read at most once.

use std::path::{Path, PathBuf};

/// What HEAD is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Head {
    /// The short branch name (`feature/x`), or the abbreviated id when detached.
    pub current: String,
    pub detached: bool,
    /// Whether HEAD names a branch with no commits yet.
    pub unborn: bool,
    /// The full hex id of the HEAD commit, when there is one.
    pub id: Option<String>,
}

/// A located work tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkTree {
    /// Real path of the work tree's top level.
    pub root: PathBuf,
    pub head: Head,
    /// First path components of the index entries, unique and sorted by bytes (only when
    /// asked for).
    pub top_level: Vec<String>,
}

/// Why a path names no usable work tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorkTreeError {
    NotFound,
    NotDirectory,
    NotGit,
    Bare,
}

/// Find the work tree containing `path` (the gate's rule: the path alone decides).
/// With `read_index`, also collect the top-level entries of its index.
pub fn open_work_tree(path: &Path, read_index: bool) -> Result<WorkTree, WorkTreeError> {
    let meta = std::fs::metadata(path).map_err(|_| WorkTreeError::NotFound)?;
    if !meta.is_dir() {
        return Err(WorkTreeError::NotDirectory);
    }
    let real = std::fs::canonicalize(path).map_err(|_| WorkTreeError::NotFound)?;
    // Deny the GIT_* variables: a git hook sets GIT_DIR/GIT_WORK_TREE for its own repository,
    // and the gate must resolve the checkout it was given, not the hook's.
    let mut permissions = gix::open::Permissions::default();
    permissions.env.git_prefix = gix::sec::Permission::Deny;
    let options = gix::open::Options::default().permissions(permissions);
    let repo = gix::discover_opts(&real, Default::default(), options)
        .map_err(|_| WorkTreeError::NotGit)?;
    let workdir = repo.workdir().ok_or(WorkTreeError::Bare)?;
    let root = std::fs::canonicalize(workdir).map_err(|_| WorkTreeError::Bare)?;
    let head = head_of(&repo).ok_or(WorkTreeError::NotGit)?;
    let top_level = if read_index {
        top_level_entries(&repo)
    } else {
        Vec::new()
    };
    Ok(WorkTree {
        root,
        head,
        top_level,
    })
}

/// Whether `a` and `b` lie in the same work tree (compared on canonical roots).
pub fn same_work_tree(path: &Path, root: &Path) -> bool {
    open_work_tree(path, false).is_ok_and(|w| w.root == root)
}

fn head_of(repo: &gix::Repository) -> Option<Head> {
    let head = repo.head().ok()?;
    let id = head.id();
    let full = id.as_ref().map(|i| i.to_string());
    if head.is_detached() {
        let id = id?;
        return Some(Head {
            current: id.shorten_or_id().to_string(),
            detached: true,
            unborn: false,
            id: full,
        });
    }
    let name = head.referent_name()?;
    Some(Head {
        current: name.shorten().to_string(),
        detached: false,
        unborn: head.is_unborn(),
        id: full,
    })
}

fn top_level_entries(repo: &gix::Repository) -> Vec<String> {
    let Ok(index) = repo.index_or_empty() else {
        return Vec::new();
    };
    let mut out: Vec<Vec<u8>> = Vec::new();
    for entry in index.entries() {
        let path: &[u8] = entry.path(&index);
        let first = path.split(|&b| b == b'/').next().unwrap_or(path);
        // Index paths are sorted, so equal first components are adjacent.
        if out.last().is_none_or(|last| last.as_slice() != first) {
            out.push(first.to_vec());
        }
    }
    out.sort();
    out.dedup();
    out.into_iter()
        .map(|p| String::from_utf8_lossy(&p).into_owned())
        .collect()
}
