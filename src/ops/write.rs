//! `write` (docs/store.md §9.3): normalise the draft's envelope, refuse collisions, gate it
//! in-process, and store it atomically under the slot lock with the previous version kept.
//! A malformed draft (gate exit 2) or a credential never replaces a stored handoff.

use std::io::Read;

use serde::Serialize;

use super::Place;
use super::after::{self, Why};
use crate::document::Document;
use crate::error::{Draft, Error, Input, Refusal, Usage};
use crate::gate;
use crate::input;
use crate::report::Report;
use crate::store::change::{SlotChange, Wait};
use crate::store::placeholder;
use crate::store::runs::{Run, RunState};
use crate::store::{Store, Target, slot};

/// What to store.
#[derive(Debug, Clone)]
pub(crate) enum Body {
    /// A handoff, already read and checked ([`check_draft`]), and where it came from (`-` for
    /// stdin) — the name the gate's report gives it.
    Document { text: String, from: String },
    /// The placeholder (progress: writing).
    Placeholder,
}

/// A `write`.
#[derive(Debug, Clone)]
pub(crate) struct Request {
    pub(crate) place: Place,
    pub(crate) body: Body,
    /// Replace a slot that holds another branch's or repository's handoff.
    pub(crate) force: bool,
    /// Store without the gate (credentials are still refused).
    pub(crate) no_gate: bool,
    /// Key the handoff to this branch rather than to what HEAD is on.
    pub(crate) branch: Option<String>,
    /// Gate as `write` would, and store nothing.
    pub(crate) dry_run: bool,
}

/// What `write` did: what it stored (its JSON), and what it has to say besides.
#[derive(Default)]
pub(crate) struct Outcome {
    /// The gate's report, when the gate ran (printed before the result, in text only).
    pub(crate) report: Option<Report>,
    /// The credentials `--no-gate` would have stored (the gate's messages).
    pub(crate) credentials: Vec<String>,
    /// Stored, but the record on the chain failed: why (the next write records it).
    pub(crate) unrecorded: Option<String>,
    /// The commit the handoff was keyed to, on a detached HEAD.
    pub(crate) detached: Option<String>,
    pub(crate) written: Option<Written>,
    /// The draft was refused: the error, after `written` (stored: false) is shown.
    pub(crate) refused: Option<Error>,
}

impl Outcome {
    fn done(written: Written) -> Outcome {
        Outcome {
            written: Some(written),
            ..Outcome::default()
        }
    }

    fn failed(e: Error) -> Outcome {
        Outcome {
            refused: Some(e),
            ..Outcome::default()
        }
    }
}

/// Whether the gate ran on the draft, and what it said.
#[derive(Debug, Serialize)]
pub(crate) struct GateRun {
    pub(crate) run: bool,
    pub(crate) exit: Option<i32>,
    pub(crate) report: Option<serde_json::Value>,
}

/// Where a stored (or not stored) draft went, in a word the renderer turns into a sentence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Went {
    /// In the slot, gated: exit 0 or 1.
    Gated,
    Placeholder,
    NoGate,
    DryRun,
    /// Refused by the gate (malformed).
    Refused,
    /// A background write's answer whose run no longer exists: kept in history; the slot is
    /// `slot`.
    GoneRun {
        slot: String,
    },
    /// A background write's candidate; `promoted` once the compaction is confirmed.
    Candidate {
        promoted: bool,
        slot: String,
    },
}

/// What `write` stored, where (its JSON).
#[derive(Debug, Serialize)]
pub(crate) struct Written {
    pub(crate) stored: bool,
    pub(crate) path: String,
    pub(crate) history: Option<String>,
    pub(crate) placeholder: bool,
    pub(crate) gate: GateRun,
    /// Whether a background push was started (`handoff.autoPush`).
    pub(crate) auto_push: bool,
    pub(crate) exit: i32,
    #[serde(skip)]
    pub(crate) went: Went,
}

fn refuse(why: Draft) -> Error {
    Error::Input(Input::Draft(why))
}

/// Read a draft from the file `path`, capped, and check it ([`check_draft`]).
pub(crate) fn read_draft_file(path: &str) -> Result<String, Error> {
    let file = crate::fs::File::open(path).map_err(|e| {
        Error::Input(Input::ReadFile {
            path: path.to_string(),
            source: e,
        })
    })?;
    check_draft(capped(file)?)
}

/// Read a draft from the file `path` only when it is a regular file: opened without blocking
/// (a FIFO planted there answers nothing, never hangs a server that serves others), checked on
/// the open descriptor, read capped and checked ([`check_draft`]). For the MCP server, where the
/// path comes from a client; the command line takes a pipe (`write <(…)`).
#[cfg(feature = "mcp")]
pub(crate) fn read_regular_draft(path: &str) -> Result<String, Error> {
    use crate::fs::OpenOptionsExt as _;
    let file = crate::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| {
            Error::Input(Input::ReadFile {
                path: path.to_string(),
                source: e,
            })
        })?;
    let regular = file.metadata().is_ok_and(|m| m.is_file());
    if !regular {
        return Err(Error::NotRegular(path.into()));
    }
    check_draft(capped(file)?)
}

/// Read a draft from `reader` (stdin), capped, and check it.
pub(crate) fn read_draft(reader: impl Read) -> Result<String, Error> {
    check_draft(capped(reader)?)
}

/// The input checks of docs/store.md §9.3: not empty, UTF-8, no NUL.
pub(crate) fn check_draft(bytes: Vec<u8>) -> Result<String, Error> {
    if crate::text::trim(&String::from_utf8_lossy(&bytes)).is_empty() {
        return Err(refuse(Draft::Empty));
    }
    let text = String::from_utf8(bytes).map_err(|e| {
        let line = crate::text::line_of_offset(e.as_bytes(), e.utf8_error().valid_up_to());
        refuse(Draft::NotUtf8 { line })
    })?;
    if let Some(at) = text.find('\0') {
        let line = crate::text::line_of_offset(text.as_bytes(), at);
        return Err(refuse(Draft::Nul { line }));
    }
    Ok(text)
}

fn capped(reader: impl Read) -> Result<Vec<u8>, Error> {
    input::read_capped(reader).map_err(|e| match e {
        input::InputError::TooLarge => refuse(Draft::TooLarge),
        other => Error::Input(Input::ReadDocument(other)),
    })
}

/// The background write this process belongs to: the supervisor gives the writer its run id in
/// `HANDOFF_WRITE_SESSION`. Its document becomes the run's candidate, never the slot directly.
fn background_run(store: &Store) -> Option<Run> {
    let id = crate::env::settings().write_session.clone()?;
    Run::find(store, &id)
}

/// Store `bytes` in the target's slot under the CLI lock; the kept history file, and why the
/// record on the chain failed when it did (the next record catches up from the slot's history).
fn store_slot(
    store: &Store,
    target: &Target,
    bytes: &[u8],
    force: bool,
    why: Why,
) -> Result<(Option<String>, Option<String>, bool), Error> {
    store.create()?;
    let change = SlotChange::begin(store, target, Wait::Cli)?;
    if !force {
        store.check_collision(target)?;
    }
    let kept = change.replace(bytes)?;
    let (recorded, followed) = after::finish(change, why);
    let unrecorded = recorded.tip.err().map(|e| e.report());
    Ok((
        kept.map(|p| p.to_string_lossy().into_owned()),
        unrecorded,
        followed.push_started,
    ))
}

/// Store a handoff in the slot the request names.
pub(crate) fn write(req: &Request) -> Result<Outcome, Error> {
    let target = req.place.target_on(req.branch.as_deref())?;
    let store = Store::open()?;
    let job = Job {
        req,
        slot_path: store.path_of(&target.name).to_string_lossy().into_owned(),
        target,
        store,
    };
    let mut outcome = job.run()?;
    if job.target.facts.detached {
        outcome.detached = Some(job.target.facts.reference.clone());
    }
    Ok(outcome)
}

/// One `write`: its request, target, store and slot.
struct Job<'a> {
    req: &'a Request,
    target: Target,
    store: Store,
    slot_path: String,
}

impl Job<'_> {
    fn run(&self) -> Result<Outcome, Error> {
        let run = background_run(&self.store);
        // A writer's result whose run no longer exists (pruned, removed) has no confirmed
        // compaction behind it: it is kept in history, never put in the slot.
        let orphan = run.is_none() && crate::env::settings().write_session.is_some();
        self.check_run(run.as_ref(), orphan)?;
        let (draft, from) = match &self.req.body {
            Body::Placeholder => {
                let session = crate::env::settings().write_session.clone();
                let text = placeholder::document(
                    &self.target.facts.reference,
                    &self.target.checkout(),
                    &self.target.facts.head,
                    session.as_deref(),
                    crate::env::settings().fork_timeout,
                );
                return self.ungated(&text, true);
            }
            Body::Document { text, from } => (text, from),
        };
        let text = self.target.normalise(draft)?;
        // What the gate says of lines is said in the draft's numbers, the file the user fixes.
        let numbers = crate::document::normalise::draft_numbers(draft, &text);
        let doc = Document::parse(&text.replace('\r', "")).numbered(numbers);
        if self.req.no_gate && !self.req.dry_run {
            return self.no_gate(&doc, &text);
        }
        self.gated(&doc, &text, from, run, orphan)
    }

    /// What a background writer's process may not do: write for another slot, write a
    /// placeholder, skip the gate.
    fn check_run(&self, run: Option<&Run>, orphan: bool) -> Result<(), Error> {
        let placeholder = matches!(self.req.body, Body::Placeholder);
        if orphan && self.req.no_gate {
            return Err(Error::Usage(Usage::AlwaysGated));
        }
        if let Some(run) = run {
            if placeholder || self.req.no_gate {
                return Err(Error::Usage(Usage::GatedNoPlaceholder));
            }
            if run.job.slot != self.target.name {
                return Err(refuse(Draft::OtherSlot {
                    run: run.job.slot.clone(),
                    target: self.target.name.clone(),
                }));
            }
        }
        Ok(())
    }

    /// Store without the gate: the placeholder (which passes it by construction) and
    /// `--no-gate`.
    fn ungated(&self, text: &str, placeholder: bool) -> Result<Outcome, Error> {
        let gate = GateRun {
            run: false,
            exit: None,
            report: None,
        };
        let (went, why) = if placeholder {
            (Went::Placeholder, Why::Placeholder)
        } else {
            (Went::NoGate, Why::Written)
        };
        self.store_in_slot(text, gate, 0, went, why)
    }

    /// `--no-gate`: skipping the format check never lets a credential into the store.
    fn no_gate(&self, doc: &Document, text: &str) -> Result<Outcome, Error> {
        let credentials: Vec<String> = gate::contract::check(doc, &gate::HeaderCheckout::Absent)
            .into_iter()
            .filter(|f| f.code == crate::finding::Code::Secret)
            .map(|f| f.message)
            .collect();
        if credentials.is_empty() {
            return self.ungated(text, false);
        }
        Ok(Outcome {
            credentials,
            ..Outcome::failed(Error::NotStored {
                slot: self.slot_path.clone(),
                why: Refusal::Credential,
            })
        })
    }

    /// The result of a draft that was gated and not stored.
    fn not_stored(&self, gate: GateRun, exit: i32, went: Went) -> Written {
        Written {
            stored: false,
            path: self.slot_path.clone(),
            history: None,
            placeholder: false,
            gate,
            auto_push: false,
            exit,
            went,
        }
    }

    /// Gate the draft, then store it: in the slot, as a background write's candidate, or —
    /// for a run that is gone — in history. A malformed one is refused. A failure while storing
    /// still carries the gate's report, as it is printed before anything is stored.
    fn gated(
        &self,
        doc: &Document,
        text: &str,
        from: &str,
        run: Option<Run>,
        orphan: bool,
    ) -> Result<Outcome, Error> {
        // The collision is refused before the gate runs (and again under the lock).
        if !self.req.force {
            self.store.check_collision(&self.target)?;
        }
        let report = crate::report::run_gate::document(doc, from, Some(&self.target.checkout()));
        let code = report.exit_code;
        let gate = GateRun {
            run: true,
            exit: Some(code),
            report: Some(report.json()),
        };
        let stored = if code == 2 {
            let mut w = Outcome::done(self.not_stored(gate, 2, Went::Refused));
            w.refused = Some(Error::NotStored {
                slot: self.slot_path.clone(),
                why: Refusal::Malformed,
            });
            Ok(w)
        } else if self.req.dry_run {
            Ok(Outcome::done(self.not_stored(gate, code, Went::DryRun)))
        } else if let Some(run) = run {
            write_candidate(&self.store, &self.target, &run, text, code).map(Outcome::done)
        } else if orphan {
            self.keep_for_a_gone_run(text, gate, code)
        } else {
            self.store_in_slot(text, gate, code, Went::Gated, Why::Written)
        };
        let mut w = stored.unwrap_or_else(Outcome::failed);
        w.report = Some(report);
        Ok(w)
    }

    /// A background writer's answer whose run no longer exists: kept in history, never put in
    /// the slot.
    fn keep_for_a_gone_run(&self, text: &str, gate: GateRun, code: i32) -> Result<Outcome, Error> {
        let kept = {
            let _lock = slot::lock_cli(&self.store, &self.target.name)?;
            let kept = slot::keep_bytes(
                &self.store,
                &self.target.name,
                text.as_bytes(),
                std::time::SystemTime::now(),
            )?;
            slot::retain(&self.store, &self.target.name);
            kept
        };
        Ok(Outcome::done(Written {
            stored: true,
            path: kept.to_string_lossy().into_owned(),
            history: None,
            placeholder: false,
            gate,
            auto_push: false,
            exit: code,
            went: Went::GoneRun {
                slot: self.slot_path.clone(),
            },
        }))
    }

    /// Replace the slot with `text`; what follows is [`after::decide`]'s (a placeholder never
    /// goes out).
    fn store_in_slot(
        &self,
        text: &str,
        gate: GateRun,
        exit: i32,
        went: Went,
        why: Why,
    ) -> Result<Outcome, Error> {
        let (history, unrecorded, auto_push) = store_slot(
            &self.store,
            &self.target,
            text.as_bytes(),
            self.req.force,
            why,
        )?;
        let written = Written {
            stored: true,
            path: self.slot_path.clone(),
            history,
            placeholder: why == Why::Placeholder,
            gate,
            auto_push,
            exit,
            went,
        };
        let mut outcome = Outcome::done(written);
        outcome.unrecorded = unrecorded;
        Ok(outcome)
    }
}

/// Store a background writer's gated document as its run's candidate; it reaches the slot
/// only once it passed the gate and the compaction is confirmed.
fn write_candidate(
    store: &Store,
    target: &Target,
    run: &Run,
    text: &str,
    code: i32,
) -> Result<Written, Error> {
    let slot_path = store.path_of(&target.name).to_string_lossy().into_owned();
    let state = run.record_candidate(store, text.as_bytes(), code)?;
    let promoted = state == RunState::Promoted;
    // In the slot now: it joins the chain and travels like any written version.
    let auto_push = promoted && after::promoted(run).push_started;
    Ok(Written {
        stored: true,
        path: if promoted {
            slot_path.clone()
        } else {
            run.candidate_path().to_string_lossy().into_owned()
        },
        history: None,
        placeholder: false,
        gate: GateRun {
            run: true,
            exit: Some(code),
            report: None,
        },
        auto_push,
        exit: code,
        went: Went::Candidate {
            promoted,
            slot: slot_path,
        },
    })
}
