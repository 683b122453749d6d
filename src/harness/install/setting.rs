//! A setting of ours in a client's TOML file (a compaction prompt in `config.toml`): set
//! only where the file has none, format-preserving (toml_edit); one of the user's own is never
//! touched. Its bytes before and after are recorded beside the hook installs, so uninstall
//! gives a file nobody touched since back byte for byte, and takes only our value out of one
//! edited since.

use std::path::Path;

use super::file::{line_endings_of, read_text, remove_ours, write_setting};
use super::{Record, missing_folders, record_path, remove_created, save_record};
use crate::error::{ConfigStep, Error, Input};
use crate::store::Store;

/// What a file holds under the key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Held {
    /// No such key (or no file).
    Nothing,
    /// Our value.
    Ours,
    /// A value of the user's own.
    Theirs,
}

/// The file's text parsed, or why it cannot be.
fn parse(file: &Path, text: &str, step: ConfigStep) -> Result<toml_edit::DocumentMut, Error> {
    text.parse().map_err(|e: toml_edit::TomlError| {
        Error::Input(Input::Config {
            path: file.to_path_buf(),
            step,
            source: Box::new(e),
        })
    })
}

/// What `file` holds under the top-level `key`, against our `value`.
pub(crate) fn held(file: &Path, key: &str, value: &str) -> Result<Held, Error> {
    let Some(text) = read_text(file)? else {
        return Ok(Held::Nothing);
    };
    let doc = parse(file, &text, ConfigStep::Read)?;
    Ok(match doc.get(key) {
        None => Held::Nothing,
        Some(v) if v.as_str() == Some(value) => Held::Ours,
        Some(_) => Held::Theirs,
    })
}

/// Set the top-level `key` to `value` in `file` unless it holds one already; what it held.
pub(crate) fn set(store: &Store, file: &Path, key: &str, value: &str) -> Result<Held, Error> {
    let before = read_text(file)?;
    let mut doc = parse(file, before.as_deref().unwrap_or(""), ConfigStep::Add)?;
    match doc.get(key) {
        Some(v) if v.as_str() == Some(value) => return Ok(Held::Ours),
        Some(_) => return Ok(Held::Theirs),
        None => {}
    }
    doc.insert(key, toml_edit::value(value));
    let after = line_endings_of(before.as_deref().unwrap_or(""), doc.to_string());
    let created = missing_folders(file);
    write_setting(file, &after)?;
    let record = Record {
        path: file.to_string_lossy().into_owned(),
        before,
        after,
        trust_keys: Vec::new(),
        created,
    };
    save_record(store, file, &record)?;
    Ok(Held::Nothing)
}

/// Take our `value` of `key` out of `file`: the file as it was when nobody changed it since,
/// else only the key, and only when it still holds our value. Whether anything was taken out.
pub(crate) fn unset(store: &Store, file: &Path, key: &str, value: &str) -> Result<bool, Error> {
    let record_file = record_path(store, file);
    let record: Option<Record> =
        read_text(&record_file)?.and_then(|t| serde_json::from_str(&t).ok());
    let Some(current) = read_text(file)? else {
        let _ = crate::fs::remove_file(&record_file);
        return Ok(false);
    };
    let taken = match record.as_ref().filter(|r| r.after == current) {
        Some(r) => {
            match &r.before {
                Some(before) => write_setting(file, before)?,
                None => {
                    remove_ours(file)?;
                    remove_created(&r.created);
                }
            }
            true
        }
        None => {
            let mut doc = parse(file, &current, ConfigStep::ReadToRemove)?;
            let ours = doc.get(key).and_then(|v| v.as_str()) == Some(value);
            if ours {
                doc.remove(key);
                write_setting(file, &line_endings_of(&current, doc.to_string()))?;
            }
            ours
        }
    };
    let _ = crate::fs::remove_file(&record_file);
    Ok(taken)
}
