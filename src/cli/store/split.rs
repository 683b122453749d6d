//! `split NAME=FILE…` (docs/store.md §9.18): a braided session's threads written as one
//! self-contained handoff each, into named slots — all gated first, and none written when one
//! is malformed (or refused: unreadable, a credential, a bad slot name).

use serde::Serialize;

use super::write::{Args as WriteArgs, read_draft, write};
use super::{Format, Reply};
use crate::error::{Error, Exit, Usage};
use crate::report::Stream;

/// Write N handoffs into N named slots of this branch, gating all of them first: none is
/// written when one is malformed.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(flatten)]
    dir: super::checkout::Checkout,
    /// One thread's handoff: the slot to write, `=`, the file to read it from.
    #[arg(value_name = "NAME=FILE", required = true, num_args = 1..)]
    parts: Vec<String>,
}

/// One part of a split, and how it ended.
#[derive(Debug, Serialize)]
pub(crate) struct Part {
    pub(crate) slot: String,
    pub(crate) file: String,
    pub(crate) path: Option<String>,
    /// The gate's exit on it (0, 1, 2), or the refusal's.
    pub(crate) exit: i32,
    pub(crate) stored: bool,
    /// Why it was refused, when it was.
    pub(crate) refused: Option<String>,
}

/// What `split` did.
#[derive(Debug, Serialize)]
pub(crate) struct Split {
    pub(crate) stored: bool,
    pub(crate) parts: Vec<Part>,
}

pub(crate) fn run(args: &Args, format: Format) -> Result<Reply, Error> {
    let mut named: Vec<(String, String)> = Vec::new();
    for part in &args.parts {
        let (slot, file) = part
            .split_once('=')
            .filter(|(s, f)| !s.is_empty() && !f.is_empty())
            .ok_or_else(|| Error::Usage(Usage::SplitPart(part.clone())))?;
        if named.iter().any(|(s, _)| s == slot) {
            return Err(Error::Usage(Usage::SplitPart(part.clone())));
        }
        named.push((slot.to_string(), file.to_string()));
    }
    // Each part read once: what is gated is what is stored, whatever happens to its file.
    let drafts: Vec<Result<String, Error>> = named
        .iter()
        .map(|(_, file)| read_draft(Some(file)))
        .collect();
    // Every part gated first, as `write --dry-run` gates it.
    let checked = attempt(args, &named, &drafts, true, format);
    let malformed = checked.iter().any(|p| p.refused.is_some() || p.exit == 2);
    let (parts, stored) = if malformed {
        (checked, false)
    } else {
        (attempt(args, &named, &drafts, false, format), true)
    };
    let split = Split { stored, parts };
    let worst = split.parts.iter().map(|p| p.exit).max().unwrap_or(0);
    let reply = Reply::show(format, &split, super::render::parts)?.exit(Exit::of_gate(worst));
    Ok(if stored {
        reply
    } else {
        reply
            .exit(Exit::Malformed)
            .lines([(Stream::Err, "handoff-store: split wrote no slot: a part was refused (above); fix it and run the split again".to_string())])
    })
}

/// Write (or with `dry_run` only gate) each part; how each ended.
fn attempt(
    args: &Args,
    named: &[(String, String)],
    drafts: &[Result<String, Error>],
    dry_run: bool,
    format: Format,
) -> Vec<Part> {
    named
        .iter()
        .zip(drafts)
        .map(|((slot, file), draft)| {
            let mut part = Part {
                slot: slot.clone(),
                file: file.clone(),
                path: None,
                exit: 2,
                stored: false,
                refused: None,
            };
            let draft = match draft {
                Ok(draft) => draft.clone(),
                Err(e) => {
                    part.refused = Some(e.report());
                    return part;
                }
            };
            let opts = WriteArgs::of_draft(args.dir.dir(), slot, file, draft, dry_run);
            match write(&opts, format) {
                Err(e) => part.refused = Some(e.report()),
                Ok(w) => {
                    if let Some(written) = &w.written {
                        part.path = Some(written.path.clone());
                        part.exit = written.exit;
                        part.stored = written.stored;
                    }
                    if let Some(e) = &w.refused {
                        part.refused = Some(e.report());
                    }
                }
            }
            part
        })
        .collect()
}
