//! `handoff-store`: clap definitions and dispatch, one file per command. Commands write
//! through the given writers and return an [`Exit`] or an `Error`; the dispatcher prints the
//! error once, as `handoff-store: <message>`.

mod brief;
mod checkout;
mod completions;
mod config;
mod fix;
mod history;
mod hook;
mod impact;
mod impact_svg;
mod install;
mod list;
mod log;
#[cfg(feature = "mcp")]
mod mcp;
mod new;
mod orient;
mod path;
mod progress;
mod prune;
mod pull;
mod push;
mod read;
mod restore;
mod split;
mod status;
mod sync;
mod trust;
mod uninstall;
mod write;

use std::ffi::OsString;
use std::io::Write;

use clap::{Parser, Subcommand};

use crate::error::{Error, Exit};

pub(crate) use super::Format;
use super::paint::{ColorChoice, Paint, choice_in};
use super::reply::Reply;
use crate::report::Stream;

/// Keep one handoff per repository and branch, and carry it across a context reset.
#[derive(Debug, Parser)]
#[command(
    name = "handoff-store",
    version,
    about = "Keep one handoff per repository and branch, and carry it across a context reset."
)]
struct StoreArgs {
    /// Output form, for every command that prints a result.
    #[arg(long, global = true, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// The same as --format json.
    #[arg(long, global = true)]
    json: bool,
    /// Colour the verdicts: auto (on a terminal, unless NO_COLOR is set), always, never.
    #[arg(long, global = true, value_enum, value_name = "WHEN", default_value_t = ColorChoice::Auto)]
    color: ColorChoice,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Print everything a caller needs about the target's slot (eight key=value lines).
    #[command(
        after_help = "Examples:\n  handoff-store orient                 # the slot of the checkout you are in\n  handoff-store orient -C ~/src/shop --json"
    )]
    Orient(orient::Args),
    /// Print the target's slot path.
    #[command(after_help = "Examples:\n  handoff-store path\n  $EDITOR \"$(handoff-store path)\"")]
    Path(path::Args),
    /// Store a handoff (FILE, --from FILE or stdin) in the target's slot, gated first.
    #[command(
        after_help = "Examples:\n  handoff-store new > handoff.md               # a handoff to fill in\n  handoff-store write --dry-run --from handoff.md   # gate it, store nothing\n  handoff-store write --from handoff.md\n  handoff-store write < handoff.md           # the same, from stdin"
    )]
    Write(write::Args),
    /// List every handoff in the store, newest first.
    #[command(after_help = "Examples:\n  handoff-store list\n  handoff-store list --json")]
    List(list::Args),
    /// Show the target's handoff (or the most recent one, as a guess) with its verdict.
    #[command(
        after_help = "Examples:\n  handoff-store read                   # show it, with its verdict, and mark it read\n  handoff-store read --no-consume      # only look\n  handoff-store read --wait 60         # a write at work: wait up to 60 s for it\n  handoff-store read --reground        # mid-session: decisions, traps, next (2,000 characters)"
    )]
    Read(read::Args),
    /// Rewrite the progress: line of FILE, keeping every other byte and the mtime.
    ///
    /// FILE is a handoff in the store (default: this checkout's slot); VALUE is writing,
    /// complete or consumed.
    #[command(
        override_usage = "handoff-store set-progress [OPTIONS] [FILE] <VALUE>",
        after_help = "Examples:\n  handoff-store set-progress \"$(handoff-store path)\" complete"
    )]
    SetProgress(progress::Args),
    /// List the target's slot (version 0) and its kept versions.
    #[command(
        after_help = "Examples:\n  handoff-store history\n  handoff-store restore -n 1           # bring version 1 back"
    )]
    History(history::Args),
    /// Swap a kept version back into the slot (run again to undo).
    #[command(
        after_help = "Examples:\n  handoff-store history                # the versions kept\n  handoff-store restore -n 2\n  handoff-store restore -n 1           # again: undoes the swap"
    )]
    Restore(restore::Args),
    /// Delete consumed, abandoned and orphaned handoffs and stale files (dry run by default).
    #[command(
        after_help = "Examples:\n  handoff-store prune                  # what would go (nothing is deleted)\n  handoff-store prune --apply"
    )]
    Prune(prune::Args),
    /// Send this branch's handoff chain (refs/handoffs/<branch>) to REMOTE; never forces.
    #[command(
        after_help = "Examples:\n  handoff-store push                   # this branch's handoff to its upstream remote\n  handoff-store push origin --all\n  handoff-store push --prune"
    )]
    Push(push::Args),
    /// Fetch REMOTE's handoffs and merge them into the local chains and the store.
    #[command(after_help = "Examples:\n  handoff-store pull\n  handoff-store pull origin")]
    Pull(pull::Args),
    /// Pull, then push; with --setup, only make a plain `git fetch` bring handoffs too.
    #[command(
        after_help = "Examples:\n  handoff-store sync\n  handoff-store sync --setup           # a plain `git fetch` brings handoffs too"
    )]
    Sync(sync::Args),
    /// Install an integration: an agent's hooks (the values below) into its configuration, naming this binary by its absolute path and
    /// leaving everything else in the file as it was; or `git-hook`, git's post-checkout hook in
    /// the repository at DIR (default: the working directory), chaining any hook already there.
    /// A symlinked configuration is edited through the link; a dangling link or anything but a
    /// regular file is refused. `--user` / `--project` pick the file (each agent has a default).
    #[command(
        after_help = "Examples:\n  handoff-store install claude\n  handoff-store install codex\n  handoff-store install claude --project\n  handoff-store install git-hook"
    )]
    Install(install::Args),
    /// Remove what `install` put in place, restoring a chained hook or the file as it was.
    #[command(
        after_help = "Examples:\n  handoff-store uninstall claude\n  handoff-store uninstall git-hook"
    )]
    Uninstall(install::Args),
    /// Have Codex trust the handoff-store hooks it lists here (from `install codex` or the
    /// plugin in contrib/codex), through `codex app-server` — what Codex's /hooks "Trust" does.
    #[command(after_help = "Examples:\n  handoff-store trust codex")]
    Trust(trust::Args),
    /// Per agent harness and scope: is our hook installed, and would it run?
    #[command(
        after_help = "Examples:\n  handoff-store status\n  handoff-store status --check         # OK, or a line per problem and exit 1"
    )]
    Status(status::Args),
    /// Run a hook: Claude Code session-start, pre-compact, post-compact, user-prompt-submit,
    /// session-end; git post-checkout. Hooks always exit 0.
    #[command(
        after_help = "Examples (what the agents run; you rarely do):\n  echo '{\"session_id\":\"s\",\"cwd\":\".\",\"source\":\"clear\"}' | handoff-store hook session-start"
    )]
    Hook(hook::Args),
    /// Print a shell completion script, for handoff-store or verify-handoff.
    #[command(
        after_help = "Examples:\n  d=~/.local/share/bash-completion/completions; mkdir -p \"$d\"\n  handoff-store completions bash > \"$d/handoff-store\"\n  handoff-store completions bash verify-handoff > \"$d/verify-handoff\"\n  mkdir -p ~/.zfunc && handoff-store completions zsh > ~/.zfunc/_handoff-store"
    )]
    Completions(completions::Args),
    /// Print a man page (roff): handoff-store's, verify-handoff's, or a command's.
    #[command(
        after_help = "Examples:\n  handoff-store man | man -l -\n  handoff-store man verify-handoff | man -l -\n  mkdir -p ~/.local/share/man/man1\n  handoff-store man read > ~/.local/share/man/man1/handoff-store-read.1"
    )]
    Man(completions::ManArgs),
    /// Rewrite the line numbers of the stored handoff's citations whose text moved to one other
    /// line (the old version kept in history).
    #[command(
        after_help = "Examples:\n  handoff-store fix --dry-run          # what would move\n  handoff-store fix\n  handoff-store restore                # undo it"
    )]
    Fix(fix::Args),
    /// The lineage of this branch's handoff: its versions newest first, each with what it
    /// added and removed in Decisions, Dead ends and Traps.
    #[command(after_help = "Examples:\n  handoff-store log\n  handoff-store log -n 3 --json")]
    Log(log::Args),
    /// What the handoffs changed: for each /clear and compaction logged, the session's own
    /// transcript read from there on — tool calls, tokens and minutes to the first edit, reads
    /// of cited files, repeated dead ends — per client and arm (`handoff.holdout` for a fair
    /// comparison).
    #[command(
        after_help = "Examples:\n  handoff-store impact\n  handoff-store impact --all --since 30 --json\n  handoff-store impact --svg impact.svg   # a picture per arm\n  git config handoff.holdout 5        # one reset in 5 held out: a fair comparison"
    )]
    Impact(impact::Args),
    /// Print a brief for a subagent: its task, the decisions and traps that touch its paths,
    /// and their pointers with verdicts (at most 1,500 characters; nothing stored or consumed).
    #[command(
        after_help = "Examples:\n  handoff-store brief --task \"type Reminder\" --paths 'app/Mail/**'\n  handoff-store brief --paths src/store --json"
    )]
    Brief(brief::Args),
    /// Write one handoff per thread into named slots of this branch, all gated first: none is
    /// written when one is malformed.
    #[command(
        after_help = "Examples:\n  handoff-store split api=api.md ui=ui.md\n  handoff-store read --slot ui"
    )]
    Split(split::Args),
    /// List the settings (git config handoff.*) in effect here and where each came from.
    #[command(
        after_help = "Examples:\n  handoff-store config\n  git config --global handoff.writer off   # no background writer anywhere\n  handoff-store config --json"
    )]
    Config(config::Args),
    /// Serve the handoff tools over MCP on stdin and stdout (a build with the `mcp` feature).
    #[command(
        after_help = "Examples:\n  claude mcp add handoff -- handoff-store mcp   # Claude Code starts it when it needs it"
    )]
    Mcp(McpArgs),
    /// Print a handoff to fill in for this checkout: every section, one citation from the tree.
    #[command(
        after_help = "Examples:\n  handoff-store new > handoff.md\n  handoff-store new -C ~/src/shop"
    )]
    New(new::Args),
}

/// Run `handoff-store` with `args`; how it ended.
pub fn run(
    args: impl IntoIterator<Item = OsString>,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Exit {
    let args: Vec<OsString> = args.into_iter().collect();
    let paint = Paint::of(choice_in(&args));
    reply(args, paint).deliver(out, err, "handoff-store")
}

/// What the command line asks for, computed and rendered.
fn reply(args: Vec<OsString>, paint: Paint) -> Reply {
    // Started by git as the lease check of a `push --prune` (see `sync::lease`).
    if let Some(folder) = args
        .first()
        .and_then(|argv0| crate::sync::lease::hook_folder(argv0))
    {
        let (exit, said) = crate::sync::lease::run_hook(&folder, &mut std::io::stdin().lock());
        return Reply::new(exit).lines(said.into_iter().map(|l| (Stream::Err, l)));
    }
    let args_seen = args.clone();
    let parsed = match command()
        .try_get_matches_from(args)
        .and_then(|m| <StoreArgs as clap::FromArgMatches>::from_arg_matches(&m))
    {
        Ok(a) => a,
        Err(e) => return Reply::clap(&e, paint, super::paint::json_in(&args_seen)),
    };
    let format = if parsed.json {
        Format::Json
    } else {
        parsed.format
    };
    // A command that prints no result has nothing to format.
    if format == Format::Json
        && matches!(
            parsed.command,
            Command::Install(_)
                | Command::Uninstall(_)
                | Command::Trust(_)
                | Command::Completions(_)
                | Command::Man(_)
                | Command::Mcp(_)
        )
    {
        return Reply::error(Error::Usage(crate::error::Usage::NothingToFormat), format);
    }
    // Colour is for people: never in JSON, never in what a hook hands its client.
    let paint = if format == Format::Text {
        paint
    } else {
        Paint::default()
    };
    let hooked = matches!(parsed.command, Command::Hook(_));
    let reply = match parsed.command {
        // A hook replies to its client, and consumes only once its output got out.
        Command::Hook(a) => hook::run(a),
        Command::Orient(a) => orient::run(&a, format),
        Command::Path(a) => path::run(&a, format),
        Command::Write(a) => write::run(&a, format),
        Command::List(a) => list::run(&a, format),
        Command::Read(a) => read::run(&a, format),
        Command::SetProgress(a) => progress::run(&a, format),
        Command::History(a) => history::run(&a, format),
        Command::Restore(a) => restore::run(&a, format),
        Command::Prune(a) => prune::run(&a, format),
        Command::Push(a) => push::run(&a, format),
        Command::Pull(a) => pull::run(&a, format),
        Command::Sync(a) => sync::run(&a, format),
        Command::Install(a) => install::run(&a),
        Command::Uninstall(a) => uninstall::run(&a),
        Command::Trust(a) => trust::run(&a),
        Command::Status(a) => status::run(&a, format),
        Command::Completions(a) => completions::run(&a),
        Command::Man(a) => completions::man(&a),
        Command::New(a) => new::run(&a, format),
        Command::Config(a) => config::run(&a, format),
        Command::Fix(a) => fix::run(&a, format),
        Command::Log(a) => log::run(&a, format),
        Command::Impact(a) => impact::run(&a, format),
        Command::Brief(a) => brief::run(&a, format),
        Command::Split(a) => split::run(&a, format),
        Command::Mcp(a) => mcp_run(&a),
    };
    match reply {
        Ok(reply) if hooked => reply,
        Ok(reply) => reply.painted(paint),
        // The reader went away while the result was being made: nothing more to say.
        Err(Error::Output(e)) if super::is_broken_pipe(&e) => Reply::new(Exit::Ok),
        Err(e) => Reply::error(e, format),
    }
}

/// The whole command line, each command's help ending with the exit codes.
fn command() -> clap::Command {
    super::with_exit_status(bare_command(), &Exit::STORE_MEANINGS)
}

/// The command line as declared (for the man pages, which give the exit codes a section).
fn bare_command() -> clap::Command {
    <StoreArgs as clap::CommandFactory>::command()
}

/// `handoff-store-mcp`, what `handoff-store mcp` becomes: serve MCP on stdin and stdout until
/// the client closes them, then end as every command does. Called by `impact` with
/// `--transcript-rows CLIENT PATH SESSION FROM_MS`, it prints instead the records of a client's
/// transcript kept in a store, a JSON line each (`crate::ops::impact::RowReader`): a store's
/// library (SQLite) stays out of the hooks' binary. Exit 0 read, 4 the store is gone, 3 any
/// other failure, 2 a usage error.
#[cfg(feature = "mcp")]
pub fn mcp_main(out: &mut dyn Write, err: &mut dyn Write) -> Exit {
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    if args.first().is_some_and(|a| a == "--transcript-rows") {
        return transcript_rows(&args[1..], out);
    }
    match mcp::run() {
        Ok(reply) => reply,
        Err(e) => Reply::error(e, Format::Text),
    }
    .deliver(out, err, "handoff-store mcp")
}

/// `handoff-store-mcp --transcript-rows CLIENT PATH SESSION FROM_MS` (see [`mcp_main`]).
#[cfg(feature = "mcp")]
fn transcript_rows(args: &[std::ffi::OsString], out: &mut dyn Write) -> Exit {
    let text = |i: usize| args.get(i).and_then(|a| a.to_str());
    let (Some(client), Some(path), Some(session), Some(from_ms)) = (
        text(0),
        args.get(1),
        text(2),
        text(3).and_then(|t| t.parse::<i64>().ok()),
    ) else {
        return Exit::Malformed;
    };
    let mut each = |row: serde_json::Value| crate::cli::reply::json_line(out, &row);
    let read = crate::harness::transcript_rows_here(
        client,
        std::path::Path::new(path),
        session,
        from_ms,
        &mut each,
    );
    match read {
        Some(Ok(())) => Exit::Ok,
        Some(Err(e)) if e.kind() == std::io::ErrorKind::NotFound => Exit::NothingToDo,
        _ => Exit::Failure,
    }
}

/// `mcp`: serve MCP on stdin and stdout until the client closes them.
#[derive(Debug, clap::Args)]
struct McpArgs {}

/// The MCP server is a binary of its own beside this one (`handoff-store-mcp`, built with the
/// default features): the hooks' binary, started at every tool call, stays as small and as
/// quick to start as without it (BENCHMARKS.md measured the server linked in: +10 % at every
/// hook). This command becomes that binary, stdin and stdout handed over (an exec, no shell).
fn mcp_run(_args: &McpArgs) -> Result<Reply, Error> {
    use std::os::unix::process::CommandExt;
    match crate::env::beside_me(crate::env::MCP_BINARY) {
        Some(server) => {
            let failed = std::process::Command::new(&server).exec();
            Err(Error::io(&server, failed))
        }
        None => Err(Error::Usage(crate::error::Usage::NoMcp)),
    }
}
