//! `prune` (docs/store.md §9.9): what may go, and with `apply` its deletion — each slot under
//! its own lock (a locked one is left alone), a repository's orphan chains in one go. Only
//! handoffs that were delivered, abandoned, or whose checkout or branch is gone are deleted once
//! old; an unread handoff on a live branch is kept however old it is. Lock files are never
//! pruned.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde::Serialize;

use crate::document::envelope::Progress;
use crate::error::Error;
use crate::git;
use crate::store::drift::checkout_path;
use crate::store::{HandoffInfo, Store, slot};

/// One thing `prune` would delete, or did.
#[derive(Debug, Serialize)]
pub(crate) struct Item {
    pub(crate) path: String,
    pub(crate) kind: &'static str,
    pub(crate) reason: &'static str,
    pub(crate) age_seconds: u64,
    pub(crate) deleted: bool,
    #[serde(skip)]
    slot: Option<String>,
    /// Its slot was locked: left alone.
    #[serde(skip)]
    pub(crate) skipped: bool,
    #[serde(skip)]
    pub(crate) failed: bool,
    /// For a `ref` item: the repository and the id the ref must still hold to be deleted.
    #[serde(skip)]
    chain: Option<(PathBuf, String, String)>,
}

/// A file's age at full precision: whole seconds would keep a file written a moment ago
/// from `--older-than 0`.
fn age_of(path: &Path, now: SystemTime) -> Option<Duration> {
    let m = crate::fs::symlink_metadata(path).ok()?.modified().ok()?;
    Some(now.duration_since(m).unwrap_or(Duration::ZERO))
}

const HOUR: Duration = Duration::from_secs(3600);

fn item(
    path: &Path,
    kind: &'static str,
    reason: &'static str,
    age: Duration,
    slot: Option<&str>,
) -> Item {
    Item {
        path: path.to_string_lossy().into_owned(),
        kind,
        reason,
        age_seconds: age.as_secs(),
        deleted: false,
        slot: slot.map(str::to_string),
        skipped: false,
        failed: false,
        chain: None,
    }
}

/// Why an old handoff may go, if it may.
fn handoff_reason(info: &HandoffInfo) -> Option<&'static str> {
    match info.lifecycle() {
        Some(Progress::Consumed) => return Some("consumed"),
        Some(Progress::Writing) => return Some("abandoned placeholder"),
        _ => {}
    }
    let Some(checkout) = checkout_path(info).filter(|c| git::repo_facts(c, false).is_ok()) else {
        return Some("checkout gone");
    };
    let declared = info.declared()?;
    let detached_sha =
        (4..=64).contains(&declared.len()) && declared.bytes().all(|b| b.is_ascii_hexdigit());
    (!detached_sha && !git::branch_exists(&checkout, declared)).then_some("branch gone")
}

fn is_stale_temp(name: &str) -> bool {
    name.starts_with(".tmp.") || name.contains(".md.tmp.") || name.ends_with(".md.draft")
}

fn collect(store: &Store, older_than: u64, now: SystemTime) -> Vec<Item> {
    let cutoff = Duration::from_secs(older_than.saturating_mul(86_400));
    let mut items = Vec::new();
    let Ok(entries) = crate::fs::read_dir(&store.dir) else {
        return items;
    };
    let mut names: Vec<String> = entries
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .collect();
    names.sort();
    let (handoffs, checkouts) = slots(store, &names, cutoff, now);
    let pruned_slots: Vec<String> = handoffs.iter().filter_map(|i| i.slot.clone()).collect();
    items.extend(handoffs);
    items.extend(histories(store, &pruned_slots, cutoff, now));
    items.extend(orphaned_chains(&checkouts, cutoff, now));
    items.extend(old_runs(store, cutoff, now));
    items.extend(stray_wires(store, &pruned_slots, now));
    items
}

/// In `.tripwires/`: a stale temp file, and the wires of a slot that is gone (one `prune`
/// deletes goes with it in [`delete`]).
fn stray_wires(store: &Store, pruned_slots: &[String], now: SystemTime) -> Vec<Item> {
    let dir = store.dir.join(".tripwires");
    let mut items = stale_temps_in(&dir, now);
    let Ok(entries) = crate::fs::read_dir(&dir) else {
        return items;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(slot) = name.strip_suffix(".json").filter(|s| !s.starts_with('.')) else {
            continue;
        };
        let gone = crate::fs::symlink_metadata(store.path_of(slot)).is_err();
        if gone && !pruned_slots.iter().any(|p| p == slot) {
            let age = age_of(&e.path(), now).unwrap_or(Duration::ZERO);
            items.push(item(
                &e.path(),
                "temp",
                "tripwires of a slot that is gone",
                age,
                None,
            ));
        }
    }
    items
}

/// The slots (and stale temp files) among `names` that may go, and the checkouts the store
/// knows (with the working directory), whose chains of deleted branches are pruned locally.
fn slots(
    store: &Store,
    names: &[String],
    cutoff: Duration,
    now: SystemTime,
) -> (Vec<Item>, Vec<PathBuf>) {
    let mut items = Vec::new();
    let mut checkouts: Vec<PathBuf> = std::env::current_dir().into_iter().collect();
    for name in names {
        let path = store.path_of(name);
        let Ok(meta) = crate::fs::symlink_metadata(&path) else {
            continue;
        };
        let age = age_of(&path, now).unwrap_or(Duration::ZERO);
        if meta.is_file() && is_stale_temp(name) {
            if age > HOUR {
                items.push(item(&path, "temp", "stale temp file", age, None));
            }
            continue;
        }
        if !meta.is_file() || !name.ends_with(".md") || name.starts_with('.') {
            continue;
        }
        let info = if meta.len() == 0 {
            Some(HandoffInfo::from_parts(store, name, b"", &meta))
        } else {
            HandoffInfo::read(store, name)
        };
        if let Some(c) = info.as_ref().and_then(checkout_path) {
            checkouts.push(c);
        }
        if age <= cutoff {
            continue;
        }
        if let Some(reason) = info.as_ref().and_then(handoff_reason) {
            items.push(item(&path, "handoff", reason, age, Some(name)));
        }
    }
    (items, checkouts)
}

/// History folders that may go: a pruned slot's, an orphaned one (old), and stale temp files in
/// the rest.
fn histories(
    store: &Store,
    pruned_slots: &[String],
    cutoff: Duration,
    now: SystemTime,
) -> Vec<Item> {
    let mut items = Vec::new();
    let history_root = store.dir.join(".history");
    let Ok(entries) = crate::fs::read_dir(&history_root) else {
        return items;
    };
    let mut dirs: Vec<String> = entries
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .collect();
    dirs.sort();
    for name in dirs {
        let dir = history_root.join(&name);
        if !crate::fs::symlink_metadata(&dir).is_ok_and(|m| m.is_dir()) {
            continue;
        }
        let newest_age = slot::versions(store, &name)
            .first()
            .and_then(|v| age_of(&v.path, now));
        let age = newest_age
            .or_else(|| age_of(&dir, now))
            .unwrap_or(Duration::ZERO);
        if pruned_slots.contains(&name) {
            items.push(item(
                &dir,
                "history",
                "history of a pruned slot",
                age,
                Some(&name),
            ));
        } else if crate::fs::symlink_metadata(store.path_of(&name)).is_err() && age > cutoff {
            items.push(item(&dir, "history", "orphaned history", age, Some(&name)));
        } else {
            items.extend(stale_temps_in(&dir, now));
        }
    }
    items
}

/// Background-write runs older than the cutoff that nothing works in any more.
fn old_runs(store: &Store, cutoff: Duration, now: SystemTime) -> Vec<Item> {
    let Ok(entries) = crate::fs::read_dir(store.dir.join(".runs")) else {
        return Vec::new();
    };
    let mut runs: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    runs.sort();
    runs.into_iter()
        .filter_map(|run| {
            let age = age_of(&run, now).unwrap_or(Duration::ZERO);
            (age > cutoff && !crate::store::runs::live(&run))
                .then(|| item(&run, "run", "old writer run", age, None))
        })
        .collect()
}

/// `ref` items: each repository's chains (`refs/handoffs/<branch>`) whose branch is gone and
/// whose newest version is old. Only the local ref goes; a remote's copy stays.
fn orphaned_chains(checkouts: &[PathBuf], cutoff: Duration, now: SystemTime) -> Vec<Item> {
    let mut checkouts = checkouts.to_vec();
    checkouts.sort();
    checkouts.dedup();
    let mut seen = Vec::new();
    let mut items = Vec::new();
    for checkout in &checkouts {
        let Some(chains) = crate::git::chain::Chains::open(checkout) else {
            continue;
        };
        let common = chains.common_dir();
        if seen.contains(&common) {
            continue;
        }
        seen.push(common);
        let main = chains.main();
        for orphan in crate::sync::orphans(&chains) {
            let written = crate::sync::at(orphan.written_at);
            let age = now.duration_since(written).unwrap_or(Duration::ZERO);
            if age <= cutoff {
                continue;
            }
            let shown = PathBuf::from(format!("{}:{}", main.display(), orphan.reference));
            let mut it = item(&shown, "ref", "branch gone", age, None);
            it.chain = Some((main.clone(), orphan.reference, orphan.id));
            items.push(it);
        }
    }
    items
}

fn stale_temps_in(dir: &Path, now: SystemTime) -> Vec<Item> {
    let Ok(entries) = crate::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(".tmp."))
        .filter_map(|e| {
            let age = age_of(&e.path(), now)?;
            (age > HOUR).then(|| item(&e.path(), "temp", "stale temp file", age, None))
        })
        .collect()
}

/// Delete the orphan chains among `items`: one ref transaction per repository (20,000 chains
/// are one rewrite of `packed-refs`, not 20,000), then each item is deleted when its ref no
/// longer holds the id it was found at.
fn delete_chains(items: &mut [Item]) {
    let mut by_repo: std::collections::BTreeMap<PathBuf, Vec<(String, String)>> =
        Default::default();
    for (main, reference, id) in items.iter().filter_map(|it| it.chain.clone()) {
        by_repo.entry(main).or_default().push((reference, id));
    }
    for (main, refs) in by_repo {
        let Some(chains) = crate::git::chain::Chains::open(&main) else {
            continue;
        };
        chains.delete_all(&refs);
        let mut left = std::collections::HashSet::new();
        for prefix in ["refs/handoffs/", "refs/handoff-slots/"] {
            left.extend(
                chains
                    .list(prefix)
                    .into_iter()
                    .map(|(rest, id)| (format!("{prefix}{rest}"), id)),
            );
        }
        for it in items.iter_mut() {
            let Some((m, reference, id)) = &it.chain else {
                continue;
            };
            if *m == main {
                let gone = !left.contains(&(reference.clone(), id.clone()));
                it.deleted = gone;
                it.failed = !gone;
            }
        }
    }
}

fn delete(item: &mut Item, store: &Store) {
    let path = PathBuf::from(&item.path);
    let _lock = match &item.slot {
        Some(name) => match slot::lock(store, name, Duration::ZERO) {
            Ok(l) => Some(l),
            Err(_) => {
                item.skipped = true;
                return;
            }
        },
        None => None,
    };
    let result = if crate::fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir()) {
        crate::fs::remove_dir_all(&path)
    } else {
        crate::fs::remove_file(&path)
    };
    match result {
        Ok(()) => {
            item.deleted = true;
            // The slot's tripwires go with it (a cache, rebuilt from a slot that comes back).
            if let Some(name) = &item.slot {
                let _ = crate::fs::remove_file(crate::store::tripwire::cache_path(store, name));
            }
        }
        Err(_) => item.failed = true,
    }
}

/// What `prune` found, and with `--apply` did.
#[derive(Debug, Serialize)]
pub(crate) struct Pruned {
    pub(crate) apply: bool,
    pub(crate) older_than_days: u64,
    pub(crate) items: Vec<Item>,
}

pub(crate) fn prune(older_than: u64, apply: bool) -> Result<Pruned, Error> {
    let store = Store::open()?;
    let mut items = collect(&store, older_than, SystemTime::now());
    if apply {
        delete_chains(&mut items);
        for it in items.iter_mut().filter(|it| it.chain.is_none()) {
            delete(it, &store);
        }
    }
    Ok(Pruned {
        apply,
        older_than_days: older_than,
        items,
    })
}
