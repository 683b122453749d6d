//! `history` and `restore` (docs/store.md §9.7–§9.8): the slot is version 0, kept versions are
//! 1..n newest first; `restore` swaps one back in with its own mtime, so running it twice
//! undoes it.

use std::io::Write;

use serde::Serialize;

use super::{Format, Ui, print, print_json};
use crate::error::{Error, Exit};
use crate::store::{HandoffInfo, Store, Target, epoch, iso, slot};

pub(super) fn target_and_store(dir: Option<&str>) -> Result<(Target, Store), Error> {
    let target = Target::resolve(dir).map_err(|f| Error::Target(f.why))?;
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

/// List the target's slot (version 0) and its kept versions.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The checkout (default: $CONTEXT_ECONOMY_CHECKOUT, then the working directory).
    dir: Option<String>,
}

pub fn run(args: &Args, ui: &mut Ui) -> Result<Exit, Error> {
    history(args.dir.as_deref(), ui.format, ui.out)
}

fn history(dir: Option<&str>, format: Format, out: &mut dyn Write) -> Result<Exit, Error> {
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
    Ok(Exit::Ok)
}
