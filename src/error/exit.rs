//! How a command ends: the one type that chooses an exit code, and the tables of what each
//! code means that `--help` and the man pages print, so the two never drift apart.

/// How a command ended: the only place an exit code is chosen (docs/store.md §0; the gate's
/// 0 / 1 / 2 in docs/gate.md). Commands return one; `main` turns it into the process's code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Exit {
    /// 0: done.
    Ok,
    /// 1: a negative answer — a citation failed, this target has no slot, nothing to change,
    /// something installed would not run.
    Negative,
    /// 2: a usage error, or a document that violates the contract.
    Malformed,
    /// 3: cannot proceed (store, target, lock, I/O, a remote that did not take the push).
    Failure,
    /// 4: nothing to act on (no handoff, only a placeholder, no such version).
    NothingToDo,
    /// The exit of a program run on the caller's behalf, passed on as it was (the writer under
    /// `hook __exec-writer`, whose supervisor reads it).
    Relayed(u8),
}

impl Exit {
    /// What each of `handoff-store`'s exit codes means: the one table its `--help` and man
    /// pages print (docs/store.md §0 says the same, with each command's cases).
    pub(crate) const STORE_MEANINGS: [(Exit, &'static str); 5] = [
        (Exit::Ok, "done"),
        (
            Exit::Negative,
            "a negative answer: a citation failed, nothing to change, no slot here",
        ),
        (
            Exit::Malformed,
            "a usage error, or a document that violates the contract (nothing stored)",
        ),
        (
            Exit::Failure,
            "cannot proceed: store, checkout, lock, I/O, git, or a remote that refused the push",
        ),
        (
            Exit::NothingToDo,
            "nothing to act on: no handoff, only a placeholder, no such version",
        ),
    ];

    /// What each of `verify-handoff`'s exit codes means (docs/guide.md, its exit codes).
    pub(crate) const GATE_MEANINGS: [(Exit, &'static str); 3] = [
        (
            Exit::Ok,
            "the document meets the contract and every citation resolves",
        ),
        (
            Exit::Negative,
            "a citation is MISSING or CHANGED, or prose cites a path:line absent from Pointers",
        ),
        (
            Exit::Malformed,
            "the input or the document violates the contract, a bad checkout, or a usage error",
        ),
    ];

    /// `table` as the text `--help` ends with.
    pub(crate) fn help_text(table: &[(Exit, &str)]) -> String {
        let mut text = String::from("Exit status:");
        for (exit, meaning) in table {
            text.push_str(&format!("\n  {}  {meaning}", exit.code()));
        }
        text
    }

    /// `table` as a man page's EXIT STATUS section (roff).
    pub(crate) fn man_section(table: &[(Exit, &str)]) -> String {
        let mut roff = String::from(".SH \"EXIT STATUS\"\n");
        for (exit, meaning) in table {
            let meaning = meaning.replace('\\', "\\e").replace('-', "\\-");
            roff.push_str(&format!(".TP\n{}\n{meaning}\n", exit.code()));
        }
        roff
    }

    /// The process exit code.
    pub(crate) fn code(self) -> u8 {
        match self {
            Exit::Ok => 0,
            Exit::Negative => 1,
            Exit::Malformed => 2,
            Exit::Failure => 3,
            Exit::NothingToDo => 4,
            Exit::Relayed(code) => code,
        }
    }

    /// The gate's verdict (0 clean, 1 a citation failed, 2 malformed) as an exit.
    pub(crate) fn of_gate(verdict: i32) -> Exit {
        match verdict {
            0 => Exit::Ok,
            1 => Exit::Negative,
            _ => Exit::Malformed,
        }
    }

    /// A code clap chose for its own exit (help, version: 0; a usage error: 2).
    pub(crate) fn of_clap(code: i32) -> Exit {
        if code == 0 { Exit::Ok } else { Exit::Malformed }
    }
}

impl From<Exit> for std::process::ExitCode {
    fn from(exit: Exit) -> std::process::ExitCode {
        std::process::ExitCode::from(exit.code())
    }
}
