//! `completions SHELL [BINARY]` and `man [PAGE]`: the shell completion script and the man page
//! of either binary, both generated from the clap definitions, so they never drift from `--help`.

use super::Reply;
use crate::error::{Error, Exit, Usage};

/// Which binary a completion script or a man page is for.
#[derive(Debug, Clone, Copy, Default, clap::ValueEnum)]
pub(crate) enum Binary {
    #[default]
    HandoffStore,
    VerifyHandoff,
}

impl Binary {
    fn command(self) -> clap::Command {
        match self {
            Binary::HandoffStore => super::command(),
            Binary::VerifyHandoff => crate::cli::verify::command(),
        }
    }
}

/// Print a shell completion script.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The shell to complete for.
    #[arg(value_enum)]
    shell: clap_complete::Shell,
    /// The binary to complete.
    #[arg(value_enum, default_value_t = Binary::HandoffStore)]
    binary: Binary,
}

pub(crate) fn run(args: &Args) -> Result<Reply, Error> {
    let mut command = args.binary.command();
    let name = command.get_name().to_string();
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut command, name, &mut script);
    Ok(Reply::new(Exit::Ok).text(String::from_utf8_lossy(&script).into_owned()))
}

/// Print a man page (roff), for `man -l -`.
#[derive(Debug, clap::Args)]
pub(crate) struct ManArgs {
    /// `handoff-store` (the default), `verify-handoff`, or one of handoff-store's commands
    /// (`read` gives handoff-store-read).
    #[arg(value_name = "PAGE")]
    page: Option<String>,
}

pub(crate) fn man(args: &ManArgs) -> Result<Reply, Error> {
    let store = super::bare_command();
    let (command, exits) = match args.page.as_deref() {
        None | Some("handoff-store") => (store, &Exit::STORE_MEANINGS[..]),
        Some("verify-handoff") => (crate::cli::verify::bare_command(), &Exit::GATE_MEANINGS[..]),
        Some(name) => {
            let mut store = store;
            store.build();
            let page = store
                .find_subcommand(name.strip_prefix("handoff-store-").unwrap_or(name))
                .cloned()
                .ok_or_else(|| Error::Usage(Usage::NoManPage(name.to_string())))?;
            let full = format!("handoff-store-{}", page.get_name());
            (
                page.display_name(&full).bin_name(full),
                &Exit::STORE_MEANINGS[..],
            )
        }
    };
    let mut page = Vec::new();
    render_man(command, exits, &mut page).map_err(Error::Output)?;
    Ok(Reply::new(Exit::Ok).text(String::from_utf8_lossy(&page).into_owned()))
}

/// clap_mangen's sections, with an EXIT STATUS section from `exits` before the version.
fn render_man(
    command: clap::Command,
    exits: &[(Exit, &str)],
    out: &mut Vec<u8>,
) -> std::io::Result<()> {
    let shown_args = command.get_arguments().any(|a| !a.is_hide_set());
    let shown_subs = command.get_subcommands().any(|s| !s.is_hide_set());
    let has_extra = command.get_after_help().is_some() || command.get_after_long_help().is_some();
    let has_version = command.get_version().is_some() || command.get_long_version().is_some();
    let man = clap_mangen::Man::new(command);
    man.render_title(out)?;
    man.render_name_section(out)?;
    man.render_synopsis_section(out)?;
    man.render_description_section(out)?;
    if shown_args {
        man.render_options_section(out)?;
    }
    if shown_subs {
        man.render_subcommands_section(out)?;
    }
    if has_extra {
        man.render_extra_section(out)?;
    }
    out.extend_from_slice(Exit::man_section(exits).as_bytes());
    if has_version {
        man.render_version_section(out)?;
    }
    Ok(())
}
