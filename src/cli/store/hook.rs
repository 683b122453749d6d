//! `hook <event> [--harness H]`: every hook goes through `harness::hook`, Claude Code being
//! the default harness. Hooks always exit 0.

use std::ffi::OsString;
use std::path::PathBuf;

use super::Reply;
use crate::error::{Error, Exit};
use crate::harness::{self, Harness};
use crate::hooks::Event;
use crate::hooks::HookReply;
use crate::report::Stream;

/// Run a hook: Claude Code session-start, pre-compact, post-compact, user-prompt-submit,
/// session-end, pre-tool-use; git post-checkout. Hooks always exit 0.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(subcommand)]
    event: HookEvent,
}

#[derive(Debug, clap::Subcommand)]
enum HookEvent {
    /// SessionStart: re-inject the handoff after /clear or a compaction (Claude Code, or the
    /// harness named by --harness).
    SessionStart {
        #[arg(long, value_enum)]
        harness: Option<Harness>,
    },
    /// PreCompact: steer the summary and start the background writer (Claude Code, or the
    /// harness named by --harness, through its own headless mode).
    PreCompact {
        #[arg(long, value_enum)]
        harness: Option<Harness>,
    },
    /// PostCompact: confirm the compaction, so the writer's handoff may be installed.
    PostCompact {
        #[arg(long, value_enum)]
        harness: Option<Harness>,
    },
    /// UserPromptSubmit: deliver the handoff once when SessionStart did not run (Claude Code, or
    /// the harness named by --harness, where it has such an event).
    UserPromptSubmit {
        #[arg(long, value_enum)]
        harness: Option<Harness>,
    },
    /// Claude Code SessionEnd: on /clear, record a marker for the next session.
    SessionEnd,
    /// PreToolUse: say a dead end or trap of the handoff that this shell command or edit
    /// repeats (Claude Code, or the harness named by --harness).
    PreToolUse {
        #[arg(long, value_enum)]
        harness: Option<Harness>,
    },
    /// PostToolUse (or the client's event after a tool call): the same, said right after the
    /// call, for a client that lets only a later hook speak to the model.
    PostToolUse {
        #[arg(long, value_enum)]
        harness: Option<Harness>,
    },
    /// git post-checkout <prev> <new> <flag>: say whether the new branch has a handoff.
    PostCheckout {
        #[arg(num_args = 0.., allow_hyphen_values = true, trailing_var_arg = true)]
        args: Vec<String>,
    },
    #[command(name = "__supervise", hide = true)]
    Supervise { run_dir: PathBuf },
    /// The supervisor's way to start a writer that dies with it (internal).
    #[command(name = "__exec-writer", hide = true)]
    ExecWriter {
        parent: String,
        #[arg(num_args = 1.., allow_hyphen_values = true, trailing_var_arg = true)]
        argv: Vec<OsString>,
    },
}

pub(crate) fn run(args: Args) -> Result<Reply, Error> {
    let or_default = |h: Option<Harness>| h.unwrap_or(Harness::DEFAULT);
    let (event, h) = match args.event {
        HookEvent::SessionStart { harness } => (Event::SessionStart, or_default(harness)),
        HookEvent::PreCompact { harness } => (Event::PreCompact, or_default(harness)),
        HookEvent::PostCompact { harness } => (Event::PostCompact, or_default(harness)),
        HookEvent::UserPromptSubmit { harness } => (Event::UserPromptSubmit, or_default(harness)),
        HookEvent::SessionEnd => (Event::SessionEnd, Harness::DEFAULT),
        HookEvent::PreToolUse { harness } => (Event::PreToolUse, or_default(harness)),
        HookEvent::PostToolUse { harness } => (Event::PostToolUse, or_default(harness)),
        HookEvent::PostCheckout { args } => (Event::PostCheckout(args), Harness::DEFAULT),
        HookEvent::Supervise { run_dir } => (Event::Supervise(run_dir), Harness::DEFAULT),
        HookEvent::ExecWriter { parent, argv } => {
            return Ok(Reply::new(crate::hooks::supervisor::exec_writer(
                &parent, &argv,
            )));
        }
    };
    Ok(reply(harness::hook(h, event)))
}

/// A hook's reply: its client's line, a line for the person, and what follows once the
/// client's line got out; always exit 0, whatever the writes did.
fn reply(hook: HookReply) -> Reply {
    let mut reply = Reply::new(Exit::Ok).quiet();
    if let Some(line) = hook.out {
        reply = reply.lines([(Stream::Out, line)]);
    }
    if let Some(line) = hook.err {
        reply = reply.note(line);
    }
    if let Some(then) = hook.then {
        reply = reply.then(Box::new(move || {
            then();
            None
        }));
    }
    reply
}
