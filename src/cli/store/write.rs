//! `write` (docs/store.md §9.3): normalise the draft's envelope, refuse collisions, gate it
//! in-process, and store it atomically under the slot lock with the previous version kept.
//! A malformed draft (gate exit 2) or a credential never replaces a stored handoff.

use std::io::{IsTerminal, Read};

use serde::Serialize;

use super::{Format, Reply, render};
use crate::document::Document;
use crate::error::{Draft, Error, Exit, Input, Refusal, Usage};
use crate::gate;
use crate::input;
use crate::report::Stream;
use crate::store::change::{SlotChange, Wait};
use crate::store::placeholder;
use crate::store::runs::{Run, RunState};
use crate::store::{Store, Target, slot};

/// The background write this process belongs to: the supervisor gives the writer its run id in
/// `HANDOFF_WRITE_SESSION`. Its document becomes the run's candidate, never the slot directly.
fn background_run(store: &Store) -> Option<Run> {
    let id = crate::env::settings().write_session.clone()?;
    Run::find(store, &id)
}

/// The flags of `write`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(flatten)]
    pub(crate) checkout: super::checkout::Checkout,
    #[command(flatten)]
    pub(crate) slot: super::checkout::SlotArg,
    /// Read the document from FILE (`-` for stdin).
    #[arg(long, value_name = "FILE", conflicts_with = "placeholder")]
    pub(crate) from: Option<String>,
    /// The same as --from FILE.
    #[arg(value_name = "FILE", conflicts_with_all = ["from", "placeholder"])]
    pub(crate) file: Option<String>,
    /// Write the placeholder (progress: writing) instead of a document.
    #[arg(long)]
    pub(crate) placeholder: bool,
    /// Replace a slot that holds another branch's or repository's handoff.
    #[arg(long)]
    pub(crate) force: bool,
    /// Store without running the gate (credentials are still refused).
    #[arg(long)]
    pub(crate) no_gate: bool,
    /// Key the handoff to this branch rather than to what HEAD is on (on a detached HEAD).
    #[arg(long, value_name = "NAME")]
    pub(crate) branch: Option<String>,
    /// Gate the document as `write` would, and store nothing (the exit is the gate's).
    #[arg(long, conflicts_with = "placeholder")]
    pub(crate) dry_run: bool,
    /// The draft, already read and checked (`split` reads each part once, so what it gated is
    /// what it stores).
    #[arg(skip)]
    pub(crate) draft: Option<String>,
}

impl Args {
    /// A write of `draft` (read from `file`) into `slot` of the checkout `dir` (`split`'s
    /// parts).
    pub(super) fn of_draft(
        dir: Option<&str>,
        slot: &str,
        file: &str,
        draft: String,
        dry_run: bool,
    ) -> Args {
        Args {
            checkout: super::checkout::Checkout::of(dir),
            slot: super::checkout::SlotArg::of(Some(slot)),
            from: Some(file.to_string()),
            draft: Some(draft),
            file: None,
            placeholder: false,
            force: false,
            no_gate: false,
            branch: None,
            dry_run,
        }
    }
}

pub(crate) fn run(args: &Args, format: Format) -> Result<Reply, Error> {
    let w = write(args, format)?;
    let mut reply = Reply::new(Exit::Ok);
    if let Some(note) = &w.detached {
        reply = reply.note(note.clone());
    }
    if let Some(warning) = &w.warning {
        reply = reply.note(format!("handoff-store: warning: {warning}"));
    }
    reply = reply.lines(w.errors.into_iter().map(|line| (Stream::Err, line)));
    reply = reply.lines(w.report);
    if let Some(written) = &w.written {
        reply = reply.exit(Exit::of_gate(written.exit));
        // A refused draft shows the result only as JSON (stored: false); the text is the
        // gate's report and the error.
        if format == Format::Json || w.refused.is_none() {
            reply = reply.shown(format, written, render::written)?;
        }
    }
    Ok(match w.refused {
        Some(e) => reply.failed_in(e, format),
        None => reply,
    })
}

/// What `write` did: what it stored (its JSON), and what it has to say besides.
pub(crate) struct WriteOutcome {
    /// The gate's report as text lines (printed before the result, in text only).
    pub(super) report: Vec<(Stream, String)>,
    /// Lines for stderr in every format (a credential `--no-gate` would have stored).
    pub(super) errors: Vec<String>,
    /// Stored, but the record on the chain failed.
    pub(super) warning: Option<String>,
    /// Said when the handoff was keyed to a commit (a detached HEAD, no rebase).
    pub(super) detached: Option<String>,
    pub(super) written: Option<Written>,
    /// The draft was refused: the error, after `written` (stored: false) is shown.
    pub(super) refused: Option<Error>,
}

impl WriteOutcome {
    fn done(written: Written, warning: Option<String>) -> WriteOutcome {
        WriteOutcome {
            report: Vec::new(),
            errors: Vec::new(),
            warning,
            detached: None,
            written: Some(written),
            refused: None,
        }
    }
}

fn refuse(why: Draft) -> Error {
    Error::Input(Input::Draft(why))
}

/// Read and check the draft (docs/store.md §9.3 input checks).
pub(super) fn read_draft(from: Option<&str>) -> Result<String, Error> {
    let bytes = match from {
        Some(f) if f != "-" => {
            let file = crate::fs::File::open(f).map_err(|e| {
                Error::Input(Input::ReadFile {
                    path: f.to_string(),
                    source: e,
                })
            })?;
            capped(file)?
        }
        _ => {
            let stdin = std::io::stdin();
            if from.is_none() && stdin.is_terminal() {
                return Err(Error::Usage(Usage::NoDocument));
            }
            capped(stdin.lock())?
        }
    };
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

/// Store `bytes` in the target's slot under the CLI lock; returns the kept history file, and a
/// warning when the version is stored but its record on the chain failed (the next record
/// catches up from the slot's history).
pub(crate) fn store_slot(
    store: &Store,
    target: &Target,
    bytes: &[u8],
    force: bool,
) -> Result<(Option<String>, Option<String>), Error> {
    store.create()?;
    let change = SlotChange::begin(store, target, Wait::Cli)?;
    if !force {
        store.check_collision(target)?;
    }
    let kept = change.replace(bytes)?;
    let warning = change.finish().err().map(|e| {
        format!(
            "the handoff is stored, but not yet recorded in git ({}); the next write records it",
            e.report()
        )
    });
    Ok((kept.map(|p| p.to_string_lossy().into_owned()), warning))
}

/// Whether the gate ran on the draft, and what it said.
#[derive(Debug, Serialize)]
pub(crate) struct GateRun {
    pub(crate) run: bool,
    pub(crate) exit: Option<i32>,
    pub(crate) report: Option<serde_json::Value>,
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
    /// What the text says after the path: `(gate: OK)`, `(placeholder, …)`, ….
    #[serde(skip)]
    pub(crate) note: String,
}

pub(super) fn write(opts: &Args, format: Format) -> Result<WriteOutcome, Error> {
    let (target, mut outcome) = write_for(opts, format)?;
    if target.facts.detached {
        outcome.detached = Some(format!(
            "handoff-store: HEAD is detached: this handoff is keyed to commit {} and will not be shown on any branch; pass --branch NAME to key it to one",
            target.facts.reference
        ));
    }
    Ok(outcome)
}

/// [`write`], and the target it wrote for.
fn write_for(opts: &Args, format: Format) -> Result<(Target, WriteOutcome), Error> {
    let draft = if opts.placeholder {
        None
    } else if let Some(draft) = &opts.draft {
        Some(draft.clone())
    } else {
        Some(read_draft(opts.from.as_deref().or(opts.file.as_deref()))?)
    };
    let target = Target::required(opts.checkout.dir())?;
    let target = match opts.branch.as_deref().filter(|b| !b.is_empty()) {
        Some(branch) => target.on_branch(branch),
        None => target,
    };
    let target = opts.slot.apply(target)?;
    let store = Store::open()?;
    let job = Job {
        opts,
        slot_path: store.path_of(&target.name).to_string_lossy().into_owned(),
        target,
        store,
    };
    let run = background_run(&job.store);
    // A writer's result whose run no longer exists (pruned, removed) has no confirmed
    // compaction behind it: it is kept in history, never put in the slot.
    let orphan = run.is_none() && crate::env::settings().write_session.is_some();
    job.check_run(run.as_ref(), orphan)?;
    let Some(draft) = draft else {
        let session = crate::env::settings().write_session.clone();
        let text = placeholder::document(
            &job.target.facts.reference,
            &job.target.checkout(),
            &job.target.facts.head,
            session.as_deref(),
            crate::env::settings().fork_timeout,
        );
        return Ok((job.target.clone(), job.ungated(&text, true)?));
    };
    let text = job.target.normalise(&draft)?;
    let doc = Document::parse(&text.replace('\r', ""));
    if opts.no_gate && !opts.dry_run {
        return Ok((job.target.clone(), job.no_gate(&doc, &text)?));
    }
    Ok((
        job.target.clone(),
        job.gated(&doc, &text, run, orphan, format)?,
    ))
}

/// One `write`: its flags, target, store and slot.
struct Job<'a> {
    opts: &'a Args,
    target: Target,
    store: Store,
    slot_path: String,
}

impl Job<'_> {
    /// What a background writer's process may not do: write for another slot, write a
    /// placeholder, skip the gate.
    fn check_run(&self, run: Option<&Run>, orphan: bool) -> Result<(), Error> {
        if orphan && self.opts.no_gate {
            return Err(Error::Usage(Usage::AlwaysGated));
        }
        if let Some(run) = run {
            if self.opts.placeholder || self.opts.no_gate {
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
    fn ungated(&self, text: &str, placeholder: bool) -> Result<WriteOutcome, Error> {
        let gate = GateRun {
            run: false,
            exit: None,
            report: None,
        };
        let note = if placeholder {
            "(placeholder, progress: writing)"
        } else {
            "(gate: not run, --no-gate)"
        };
        self.store_in_slot(text, placeholder, gate, 0, note)
    }

    /// `--no-gate`: skipping the format check never lets a credential into the store.
    fn no_gate(&self, doc: &Document, text: &str) -> Result<WriteOutcome, Error> {
        let findings = gate::contract::check(doc, &gate::HeaderCheckout::Absent);
        let errors: Vec<String> = findings
            .iter()
            .filter(|f| f.code == "secret")
            .map(|f| format!("ERROR    {}", f.message))
            .collect();
        if errors.is_empty() {
            return self.ungated(text, false);
        }
        Ok(WriteOutcome {
            report: Vec::new(),
            errors,
            warning: None,
            detached: None,
            written: None,
            refused: Some(Error::NotStored {
                slot: self.slot_path.clone(),
                why: Refusal::Credential,
            }),
        })
    }

    /// Gate the draft, then store it: in the slot, as a background write's candidate, or —
    /// for a run that is gone — in history. A malformed one is refused. A failure while storing
    /// still shows the gate's report first, as the report is printed before anything is
    /// stored.
    /// The result of a draft that was gated and not stored.
    fn not_stored(&self, gate: GateRun, exit: i32, note: &str) -> Written {
        Written {
            stored: false,
            path: self.slot_path.clone(),
            history: None,
            placeholder: false,
            gate,
            auto_push: false,
            exit,
            note: note.to_string(),
        }
    }

    fn gated(
        &self,
        doc: &Document,
        text: &str,
        run: Option<Run>,
        orphan: bool,
        format: Format,
    ) -> Result<WriteOutcome, Error> {
        // The collision is refused before the gate runs (and again under the lock).
        if !self.opts.force {
            self.store.check_collision(&self.target)?;
        }
        let input_name = self
            .opts
            .from
            .clone()
            .or_else(|| self.opts.file.clone())
            .unwrap_or_else(|| "-".into());
        let report =
            crate::report::run_gate::document(doc, &input_name, Some(&self.target.checkout()));
        let code = report.exit_code;
        let gate = GateRun {
            run: true,
            exit: Some(code),
            report: Some(report.json()),
        };
        let stored = if code == 2 {
            let mut w = WriteOutcome::done(self.not_stored(gate, 2, ""), None);
            w.refused = Some(Error::NotStored {
                slot: self.slot_path.clone(),
                why: Refusal::Malformed,
            });
            Ok(w)
        } else if self.opts.dry_run {
            let note = "(dry run: nothing was stored)";
            Ok(WriteOutcome::done(self.not_stored(gate, code, note), None))
        } else if let Some(run) = run {
            write_candidate(&self.store, &self.target, &run, text, code)
                .map(|w| WriteOutcome::done(w, None))
        } else if orphan {
            self.keep_for_a_gone_run(text, gate, code)
        } else {
            self.store_gated(text, gate, code)
        };
        let mut w = stored.unwrap_or_else(|e| WriteOutcome {
            report: Vec::new(),
            errors: Vec::new(),
            warning: None,
            detached: None,
            written: None,
            refused: Some(e),
        });
        if format == Format::Text {
            w.report = report.text_lines();
        }
        Ok(w)
    }

    /// A background writer's answer whose run no longer exists: kept in history, never put in
    /// the slot.
    fn keep_for_a_gone_run(
        &self,
        text: &str,
        gate: GateRun,
        code: i32,
    ) -> Result<WriteOutcome, Error> {
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
        let written = Written {
            stored: true,
            path: kept.to_string_lossy().into_owned(),
            history: None,
            placeholder: false,
            gate,
            auto_push: false,
            exit: code,
            note: format!(
                "(the background write it belongs to no longer exists: kept in history; {} is unchanged)",
                self.slot_path
            ),
        };
        Ok(WriteOutcome::done(written, None))
    }

    /// The draft passed the gate (or only its citations failed): into the slot.
    fn store_gated(&self, text: &str, gate: GateRun, code: i32) -> Result<WriteOutcome, Error> {
        let note = if code == 0 {
            "(gate: OK)"
        } else {
            "(gate: FAILED, exit 1 — fix the citations and write again)"
        };
        self.store_in_slot(text, false, gate, code, note)
    }

    /// Replace the slot with `text` (the chain records it; a placeholder never goes out).
    fn store_in_slot(
        &self,
        text: &str,
        placeholder: bool,
        gate: GateRun,
        exit: i32,
        note: &str,
    ) -> Result<WriteOutcome, Error> {
        let (history, warning) =
            store_slot(&self.store, &self.target, text.as_bytes(), self.opts.force)?;
        let written = Written {
            stored: true,
            path: self.slot_path.clone(),
            history,
            placeholder,
            gate,
            auto_push: !placeholder && crate::lifecycle::changed(&self.target).push_started,
            exit,
            note: note.to_string(),
        };
        Ok(WriteOutcome::done(written, warning))
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
    let auto_push = promoted && crate::lifecycle::promoted(run).push_started;
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
        note: match (code, promoted) {
            (0, true) => {
                "(gate: OK; the compaction is confirmed, so it is in the slot)".to_string()
            }
            (0, false) => format!(
                "(gate: OK; a candidate — it replaces {slot_path} once the client confirms the compaction)"
            ),
            _ => format!(
                "(gate: FAILED, exit 1 — a candidate that will not replace {slot_path}; fix the citations and write again)"
            ),
        },
    })
}
