//! `new`: a handoff to fill in, for this checkout — every section the gate asks for, and one
//! citation taken from the tree, so it passes the gate as it stands and shows the format by
//! example. Nothing is stored.

use serde::Serialize;

use super::{Format, Reply};
use crate::error::Error;
use crate::store::Target;

/// Print a handoff to fill in for this checkout (every required section, one real citation).
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(flatten)]
    dir: super::checkout::CheckoutOrDir,
}

/// The skeleton and what it was made for.
#[derive(Debug, Serialize)]
pub(crate) struct Skeleton {
    pub(crate) checkout: String,
    pub(crate) branch: String,
    /// The citation taken from the tree (`path:line | text`), if a tracked file had one.
    pub(crate) citation: Option<String>,
    pub(crate) document: String,
}

pub(crate) fn run(args: &Args, format: Format) -> Result<Reply, Error> {
    let target = Target::required(args.dir.dir())?;
    let citation = crate::git::example_citation(&target.facts.checkout)
        .map(|(path, line, text)| (format!("{path}:{line}"), text));
    let document = skeleton(citation.as_ref());
    let skeleton = Skeleton {
        checkout: target.checkout(),
        branch: target.facts.reference.clone(),
        citation: citation.map(|(at, text)| format!("{at} | {text}")),
        document,
    };
    Reply::show(format, &skeleton, skeleton_text)
}

/// The document: the title, `status:`, the sections in their order, and Pointers holding the
/// one citation the Decisions cite. `write` adds `branch:`, `checkout:`, `progress:`, `head:`.
fn skeleton(citation: Option<&(String, String)>) -> String {
    let (cite, pointer) = match citation {
        Some((at, text)) => (format!(" `{at}`"), format!("{at} | {text}\n")),
        None => (String::new(), String::new()),
    };
    format!(
        "# Handoff — the task, in a few words
status: where the task stands, in one line

## Do not re-derive

### Decisions
- What was decided, and what it beat (the alternative, and why it lost).{cite}

### Dead ends
- None.

### Traps
- None.

## Next
1. The next step, concrete enough to start on.

## Pointers
```text
{pointer}```
"
    )
}

fn skeleton_text(s: &Skeleton) -> String {
    s.document.clone()
}
