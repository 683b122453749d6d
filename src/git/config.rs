//! The `handoff.*` keys of git's configuration, as git resolves them — system, global,
//! repository, worktree, then `git -c` and `GIT_CONFIG_*`; the last one set wins — each with
//! where it came from (`git config --show-origin`). Read from the snapshot the target's
//! discovery already loaded, so a hook pays nothing for a second open. Also the repository's
//! configuration as sync reads and edits it (remotes, their fetch refspecs).

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

/// Every `handoff.<name>` key set in some scope: the winning value of each.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct HandoffConfig {
    /// Lower-cased key name (git's keys are case-insensitive) and its winning value.
    found: Vec<(String, Found)>,
}

impl HandoffConfig {
    /// The `handoff` section (no subsection) of `repo`'s configuration, in git's order.
    pub(crate) fn of(repo: &gix::Repository) -> HandoffConfig {
        let snapshot = repo.config_snapshot();
        let file = snapshot.plumbing();
        let mut config = HandoffConfig::default();
        let Some(sections) = file.sections_by_name("handoff") else {
            return config;
        };
        for section in sections.filter(|s| s.header().subsection_name().is_none()) {
            let meta = section.meta();
            let scope = scope_of(meta.source);
            for name in section.value_names() {
                let value = match section.value_implicit(&name) {
                    Some(Some(v)) => v.to_string(),
                    // `[handoff] enabled` with no `=`: git reads it as true.
                    Some(None) => "true".to_string(),
                    None => continue,
                };
                let key = name.to_ascii_lowercase();
                config.set(
                    key,
                    Found {
                        value,
                        scope,
                        file: meta.path.clone(),
                    },
                );
            }
        }
        config
    }

    fn set(&mut self, key: String, found: Found) {
        self.found.retain(|(k, _)| *k != key);
        self.found.push((key, found));
    }

    /// The winning value of `handoff.<name>` (any case), if set.
    pub(crate) fn get(&self, name: &str) -> Option<&Found> {
        let name = name.to_ascii_lowercase();
        self.found.iter().find(|(k, _)| *k == name).map(|(_, f)| f)
    }
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
    use super::boolean;

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
