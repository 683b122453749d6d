//! The plan for a client and scope: where its hooks live and the shape ours takes there (each
//! client's own file says which), with the pieces those files share.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::super::Harness;
use crate::error::{Error, Usage};

/// User-wide or this repository's configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scope {
    User,
    Project,
}

/// How our hook is written into a harness's configuration.
#[derive(Debug, Clone)]
pub(crate) enum Shape {
    /// One group appended to the array at each path of a JSON file; `new_file` is the text of
    /// a file that does not exist yet.
    Json {
        groups: Vec<(&'static [&'static str], Value)>,
        new_file: &'static str,
    },
    /// A whole file of ours: a script a client runs by the event's name (`executable`), or a
    /// plugin file a client loads from a folder.
    File { text: String, executable: bool },
}

/// Where and how our hook goes for one harness and scope.
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    pub(crate) harness: Harness,
    pub(crate) scope: Scope,
    pub(crate) file: PathBuf,
    pub(crate) shape: Shape,
    /// The `/handoff` skill's file (Claude Code), installed and removed with the hooks.
    pub(crate) skill: Option<PathBuf>,
    /// Scripts of ours beside the file, with their text (see `install::scripts`).
    pub(crate) scripts: Vec<(PathBuf, String)>,
}

/// The user's home, for a user-scope file.
pub(crate) fn home() -> Result<PathBuf, Error> {
    crate::env::home().ok_or(Error::NoHome)
}

/// `rel` in the repository at `root`, for a project-scope file of `h`.
pub(crate) fn project(h: Harness, root: Option<&Path>, rel: &str) -> Result<PathBuf, Error> {
    root.map(|r| r.join(rel))
        .ok_or_else(|| Error::Usage(Usage::NeedsCheckout { harness: h.name() }))
}

/// One JSON hook group running our hook for `event`, with its time limit (in the client's
/// unit).
pub(crate) fn group(h: Harness, event: &str, timeout: u64) -> Value {
    json!({"hooks": [{"type": "command", "command": h.client().hook_command(event), "timeout": timeout}]})
}

/// [`group`] for a tool event: run only for the tools `matcher` names (a regular expression
/// over tool names, as the clients that take a matcher read it).
pub(crate) fn tool_group(h: Harness, event: &str, timeout: u64, matcher: &str) -> Value {
    let mut g = group(h, event, timeout);
    g["matcher"] = json!(matcher);
    g
}

/// The plan for `h` in `scope`; `root` is the repository's top level for project scope.
pub(crate) fn plan(h: Harness, scope: Scope, root: Option<&Path>) -> Result<Plan, Error> {
    let located = h.client().locate(scope, root)?;
    Ok(Plan {
        harness: h,
        scope,
        file: located.file,
        shape: located.shape,
        skill: located.skill,
        scripts: located.scripts,
    })
}
