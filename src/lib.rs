//! handoff-store keeps the state of an AI coding session across a context reset: a handoff
//! document (decisions, dead ends, traps, next steps) whose citations point into the git tree.
//! `verify-handoff` gates such a document against its contract and checks every citation
//! against a checkout; `handoff-store` keeps one handoff per repository and branch. Both binaries
//! are thin shells over this library, which never spawns a process to learn a git fact.
#![forbid(unsafe_code)]
// The size the house keeps (clippy.toml: 80 lines a function), and no `pub` wider than its use:
// both fail CI (`-D warnings`), so the target cannot be lost again.
#![warn(clippy::too_many_lines, unreachable_pub)]

pub mod citation;
pub mod cli;
pub mod document;
pub(crate) mod durable;
pub(crate) mod env;
pub mod error;
pub(crate) mod finding;
pub(crate) mod fs;
pub(crate) mod gate;
pub(crate) mod git;
pub(crate) mod harness;
pub(crate) mod hooks;
pub(crate) mod input;
pub(crate) mod ops;
pub(crate) mod process;
pub mod report;
pub(crate) mod resolve;
pub mod secrets;
pub(crate) mod settings;
pub(crate) mod shell;
pub mod store;
pub(crate) mod sync;
pub mod text;
