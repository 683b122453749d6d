//! `hook pre-compact` (docs/hooks.md §3): before a compaction, steer the summary (stdout
//! becomes the compaction's custom instructions), record a background write in the store's run
//! directory — never touching the slot — and start a detached supervisor that runs the writer
//! with an ARGUMENT VECTOR: nothing from stdin ever reaches a shell or a command line; the
//! transcript path travels only inside `prompt.txt`. The supervisor that runs it is
//! `supervisor.rs`.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use super::claims::state_dir;
use super::input::HookInput;
use super::supervisor::{log, spawn_supervisor};
use super::texts;
use super::writer::Profile;
use crate::store::Target;
use crate::store::runs::{self, Job, Run};
use crate::store::slot::{self, create_private_dir};
use crate::store::{Store, now};

/// How the background writer runs: which client's headless mode ([`Profile`]), and whether the
/// compaction instructions are printed (a client that turns PreCompact's stdout into the
/// summary's custom instructions).
#[derive(Debug, Clone)]
pub(crate) struct WriterSpec {
    pub(crate) profile: Profile,
    /// The client's program, as its file finds it; `None`: there is none, no writer starts.
    pub(crate) program: Option<PathBuf>,
    pub(crate) instructions: bool,
    /// Set when the client has already compacted: the writer reads a copy of the transcript
    /// cut where the compaction began, and the run is confirmed from the start.
    pub(crate) compacted: Option<Compacted>,
}

/// A compaction that already happened, seen in the transcript itself.
#[derive(Debug, Clone)]
pub(crate) struct Compacted {
    /// The transcript's length before the compaction: the copy the writer reads ends here.
    pub(crate) cut: u64,
    /// Who confirmed it, for the run record.
    pub(crate) by: &'static str,
}

/// The writer program, when it is one: a path that is executable.
fn writer_program(spec: &WriterSpec) -> Option<PathBuf> {
    spec.program
        .clone()
        .filter(|p| crate::env::is_executable(p))
}

/// A random UUID v4, lowercase.
fn uuid_v4() -> String {
    let mut b = [0u8; 16];
    if getrandom::fill(&mut b).is_err() {
        // No entropy source: derive from time and pid; uniqueness is all that matters here.
        let seed = format!("{:?}{}", SystemTime::now(), std::process::id());
        use md5::Digest;
        b.copy_from_slice(&md5::Md5::digest(seed.as_bytes()));
    }
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let h: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &h[..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..]
    )
}

/// Run the hook: start the background writer of `spec`, and return the compaction
/// instructions when the client reads them. The summary is steered whether or not a writer
/// starts (what it must keep is the same), but it is told of a handoff being written in the
/// background only when a writer for this session is really at work: started now, or by an
/// earlier firing within the dedup window whose run is still writing. Declines are silent
/// (logged once past the dedup step); the slot is never changed here.
pub(crate) fn run(input: &HookInput, spec: &WriterSpec) -> Option<String> {
    let slot_path = input.target().and_then(|target| {
        let store = Store::locate().ok()?;
        if !writer_wanted(&store, &target) {
            return None;
        }
        let slot_path = store.path_of(&target.name).to_string_lossy().into_owned();
        start_writer(input, spec, &store, &target).then_some(slot_path)
    });
    spec.instructions
        .then(|| texts::compaction_instructions(slot_path.as_deref()))
}

/// Whether `handoff.writer` lets a compaction here start the writer, a second model run:
/// `auto` only in a repository in use, `on` anywhere `handoff.enabled` is not false, `off`
/// never.
fn writer_wanted(store: &Store, target: &Target) -> bool {
    use crate::settings::WriterMode;
    use crate::store::usage::Use;
    match target.settings().writer() {
        WriterMode::Off => false,
        WriterMode::On => Use::of(Some(store), target) != Use::Disabled,
        WriterMode::Auto => Use::of(Some(store), target).acts(),
    }
}

/// Start `profile`'s writer (`program`) for a client that neither reads compaction instructions
/// nor has compacted yet; prints nothing.
pub(crate) fn start(input: &HookInput, profile: Profile, program: Option<PathBuf>) {
    let spec = WriterSpec {
        profile,
        program,
        instructions: false,
        compacted: None,
    };
    run(input, &spec);
}

/// Steps 2–11 of the hook: record a run and start its supervisor. Whether a writer for this
/// session is at work when it returns.
fn start_writer(input: &HookInput, spec: &WriterSpec, store: &Store, target: &Target) -> bool {
    let (Some(sid), Some(transcript)) = (input.sid(), input.transcript.as_deref()) else {
        return false;
    };
    let transcript_file = crate::env::expand_home(transcript);
    if !crate::fs::metadata(&transcript_file).is_ok_and(|m| m.is_file())
        || crate::fs::File::open(&transcript_file).is_err()
    {
        return false;
    }
    let Some(writer) = writer_program(spec) else {
        return false;
    };
    let Some(state) = state_dir() else {
        return false;
    };
    if store.create().is_err() || create_private_dir(&state).is_err() {
        return false;
    }
    super::claims::clean_old(&state, ".lock");
    super::claims::clean_old(&state.join("claims"), "");
    let Some(_dedup) = dedup(&state, sid) else {
        // An earlier firing within the window: its writer, if it started, is still the one.
        return writer_at_work(store, sid);
    };
    let log_path = state.join("log.txt");
    let decline = |why: &str| {
        log(&log_path, &format!("session={sid} declined: {why}"));
        false
    };
    {
        let Ok(_slot_lock) = slot::lock(store, &target.name, Duration::from_secs(2)) else {
            return decline("slot locked");
        };
        if store.check_collision(target).is_err() {
            return decline("collision");
        }
    }
    let (id, run) = match record_run(
        spec,
        store,
        target,
        &writer,
        sid,
        &log_path,
        &transcript_file,
    ) {
        Ok(recorded) => recorded,
        Err(why) => return decline(why),
    };
    match spawn_supervisor(&run.dir) {
        Some(pid) => {
            log(
                &log_path,
                &format!(
                    "session={sid} write_session={id} spawned writer={} supervisor_pid={pid}",
                    writer.display()
                ),
            );
            true
        }
        None => {
            let _ = run.record_exit(store, "spawn-failed");
            decline("spawn failed")
        }
    }
}

/// Record the run of `spec`'s writer for session `sid`: its job and prompt, the files its
/// client needs, and (for a client that already compacted) the transcript as it was. The
/// writer's id and the run; else why not.
fn record_run(
    spec: &WriterSpec,
    store: &Store,
    target: &Target,
    writer: &Path,
    sid: &str,
    log_path: &Path,
    transcript_file: &Path,
) -> Result<(String, Run), &'static str> {
    let id = uuid_v4();
    let here = target.checkout();
    let timeout = crate::env::settings().fork_timeout;
    let dir = runs::run_dir(store, &id);
    let copy = dir.join(runs::TRANSCRIPT).to_string_lossy().into_owned();
    let read = if spec.compacted.is_some() {
        copy.clone()
    } else {
        transcript_file.to_string_lossy().into_owned()
    };
    let mut job = job(
        &spec.profile,
        writer,
        store,
        &here,
        &id,
        sid,
        log_path,
        timeout,
        &read,
    );
    job.slot = target.name.clone();
    job.started = now();
    job.slot_key = Some(crate::store::runs::slot_key(&store.path_of(&target.name)));
    let words = (spec.profile.name, spec.profile.explore);
    let compacted = spec.compacted.is_some();
    let text = texts::writer_prompt(words, compacted, &read, &here, &target.facts.reference);
    let run = Run::create(store, job, &text).map_err(|_| "store not writable")?;
    let failed = |why| {
        let _ = run.record_exit(store, "spawn-failed");
        why
    };
    // A file may name the places the writer reads (`@HERE@`, the checkout; `@READ@`, the
    // transcript's folder), as JSON strings' contents.
    let json = |s: &str| {
        let quoted = serde_json::to_string(s).unwrap_or_default();
        quoted.trim_matches('"').to_string()
    };
    let folder = Path::new(&read)
        .parent()
        .map_or_else(String::new, |p| p.to_string_lossy().into_owned());
    for (name, text) in spec.profile.files {
        let text = text
            .replace("@HERE@", &json(&here))
            .replace("@READ@", &json(&folder));
        if crate::durable::write(&dir.join(name), text.as_bytes(), None).is_err() {
            return Err(failed("store not writable"));
        }
    }
    if let Some(compacted) = &spec.compacted {
        let copied = crate::fs::File::open(transcript_file).map(|f| f.take(compacted.cut));
        let Ok(mut before) = copied else {
            return Err(failed("transcript unreadable"));
        };
        if slot::replace_from(Path::new(&copy), &mut before, None, None).is_err() {
            return Err(failed("store not writable"));
        }
        run.confirm(store, compacted.by);
    }
    Ok((id, run))
}

/// Whether a run of session `sid` is still writing.
fn writer_at_work(store: &Store, sid: &str) -> bool {
    let now = now();
    runs::all(store)
        .iter()
        .any(|r| r.job.session == sid && r.state(now) == runs::RunState::Writing)
}

#[allow(clippy::too_many_arguments)]
fn job(
    profile: &Profile,
    writer: &Path,
    store: &Store,
    here: &str,
    id: &str,
    sid: &str,
    log_path: &Path,
    timeout: u64,
    transcript: &str,
) -> Job {
    let model = crate::env::settings().author_model.clone();
    let inv = super::writer::invocation(
        profile,
        writer,
        id,
        here,
        &run_dir(store, id),
        transcript,
        model.as_deref(),
    );
    let store_dir = std::path::absolute(&store.dir).unwrap_or_else(|_| store.dir.clone());
    Job {
        argv: inv.argv,
        // A writer of the user's own that still runs `write` makes a candidate of this run.
        env: vec![
            (
                "HANDOFF_STORE_DIR".into(),
                store_dir.to_string_lossy().into_owned(),
            ),
            ("CONTEXT_ECONOMY_CHECKOUT".into(), here.into()),
            ("HANDOFF_WRITE_SESSION".into(), id.into()),
            ("HANDOFF_WRITER_CHILD".into(), "1".into()),
        ],
        cwd: here.into(),
        timeout,
        session: sid.into(),
        write_session: id.into(),
        log: log_path.to_string_lossy().into_owned(),
        slot: String::new(),
        started: 0,
        answer: inv.answer,
        resume: inv.resume,
        writer_cwd: inv.cwd,
        slot_key: None,
    }
}

/// A run's directory as an absolute path, for a writer's argument.
fn run_dir(store: &Store, id: &str) -> String {
    let dir = runs::run_dir(store, id);
    std::path::absolute(&dir)
        .unwrap_or(dir)
        .to_string_lossy()
        .into_owned()
}

/// The dedup step (docs/hooks.md §3.1 step 6): stamp `<state>/<sid>.lock` unless it was stamped
/// within the window (0 disables dedup). The file stays as the "write attempted" signal.
fn dedup(state: &Path, sid: &str) -> Option<crate::fs::File> {
    let window = Duration::from_secs(crate::env::settings().dedup_window);
    match super::claims::stamp(&state.join(format!("{sid}.lock")), Some(window)) {
        super::claims::Stamp::Fresh(file) => Some(file),
        super::claims::Stamp::Taken | super::claims::Stamp::Unavailable => None,
    }
}
