//! The store's record in git: every version a slot holds becomes a commit on its branch's
//! chain, `refs/handoffs/<branch>` in the user's repository (docs/sync.md). Recording is part of
//! changing a slot ([`super::change`]), so no caller can forget it; `sync` only moves chains
//! between repositories. Objects and refs go through `git::chain`.

use std::path::Path;
use std::time::SystemTime;

use serde::Serialize;

use super::authorship::{From, StoreKey};
use super::{Store, iso, now, path_bytes, slot, slot_name};
use crate::document::Document;
use crate::error::{Error, External, GitStep, Moment};
use crate::git::chain::{Chains, RefError, Version};

pub(crate) use super::naming::{chain_ref, handoff_ref};

/// The store's slot for `branch` in the repository whose main worktree is `main`.
pub(crate) fn slot_of(main: &Path, branch: &str) -> String {
    slot_name(&path_bytes(main), branch)
}

/// [`slot_of`], or its named slot `slot`.
pub(crate) fn slot_file(main: &Path, branch: &str, slot: Option<&str>) -> String {
    let default = slot_of(main, branch);
    match slot {
        None => default,
        Some(slot) => super::naming::named_slot(&default, slot),
    }
}

/// The longest first-parent line walked (a chain gains a version per slot change).
pub(crate) const MAX_DEPTH: usize = 100_000;

/// The small metadata a version carries next to its document.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Meta {
    /// When the document was written (epoch seconds): the slot's mtime, which consuming keeps.
    pub(crate) written_at: i64,
    pub(crate) progress: Option<String>,
    /// The author's host as recorded: this machine's for a version written here, the
    /// teammate's (from the document's `from:`) for one that came from elsewhere. Data only:
    /// who wrote a version is decided by `mark`.
    pub(crate) host: Option<String>,
    pub(crate) branch: String,
    /// The version's number on its chain's first-parent line (1 for the first), so the
    /// lineage is known without walking the chain. What a remote says here is data only.
    pub(crate) seq: Option<u64>,
    /// The commit that first recorded this text, when it is not this one (a consume after it
    /// records the same text again): the lineage reaches where a text was written in one read,
    /// however often it was read since. Checked against the text before it is followed.
    pub(crate) since: Option<String>,
    /// The number of the earlier version whose text this one brought back (a `restore`), which
    /// is its number: bringing a text back is no new text.
    pub(crate) restored: Option<u64>,
    /// The named slot it was recorded for (none: the branch's default slot). The mark covers
    /// it, so a named slot's version never passes as the default slot's own.
    pub(crate) slot: Option<String>,
    /// The recording store's mark ([`StoreKey::mark`] of the document and the lines above).
    pub(crate) mark: Option<String>,
}

impl Meta {
    /// The meta file's text (the mark last).
    pub(crate) fn render(&self) -> String {
        let mut out = self.unmarked();
        if let Some(m) = &self.mark {
            out.push_str(&format!("mark: {m}\n"));
        }
        out
    }

    /// The text a mark covers: every line but the mark.
    fn unmarked(&self) -> String {
        let mut out = format!("written-at: {}\nbranch: {}\n", self.written_at, self.branch);
        if let Some(p) = &self.progress {
            out.push_str(&format!("progress: {p}\n"));
        }
        if let Some(h) = &self.host {
            out.push_str(&format!("host: {h}\n"));
        }
        if let Some(n) = self.seq {
            out.push_str(&format!("seq: {n}\n"));
        }
        if let Some(id) = &self.since {
            out.push_str(&format!("since: {id}\n"));
        }
        if let Some(n) = self.restored {
            out.push_str(&format!("restored: {n}\n"));
        }
        if let Some(slot) = &self.slot {
            out.push_str(&format!("slot: {slot}\n"));
        }
        out
    }

    /// Parse a version's `meta`; a version without a readable `written-at` counts as written
    /// at its author time's absence: 0, the oldest.
    pub(crate) fn parse(text: &str) -> Meta {
        let field = |name: &str| {
            text.lines().find_map(|l| {
                l.strip_prefix(name)
                    .and_then(|r| r.strip_prefix(": "))
                    .map(str::to_string)
            })
        };
        Meta {
            written_at: field("written-at")
                .and_then(|v| v.parse().ok())
                .unwrap_or(0),
            progress: field("progress"),
            host: field("host"),
            branch: field("branch").unwrap_or_default(),
            seq: field("seq").and_then(|v| v.parse().ok()),
            since: field("since")
                .filter(|v| v.len() <= 64 && v.bytes().all(|b| b.is_ascii_hexdigit())),
            restored: field("restored").and_then(|v| v.parse().ok()),
            slot: field("slot"),
            mark: field("mark"),
        }
    }
}

/// Whether this store recorded `version` exactly as it is: its mark verifies under this
/// store's key. Nothing a remote can say (a host name, a copied mark) makes it so.
pub(crate) fn recorded_here(key: Option<&StoreKey>, version: &Version) -> bool {
    let meta = Meta::parse(&version.meta);
    match (key, &meta.mark) {
        (Some(key), Some(mark)) => key.verifies(&version.document, &meta.unmarked(), mark),
        _ => false,
    }
}

/// Whether `version` is this store's own writing: recorded here, and not a teammate's
/// handoff brought in (its document carries no `from:`).
pub(crate) fn written_here(key: Option<&StoreKey>, version: &Version) -> bool {
    recorded_here(key, version) && from_of(&version.document).is_none()
}

/// The `from:` header of a document, as written (`None` when it has none).
pub(crate) fn from_of(document: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(document);
    Document::parse(&text.replace('\r', ""))
        .field("from")
        .map(|f| f.value.clone())
}

pub(crate) fn host() -> Option<String> {
    crate::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
}

fn epoch(t: SystemTime) -> i64 {
    super::epoch(t)
}

/// The document with its machine-specific `checkout:` value replaced, so versions are compared
/// on what travels.
fn portable(bytes: &[u8]) -> Vec<u8> {
    let text = String::from_utf8_lossy(bytes);
    crate::document::normalise::normalise(&text, &[("checkout", "-"), ("from", "-")])
        .map(String::into_bytes)
        .unwrap_or_else(|_| bytes.to_vec())
}

/// The document without its envelope's `progress:` line: two versions with the same text are
/// one version of the handoff, read or not (lineage numbers count texts).
pub(crate) fn without_progress(document: &[u8]) -> String {
    crate::document::normalise::without(&String::from_utf8_lossy(document), "progress")
}

/// What makes two versions one text (docs/store.md §9.15): the document without `progress:`,
/// its checkout and `from:` (where it was written), and the line numbers after a `:` — a
/// consume, a pull into another checkout and a `fix` of line numbers are no new text.
pub(crate) fn text_key(document: &[u8]) -> String {
    without_line_numbers(&without_progress(&portable(document)))
}

/// [`text_key`] remembered for the last few documents: a text read many times is a chain of
/// two documents taking turns (complete, consumed), each keyed once.
#[derive(Default)]
pub(crate) struct TextKeys {
    memo: Vec<(Vec<u8>, String)>,
}

impl TextKeys {
    pub(crate) fn of(&mut self, document: &[u8]) -> String {
        if let Some((_, key)) = self.memo.iter().find(|(d, _)| d == document) {
            return key.clone();
        }
        let key = text_key(document);
        if self.memo.len() >= 4 {
            self.memo.remove(0);
        }
        self.memo.push((document.to_vec(), key.clone()));
        key
    }
}

/// `text` with each run of digits (and `-`) right after a `:` said as `#`: `app.rs:24-30` and
/// `app.rs:31` read the same.
pub(crate) fn without_line_numbers(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        out.push(c);
        if c == ':' && chars.peek().is_some_and(char::is_ascii_digit) {
            while chars
                .peek()
                .is_some_and(|d| d.is_ascii_digit() || *d == '-')
            {
                chars.next();
            }
            out.push('#');
        }
    }
    out
}

fn chain_error(step: GitStep, e: impl std::error::Error + 'static) -> Error {
    Error::External(External::Git {
        step,
        source: Box::new(e),
    })
}

/// A document as a chain records it: its bytes, progress and when it was written. `None` for
/// what never joins a chain: an empty or unreadable file, a `writing` placeholder, another
/// branch's handoff, a document carrying a credential.
struct Recordable {
    bytes: Vec<u8>,
    progress: Option<String>,
    written_at: i64,
    /// Its author's host: this machine's, or for a teammate's handoff (`from:`) the author it
    /// names (`None` when that is not in the form this store writes).
    author: Option<String>,
}

fn recordable(path: &Path, branch: &str) -> Result<Option<Recordable>, Error> {
    let Ok(meta) = crate::fs::symlink_metadata(path) else {
        return Ok(None);
    };
    if !meta.is_file() || meta.len() == 0 {
        return Ok(None);
    }
    let bytes = slot::read_capped(path)?;
    let Ok(text) = std::str::from_utf8(&bytes) else {
        return Ok(None);
    };
    let doc = Document::parse(&text.replace('\r', ""));
    let progress = slot::progress_of(&bytes);
    let declared = doc
        .field("branch")
        .map(|f| f.value.clone())
        .and_then(|v| crate::document::envelope::declared_branch(&v).map(str::to_string));
    if progress.as_deref() == Some("writing")
        || declared.as_deref().is_some_and(|d| d != branch)
        || !doc.secrets.is_empty()
    {
        return Ok(None);
    }
    let written_at = meta.modified().map(epoch).unwrap_or(0);
    let author = match doc.field("from") {
        Some(from) => From::parse(&from.value).map(|f| f.author),
        None => host(),
    };
    Ok(Some(Recordable {
        bytes,
        progress,
        written_at,
        author,
    }))
}

/// Where a version sits in its lineage: its number, the commit that first recorded its text
/// (when an earlier one did), the number it restored.
struct Place<'a> {
    seq: Option<u64>,
    since: Option<String>,
    restored: Option<u64>,
    slot: Option<&'a str>,
}

/// The last commit recorded, as the next one needs it.
struct Prior {
    id: String,
    meta: Meta,
    text: String,
}

/// How many commits back from the tip a record looks for versions it already holds.
const MISSED_LOOKBACK: usize = 256;

/// How many texts back a version is looked for, to know it as a restore.
const RESTORE_LOOKBACK: usize = 100;

/// The number of an earlier version whose text is `text`, looking back from `prior` along the
/// first parents, a text at a time (a text's `since` skips its reads), at most
/// [`RESTORE_LOOKBACK`] texts.
fn earlier_number(chains: &Chains, prior: &Prior, text: &str) -> Option<u64> {
    let mut keys = TextKeys::default();
    let mut at = Some(prior.meta.since.clone().unwrap_or_else(|| prior.id.clone()));
    let mut first = true;
    for _ in 0..RESTORE_LOOKBACK {
        let v = chains.read(at.as_deref()?)?;
        let body = keys.of(&v.document);
        let meta = Meta::parse(&v.meta);
        if !first && body == text {
            return meta.restored.or(meta.seq);
        }
        first = false;
        // The oldest commit of this text, when its `since` says so truly.
        let oldest = meta
            .since
            .as_deref()
            .and_then(|s| chains.read(s))
            .filter(|o| keys.of(&o.document) == body)
            .unwrap_or(v);
        at = oldest.parents.first().cloned();
    }
    None
}

/// Write `version` as the next commit after `parent` (not moving any ref); its id and meta.
fn commit_version(
    chains: &Chains,
    key: Option<&StoreKey>,
    branch: &str,
    version: &Recordable,
    parent: Option<&String>,
    place: Place<'_>,
) -> Result<(String, Meta), Error> {
    let mut meta = Meta {
        written_at: version.written_at,
        progress: version.progress.clone(),
        host: version.author.clone(),
        branch: branch.to_string(),
        seq: place.seq,
        since: place.since,
        restored: place.restored,
        slot: place.slot.map(str::to_string),
        mark: None,
    };
    meta.mark = key.map(|k| k.mark(&version.bytes, &meta.unmarked()));
    let message = format!(
        "handoff: {branch} ({}, written {})\n",
        version.progress.as_deref().unwrap_or("complete"),
        crate::store::iso(version.written_at)
    );
    let parents: Vec<String> = parent.into_iter().cloned().collect();
    let id = chains
        .commit(
            &version.bytes,
            &meta.render(),
            &parents,
            &message,
            version.written_at,
            crate::store::now(),
        )
        .map_err(|e| chain_error(GitStep::Record, e))?;
    Ok((id, meta))
}

/// The versions of slot `name` the chain missed (a record that failed or was cut short): kept in
/// the slot's history, written after the chain's tip and before `current`, and not on the chain.
fn missed(
    store: &Store,
    chains: &Chains,
    name: &str,
    branch: &str,
    tip_version: Option<&crate::git::chain::Version>,
    current: &Recordable,
) -> Result<Vec<Recordable>, Error> {
    let mut missed = Vec::new();
    let Some(v) = tip_version else {
        return Ok(missed);
    };
    // The chain's versions from the tip's second on (times are whole seconds: a version
    // written in the same second as the tip may still be missing).
    // A text's commits are passed in one step where `since` names its first (a text read
    // 20,000 times has as many commits, all written at one time).
    let since = Meta::parse(&v.meta).written_at;
    let mut keys = TextKeys::default();
    let mut recorded = vec![keys.of(&v.document)];
    let mut at = Some(v.clone());
    for _ in 0..MISSED_LOOKBACK {
        let Some(newest) = at.take() else { break };
        let text = keys.of(&newest.document);
        let oldest = Meta::parse(&newest.meta)
            .since
            .and_then(|s| chains.read(&s))
            .filter(|o| keys.of(&o.document) == text)
            .unwrap_or(newest);
        at = oldest
            .parents
            .first()
            .and_then(|p| chains.read(p))
            .filter(|o| Meta::parse(&o.meta).written_at >= since);
        if let Some(older) = &at {
            let key = keys.of(&older.document);
            if !recorded.contains(&key) {
                recorded.push(key);
            }
        }
    }
    for kept in slot::versions(store, name) {
        if let Some(version) = recordable(&kept.path, branch)?
            && version.written_at >= since
            && version.written_at <= current.written_at
            && portable(&version.bytes) != portable(&current.bytes)
            && !recorded.contains(&text_key(&version.bytes))
        {
            missed.push(version);
        }
    }
    Ok(missed)
}

/// Where the next version sits, after `prior` (docs/store.md §9.15): a number counts texts, so
/// a version whose text equals the one before but for `progress:` (a consume) keeps its number
/// (unknown stays unknown) and points at where its text was first recorded; one that brings an
/// earlier text back (a restore) has that text's number; a new text the next number. `seq` is
/// the prior's number, `None` when the prior carries none (a chain recorded before versions
/// did): `count` gives it then, and is only called for a new text — a consume after a pull of
/// such a chain reads no history.
fn place_of<'a>(
    chains: &Chains,
    prior: Option<&Prior>,
    text: &str,
    seq: &mut Option<u64>,
    count: impl FnOnce() -> u64,
    slot: Option<&'a str>,
) -> Place<'a> {
    let mut place = Place {
        seq: *seq,
        since: None,
        restored: None,
        slot,
    };
    match prior {
        Some(p) if p.text == text => {
            place.since = Some(p.meta.since.clone().unwrap_or_else(|| p.id.clone()));
            place.restored = p.meta.restored;
        }
        Some(p) => {
            let known = *seq.get_or_insert_with(count);
            match earlier_number(chains, p, text) {
                Some(n) => place.restored = Some(n),
                None => *seq = Some(known + 1),
            }
        }
        None => *seq = Some(seq.unwrap_or(0) + 1),
    }
    place.seq = *seq;
    place
}

/// Make the chain of `branch` hold the slot's current version (the caller holds the slot
/// lock). Nothing is recorded for an empty slot, a `writing` placeholder, a slot holding
/// another branch's handoff, or a document carrying a credential. Versions the chain missed
/// (a record that failed or was cut short) are caught up from the slot's history first, oldest
/// first: those written after the chain's tip. Returns the chain's tip.
pub(crate) fn record(
    store: &Store,
    chains: &Chains,
    branch: &str,
    slot: Option<&str>,
) -> Result<Option<String>, Error> {
    let name = slot_file(&chains.main(), branch, slot);
    let reference = chain_ref(branch, slot);
    let tip = chains.tip(&reference);
    let Some(current) = recordable(&store.path_of(&name), branch)? else {
        return Ok(tip);
    };
    let tip_version = tip.as_deref().and_then(|t| chains.read(t));
    if let Some(v) = &tip_version
        && Meta::parse(&v.meta).written_at == current.written_at
        && portable(&v.document) == portable(&current.bytes)
    {
        return Ok(tip);
    }
    let mut missed = missed(store, chains, &name, branch, tip_version.as_ref(), &current)?;
    missed.sort_by_key(|v| v.written_at);
    // A key that is there but cannot be read fails the record (said by the command and by
    // `status`), rather than recording versions unmarked that would read as a teammate's.
    let key = Some(StoreKey::get_or_create(store)?);
    let mut parent = tip.clone();
    let mut prior = tip.clone().zip(tip_version.as_ref()).map(|(id, v)| Prior {
        id,
        meta: Meta::parse(&v.meta),
        text: text_key(&v.document),
    });
    let mut seq = tip_version.as_ref().and_then(|v| Meta::parse(&v.meta).seq);
    for version in missed.iter().chain(std::iter::once(&current)) {
        let body = text_key(&version.bytes);
        // A chain recorded before versions carried their number: counted once, at its next
        // new text.
        let count = || {
            tip.as_deref()
                .map_or(0, |t| chains.first_parents(t, MAX_DEPTH).len() as u64)
        };
        let place = place_of(chains, prior.as_ref(), &body, &mut seq, count, slot);
        let (id, meta) = commit_version(
            chains,
            key.as_ref(),
            branch,
            version,
            parent.as_ref(),
            place,
        )?;
        parent = Some(id.clone());
        prior = Some(Prior {
            id,
            meta,
            text: body,
        });
    }
    let Some(id) = parent else {
        return Ok(tip);
    };
    match chains.set(&reference, &id, tip.as_deref()) {
        Ok(()) => Ok(Some(id)),
        Err(RefError::Moved) => Err(Error::External(External::Moved {
            reference: reference.to_string(),
            during: Moment::Record,
        })),
        Err(e) => Err(chain_error(GitStep::Update(reference.to_string()), e)),
    }
}

/// [`record`] for `target`'s branch (the caller holds its slot lock); nothing for a detached
/// HEAD, whose slot is not a branch's.
pub(crate) fn record_target(
    store: &Store,
    target: &crate::store::Target,
) -> Result<Option<String>, Error> {
    if target.facts.detached {
        return Ok(None);
    }
    let Some(chains) = Chains::open(&target.facts.checkout) else {
        return Ok(None);
    };
    // A failure is never silent: `status` shows it until a record succeeds.
    let recorded = record(
        store,
        &chains,
        &target.facts.reference,
        target.slot.as_deref(),
    );
    match &recorded {
        Ok(_) => record_ok(store),
        Err(e) => record_failed(store, &target.checkout(), &e.report()),
    }
    recorded
}

/// The last chain record that failed (a version stored but not yet in git), kept until a
/// record succeeds, so `status` can say so.
const RECORD_FAILED: &str = ".chain-record-failed";

/// Note that recording `checkout`'s slot in its chain failed with `message`; a later success
/// ([`record_ok`]) clears it. Best effort.
pub(crate) fn record_failed(store: &Store, checkout: &str, message: &str) {
    let one_line = |s: &str| s.replace(['\t', '\n', '\r'], " ").trim().to_string();
    let line = format!(
        "{}\t{}\t{}\n",
        iso(now()),
        one_line(checkout),
        one_line(message)
    );
    let _ = slot::replace(&store.dir.join(RECORD_FAILED), line.as_bytes(), None, None);
}

/// A chain record succeeded: the note of an earlier failure goes.
pub(crate) fn record_ok(store: &Store) {
    let path = store.dir.join(RECORD_FAILED);
    if path.exists() {
        let _ = slot::remove(&path);
    }
}

/// The failed record still outstanding: when, for which checkout, why.
pub(crate) fn record_failure(store: &Store) -> Option<(String, String, String)> {
    let text = crate::fs::read_to_string(store.dir.join(RECORD_FAILED)).ok()?;
    let mut f = text.trim_end_matches('\n').splitn(3, '\t');
    Some((f.next()?.into(), f.next()?.into(), f.next()?.into()))
}
