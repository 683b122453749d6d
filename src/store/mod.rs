//! The central store (docs/store.md §1–§5): where it is (`Store::locate`), the collision check, and
//! enumerating and picking handoffs. Targets, slot names, what a reader knows of a file, times,
//! changing a slot (`slot/`), background writes (`runs`) and delivery live in their own files.

pub(crate) mod authorship;
pub(crate) mod chain;
pub(crate) mod change;
pub(crate) mod costs;
pub(crate) mod deliver;
pub(crate) mod drift;
pub(crate) mod excerpt;
pub(crate) mod index;
pub(crate) mod info;
pub(crate) mod lineage;
pub(crate) mod naming;
pub(crate) mod placeholder;
pub(crate) mod resets;
pub(crate) mod runs;
pub mod slot;
pub(crate) mod target;
pub(crate) mod time;
pub(crate) mod tripwire;
pub(crate) mod usage;
pub(crate) mod verdict;

pub(crate) use crate::env::home;

/// Where the hooks keep their state beside the store: `<home>/.claude/state/handoff-fork/`.
pub(crate) fn state_dir() -> Option<std::path::PathBuf> {
    Some(home()?.join(".claude/state/handoff-fork"))
}
pub(crate) use info::{HandoffInfo, PickKind, pick};
pub use naming::slot_name;
pub(crate) use naming::{path_bytes, slugify};
pub(crate) use placeholder::{PlaceholderState, placeholder_state};
/// A slot's first lines, as every reader takes them (reading changes nothing).
pub(crate) use slot::read_head;
pub(crate) use target::Target;
pub(crate) use time::{ago, epoch, gap, iso, now};

use std::path::PathBuf;

use crate::error::Error;
use crate::git;

/// How many of the newest handoffs a guess looks at for the target's project.
pub(crate) const GUESS_DEPTH: usize = 200;

/// The store directory, as configured (printed paths keep this spelling).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Store {
    pub dir: PathBuf,
}

impl Store {
    /// Resolve the store directory (docs/store.md §1). Does not touch the filesystem.
    pub(crate) fn locate() -> Result<Store, Error> {
        // XDG's rules as `directories` implements them: `XDG_DATA_HOME` counts only when it
        // is absolute (a relative one would resolve against wherever a hook happens to run).
        let dir = if let Some(d) = crate::env::non_empty("HANDOFF_STORE_DIR") {
            PathBuf::from(d)
        } else {
            directories::BaseDirs::new()
                .ok_or(Error::NoHome)?
                .data_dir()
                .join("context-economy/handoffs")
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
    pub(crate) fn open() -> Result<Store, Error> {
        let store = Store::locate()?;
        if let Ok(meta) = crate::fs::metadata(&store.dir)
            && !meta.is_dir()
        {
            return Err(Error::StoreNotDirectory(store.dir.clone()));
        }
        Ok(store)
    }

    /// The directory as printed.
    pub(crate) fn shown(&self) -> String {
        self.dir.to_string_lossy().into_owned()
    }

    /// `<store>/<name>` as printed.
    pub(crate) fn path_of(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// `<store>/.history/<name>`: the kept versions of slot `name`.
    /// The named slots beside `target`'s default one (same repository and branch), by name,
    /// each that holds a handoff (a placeholder included). Found through their marks in
    /// `.slots/` (one empty file per named slot ever written), so a session start does not list
    /// a store of 10,000 handoffs to learn that there are none.
    pub(crate) fn named_slots(&self, target: &Target) -> Vec<(String, HandoffInfo)> {
        let default = slot_of_default(target);
        let Ok(entries) = crate::fs::read_dir(self.dir.join(SLOT_MARKS)) else {
            return Vec::new();
        };
        let mut found: Vec<(String, HandoffInfo)> = entries
            .flatten()
            .filter_map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                let slot = naming::slot_in(&name)?;
                (name == naming::named_slot(&default, slot))
                    .then(|| slot.to_string())
                    .and_then(|slot| HandoffInfo::read(self, &name).map(|i| (slot, i)))
            })
            .collect();
        found.sort_by(|a, b| a.0.cmp(&b.0));
        found
    }

    /// Mark named slot `name` as written (best effort: a slot without its mark is still read by
    /// name, only not listed at a session start).
    pub(crate) fn mark_named(&self, name: &str) {
        if naming::slot_in(name).is_none() {
            return;
        }
        let marks = self.dir.join(SLOT_MARKS);
        if slot::create_private_dir(&marks).is_ok() {
            use crate::fs::OpenOptionsExt;
            let _ = crate::fs::OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(false)
                .mode(0o600)
                .custom_flags(nix::libc::O_NOFOLLOW)
                .open(marks.join(name));
        }
    }

    pub(crate) fn history_dir(&self, name: &str) -> PathBuf {
        self.dir.join(".history").join(name)
    }

    /// Create the store directory (and parents) with mode 0700.
    pub(crate) fn create(&self) -> Result<(), Error> {
        slot::create_private_dir(&self.dir)
    }

    /// Refuse to overwrite a slot that holds another branch's or repository's handoff
    /// (docs/store.md §9.3 step 1). A slot whose checkout is gone is judged on the branch alone.
    pub(crate) fn check_collision(&self, target: &Target) -> Result<(), Error> {
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
        Err(Error::Collision {
            slot: PathBuf::from(&current.path),
            holds_branch: current.declared().unwrap_or("?").to_string(),
            holds_checkout: holder,
            branch: target.facts.reference.clone(),
            main: target.main(),
        })
    }

    /// The target's own slot, else the most recent non-placeholder with the other candidates
    /// (docs/store.md §5) — for a target, only among its project's handoffs (a commit its
    /// repository holds, or a remote they share), the newest [`GUESS_DEPTH`] looked at: a guess
    /// never crosses projects. An exact pick is read directly — the store is not enumerated —
    /// so reading one's own slot costs the same whatever the store's size; its `others` is empty.
    pub(crate) fn pick(
        &self,
        target: Option<&Target>,
    ) -> Result<Option<(HandoffInfo, PickKind, Vec<HandoffInfo>)>, Error> {
        let exact = target.map(|t| t.name.as_str());
        if let Some(info) = exact.and_then(|name| HandoffInfo::read(self, name)) {
            return Ok(Some((info, PickKind::Exact, Vec::new())));
        }
        let (mut candidates, _) = self.candidates()?;
        // A named slot is a thread of its own: read by name, never guessed for another slot.
        candidates.retain(|c| naming::slot_in(&c.name).is_none());
        if let Some(t) = target {
            let project = crate::git::Project::of(&t.facts.checkout);
            let mut seen: std::collections::HashMap<Option<String>, bool> = Default::default();
            candidates.truncate(GUESS_DEPTH);
            candidates.retain(|c| {
                let by_head = c.head.is_some() && project.holds(c.head.as_deref(), None);
                by_head
                    || *seen.entry(c.checkout.clone()).or_insert_with(|| {
                        project.holds(None, c.checkout.as_deref().map(std::path::Path::new))
                    })
            });
        }
        Ok(pick(candidates, exact))
    }

    /// How many handoffs a listing sees (for the benches).
    pub fn listed(&self) -> Option<usize> {
        self.candidates().ok().map(|(c, _)| c.len())
    }

    /// Whether the handoff of `slot` is found as a reader finds it (for the benches).
    pub fn finds(&self, slot: &str) -> bool {
        HandoffInfo::read(self, slot).is_some()
    }

    /// Every candidate (docs/store.md §5), newest first, and how many `*.md` entries were skipped.
    pub(crate) fn candidates(&self) -> Result<(Vec<HandoffInfo>, usize), Error> {
        // The directory is listed on a thread of its own while the list index is read here.
        let dir_path = self.dir.clone();
        let listing = std::thread::spawn(move || -> std::io::Result<Vec<String>> {
            Ok(crate::fs::read_dir(dir_path)?
                .flatten()
                .filter_map(|e| e.file_name().into_string().ok())
                .filter(|name| name.ends_with(".md") && !name.starts_with('.'))
                .collect())
        });
        let index = index::Index::load(self);
        let records = index.records();
        let names = match listing.join() {
            Ok(Ok(names)) => names,
            Ok(Err(e)) if e.kind() == std::io::ErrorKind::NotFound => return Ok((Vec::new(), 0)),
            Ok(Err(e)) => return Err(Error::io(&self.dir, e)),
            Err(_) => {
                return Err(Error::io(
                    &self.dir,
                    std::io::Error::other("listing failed"),
                ));
            }
        };
        // Reading the heads is all system calls: an unchanged file costs one `fstatat` against
        // the list index (index.rs), a new or changed one an open and a read; two threads
        // halve a large store's wait.
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(4));
        let chunk = names.len().div_ceil(threads).max(256);
        let dir = crate::fs::File::open(&self.dir).map_err(|e| Error::io(&self.dir, e))?;
        let now = std::time::SystemTime::now();
        let (dir, records) = (&dir, &records);
        let parts: Vec<Scan> = std::thread::scope(|scope| {
            let workers: Vec<_> = names
                .chunks(chunk)
                .map(|part| scope.spawn(move || self.scan(dir, records, part, now)))
                .collect();
            workers.into_iter().filter_map(|w| w.join().ok()).collect()
        });
        let mut all = Scan::default();
        for mut part in parts {
            all.infos.append(&mut part.infos);
            all.stamps.append(&mut part.stamps);
            all.skipped += part.skipped;
            all.stale += part.stale;
        }
        if index::worth_rewriting(all.infos.len(), all.stale) {
            let entries: Vec<_> = all.infos.iter().zip(all.stamps.iter().copied()).collect();
            index::write(self, &entries, now);
        }
        sort_newest_first(&mut all.infos);
        Ok((all.infos, all.skipped))
    }

    /// Some directory entries: each from the list index when it holds this very state of the
    /// file, else read (and stamped with the state it was read in).
    fn scan(
        &self,
        dir: &crate::fs::File,
        records: &index::Records,
        names: &[String],
        now: std::time::SystemTime,
    ) -> Scan {
        use nix::fcntl::AtFlags;
        let mut scan = Scan::default();
        for name in names {
            if !records.is_empty()
                && let Ok(st) =
                    nix::sys::stat::fstatat(dir, name.as_str(), AtFlags::AT_SYMLINK_NOFOLLOW)
                && st.st_mode & nix::libc::S_IFMT == nix::libc::S_IFREG
            {
                let stamp = info::FileState::of_stat(&st);
                if let Some(info) = records.get(self, name, stamp) {
                    scan.infos.push(info);
                    scan.stamps.push(stamp);
                    continue;
                }
            }
            match HandoffInfo::read_in(self, dir, name) {
                Some((info, stamp)) => {
                    scan.stale += usize::from(stamp.settled(now));
                    scan.infos.push(info);
                    scan.stamps.push(stamp);
                }
                None => scan.skipped += 1,
            }
        }
        scan
    }
}

/// What enumerating found: the handoffs with the state each was read in, how many entries
/// were skipped, and how many had to be read though the list index could have held them.
#[derive(Default)]
struct Scan {
    infos: Vec<HandoffInfo>,
    stamps: Vec<info::FileState>,
    skipped: usize,
    stale: usize,
}

/// Newest first; ties by the smaller name.
pub(crate) fn sort_newest_first(list: &mut [HandoffInfo]) {
    // The entries are large: sort their positions, then move each entry once.
    let mut order: Vec<usize> = (0..list.len()).collect();
    order.sort_unstable_by(|&a, &b| {
        let (a, b) = (&list[a], &list[b]);
        b.mtime.cmp(&a.mtime).then_with(|| a.name.cmp(&b.name))
    });
    // Apply the order in place (each cycle followed once), as `sort_by_cached_key` does.
    for i in 0..order.len() {
        let mut j = order[i];
        while j < i {
            j = order[j];
        }
        order[i] = j;
        list.swap(i, j);
    }
}

/// Where the marks of named slots are (`Store::named_slots`).
const SLOT_MARKS: &str = ".slots";

/// The default slot's name of `target`'s branch (whatever slot `target` names).
fn slot_of_default(target: &Target) -> String {
    chain::slot_of(&target.facts.main, &target.facts.reference)
}
