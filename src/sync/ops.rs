//! The three sync commands as computations: `push` (record, then send the chains without
//! forcing), `pull` (fetch into remote-tracking refs, then merge per branch) and `setup` (the
//! fetch refspec in the remote's config). The CLI renders what these return.

use serde::Serialize;

use super::transport;
use super::{Merge, fetch_refspec, merge, tracking_prefix};
use crate::error::{Error, External, GitStep, Usage};
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
        crate::durable::write(&path, &bytes, mode)?;
        changed = true;
    }
    Ok(changed)
}
