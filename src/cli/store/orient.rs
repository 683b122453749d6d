//! `orient` and `path` (docs/store.md §9.1–§9.2): what a caller needs to know about the target's
//! slot. A target without a slot is exit 1 here (a negative answer), not 3.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::{Format, Reply};
use crate::error::Error;
use crate::store::drift::{self, Drift};
use crate::store::{HandoffInfo, now, read_head};

/// The `verify-handoff` next to this executable, else the first one on PATH.
fn gate_path() -> Option<PathBuf> {
    let name = format!("verify-handoff{}", std::env::consts::EXE_SUFFIX);
    let beside = std::env::current_exe()
        .ok()
        .and_then(|e| e.parent().map(|d| d.join(&name)));
    if let Some(p) = beside.filter(|p| p.is_file()) {
        return Some(p);
    }
    crate::env::on_path(&name, Path::is_file)
}

/// What `orient` found about the target's slot.
#[derive(Debug, Serialize)]
pub(crate) struct Orientation {
    pub(crate) main: String,
    pub(crate) checkout: String,
    pub(crate) branch: String,
    pub(crate) detached: bool,
    pub(crate) head: String,
    pub(crate) handoff: String,
    pub(crate) exists: bool,
    pub(crate) mtime: Option<i64>,
    pub(crate) progress: Option<String>,
    pub(crate) gate: Option<String>,
    pub(crate) drift: Vec<Drift>,
}

/// Print everything a caller needs about the target's slot (eight key=value lines).
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(flatten)]
    dir: super::checkout::CheckoutOrDir,
    #[command(flatten)]
    slot: super::checkout::SlotArg,
}

pub(crate) fn run(args: &Args, format: Format) -> Result<Reply, Error> {
    Reply::show(
        format,
        &orient(args.dir.dir(), &args.slot)?,
        orientation_text,
    )
}

fn orient(dir: Option<&str>, slot: &super::checkout::SlotArg) -> Result<Orientation, Error> {
    let (target, store) = slot.target_and_store(dir)?;
    // Creating the store is a courtesy; a failure must not change the answer.
    let _ = store.create();
    let slot = store.path_of(&target.name);
    let meta = crate::fs::symlink_metadata(&slot)
        .ok()
        .filter(|m| m.file_type().is_file());
    let info = meta.as_ref().map(|m| {
        let head = read_head(&slot).unwrap_or_default();
        HandoffInfo::from_parts(&store, &target.name, &head, m)
    });
    let drift = info
        .as_ref()
        .filter(|i| !i.is_placeholder() && i.size > 0)
        .map(|i| drift::signals(i, Some(&target.facts), now()))
        .unwrap_or_default();
    let gate = gate_path().map(|p| p.to_string_lossy().into_owned());
    Ok(Orientation {
        main: target.main(),
        checkout: target.checkout(),
        branch: target.facts.reference.clone(),
        detached: target.facts.detached,
        head: target.facts.head.clone(),
        handoff: slot.to_string_lossy().into_owned(),
        exists: info.is_some(),
        mtime: info.as_ref().and_then(|i| i.mtime),
        progress: info.as_ref().and_then(|i| i.progress.clone()),
        gate,
        drift,
    })
}

fn orientation_text(o: &Orientation) -> String {
    let mut text = format!(
        "main={}\ncheckout={}\nbranch={}\nhandoff={}\nexists={}\nmtime={}\nprogress={}\ngate={}\n",
        o.main,
        o.checkout,
        o.branch,
        o.handoff,
        u8::from(o.exists),
        o.mtime.map(|m| m.to_string()).unwrap_or_default(),
        o.progress.as_deref().unwrap_or(""),
        o.gate.as_deref().unwrap_or("")
    );
    for d in &o.drift {
        text.push_str(&format!("drift={}\n", d.text));
    }
    text
}
