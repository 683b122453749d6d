//! `push`: record the slots, then send their chains without forcing; with `--prune`, delete the
//! remote's chains of branches gone everywhere — decided by a pure plan ([`plan_prune`]), sent
//! as leased refspecs or, for many, one glob.

use std::collections::{HashMap, HashSet};

use serde::Serialize;

use super::transport::{self, PushStatus, RefUpdate};
use super::{handoff_ref, record, slot_of, tracking_prefix};
use crate::error::{Error, External, GitStep, NothingToDo, Usage};
use crate::git::chain::Chains;
use crate::store::{Store, Target, slot};

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
    let job = Push {
        store,
        target,
        chains,
        remote,
        background,
    };
    // A named slot's chain alone (`push --slot NAME`): recorded, then sent, never forced.
    if let (false, Some(slot)) = (all, target.slot.as_deref()) {
        return job.slot(slot);
    }
    let sent = job.record_branches(all)?;
    // `--all` sends one non-forcing glob: git handles a thousand explicit refspecs slowly.
    let refspecs: Vec<String> = if all && !sent.is_empty() {
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
    // The remote's chains as last fetched, listed once (10,000 loose refs are 10,000 files).
    let tracked = if prune == Prune::No {
        Vec::new()
    } else {
        chains.list(&tracking_prefix(remote))
    };
    let pruning = job.prune_plan(&tracked, prune)?;
    let kept = pruning.kept.clone();
    let (updates, refspecs, leases) = job.deletions(&tracked, pruning, refspecs)?;
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
    let mut updates = updates;
    updates.extend(transport::push(
        &target.facts.checkout,
        remote,
        &refspecs,
        &leases,
        background,
    )?);
    Ok(finish(chains, remote, &tracked, sent, updates, kept))
}

/// One `push`: where from, where to.
struct Push<'a> {
    store: &'a Store,
    target: &'a Target,
    chains: &'a Chains,
    remote: &'a str,
    background: bool,
}

/// What `--prune` decided, and the remote's refs when it had to ask.
struct Pruning {
    doomed: Vec<(String, String)>,
    kept: Vec<Kept>,
    remote_now: Option<transport::RemoteRefs>,
}

/// A remote chain whose branch is gone here, with what the prune plan needs to know of it.
#[derive(Debug, Clone)]
pub(crate) struct Gone {
    pub(crate) branch: String,
    pub(crate) id: String,
    /// When its newest version was written, and on which host (`meta`).
    pub(crate) written: Option<(i64, Option<String>)>,
    /// Whether this store wrote it (its key signed the version).
    pub(crate) ours: bool,
}

/// The prune plan, pure: of the remote chains whose branch is gone here, which go (`doomed`,
/// as (branch, id)) and which stay (`kept`, a teammate's recent chain — anything this store
/// did not write itself, a version without a readable author included: its branch may just not
/// be pushed yet; `force` deletes those too). A chain whose branch the remote still has stays,
/// unreported.
pub(crate) fn plan_prune(
    gone: &[Gone],
    remote_branches: &HashSet<String>,
    force: bool,
    now: i64,
) -> (Vec<(String, String)>, Vec<Kept>) {
    let recent = now - TEAMMATE_DAYS * 86_400;
    let mut doomed = Vec::new();
    let mut kept = Vec::new();
    for g in gone {
        if remote_branches.contains(&g.branch) {
            continue;
        }
        if !force
            && !g.ours
            && let Some((written_at, host)) = &g.written
            && *written_at >= recent
        {
            kept.push(Kept {
                reference: handoff_ref(&g.branch),
                host: host
                    .as_deref()
                    .and_then(crate::store::authorship::label)
                    .unwrap_or("an unnamed host")
                    .to_string(),
                written_at: crate::store::iso(*written_at),
            });
            continue;
        }
        doomed.push((g.branch.clone(), g.id.clone()));
    }
    (doomed, kept)
}

impl Push<'_> {
    /// `push --slot NAME`: the named slot's chain, recorded, then sent.
    fn slot(&self, slot: &str) -> Result<Pushed, Error> {
        let target = self.target;
        if target.facts.detached {
            return Err(Error::Usage(Usage::Detached));
        }
        let branch = target.facts.reference.clone();
        let _lock = slot::lock_cli(self.store, &target.name)?;
        if record(self.store, self.chains, &branch, Some(slot))?.is_none() {
            return Err(Error::NothingToDo(NothingToDo::NoHandoffToPush(format!(
                "{branch} (slot {slot})"
            ))));
        }
        let reference = target.chain_ref();
        let updates = transport::push(
            &target.facts.checkout,
            self.remote,
            &[format!("{reference}:{reference}")],
            &[],
            self.background,
        )?;
        Ok(Pushed {
            remote: self.remote.to_string(),
            branches: vec![branch],
            updates,
            kept: Vec::new(),
        })
    }

    /// Record each branch's slot on its chain (under the slot's lock); the branches that have
    /// a chain to send.
    fn record_branches(&self, all: bool) -> Result<Vec<String>, Error> {
        let branches = if all {
            all_branches(self.store, self.chains)
        } else if self.target.facts.detached {
            return Err(Error::Usage(Usage::Detached));
        } else {
            vec![self.target.facts.reference.clone()]
        };
        let mut sent = Vec::new();
        for branch in &branches {
            let name = slot_of(&self.chains.main(), branch);
            let _lock = if crate::fs::symlink_metadata(self.store.path_of(&name)).is_ok() {
                Some(slot::lock_cli(self.store, &name)?)
            } else {
                None
            };
            if record(self.store, self.chains, branch, None)?.is_some() {
                sent.push(branch.clone());
            }
        }
        Ok(sent)
    }

    /// The prune plan for the remote chains `tracked` (as last fetched): those whose branch is
    /// gone here are checked against the remote itself (tracking refs may be stale, or absent
    /// in a single-branch clone), then [`plan_prune`] decides.
    fn prune_plan(&self, tracked: &[(String, String)], prune: Prune) -> Result<Pruning, Error> {
        let mut pruning = Pruning {
            doomed: Vec::new(),
            kept: Vec::new(),
            remote_now: None,
        };
        if prune == Prune::No {
            return Ok(pruning);
        }
        let chains = self.chains;
        let names = |prefix: &str| -> HashSet<String> {
            chains.list(prefix).into_iter().map(|(b, _)| b).collect()
        };
        let (branches, local, remote_branches): (HashSet<String>, _, _) = (
            chains.branches().into_iter().collect(),
            names("refs/handoffs/"),
            names(&format!("refs/remotes/{}/", self.remote)),
        );
        let gone: Vec<&(String, String)> = tracked
            .iter()
            .filter(|(b, _)| {
                !(branches.contains(b) || local.contains(b) || remote_branches.contains(b))
            })
            .collect();
        if gone.is_empty() {
            return Ok(pruning);
        }
        let on_remote =
            transport::remote_refs(&self.target.facts.checkout, self.remote, self.background)?;
        let key = super::StoreKey::read(self.store);
        let force = prune == Prune::Force;
        let recent = crate::store::now() - TEAMMATE_DAYS * 86_400;
        let facts: Vec<Gone> = gone
            .into_iter()
            .filter(|(b, _)| !on_remote.branches.contains(b))
            .map(|(b, id)| {
                let written = chains
                    .meta_of(id)
                    .map(|m| super::Meta::parse(&m))
                    .map(|m| (m.written_at, m.host));
                // Who wrote it matters only for a recent chain the plan may keep (a read each).
                let ours = !force
                    && written.as_ref().is_some_and(|(at, _)| *at >= recent)
                    && chains
                        .read(id)
                        .is_some_and(|v| super::written_here(key.as_ref(), &v));
                Gone {
                    branch: b.clone(),
                    id: id.clone(),
                    written,
                    ours,
                }
            })
            .collect();
        let (doomed, kept) = plan_prune(&facts, &on_remote.branches, force, crate::store::now());
        pruning.doomed = doomed;
        pruning.kept = kept;
        pruning.remote_now = Some(on_remote);
        Ok(pruning)
    }

    /// The deletions the plan asks for. A few go as refspecs, each under a lease on the id last
    /// fetched. Many go as one glob with `--prune` (git matches explicit refspecs against every
    /// remote ref: 10,000 took minutes): every remote chain that stays is named in a scratch
    /// namespace, the rest is pruned, each deletion under the lease of its remote-tracking
    /// copy. A chain the remote no longer has is already deleted there (an earlier prune cut
    /// short after its push): only its tracking copy goes. The updates made, and the refspecs
    /// and leases left to send.
    #[allow(clippy::type_complexity)]
    fn deletions(
        &self,
        tracked: &[(String, String)],
        pruning: Pruning,
        mut refspecs: Vec<String>,
    ) -> Result<(Vec<RefUpdate>, Vec<String>, Vec<String>), Error> {
        let Pruning {
            mut doomed,
            remote_now,
            ..
        } = pruning;
        let mut updates = Vec::new();
        let mut leases = Vec::new();
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
        if doomed.len() <= EXPLICIT_DELETIONS {
            for (b, id) in &doomed {
                refspecs.push(format!(":{}", handoff_ref(b)));
                leases.push(format!("{}:{id}", handoff_ref(b)));
            }
            return Ok((updates, refspecs, leases));
        }
        let doomed_names: HashSet<&str> = doomed.iter().map(|(b, _)| b.as_str()).collect();
        let mut keep_refs = Vec::new();
        for (b, id) in tracked {
            // Never a scratch ref for a chain the remote does not have: the glob would create it.
            let absent = remote_now
                .as_ref()
                .is_some_and(|r| !r.chains.contains_key(b));
            if !doomed_names.contains(b.as_str()) && !absent {
                keep_refs.push((format!("{KEEP_PREFIX}{b}"), id.clone()));
            }
        }
        updates.extend(prune_by_glob(
            self.store,
            self.chains,
            self.target,
            self.remote,
            tracked,
            &keep_refs,
            self.background,
        )?);
        Ok((updates, refspecs, leases))
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_800_000_000;
    const DAY: i64 = 86_400;

    fn gone(branch: &str, written: Option<(i64, Option<&str>)>, ours: bool) -> Gone {
        Gone {
            branch: branch.into(),
            id: format!("id-{branch}"),
            written: written.map(|(at, host)| (at, host.map(str::to_string))),
            ours,
        }
    }

    /// One row of the plan: the gone chains, the remote's branches, `force` → the branches
    /// doomed, and the kept ones with their host.
    fn check(gone: &[Gone], remote: &[&str], force: bool, doomed: &[&str], kept: &[(&str, &str)]) {
        let remote: HashSet<String> = remote.iter().map(|s| s.to_string()).collect();
        let (d, k) = plan_prune(gone, &remote, force, NOW);
        let d: Vec<&str> = d.iter().map(|(b, _)| b.as_str()).collect();
        let k: Vec<(&str, &str)> = k
            .iter()
            .map(|k| (k.reference.as_str(), k.host.as_str()))
            .collect();
        assert_eq!((d.as_slice(), k.as_slice()), (doomed, kept));
    }

    #[test]
    fn our_own_chain_goes() {
        check(
            &[gone("a", Some((NOW, Some("me"))), true)],
            &[],
            false,
            &["a"],
            &[],
        );
    }

    #[test]
    fn a_teammates_recent_chain_stays_with_its_host() {
        check(
            &[gone("t", Some((NOW - DAY, Some("lap-2"))), false)],
            &[],
            false,
            &[],
            &[("refs/handoffs/t", "lap-2")],
        );
    }

    #[test]
    fn a_teammates_recent_chain_goes_with_force() {
        check(
            &[gone("t", Some((NOW, Some("lap-2"))), false)],
            &[],
            true,
            &["t"],
            &[],
        );
    }

    #[test]
    fn a_teammates_old_chain_goes() {
        let old = NOW - (TEAMMATE_DAYS + 1) * DAY;
        check(
            &[gone("t", Some((old, Some("lap-2"))), false)],
            &[],
            false,
            &["t"],
            &[],
        );
    }

    #[test]
    fn a_chain_without_a_readable_meta_goes() {
        check(&[gone("x", None, false)], &[], false, &["x"], &[]);
    }

    #[test]
    fn a_host_that_is_no_safe_label_is_an_unnamed_host() {
        check(
            &[gone("t", Some((NOW, Some("\u{1b}]0;evil"))), false)],
            &[],
            false,
            &[],
            &[("refs/handoffs/t", "an unnamed host")],
        );
    }

    #[test]
    fn a_branch_the_remote_still_has_stays_unreported() {
        check(
            &[gone("b", Some((NOW, None)), true)],
            &["b"],
            true,
            &[],
            &[],
        );
    }
}
