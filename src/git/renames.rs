//! Where a cited file went: a citation is MISSING because its file is gone, but git knows the
//! file at the handoff's `head:` and the commits since, so the gate can say `renamed to <path>`
//! and `fix` can follow it. Pairs are made as git's rename detection pairs them before it
//! compares contents — the one file added since with the very same blob (an exact rename), else
//! the one added since with the same file name — never a guess among several.

use std::collections::{HashMap, HashSet};
use std::path::Path;

/// For each of `paths` that existed at commit `since` and is gone from HEAD of the checkout at
/// `root`: the path it was renamed to. Nothing when `since` is not a commit of that repository.
pub(crate) fn renamed(root: &Path, since: &str, paths: &[String]) -> HashMap<String, String> {
    let mut found = HashMap::new();
    let Some(repo) = crate::fs::canonicalize(root)
        .ok()
        .and_then(|real| super::discover_for_read(&real))
    else {
        return found;
    };
    let files = |commit: gix::ObjectId| -> Option<Vec<(String, gix::ObjectId)>> {
        let tree = repo.find_commit(commit).ok()?.tree().ok()?;
        let files = tree.traverse().breadthfirst.files().ok()?;
        Some(
            files
                .into_iter()
                .filter(|e| e.mode.is_blob())
                .map(|e| (e.filepath.to_string(), e.oid))
                .collect(),
        )
    };
    let Ok(since) = gix::ObjectId::from_hex(since.trim().as_bytes()) else {
        return found;
    };
    let head = repo.head_id().ok().map(gix::Id::detach);
    let (Some(then), Some(now)) = (files(since), head.and_then(files)) else {
        return found;
    };
    let then_paths: HashSet<&str> = then.iter().map(|(p, _)| p.as_str()).collect();
    let now_paths: HashSet<&str> = now.iter().map(|(p, _)| p.as_str()).collect();
    let added: Vec<&(String, gix::ObjectId)> = now
        .iter()
        .filter(|(p, _)| !then_paths.contains(p.as_str()))
        .collect();
    let name_of = |p: &str| p.rsplit('/').next().unwrap_or(p).to_string();
    for path in paths {
        if now_paths.contains(path.as_str()) {
            continue;
        }
        let Some((_, blob)) = then.iter().find(|(p, _)| p == path) else {
            continue;
        };
        let only = |hits: Vec<&&(String, gix::ObjectId)>| match hits.as_slice() {
            [one] => Some(one.0.clone()),
            _ => None,
        };
        let exact = only(added.iter().filter(|(_, b)| b == blob).collect());
        let by_name = || {
            only(
                added
                    .iter()
                    .filter(|(p, _)| name_of(p) == name_of(path))
                    .collect(),
            )
        };
        if let Some(to) = exact.or_else(by_name) {
            found.insert(path.clone(), to);
        }
    }
    found
}
