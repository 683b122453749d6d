//! `path`: the target's slot path, nothing read.

use std::io::Write;

use serde::Serialize;

use super::orient::locate;
use super::{Format, Ui, print, print_json};
use crate::error::{Error, Exit};

/// Print the target's slot path.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The checkout (default: $CONTEXT_ECONOMY_CHECKOUT, then the working directory).
    dir: Option<String>,
}

pub fn run(args: &Args, ui: &mut Ui) -> Result<Exit, Error> {
    path(args.dir.as_deref(), ui.format, ui.out)
}

#[derive(Serialize)]
struct PathJson {
    path: String,
}

fn path(dir: Option<&str>, format: Format, out: &mut dyn Write) -> Result<Exit, Error> {
    let (target, store) = locate(dir)?;
    let path = store.path_of(&target.name).to_string_lossy().into_owned();
    match format {
        Format::Json => print_json(out, &PathJson { path })?,
        Format::Text => print(out, &format!("{path}\n"))?,
    }
    Ok(Exit::Ok)
}
