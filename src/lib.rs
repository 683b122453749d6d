//! handoff-store keeps the state of an AI coding session across a context reset: a handoff
//! document (decisions, dead ends, traps, next steps) whose citations point into the git tree.
//! `verify-handoff` gates such a document against its contract and checks every citation
//! against a checkout; `handoff-store` keeps one handoff per repository and branch. Both binaries
//! are thin shells over this library, which never spawns a process to learn a git fact.
#![forbid(unsafe_code)]

pub mod citation;
pub mod cli;
pub mod document;
pub mod env;
pub mod error;
pub mod finding;
pub mod fs;
pub mod gate;
pub mod git;
pub mod harness;
pub mod hooks;
pub mod input;
pub mod lifecycle;
pub mod process;
pub mod report;
pub mod resolve;
pub mod secrets;
pub mod shell;
pub mod store;
pub mod sync;
pub mod text;
