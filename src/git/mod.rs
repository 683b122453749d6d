//! EVERY use of gix lives here. Callers get plain owned structs (`WorkTree`, `Head`), so the
//! rest of the crate never touches a repository handle and no code path spawns `git`.
//! The gate decides a checkout by its path alone (it ignores `GIT_DIR`/`GIT_WORK_TREE`, which
//! git hooks point elsewhere); the repository is opened once and its index read at most once.

pub(crate) mod chain;
pub(crate) mod config;
pub(crate) mod follow;
mod journal;
mod packed;

use std::path::{Path, PathBuf};

/// What HEAD is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Head {
    /// The short branch name (`feature/x`), or the abbreviated id when detached.
    pub(crate) current: String,
    pub(crate) detached: bool,
    /// Whether HEAD names a branch with no commits yet.
    pub(crate) unborn: bool,
    /// The full hex id of the HEAD commit, when there is one.
    pub(crate) id: Option<String>,
}

/// A located work tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct WorkTree {
    /// Real path of the work tree's top level.
    pub(crate) root: PathBuf,
    pub(crate) head: Head,
    /// First path components of the index entries, unique and sorted by bytes (only when
    /// asked for).
    pub(crate) top_level: Vec<String>,
}

/// Why a path names no usable work tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WorkTreeError {
    NotFound,
    NotDirectory,
    NotGit,
    Bare,
}

/// Find the work tree containing `path` (the gate's rule: the path alone decides).
/// With `read_index`, also collect the top-level entries of its index.
pub(crate) fn open_work_tree(path: &Path, read_index: bool) -> Result<WorkTree, WorkTreeError> {
    let meta = crate::fs::metadata(path).map_err(|_| WorkTreeError::NotFound)?;
    if !meta.is_dir() {
        return Err(WorkTreeError::NotDirectory);
    }
    let real = crate::fs::canonicalize(path).map_err(|_| WorkTreeError::NotFound)?;
    let repo = discover(&real, false).ok_or(WorkTreeError::NotGit)?;
    let workdir = repo.workdir().ok_or(WorkTreeError::Bare)?;
    let root = crate::fs::canonicalize(workdir).map_err(|_| WorkTreeError::Bare)?;
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
pub(crate) fn same_work_tree(path: &Path, root: &Path) -> bool {
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

/// The store's view of a target checkout (docs/store.md §2.2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RepoFacts {
    /// Real path of the main worktree (the common git dir minus a trailing `.git`).
    pub(crate) main: PathBuf,
    /// Real path of the work tree containing the target.
    pub(crate) checkout: PathBuf,
    /// The branch short name, or the short id when detached.
    pub(crate) reference: String,
    /// Full hex id of HEAD.
    pub(crate) head: String,
    pub(crate) detached: bool,
    /// The `handoff.*` keys of the repository's git configuration (all scopes).
    pub(crate) config: config::HandoffConfig,
}

/// Why a target has no slot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum TargetError {
    NotDirectory,
    NotGit,
    Bare,
    /// git's own configuration (system or global) does not parse: git refuses every command.
    BadConfig(String),
}

/// How a recorded `head:` relates to a checkout's HEAD (docs/store.md §8 signals 4–6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HeadRelation {
    /// Not a full id of a commit in this repository.
    Unknown,
    Same,
    /// An ancestor, this many commits behind HEAD.
    Behind(usize),
    Diverged,
}

/// Discover the repository at or above `real`. Without `honour_env`, the GIT_* variables are
/// denied: a git hook sets GIT_DIR/GIT_WORK_TREE for its own repository, and a path given
/// to the gate must be judged by itself.
/// The repository of checkout `real`, its path alone deciding (for reading objects).
fn discover_for_read(real: &Path) -> Option<gix::Repository> {
    discover(real, false)
}

fn discover(real: &Path, honour_env: bool) -> Option<gix::Repository> {
    if honour_env {
        gix::discover_with_environment_overrides(real).ok()
    } else {
        let mut permissions = gix::open::Permissions::default();
        permissions.env.git_prefix = gix::sec::Permission::Deny;
        // The index is read only for its top-level names: its SHA-1 trailer need not be
        // recomputed over every entry (a few milliseconds on a 20,000-file tree).
        let options = gix::open::Options::default()
            .permissions(permissions)
            .config_overrides(["index.skipHash=true"]);
        gix::discover_opts(real, Default::default(), options).ok()
    }
}

fn facts_of(repo: &gix::Repository) -> Result<RepoFacts, TargetError> {
    let workdir = repo.workdir().ok_or(TargetError::Bare)?;
    // A bare repository's linked worktree has a work tree although core.bare is true, so the
    // work tree's existence decides.
    let checkout = crate::fs::canonicalize(workdir).map_err(|_| TargetError::Bare)?;
    let head = head_of(repo).ok_or(TargetError::NotGit)?;
    // A branch before its first commit has a name but no commit: its handoff is stored under
    // the name, and citations resolve against the files on disk.
    let id = match head.id.clone() {
        Some(id) => id,
        None if head.unborn => String::new(),
        None => return Err(TargetError::NotGit),
    };
    // During a rebase (or `git am`) HEAD is detached, but git records the branch being
    // rebased: the handoff belongs to it.
    let rebased = head.detached.then(|| rebased_branch(repo)).flatten();
    Ok(RepoFacts {
        main: main_worktree(repo),
        checkout,
        detached: head.detached && rebased.is_none(),
        reference: rebased.unwrap_or(head.current),
        head: id,
        config: config::HandoffConfig::of(repo),
    })
}

/// The branch a rebase or `git am` in progress is on (`rebase-merge/head-name`,
/// `rebase-apply/head-name` in the work tree's git dir), if any.
fn rebased_branch(repo: &gix::Repository) -> Option<String> {
    ["rebase-merge/head-name", "rebase-apply/head-name"]
        .iter()
        .find_map(|f| crate::fs::read_to_string(repo.git_dir().join(f)).ok())
        .and_then(|name| {
            name.trim()
                .strip_prefix("refs/heads/")
                .filter(|b| !b.is_empty())
                .map(str::to_string)
        })
}

/// git's rule: the realpath of the common dir, minus a final `.git` component.
fn main_worktree(repo: &gix::Repository) -> PathBuf {
    let common = repo.common_dir();
    let real = crate::fs::canonicalize(common).unwrap_or_else(|_| common.to_path_buf());
    match real.file_name() {
        Some(name) if name == ".git" => real.parent().map_or(real.clone(), Path::to_path_buf),
        _ => real,
    }
}

/// The facts of the checkout containing `dir`, discovered as git would: `GIT_DIR`,
/// `GIT_WORK_TREE` and `GIT_CEILING_DIRECTORIES` are honoured when `honour_env` is set.
pub(crate) fn repo_facts(dir: &Path, honour_env: bool) -> Result<RepoFacts, TargetError> {
    if !crate::fs::metadata(dir).is_ok_and(|m| m.is_dir()) {
        return Err(TargetError::NotDirectory);
    }
    let real = crate::fs::canonicalize(dir).map_err(|_| TargetError::NotDirectory)?;
    let Some(repo) = discover(&real, honour_env) else {
        // A broken ~/.gitconfig fails every open: say so, not "not a checkout".
        return Err(match config::HandoffConfig::globals() {
            Err(why) => TargetError::BadConfig(why),
            Ok(_) => TargetError::NotGit,
        });
    };
    facts_of(&repo)
}

/// Facts of checkout `dir` (path alone decides) and how `recorded` relates to its HEAD.
pub(crate) fn drift_facts(
    dir: &Path,
    recorded: Option<&str>,
) -> Option<(RepoFacts, Option<HeadRelation>)> {
    let real = crate::fs::canonicalize(dir).ok()?;
    let repo = discover(&real, false)?;
    let facts = facts_of(&repo).ok()?;
    let relation = recorded.map(|h| head_relation(&repo, h, &facts.head));
    Some((facts, relation))
}

fn head_relation(repo: &gix::Repository, recorded: &str, head: &str) -> HeadRelation {
    let full_len = repo.object_hash().len_in_hex();
    let Ok(id) = gix::ObjectId::from_hex(recorded.as_bytes()) else {
        return HeadRelation::Unknown;
    };
    if recorded.len() != full_len {
        return HeadRelation::Unknown;
    }
    // A walk that hides a missing or non-commit id would count the whole history.
    let is_commit = repo
        .try_find_header(id)
        .ok()
        .flatten()
        .is_some_and(|h| h.kind() == gix::object::Kind::Commit);
    if !is_commit {
        return HeadRelation::Unknown;
    }
    if recorded.eq_ignore_ascii_case(head) {
        return HeadRelation::Same;
    }
    let Ok(head_id) = gix::ObjectId::from_hex(head.as_bytes()) else {
        return HeadRelation::Unknown;
    };
    let Ok(walk) = repo.rev_walk([head_id]).all() else {
        return HeadRelation::Unknown;
    };
    let mut is_ancestor = false;
    for info in walk {
        match info {
            Ok(info) if info.id == id => {
                is_ancestor = true;
                break;
            }
            Ok(_) => {}
            Err(_) => return HeadRelation::Unknown,
        }
    }
    if !is_ancestor {
        return HeadRelation::Diverged;
    }
    match repo.rev_walk([head_id]).with_hidden([id]).all() {
        Ok(walk) => HeadRelation::Behind(walk.filter(Result::is_ok).count()),
        Err(_) => HeadRelation::Unknown,
    }
}

/// Whether `refs/heads/<branch>` exists in the repository of checkout `dir`.
pub(crate) fn branch_exists(dir: &Path, branch: &str) -> bool {
    let Some(repo) = crate::fs::canonicalize(dir)
        .ok()
        .and_then(|r| discover(&r, false))
    else {
        return false;
    };
    repo.try_find_reference(format!("refs/heads/{branch}").as_str())
        .ok()
        .flatten()
        .is_some()
}

/// Where git runs the hooks of the repository containing `path`: `core.hooksPath` (a relative
/// value is taken from the work tree's top level, as git does), else `<common dir>/hooks`.
pub(crate) fn hooks_dir(path: &Path) -> Option<PathBuf> {
    let real = crate::fs::canonicalize(path).ok()?;
    let repo = discover(&real, false)?;
    let configured = repo
        .config_snapshot()
        .trusted_path("core.hooksPath")
        .ok()
        .flatten();
    match configured {
        Some(p) if p.is_absolute() => Some(p),
        Some(p) => Some(repo.workdir().unwrap_or(repo.git_dir()).join(p)),
        None => Some(repo.common_dir().join("hooks")),
    }
}

/// The branch check (docs/gate.md §2.10).
pub(crate) fn branch_matches(declared: &str, head: &Head) -> bool {
    if !head.detached {
        return declared == head.current;
    }
    let is_hex =
        (4..=40).contains(&declared.len()) && declared.bytes().all(|b| b.is_ascii_hexdigit());
    is_hex
        && head
            .id
            .as_deref()
            .is_some_and(|id| id.starts_with(&declared.to_ascii_lowercase()))
}

/// What makes two checkouts one project: the objects of one repository (a commit the other
/// checked out is among them) or a remote they share (its URL normalised). Asked for the
/// handoffs of other checkouts when a reader has none of its own, so a guess never crosses
/// projects.
pub(crate) struct Project {
    repo: Option<gix::Repository>,
    remotes: Vec<String>,
}

impl Project {
    /// The project of the checkout at `dir`.
    pub(crate) fn of(dir: &Path) -> Project {
        let repo = crate::fs::canonicalize(dir)
            .ok()
            .and_then(|real| discover(&real, false));
        let remotes = repo.as_ref().map(remote_urls).unwrap_or_default();
        Project { repo, remotes }
    }

    /// Whether a handoff that describes `head` in `checkout` belongs to this project: `head`
    /// is an object here, or the repository at `checkout` has a remote this one has.
    pub(crate) fn holds(&self, head: Option<&str>, checkout: Option<&Path>) -> bool {
        let Some(repo) = &self.repo else {
            return false;
        };
        let known = head
            .and_then(|h| gix::ObjectId::from_hex(h.as_bytes()).ok())
            .is_some_and(|id| repo.has_object(id));
        known
            || (!self.remotes.is_empty()
                && checkout
                    .and_then(|c| crate::fs::canonicalize(c).ok())
                    .and_then(|real| discover(&real, false))
                    .is_some_and(|other| {
                        remote_urls(&other).iter().any(|u| self.remotes.contains(u))
                    }))
    }
}

/// The fetch URLs of `repo`'s remotes, normalised; a relative path (`../remote.git`, `.`) is
/// resolved against the repository first, as git resolves it, so two unrelated repositories
/// that spell one relative URL never share it.
fn remote_urls(repo: &gix::Repository) -> Vec<String> {
    let base = repo
        .workdir()
        .unwrap_or_else(|| repo.git_dir())
        .to_path_buf();
    repo.remote_names()
        .into_iter()
        .filter_map(|name| {
            repo.find_remote(AsRef::<gix::bstr::BStr>::as_ref(&name))
                .ok()
        })
        .filter_map(|remote| {
            remote
                .url(gix::remote::Direction::Fetch)
                .map(|u| normalise_url(&resolved(&base, &u.to_bstring().to_string())))
        })
        .filter(|u| !u.is_empty())
        .collect()
}

/// `url` with a relative local path made absolute against `base` (canonical where it exists);
/// any other URL as it is.
fn resolved(base: &Path, url: &str) -> String {
    let scp = url
        .split_once(':')
        .is_some_and(|(host, _)| !host.contains('/'));
    if url.contains("://") || scp || url.starts_with('/') {
        return url.to_string();
    }
    let joined = base.join(url);
    crate::fs::canonicalize(&joined)
        .unwrap_or(joined)
        .to_string_lossy()
        .into_owned()
}

/// A remote URL as one project's clones may spell it: scheme, user and a trailing `.git` or
/// `/` gone, `host:path` as `host/path`, the host lowercased.
/// (`git@github.com:a/b.git`, `https://github.com/a/b` and `ssh://git@GitHub.com/a/b/` are one.)
pub(crate) fn normalise_url(url: &str) -> String {
    let url = url.trim();
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let rest = match rest.split_once('@') {
        Some((user, r)) if !user.contains('/') => r,
        _ => rest,
    };
    // scp-like `host:path` (not a Windows drive or a port): the first `:` before any `/`.
    let rest = match rest.split_once(':') {
        Some((host, path))
            if !host.contains('/') && !path.starts_with(|c: char| c.is_ascii_digit()) =>
        {
            format!("{host}/{path}")
        }
        Some((host, path)) if !host.contains('/') => {
            // host:port/path
            let path = path.split_once('/').map_or("", |(_, p)| p);
            format!("{host}/{path}")
        }
        _ => rest.to_string(),
    };
    let rest = rest.trim_end_matches('/');
    let rest = rest
        .strip_suffix(".git")
        .unwrap_or(rest)
        .trim_end_matches('/');
    match rest.split_once('/') {
        Some((host, path)) => format!("{}/{path}", host.to_ascii_lowercase()),
        None => rest.to_ascii_lowercase(),
    }
}

/// A citation a new handoff can start from: the first tracked file of the work tree at `root`
/// (in index order) with a line that can be cited as it is — no backtick, no `|`, some text —
/// as `(path, line number, the line's text)`, at most 60 characters of it.
pub(crate) fn example_citation(root: &Path) -> Option<(String, usize, String)> {
    let repo = crate::fs::canonicalize(root)
        .ok()
        .and_then(|real| discover(&real, false))?;
    let index = repo.index_or_empty().ok()?;
    let work = repo.workdir()?.to_path_buf();
    for entry in index.entries().iter().take(200) {
        let path = String::from_utf8_lossy(entry.path(&index)).into_owned();
        let Ok(text) = crate::fs::read_to_string(work.join(&path)) else {
            continue;
        };
        for (i, line) in text.lines().enumerate().take(50) {
            let t = crate::text::trim(line);
            if t.chars().count() >= 4 && !t.contains('`') && !t.contains('|') {
                let fragment: String = t.chars().take(60).collect();
                return Some((path, i + 1, crate::text::trim(&fragment).to_string()));
            }
        }
    }
    None
}

/// Whether the repository-relative `path` matches `pattern` as git matches a pathspec glob:
/// `*` and `?` within one directory, `**` across them; a pattern without a wildcard matches
/// the path itself and everything under it (`src` and `src/` match `src/a.rs`).
pub(crate) fn glob_matches(pattern: &str, path: &str) -> bool {
    let pattern = pattern.trim_start_matches("./");
    if !pattern.contains(['*', '?', '[']) {
        let dir = pattern.trim_end_matches('/');
        return path == dir || path.strip_prefix(dir).is_some_and(|r| r.starts_with('/'));
    }
    gix::glob::wildmatch(
        pattern.into(),
        path.into(),
        gix::glob::wildmatch::Mode::NO_MATCH_SLASH_LITERAL,
    )
}

#[cfg(test)]
mod project_tests {
    use super::normalise_url;

    #[test]
    fn one_remote_spelled_many_ways_is_one() {
        let want = "github.com/a/b";
        for url in [
            "git@github.com:a/b.git",
            "https://github.com/a/b",
            "ssh://git@GitHub.com/a/b/",
            "https://user@github.com/a/b.git",
            "ssh://git@github.com:22/a/b.git",
        ] {
            assert_eq!(normalise_url(url), want, "{url}");
        }
        assert_ne!(normalise_url("/srv/git/a.git"), want);
        assert_eq!(
            normalise_url("/srv/git/a.git"),
            normalise_url("file:///srv/git/a")
        );
    }
}

#[cfg(test)]
mod glob_tests {
    use super::glob_matches;

    #[test]
    fn globs_match_as_git_pathspecs_do() {
        assert!(glob_matches("app/**", "app/Mail/Invoice.php"));
        assert!(glob_matches("src/*.rs", "src/a.rs"));
        assert!(
            !glob_matches("src/*.rs", "src/x/a.rs"),
            "* stays in one folder"
        );
        assert!(glob_matches("src/**/*.rs", "src/x/a.rs"));
        assert!(glob_matches("app/Mail", "app/Mail/Invoice.php"));
        assert!(glob_matches("app/Mail/", "app/Mail/Invoice.php"));
        assert!(
            !glob_matches("app/Ma", "app/Mail/Invoice.php"),
            "a folder, not a prefix"
        );
        assert!(glob_matches("composer.json", "composer.json"));
    }
}
