//! `set-progress [FILE] VALUE` (docs/store.md §9.6): one envelope line of a stored handoff
//! rewritten, every other byte and the mtime kept, under the slot's lock and recorded on its
//! chain. Without FILE, this checkout's slot; a FILE outside the store is refused (a draft's
//! `progress:` line is its author's to edit).

use super::{Format, Reply};
use crate::error::{Error, Exit, Usage};
use crate::ops::progress::ProgressSet;
use crate::ops::progress::{Progress, set_progress};

/// Rewrite the progress: line of a stored handoff, keeping every other byte and the mtime.
#[derive(Debug, clap::Args)]
#[command(override_usage = "handoff-store set-progress [OPTIONS] [FILE] <VALUE>")]
pub(crate) struct Args {
    /// [FILE] VALUE (the usage line says it; clap cannot spell an optional positional before
    /// a required one).
    #[arg(num_args = 0.., value_names = ["FILE", "VALUE"], hide = true)]
    words: Vec<String>,
    #[command(flatten)]
    dir: super::checkout::Checkout,
    #[command(flatten)]
    slot: super::checkout::SlotArg,
}

pub(crate) fn run(args: &Args, format: Format) -> Result<Reply, Error> {
    let (file, value) = match args.words.as_slice() {
        [value] => (None, value),
        [file, value] => (Some(file.clone()), value),
        _ => return Err(Error::Usage(Usage::ProgressWords)),
    };
    let value =
        Progress::parse(value).ok_or_else(|| Error::Usage(Usage::ProgressValue(value.clone())))?;
    let file = match file {
        Some(file) => file,
        None => {
            let (target, store) = args.slot.target_and_store(args.dir.dir())?;
            store.path_of(&target.name).to_string_lossy().into_owned()
        }
    };
    let set = set_progress(&file, value)?;
    let exit = if set.no_field {
        Exit::Negative
    } else {
        Exit::Ok
    };
    Ok(Reply::show(format, &set, progress_set_text)?.exit(exit))
}

fn progress_set_text(p: &ProgressSet) -> String {
    if p.no_field {
        return format!(
            "unchanged {} (no progress: or status: line in the first 20 lines)\n",
            p.path
        );
    }
    format!(
        "progress {}: {} -> {}\n",
        p.path,
        p.old.as_deref().unwrap_or("(absent)"),
        p.new
    )
}
