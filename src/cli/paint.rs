//! Colour for people: `--color auto|always|never` on both binaries, `NO_COLOR` honoured (a
//! flag wins over it, as no-color.org asks). Renderers stay plain — the same text is what a
//! model reads through a hook — and the one writer paints a rendered line's leading verdict
//! word on its way to a terminal. A handoff's own text (between `read`'s begin and end lines)
//! is never painted, and JSON never is.

use std::ffi::OsString;
use std::io::IsTerminal;

use anstyle::{AnsiColor, Style};

/// When to colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub(crate) enum ColorChoice {
    /// On a terminal, unless NO_COLOR is set (and not empty) or TERM is dumb.
    #[default]
    Auto,
    Always,
    Never,
}

/// Which streams get colour.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Paint {
    pub(crate) out: bool,
    pub(crate) err: bool,
}

impl Paint {
    /// The streams `choice` colours, for this process's stdout and stderr.
    pub(crate) fn of(choice: ColorChoice) -> Paint {
        let auto = || {
            std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                && std::env::var_os("TERM").is_none_or(|t| t != "dumb")
        };
        match choice {
            ColorChoice::Never => Paint::default(),
            ColorChoice::Always => Paint {
                out: true,
                err: true,
            },
            ColorChoice::Auto if auto() => Paint {
                out: std::io::stdout().is_terminal(),
                err: std::io::stderr().is_terminal(),
            },
            ColorChoice::Auto => Paint::default(),
        }
    }
}

/// The last value of option `name` (`--name V` or `--name=V`) on a command line, read before
/// clap parses it; the last one wins, as clap does.
fn last_value(args: &[OsString], name: &str) -> Option<String> {
    let mut last = None;
    let mut words = args.iter().skip(1).map(|a| a.to_string_lossy());
    while let Some(word) = words.next() {
        if word == "--" {
            break;
        }
        match word.strip_prefix(name) {
            Some("") => last = words.next().map(|v| v.into_owned()).or(last),
            Some(rest) => last = rest.strip_prefix('=').map(str::to_string).or(last),
            None => {}
        }
    }
    last
}

/// The `--color` value on a command line, read before clap parses it (so that clap's own help
/// and errors are coloured or not too); the last one wins, as clap does.
pub(crate) fn choice_in(args: &[OsString]) -> ColorChoice {
    last_value(args, "--color")
        .and_then(|v| <ColorChoice as clap::ValueEnum>::from_str(&v, true).ok())
        .unwrap_or(ColorChoice::Auto)
}

/// Whether a command line asks for JSON (`--json`, `--format json`), read before clap parses
/// it: then even a usage error is one JSON object.
pub(crate) fn json_in(args: &[OsString]) -> bool {
    let flag = args
        .iter()
        .skip(1)
        .map(|a| a.to_string_lossy())
        .take_while(|w| w != "--")
        .any(|w| w == "--json");
    flag || last_value(args, "--format").is_some_and(|v| v == "json")
}

const GOOD: Style = AnsiColor::Green.on_default().bold();
const DOUBT: Style = AnsiColor::Yellow.on_default().bold();
const BAD: Style = AnsiColor::Red.on_default().bold();

/// The style of a verdict word.
fn style_of(word: &str) -> Option<Style> {
    match word {
        "OK" | "runs=yes" | "installed=yes" => Some(GOOD),
        "CHANGED" | "WARN" | "GUESS" | "DRIFT" | "STALE" | "unknown" | "runs=unknown" => {
            Some(DOUBT)
        }
        "FAIL" | "FAILED" | "MISSING" | "ERROR" | "MALFORMED" | "ABANDONED" | "problem"
        | "runs=no" => Some(BAD),
        _ => None,
    }
}

/// `text` with the verdict words of its lines painted: a line's first word, the word after a
/// column label (`gate     OK`, `pick     GUESS`), and `installed=` / `runs=` in `status`.
/// Lines between `----- begin handoff -----` and `----- end handoff -----` stay as they are.
pub(crate) fn paint(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 64);
    let mut verbatim = false;
    for line in text.split_inclusive('\n') {
        let bare = line.trim_end_matches('\n');
        if bare == "----- begin handoff -----" {
            verbatim = true;
        } else if bare == "----- end handoff -----" {
            verbatim = false;
        } else if !verbatim {
            out.push_str(&paint_line(line));
            continue;
        }
        out.push_str(line);
    }
    out
}

fn paint_line(line: &str) -> String {
    let mut out = String::with_capacity(line.len() + 32);
    let mut index = 0;
    for piece in line.split_inclusive(' ') {
        let word = piece.trim_end_matches([' ', '\n']);
        let key = word.trim_end_matches(':');
        let after = &piece[key.len()..];
        match style_of(key).filter(|_| index < 2 || key.contains('=')) {
            Some(s) => out.push_str(&format!("{s}{key}{s:#}{after}")),
            None => out.push_str(piece),
        }
        if !word.is_empty() {
            index += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `s` without its escape sequences (`ESC [ … m`).
    fn plain(s: &str) -> String {
        let mut out = String::new();
        let mut chars = s.chars();
        while let Some(c) = chars.next() {
            if c == '\u{1b}' {
                chars.by_ref().find(|&c| c == 'm');
            } else {
                out.push(c);
            }
        }
        out
    }

    #[test]
    fn verdict_words_are_painted_and_nothing_else_changes() {
        let text = "OK       src/a.rs → fine\nCHANGED  src/b.rs:3 no longer OK\ngate     FAILED — 1 of 2\n----- begin handoff -----\nOK inside\n----- end handoff -----\nclaude-code user installed=yes runs=no file — why\nplain line with OK\n";
        let painted = paint(text);
        assert_eq!(plain(&painted), text, "only escapes are added");
        let red_or_green = |w: &str| painted.contains(&format!("m{w}\u{1b}[0m"));
        assert!(red_or_green("OK") && red_or_green("CHANGED") && red_or_green("FAILED"));
        assert!(red_or_green("installed=yes") && red_or_green("runs=no"));
        assert!(
            painted.contains("\nOK inside\n"),
            "the handoff itself is left alone"
        );
        assert!(painted.ends_with("plain line with OK\n"), "{painted:?}");
    }

    #[test]
    fn the_color_flag_is_read_before_clap() {
        let args = |a: &[&str]| a.iter().map(OsString::from).collect::<Vec<_>>();
        assert_eq!(choice_in(&args(&["x", "read"])), ColorChoice::Auto);
        assert_eq!(
            choice_in(&args(&["x", "--color", "never"])),
            ColorChoice::Never
        );
        assert_eq!(
            choice_in(&args(&["x", "--color=always", "read"])),
            ColorChoice::Always
        );
        assert_eq!(
            choice_in(&args(&["x", "--", "--color=always"])),
            ColorChoice::Auto
        );
    }
}
