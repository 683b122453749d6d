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

fn parse(text: &str) -> Result<CstRootNode, String> {
    let text = if text.trim().is_empty() { "{}\n" } else { text };
    CstRootNode::parse(text, &ParseOptions::default()).map_err(|e| e.to_string())
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
pub fn append(text: &str, path: &[&str], entry: &Value) -> Result<String, String> {
    let root = parse(text)?;
    if root.value().is_some() && root.object_value().is_none() {
        return Err("its top level is not a JSON object".into());
    }
    let Some((last, parents)) = path.split_last() else {
        return Err("no key path".into());
    };
    let mut obj = root.object_value_or_set();
    for key in parents {
        obj = obj.object_value_or_set(key);
    }
    obj.array_value_or_set(last).append(input(entry));
    Ok(root.to_string())
}

/// The whole document as a plain value (`{}` for an empty one; `None` when it is not JSON with
/// comments).
pub fn value(text: &str) -> Option<Value> {
    let root = parse(text).ok()?;
    root.value()?.to_serde_value()
}

/// The elements of the array at `path`, as plain values (`[]` when absent or unreadable).
pub fn elements(text: &str, path: &[&str]) -> Vec<Value> {
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

/// `text` without the elements of the array at `path` that `ours` picks, and how many went.
pub fn remove(
    text: &str,
    path: &[&str],
    ours: impl Fn(&Value) -> bool,
) -> Result<(String, usize), String> {
    let root = parse(text)?;
    let Some(array) = find(&root, path) else {
        return Ok((text.to_string(), 0));
    };
    let mut removed = 0;
    for element in array.elements() {
        if element.to_serde_value().is_some_and(|v| ours(&v)) {
            element.remove();
            removed += 1;
        }
    }
    Ok((root.to_string(), removed))
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
        let (back, n) = remove(&added, &["hooks", "SessionStart"], |v| {
            v["command"] == "ours"
        })
        .expect("removed");
        assert_eq!(n, 1);
        assert!(back.contains("\"Stop\": [{\"command\": \"x\"}]"), "{back}");
        assert!(elements(&back, &["hooks", "SessionStart"]).is_empty());
    }

    #[test]
    fn a_top_level_array_is_refused() {
        assert!(append("[1]", &["hooks", "x"], &Value::Null).is_err());
    }
}
