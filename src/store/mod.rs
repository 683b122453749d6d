//! The central store (store.md §1–§5): where it is, which checkout a command is about, how a
//! slot is named (byte-compatible with the bash store), and which file a reader picks.
//! Changing a slot is `slot.rs`'s job; this module only locates and enumerates.

pub mod drift;
pub mod runs;
pub mod skeleton;
pub mod slot;
pub mod verdict;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use md5::{Digest, Md5};
use serde::Serialize;

use crate::document::envelope::{self, Progress};
use crate::error::Error;
use crate::git::{self, RepoFacts, TargetError};

/// The store directory, as configured (printed paths keep this spelling).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Store {
    pub dir: PathBuf,
}

fn non_empty_var(name: &str) -> Option<OsString> {
    std::env::var_os(name).filter(|v| !v.is_empty())
}

/// The home directory: `$HOME` if non-empty, else the user database.
pub fn home() -> Option<PathBuf> {
    std::env::home_dir().filter(|h| !h.as_os_str().is_empty())
}

impl Store {
    /// Resolve the store directory (store.md §1). Does not touch the filesystem.
    pub fn locate() -> Result<Store, Error> {
        let dir = if let Some(d) = non_empty_var("HANDOFF_STORE_DIR") {
            PathBuf::from(d)
        } else if let Some(x) = non_empty_var("XDG_DATA_HOME") {
            PathBuf::from(x).join("context-economy/handoffs")
        } else {
            home()
                .ok_or(Error::NoHome)?
                .join(".local/share/context-economy/handoffs")
        };
        // One trailing `/` is removed so printed paths never contain `//`.
        let text = dir.to_string_lossy();
        let dir = match text.strip_suffix('/') {
            Some(stripped) if !stripped.is_empty() => PathBuf::from(stripped),
            _ => dir,
        };
        Ok(Store { dir })
    }

    /// Locate and check that the path, if it exists, is a directory.
    pub fn open() -> Result<Store, Error> {
        let store = Store::locate()?;
        if let Ok(meta) = std::fs::metadata(&store.dir)
            && !meta.is_dir()
        {
            return Err(Error::StoreNotDirectory(store.shown()));
        }
        Ok(store)
    }

    /// The directory as printed.
    pub fn shown(&self) -> String {
        self.dir.to_string_lossy().into_owned()
    }

    /// `<store>/<name>` as printed.
    pub fn path_of(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// Create the store directory (and parents) with mode 0700.
    pub fn create(&self) -> Result<(), Error> {
        slot::create_private_dir(&self.dir)
    }

    /// Refuse to overwrite a slot that holds another branch's or repository's handoff
    /// (store.md §9.3 step 1). A slot whose checkout is gone is judged on the branch alone.
    pub fn check_collision(&self, target: &Target) -> Result<(), Error> {
        let Some(current) = HandoffInfo::read(self, &target.name) else {
            return Ok(());
        };
        let other_branch = current
            .declared()
            .is_some_and(|d| !drift::declared_matches(d, &target.facts));
        let other_main = drift::checkout_path(&current)
            .and_then(|c| git::repo_facts(&c, false).ok())
            .map(|f| f.main);
        let other_repo = other_main.as_ref().is_some_and(|m| *m != target.facts.main);
        if !other_branch && !other_repo {
            return Ok(());
        }
        let holder = other_main
            .map(|m| m.to_string_lossy().into_owned())
            .or(current.checkout.clone())
            .unwrap_or_else(|| "?".into());
        Err(Error::Collision(format!(
            "refusing to overwrite {}: it holds the handoff for {} in {holder}, not for {} in {} (their file names collide); pass --force to replace it (the old version goes to history)",
            current.path,
            current.declared().unwrap_or("?"),
            target.facts.reference,
            target.main()
        )))
    }

    /// The exact pick, else the most recent non-placeholder with the other candidates
    /// (store.md §5). An exact pick is read directly — the store is not enumerated — so
    /// reading one's own slot costs the same whatever the store's size; its `others` is empty.
    pub fn pick(
        &self,
        exact: Option<&str>,
    ) -> Result<Option<(HandoffInfo, PickKind, Vec<HandoffInfo>)>, Error> {
        if let Some(info) = exact.and_then(|name| HandoffInfo::read(self, name)) {
            return Ok(Some((info, PickKind::Exact, Vec::new())));
        }
        let (candidates, _) = self.candidates()?;
        Ok(pick(candidates, exact))
    }

    /// Every candidate (store.md §5), newest first, and how many `*.md` entries were skipped.
    pub fn candidates(&self) -> Result<(Vec<HandoffInfo>, usize), Error> {
        let entries = match std::fs::read_dir(&self.dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((Vec::new(), 0)),
            Err(e) => return Err(Error::io(&self.dir, e)),
        };
        let mut out = Vec::new();
        let mut skipped = 0;
        for entry in entries.flatten() {
            let Ok(name) = entry.file_name().into_string() else {
                continue;
            };
            if !name.ends_with(".md") || name.starts_with('.') {
                continue;
            }
            match HandoffInfo::read(self, &name) {
                Some(info) => out.push(info),
                None => skipped += 1,
            }
        }
        sort_newest_first(&mut out);
        Ok((out, skipped))
    }
}

/// Newest first; ties by the smaller name.
pub fn sort_newest_first(list: &mut [HandoffInfo]) {
    list.sort_by(|a, b| b.mtime.cmp(&a.mtime).then_with(|| a.name.cmp(&b.name)));
}

/// Slugify bytes: everything outside `A–Z a–z 0–9 . _ -` becomes `_`, byte by byte.
pub fn slugify(bytes: &[u8]) -> String {
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

/// `<repo>-<branch>-<hash8>.md` for main worktree `main` and ref `reference` (store.md §3).
pub fn slot_name(main: &[u8], reference: &str) -> String {
    let last = main
        .rsplit(|&b| b == b'/')
        .find(|c| !c.is_empty())
        .unwrap_or(main);
    let hash = Md5::digest(main);
    let hex: String = hash.iter().take(4).map(|b| format!("{b:02x}")).collect();
    format!(
        "{}-{}-{hex}.md",
        slugify(last),
        slugify(reference.replace('/', "-").as_bytes())
    )
}

/// The bytes of a path (its OS representation).
pub fn path_bytes(p: &Path) -> Vec<u8> {
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

/// Where the target came from (store.md §2.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TargetSource {
    Argument,
    Environment,
    Cwd,
}

/// The target checkout with its git facts and slot name.
#[derive(Debug, Clone)]
pub struct Target {
    pub facts: RepoFacts,
    pub name: String,
}

/// A target that has no slot: the message (without prefix) and where it came from.
#[derive(Debug, Clone)]
pub struct TargetFailure {
    pub message: String,
    pub source: TargetSource,
}

impl Target {
    /// Pick and inspect the target: `arg`, else `CONTEXT_ECONOMY_CHECKOUT`, else the cwd.
    pub fn resolve(arg: Option<&str>) -> Result<Target, TargetFailure> {
        let (dir, shown, source) = match arg.filter(|a| !a.is_empty()) {
            Some(a) => (PathBuf::from(a), a.to_string(), TargetSource::Argument),
            None => match std::env::var("CONTEXT_ECONOMY_CHECKOUT")
                .ok()
                .filter(|v| !v.is_empty())
            {
                Some(v) => (
                    PathBuf::from(&v),
                    format!("CONTEXT_ECONOMY_CHECKOUT={v}"),
                    TargetSource::Environment,
                ),
                None => {
                    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
                    let shown = cwd.to_string_lossy().into_owned();
                    (cwd, shown, TargetSource::Cwd)
                }
            },
        };
        let fail = |message: String| TargetFailure { message, source };
        match git::repo_facts(&dir, true) {
            Ok(facts) => Ok(Target::from_facts(facts)),
            Err(TargetError::NotDirectory) => Err(fail(format!("{shown} is not a directory"))),
            Err(TargetError::NotGit) => Err(fail(format!("{shown} is not inside a git checkout"))),
            Err(TargetError::Bare) => Err(fail(format!(
                "{shown} is a bare repository; a handoff needs a work tree"
            ))),
            Err(TargetError::Unborn(b)) => Err(fail(format!(
                "{shown} has no commits yet (branch {b} is unborn)"
            ))),
        }
    }

    /// The target at `dir`, discovered as git would (for hooks, which never report why).
    pub fn at(dir: &Path) -> Option<Target> {
        git::repo_facts(dir, true).ok().map(Target::from_facts)
    }

    fn from_facts(facts: RepoFacts) -> Target {
        let name = slot_name(&path_bytes(&facts.main), &facts.reference);
        Target { facts, name }
    }

    pub fn main(&self) -> String {
        self.facts.main.to_string_lossy().into_owned()
    }

    pub fn checkout(&self) -> String {
        self.facts.checkout.to_string_lossy().into_owned()
    }
}

/// What readers know about one handoff file (store.md §9 `HandoffInfo`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HandoffInfo {
    pub path: String,
    pub name: String,
    pub branch: Option<String>,
    pub checkout: Option<String>,
    pub status: Option<String>,
    pub progress: Option<String>,
    pub head: Option<String>,
    pub mtime: Option<i64>,
    pub size: u64,
    #[serde(skip)]
    pub write_session: Option<String>,
}

/// Seconds since the epoch of a file time (negative before 1970).
pub fn epoch(t: SystemTime) -> i64 {
    match t.duration_since(SystemTime::UNIX_EPOCH) {
        Ok(d) => d.as_secs() as i64,
        Err(e) => -(e.duration().as_secs() as i64),
    }
}

impl HandoffInfo {
    /// Read a candidate: a non-empty, readable regular file (never a symlink).
    pub fn read(store: &Store, name: &str) -> Option<HandoffInfo> {
        let path = store.path_of(name);
        let meta = std::fs::symlink_metadata(&path).ok()?;
        if !meta.file_type().is_file() || meta.len() == 0 {
            return None;
        }
        let head = slot::read_head(&path).ok()?;
        Some(HandoffInfo::from_parts(store, name, &head, &meta))
    }

    /// Build from the first bytes of the file and its metadata.
    pub fn from_parts(
        store: &Store,
        name: &str,
        head: &[u8],
        meta: &std::fs::Metadata,
    ) -> HandoffInfo {
        let text = String::from_utf8_lossy(head);
        let env = envelope::store_envelope(&text);
        let field = |n: &str| envelope::store_field(&env, n).map(str::to_string);
        HandoffInfo {
            path: store.path_of(name).to_string_lossy().into_owned(),
            name: name.to_string(),
            branch: field("branch"),
            checkout: field("checkout"),
            status: field("status"),
            progress: field("progress"),
            head: field("head"),
            mtime: meta.modified().ok().map(epoch),
            size: meta.len(),
            write_session: field("write_session"),
        }
    }

    /// The declared branch: the first word of `branch:`.
    pub fn declared(&self) -> Option<&str> {
        self.branch.as_deref().and_then(envelope::declared_branch)
    }

    pub fn is_placeholder(&self) -> bool {
        self.progress.as_deref() == Some(Progress::Writing.as_str())
    }

    /// The progress as shown: the raw value, or `complete` when absent.
    pub fn progress_shown(&self) -> &str {
        self.progress.as_deref().unwrap_or("complete")
    }
}

/// How a reader's pick was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PickKind {
    Exact,
    Recent,
}

/// The exact pick, else the most recent non-placeholder (store.md §5); plus the others.
pub fn pick(
    candidates: Vec<HandoffInfo>,
    exact: Option<&str>,
) -> Option<(HandoffInfo, PickKind, Vec<HandoffInfo>)> {
    let index = match exact.and_then(|n| candidates.iter().position(|c| c.name == n)) {
        Some(i) => Some((i, PickKind::Exact)),
        None => candidates
            .iter()
            .position(|c| !c.is_placeholder())
            .map(|i| (i, PickKind::Recent)),
    };
    let (i, kind) = index?;
    let mut others = candidates;
    let picked = others.remove(i);
    Some((picked, kind, others))
}

/// Read a non-negative decimal environment integer; anything else means `default`.
pub fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .filter(|v| !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Now, in epoch seconds.
pub fn now() -> i64 {
    epoch(SystemTime::now())
}

/// `gap(s)` of store.md §0.
pub fn gap(s: u64) -> String {
    if s < 90 {
        format!("{s} second(s)")
    } else if s < 5400 {
        format!("{} minute(s)", s / 60)
    } else if s < 172_800 {
        format!("{} hour(s)", s / 3600)
    } else {
        format!("{} day(s)", s / 86_400)
    }
}

/// `days-ago` of store.md §0.
pub fn days_ago(mtime: Option<i64>, now: i64) -> String {
    match mtime {
        Some(m) => format!("{} day(s) ago", (now - m).max(0) / 86_400),
        None => "at an unknown time (mtime unreadable)".into(),
    }
}

/// `YYYY-MM-DDTHH:MM:SSZ` in UTC.
pub fn iso(epoch: i64) -> String {
    chrono::DateTime::from_timestamp(epoch, 0)
        .map(|t| t.format("%Y-%m-%dT%H:%M:%SZ").to_string())
        .unwrap_or_default()
}

/// What a placeholder (`progress: writing`) means right now (hooks.md §2.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlaceholderState {
    /// Young enough, or its age is unknown.
    Active,
    /// Past its budget, but its writer's transcript is still advancing.
    Slow,
    Abandoned,
}

/// The writer's transcript named by `write_session:` and its mtime, if it exists:
/// `<home>/.claude/projects/<id>.jsonl` or `<home>/.claude/projects/*/<id>.jsonl`.
pub fn writer_transcript(info: &HandoffInfo) -> Option<(PathBuf, SystemTime)> {
    let id = info
        .write_session
        .as_deref()
        .filter(|id| skeleton::is_safe_id(id))?;
    let projects = home()?.join(".claude/projects");
    let file = format!("{id}.jsonl");
    let mut candidates = vec![projects.join(&file)];
    if let Ok(entries) = std::fs::read_dir(&projects) {
        let mut dirs: Vec<PathBuf> = entries.flatten().map(|e| e.path().join(&file)).collect();
        dirs.sort();
        candidates.extend(dirs);
    }
    candidates.into_iter().find_map(|p| {
        std::fs::metadata(&p)
            .and_then(|m| m.modified())
            .ok()
            .map(|t| (p, t))
    })
}

/// The placeholder's state, with its writer's transcript when one was found.
pub fn placeholder_state(
    info: &HandoffInfo,
    now: i64,
) -> (PlaceholderState, Option<(PathBuf, SystemTime)>) {
    let timeout = env_u64("CTX_FORK_TIMEOUT_SECONDS", 600);
    let window = env_u64("CTX_FORK_LIVENESS_WINDOW_SECONDS", 90);
    let transcript = writer_transcript(info);
    let state = match info.mtime {
        None => PlaceholderState::Active,
        Some(m) if (now - m).max(0) as u64 <= timeout => PlaceholderState::Active,
        Some(_) => {
            let fresh = transcript
                .as_ref()
                .is_some_and(|(_, t)| (now - epoch(*t)).max(0) as u64 <= window);
            if fresh {
                PlaceholderState::Slow
            } else {
                PlaceholderState::Abandoned
            }
        }
    };
    (state, transcript)
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

    #[test]
    fn picks_prefer_exact_and_never_guess_a_placeholder() {
        let info = |name: &str, mtime: i64, progress: Option<&str>| HandoffInfo {
            path: name.into(),
            name: name.into(),
            branch: None,
            checkout: None,
            status: None,
            progress: progress.map(str::to_string),
            head: None,
            mtime: Some(mtime),
            size: 1,
            write_session: None,
        };
        let mut list = vec![
            info("a.md", 5, None),
            info("b.md", 9, Some("writing")),
            info("c.md", 5, None),
        ];
        sort_newest_first(&mut list);
        let (p, kind, others) = pick(list.clone(), Some("c.md")).expect("exact");
        assert_eq!(
            (p.name.as_str(), kind, others.len()),
            ("c.md", PickKind::Exact, 2)
        );
        let (p, kind, _) = pick(list, None).expect("recent");
        assert_eq!((p.name.as_str(), kind), ("a.md", PickKind::Recent));
    }
}
