//! The three sync commands as computations: `push` (record, then send the chains without
//! forcing), `pull` (fetch into remote-tracking refs, then merge per branch) and `setup` (the
//! fetch refspec in the remote's config). The CLI renders what these return.

use std::collections::{HashMap, HashSet};

use serde::Serialize;

use super::transport::{self, PushStatus, RefUpdate};
use super::{Merge, fetch_refspec, handoff_ref, merge, record, slot_of, tracking_prefix};
use crate::error::{Error, External, GitStep, NothingToDo, Usage};
use crate::git::chain::Chains;
use crate::store::{Store, Target, slot};

/// The target's repository, opened for its chains.
pub(crate) fn open(target: &Target) -> Result<Chains, Error> {
    Chains::open(&target.facts.checkout)
        .ok_or_else(|| Error::External(External::NoRepository(target.checkout())))
}

/// The remote to use: the one given (it must be configured), else the branch's upstream
/// remote, else `origin`.
pub(crate) fn remote_for(
    chains: &Chains,
    target: &Target,
    given: Option<&str>,
) -> Result<String, Error> {
    let remotes = chains.remotes();
    let configured = |r: &str| remotes.iter().any(|x| x == r);
    if let Some(r) = given {
        return if configured(r) {
            Ok(r.to_string())
        } else {
            Err(Error::Usage(Usage::NoSuchRemote {
                remote: r.to_string(),
                configured: remotes,
            }))
        };
    }
    let upstream = (!target.facts.detached)
        .then(|| chains.config_string(&format!("branch.{}.remote", target.facts.reference)))
        .flatten()
        .filter(|r| configured(r));
    if let Some(r) = upstream {
        return Ok(r);
    }
    if configured("origin") {
        return Ok("origin".into());
    }
    Err(Error::External(External::NoRemote {
        configured: remotes,
    }))
}

/// Whether `push` also deletes the remote's chains of branches gone everywhere.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Prune {
    No,
    /// Gone everywhere, except a teammate's recent chain.
    Gone,
    /// Gone everywhere, a teammate's recent chain too.
    Force,
}

/// What `push` did.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Pushed {
    pub(crate) remote: String,
    /// The branches whose chains were sent.
    pub(crate) branches: Vec<String>,
    pub(crate) updates: Vec<RefUpdate>,
    /// Remote chains `--prune` left alone: written on another host within
    /// [`TEAMMATE_DAYS`] days (`--force` deletes them too), with who and when.
    pub(crate) kept: Vec<Kept>,
}

/// A remote chain `push --prune` kept: a teammate's, recent.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Kept {
    pub(crate) reference: String,
    pub(crate) host: String,
    pub(crate) written_at: String,
}

/// How recent a chain written on another host must be for `push --prune` to keep it: its
/// branch may simply not be pushed yet.
pub(crate) const TEAMMATE_DAYS: i64 = 14;

impl Pushed {
    pub(crate) fn moved(&self) -> Vec<&RefUpdate> {
        self.with(PushStatus::Moved)
    }

    pub(crate) fn refused(&self) -> Vec<&RefUpdate> {
        self.with(PushStatus::Refused)
    }

    pub(crate) fn locked(&self) -> Vec<&RefUpdate> {
        self.with(PushStatus::Locked)
    }

    fn with(&self, status: PushStatus) -> Vec<&RefUpdate> {
        self.updates.iter().filter(|u| u.status == status).collect()
    }
}

/// The branches `--all` covers: every local branch with a slot or a chain.
fn all_branches(store: &Store, chains: &Chains) -> Vec<String> {
    let main = chains.main();
    let mut out: Vec<String> = chains
        .branches()
        .into_iter()
        .filter(|b| {
            crate::fs::symlink_metadata(store.path_of(&slot_of(&main, b))).is_ok()
                || chains.tip(&handoff_ref(b)).is_some()
        })
        .collect();
    for (b, _) in chains.list("refs/handoffs/") {
        if !out.contains(&b) {
            out.push(b);
        }
    }
    out.sort();
    out
}

/// Record the slots, then push their chains to `remote` (never forcing). With `prune`, the
/// remote's chains of branches that exist neither here nor on the remote are deleted, each
/// under a lease on the id last fetched.
pub(crate) fn push(
    store: &Store,
    target: &Target,
    chains: &Chains,
    remote: &str,
    all: bool,
    prune: Prune,
    background: bool,
) -> Result<Pushed, Error> {
    let mut kept = Vec::new();
    // A named slot's chain alone (`push --slot NAME`): recorded, then sent, never forced.
    if let (false, Some(slot)) = (all, target.slot.as_deref()) {
        if target.facts.detached {
            return Err(Error::Usage(Usage::Detached));
        }
        let branch = target.facts.reference.clone();
        let _lock = slot::lock_cli(store, &target.name)?;
        let sent = match record(store, chains, &branch, Some(slot))? {
            Some(_) => vec![branch.clone()],
            None => Vec::new(),
        };
        if sent.is_empty() {
            return Err(Error::NothingToDo(
                crate::error::NothingToDo::NoHandoffToPush(format!("{branch} (slot {slot})")),
            ));
        }
        let reference = target.chain_ref();
        let updates = transport::push(
            &target.facts.checkout,
            remote,
            &[format!("{reference}:{reference}")],
            &[],
            background,
        )?;
        return Ok(Pushed {
            remote: remote.to_string(),
            branches: sent,
            updates,
            kept,
        });
    }
    let branches = if all {
        all_branches(store, chains)
    } else if target.facts.detached {
        return Err(Error::Usage(Usage::Detached));
    } else {
        vec![target.facts.reference.clone()]
    };
    let mut sent = Vec::new();
    for branch in &branches {
        let name = slot_of(&chains.main(), branch);
        let _lock = if crate::fs::symlink_metadata(store.path_of(&name)).is_ok() {
            Some(slot::lock_cli(store, &name)?)
        } else {
            None
        };
        if record(store, chains, branch, None)?.is_some() {
            sent.push(branch.clone());
        }
    }
    // `--all` sends one non-forcing glob: git handles a thousand explicit refspecs slowly.
    let mut refspecs: Vec<String> = if all && !sent.is_empty() {
        let mut globs = vec!["refs/handoffs/*:refs/handoffs/*".to_string()];
        // Every named slot's chain goes too (each was recorded when its slot changed).
        if !chains.list("refs/handoff-slots/").is_empty() {
            globs.push("refs/handoff-slots/*:refs/handoff-slots/*".to_string());
        }
        globs
    } else {
        sent.iter()
            .map(|b| format!("{0}:{0}", handoff_ref(b)))
            .collect()
    };
    let mut leases = Vec::new();
    let mut doomed: Vec<(String, String)> = Vec::new();
    let mut remote_now: Option<transport::RemoteRefs> = None;
    // The remote's chains as last fetched, listed once (10,000 loose refs are 10,000 files).
    let tracked = if prune == Prune::No {
        Vec::new()
    } else {
        chains.list(&tracking_prefix(remote))
    };
    if prune != Prune::No {
        let names = |prefix: &str| -> HashSet<String> {
            chains.list(prefix).into_iter().map(|(b, _)| b).collect()
        };
        let (branches, local, remote_branches): (HashSet<String>, _, _) = (
            chains.branches().into_iter().collect(),
            names("refs/handoffs/"),
            names(&format!("refs/remotes/{remote}/")),
        );
        let gone: Vec<&(String, String)> = tracked
            .iter()
            .filter(|(b, _)| {
                !(branches.contains(b) || local.contains(b) || remote_branches.contains(b))
            })
            .collect();
        // The remote's branches and chains as they are now, asked of the remote itself:
        // tracking refs may be stale, or absent in a single-branch clone.
        if !gone.is_empty() {
            remote_now = Some(transport::remote_refs(
                &target.facts.checkout,
                remote,
                background,
            )?);
        }
        let key = super::StoreKey::read(store);
        let recent = crate::store::now() - TEAMMATE_DAYS * 86_400;
        let nothing = transport::RemoteRefs::default();
        let on_remote = remote_now.as_ref().unwrap_or(&nothing);
        for (b, id) in gone {
            if on_remote.branches.contains(b) {
                continue;
            }
            // A teammate's recent chain — anything this store did not write itself, a version
            // without a readable author included: its branch may just not be pushed yet.
            if prune != Prune::Force
                && let Some(meta) = chains.meta_of(id).map(|m| super::Meta::parse(&m))
                && meta.written_at >= recent
                && !chains
                    .read(id)
                    .is_some_and(|v| super::written_here(key.as_ref(), &v))
            {
                kept.push(Kept {
                    reference: handoff_ref(b),
                    host: meta
                        .host
                        .as_deref()
                        .and_then(crate::store::authorship::label)
                        .unwrap_or("an unnamed host")
                        .to_string(),
                    written_at: crate::store::iso(meta.written_at),
                });
                continue;
            }
            doomed.push((b.clone(), id.clone()));
        }
    }
    // A few deletions go as refspecs, each under a lease on the id last fetched. Many go as one
    // glob with `--prune` (git matches explicit refspecs against every remote ref: 10,000 took
    // minutes): every remote chain that stays is named in a scratch namespace, the rest is
    // pruned, each deletion under the lease of its remote-tracking copy.
    // A chain the remote no longer has is already deleted there (an earlier prune cut short
    // after its push): only its tracking copy goes.
    let mut updates = Vec::new();
    if let Some(on_remote) = &remote_now {
        doomed.retain(|(b, _)| {
            let there = on_remote.chains.contains_key(b);
            if !there {
                updates.push(RefUpdate {
                    reference: handoff_ref(b),
                    status: PushStatus::Deleted,
                    summary: "[already gone on the remote]".to_string(),
                });
            }
            there
        });
    }
    let mut keep_refs = Vec::new();
    if doomed.len() > EXPLICIT_DELETIONS {
        let doomed_names: HashSet<&str> = doomed.iter().map(|(b, _)| b.as_str()).collect();
        for (b, id) in &tracked {
            // Never a scratch ref for a chain the remote does not have: the glob would create it.
            let absent = remote_now
                .as_ref()
                .is_some_and(|r| !r.chains.contains_key(b));
            if !doomed_names.contains(b.as_str()) && !absent {
                keep_refs.push((format!("{KEEP_PREFIX}{b}"), id.clone()));
            }
        }
    } else {
        for (b, id) in &doomed {
            refspecs.push(format!(":{}", handoff_ref(b)));
            leases.push(format!("{}:{id}", handoff_ref(b)));
        }
    }
    if doomed.len() > EXPLICIT_DELETIONS {
        updates.extend(prune_by_glob(
            store, chains, target, remote, &tracked, &keep_refs, background,
        )?);
    }
    if refspecs.is_empty() && !(updates.is_empty() && kept.is_empty()) {
        return Ok(finish(chains, remote, &tracked, sent, updates, kept));
    }
    if refspecs.is_empty() {
        return Err(Error::NothingToDo(if all {
            NothingToDo::NoBranchToPush
        } else {
            NothingToDo::NoHandoffToPush(target.facts.reference.clone())
        }));
    }
    updates.extend(transport::push(
        &target.facts.checkout,
        remote,
        &refspecs,
        &leases,
        background,
    )?);
    Ok(finish(chains, remote, &tracked, sent, updates, kept))
}

/// How many deletions `push --prune` sends as explicit refspecs before it prunes by glob.
const EXPLICIT_DELETIONS: usize = 64;
/// The scratch namespace naming the remote chains a glob prune keeps (emptied afterwards).
const KEEP_PREFIX: &str = "refs/handoff-prune/";

/// Every ref under `prefix`, as (full name, id).
fn refs_under(chains: &Chains, prefix: &str) -> Vec<(String, String)> {
    chains
        .list(prefix)
        .into_iter()
        .map(|(b, id)| (format!("{prefix}{b}"), id))
        .collect()
}

/// Delete every remote chain but `keep` (scratch refs under [`KEEP_PREFIX`], one per chain
/// that stays) in one push, under the lease of [`super::lease`]: every remote chain the push
/// changes must still hold the id its remote-tracking ref has, else nothing is deleted and the
/// moved ones are reported. The scratch refs go again whatever happened.
fn prune_by_glob(
    store: &Store,
    chains: &Chains,
    target: &Target,
    remote: &str,
    tracked: &[(String, String)],
    keep: &[(String, String)],
    background: bool,
) -> Result<Vec<RefUpdate>, Error> {
    let leased: Vec<(String, String)> = tracked
        .iter()
        .map(|(b, id)| (handoff_ref(b), id.clone()))
        .collect();
    // Scratch refs a killed run left behind go first.
    chains.delete_all(&refs_under(chains, KEEP_PREFIX));
    let leases = super::lease::Leases::create(&store.dir, &leased)?;
    let result = keep
        .iter()
        .try_for_each(|(name, id)| {
            chains.set(name, id, None).map_err(|e| {
                Error::External(External::Git {
                    step: GitStep::Scratch(name.clone()),
                    source: Box::new(e),
                })
            })
        })
        .and_then(|()| {
            transport::prune(
                &target.facts.checkout,
                remote,
                &format!("{KEEP_PREFIX}*:refs/handoffs/*"),
                leases.folder(),
                background,
            )
        });
    chains.delete_all(keep);
    let moved = leases.moved();
    if !moved.is_empty() {
        let fetched: HashSet<&str> = leased.iter().map(|(r, _)| r.as_str()).collect();
        return Ok(moved
            .into_iter()
            .map(|m| RefUpdate {
                summary: if m.absent() {
                    "[rejected] (gone since the last fetch; nothing was deleted)".into()
                } else if fetched.contains(m.reference.as_str()) {
                    "[rejected] (changed since the last fetch; nothing was deleted)".into()
                } else {
                    "[rejected] (not fetched yet; nothing was deleted)".into()
                },
                reference: m.reference,
                status: PushStatus::Moved,
            })
            .collect());
    }
    // What stayed is not news: only the deletions (and refusals) are reported.
    Ok(result?
        .into_iter()
        .filter(|u| u.status != PushStatus::UpToDate)
        .collect())
}

/// The remote-tracking copies follow what the remote now holds; the report.
fn finish(
    chains: &Chains,
    remote: &str,
    tracked: &[(String, String)],
    sent: Vec<String>,
    updates: Vec<RefUpdate>,
    kept: Vec<Kept>,
) -> Pushed {
    // The remote-tracking copies follow what the remote now holds, so hooks and `--prune`
    // see it without another fetch (deletions in one transaction: `packed-refs` is rewritten
    // once, not once per ref — 10,000 took minutes).
    // A deleted chain's copy is as `push --prune` listed it (the transaction checks it still is).
    let listed: HashMap<&str, &str> = tracked
        .iter()
        .map(|(b, id)| (b.as_str(), id.as_str()))
        .collect();
    let mut gone = Vec::new();
    for u in &updates {
        let Some(branch) = u.reference.strip_prefix("refs/handoffs/") else {
            continue;
        };
        let tracking = format!("{}{branch}", tracking_prefix(remote));
        match u.status {
            PushStatus::Pushed | PushStatus::UpToDate => {
                if let Some(tip) = chains.tip(&u.reference) {
                    let current = chains.tip(&tracking);
                    let _ = chains.set(&tracking, &tip, current.as_deref());
                }
            }
            PushStatus::Deleted => {
                let current = match listed.get(branch) {
                    Some(id) => Some(id.to_string()),
                    None => chains.tip(&tracking),
                };
                if let Some(c) = current {
                    gone.push((tracking, c));
                }
            }
            PushStatus::Moved | PushStatus::Refused | PushStatus::Locked => {}
        }
    }
    chains.delete_all(&gone);
    Pushed {
        remote: remote.to_string(),
        branches: sent,
        updates,
        kept,
    }
}

/// One branch's result of `pull`.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Pulled {
    pub(crate) branch: String,
    /// The named slot, for a slot's chain (`None`: the branch's default slot).
    pub(crate) slot: Option<String>,
    #[serde(flatten)]
    pub(crate) merge: Merge,
}

/// What `pull` did.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct PullReport {
    pub(crate) remote: String,
    pub(crate) branches: Vec<Pulled>,
    /// Branches the remote has handoffs for but this repository has no branch of: kept as
    /// remote-tracking refs, offered when such a branch is checked out.
    pub(crate) available: Vec<String>,
}

/// Fetch `remote`'s chains into `refs/handoff-remotes/<remote>/*`, then merge every one whose
/// branch exists here (or is checked out) into the local chain and the store.
pub(crate) fn pull(
    store: &Store,
    target: &Target,
    chains: &Chains,
    remote: &str,
    background: bool,
) -> Result<PullReport, Error> {
    // A kill between a push and its tracking copy left that ref's lock: git's fetch would fail
    // on it, so what our dead process provably took is removed first.
    chains.recover_locks();
    transport::fetch(
        &target.facts.checkout,
        remote,
        &[fetch_refspec(remote), super::slot_fetch_refspec(remote)],
        background,
    )?;
    let current = (!target.facts.detached).then_some(target.facts.reference.as_str());
    let main = chains.main().to_string_lossy().into_owned();
    let mut report = PullReport {
        remote: remote.to_string(),
        branches: Vec::new(),
        available: Vec::new(),
    };
    // The default slots' chains, then the named slots' (`<slot>/<branch>`).
    let named = chains
        .list(&super::slot_tracking_prefix(remote))
        .into_iter()
        .filter_map(|(key, id)| {
            let (slot, branch) = key.split_once('/')?;
            crate::store::naming::slot_name_problem(slot)
                .is_none()
                .then(|| (Some(slot.to_string()), branch.to_string(), id))
        });
    let chains_found: Vec<(Option<String>, String, String)> = chains
        .list(&tracking_prefix(remote))
        .into_iter()
        .map(|(branch, id)| (None, branch, id))
        .chain(named)
        .collect();
    for (slot, branch, id) in chains_found {
        let here = current == Some(branch.as_str());
        if !here && !chains.has_branch(&branch) {
            if slot.is_none() {
                report.available.push(branch);
            }
            continue;
        }
        let checkout = if here {
            target.checkout()
        } else {
            main.clone()
        };
        // One branch that cannot be merged is named; every other still is.
        let merge = merge(
            store,
            chains,
            (&branch, slot.as_deref()),
            &id,
            &checkout,
            remote,
        )
        .unwrap_or_else(|e| Merge::Refused(e.report()));
        report.branches.push(Pulled {
            branch,
            slot,
            merge,
        });
    }
    Ok(report)
}

/// Add the fetch refspec for `remote`'s handoffs to its configuration, so a plain `git fetch`
/// brings them too (into a namespace of our own, never beside git's tracking branches).
/// Idempotent. The config is edited where it really is (through a symlink, as git does).
/// Returns whether anything changed.
pub(crate) fn setup(chains: &Chains, remote: &str) -> Result<bool, Error> {
    let refspec = fetch_refspec(remote);
    let edited = chains
        .config_edited("remote", remote, "fetch", &refspec)
        .map_err(|e| {
            Error::External(External::Git {
                step: GitStep::Config,
                source: Box::new(e),
            })
        })?;
    let mut changed = false;
    if let Some((path, bytes)) = edited {
        let path = crate::fs::canonicalize(&path).unwrap_or(path);
        let mode = crate::fs::metadata(&path)
            .ok()
            .and_then(|m| slot::mode_of(&m));
        slot::replace(&path, &bytes, None, mode)?;
        changed = true;
    }
    Ok(changed)
}
