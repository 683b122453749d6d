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
