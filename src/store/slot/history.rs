//! A slot's kept versions (store.md §6.3): `<store>/.history/<name>/`, newest first, identical
//! bytes kept once, the newest 10 distinct versions retained.

use crate::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::super::Store;
use crate::error::Error;

use super::atomic::{remove, replace_from};
use super::progress::progress_of;
use super::read_head;
use super::{HISTORY_KEEP, create_private_dir};

/// One kept version of a slot.
#[derive(Debug, Clone)]
pub(crate) struct Version {
    pub(crate) path: PathBuf,
    pub(crate) mtime: Option<SystemTime>,
    pub(crate) size: u64,
}

/// Kept versions, newest first (mtime, then name).
pub(crate) fn versions(store: &Store, name: &str) -> Vec<Version> {
    let Ok(entries) = crate::fs::read_dir(store.history_dir(name)) else {
        return Vec::new();
    };
    let mut out: Vec<(Version, String)> = entries
        .flatten()
        .filter_map(|e| {
            let fname = e.file_name().to_string_lossy().into_owned();
            let meta = crate::fs::symlink_metadata(e.path()).ok()?;
            (fname.ends_with(".md") && !fname.starts_with('.') && meta.is_file()).then(|| {
                (
                    Version {
                        path: e.path(),
                        mtime: meta.modified().ok(),
                        size: meta.len(),
                    },
                    fname,
                )
            })
        })
        .collect();
    out.sort_by(|(a, an), (b, bn)| b.mtime.cmp(&a.mtime).then_with(|| an.cmp(bn)));
    out.into_iter().map(|(v, _)| v).collect()
}

/// `YYYYMMDDTHHMMSSZ` of a time, in UTC.
pub(crate) fn stamp(t: SystemTime) -> String {
    // A time beyond chrono's range (a file time set from a remote's date) is never a panic.
    chrono::DateTime::from_timestamp(crate::store::epoch(t), 0)
        .unwrap_or(chrono::DateTime::<chrono::Utc>::MAX_UTC)
        .format("%Y%m%dT%H%M%SZ")
        .to_string()
}

/// Whether two files hold the same bytes, compared in chunks.
pub(crate) fn same_content(a: &Path, b: &Path) -> bool {
    let (Ok(mut fa), Ok(mut fb)) = (File::open(a), File::open(b)) else {
        return false;
    };
    if fa.metadata().map(|m| m.len()).ok() != fb.metadata().map(|m| m.len()).ok() {
        return false;
    }
    let (mut ba, mut bb) = (vec![0u8; 64 * 1024], vec![0u8; 64 * 1024]);
    loop {
        let n = match fa.read(&mut ba) {
            Ok(n) => n,
            Err(_) => return false,
        };
        if n == 0 {
            return fb.read(&mut bb[..1]).is_ok_and(|m| m == 0);
        }
        if fb.read_exact(&mut bb[..n]).is_err() || ba[..n] != bb[..n] {
            return false;
        }
    }
}

/// Whether `path` holds exactly `bytes`.
fn holds(path: &Path, bytes: &[u8]) -> bool {
    crate::fs::symlink_metadata(path).is_ok_and(|m| m.len() == bytes.len() as u64)
        && File::open(path)
            .and_then(|f| {
                let mut buf = Vec::with_capacity(bytes.len());
                f.take(bytes.len() as u64 + 1).read_to_end(&mut buf)?;
                Ok(buf == bytes)
            })
            .unwrap_or(false)
}

/// Keep the current slot in history before it is replaced by `new_bytes` (store.md §6.3):
/// only a non-empty regular file that is not a placeholder and differs from the new bytes.
/// The copy is durable when this returns; retention is the caller's last step ([`retain`]).
pub(crate) fn keep_current(
    store: &Store,
    name: &str,
    new_bytes: Option<&[u8]>,
) -> Result<Option<PathBuf>, Error> {
    let slot = store.path_of(name);
    let Ok(meta) = crate::fs::symlink_metadata(&slot) else {
        return Ok(None);
    };
    if !meta.is_file() || meta.len() == 0 {
        return Ok(None);
    }
    if new_bytes.is_some_and(|b| holds(&slot, b)) {
        return Ok(None);
    }
    let head = read_head(&slot).map_err(|e| Error::io(&slot, e))?;
    if progress_of(&head).as_deref() == Some("writing") {
        return Ok(None);
    }
    let mtime = meta.modified().map_err(|e| Error::io(&slot, e))?;
    keep_file(store, name, &slot, mtime).map(Some)
}

/// Add the file at `source` with `mtime` as a history version, unless history already holds
/// the same bytes (then that version's path is returned): identical bytes are kept once.
pub(crate) fn keep_file(
    store: &Store,
    name: &str,
    source: &Path,
    mtime: SystemTime,
) -> Result<PathBuf, Error> {
    keep(
        store,
        name,
        mtime,
        |p| same_content(p, source),
        || {
            File::open(source)
                .map(|f| Box::new(f) as Box<dyn Read>)
                .map_err(|e| Error::io(source, e))
        },
    )
}

/// Add `bytes` with `mtime` as a history version (a version that arrived from elsewhere, e.g.
/// the losing side of a sync merge), unless history already holds the same bytes.
pub(crate) fn keep_bytes(
    store: &Store,
    name: &str,
    bytes: &[u8],
    mtime: SystemTime,
) -> Result<PathBuf, Error> {
    keep(
        store,
        name,
        mtime,
        |p| holds(p, bytes),
        || Ok(Box::new(bytes) as Box<dyn Read + '_>),
    )
}

/// How many answers the gate refused are kept per slot, apart from its versions.
const REFUSED_KEEP: usize = 3;

/// Keep a background writer's answer the gate refused: in `<history>/.refused/`, apart from the
/// slot's versions (`history` and `restore` never count or offer it), the newest
/// [`REFUSED_KEEP`] kept.
pub(crate) fn keep_refused(store: &Store, name: &str, source: &Path) -> Result<PathBuf, Error> {
    let dir = store.history_dir(name).join(".refused");
    create_private_dir(&dir)?;
    let now = SystemTime::now();
    let mut path = dir.join(format!("{}.md", stamp(now)));
    let mut n = 1;
    while path.exists() {
        path = dir.join(format!("{}-{n}.md", stamp(now)));
        n += 1;
    }
    let mut file = File::open(source).map_err(|e| Error::io(source, e))?;
    super::replace_from(&path, &mut file, Some(now), None)?;
    let mut kept: Vec<(SystemTime, PathBuf)> = crate::fs::read_dir(&dir)
        .map(|entries| {
            entries
                .flatten()
                .filter(|e| e.file_name().to_string_lossy().ends_with(".md"))
                .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
                .collect()
        })
        .unwrap_or_default();
    kept.sort_by(|a, b| b.cmp(a));
    for (_, old) in kept.into_iter().skip(REFUSED_KEEP) {
        let _ = remove(&old);
    }
    Ok(path)
}

/// The one way a version enters history: the path of an existing version that `same` says
/// holds these bytes, else a fresh file written from `open`.
fn keep<'a>(
    store: &Store,
    name: &str,
    mtime: SystemTime,
    same: impl Fn(&Path) -> bool,
    open: impl FnOnce() -> Result<Box<dyn Read + 'a>, Error>,
) -> Result<PathBuf, Error> {
    if let Some(existing) = versions(store, name).into_iter().find(|v| same(&v.path)) {
        return Ok(existing.path);
    }
    let path = fresh_version_path(store, name, mtime)?;
    let mut source = open()?;
    replace_from(&path, &mut source, Some(mtime), None)?;
    Ok(path)
}

/// A history file name for a version of `mtime` that no file has yet.
fn fresh_version_path(store: &Store, name: &str, mtime: SystemTime) -> Result<PathBuf, Error> {
    let dir = store.history_dir(name);
    create_private_dir(&dir)?;
    let base = stamp(mtime);
    let mut path = dir.join(format!("{base}.md"));
    let mut n = 2;
    while crate::fs::symlink_metadata(&path).is_ok() {
        path = dir.join(format!("{base}-{n}.md"));
        n += 1;
    }
    Ok(path)
}

/// Retention (store.md §6.3): the newest 10 distinct versions stay; an older copy of bytes a
/// newer version holds, and everything past the tenth, are removed. Called last, once the slot
/// is durably replaced, so no step before it can leave a version only in a deleted file.
pub(crate) fn retain(store: &Store, name: &str) {
    retain_keeping(store, name, None);
}

/// [`retain`], never removing `just_kept`, the version the caller has just put into history: a
/// version from a remote carries its whole-second written-at as its mtime, so among versions of
/// the same second it sorts below local ones written before it — counted by mtime alone, the
/// newest version of all was the one retention removed. The oldest other version goes instead.
pub(crate) fn retain_keeping(store: &Store, name: &str, just_kept: Option<&Path>) {
    let all = versions(store, name);
    let protected = just_kept.and_then(|p| all.iter().position(|v| v.path == p));
    // The protected version is considered first; every other keeps its place.
    let order = protected.map(|i| &all[i]).into_iter().chain(
        all.iter()
            .enumerate()
            .filter(|(i, _)| Some(*i) != protected)
            .map(|(_, v)| v),
    );
    let mut kept: Vec<&Version> = Vec::new();
    for v in order {
        let duplicate = kept.iter().any(|k| same_content(&k.path, &v.path));
        if duplicate || kept.len() >= HISTORY_KEEP {
            let _ = remove(&v.path);
        } else {
            kept.push(v);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, UNIX_EPOCH};

    /// A version from a remote lands in history with its whole-second written-at; ten local ones
    /// of the same second were written at .5 of it. Retention keeps the one just stored and drops
    /// the oldest local one.
    #[test]
    fn the_version_just_kept_is_never_the_one_retention_removes() {
        let dir = tempfile::tempdir().expect("tmp");
        let store = Store {
            dir: dir.path().to_path_buf(),
        };
        let second = UNIX_EPOCH + Duration::from_secs(1_800_000_000);
        for i in 0..HISTORY_KEEP {
            let path = keep_bytes(&store, "x.md", format!("local {i}\n").as_bytes(), second)
                .expect("kept");
            let file = crate::fs::File::options()
                .write(true)
                .open(&path)
                .expect("open");
            file.set_modified(second + Duration::from_millis(500 + i as u64))
                .expect("mtime");
        }
        let imported = keep_bytes(&store, "x.md", b"imported\n", second).expect("kept");
        retain_keeping(&store, "x.md", Some(&imported));
        let kept: Vec<String> = versions(&store, "x.md")
            .iter()
            .map(|v| crate::fs::read_to_string(&v.path).expect("read"))
            .collect();
        assert_eq!(kept.len(), HISTORY_KEEP);
        assert!(kept.contains(&"imported\n".to_string()), "{kept:?}");
        assert!(!kept.contains(&"local 0\n".to_string()), "{kept:?}");
    }
}
