//! `config`: the effective value of every setting (docs/configuration.md) for the target
//! repository, and where each came from — the environment, a git config scope and file, or the
//! default — like `git config --show-origin`; a value set but not understood is listed as
//! ignored, with what the key takes. Outside a checkout, the settings every repository starts
//! from (the environment, system and global git config).

use serde::Serialize;

use super::{Format, Reply};
use crate::error::Error;
use crate::settings::Origin;
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
    /// The checkout, or `None` outside any: then the settings are the global ones.
    pub(crate) checkout: Option<String>,
    #[serde(flatten)]
    pub(crate) settings: Settings,
    /// Whether the automatic paths act in this repository, and why (none outside one).
    pub(crate) in_use: Option<Use>,
}

pub(crate) fn run(args: &Args, format: Format) -> Result<Reply, Error> {
    let config = match Target::required(args.dir.dir()) {
        Ok(target) => {
            let store = crate::store::Store::locate().ok();
            Config {
                checkout: Some(target.checkout()),
                settings: target.settings(),
                in_use: Some(Use::of(store.as_ref(), &target)),
            }
        }
        // Outside a checkout, what holds everywhere: the environment, system and global.
        Err(Error::Target(crate::error::NoTarget::Resolve {
            why: crate::git::TargetError::NotGit,
            ..
        })) => Config {
            checkout: None,
            settings: Settings::outside(),
            in_use: None,
        },
        Err(e) => return Err(e),
    };
    Reply::show(format, &config, config_text)
}

/// Where a value came from, as `git config --show-origin` would say it.
fn origin(o: &Origin) -> String {
    match o {
        Origin::Env { variable } => format!("env      {variable}"),
        Origin::Git { scope, file } => format!(
            "{scope:<8} {}",
            file.as_ref().map_or_else(
                || "(git -c, GIT_CONFIG_*)".to_string(),
                |f| f.display().to_string()
            )
        ),
        Origin::Default => "default".to_string(),
    }
}

/// Whether the automatic paths act, and why (`store::usage::why`), in one line, with what
/// follows where they do not.
pub(crate) fn in_use(u: &Use) -> String {
    let why = crate::store::usage::why(u);
    match u {
        Use::Enabled | Use::Slot(_) | Use::Chain(_) => format!("yes: {why}"),
        Use::Disabled => format!(
            "no: {why} — no session start, /clear or compaction says anything or starts the writer"
        ),
        Use::Unused => format!(
            "no: {why} — session starts, /clear and compactions stay silent and start no writer until the first `handoff-store write` (or git config handoff.enabled true)"
        ),
    }
}

fn config_text(c: &Config) -> String {
    let mut text = String::new();
    for e in &c.settings.values {
        text.push_str(&format!(
            "{:<22} {:<8} {}\n",
            e.key,
            e.value,
            origin(&e.origin)
        ));
    }
    for i in &c.settings.ignored {
        text.push_str(&format!(
            "ignored  {}={} ({}): it takes {}\n",
            i.key,
            i.value,
            origin(&i.origin)
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" "),
            i.takes
        ));
    }
    match &c.in_use {
        Some(u) => text.push_str(&format!("in use   {}\n", in_use(u))),
        None => text.push_str(
            "in use   — not inside a git checkout: these are the settings every repository starts from\n",
        ),
    }
    text
}
