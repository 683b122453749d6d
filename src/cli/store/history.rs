//! `history` and `restore` (docs/store.md §9.7–§9.8): the slot is version 0, kept versions are
//! 1..n newest first; `restore` swaps one back in with its own mtime, so running it twice
//! undoes it.

use std::io::Write;

use serde::Serialize;

use super::{Format, print, print_json};
use crate::error::Error;
use crate::store::change::{SlotChange, Wait};
use crate::store::{HandoffInfo, Store, Target, epoch, iso, slot};

fn target_and_store(dir: Option<&str>) -> Result<(Target, Store), Error> {
    let target = Target::resolve(dir).map_err(|f| Error::Target(f.message))?;
    Ok((target, Store::open()?))
}

#[derive(Serialize)]
struct VersionJson {
    version: usize,
    path: String,
    mtime: Option<i64>,
    progress: Option<String>,
    size: u64,
}

#[derive(Serialize)]
struct HistoryJson {
    slot: String,
    current: Option<HandoffInfo>,
    versions: Vec<VersionJson>,
}

pub fn history(dir: Option<&str>, format: Format, out: &mut dyn Write) -> Result<i32, Error> {
    let (target, store) = target_and_store(dir)?;
    let slot_path = store.path_of(&target.name);
    let current = crate::fs::symlink_metadata(&slot_path)
        .ok()
        .filter(|m| m.file_type().is_file())
        .map(|m| {
            let head = slot::read_head(&slot_path).unwrap_or_default();
            HandoffInfo::from_parts(&store, &target.name, &head, &m)
        });
    let versions: Vec<VersionJson> = slot::versions(&store, &target.name)
        .into_iter()
        .enumerate()
        .map(|(i, v)| VersionJson {
            version: i + 1,
            progress: slot::read_head(&v.path)
                .ok()
                .and_then(|b| slot::progress_of(&b)),
            path: v.path.to_string_lossy().into_owned(),
            mtime: v.mtime.map(epoch),
            size: v.size,
        })
        .collect();
    match format {
        Format::Json => print_json(
            out,
            &HistoryJson {
                slot: slot_path.to_string_lossy().into_owned(),
                current,
                versions,
            },
        )?,
        Format::Text => {
            let mut text = String::new();
            let mut line =
                |n: usize, mtime: Option<i64>, progress: Option<&str>, size: u64, path: &str| {
                    text.push_str(&format!(
                        "{n}\t{}\t{}\t{size} bytes\t{path}\n",
                        mtime.map(iso).unwrap_or_default(),
                        progress.unwrap_or("complete")
                    ));
                };
            if let Some(c) = &current {
                line(0, c.mtime, c.progress.as_deref(), c.size, &c.path);
            }
            for v in &versions {
                line(v.version, v.mtime, v.progress.as_deref(), v.size, &v.path);
            }
            print(out, &text)?;
        }
    }
    Ok(0)
}

#[derive(Serialize)]
struct RestoreJson {
    slot: String,
    version: usize,
    history: Option<String>,
    auto_push: bool,
}

pub fn restore(
    dir: Option<&str>,
    version: usize,
    format: Format,
    out: &mut dyn Write,
) -> Result<i32, Error> {
    let (target, store) = target_and_store(dir)?;
    let slot_path = store.path_of(&target.name);
    let shown = slot_path.to_string_lossy().into_owned();
    store.create()?;
    let change = SlotChange::begin(&store, &target, Wait::Cli)?;
    let versions = slot::versions(&store, &target.name);
    let Some(chosen) = version.checked_sub(1).and_then(|i| versions.get(i)) else {
        return Err(Error::NoVersion {
            slot: shown,
            version,
            kept: versions.len(),
        });
    };
    let mtime = chosen.mtime.ok_or_else(|| {
        Error::io(
            &chosen.path,
            std::io::Error::other("modification time unreadable"),
        )
    })?;
    if let Ok(meta) = crate::fs::symlink_metadata(&slot_path)
        && !meta.file_type().is_file()
    {
        return Err(Error::NotRegular(shown));
    }
    let kept = change.restore(chosen, mtime)?;
    let history = kept.map(|p| p.to_string_lossy().into_owned());
    // The restored version joins the branch's chain as the change ends, and travels like a
    // written one.
    drop(change);
    let auto_push = crate::sync::auto_push(&target);
    match format {
        Format::Json => print_json(
            out,
            &RestoreJson {
                slot: shown,
                version,
                history,
                auto_push,
            },
        )?,
        Format::Text => {
            let mut text = format!(
                "restored {shown} from version {version} ({})\n",
                iso(epoch(mtime))
            );
            if let Some(h) = &history {
                text.push_str(&format!("history  {h}\n"));
            }
            if auto_push {
                text.push_str("pushing  in the background (handoff.autoPush)\n");
            }
            print(out, &text)?;
        }
    }
    Ok(0)
}
