//! What every hook reads first: its JSON object from stdin (bounded, never from a terminal),
//! its string fields, the session id made safe for a file name, the checkout it is about, and
//! the store. Strings from stdin are data: never a shell word, never a path unchecked.

use std::io::{IsTerminal, Read};
use std::path::Path;

use serde_json::{Map, Value};

use crate::store::naming::is_safe_id;
use crate::store::{Store, Target};
use crate::text::hex_md5;

/// The most stdin a hook reads.
const STDIN_CAP: u64 = 1024 * 1024;

/// The hook's JSON object from stdin, or `None` when stdin is a terminal, too large, or not a
/// JSON object.
pub fn read_input(stdin: impl Read + IsTerminal) -> Option<Map<String, Value>> {
    if stdin.is_terminal() {
        return None;
    }
    let mut bytes = Vec::new();
    stdin.take(STDIN_CAP + 1).read_to_end(&mut bytes).ok()?;
    if bytes.len() as u64 > STDIN_CAP {
        return None;
    }
    match serde_json::from_slice(&bytes).ok()? {
        Value::Object(map) => Some(map),
        _ => None,
    }
}

/// A string field; a missing field or one of another type is `None`; empty counts as missing.
pub fn string_field<'a>(input: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    input.get(key)?.as_str().filter(|s| !s.is_empty())
}

/// The safe form of a session id: itself when safe, else `x-<md5 hex>`.
pub fn safe_session_id(id: &str) -> String {
    if is_safe_id(id) {
        id.to_string()
    } else {
        format!("x-{}", hex_md5(id.as_bytes()))
    }
}

/// Whether the recursion guard is on (the background writer's own hooks stay inert).
pub fn is_writer_child() -> bool {
    crate::env::settings().writer_child
}

/// The hook's target (docs/hooks.md §0): `CONTEXT_ECONOMY_CHECKOUT`, else stdin `cwd`, else the
/// process cwd. An unusable choice never falls through to the next source.
pub fn target(input: &Map<String, Value>) -> Option<Target> {
    if crate::env::settings().checkout.is_some() {
        return Target::resolve(None).ok();
    }
    match string_field(input, "cwd") {
        Some(cwd) => Target::at(Path::new(cwd)),
        None => Target::at(&std::env::current_dir().ok()?),
    }
}

/// The store, if one can be located (hooks never fail on it).
pub fn store() -> Option<Store> {
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
}
