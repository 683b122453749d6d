//! `split NAME=FILE…`: the parts named and read, handed to `ops::split`, a line per part.

use super::{Format, Reply};
use crate::error::{Error, Exit, Usage};
use crate::ops::split::{Split, Thread};
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

pub(crate) fn run(args: &Args, format: Format) -> Result<Reply, Error> {
    let mut threads: Vec<Thread> = Vec::new();
    for part in &args.parts {
        let (slot, file) = part
            .split_once('=')
            .filter(|(s, f)| !s.is_empty() && !f.is_empty())
            .ok_or_else(|| Error::Usage(Usage::SplitPart(part.clone())))?;
        if threads.iter().any(|t| t.slot == slot) {
            return Err(Error::Usage(Usage::SplitPart(part.clone())));
        }
        threads.push(Thread {
            slot: slot.to_string(),
            file: file.to_string(),
            draft: Ok(String::new()),
        });
    }
    for t in &mut threads {
        t.draft = super::write::draft(Some(&t.file));
    }
    let split = crate::ops::split::split(args.dir.dir(), &threads);
    let reply = Reply::show(format, &split, parts)?.exit(Exit::of_gate(split.worst()));
    Ok(if split.stored {
        reply
    } else {
        reply
            .exit(Exit::Malformed)
            .lines([(Stream::Err, "handoff-store: split wrote no slot: a part was refused (above); fix it and run the split again".to_string())])
    })
}

/// A line per part.
fn parts(s: &Split) -> String {
    let mut text = String::new();
    for p in &s.parts {
        let gate = match p.exit {
            0 => "gate: OK",
            1 => "gate: FAILED — fix the citations and write again",
            _ => "gate: MALFORMED",
        };
        let line = match (&p.refused, s.stored) {
            (Some(why), _) => format!("refused  {} ← {}: {why}\n", p.slot, p.file),
            (None, true) => format!(
                "stored   {} ← {} ({gate})\n",
                p.path.as_deref().unwrap_or(&p.slot),
                p.file
            ),
            (None, false) => format!("checked  {} ← {} ({gate}; not written)\n", p.slot, p.file),
        };
        text.push_str(&line);
    }
    text
}
