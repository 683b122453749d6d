//! Deleting refs that are only lines of `packed-refs`, in one rewrite under `packed-refs.lock`
//! alone.
//!
//! gix's transaction takes each ref's loose lock before it touches `packed-refs` (a
//! `<ref>.lock` file created and removed per ref): deleting 20,000 orphan chains spent nearly
//! all of its time creating those inodes. A ref with no loose file and no reflog is nothing but
//! its line in `packed-refs`, so its deletion needs only the lock git itself takes to rewrite
//! that file. The rewrite keeps every other byte as it was: a line goes only when it names a
//! doomed ref *and* still holds the id expected (with the `^` peel line under it), so a ref
//! that moved is left. A loose ref written meanwhile by someone else shadows the packed line
//! anyway and is never touched here. The lock is noted in the journal like every lock of ours.

use std::collections::HashMap;
use std::io::Write;
use std::path::Path;

use super::journal::{self, Failure, Journal};

/// Refs to delete: each one's name and the id it is expected to hold.
pub(super) type Doomed = Vec<(String, String)>;

/// Split `refs` (name, expected id) into those that are only lines of `packed-refs` — no
/// loose file, no reflog — and the rest, which need gix's full transaction.
pub(super) fn split(common: &Path, refs: &[(String, String)]) -> (Doomed, Doomed) {
    let absent = |p: &Path| {
        std::fs::symlink_metadata(p).is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound)
    };
    refs.iter().cloned().partition(|(name, _)| {
        gix::refs::FullName::try_from(name.as_str()).is_ok()
            && absent(&common.join(name))
            && absent(&common.join("logs").join(name))
    })
}

/// Delete each of `refs` (name, expected id) that `packed-refs` still lists at the expected id,
/// in one rewrite of that file under its lock (waited for at most `wait`). Returns how many
/// lines went.
pub(super) fn delete(
    common: &Path,
    refs: &[(String, String)],
    wait: std::time::Duration,
) -> Result<usize, Failure> {
    if refs.is_empty() {
        return Ok(0);
    }
    journal::recover(common);
    let file = common.join("packed-refs");
    let lock_path = journal::lock_of(&file);
    let mut journal = Journal::begin(common);
    let mut lock = gix::lock::File::acquire_to_update_resource(
        &file,
        gix::lock::acquire::Fail::AfterDurationWithBackoff(wait),
        None,
        Default::default(),
    )?;
    journal.taken(&journal::taken(std::slice::from_ref(&lock_path)));
    crate::process::kill_point();
    // Read under the lock: the file as it is now, not a snapshot from before.
    let old = match std::fs::read(&file) {
        Ok(old) => old,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(e.into()),
    };
    let doomed: HashMap<&[u8], &[u8]> = refs
        .iter()
        .map(|(name, id)| (name.as_bytes(), id.as_bytes()))
        .collect();
    let (new, gone) = without(&old, &doomed);
    if gone == 0 {
        return Ok(0);
    }
    lock.write_all(&new)?;
    // Noted again once written: the write changed the ctime the note proves the file by.
    journal.taken(&journal::taken(std::slice::from_ref(&lock_path)));
    crate::process::kill_point();
    lock.commit().map_err(|e| e.error)?;
    Ok(gone)
}

/// `packed-refs` text `old` without the lines of the refs in `doomed` that hold the id it
/// maps them to (and their peel lines); every other byte kept. Also how many refs went.
fn without(old: &[u8], doomed: &HashMap<&[u8], &[u8]>) -> (Vec<u8>, usize) {
    let mut new = Vec::with_capacity(old.len());
    let mut gone = 0;
    let mut dropping = false;
    for line in old.split_inclusive(|&b| b == b'\n') {
        if line.starts_with(b"^") {
            if !dropping {
                new.extend_from_slice(line);
            }
            continue;
        }
        let body = line.strip_suffix(b"\n").unwrap_or(line);
        let body = body.strip_suffix(b"\r").unwrap_or(body);
        dropping = match body.iter().position(|&b| b == b' ') {
            Some(at) if !body.starts_with(b"#") => {
                let (id, name) = (&body[..at], &body[at + 1..]);
                doomed.get(name).is_some_and(|want| *want == id)
            }
            _ => false,
        };
        if dropping {
            gone += 1;
        } else {
            new.extend_from_slice(line);
        }
    }
    (new, gone)
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "1111111111111111111111111111111111111111";
    const B: &str = "2222222222222222222222222222222222222222";
    const T: &str = "3333333333333333333333333333333333333333";

    #[test]
    fn only_a_doomed_line_at_its_expected_id_goes_with_its_peel_line() {
        let old = format!(
            "# pack-refs with: peeled fully-peeled sorted \n\
             {A} refs/handoffs/a\n\
             {B} refs/handoffs/moved\n\
             {A} refs/handoffs/t\n^{T}\n\
             {A} refs/heads/main\n"
        );
        let doomed: HashMap<&[u8], &[u8]> = [
            (&b"refs/handoffs/a"[..], A.as_bytes()),
            (b"refs/handoffs/moved", A.as_bytes()),
            (b"refs/handoffs/t", A.as_bytes()),
            (b"refs/handoffs/absent", A.as_bytes()),
        ]
        .into_iter()
        .collect();
        let (new, gone) = without(old.as_bytes(), &doomed);
        assert_eq!(gone, 2);
        assert_eq!(
            String::from_utf8(new).unwrap(),
            format!(
                "# pack-refs with: peeled fully-peeled sorted \n\
                 {B} refs/handoffs/moved\n\
                 {A} refs/heads/main\n"
            )
        );
    }

    #[test]
    fn nothing_doomed_keeps_every_byte() {
        let old = format!("# pack-refs with: peeled \n{A} refs/heads/main\n^{T}\n{B} refs/x");
        let (new, gone) = without(old.as_bytes(), &HashMap::new());
        assert_eq!((new, gone), (old.into_bytes(), 0));
    }
}
