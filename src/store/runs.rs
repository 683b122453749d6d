//! Background writes in flight (`<store>/.runs/<id>/`). A compaction's writer records its work
//! here, never in the slot: the slot keeps its handoff until the replacement exists, passed the
//! gate, and the client confirmed that the compaction happened. Each step leaves its own file
//! (written atomically), so a reader sees at once whether a write is under way, failed, was
//! held back or was installed — without waiting out a timeout.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};

use super::change::{SlotChange, Wait};
use super::slot::{self, create_private_dir};
use super::{Store, epoch, now};
use crate::error::{Error, Input};

/// How many run directories are kept.
const RUNS_KEPT: usize = 10;
/// How long past its time limit a run without a recorded end still counts as writing.
const OVERDUE_GRACE: u64 = 60;
/// How long a hook waits for the slot lock when it promotes a candidate.
const HOOK_LOCK_WAIT: Duration = Duration::from_secs(2);

const JOB: &str = "job.json";
const PROMPT: &str = "prompt.txt";
/// The copy of the transcript a writer reads when the client compacted before it started.
pub(crate) const TRANSCRIPT: &str = "transcript.jsonl";
const PID: &str = "supervisor.pid";
const EXIT: &str = "exit";
const CANDIDATE: &str = "candidate.md";
const CANDIDATE_GATE: &str = "candidate.gate";
const CONFIRMED: &str = "confirmed";
const OUTCOME: &str = "outcome.json";
/// The writer's stdout and stderr, inside the run directory.
pub(crate) const WRITER_OUT: &str = "writer.out";
pub(crate) const WRITER_ERR: &str = "writer.err.log";
/// The gate's report on the writer's last answer.
pub(crate) const ANSWER_GATE: &str = "answer.gate.txt";

/// What the supervisor needs and what readers know of a run, written once to `job.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Job {
    pub(crate) argv: Vec<String>,
    pub(crate) env: Vec<(String, String)>,
    pub(crate) cwd: String,
    pub(crate) timeout: u64,
    /// The safe id of the session being compacted.
    pub(crate) session: String,
    /// The writer's own session id (also the run directory's name).
    pub(crate) write_session: String,
    pub(crate) log: String,
    /// The slot the result is for.
    #[serde(default)]
    pub(crate) slot: String,
    /// When PreCompact recorded the run (epoch seconds).
    #[serde(default)]
    pub(crate) started: i64,
    /// Where the writer's final answer (the document) is read from.
    #[serde(default)]
    pub(crate) answer: Answer,
    /// The argument vector that asks the same writer session again (its stdin the retry
    /// request); `None`: a retry starts `argv` afresh with the whole story on stdin.
    #[serde(default)]
    pub(crate) resume: Option<Vec<String>>,
    /// Where the writer runs, when not in the checkout (`cwd`).
    #[serde(default)]
    pub(crate) writer_cwd: Option<String>,
    /// What the slot said when the run began ([`slot_key`]; empty: no slot): a write that lands
    /// while the writer works — in the same second too — supersedes it. `None` in a run
    /// recorded before, which compares times.
    #[serde(default)]
    pub(crate) slot_key: Option<String>,
}

/// A slot's text as a run compares it: `progress:`, checkout and line numbers aside, hashed;
/// empty for no slot.
pub(crate) fn slot_key(path: &Path) -> String {
    crate::fs::read(path)
        .map(|b| crate::text::hex_md5(super::chain::text_key(&b).as_bytes()))
        .unwrap_or_default()
}

/// Where a writer's final answer is found once it exited.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Answer {
    /// The writer stores its document itself (`write` with `HANDOFF_WRITE_SESSION`); a run
    /// recorded before answers existed.
    #[default]
    Stored,
    /// Its stdout is one JSON object whose string field of this name is the answer
    /// (`claude -p --output-format json`: `result`).
    JsonField(String),
    /// It writes its last message to this file of the run directory.
    File(String),
    /// Its stdout is the answer, as it printed it.
    Stdout,
    /// Its stdout is JSON events, one a line; the answer is the `part.text` of the last event
    /// of type `text` (a client that streams its run as JSON events).
    LastText,
}

/// One background write.
#[derive(Debug, Clone)]
pub(crate) struct Run {
    pub(crate) dir: PathBuf,
    pub(crate) job: Job,
}

/// Where a run stands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub(crate) enum RunState {
    /// The writer is still at work.
    Writing,
    /// The writer ended without a candidate: its exit code, `timeout`, `signal-N`,
    /// `spawn-failed` or `supervisor-gone`.
    Failed { rc: String },
    /// A candidate passed the gate but is not in the slot: the compaction was never confirmed
    /// (or it could not be installed). `kept` is its copy among the slot's versions, once the
    /// writer has ended (`restore` brings it in).
    Held {
        confirmed: bool,
        kept: Option<String>,
    },
    /// The gate refused the writer's answer (its exit): it never enters the slot. `kept` is
    /// its copy apart from the versions (`.refused/`), once the writer has ended.
    Refused {
        gate_exit: i32,
        kept: Option<String>,
    },
    /// The candidate replaced the slot.
    Promoted,
    /// A newer handoff was written meanwhile; the candidate went to history instead.
    Superseded { kept: Option<String> },
}

#[derive(Debug, Serialize, Deserialize)]
struct Outcome {
    outcome: String,
    kept: Option<String>,
}

/// `<store>/.runs/`.
pub(crate) fn runs_dir(store: &Store) -> PathBuf {
    store.dir.join(".runs")
}

/// `<store>/.runs/<id>/`: the directory of the run with writer id `id`.
pub(crate) fn run_dir(store: &Store, id: &str) -> PathBuf {
    runs_dir(store).join(id)
}

fn write_small(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    slot::replace(path, bytes, None, None)
}

fn mtime_epoch(path: &Path) -> Option<i64> {
    crate::fs::symlink_metadata(path)
        .ok()?
        .modified()
        .ok()
        .map(epoch)
}

impl Run {
    /// Record a new run: its directory, `prompt.txt` and `job.json`.
    pub(crate) fn create(store: &Store, job: Job, prompt: &str) -> Result<Run, Error> {
        let dir = run_dir(store, &job.write_session);
        create_private_dir(&dir)?;
        write_small(&dir.join(PROMPT), prompt.as_bytes())?;
        let bytes = serde_json::to_vec(&job).map_err(|e| Error::Input(Input::Encode(e)))?;
        write_small(&dir.join(JOB), &bytes)?;
        Ok(Run { dir, job })
    }

    /// The run in `dir`, if it has a readable `job.json`.
    pub(crate) fn load(dir: &Path) -> Option<Run> {
        let bytes = crate::fs::read(dir.join(JOB)).ok()?;
        let job: Job = serde_json::from_slice(&bytes).ok()?;
        Some(Run {
            dir: dir.to_path_buf(),
            job,
        })
    }

    /// The run with writer id `id`.
    pub(crate) fn find(store: &Store, id: &str) -> Option<Run> {
        if !super::naming::is_safe_id(id) {
            return None;
        }
        Run::load(&run_dir(store, id))
    }

    pub(crate) fn prompt_path(&self) -> PathBuf {
        self.dir.join(PROMPT)
    }

    pub(crate) fn candidate_path(&self) -> PathBuf {
        self.dir.join(CANDIDATE)
    }

    /// The supervisor records its pid once it has its own session.
    pub(crate) fn record_supervisor(&self, pid: u32) {
        let _ = write_small(&self.dir.join(PID), pid.to_string().as_bytes());
    }

    fn supervisor_pid(&self) -> Option<i32> {
        crate::fs::read_to_string(self.dir.join(PID))
            .ok()?
            .trim()
            .parse()
            .ok()
    }

    fn exit(&self) -> Option<String> {
        crate::fs::read_to_string(self.dir.join(EXIT))
            .ok()
            .map(|s| s.trim().to_string())
    }

    /// The candidate's gate exit code, when a whole candidate exists.
    fn candidate_gate(&self) -> Option<i32> {
        let gate = crate::fs::read_to_string(self.dir.join(CANDIDATE_GATE)).ok()?;
        let code = gate.trim().parse().ok()?;
        self.candidate_path().is_file().then_some(code)
    }

    /// Whether the slot holds this run's result now (read or not: `progress:` aside) — its own
    /// write, not another session's or a manual one that landed since.
    pub(crate) fn result_in_slot(&self, store: &Store) -> bool {
        let key = |p: &Path| crate::fs::read(p).ok().map(|b| super::chain::text_key(&b));
        key(&self.candidate_path()).is_some_and(|c| key(&store.path_of(&self.job.slot)) == Some(c))
    }

    pub(crate) fn confirmed(&self) -> bool {
        self.dir.join(CONFIRMED).is_file()
    }

    fn outcome(&self) -> Option<Outcome> {
        let bytes = crate::fs::read(self.dir.join(OUTCOME)).ok()?;
        serde_json::from_slice(&bytes).ok()
    }

    fn set_outcome(&self, outcome: &str, kept: Option<&Path>) -> Result<(), Error> {
        let o = Outcome {
            outcome: outcome.into(),
            kept: kept.map(|p| p.to_string_lossy().into_owned()),
        };
        let bytes = serde_json::to_vec(&o).map_err(|e| Error::Input(Input::Encode(e)))?;
        write_small(&self.dir.join(OUTCOME), &bytes)
    }

    /// Seconds since PreCompact recorded the run.
    pub(crate) fn age(&self, now: i64) -> u64 {
        (now - self.job.started).max(0) as u64
    }

    /// Where the run stands now.
    pub(crate) fn state(&self, now: i64) -> RunState {
        let outcome = self.outcome();
        match outcome.as_ref().map(|o| o.outcome.as_str()) {
            Some("promoted") => return RunState::Promoted,
            Some("superseded") => {
                return RunState::Superseded {
                    kept: outcome.and_then(|o| o.kept),
                };
            }
            _ => {}
        }
        let exit = self.exit();
        // The supervisor ends its writer at the time limit (and KILLs it 5 s later), so a run
        // past the limit and a grace minute cannot still be writing — even if its supervisor's
        // pid has been reused by another process since.
        let overdue = self.age(now) > self.job.timeout + OVERDUE_GRACE;
        if exit.is_none() && !overdue {
            let alive = match self.supervisor_pid() {
                Some(pid) => slot::pid_alive(pid),
                // Not started yet: give the spawn its budget.
                None => true,
            };
            if alive {
                return RunState::Writing;
            }
        }
        match self.candidate_gate() {
            Some(0) => {
                return RunState::Held {
                    confirmed: self.confirmed(),
                    kept: outcome.and_then(|o| o.kept),
                };
            }
            Some(gate_exit) => {
                return RunState::Refused {
                    gate_exit,
                    kept: outcome.and_then(|o| o.kept),
                };
            }
            None => {}
        }
        let gone = if overdue {
            "overdue"
        } else {
            "supervisor-gone"
        };
        RunState::Failed {
            rc: exit.unwrap_or_else(|| gone.into()),
        }
    }

    /// Store the writer's gated document as this run's candidate, then promote it if the
    /// compaction is already confirmed. Returns the state afterwards.
    pub(crate) fn record_candidate(
        &self,
        store: &Store,
        bytes: &[u8],
        gate_exit: i32,
    ) -> Result<RunState, Error> {
        // The gate file goes first and comes back last, so a kill in between never pairs a
        // new candidate with an old verdict.
        let gate = self.dir.join(CANDIDATE_GATE);
        if gate.exists() {
            slot::remove(&gate).map_err(|e| Error::io(&gate, e))?;
        }
        write_small(&self.candidate_path(), bytes)?;
        write_small(&gate, gate_exit.to_string().as_bytes())?;
        let change = SlotChange::of_slot(store, &self.job.slot, Wait::Cli)?;
        self.promote_locked(store, &change)?;
        drop(change);
        Ok(self.state(now()))
    }

    /// The confirmation that the compaction happened (PostCompact, or SessionStart with
    /// `source: compact`); promotes a candidate that is ready. Whether this call promoted it.
    pub(crate) fn confirm(&self, store: &Store, by: &str) -> bool {
        if !self.confirmed() {
            let _ = write_small(&self.dir.join(CONFIRMED), by.as_bytes());
        }
        let before = self.state(now()) == RunState::Promoted;
        if let Ok(change) = SlotChange::of_slot(store, &self.job.slot, Wait::Hook(HOOK_LOCK_WAIT)) {
            let _ = self.promote_locked(store, &change);
        }
        !before && self.state(now()) == RunState::Promoted
    }

    /// The supervisor's last word: the writer's exit, then promotion if everything is in place;
    /// a candidate that stays out of the slot is kept in the slot's history, so `history` and
    /// `restore` can reach it. Whether this call promoted the candidate.
    pub(crate) fn record_exit(&self, store: &Store, rc: &str) -> bool {
        let before = self.state(now()) == RunState::Promoted;
        let _ = write_small(&self.dir.join(EXIT), rc.as_bytes());
        let Ok(change) = SlotChange::of_slot(store, &self.job.slot, Wait::Hook(HOOK_LOCK_WAIT))
        else {
            return false;
        };
        if matches!(self.promote_locked(store, &change), Ok(true)) {
            return !before && self.state(now()) == RunState::Promoted;
        }
        // A candidate the gate passed is kept among the slot's versions; one it refused is kept
        // apart, never taking one of the ten places nor offered by `restore`.
        match self.candidate_gate() {
            Some(0) if self.outcome().is_none() => {
                if let Ok(kept) = slot::keep_file(
                    store,
                    &self.job.slot,
                    &self.candidate_path(),
                    SystemTime::now(),
                ) {
                    slot::retain(store, &self.job.slot);
                    let _ = self.set_outcome("held", Some(&kept));
                }
            }
            Some(_) if self.outcome().is_none() => {
                if let Ok(kept) = slot::keep_refused(store, &self.job.slot, &self.candidate_path())
                {
                    let _ = self.set_outcome("refused", Some(&kept));
                }
            }
            _ => {}
        }
        false
    }

    /// Promote under the slot lock (held by the caller) when the candidate passed the gate and
    /// the compaction is confirmed. A slot written after the run began is newer than the
    /// candidate: the candidate goes to history instead. `Ok(true)` when the run is settled.
    fn promote_locked(&self, store: &Store, change: &SlotChange) -> Result<bool, Error> {
        if let Some(o) = self.outcome()
            && o.outcome != "held"
        {
            return Ok(true);
        }
        if self.candidate_gate() != Some(0) || !self.confirmed() {
            return Ok(false);
        }
        let slot_path = store.path_of(&self.job.slot);
        let written_since = match &self.job.slot_key {
            Some(key) => slot_key(&slot_path) != *key,
            None => mtime_epoch(&slot_path).is_some_and(|m| m > self.job.started),
        };
        if written_since {
            let kept = slot::keep_file(
                store,
                &self.job.slot,
                &self.candidate_path(),
                SystemTime::now(),
            )?;
            slot::retain(store, &self.job.slot);
            self.set_outcome("superseded", Some(&kept))?;
            return Ok(true);
        }
        let bytes = crate::fs::read(self.candidate_path())
            .map_err(|e| Error::io(&self.candidate_path(), e))?;
        change.replace(&bytes)?;
        self.set_outcome("promoted", None)?;
        Ok(true)
    }
}

impl RunState {
    /// The one word for this outcome: the run record, the writer log, `status`, `read` and the
    /// JSON all say it.
    pub(crate) fn word(&self) -> &'static str {
        match self {
            RunState::Writing => "writing",
            RunState::Failed { .. } => "failed",
            RunState::Held { .. } => "held",
            RunState::Refused { .. } => "refused",
            RunState::Promoted => "promoted",
            RunState::Superseded { .. } => "superseded",
        }
    }
}

/// Every run, newest first.
pub(crate) fn all(store: &Store) -> Vec<Run> {
    let Ok(entries) = crate::fs::read_dir(runs_dir(store)) else {
        return Vec::new();
    };
    let mut runs: Vec<Run> = entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter_map(|e| Run::load(&e.path()))
        .collect();
    runs.sort_by_key(|r| std::cmp::Reverse(r.job.started));
    runs
}

/// The run readers of slot `name` must hear about: the newest one for the slot that began at
/// or after the slot's last write (an older run's result is already in the slot or history),
/// unless the slot holds its candidate already (installed by `restore`, say, and read since).
pub(crate) fn latest_for(store: &Store, name: &str) -> Option<Run> {
    all(store)
        .into_iter()
        .find(|r| r.job.slot == name)
        .filter(|r| r.is_news(store))
}

impl Run {
    /// Whether a reader of its slot must hear of this run: it began at or after the slot's last
    /// write (an older run's result is already in the slot or history), and the slot does not
    /// hold its result.
    pub(crate) fn is_news(&self, store: &Store) -> bool {
        let slot_mtime = mtime_epoch(&store.path_of(&self.job.slot));
        slot_mtime.is_none_or(|m| self.job.started >= m) && !self.result_in_slot(store)
    }
}

/// Confirm the newest unconfirmed run of session `session` (a safe id); the run, when this
/// confirmation promoted its candidate into the slot.
pub(crate) fn confirm_session(store: &Store, session: &str, by: &str) -> Option<Run> {
    let run = all(store)
        .into_iter()
        .find(|r| r.job.session == session && !r.confirmed())?;
    run.confirm(store, by).then_some(run)
}

/// Whether the run in `dir` may still be at work: its supervisor or writer alive, or younger
/// than its time limit plus a margin (a run being recorded has no readable job yet). `prune`
/// never removes such a run: its writer's result would have nowhere to go.
pub(crate) fn live(dir: &Path) -> bool {
    let Some(run) = Run::load(dir) else {
        return mtime_epoch(dir).is_some_and(|m| now() - m < OVERDUE_GRACE as i64);
    };
    let now = now();
    run.state(now) == RunState::Writing || run.age(now) <= run.job.timeout + OVERDUE_GRACE
}

/// Delete run directories beyond the newest 10, never one whose writer is still at work.
pub(crate) fn prune(store: &Store) {
    let now = now();
    for run in all(store).into_iter().skip(RUNS_KEPT) {
        if run.state(now) != RunState::Writing {
            let _ = crate::fs::remove_dir_all(&run.dir);
        }
    }
}

/// One line about a background write that did not put its result in the slot, for a reader
/// that is about to see the previous handoff (or none). `None` when there is nothing to say.
/// Every command it names works in that state (`checkout` is the target's): a held answer is
/// the newest kept version (`restore`); a refused one is named for reference only — the gate
/// refused it, so it is never offered in place of the handoff the reader has.
pub(crate) fn background_note(state: &RunState, age: u64, checkout: &str) -> Option<String> {
    let me = crate::shell::self_command();
    let here = crate::shell::quote(checkout);
    match state {
        RunState::Writing | RunState::Promoted => None,
        RunState::Failed { rc } => Some(format!(
            "The background write started {} ago ended without a handoff (writer exit: {rc}); nothing newer is coming from it.",
            super::gap(age)
        )),
        RunState::Held { confirmed, kept } => {
            let why = if *confirmed {
                "it could not be installed"
            } else {
                "the compaction it was written for was never confirmed by the client"
            };
            let place = match kept {
                Some(k) => {
                    format!(" It is kept in history at `{k}`; `{me} restore {here}` installs it.")
                }
                None => String::new(),
            };
            Some(format!(
                "A background write started {} ago produced a newer handoff that was NOT installed, because {why}.{place}",
                super::gap(age)
            ))
        }
        RunState::Refused { gate_exit, kept } => {
            let place = match (kept, gate_exit) {
                (Some(k), 1) => format!(" It is kept at `{k}` for reference."),
                (Some(k), _) => format!(
                    " It is kept at `{k}` for reference; it breaks the handoff format, so it cannot be stored as it is."
                ),
                (None, _) => String::new(),
            };
            Some(format!(
                "A background write started {} ago produced a handoff the gate refused (exit {gate_exit}), so it was NOT installed.{place}",
                super::gap(age)
            ))
        }
        RunState::Superseded { kept } => Some(format!(
            "A background write started {} ago finished after a newer handoff was written; its result is kept in history{}.",
            super::gap(age),
            kept.as_deref()
                .map(|k| format!(" at `{k}`"))
                .unwrap_or_default()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(started: i64, timeout: u64) -> Job {
        Job {
            argv: Vec::new(),
            env: Vec::new(),
            cwd: String::new(),
            timeout,
            session: "s".into(),
            write_session: "w".into(),
            log: String::new(),
            slot: "x.md".into(),
            started,
            answer: Answer::Stored,
            resume: None,
            writer_cwd: None,
            slot_key: None,
        }
    }

    #[test]
    fn a_run_is_writing_only_while_its_supervisor_lives_and_its_time_is_not_long_past() {
        let dir = tempfile::tempdir().expect("temp dir");
        let run = Run {
            dir: dir.path().to_path_buf(),
            job: job(1_000, 600),
        };
        // Our own pid is alive: within the limit, it is writing.
        run.record_supervisor(std::process::id());
        assert_eq!(run.state(1_000 + 600), RunState::Writing);
        // Long past the limit with no recorded end: failed, whatever the pid now names.
        assert_eq!(
            run.state(1_000 + 600 + OVERDUE_GRACE as i64 + 1),
            RunState::Failed {
                rc: "overdue".into()
            }
        );
        // A recorded end wins at once.
        let _ = write_small(&dir.path().join(EXIT), b"3");
        assert_eq!(run.state(1_001), RunState::Failed { rc: "3".into() });
    }
}
