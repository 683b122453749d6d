//! Where a harness's append-only session file ended at our previous hook call (the watch), and
//! the lines appended since. Some clients say that a compaction happened only in that file (a
//! chat restart, a `session.compaction_complete` event), so their hooks look past the watch and
//! then move it. A watch is a hint kept in `<state>/<harness>/<sid>.watch`:
//! the file's inode and length; a torn or foreign one reads as none.

use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use crate::hooks::claims::clean_old;
use crate::hooks::claims::state_dir;
use crate::hooks::input::safe_session_id;
use crate::store::slot;

/// A session file's inode and length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Watch {
    pub(crate) ino: u64,
    pub(crate) len: u64,
}

impl Watch {
    pub(crate) fn parse(text: &str) -> Option<Watch> {
        let (ino, len) = text.trim().split_once(' ')?;
        Some(Watch {
            ino: ino.parse().ok()?,
            len: len.parse().ok()?,
        })
    }

    pub(crate) fn of(meta: &crate::fs::Metadata) -> Watch {
        #[cfg(unix)]
        let ino = std::os::unix::fs::MetadataExt::ino(meta);
        #[cfg(not(unix))]
        let ino = 0;
        Watch {
            ino,
            len: meta.len(),
        }
    }
}

/// A hook input's session file (`transcript_path`, `~` expanded), opened, with its watch now.
pub(crate) fn open(transcript: &str) -> Option<(crate::fs::File, Watch)> {
    let file = crate::fs::File::open(crate::env::expand_home(transcript)).ok()?;
    let meta = file.metadata().ok().filter(crate::fs::Metadata::is_file)?;
    Some((file, Watch::of(&meta)))
}

/// A session's watch file: `<state>/<harness>/<safe sid>.watch`.
pub(crate) fn path(harness: &str, session: &str) -> Option<PathBuf> {
    Some(
        state_dir()?
            .join(harness)
            .join(format!("{}.watch", safe_session_id(session))),
    )
}

/// The watch kept at `path`, if any.
pub(crate) fn load(path: &Path) -> Option<Watch> {
    Watch::parse(&crate::fs::read_to_string(path).ok()?)
}

/// Keep `now` as the watch at `path` (atomically; old watches of ended sessions are cleaned).
pub(crate) fn save(path: &Path, now: Watch) {
    let Some(dir) = path.parent() else { return };
    if slot::create_private_dir(dir).is_err() {
        return;
    }
    clean_old(dir, ".watch");
    let _ = crate::durable::write(path, format!("{} {}\n", now.ino, now.len).as_bytes(), None);
}

/// Feed each whole line appended between `watch` and `now` to `found` with its offset, until
/// `found` returns a position. Nothing when the file is another one now (replaced: nothing can
/// be told) or shorter. Lines are read one by one, so a long tool output costs only its bytes.
pub(crate) fn find_since(
    file: &crate::fs::File,
    watch: Watch,
    now: Watch,
    mut found: impl FnMut(u64, &[u8]) -> Option<u64>,
) -> Option<u64> {
    if now.ino != watch.ino || now.len < watch.len {
        return None;
    }
    let mut reader = file.try_clone().ok()?;
    reader.seek(SeekFrom::Start(watch.len)).ok()?;
    let mut lines = BufReader::new(reader.take(now.len - watch.len));
    let mut at = watch.len;
    let mut line = Vec::new();
    loop {
        line.clear();
        let n = lines.read_until(b'\n', &mut line).ok()?;
        if n == 0 || !line.ends_with(b"\n") {
            return None;
        }
        if let Some(pos) = found(at, &line) {
            return Some(pos);
        }
        at += n as u64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_watch_reads_back_and_a_torn_one_is_none() {
        assert_eq!(Watch::parse("12 34\n"), Some(Watch { ino: 12, len: 34 }));
        assert!(Watch::parse("torn").is_none());
        assert!(Watch::parse("12 3x").is_none());
    }
}
