//! Format-preserving edits of the JSON (or JSON-with-comments) files harnesses keep their hooks
//! in: one hook group appended to an array at a path of object keys, and the groups that are
//! ours taken out again — every other byte, comment and hook left as it was (jsonc-parser's CST).

use jsonc_parser::ParseOptions;
use jsonc_parser::cst::{CstArray, CstInputValue, CstRootNode};
use serde_json::Value;

fn input(v: &Value) -> CstInputValue {
    match v {
        Value::Null => CstInputValue::Null,
        Value::Bool(b) => CstInputValue::Bool(*b),
        Value::Number(n) => CstInputValue::Number(n.to_string()),
        Value::String(s) => CstInputValue::String(s.clone()),
        Value::Array(a) => CstInputValue::Array(a.iter().map(input).collect()),
        Value::Object(o) => {
            CstInputValue::Object(o.iter().map(|(k, v)| (k.clone(), input(v))).collect())
        }
    }
}

/// Why a hooks file could not be edited.
#[derive(Debug)]
pub(crate) enum JsoncError {
    /// Not JSON with comments (the parser's words).
    Syntax(String),
    /// The top level is an array, a string, …: there is nowhere to put a hook.
    NotAnObject,
    /// A key on the way to the hooks is there twice in one object: the clients read the last,
    /// an edit would land in the first.
    DuplicateKey(String),
}

impl std::fmt::Display for JsoncError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            JsoncError::Syntax(why) => f.write_str(why),
            JsoncError::NotAnObject => f.write_str("its top level is not a JSON object"),
            JsoncError::DuplicateKey(key) => write!(
                f,
                "it holds the key {key:?} twice in one object: the client reads the last one, so a hook added to the first would never run; remove one of them"
            ),
        }
    }
}

impl std::error::Error for JsoncError {}

fn parse(text: &str) -> Result<CstRootNode, JsoncError> {
    let text = if text.trim().is_empty() { "{}\n" } else { text };
    CstRootNode::parse(text, &ParseOptions::default())
        .map_err(|e| JsoncError::Syntax(e.to_string()))
}

/// The array at `path` (object keys), without creating anything.
fn find(root: &CstRootNode, path: &[&str]) -> Option<CstArray> {
    let (last, parents) = path.split_last()?;
    let mut obj = root.object_value()?;
    for key in parents {
        obj = obj.object_value(key)?;
    }
    obj.array_value(last)
}

/// `text` with `entry` appended to the array at `path`, creating the objects and the array
/// that are missing. Refuses a file whose top level is not an object.
///
/// `path` holds at least one key (the callers' paths are constants).
pub(crate) fn append(text: &str, path: &[&str], entry: &Value) -> Result<String, JsoncError> {
    let root = parse(text)?;
    if root.value().is_some() && root.object_value().is_none() {
        return Err(JsoncError::NotAnObject);
    }
    if let Some(key) = duplicate_on(&root, path) {
        return Err(JsoncError::DuplicateKey(key));
    }
    let Some((last, parents)) = path.split_last() else {
        return Ok(text.to_string());
    };
    let mut obj = root.object_value_or_set();
    for key in parents {
        obj = obj.object_value_or_set(key);
    }
    obj.array_value_or_set(last).append(input(entry));
    Ok(root.to_string())
}

/// The first key of `path` found twice in one object on the way down (the top level, then
/// each object `path` names), when the document holds one.
pub(crate) fn duplicate_key(text: &str, path: &[&str]) -> Option<String> {
    duplicate_on(&parse(text).ok()?, path)
}

fn duplicate_on(root: &CstRootNode, path: &[&str]) -> Option<String> {
    let mut obj = root.object_value()?;
    for (depth, key) in path.iter().enumerate() {
        let mut seen = std::collections::HashSet::new();
        for prop in obj.properties() {
            let name = prop.name().and_then(|n| n.decoded_value().ok())?;
            if !seen.insert(name.clone()) && path[..=depth].contains(&name.as_str()) {
                return Some(name);
            }
        }
        obj = obj.object_value(key)?;
    }
    None
}

/// The whole document as a plain value (`{}` for an empty one; `None` when it is not JSON with
/// comments).
pub(crate) fn value(text: &str) -> Option<Value> {
    let root = parse(text).ok()?;
    root.value()?.to_serde_value()
}

/// The elements of the array at `path`, as plain values (`[]` when absent or unreadable).
pub(crate) fn elements(text: &str, path: &[&str]) -> Vec<Value> {
    parse(text)
        .ok()
        .and_then(|root| find(&root, path))
        .map(|a| {
            a.elements()
                .iter()
                .filter_map(|e| e.to_serde_value())
                .collect()
        })
        .unwrap_or_default()
}

/// `text` without our hooks in the array at `path`, and how many went. `ours` picks a hook:
/// an element itself (a flat hook) or, inside an element that holds a `hooks` array (a group),
/// one entry of it — the group goes only once nothing of the user's is left in it. The array,
/// and each object on `path` above it, goes when it is left empty and `keep` says the file did
/// not have it before we added ours.
pub(crate) fn remove(
    text: &str,
    path: &[&str],
    ours: impl Fn(&Value) -> bool,
    keep: impl Fn(&[&str]) -> bool,
) -> Result<(String, usize), JsoncError> {
    let root = parse(text)?;
    let Some(array) = find(&root, path) else {
        return Ok((text.to_string(), 0));
    };
    let mut removed = 0;
    for element in array.elements() {
        let inner = element.as_object().and_then(|o| o.array_value("hooks"));
        match inner {
            Some(hooks) => {
                let entries = hooks.elements();
                let mine: Vec<_> = entries
                    .iter()
                    .filter(|e| e.to_serde_value().is_some_and(|v| ours(&v)))
                    .cloned()
                    .collect();
                if mine.is_empty() {
                    continue;
                }
                removed += mine.len();
                if mine.len() == entries.len() {
                    element.remove();
                } else {
                    mine.into_iter().for_each(|e| e.remove());
                }
            }
            None => {
                if element.to_serde_value().is_some_and(|v| ours(&v)) {
                    element.remove();
                    removed += 1;
                }
            }
        }
    }
    // Empty containers the file did not have: the array, then each object above it.
    for depth in (1..=path.len()).rev() {
        let here = &path[..depth];
        let Some((last, parents)) = here.split_last() else {
            break;
        };
        let Some(mut parent) = root.object_value() else {
            break;
        };
        let mut found = true;
        for key in parents {
            match parent.object_value(key) {
                Some(o) => parent = o,
                None => {
                    found = false;
                    break;
                }
            }
        }
        let Some(prop) = parent.get(last).filter(|_| found) else {
            break;
        };
        let empty = prop.value().is_some_and(|v| {
            v.as_array().is_some_and(|a| a.elements().is_empty())
                || v.as_object().is_some_and(|o| o.properties().is_empty())
        });
        if !empty || keep(here) {
            break;
        }
        prop.remove();
    }
    Ok((root.to_string(), removed))
}

/// Whether the JSON (with comments) `text` has a value at `path`.
pub(crate) fn has(text: &str, path: &[&str]) -> bool {
    value(text).is_some_and(|v| path.iter().try_fold(&v, |at, key| at.get(*key)).is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn appending_keeps_comments_and_other_hooks() {
        let text = "{\n  // mine\n  \"hooks\": {\n    \"Stop\": [{\"command\": \"x\"}]\n  },\n  \"theme\": \"dark\"\n}\n";
        let added = append(
            text,
            &["hooks", "SessionStart"],
            &serde_json::json!({"command": "ours"}),
        )
        .expect("appended");
        assert!(
            added.contains("// mine") && added.contains("\"theme\": \"dark\""),
            "{added}"
        );
        assert_eq!(elements(&added, &["hooks", "SessionStart"]).len(), 1);
        let (back, n) = remove(
            &added,
            &["hooks", "SessionStart"],
            |v| v["command"] == "ours",
            |_| false,
        )
        .expect("removed");
        assert_eq!(n, 1);
        assert!(back.contains("\"Stop\": [{\"command\": \"x\"}]"), "{back}");
        assert!(
            !back.contains("SessionStart"),
            "no empty array left: {back}"
        );
    }

    #[test]
    fn a_users_hook_in_our_group_stays_and_containers_the_file_had_stay() {
        let text = r#"{"hooks": {"S": [{"hooks": [{"command": "ours"}, {"command": "theirs"}]}]}}"#;
        let (back, n) =
            remove(text, &["hooks", "S"], |v| v["command"] == "ours", |_| false).expect("removed");
        assert_eq!(n, 1);
        assert_eq!(
            value(&back),
            Some(serde_json::json!({"hooks": {"S": [{"hooks": [{"command": "theirs"}]}]}}))
        );
        let text = r#"{"hooks": {"S": [{"hooks": [{"command": "ours"}]}]}, "x": 1}"#;
        let gone = remove(text, &["hooks", "S"], |v| v["command"] == "ours", |_| false)
            .expect("removed")
            .0;
        assert_eq!(value(&gone), Some(serde_json::json!({"x": 1})));
        let kept = remove(
            text,
            &["hooks", "S"],
            |v| v["command"] == "ours",
            |p| p == ["hooks"],
        )
        .expect("removed")
        .0;
        assert_eq!(value(&kept), Some(serde_json::json!({"hooks": {}, "x": 1})));
        assert!(has(text, &["hooks", "S"]) && !has(text, &["hooks", "T"]));
    }

    #[test]
    fn a_top_level_array_is_refused() {
        assert!(append("[1]", &["hooks", "x"], &Value::Null).is_err());
    }
}
