//! `restore`: swap a kept version back into the slot (run again to undo); the restored version
//! joins the chain like a written one and travels with autoPush.

use serde::Serialize;

use super::{Format, Reply, render};
use crate::error::Error;
use crate::store::change::{SlotChange, Wait};
use crate::store::{epoch, iso, slot};

/// Swap a kept version back into the slot.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(flatten)]
    dir: super::checkout::CheckoutOrDir,
    #[command(flatten)]
    slot: super::checkout::SlotArg,
    /// The version to bring back (1 is the newest kept; `history` lists them). `--version N`
    /// still works.
    #[arg(
        short = 'n',
        long = "number",
        alias = "version",
        value_name = "N",
        default_value_t = 1,
        value_parser = clap::value_parser!(u64).range(1..)
    )]
    version: u64,
}

pub(crate) fn run(args: &Args, format: Format) -> Result<Reply, Error> {
    let restored = restore(args.dir.dir(), &args.slot, args.version as usize)?;
    Reply::show(format, &restored, render::restored)
}

/// What `restore` did.
#[derive(Debug, Serialize)]
pub(crate) struct Restored {
    pub(crate) slot: String,
    pub(crate) version: usize,
    /// Where the slot's previous version went in history.
    pub(crate) history: Option<String>,
    pub(crate) auto_push: bool,
    /// The restored version's own time (ISO), which the slot now has.
    #[serde(skip)]
    pub(crate) written: String,
}

fn restore(
    dir: Option<&str>,
    slot: &super::checkout::SlotArg,
    version: usize,
) -> Result<Restored, Error> {
    let (target, store) = slot.target_and_store(dir)?;
    let slot_path = store.path_of(&target.name);
    let shown = slot_path.to_string_lossy().into_owned();
    store.create()?;
    let change = SlotChange::begin(&store, &target, Wait::Cli)?;
    let versions = slot::versions(&store, &target.name);
    let Some(chosen) = version.checked_sub(1).and_then(|i| versions.get(i)) else {
        return Err(Error::NoVersion {
            slot: shown,
            version,
            kept: versions.len(),
        });
    };
    let mtime = chosen.mtime.ok_or_else(|| {
        Error::io(
            &chosen.path,
            std::io::Error::other("modification time unreadable"),
        )
    })?;
    if let Ok(meta) = crate::fs::symlink_metadata(&slot_path)
        && !meta.file_type().is_file()
    {
        return Err(Error::NotRegular(slot_path));
    }
    // What is restored is gated like a written draft: a malformed version or one carrying a
    // credential never goes back into the slot.
    let bytes = slot::read_capped(&chosen.path)?;
    let doc = crate::document::Document::parse(&String::from_utf8_lossy(&bytes).replace('\r', ""));
    let refusal = if !doc.secrets.is_empty() {
        Some(crate::error::Refusal::Credential)
    } else {
        crate::report::run_gate::malformed(&doc, &chosen.path.to_string_lossy())
            .map(|_| crate::error::Refusal::Malformed)
    };
    if let Some(why) = refusal {
        return Err(Error::NotStored { slot: shown, why });
    }
    let kept = change.restore(chosen, mtime)?;
    let history = kept.map(|p| p.to_string_lossy().into_owned());
    // The restored version joins the branch's chain as the change ends, and travels like a
    // written one.
    drop(change);
    let auto_push = crate::lifecycle::changed(&target).push_started;
    Ok(Restored {
        slot: shown,
        version,
        history,
        auto_push,
        written: iso(epoch(mtime)),
    })
}
