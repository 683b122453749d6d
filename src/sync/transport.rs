//! The network half of sync, and the only place the product spawns `git`: `git push` and
//! `git fetch` by argv (never a shell), because the user's own git carries their credentials,
//! SSH configuration and URL rewrites. Push never forces; its per-ref result is read from
//! `--porcelain`, so "the remote moved" and "the remote refused" are told apart.

use std::path::Path;
use std::process::{Command, Stdio};

use serde::Serialize;

use crate::error::{Error, External, GitCommand};

/// How the remote answered one pushed ref.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum PushStatus {
    /// Created or moved forward.
    Pushed,
    /// Deleted (`push --prune`).
    Deleted,
    UpToDate,
    /// The remote's ref moved (not a fast-forward, or a lease no longer held): pull first.
    Moved,
    /// The remote refused the update (a hook, permissions, a full disk).
    Refused,
    /// The remote could not lock the ref: another push at work there, or a lock file a killed
    /// one left (which no pull clears).
    Locked,
}

/// One line of `git push --porcelain`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct RefUpdate {
    /// The remote ref.
    pub(crate) reference: String,
    pub(crate) status: PushStatus,
    /// git's summary (`[rejected] (fetch first)`, `abc..def`, ...).
    pub(crate) summary: String,
}

/// Environment variables that would make git act on another repository than the target's.
const REPOSITORY_VARS: &[&str] = &[
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_COMMON_DIR",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_NAMESPACE",
    "GIT_PREFIX",
];

fn git(dir: &Path, background: bool) -> Command {
    let mut cmd = Command::new("git");
    cmd.current_dir(dir);
    for var in REPOSITORY_VARS {
        cmd.env_remove(var);
    }
    if background {
        // Nobody is there to answer a prompt.
        cmd.env("GIT_TERMINAL_PROMPT", "0")
            .env("GIT_ASKPASS", "true")
            .env("SSH_ASKPASS", "true")
            .stdin(Stdio::null());
    }
    cmd
}

fn spawn_error(e: std::io::Error) -> Error {
    Error::External(External::NoGit(e))
}

/// git ran `command` against `remote` and failed; the end of what it said.
fn failed(command: GitCommand, remote: &str, stderr: &[u8]) -> Error {
    Error::External(External::GitFailed {
        command,
        remote: remote.to_string(),
        said: tail(stderr),
    })
}

/// The last few lines git printed on stderr, for an error message.
fn tail(stderr: &[u8]) -> String {
    let text = String::from_utf8_lossy(stderr);
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let last = &lines[lines.len().saturating_sub(3)..];
    // git names a lock it could not take early, then explains at length: keep its name whole.
    match lines.iter().find(|l| l.contains(".lock")) {
        Some(lock) if !last.contains(lock) => format!("{lock} / {}", last.join(" / ")),
        _ => last.join(" / "),
    }
}

/// `git fetch <remote> +refs/handoffs/*:refs/handoff-remotes/<remote>/*` in `dir`.
pub(crate) fn fetch(
    dir: &Path,
    remote: &str,
    refspecs: &[String],
    background: bool,
) -> Result<(), Error> {
    let output = git(dir, background)
        .args([
            "fetch",
            "--quiet",
            "--no-tags",
            "--no-write-fetch-head",
            // No `git maintenance` started behind a fetch of ours (its lock outlives a kill).
            "--no-auto-maintenance",
            "--",
        ])
        .arg(remote)
        .args(refspecs)
        .stdout(Stdio::null())
        .output()
        .map_err(spawn_error)?;
    if output.status.success() {
        return Ok(());
    }
    Err(failed(GitCommand::Fetch, remote, &output.stderr))
}

/// What a remote holds now, as `git ls-remote` tells it: its branches, and its chains (branch →
/// id).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct RemoteRefs {
    pub(crate) branches: std::collections::HashSet<String>,
    pub(crate) chains: std::collections::HashMap<String, String>,
}

/// `git ls-remote <remote> refs/heads/* refs/handoffs/*` in `dir` (the user's git, with their
/// credentials); in the background bounded in time like a push.
pub(crate) fn remote_refs(dir: &Path, remote: &str, background: bool) -> Result<RemoteRefs, Error> {
    let mut cmd = git(dir, background);
    cmd.args(["ls-remote", "--"])
        .arg(remote)
        .args(["refs/heads/*", "refs/handoffs/*"]);
    let output = if background {
        bounded(cmd, push_time_limit())?
    } else {
        cmd.stderr(Stdio::piped()).output().map_err(spawn_error)?
    };
    if !output.status.success() {
        return Err(failed(GitCommand::LsRemote, remote, &output.stderr));
    }
    Ok(parse_ls_remote(&String::from_utf8_lossy(&output.stdout)))
}

/// `git ls-remote` lines: `<id>\t<ref>`.
fn parse_ls_remote(text: &str) -> RemoteRefs {
    let mut out = RemoteRefs::default();
    for (id, name) in text.lines().filter_map(|l| l.split_once('\t')) {
        if let Some(b) = name.strip_prefix("refs/heads/") {
            out.branches.insert(b.to_string());
        } else if let Some(b) = name.strip_prefix("refs/handoffs/") {
            out.chains.insert(b.to_string(), id.to_string());
        }
    }
    out
}

/// `git push --porcelain <remote> <refspecs>` in `dir`, with a lease per deleted ref. Never
/// forces. Returns the remote's answer per ref; an error only when git reported no ref at all
/// (the remote could not be reached or read).
pub(crate) fn push(
    dir: &Path,
    remote: &str,
    refspecs: &[String],
    leases: &[String],
    background: bool,
) -> Result<Vec<RefUpdate>, Error> {
    let mut cmd = git(dir, background);
    cmd.args(["push", "--porcelain", "--no-verify"]);
    for lease in leases {
        cmd.arg(format!("--force-with-lease={lease}"));
    }
    cmd.arg("--").arg(remote).args(refspecs);
    let output = if background {
        bounded(cmd, push_time_limit())?
    } else {
        cmd.output().map_err(spawn_error)?
    };
    let updates = parse_porcelain(&String::from_utf8_lossy(&output.stdout));
    if updates.is_empty() && !output.status.success() {
        return Err(failed(GitCommand::Push, remote, &output.stderr));
    }
    Ok(updates)
}

/// `git push --prune` of `glob` (`<scratch>/*:refs/handoffs/*`): every remote chain without a
/// scratch ref is deleted. The lease is our pre-push hook in `hooks` (`core.hooksPath` for this
/// one command, see [`super::lease`]), and a negative fetch refspec keeps git from touching the
/// remote-tracking refs one by one (the caller updates them in one transaction). Atomic where
/// the remote allows it (one ref transaction there); otherwise one by one.
pub(crate) fn prune(
    dir: &Path,
    remote: &str,
    glob: &str,
    hooks: &Path,
    background: bool,
) -> Result<Vec<RefUpdate>, Error> {
    let run = |atomic: bool| -> Result<std::process::Output, Error> {
        let mut cmd = git(dir, background);
        cmd.arg("-c")
            .arg(format!("remote.{remote}.fetch=^refs/handoffs/*"))
            .arg("-c")
            .arg({
                let mut setting = std::ffi::OsString::from("core.hooksPath=");
                setting.push(hooks);
                setting
            })
            .args(["push", "--porcelain", "--prune"]);
        if atomic {
            cmd.arg("--atomic");
        }
        cmd.arg("--").arg(remote).arg(glob);
        if background {
            bounded(cmd, push_time_limit())
        } else {
            cmd.output().map_err(spawn_error)
        }
    };
    let mut output = run(true)?;
    if String::from_utf8_lossy(&output.stderr).contains("does not support --atomic") {
        output = run(false)?;
    }
    let updates = parse_porcelain(&String::from_utf8_lossy(&output.stdout));
    if updates.is_empty() && !output.status.success() {
        return Err(failed(GitCommand::Prune, remote, &output.stderr));
    }
    Ok(updates)
}

/// How long a background push may take: `HANDOFF_PUSH_TIMEOUT_SECONDS`, default 120.
pub(crate) fn push_time_limit() -> std::time::Duration {
    std::time::Duration::from_secs(crate::env::u64_var("HANDOFF_PUSH_TIMEOUT_SECONDS", 120).max(1))
}

/// Run `cmd` (git, which may start ssh) in a process group of its own, for at most `limit`:
/// past it the whole group gets SIGTERM, then SIGKILL, and the push is a failure that says
/// so. A hanging remote never leaves a process behind.
fn bounded(mut cmd: Command, limit: std::time::Duration) -> Result<std::process::Output, Error> {
    use std::io::Read;
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        cmd.process_group(0);
    }
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(spawn_error)?;
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_end(&mut bytes);
            }
            bytes
        })
    };
    let stdout = drain(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let stderr = drain(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let status = wait_timeout::ChildExt::wait_timeout(&mut child, limit).map_err(spawn_error)?;
    let Some(status) = status else {
        #[cfg(unix)]
        {
            use nix::sys::signal::{Signal, killpg};
            let group = nix::unistd::Pid::from_raw(child.id() as i32);
            let _ = killpg(group, Signal::SIGTERM);
            let grace = std::time::Instant::now() + std::time::Duration::from_secs(2);
            while std::time::Instant::now() < grace && matches!(child.try_wait(), Ok(None)) {
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            let _ = killpg(group, Signal::SIGKILL);
        }
        let _ = child.kill();
        let _ = child.wait();
        return Err(Error::External(External::TimedOut {
            seconds: limit.as_secs(),
        }));
    };
    Ok(std::process::Output {
        status,
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
    })
}

/// `handoff.autoPush`: start `handoff-store push --background` for `checkout`, detached, and
/// do not wait for it (a write is never blocked or failed by the network). Returns whether it
/// was started.
pub(crate) fn spawn_background_push(checkout: &Path) -> bool {
    let Ok(exe) = std::env::current_exe() else {
        return false;
    };
    Command::new(exe)
        .args(["push", "--background", "--checkout"])
        .arg(checkout)
        .current_dir(checkout)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .is_ok()
}

/// Read `git push --porcelain`'s ref lines: `<flag>\t<from>:<to>\t<summary>`.
pub(crate) fn parse_porcelain(text: &str) -> Vec<RefUpdate> {
    text.lines()
        .filter_map(|line| {
            let mut parts = line.splitn(3, '\t');
            let flag = parts.next()?;
            let refs = parts.next()?;
            let summary = parts.next().unwrap_or("").to_string();
            let reference = refs.rsplit_once(':').map_or(refs, |(_, to)| to).to_string();
            let status = match flag {
                " " | "*" | "+" => PushStatus::Pushed,
                "-" => PushStatus::Deleted,
                "=" => PushStatus::UpToDate,
                "!" if summary.contains("fetch first")
                    || summary.contains("non-fast-forward")
                    || summary.contains("stale info")
                    // An atomic push refused whole because one of its refs was stale.
                    || summary.contains("atomic push failed") =>
                {
                    PushStatus::Moved
                }
                // The remote's ref lock was taken: a concurrent push, or a stale lock file.
                "!" if summary.contains("failed to update ref")
                    || summary.contains("failed to lock") =>
                {
                    PushStatus::Locked
                }
                "!" => PushStatus::Refused,
                _ => return None,
            };
            Some(RefUpdate {
                reference,
                status,
                summary,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ls_remote_lines_give_branches_and_chains() {
        let text = "0123\trefs/heads/main\n4567\trefs/heads/feature/x\n89ab\trefs/tags/v1\ncdef\trefs/handoffs/a/b\nnoise\n";
        let got = parse_ls_remote(text);
        assert_eq!(got.branches.len(), 2);
        assert!(got.branches.contains("main") && got.branches.contains("feature/x"));
        assert_eq!(got.chains.get("a/b").map(String::as_str), Some("cdef"));
        assert_eq!(got.chains.len(), 1);
    }

    #[test]
    fn porcelain_lines_tell_moved_from_refused() {
        let text = "To file:///r.git\n\
                    *\trefs/handoffs/a:refs/handoffs/a\t[new reference]\n\
                    !\trefs/handoffs/b:refs/handoffs/b\t[rejected] (fetch first)\n\
                    !\trefs/handoffs/c:refs/handoffs/c\t[remote rejected] (pre-receive hook declined)\n\
                    !\trefs/handoffs/f:refs/handoffs/f\t[remote rejected] (failed to update ref)\n\
                    =\trefs/handoffs/d:refs/handoffs/d\t[up to date]\n\
                    -\t:refs/handoffs/e\t[deleted]\n\
                    Done\n";
        let got: Vec<(String, PushStatus)> = parse_porcelain(text)
            .into_iter()
            .map(|u| (u.reference, u.status))
            .collect();
        assert_eq!(
            got,
            vec![
                ("refs/handoffs/a".into(), PushStatus::Pushed),
                ("refs/handoffs/b".into(), PushStatus::Moved),
                ("refs/handoffs/c".into(), PushStatus::Refused),
                ("refs/handoffs/f".into(), PushStatus::Locked),
                ("refs/handoffs/d".into(), PushStatus::UpToDate),
                ("refs/handoffs/e".into(), PushStatus::Deleted),
            ]
        );
    }
}
