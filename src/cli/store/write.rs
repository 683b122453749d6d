//! `write` (docs/store.md §9.3): normalise the draft's envelope, refuse collisions, gate it
//! in-process, and store it atomically under the slot lock with the previous version kept.
//! A malformed draft (gate exit 2) or a credential never replaces a stored handoff.

use std::io::{IsTerminal, Read, Write};

use serde::Serialize;

use super::{Format, Ui, print, print_json};
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
pub struct Args {
    /// The checkout the handoff is for.
    #[arg(long, value_name = "DIR")]
    pub checkout: Option<String>,
    /// Read the document from FILE (`-` for stdin).
    #[arg(long, value_name = "FILE", conflicts_with = "placeholder")]
    pub from: Option<String>,
    /// Write the placeholder (progress: writing) instead of a document.
    #[arg(long)]
    pub placeholder: bool,
    /// Replace a slot that holds another branch's or repository's handoff.
    #[arg(long)]
    pub force: bool,
    /// Store without running the gate (credentials are still refused).
    #[arg(long)]
    pub no_gate: bool,
}

pub fn run(args: &Args, ui: &mut Ui) -> Result<Exit, Error> {
    write(args, ui.format, ui.out, ui.err)
}

fn refuse(why: Draft) -> Error {
    Error::Input(Input::Draft(why))
}

/// Read and check the draft (docs/store.md §9.3 input checks).
fn read_draft(from: Option<&str>) -> Result<String, Error> {
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

/// Store `bytes` in the target's slot under the CLI lock; returns the kept history file.
/// Every stored version joins the branch's chain (local refs only): a record that fails does
/// not fail the write — the version is stored — but is said on `err`, and the next record
/// catches up from the slot's history.
pub fn store_slot(
    store: &Store,
    target: &Target,
    bytes: &[u8],
    force: bool,
    err: &mut dyn Write,
) -> Result<Option<String>, Error> {
    store.create()?;
    let change = SlotChange::begin(store, target, Wait::Cli)?;
    if !force {
        store.check_collision(target)?;
    }
    let kept = change.replace(bytes)?;
    if let Err(e) = change.finish() {
        let _ = writeln!(
            err,
            "handoff-store: warning: the handoff is stored, but not yet recorded in git ({e}); the next write records it"
        );
    }
    Ok(kept.map(|p| p.to_string_lossy().into_owned()))
}

#[derive(Serialize)]
struct GateJson {
    run: bool,
    exit: Option<i32>,
    report: Option<serde_json::Value>,
}

#[derive(Serialize)]
struct WriteJson {
    stored: bool,
    path: String,
    history: Option<String>,
    placeholder: bool,
    gate: GateJson,
    /// Whether a background push was started (`handoff.autoPush`).
    auto_push: bool,
    exit: i32,
}

fn write(
    opts: &Args,
    format: Format,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<Exit, Error> {
    let draft = if opts.placeholder {
        None
    } else {
        Some(read_draft(opts.from.as_deref())?)
    };
    let target = Target::resolve(opts.checkout.as_deref()).map_err(|f| Error::Target(f.why))?;
    let store = Store::open()?;
    let slot_path = store.path_of(&target.name).to_string_lossy().into_owned();
    let checkout = target.checkout();

    // Stored without the gate: the placeholder (which passes it by construction) and --no-gate.
    let ungated = |text: &str,
                   placeholder: bool,
                   out: &mut dyn Write,
                   err: &mut dyn Write|
     -> Result<Exit, Error> {
        let history = store_slot(&store, &target, text.as_bytes(), opts.force, err)?;
        let gate = GateJson {
            run: false,
            exit: None,
            report: None,
        };
        let result = WriteJson {
            stored: true,
            path: slot_path.clone(),
            history,
            placeholder,
            gate,
            auto_push: !placeholder && crate::lifecycle::changed(&target).push_started,
            exit: 0,
        };
        let note = if placeholder {
            "(placeholder, progress: writing)"
        } else {
            "(gate: not run, --no-gate)"
        };
        finish(out, format, &result, note)
    };

    let run = background_run(&store);
    // A writer's result whose run no longer exists (pruned, removed) has no confirmed
    // compaction behind it: it is kept in history, never put in the slot.
    let orphan = run.is_none() && crate::env::settings().write_session.is_some();
    if orphan && opts.no_gate {
        return Err(Error::Usage(Usage::AlwaysGated));
    }
    if let Some(run) = &run {
        if opts.placeholder || opts.no_gate {
            return Err(Error::Usage(Usage::GatedNoPlaceholder));
        }
        if run.job.slot != target.name {
            return Err(refuse(Draft::OtherSlot {
                run: run.job.slot.clone(),
                target: target.name.clone(),
            }));
        }
    }

    let Some(draft) = draft else {
        let session = crate::env::settings().write_session.clone();
        let text = placeholder::document(
            &target.facts.reference,
            &checkout,
            &target.facts.head,
            session.as_deref(),
            crate::env::settings().fork_timeout,
        );
        return ungated(&text, true, out, err);
    };

    let text = target.normalise(&draft)?;
    let doc = Document::parse(&text.replace('\r', ""));

    if opts.no_gate {
        // Skipping the format check must never let a credential into the store.
        let findings = gate::contract::check(&doc, &gate::HeaderCheckout::Absent);
        let secrets: Vec<_> = findings.iter().filter(|f| f.code == "secret").collect();
        if !secrets.is_empty() {
            for f in secrets {
                let _ = writeln!(err, "ERROR    {}", f.message);
            }
            return Err(Error::NotStored {
                slot: slot_path,
                why: Refusal::Credential,
            });
        }
        return ungated(&text, false, out, err);
    }

    // The collision is refused before the gate runs (and again under the lock).
    if !opts.force {
        store.check_collision(&target)?;
    }
    let input_name = opts.from.clone().unwrap_or_else(|| "-".into());
    let report = crate::report::run_gate::document(&doc, &input_name, Some(&checkout));
    if format == Format::Text {
        let lines: Vec<(Stream, String)> = report.text_lines();
        super::super::emit(&lines, out, err).map_err(Error::Output)?;
    }
    let code = report.exit_code;
    let gate_json = |r: &crate::report::Report| GateJson {
        run: true,
        exit: Some(code),
        report: Some(r.json()),
    };
    if code == 2 {
        if format == Format::Json {
            let result = WriteJson {
                stored: false,
                path: slot_path.clone(),
                history: None,
                placeholder: false,
                gate: gate_json(&report),
                auto_push: false,
                exit: 2,
            };
            print_json(out, &result)?;
        }
        return Err(Error::NotStored {
            slot: slot_path,
            why: Refusal::Malformed,
        });
    }
    if let Some(run) = run {
        return write_candidate(&store, &target, &run, &text, code, format, out);
    }
    if orphan {
        let kept = {
            let _lock = slot::lock_cli(&store, &target.name)?;
            let kept = slot::keep_bytes(
                &store,
                &target.name,
                text.as_bytes(),
                std::time::SystemTime::now(),
            )?;
            slot::retain(&store, &target.name);
            kept
        };
        let result = WriteJson {
            stored: true,
            path: kept.to_string_lossy().into_owned(),
            history: None,
            placeholder: false,
            gate: gate_json(&report),
            auto_push: false,
            exit: code,
        };
        let note = format!(
            "(the background write it belongs to no longer exists: kept in history; {slot_path} is unchanged)"
        );
        return finish(out, format, &result, &note);
    }
    let history = store_slot(&store, &target, text.as_bytes(), opts.force, err)?;
    let result = WriteJson {
        stored: true,
        path: slot_path,
        history,
        placeholder: false,
        gate: gate_json(&report),
        auto_push: crate::lifecycle::changed(&target).push_started,
        exit: code,
    };
    let note = if code == 0 {
        "(gate: OK)"
    } else {
        "(gate: FAILED, exit 1 — fix the citations and write again)"
    };
    finish(out, format, &result, note)
}

/// Store a background writer's gated document as its run's candidate; it reaches the slot
/// only once it passed the gate and the compaction is confirmed.
fn write_candidate(
    store: &Store,
    target: &Target,
    run: &Run,
    text: &str,
    code: i32,
    format: Format,
    out: &mut dyn Write,
) -> Result<Exit, Error> {
    let slot_path = store.path_of(&target.name).to_string_lossy().into_owned();
    let state = run.record_candidate(store, text.as_bytes(), code)?;
    let promoted = state == RunState::Promoted;
    // In the slot now: it joins the chain and travels like any written version.
    let auto_push = promoted && crate::lifecycle::promoted(run).push_started;
    let result = WriteJson {
        stored: true,
        path: if promoted {
            slot_path.clone()
        } else {
            run.candidate_path().to_string_lossy().into_owned()
        },
        history: None,
        placeholder: false,
        gate: GateJson {
            run: true,
            exit: Some(code),
            report: None,
        },
        auto_push,
        exit: code,
    };
    let note = match (code, promoted) {
        (0, true) => "(gate: OK; the compaction is confirmed, so it is in the slot)".to_string(),
        (0, false) => format!(
            "(gate: OK; a candidate — it replaces {slot_path} once the client confirms the compaction)"
        ),
        _ => format!(
            "(gate: FAILED, exit 1 — a candidate that will not replace {slot_path}; fix the citations and write again)"
        ),
    };
    finish(out, format, &result, &note)
}

fn finish(
    out: &mut dyn Write,
    format: Format,
    result: &WriteJson,
    note: &str,
) -> Result<Exit, Error> {
    match format {
        Format::Json => print_json(out, result)?,
        Format::Text => {
            let mut text = format!("\nstored   {} {note}\n", result.path);
            if let Some(h) = &result.history {
                text.push_str(&format!("history  {h}\n"));
            }
            if result.auto_push {
                text.push_str("pushing  in the background (handoff.autoPush)\n");
            }
            print(out, &text)?;
        }
    }
    Ok(Exit::of_gate(result.exit))
}
