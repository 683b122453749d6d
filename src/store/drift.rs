//! Drift signals (docs/store.md §8): advisory lines that say how far the world has moved since a
//! handoff was written — another repository, a vanished checkout, another branch, commits
//! since, rewritten history, age. They never change an exit code.

use std::path::Path;

use serde::Serialize;

use super::{HandoffInfo, gap};
use crate::gate::{HeaderCheckout, expand_checkout};
use crate::git::{self, HeadRelation, RepoFacts};

/// One signal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Drift {
    pub(crate) kind: &'static str,
    pub(crate) text: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) count: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) age_seconds: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) threshold_hours: Option<u64>,
}

impl Drift {
    fn new(kind: &'static str, text: String) -> Drift {
        Drift {
            kind,
            text,
            count: None,
            age_seconds: None,
            threshold_hours: None,
        }
    }
}

/// The handoff's `checkout:` as a path (tilde-expanded; relative to the file's directory).
pub(crate) fn checkout_path(info: &HandoffInfo) -> Option<std::path::PathBuf> {
    match expand_checkout(info.checkout.as_deref()?, Path::new(&info.path)) {
        HeaderCheckout::Usable(p) => Some(p),
        _ => None,
    }
}

/// Whether a declared branch names the checkout's current ref (detached: a 4–64 hex prefix).
pub(crate) fn declared_matches(declared: &str, facts: &RepoFacts) -> bool {
    if facts.detached
        && (4..=64).contains(&declared.len())
        && declared.bytes().all(|b| b.is_ascii_hexdigit())
    {
        return facts.head.starts_with(&declared.to_ascii_lowercase());
    }
    declared == facts.reference
}

fn short(id: &str) -> &str {
    id.get(..7).unwrap_or(id)
}

/// Every signal for the document `info` (not a placeholder) and the target's facts.
pub(crate) fn signals(info: &HandoffInfo, target: Option<&RepoFacts>, now: i64) -> Vec<Drift> {
    let mut out = checkout_signals(info, target);
    let hours = match target {
        Some(f) => crate::settings::Settings::of(&f.config),
        None => crate::settings::Settings::outside(),
    }
    .stale_hours();
    if hours > 0
        && let Some(m) = info.mtime
    {
        let age = (now - m).max(0) as u64;
        if age > hours.saturating_mul(3600) {
            out.push(Drift {
                age_seconds: Some(age),
                threshold_hours: Some(hours),
                ..Drift::new(
                    "stale",
                    format!(
                        "STALE: last written {} ago, over the {hours}-hour threshold",
                        gap(age)
                    ),
                )
            });
        }
    }
    out
}

/// Signals 1–6: where the handoff's checkout is now, against the target — gone, another
/// repository, another branch, and how its recorded head relates to HEAD.
fn checkout_signals(info: &HandoffInfo, target: Option<&RepoFacts>) -> Vec<Drift> {
    let mut out = Vec::new();
    if let Some(c) = info.checkout.as_deref() {
        let path = checkout_path(info);
        let shown = path
            .as_ref()
            .map_or_else(|| c.to_string(), |p| p.to_string_lossy().into_owned());
        let facts = path.and_then(|p| git::drift_facts(&p, info.head.as_deref()));
        match facts {
            None => out.push(Drift::new(
                "checkout_gone",
                format!("checkout gone: {shown} is not a git checkout on this machine"),
            )),
            Some((facts, relation)) => {
                if let Some(t) = target
                    && t.main != facts.main
                {
                    out.push(Drift::new(
                        "repo_mismatch",
                        format!(
                            "repo mismatch: this handoff describes {}, but the target is {}",
                            facts.main.display(),
                            t.main.display()
                        ),
                    ));
                }
                if let Some(d) = info.declared()
                    && !declared_matches(d, &facts)
                {
                    out.push(Drift::new(
                        "branch_mismatch",
                        format!(
                            "branch mismatch: this handoff was written on {d}, but {shown} is now on {}",
                            facts.reference
                        ),
                    ));
                }
                let h = info.head.as_deref().unwrap_or("");
                let head7 = short(&facts.head);
                match relation {
                    Some(HeadRelation::Unknown) => out.push(Drift::new(
                        "head_unknown",
                        format!(
                            "head unknown: recorded head {} is not a commit in {} — history rewritten, or another clone",
                            short(h),
                            facts.main.display()
                        ),
                    )),
                    Some(HeadRelation::Behind(n)) if n > 0 => out.push(Drift {
                        count: Some(n),
                        ..Drift::new(
                            "commits_since",
                            format!("{n} commit(s) since this handoff was written ({}..{head7} in {shown})", short(h)),
                        )
                    }),
                    Some(HeadRelation::Diverged) => out.push(Drift::new(
                        "diverged",
                        format!(
                            "diverged: recorded head {} is not in the history of {shown} (now at {head7}) — rebased, reset or switched",
                            short(h)
                        ),
                    )),
                    _ => {}
                }
            }
        }
    }
    out
}
