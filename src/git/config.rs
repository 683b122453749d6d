//! The `handoff.*` keys of git's configuration, as git resolves them — system, global,
//! repository, worktree, then `git -c` and `GIT_CONFIG_*`; the last one set wins — each with
//! where it came from (`git config --show-origin`). Read from the snapshot the target's
//! discovery already loaded, so a hook pays nothing for a second open; `git -c` reaches a hook
//! git runs as `GIT_CONFIG_PARAMETERS`, read here as git reads it. A repository git would not
//! trust (another user's, not in `safe.directory`) has its own sections passed over: git
//! refuses to open it at all. Every value set is kept, the last first, so a value a key does
//! not take gives way to the next source. Also the repository's configuration as sync reads and
//! edits it (remotes, their fetch refspecs).

use std::path::PathBuf;

/// One `handoff.<name>` value and where git found it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Found {
    /// The value as written (an implicit `[handoff] key` with no `=` reads as `true`, as git).
    pub(crate) value: String,
    /// `system`, `global`, `local`, `worktree`, `command` (the git scope names).
    pub(crate) scope: &'static str,
    /// The file it was read from, when it came from one.
    pub(crate) file: Option<PathBuf>,
}

/// Every `handoff.<name>` value set in some scope, in git's order (the last one wins).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct HandoffConfig {
    /// Lower-cased key name (git's keys are case-insensitive) and one value set for it.
    found: Vec<(String, Found)>,
}

impl HandoffConfig {
    /// The `handoff` section (no subsection) of `repo`'s configuration, in git's order.
    pub(crate) fn of(repo: &gix::Repository) -> HandoffConfig {
        HandoffConfig::from_file(repo.config_snapshot().plumbing())
    }

    /// Outside any repository: the system and global files, then `git -c`. `Err` says what git
    /// could not read (git stops there too, for every command).
    pub(crate) fn globals() -> Result<HandoffConfig, String> {
        gix::config::File::from_globals()
            .map(|file| HandoffConfig::from_file(&file))
            .map_err(|e| e.to_string())
    }

    fn from_file(file: &gix::config::File) -> HandoffConfig {
        let mut config = HandoffConfig::default();
        let sections = file.sections_by_name("handoff").into_iter().flatten();
        for section in sections.filter(|s| s.header().subsection_name().is_none()) {
            let meta = section.meta();
            if meta.trust != gix::sec::Trust::Full {
                continue;
            }
            let scope = scope_of(meta.source);
            for name in section.value_names() {
                let value = match section.value_implicit(&name) {
                    Some(Some(v)) => v.to_string(),
                    // `[handoff] enabled` with no `=`: git reads it as true.
                    Some(None) => "true".to_string(),
                    None => continue,
                };
                let key = name.to_ascii_lowercase();
                config.found.push((
                    key,
                    Found {
                        value,
                        scope,
                        file: meta.path.clone(),
                    },
                ));
            }
        }
        for (key, value) in command_line() {
            let found = Found {
                value,
                scope: "command",
                file: None,
            };
            // The snapshot may hold it already (`GIT_CONFIG_COUNT` where the environment is
            // honoured): once is enough.
            if !config.found.iter().any(|(k, f)| *k == key && *f == found) {
                config.found.push((key, found));
            }
        }
        config
    }

    /// Every value of `handoff.<name>` (any case), the winning one first.
    pub(crate) fn all<'a>(&'a self, name: &str) -> impl Iterator<Item = &'a Found> + 'a {
        let name = name.to_ascii_lowercase();
        self.found
            .iter()
            .rev()
            .filter(move |(k, _)| *k == name)
            .map(|(_, f)| f)
    }
}

/// The `handoff.<name>` values `git -c` passed down (`GIT_CONFIG_COUNT` with its
/// `GIT_CONFIG_KEY_<n>`/`GIT_CONFIG_VALUE_<n>`, then `GIT_CONFIG_PARAMETERS`, as git applies
/// them), each as (lower-cased name, value).
fn command_line() -> Vec<(String, String)> {
    let mut out = Vec::new();
    let count: usize = std::env::var("GIT_CONFIG_COUNT")
        .ok()
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or(0);
    for i in 0..count.min(1000) {
        if let (Ok(k), Ok(v)) = (
            std::env::var(format!("GIT_CONFIG_KEY_{i}")),
            std::env::var(format!("GIT_CONFIG_VALUE_{i}")),
        ) {
            out.push((k, v));
        }
    }
    if let Ok(params) = std::env::var("GIT_CONFIG_PARAMETERS") {
        out.extend(parameters(&params));
    }
    out.into_iter()
        .filter_map(|(key, value)| {
            let (section, name) = key.split_once('.')?;
            (section.eq_ignore_ascii_case("handoff") && !name.contains('.'))
                .then(|| (name.to_ascii_lowercase(), value))
        })
        .collect()
}

/// git's `GIT_CONFIG_PARAMETERS`: entries `'key'='value'`, `'key'` (an implicit true) or the
/// older `'key=value'`, single-quoted as git's `sq_quote` writes them (`'\''` for a quote),
/// separated by spaces. An entry that does not parse ends the reading, as git stops with an
/// error there.
fn parameters(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut rest = text.trim_start();
    while !rest.is_empty() {
        let Some((key, after)) = quoted(rest) else {
            break;
        };
        let (key, value, after) = match after.strip_prefix('=') {
            Some(v) => match quoted(v) {
                Some((value, after)) => (key, value, after),
                None => break,
            },
            None => match key.split_once('=') {
                Some((k, v)) => (k.to_string(), v.to_string(), after),
                None => (key, "true".to_string(), after),
            },
        };
        out.push((key, value));
        rest = after.trim_start();
    }
    out
}

/// One shell-quoted word at the start of `text` (quoted runs and `\x` escapes joined), and
/// what follows it.
fn quoted(text: &str) -> Option<(String, &str)> {
    let mut word = String::new();
    let mut rest = text;
    let mut any = false;
    loop {
        if let Some(inner) = rest.strip_prefix('\'') {
            let end = inner.find('\'')?;
            word.push_str(&inner[..end]);
            rest = &inner[end + 1..];
        } else if let Some(esc) = rest.strip_prefix('\\') {
            let c = esc.chars().next()?;
            word.push(c);
            rest = &esc[c.len_utf8()..];
        } else {
            break;
        }
        any = true;
    }
    any.then_some((word, rest))
}

/// A git boolean (`true`/`yes`/`on`, `false`/`no`/`off`/empty, any number), as git — through
/// gix — reads it.
pub(crate) fn boolean(value: &str) -> Option<bool> {
    gix::config::Boolean::try_from(value).ok().map(|b| b.0)
}

/// The name git's `--show-scope` gives a source.
fn scope_of(source: gix::config::Source) -> &'static str {
    use gix::config::Source;
    match source {
        Source::GitInstallation | Source::System => "system",
        Source::Git | Source::User => "global",
        Source::Local => "local",
        Source::Worktree => "worktree",
        Source::Env | Source::Cli | Source::Api | Source::EnvOverride => "command",
    }
}

/// The repository's configuration as `Chains` reads and edits it (sync's remotes and refspecs).
impl super::chain::Chains {
    /// A string value of the repository's configuration.
    pub(crate) fn config_string(&self, key: &str) -> Option<String> {
        self.repo
            .config_snapshot()
            .string(key)
            .map(|v| v.to_string())
    }

    /// Every value of a multi-valued key.
    pub(crate) fn config_strings(&self, key: &str) -> Vec<String> {
        self.repo
            .config_snapshot()
            .strings(key)
            .unwrap_or_default()
            .into_iter()
            .map(|v| v.to_string())
            .collect()
    }

    /// The names of the configured remotes.
    pub(crate) fn remotes(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .repo
            .remote_names()
            .into_iter()
            .map(|n| n.to_string())
            .collect();
        names.sort();
        names
    }

    /// `key` of `[section "sub"]` in the repository's own config file holding `value` (added
    /// beside the values it has), every other byte kept; the file's new text for the caller to
    /// write atomically, or `None` when it holds it already.
    pub(crate) fn config_edited(
        &self,
        section: &str,
        sub: &str,
        key: &str,
        value: &str,
    ) -> Result<Option<(PathBuf, Vec<u8>)>, super::chain::GitError> {
        let path = self.repo.common_dir().join("config");
        let mut file =
            gix::config::File::from_path_no_includes(path.clone(), gix::config::Source::Local)
                .map_err(super::chain::other)?;
        let full = format!("{section}.{sub}.{key}");
        let mut changed = false;
        let present = file
            .raw_values(full.as_str())
            .map(|vs| vs.iter().any(|v| v.as_slice() == value.as_bytes()))
            .unwrap_or(false);
        if !present {
            file.section_mut_or_create_new(section, Some(sub.into()))
                .map_err(super::chain::other)?
                .push(key, Some(value.into()))
                .map_err(super::chain::other)?;
            changed = true;
        }
        if !changed {
            return Ok(None);
        }
        let mut out = Vec::new();
        file.write_to(&mut out).map_err(super::chain::other)?;
        Ok(Some((path, out)))
    }
}

#[cfg(test)]
mod tests {
    use super::{boolean, parameters};

    #[test]
    fn git_config_parameters_read_as_git_writes_them() {
        let s = |a: &str, b: &str| (a.to_string(), b.to_string());
        assert_eq!(
            parameters("'handoff.writer'='off' 'core.x'='it'\\''s' 'handoff.enabled' 'a.b=c'"),
            [
                s("handoff.writer", "off"),
                s("core.x", "it's"),
                s("handoff.enabled", "true"),
                s("a.b", "c"),
            ]
        );
        assert_eq!(parameters("'unclosed"), []);
    }

    #[test]
    fn booleans_read_as_git_reads_them() {
        let read: Vec<Option<bool>> = ["Yes", "off", "1", "0", "TRUE", "maybe", ""]
            .into_iter()
            .map(boolean)
            .collect();
        assert_eq!(
            read,
            [
                Some(true),
                Some(false),
                Some(true),
                Some(false),
                Some(true),
                None,
                Some(false)
            ]
        );
    }
}
