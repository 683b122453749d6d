//! `config`: the effective value of every setting (docs/configuration.md) for the target
//! repository, and where each came from — the environment, a git config scope and file, or the
//! default — like `git config --show-origin`; a value set but not understood is listed as
//! ignored, with what the key takes.

use serde::Serialize;

use super::{Format, Reply, render};
use crate::error::Error;
use crate::settings::Settings;
use crate::store::Target;
use crate::store::usage::Use;

/// List the effective settings and where each came from.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(flatten)]
    dir: super::checkout::Checkout,
}

/// What `config` found.
#[derive(Debug, Serialize)]
pub(crate) struct Config {
    pub(crate) checkout: String,
    #[serde(flatten)]
    pub(crate) settings: Settings,
    /// Whether the automatic paths act in this repository, and why.
    pub(crate) in_use: Use,
}

pub(crate) fn run(args: &Args, format: Format) -> Result<Reply, Error> {
    let target = Target::required(args.dir.dir())?;
    let store = crate::store::Store::locate().ok();
    let config = Config {
        checkout: target.checkout(),
        settings: target.settings(),
        in_use: Use::of(store.as_ref(), &target),
    };
    Reply::show(format, &config, render::config)
}
