//! `path`: the target's slot path, nothing read.

use serde::Serialize;

use super::orient::locate;
use super::{Format, Ui, print, print_json, render};
use crate::error::{Error, Exit};

/// Print the target's slot path.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The checkout (default: $CONTEXT_ECONOMY_CHECKOUT, then the working directory).
    dir: Option<String>,
}

pub fn run(args: &Args, ui: &mut Ui) -> Result<Exit, Error> {
    let (target, store) = locate(args.dir.as_deref())?;
    let slot = SlotPath {
        path: store.path_of(&target.name).to_string_lossy().into_owned(),
    };
    match ui.format {
        Format::Json => print_json(ui.out, &slot)?,
        Format::Text => print(ui.out, &render::slot_path(&slot))?,
    }
    Ok(Exit::Ok)
}

/// The target's slot path.
#[derive(Debug, Serialize)]
pub struct SlotPath {
    pub path: String,
}
