//! `install <harness>` / `uninstall <harness>`: where each harness reads its hooks, and putting
//! our SessionStart hook there without disturbing anything else. JSON files are edited through
//! the CST (`jsonc.rs`); the bytes before and after are kept under `<store>/.installs/`, so an
//! uninstall of a file nobody touched since restores it byte for byte, and one edited since loses
//! only our hook group. A client whose
//! hooks need its own trust records it after the edit (`Client::after_install`).

mod file;
mod ours;
mod plan;
mod scripts;
pub(crate) mod setting;
mod skill;

pub(crate) use file::line_endings_of;
pub(crate) use ours::{installed_program, is_installed, is_ours, names_our_hook, runs_our_binary};
pub(crate) use plan::{Plan, Scope, Shape, group, home, plan, project, tool_group};
#[cfg(feature = "mcp")]
pub(crate) use skill::skill_instructions;

/// A client's config file as every edit of ours reads it (`None`: there is none).
pub(crate) fn read_config(file: &Path) -> Result<Option<String>, Error> {
    read_text(file)
}

/// Write a client's config file as every edit of a setting of ours does (atomic, its mode
/// kept, never a read-only one).
pub(crate) fn write_config(file: &Path, text: &str) -> Result<(), Error> {
    file::write_setting(file, text)
}
pub(crate) use scripts::{install_scripts, scripts_in_place};
pub(crate) use skill::{install_skill, uninstall_skill};

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::jsonc;
use crate::error::{ConfigStep, Error, Input};
use crate::store::{Store, slot};
use file::{read_text, remove_ours, write_text};
use ours::commands_of;

/// What `install` and `uninstall` remember of a file (`<store>/.installs/<md5 of path>.json`).
#[derive(Debug, Serialize, Deserialize)]
struct Record {
    path: String,
    before: Option<String>,
    after: String,
    /// The client's trust keys for our hooks, when they were recorded.
    #[serde(default)]
    trust_keys: Vec<String>,
    /// The folders the install created for the file, deepest first: uninstall removes each
    /// that is empty again.
    #[serde(default)]
    created: Vec<String>,
}

/// The folders above `file` that do not exist yet, deepest first.
fn missing_folders(file: &Path) -> Vec<String> {
    file.ancestors()
        .skip(1)
        .take_while(|d| !d.as_os_str().is_empty() && crate::fs::symlink_metadata(d).is_err())
        .map(|d| d.to_string_lossy().into_owned())
        .collect()
}

/// Remove the folders an install created that are empty again (never one that holds anything).
fn remove_created(created: &[String]) {
    for dir in created {
        if crate::fs::remove_dir(dir).is_err() {
            return;
        }
    }
}

fn record_path(store: &Store, file: &Path) -> PathBuf {
    let key = crate::text::hex_md5(file.to_string_lossy().as_bytes());
    store.dir.join(".installs").join(format!("{key}.json"))
}

/// A config file `plan` edits could not be parsed or changed at `step`.
fn config_error(plan: &Plan, step: ConfigStep, e: jsonc::JsoncError) -> Error {
    Error::Input(Input::Config {
        path: plan.file.clone(),
        step,
        source: Box::new(e),
    })
}

/// The result of `install`.
#[derive(Debug, Serialize)]
pub(crate) struct Installed {
    pub(crate) harness: &'static str,
    pub(crate) file: String,
    /// False when our hook was already there.
    pub(crate) changed: bool,
}

/// Put our hook into the plan's file (idempotent).
pub(crate) fn install(store: &Store, plan: &Plan) -> Result<Installed, Error> {
    let before = read_text(&plan.file)?;
    let installed = |changed| Installed {
        harness: plan.harness.name(),
        file: plan.file.to_string_lossy().into_owned(),
        changed,
    };
    let after = match &plan.shape {
        Shape::Json { groups, new_file } => {
            let mut text = before.clone().unwrap_or_else(|| new_file.to_string());
            let mut added = false;
            for (path, entry) in groups {
                let present = jsonc::elements(&text, path);
                let wanted = commands_of(entry);
                if present
                    .iter()
                    .any(|g| commands_of(g).iter().any(|c| wanted.contains(c)))
                {
                    continue;
                }
                if present.iter().any(|g| is_ours(plan.harness, g)) {
                    // Ours, but naming another program (an older install, a moved binary):
                    // replaced by this one's.
                    text = jsonc::remove(&text, path, |g| is_ours(plan.harness, g), |_| true)
                        .map(|(t, _)| t)
                        .map_err(|e| config_error(plan, ConfigStep::Read, e))?;
                }
                text = jsonc::append(&text, path, entry)
                    .map_err(|e| config_error(plan, ConfigStep::Add, e))?;
                added = true;
            }
            if !added {
                return Ok(installed(false));
            }
            text
        }
        Shape::File { text: ours, .. } => match &before {
            Some(text) if text == ours => return Ok(installed(false)),
            Some(_) => {
                return Err(Error::NotOurs {
                    path: plan.file.clone(),
                    beside: None,
                    advice: "move it away (it is the client's file of that name, not ours) and install again",
                });
            }
            None => ours.clone(),
        },
    };
    let executable = matches!(
        plan.shape,
        Shape::File {
            executable: true,
            ..
        }
    );
    let created = missing_folders(&plan.file);
    write_text(&plan.file, &after, executable)?;
    // Installing again over our own earlier install (a newer release adds hooks) keeps what the
    // file was before the first one, so uninstall still gives the user's file back.
    let earlier: Option<Record> = read_text(&record_path(store, &plan.file))?
        .and_then(|t| serde_json::from_str(&t).ok())
        .filter(|r: &Record| before.as_deref() == Some(r.after.as_str()));
    let record = Record {
        path: plan.file.to_string_lossy().into_owned(),
        after,
        trust_keys: earlier
            .as_ref()
            .map(|r| r.trust_keys.clone())
            .unwrap_or_default(),
        created: earlier.as_ref().map_or(created, |r| r.created.clone()),
        before: earlier.map_or(before, |r| r.before),
    };
    save_record(store, &plan.file, &record)?;
    Ok(installed(true))
}

fn save_record(store: &Store, file: &Path, record: &Record) -> Result<(), Error> {
    let path = record_path(store, file);
    if let Some(dir) = path.parent() {
        slot::create_private_dir(dir)?;
    }
    let text = serde_json::to_string(record).map_err(|e| Error::Output(e.into()))?;
    crate::durable::write(&path, text.as_bytes(), None)
}

/// Remember the client's trust keys for the hooks installed in `file`.
pub(crate) fn remember_trust_keys(
    store: &Store,
    file: &Path,
    keys: &[String],
) -> Result<(), Error> {
    let path = record_path(store, file);
    let Some(text) = read_text(&path)? else {
        return Ok(());
    };
    let Ok(mut record) = serde_json::from_str::<Record>(&text) else {
        return Ok(());
    };
    for key in keys {
        if !record.trust_keys.contains(key) {
            record.trust_keys.push(key.clone());
        }
    }
    save_record(store, file, &record)
}

/// The result of `uninstall`.
#[derive(Debug, Serialize)]
pub(crate) struct Removed {
    pub(crate) harness: &'static str,
    pub(crate) file: String,
    /// Whether anything of ours was there.
    pub(crate) removed: bool,
    /// True when the file was restored byte for byte (nobody had changed it since install).
    pub(crate) exact: bool,
    /// The client's trust keys of the removed hooks, for the caller to drop.
    #[serde(skip)]
    pub(crate) trust_keys: Vec<String>,
    /// The folders the install created, for the caller to remove once what else it put there
    /// (a client's setting beside the hooks) is gone too — only while empty.
    #[serde(skip)]
    pub(crate) created: Vec<String>,
}

/// Remove the folders an install created that are empty now (never one that holds anything).
pub(crate) fn remove_created_if_empty(created: &[String]) {
    remove_created(created);
}

/// Take our hook out of the plan's file.
pub(crate) fn uninstall(store: &Store, plan: &Plan) -> Result<Removed, Error> {
    // The scripts beside the file first: they sit in the folder its install may have created.
    scripts::uninstall_scripts(plan)?;
    let current = read_text(&plan.file)?;
    let record_file = record_path(store, &plan.file);
    let record: Option<Record> =
        read_text(&record_file)?.and_then(|t| serde_json::from_str(&t).ok());
    let mut removed = Removed {
        harness: plan.harness.name(),
        file: plan.file.to_string_lossy().into_owned(),
        removed: false,
        exact: false,
        trust_keys: record
            .as_ref()
            .map(|r| r.trust_keys.clone())
            .unwrap_or_default(),
        created: record
            .as_ref()
            .map(|r| r.created.clone())
            .unwrap_or_default(),
    };
    let Some(current) = current else {
        let _ = crate::fs::remove_file(&record_file);
        return Ok(removed);
    };
    if let Some(r) = &record
        && r.after == current
    {
        match &r.before {
            Some(before) => write_text(&plan.file, before, false)?,
            None => {
                remove_ours(&plan.file)?;
                remove_created(&r.created);
            }
        }
        removed.removed = true;
        removed.exact = true;
    } else {
        match &plan.shape {
            Shape::Json { groups, .. } => {
                let mut text = current.clone();
                let mut total = 0;
                // A container the file had before our install stays, even when left empty;
                // without a record of that, every container stays.
                let had = |p: &[&str]| {
                    record
                        .as_ref()
                        .is_none_or(|r| r.before.as_deref().is_some_and(|b| jsonc::has(b, p)))
                };
                for (path, _) in groups {
                    let (next, n) = jsonc::remove(&text, path, |g| is_ours(plan.harness, g), had)
                        .map_err(|e| config_error(plan, ConfigStep::ReadToRemove, e))?;
                    text = next;
                    total += n;
                }
                if total > 0 {
                    write_text(&plan.file, &text, false)?;
                    removed.removed = true;
                }
            }
            Shape::File { text: ours, .. } => {
                if &current == ours {
                    remove_ours(&plan.file)?;
                    remove_created(record.as_ref().map_or(&[], |r| &r.created));
                    removed.removed = true;
                }
            }
        }
    }
    let _ = crate::fs::remove_file(&record_file);
    Ok(removed)
}
