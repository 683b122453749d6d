//! The settings a user changes (docs/configuration.md): each is a git config key under
//! `handoff.`, read as git resolves it for the target repository (so a setting follows the
//! user into every client's hooks, which rarely see the shell's environment), with one
//! environment variable per key as an override for scripts and tests. One table names them,
//! so `config`, the readers and the docs say the same thing.

use std::path::PathBuf;

use serde::Serialize;

use crate::git::config::{HandoffConfig, boolean};

/// One setting: its git key, its override, its default and the values it takes.
#[derive(Debug)]
pub(crate) struct Key {
    /// `handoff.<name>`, as git spells it.
    pub(crate) git: &'static str,
    pub(crate) env: &'static str,
    pub(crate) default: &'static str,
    kind: Kind,
}

#[derive(Debug, Clone, Copy)]
enum Kind {
    /// `auto`, or a git boolean.
    AutoBool,
    /// `auto` | `on` | `off` (git booleans mean on/off).
    Mode,
    /// One of the words.
    Words(&'static [&'static str]),
    Bool,
    Number,
}

/// Every setting, in the order `config` lists them.
pub(crate) const KEYS: [Key; 9] = [
    Key {
        git: "handoff.enabled",
        env: "HANDOFF_ENABLED",
        default: "auto",
        kind: Kind::AutoBool,
    },
    Key {
        git: "handoff.writer",
        env: "HANDOFF_BACKGROUND_WRITER",
        default: "auto",
        kind: Kind::Mode,
    },
    Key {
        git: "handoff.onStartup",
        env: "HANDOFF_ON_STARTUP",
        default: "offer",
        kind: Kind::Words(&["offer", "deliver", "off"]),
    },
    Key {
        git: "handoff.onClear",
        env: "HANDOFF_ON_CLEAR",
        default: "deliver",
        kind: Kind::Words(&["deliver", "off"]),
    },
    Key {
        git: "handoff.autoPush",
        env: "HANDOFF_AUTO_PUSH",
        default: "false",
        kind: Kind::Bool,
    },
    Key {
        git: "handoff.offerMaxDays",
        env: "HANDOFF_OFFER_MAX_DAYS",
        default: "7",
        kind: Kind::Number,
    },
    Key {
        git: "handoff.staleHours",
        env: "HANDOFF_STALE_HOURS",
        default: "24",
        kind: Kind::Number,
    },
    Key {
        git: "handoff.tripwires",
        env: "HANDOFF_TRIPWIRES",
        default: "true",
        kind: Kind::Bool,
    },
    Key {
        git: "handoff.holdout",
        env: "HANDOFF_HOLDOUT",
        default: "0",
        kind: Kind::Number,
    },
];

impl Key {
    /// The value in its one spelling (`on`, `true`, `12`), or `None` when this key does not
    /// take it.
    fn understood(&self, value: &str) -> Option<String> {
        let v = value.trim();
        match self.kind {
            Kind::AutoBool if v.eq_ignore_ascii_case("auto") => Some("auto".into()),
            Kind::AutoBool | Kind::Bool => boolean(v).map(|b| b.to_string()),
            Kind::Mode if v.eq_ignore_ascii_case("auto") => Some("auto".into()),
            Kind::Mode => boolean(v).map(|b| if b { "on" } else { "off" }.to_string()),
            Kind::Words(words) => words
                .iter()
                .find(|w| w.eq_ignore_ascii_case(v))
                .map(|w| (*w).to_string()),
            Kind::Number => (!v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()))
                .then(|| v.parse::<u64>().ok().map(|n| n.to_string()))
                .flatten(),
        }
    }

    /// Whether the environment may only narrow this key's git value: `handoff.enabled` and
    /// `handoff.writer`, the two that act (and bill) on their own.
    fn narrows_only(&self) -> bool {
        matches!(self.kind, Kind::AutoBool | Kind::Mode)
    }

    /// What the key takes, for a message (`auto, true or false`).
    pub(crate) fn takes(&self) -> String {
        match self.kind {
            Kind::AutoBool => "auto, true or false".into(),
            Kind::Mode => "auto, on or off".into(),
            Kind::Words(words) => words.join(", "),
            Kind::Bool => "true or false".into(),
            Kind::Number => "a whole number".into(),
        }
    }
}

/// Where a setting's value came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "from", rename_all = "lowercase")]
pub(crate) enum Origin {
    /// The environment variable.
    Env {
        variable: &'static str,
    },
    /// A git configuration scope (`system`, `global`, `local`, `worktree`, `command`).
    Git {
        scope: &'static str,
        file: Option<PathBuf>,
    },
    Default,
}

/// A value that was set but not understood, and so not used.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Ignored {
    pub(crate) key: &'static str,
    pub(crate) value: String,
    pub(crate) origin: Origin,
    /// What the key takes.
    pub(crate) takes: String,
}

/// One setting's effective value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Effective {
    pub(crate) key: &'static str,
    pub(crate) value: String,
    pub(crate) origin: Origin,
}

/// The effective settings of one repository: for each key the environment's override, else
/// git's winning value, else the default — a value the key does not take is passed over (and
/// listed in `ignored`), never an error: a hook must not fail a session on a typo.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Settings {
    pub(crate) values: Vec<Effective>,
    pub(crate) ignored: Vec<Ignored>,
}

/// `handoff.enabled`: whether the automatic paths act here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Enabled {
    /// Only in a repository in use (it has a handoff).
    Auto,
    On,
    Off,
}

/// `handoff.writer`: whether a compaction starts the background writer (a second model run).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WriterMode {
    Auto,
    On,
    Off,
}

/// What a fresh start (`source: startup`, no `/clear` just before) gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OnStartup {
    /// One short offer: the title, age and verdict, and the command that reads it.
    Offer,
    /// The full delivery, as after `/clear` (it consumes).
    Deliver,
    /// Nothing.
    Off,
}

impl Settings {
    /// The settings of the repository whose `handoff.*` keys are `config`.
    pub(crate) fn of(config: &HandoffConfig) -> Settings {
        let mut settings = Settings {
            values: Vec::with_capacity(KEYS.len()),
            ignored: Vec::new(),
        };
        for key in &KEYS {
            let env = std::env::var(key.env)
                .ok()
                .filter(|v| !v.is_empty())
                .map(|v| (v, Origin::Env { variable: key.env }));
            let git = config.all(key.git.trim_start_matches("handoff.")).map(|f| {
                (
                    f.value.clone(),
                    Origin::Git {
                        scope: f.scope,
                        file: f.file.clone(),
                    },
                )
            });
            let git: Vec<(String, Origin)> = git.collect();
            // The environment may come from a client's project file (a committed `.env`, a
            // project `env` block): for the keys that start model runs and act on their own,
            // it narrows what the user's git config says, never widens it.
            let git_off = key.narrows_only()
                && git
                    .iter()
                    .find_map(|(raw, _)| key.understood(raw))
                    .is_some_and(|v| v == "false" || v == "off");
            let mut chosen = None;
            for (raw, origin) in env.into_iter().chain(git) {
                let widening = git_off
                    && matches!(origin, Origin::Env { .. })
                    && key
                        .understood(&raw)
                        .is_some_and(|v| v != "false" && v != "off");
                match key.understood(&raw) {
                    Some(_) if widening => settings.ignored.push(Ignored {
                        key: key.git,
                        value: raw,
                        origin,
                        takes:
                            "only what narrows git config's off (the environment never widens it)"
                                .into(),
                    }),
                    Some(value) if chosen.is_none() => chosen = Some((value, origin)),
                    Some(_) => {}
                    None if chosen.is_some() => {}
                    None => settings.ignored.push(Ignored {
                        key: key.git,
                        value: raw,
                        origin,
                        takes: key.takes(),
                    }),
                }
            }
            let (value, origin) = chosen.unwrap_or((key.default.to_string(), Origin::Default));
            settings.values.push(Effective {
                key: key.git,
                value,
                origin,
            });
        }
        settings
    }

    /// Outside any repository: the environment, the system and global git config, and the
    /// defaults.
    pub(crate) fn outside() -> Settings {
        Settings::of(&HandoffConfig::globals().unwrap_or_default())
    }

    fn value(&self, git: &str) -> &str {
        self.values
            .iter()
            .find(|e| e.key == git)
            .map_or("", |e| e.value.as_str())
    }

    pub(crate) fn enabled(&self) -> Enabled {
        match self.value("handoff.enabled") {
            "true" => Enabled::On,
            "false" => Enabled::Off,
            _ => Enabled::Auto,
        }
    }

    pub(crate) fn writer(&self) -> WriterMode {
        match self.value("handoff.writer") {
            "on" => WriterMode::On,
            "off" => WriterMode::Off,
            _ => WriterMode::Auto,
        }
    }

    pub(crate) fn on_startup(&self) -> OnStartup {
        match self.value("handoff.onStartup") {
            "deliver" => OnStartup::Deliver,
            "off" => OnStartup::Off,
            _ => OnStartup::Offer,
        }
    }

    /// `handoff.onClear`: whether `/clear` delivers the handoff.
    pub(crate) fn delivers_on_clear(&self) -> bool {
        self.value("handoff.onClear") != "off"
    }

    pub(crate) fn push_after_change(&self) -> bool {
        self.value("handoff.autoPush") == "true"
    }

    pub(crate) fn offer_max_days(&self) -> u64 {
        self.value("handoff.offerMaxDays").parse().unwrap_or(7)
    }

    /// `handoff.tripwires`: whether a tool call that repeats a dead end or trap is told so.
    pub(crate) fn tripwires(&self) -> bool {
        self.value("handoff.tripwires") != "false"
    }

    /// `handoff.holdout N`: one reset in N (N ≥ 2), drawn at random, gets only a line saying a
    /// handoff exists — the user's own trial of what a handoff is worth (`impact`). `None`: off.
    pub(crate) fn holdout(&self) -> Option<u64> {
        self.value("handoff.holdout")
            .parse()
            .ok()
            .filter(|n| *n >= 2)
    }

    pub(crate) fn stale_hours(&self) -> u64 {
        self.value("handoff.staleHours").parse().unwrap_or(24)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_key_takes_its_words_and_the_defaults_are_taken() {
        let said: Vec<Option<String>> = [
            (0, "Auto"),
            (0, "yes"),
            (1, "false"),
            (1, "sometimes"),
            (2, "DELIVER"),
            (3, "offer"),
            (5, "12"),
            (5, "-1"),
        ]
        .into_iter()
        .map(|(k, v)| KEYS[k].understood(v))
        .collect();
        let s = |v: &str| Some(v.to_string());
        assert_eq!(
            said,
            [
                s("auto"),
                s("true"),
                s("off"),
                None,
                s("deliver"),
                None,
                s("12"),
                None
            ]
        );
        for key in &KEYS {
            assert_eq!(
                key.understood(key.default).as_deref(),
                Some(key.default),
                "{}",
                key.git
            );
        }
    }
}
