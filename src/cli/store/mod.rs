//! `handoff-store`: clap definitions and dispatch, one file per command. Commands write
//! through the given writers and return an exit code or an `Error`; the dispatcher prints the
//! error once, as `handoff-store: <message>`.

mod history;
mod install;
mod list;
mod orient;
mod progress;
mod prune;
mod read;
mod sync;
mod write;

use std::ffi::OsString;
use std::io::{self, Write};

use clap::{CommandFactory, Parser, Subcommand, ValueEnum};

use crate::error::Error;
use crate::hooks;

pub use super::Format;

/// The lifecycle values `set-progress` accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ProgressArg {
    Writing,
    Complete,
    Consumed,
}

/// Keep one handoff per repository and branch, and carry it across a context reset.
#[derive(Debug, Parser)]
#[command(
    name = "handoff-store",
    version,
    about = "Keep one handoff per repository and branch, and carry it across a context reset."
)]
struct StoreArgs {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Print everything a caller needs about the target's slot (eight key=value lines).
    Orient {
        /// The checkout (default: $CONTEXT_ECONOMY_CHECKOUT, then the working directory).
        dir: Option<String>,
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
    },
    /// Print the target's slot path.
    Path {
        dir: Option<String>,
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
    },
    /// Store a handoff (from stdin or --from) in the target's slot, gated first.
    Write(write::Options),
    /// List every handoff in the store, newest first.
    List {
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
    },
    /// Show the target's handoff (or the most recent one, as a guess) with its verdict.
    Read {
        dir: Option<String>,
        /// Wait up to SECS for a handoff that is still being written.
        #[arg(long, value_name = "SECS", default_value_t = 0, value_parser = clap::value_parser!(u64).range(0..=3600))]
        wait: u64,
        /// Do not mark the handoff as consumed.
        #[arg(long)]
        no_consume: bool,
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
    },
    /// Rewrite the progress: line of FILE, keeping every other byte and the mtime.
    SetProgress {
        file: String,
        #[arg(value_enum)]
        value: ProgressArg,
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
    },
    /// List the target's slot (version 0) and its kept versions.
    History {
        dir: Option<String>,
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
    },
    /// Swap a kept version back into the slot (run again to undo).
    Restore {
        dir: Option<String>,
        #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
        version: u64,
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
    },
    /// Delete consumed, abandoned and orphaned handoffs and stale files (dry run by default).
    Prune {
        #[arg(long, value_name = "DAYS", default_value_t = 30)]
        older_than: u64,
        /// Really delete.
        #[arg(long)]
        apply: bool,
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
    },
    /// Send this branch's handoff chain (refs/handoffs/<branch>) to REMOTE; never forces.
    Push {
        #[command(flatten)]
        opts: sync::Options,
        /// Every branch's handoff, not only the checked-out one.
        #[arg(long)]
        all: bool,
        /// Also delete the remote's handoffs of branches that exist neither here nor there —
        /// except one written on another host in the last 14 days (its branch may not be
        /// pushed yet).
        #[arg(long)]
        prune: bool,
        /// With --prune: delete such a teammate's recent handoff too.
        #[arg(long, requires = "prune")]
        force: bool,
        #[arg(long, hide = true)]
        background: bool,
    },
    /// Fetch REMOTE's handoffs and merge them into the local chains and the store.
    Pull {
        #[command(flatten)]
        opts: sync::Options,
    },
    /// Pull, then push; with --setup, only make a plain `git fetch` bring handoffs too.
    Sync {
        #[command(flatten)]
        opts: sync::Options,
        /// Push every branch's handoff.
        #[arg(long, conflicts_with = "setup")]
        all: bool,
        /// Add the handoff fetch refspec to the remote's config (no network).
        #[arg(long)]
        setup: bool,
    },
    /// Install an integration: an agent's hooks (`claude`, `codex`, `gemini`, `copilot`,
    /// `cline`, `cursor`) into its configuration, naming this binary by its absolute path and
    /// leaving everything else in the file as it was; or `git-hook`, git's post-checkout hook in
    /// the repository at DIR (default: the working directory), chaining any hook already there.
    /// A symlinked configuration is edited through the link; a dangling link or anything but a
    /// regular file is refused. `--user` / `--project` pick the file (each agent has a default).
    Install {
        #[arg(value_enum)]
        what: install::What,
        dir: Option<String>,
        #[command(flatten)]
        scope: install::ScopeArgs,
    },
    /// Remove what `install` put in place, restoring a chained hook or the file as it was.
    Uninstall {
        #[arg(value_enum)]
        what: install::What,
        dir: Option<String>,
        #[command(flatten)]
        scope: install::ScopeArgs,
    },
    /// Have Codex trust the handoff-store hooks it lists here (from `install codex` or the
    /// plugin in contrib/codex), through `codex app-server` — what Codex's /hooks "Trust" does.
    Trust {
        #[arg(value_enum)]
        what: install::TrustWhat,
        dir: Option<String>,
    },
    /// Per agent harness and scope: is our hook installed, and would it run?
    Status {
        dir: Option<String>,
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
        /// Exit 1 when something installed would not run, with one line per problem saying
        /// what to do.
        #[arg(long)]
        check: bool,
    },
    /// Run a hook: Claude Code session-start, pre-compact, post-compact, user-prompt-submit,
    /// session-end; git post-checkout. Hooks always exit 0.
    Hook {
        #[command(subcommand)]
        event: HookEvent,
    },
    /// Print a shell completion script.
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
}

#[derive(Debug, Subcommand)]
enum HookEvent {
    /// SessionStart: re-inject the handoff after /clear or a compaction (Claude Code, or the
    /// harness named by --harness).
    SessionStart {
        #[arg(long, value_enum)]
        harness: Option<crate::harness::Harness>,
    },
    /// PreCompact: steer the summary and start the background writer (Claude Code, or Codex
    /// with --harness codex, whose writer is `codex exec`).
    PreCompact {
        #[arg(long, value_enum)]
        harness: Option<crate::harness::Harness>,
    },
    /// PostCompact: confirm the compaction, so the writer's handoff may be installed.
    PostCompact {
        #[arg(long, value_enum)]
        harness: Option<crate::harness::Harness>,
    },
    /// UserPromptSubmit: deliver the handoff once when SessionStart did not run (Claude Code, or
    /// Gemini CLI's BeforeAgent with --harness gemini).
    UserPromptSubmit {
        #[arg(long, value_enum)]
        harness: Option<crate::harness::Harness>,
    },
    /// Claude Code SessionEnd: on /clear, record a marker for the next session.
    SessionEnd,
    /// git post-checkout <prev> <new> <flag>: say whether the new branch has a handoff.
    PostCheckout {
        #[arg(num_args = 0.., allow_hyphen_values = true, trailing_var_arg = true)]
        args: Vec<String>,
    },
    #[command(name = "__supervise", hide = true)]
    Supervise { run_dir: std::path::PathBuf },
    /// The supervisor's way to start a writer that dies with it (internal).
    #[command(name = "__exec-writer", hide = true)]
    ExecWriter {
        parent: String,
        #[arg(num_args = 1.., allow_hyphen_values = true, trailing_var_arg = true)]
        argv: Vec<OsString>,
    },
}

/// Run `handoff-store` with `args`; returns the exit code.
pub fn run(
    args: impl IntoIterator<Item = OsString>,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> i32 {
    let parsed = match StoreArgs::try_parse_from(args) {
        Ok(a) => a,
        Err(e) => return super::clap_exit(e, out, err),
    };
    let result = match parsed.command {
        Command::Orient { dir, format } => orient::orient(dir.as_deref(), format, out),
        Command::Path { dir, format } => orient::path(dir.as_deref(), format, out),
        Command::Write(opts) => write::write(&opts, out, err),
        Command::List { format } => list::list(format, out, err),
        Command::Read {
            dir,
            wait,
            no_consume,
            format,
        } => read::read(dir.as_deref(), wait, no_consume, format, out, err),
        Command::SetProgress {
            file,
            value,
            format,
        } => progress::set_progress(&file, value, format, out),
        Command::History { dir, format } => history::history(dir.as_deref(), format, out),
        Command::Restore {
            dir,
            version,
            format,
        } => history::restore(dir.as_deref(), version as usize, format, out),
        Command::Prune {
            older_than,
            apply,
            format,
        } => prune::prune(older_than, apply, format, out),
        Command::Hook {
            event: HookEvent::SessionStart {
                harness: Some(h), ..
            },
        } if h != crate::harness::Harness::ClaudeCode => Ok(crate::harness::session_start(h, out)),
        Command::Hook {
            event: HookEvent::PreCompact {
                harness: Some(h), ..
            },
        } if h != crate::harness::Harness::ClaudeCode => Ok(crate::harness::pre_compact(h)),
        Command::Hook {
            event: HookEvent::PostCompact {
                harness: Some(h), ..
            },
        } if h != crate::harness::Harness::ClaudeCode => Ok(crate::harness::post_compact(h)),
        Command::Hook {
            event: HookEvent::UserPromptSubmit {
                harness: Some(h), ..
            },
        } if h != crate::harness::Harness::ClaudeCode => Ok(crate::harness::user_prompt(h, out)),
        Command::Hook {
            event: HookEvent::ExecWriter { parent, argv },
        } => Ok(hooks::supervisor::exec_writer(&parent, &argv)),
        Command::Hook { event } => {
            let event = match event {
                HookEvent::SessionStart { .. } => hooks::Event::SessionStart,
                HookEvent::PreCompact { .. } => hooks::Event::PreCompact,
                HookEvent::PostCompact { .. } => hooks::Event::PostCompact,
                HookEvent::UserPromptSubmit { .. } => hooks::Event::UserPromptSubmit,
                HookEvent::SessionEnd => hooks::Event::SessionEnd,
                HookEvent::PostCheckout { args } => hooks::Event::PostCheckout(args),
                HookEvent::Supervise { run_dir } => hooks::Event::Supervise(run_dir),
                HookEvent::ExecWriter { .. } => return 127,
            };
            Ok(hooks::run(event, out, err))
        }
        Command::Push {
            opts,
            all,
            prune,
            force,
            background,
        } => sync::run(
            &opts,
            sync::Action::Push {
                all,
                prune: match (prune, force) {
                    (false, _) => crate::sync::ops::Prune::No,
                    (true, false) => crate::sync::ops::Prune::Gone,
                    (true, true) => crate::sync::ops::Prune::Force,
                },
            },
            background,
            out,
            err,
        ),
        Command::Pull { opts } => sync::run(&opts, sync::Action::Pull, false, out, err),
        Command::Sync { opts, all, setup } => {
            let action = if setup {
                sync::Action::Setup
            } else {
                sync::Action::Sync { all }
            };
            sync::run(&opts, action, false, out, err)
        }
        Command::Install { what, dir, scope } => install::install(what, dir.as_deref(), scope, out),
        Command::Uninstall { what, dir, scope } => {
            install::uninstall(what, dir.as_deref(), scope, out)
        }
        Command::Status { dir, format, check } => {
            install::status(dir.as_deref(), format, check, out)
        }
        Command::Trust { what, dir } => install::trust(what, dir.as_deref(), out),
        Command::Completions { shell } => {
            clap_complete::generate(shell, &mut StoreArgs::command(), "handoff-store", out);
            Ok(0)
        }
    };
    match result {
        Ok(code) => code,
        Err(Error::Output(e)) if super::is_broken_pipe(&e) => 0,
        Err(e) => {
            let _ = writeln!(err, "handoff-store: {e}");
            e.exit_code()
        }
    }
}

/// Print one JSON object and a newline.
fn print_json(out: &mut dyn Write, value: &impl serde::Serialize) -> Result<(), Error> {
    serde_json::to_writer(&mut *out, value).map_err(|e| Error::Output(io::Error::from(e)))?;
    writeln!(out).map_err(Error::Output)
}

/// Write text, mapping failures to `Error::Output`.
fn print(out: &mut dyn Write, text: &str) -> Result<(), Error> {
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(Error::Output)
}
