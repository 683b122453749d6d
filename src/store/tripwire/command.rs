//! A shell command reduced to what a dead end's quote and a tool call can be compared on
//! (docs/hooks.md §10): the command line split into its simple commands at `&&`, `||`, `;`,
//! `|`, `&` and line ends; quotes and backslashes taken off each word as the shell would;
//! leading `NAME=value` words and the wrappers `sudo`, `env`, `time`, `nohup`, `command` and
//! `exec` dropped (with their own flags: a wrapper's flag that takes a value is not known); the program named by its base name; then its words split into
//! **positionals** (in order) and **flags** (a word starting with `-`, as written). Nothing is
//! run, expanded or looked up: `$VAR`, globs and `$(…)` stay the words they are.

use serde::{Deserialize, Serialize};

/// One simple command: its program's base name, its positional words in order, its flags.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Simple {
    pub(crate) program: String,
    pub(crate) positionals: Vec<String>,
    pub(crate) flags: Vec<String>,
}

/// The wrappers that run the command after them.
const WRAPPERS: [&str; 6] = ["sudo", "env", "time", "nohup", "command", "exec"];

impl Simple {
    /// Whether the run command `run` repeats this quoted one: the same program; the first
    /// positional (the subcommand or target) the same, the quote's other positionals found in
    /// the run's rest in order; every flag of the quote among the run's flags.
    pub(crate) fn matches(&self, run: &Simple) -> bool {
        if self.program != run.program || !self.flags.iter().all(|f| run.flags.contains(f)) {
            return false;
        }
        let Some((first, rest)) = self.positionals.split_first() else {
            return true;
        };
        let Some((run_first, mut run_rest)) = run.positionals.split_first() else {
            return false;
        };
        if first != run_first {
            return false;
        }
        rest.iter()
            .all(|word| match run_rest.iter().position(|w| w == word) {
                Some(at) => {
                    run_rest = &run_rest[at + 1..];
                    true
                }
                None => false,
            })
    }

    /// As a quote would show it: `program positionals… flags…`.
    pub(crate) fn shown(&self) -> String {
        std::iter::once(self.program.as_str())
            .chain(self.positionals.iter().map(String::as_str))
            .chain(self.flags.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// Every simple command of a command line, normalised (a command with no program is dropped).
pub(crate) fn simple_commands(line: &str) -> Vec<Simple> {
    split(line).into_iter().filter_map(normalise).collect()
}

/// A backticked span of a dead end as a quoted command, or `None` when it does not read as
/// one: a single simple command of a program whose name is a plain word (letters, digits,
/// `_ . + -`, not starting with `-`, holding a letter) with at least one more word, and no
/// character that only code or placeholders hold (`( ) { } < > = :: ,`).
pub(crate) fn quoted(span: &str) -> Option<Simple> {
    if span.contains("::")
        || span
            .chars()
            .any(|c| matches!(c, '(' | ')' | '{' | '}' | '<' | '>' | ',' | '`'))
    {
        return None;
    }
    let mut commands = simple_commands(span);
    // `cd dir && make x`: the `cd` is where, not what.
    commands.retain(|c| c.program != "cd");
    let [only] = <[Simple; 1]>::try_from(commands).ok()?;
    let plain = only
        .program
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '+' | '-'));
    let word_count = only.positionals.len() + only.flags.len();
    (plain
        && !only.program.starts_with('-')
        && only.program.chars().any(|c| c.is_ascii_alphabetic())
        && word_count >= 1)
        .then_some(only)
}

/// The words of each simple command, unquoted.
fn split(line: &str) -> Vec<Vec<String>> {
    let mut commands = vec![Vec::new()];
    let mut word: Option<String> = None;
    let mut chars = line.chars().peekable();
    let end_word = |word: &mut Option<String>, commands: &mut Vec<Vec<String>>| {
        if let (Some(w), Some(last)) = (word.take(), commands.last_mut()) {
            last.push(w);
        }
    };
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                let w = word.get_or_insert_with(String::new);
                for q in chars.by_ref() {
                    if q == '\'' {
                        break;
                    }
                    w.push(q);
                }
            }
            '"' => {
                let w = word.get_or_insert_with(String::new);
                while let Some(q) = chars.next() {
                    match q {
                        '"' => break,
                        '\\' if chars.peek().is_some_and(|n| matches!(n, '"' | '\\' | '$')) => {
                            w.extend(chars.next());
                        }
                        _ => w.push(q),
                    }
                }
            }
            '\\' => {
                // A backslash-newline joins lines; any other escaped character is itself.
                match chars.next() {
                    Some('\n') | None => {}
                    Some(n) => word.get_or_insert_with(String::new).push(n),
                }
            }
            '#' if word.is_none() => {
                for n in chars.by_ref() {
                    if n == '\n' {
                        break;
                    }
                }
                end_word(&mut word, &mut commands);
                commands.push(Vec::new());
            }
            // `2>&1`, `&>`: a redirection, not a separator.
            '&' if word.as_deref().is_some_and(|w| w.ends_with('>'))
                || chars.peek() == Some(&'>') =>
            {
                word.get_or_insert_with(String::new).push(c);
            }
            ';' | '|' | '&' | '\n' | '(' | ')' => {
                end_word(&mut word, &mut commands);
                commands.push(Vec::new());
            }
            c if c.is_whitespace() => end_word(&mut word, &mut commands),
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    end_word(&mut word, &mut commands);
    commands.retain(|c| !c.is_empty());
    commands
}

/// A simple command's words as a [`Simple`]: assignments and wrappers dropped (with their
/// flags), the program by its base name.
fn normalise(words: Vec<String>) -> Option<Simple> {
    let mut words = words.into_iter().peekable();
    let mut wrapper = false;
    while let Some(w) = words.peek() {
        let assignment = w
            .split_once('=')
            .is_some_and(|(name, _)| is_name(name) && !w.starts_with('-'));
        let skip = assignment || WRAPPERS.contains(&w.as_str()) || wrapper && w.starts_with('-');
        if !skip {
            break;
        }
        wrapper = WRAPPERS.contains(&w.as_str()) || wrapper && !assignment;
        words.next();
    }
    let program = words.next()?;
    let program = program
        .rsplit('/')
        .next()
        .filter(|p| !p.is_empty())?
        .to_string();
    let mut simple = Simple {
        program,
        positionals: Vec::new(),
        flags: Vec::new(),
    };
    let mut after_dashes = false;
    for w in words {
        if after_dashes || !w.starts_with('-') || w == "-" {
            simple.positionals.push(w);
        } else if w == "--" {
            after_dashes = true;
        } else {
            simple.flags.push(w);
        }
    }
    Some(simple)
}

/// Whether `s` is a shell variable name.
fn is_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(s: &str) -> Simple {
        quoted(s).unwrap_or_else(|| panic!("{s} reads as a command"))
    }

    fn hits(quote: &str, run: &str) -> bool {
        let quote = q(quote);
        simple_commands(run).iter().any(|c| quote.matches(c))
    }

    #[test]
    fn a_run_command_repeats_a_quote_in_the_forms_a_shell_gives_it() {
        for run in [
            "make test-slow",
            "cd /work/x && make test-slow",
            "FOO=1 make test-slow V=1",
            "sudo -E env A=b make 'test-slow'",
            "/usr/bin/make test-slow 2>&1 | tail -5",
            "make -j4 test-slow",
            "echo start; make \"test-slow\" # again",
            "time make test-slow",
        ] {
            assert!(hits("make test-slow", run), "{run}");
        }
        assert!(hits(
            "cargo test --release",
            "cargo test -p x --release -- --nocapture"
        ));
        assert!(hits("git push --force", "git push origin main --force"));
        assert!(hits("npm run build:prod", "npm run build:prod -- --watch"));
    }

    #[test]
    fn other_commands_do_not() {
        for run in [
            "make test",
            "make test-slow-2",
            "make",
            "cmake test-slow",
            "echo make test-slow",
            "git commit -m 'make test-slow hangs'",
        ] {
            assert!(!hits("make test-slow", run), "{run}");
        }
        assert!(!hits("cargo test --release", "cargo test"));
        assert!(!hits("cargo test", "cargo run -- test"));
        assert!(!hits("git push --force", "git push -f"));
    }

    #[test]
    fn only_spans_that_read_as_commands_are_quotes() {
        for span in [
            "serde_json::to_value",
            "preserve_order",
            "fn pick(",
            "\"disableAllHooks\": true",
            "--features mcp",
            "<file> x",
            "a=b c",
            "app/Mail/Invoice.php:24",
            "cd somewhere",
            "Vec<String> x",
            "1 2",
        ] {
            assert_eq!(quoted(span), None, "{span}");
        }
        assert_eq!(q("cd x && make y").shown(), "make y");
        assert_eq!(q("RUST_LOG=debug cargo run").shown(), "cargo run");
        // A redirection is no separator; a comment is no word.
        let run = simple_commands("make x 2>&1 | tail # see the end");
        let programs: Vec<&str> = run.iter().map(|c| c.program.as_str()).collect();
        assert_eq!(programs, ["make", "tail"]);
        assert_eq!(run[0].positionals, ["x", "2>&1"]);
        assert!(run[1].positionals.is_empty(), "{run:?}");
    }
}
