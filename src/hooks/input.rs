//! The hook door: stdin read once (bounded, never from a terminal) into [`RawInput`], which each
//! client maps to the one typed [`HookInput`] the hooks read — the session id made safe for a
//! file name, the checkout it is about, the source, the transcript, whether a delivery may
//! consume. Strings from stdin are data: never a shell word, never a path unchecked. No other
//! file sees the client's JSON.

use std::io::{IsTerminal, Read};
use std::path::Path;

use serde_json::{Map, Value};

use crate::store::naming::is_safe_id;
use crate::store::{Store, Target};
use crate::text::hex_md5;

/// The most stdin a hook reads.
const STDIN_CAP: u64 = 1024 * 1024;

/// A client's hook input as it arrived: one JSON object, read through the accessors below.
#[derive(Debug, Clone, Default)]
pub(crate) struct RawInput(Map<String, Value>);

impl RawInput {
    /// The hook's JSON object from stdin, or `None` when stdin is a terminal, too large, or not
    /// a JSON object.
    pub(crate) fn read(stdin: impl Read + IsTerminal) -> Option<RawInput> {
        if stdin.is_terminal() {
            return None;
        }
        let mut bytes = Vec::new();
        stdin.take(STDIN_CAP + 1).read_to_end(&mut bytes).ok()?;
        if bytes.len() as u64 > STDIN_CAP {
            return None;
        }
        RawInput::parse(&bytes)
    }

    /// `bytes` as a hook input: a JSON object, else `None`.
    pub(crate) fn parse(bytes: &[u8]) -> Option<RawInput> {
        match serde_json::from_slice(bytes).ok()? {
            Value::Object(map) => Some(RawInput(map)),
            _ => None,
        }
    }

    /// A string field; a missing field or one of another type is `None`; empty counts as
    /// missing.
    pub(crate) fn text(&self, key: &str) -> Option<&str> {
        self.0.get(key)?.as_str().filter(|s| !s.is_empty())
    }

    /// The first string of an array field (a workspace's roots).
    pub(crate) fn first(&self, key: &str) -> Option<&str> {
        self.0
            .get(key)?
            .as_array()?
            .first()?
            .as_str()
            .filter(|s| !s.is_empty())
    }

    /// A string field of an object field (`tool_input.command`); empty counts as missing.
    pub(crate) fn text_in(&self, outer: &str, key: &str) -> Option<&str> {
        self.0
            .get(outer)?
            .get(key)?
            .as_str()
            .filter(|s| !s.is_empty())
    }

    /// The strings at `path` (objects by key): one string, or every string of an array
    /// (`tool_call.input.commands`); empty ones left out.
    pub(crate) fn strings_at(&self, path: &[&str]) -> Vec<&str> {
        let Some((first, rest)) = path.split_first() else {
            return Vec::new();
        };
        let mut value = self.0.get(*first);
        for key in rest {
            value = value.and_then(|v| v.get(key));
        }
        let all = match value {
            Some(Value::String(s)) => vec![s.as_str()],
            Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        all.into_iter().filter(|s| !s.is_empty()).collect()
    }

    /// Whether the field is present at all, whatever its value.
    pub(crate) fn has(&self, key: &str) -> bool {
        self.0.contains_key(key)
    }
}

/// Why a session started, as the hooks tell them apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Source {
    /// A fresh start of the client.
    Startup,
    /// A conversation taken up again (`--continue`, `/resume`).
    Resume,
    /// A cleared context (`/clear`, a new task).
    Clear,
    /// After a compaction.
    Compact,
    /// Any other word.
    Other,
}

impl Source {
    /// Every source, in the order their claims are looked up.
    pub(crate) const ALL: [Source; 5] = [
        Source::Startup,
        Source::Resume,
        Source::Clear,
        Source::Compact,
        Source::Other,
    ];

    pub(crate) fn parse(word: &str) -> Source {
        match word {
            "startup" => Source::Startup,
            "resume" => Source::Resume,
            "clear" => Source::Clear,
            "compact" => Source::Compact,
            _ => Source::Other,
        }
    }

    pub(crate) fn word(self) -> &'static str {
        match self {
            Source::Startup => "startup",
            Source::Resume => "resume",
            Source::Clear => "clear",
            Source::Compact => "compact",
            Source::Other => "other",
        }
    }
}

/// A session id as the client sent it, and its safe form for file names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SessionId {
    raw: String,
    safe: String,
}

impl SessionId {
    pub(crate) fn new(raw: &str) -> SessionId {
        SessionId {
            raw: raw.to_string(),
            safe: safe_session_id(raw),
        }
    }

    /// As the client sent it (shown in `status`, never a file name).
    pub(crate) fn raw(&self) -> &str {
        &self.raw
    }

    /// Itself when safe, else `x-<md5 hex>`: what names files.
    pub(crate) fn safe(&self) -> &str {
        &self.safe
    }
}

/// What every hook reads, whichever client sent it.
#[derive(Debug, Clone)]
pub(crate) struct HookInput {
    /// The client's name (`claude-code`, …), for the delivery record.
    pub(crate) client: &'static str,
    pub(crate) session: Option<SessionId>,
    pub(crate) cwd: Option<String>,
    pub(crate) source: Option<Source>,
    pub(crate) transcript: Option<String>,
    /// The compaction's summary, where the client hands it to its post-compaction hook
    /// (Claude Code's PostCompact `compact_summary`).
    pub(crate) summary: Option<String>,
    /// Why a session ended (SessionEnd's `reason`).
    pub(crate) reason: Option<String>,
    /// Whether a delivery may mark the handoff consumed: not for a client known to run the
    /// hook without passing its output to the model every time.
    pub(crate) consume: bool,
    /// Whether the client runs our prompt hook, so a handoff still being written can follow at
    /// the next prompt (never a wait).
    pub(crate) prompt_hook: bool,
    /// Where a placeholder's writer leaves its trail (the door sets the default writer's).
    pub(crate) trail: crate::ops::deliver::Trail,
}

impl HookInput {
    /// The input in Claude Code's spelling (`session_id`, `cwd`, `source`, `transcript_path`,
    /// `reason`), which several clients share.
    pub(crate) fn common(raw: &RawInput, client: &'static str) -> HookInput {
        HookInput {
            client,
            session: raw.text("session_id").map(SessionId::new),
            cwd: raw.text("cwd").map(str::to_string),
            source: raw.text("source").map(Source::parse),
            transcript: raw.text("transcript_path").map(str::to_string),
            summary: raw.text("compact_summary").map(str::to_string),
            reason: raw.text("reason").map(str::to_string),
            consume: true,
            prompt_hook: false,
            trail: crate::ops::deliver::no_trail,
        }
    }

    /// The safe session id, when there is one.
    pub(crate) fn sid(&self) -> Option<&str> {
        self.session.as_ref().map(SessionId::safe)
    }

    /// The hook's target (docs/hooks.md §0): `CONTEXT_ECONOMY_CHECKOUT`, else the input's
    /// `cwd`, else the process cwd. An unusable choice never falls through to the next source.
    pub(crate) fn target(&self) -> Option<Target> {
        if crate::env::settings().checkout.is_some() {
            return Target::resolve(None).ok();
        }
        match &self.cwd {
            Some(cwd) => Target::at(Path::new(cwd)),
            None => Target::at(&std::env::current_dir().ok()?),
        }
    }
}

/// The safe form of a session id: itself when safe, else `x-<md5 hex>`.
pub(crate) fn safe_session_id(id: &str) -> String {
    if is_safe_id(id) {
        id.to_string()
    } else {
        format!("x-{}", hex_md5(id.as_bytes()))
    }
}

/// Whether the recursion guard is on (the background writer's own hooks stay inert).
pub(crate) fn is_writer_child() -> bool {
    crate::env::settings().writer_child
}

/// The store, if one can be located (hooks never fail on it).
pub(crate) fn store() -> Option<Store> {
    Store::locate().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unsafe_ids_are_hashed() {
        assert_eq!(safe_session_id("abc-123"), "abc-123");
        let hashed = safe_session_id("../../x");
        assert!(hashed.starts_with("x-") && hashed.len() == 34);
        assert_ne!(safe_session_id("a;b"), safe_session_id("a;c"));
        assert!(safe_session_id("$(id)").starts_with("x-"));
    }

    #[test]
    fn fields_of_another_type_are_missing() {
        let raw = RawInput::parse(
            br#"{"session_id": 5, "cwd": "", "roots": ["/w", "/v"], "source": "clear"}"#,
        )
        .expect("object");
        let input = HookInput::common(&raw, "some-client");
        assert_eq!((input.session, input.cwd), (None, None));
        assert_eq!(input.source, Some(Source::Clear));
        assert_eq!(raw.first("roots"), Some("/w"));
        assert!(RawInput::parse(b"[1]").is_none());
    }
}
