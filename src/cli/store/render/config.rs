//! `config` for people: one line per setting — key, value, where it came from — then the
//! values that were set but ignored, then whether the automatic paths act here.

use super::super::config::Config;
use crate::settings::Origin;
use crate::store::usage::Use;

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

/// Whether the automatic paths act, and why, in one line.
pub(crate) fn in_use(u: &Use) -> String {
    match u {
        Use::Enabled => "yes: handoff.enabled is true".to_string(),
        Use::Disabled => {
            "no: handoff.enabled is false — no session start, /clear or compaction says anything or starts the writer".to_string()
        }
        Use::Slot(name) => format!("yes: the store holds {name}"),
        Use::Chain(reference) => format!("yes: the repository holds {reference}"),
        Use::Unused => "no: no handoff for any branch yet — session starts, /clear and compactions stay silent and start no writer until the first `handoff-store write` (or git config handoff.enabled true)".to_string(),
    }
}

pub(crate) fn config(c: &Config) -> String {
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
    text.push_str(&format!("in use   {}\n", in_use(&c.in_use)));
    text
}
