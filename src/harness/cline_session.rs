//! Cline's sessions, as `impact` reads them (docs/store.md §9.20). Its CLI (3.0.65, measured)
//! hands its hooks `sessionContext.rootSessionId` and keeps that session's messages in
//! `<sessions>/<id>/<id>.messages.json` — `<sessions>` is `$CLINE_SESSION_DATA_DIR`, else
//! `$CLINE_DATA_DIR/sessions`, else `$CLINE_DIR/data/sessions`, else `~/.cline/data/sessions`.
//! The file is one JSON document, `{"messages": [...], ...}`; each message has `ts`
//! (milliseconds), an assistant's `metrics` (its request's tokens) and `tool_use` blocks
//! (`run_commands` with `commands`, `editor` with `path`, …). It is read a message at a time
//! (a streaming parse of the `messages` array), so memory stays bounded by one message.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Value, json};

use super::Client;
use crate::hooks::input::RawInput;
use crate::ops::impact::{Line, Tool};

/// The messages file of the session `root` (the hook's `sessionContext.rootSessionId`), when the
/// id is a plain name.
pub(super) fn messages_file(root: &str) -> Option<PathBuf> {
    let plain = !root.is_empty()
        && !root.starts_with('.')
        && root
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
    if !plain {
        return None;
    }
    let var = |name: &str| {
        crate::env::non_empty(name)
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
    };
    let sessions = var("CLINE_SESSION_DATA_DIR")
        .or_else(|| var("CLINE_DATA_DIR").map(|d| d.join("sessions")))
        .or_else(|| var("CLINE_DIR").map(|d| d.join("data/sessions")))
        .or_else(|| Some(super::install::home().ok()?.join(".cline/data/sessions")))?;
    Some(sessions.join(root).join(format!("{root}.messages.json")))
}

/// Each message of the file at `path`, in order, to `each` until it returns `false`.
pub(super) fn messages(path: &Path, each: &mut dyn FnMut(Value) -> bool) -> std::io::Result<()> {
    let file = crate::fs::File::open(path)?;
    if !file.metadata()?.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    let mut de = serde_json::Deserializer::from_reader(std::io::BufReader::new(file));
    de.deserialize_map(Document { each })
        .map_err(std::io::Error::other)
}

/// One message as a transcript line: its time; an assistant's request tokens (`metrics`, cache
/// included) and its tool calls, read as its own tool hook reads them.
pub(super) fn line(client: &dyn Client, message: &Value, checkout: &str) -> Option<Line> {
    let mut line = Line {
        at: Some(message["ts"].as_i64()?.div_euclid(1000)),
        ..Line::default()
    };
    if message["role"] != "assistant" {
        return Some(line);
    }
    let metrics = &message["metrics"];
    let tokens: u64 = [
        "inputTokens",
        "outputTokens",
        "cacheReadTokens",
        "cacheWriteTokens",
    ]
    .iter()
    .filter_map(|k| metrics[k].as_u64())
    .sum();
    if metrics.is_object() {
        line.usage = Some((message["id"].as_str().map(str::to_string), tokens));
    }
    for block in message["content"].as_array().into_iter().flatten() {
        if block["type"] != "tool_use" {
            continue;
        }
        let input = &block["input"];
        let raw = json!({"tool_call": {"name": block["name"], "input": input},
            "workspaceRoots": [checkout]});
        let call = RawInput::parse(raw.to_string().as_bytes()).and_then(|r| client.tool_call(&r));
        let names = ["path", "file_path", "commands", "paths", "file_paths"]
            .iter()
            .find_map(|k| match &input[k] {
                Value::String(s) => Some(s.clone()),
                Value::Array(a) => Some(
                    a.iter()
                        .filter_map(Value::as_str)
                        .collect::<Vec<_>>()
                        .join("\n"),
                ),
                _ => None,
            });
        line.tools.push(Tool {
            id: block["id"].as_str().map(str::to_string),
            call,
            names,
        });
    }
    Some(line)
}

/// The top-level object: its `messages` streamed, every other field skipped.
struct Document<'a> {
    each: &'a mut dyn FnMut(Value) -> bool,
}

impl<'de> DeserializeSeed<'de> for Document<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<(), D::Error> {
        de.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Document<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a Cline session's messages document")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<String>()? {
            if key == "messages" {
                map.next_value_seed(Messages {
                    each: &mut *self.each,
                })?;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(())
    }
}

/// The `messages` array, one message at a time.
struct Messages<'a> {
    each: &'a mut dyn FnMut(Value) -> bool,
}

impl<'de> DeserializeSeed<'de> for Messages<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<(), D::Error> {
        de.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for Messages<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array of messages")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut going = true;
        while let Some(message) = seq.next_element::<Value>()? {
            // Past the span's end the rest is still read (the parser must reach the array's
            // end), never handed on.
            going = going && (self.each)(message);
        }
        Ok(())
    }
}
