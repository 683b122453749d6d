//! Tool calls as clients spell them, read into the tripwires' `Call` in one place: a file
//! path made absolute against the session's directory, an `apply_patch` envelope's files (the
//! edit tool several clients share), and a transcript's tool call read as the
//! client's own tool hook would read it (`impact`).

use std::path::{Path, PathBuf};

use serde_json::json;

use super::{Client, Harness};
use crate::hooks::input::RawInput;
use crate::ops::tripwire::Call;

/// `impact`'s reader of transcript lines: the client `client` names (as the reset log records
/// it), else none.
pub(crate) fn transcript_line(
    client: &str,
    line: &serde_json::Value,
    checkout: &str,
) -> Option<crate::ops::impact::Line> {
    Harness::named(client)?
        .client()
        .transcript_line(line, checkout)
}

/// `impact`'s reader of a transcript kept in a store: the client `client` names, where its
/// transcripts are a store (see [`crate::ops::impact::RowReader`]).
pub(crate) fn transcript_rows(
    client: &str,
    path: &Path,
    session: &str,
    from_ms: i64,
    each: &mut dyn FnMut(serde_json::Value) -> bool,
) -> Option<std::io::Result<()>> {
    Harness::named(client)?
        .client()
        .transcript_rows(path, session, from_ms, each)
}

/// A tool call a transcript records, `name` with its `input` in the session's `cwd`, as the
/// client's own tool hook reads it; `names` is what a cited path is looked for in.
pub(crate) fn transcript_tool(
    client: &dyn Client,
    name: &str,
    input: &serde_json::Value,
    cwd: Option<&str>,
) -> crate::ops::impact::Tool {
    let raw = json!({"tool_name": name, "tool_input": input, "cwd": cwd});
    let call = RawInput::parse(raw.to_string().as_bytes()).and_then(|r| client.tool_call(&r));
    let names = [
        "file_path",
        "filePath",
        "absolute_path",
        "notebook_path",
        "path",
        "command",
        "cmd",
    ]
    .iter()
    .find_map(|k| input.get(k).and_then(serde_json::Value::as_str))
    .map(str::to_string);
    crate::ops::impact::Tool {
        id: None,
        call,
        names,
    }
}

/// An edit of `path`, made absolute against the session's `cwd` (the client's, else ours).
pub(crate) fn edit(cwd: Option<&str>, path: &str) -> Option<Call> {
    let path = absolute(cwd, path)?;
    Some(Call::Edit { path, lines: None })
}

/// `path` made absolute against the session's `cwd` (the client's, else ours).
pub(crate) fn absolute(cwd: Option<&str>, path: &str) -> Option<PathBuf> {
    let path = Path::new(path);
    if path.is_absolute() {
        return Some(path.to_path_buf());
    }
    Some(
        cwd.map(PathBuf::from)
            .or_else(|| std::env::current_dir().ok())?
            .join(path),
    )
}

/// The edit a patch in OpenAI's `apply_patch` envelope makes (an edit tool several clients
/// share): of each file it names, made absolute against `cwd`; `None` when `text` is no patch.
pub(crate) fn patch(cwd: Option<&str>, text: &str) -> Option<Call> {
    let files = patched_files(text)?;
    Some(Call::Patch(
        files.iter().filter_map(|f| absolute(cwd, f)).collect(),
    ))
}

/// The files an `apply_patch` envelope adds, updates, deletes or moves to (`*** Update File:
/// <path>` …), when `text` is one (alone or as `apply_patch <<'EOF' … EOF`).
fn patched_files(text: &str) -> Option<Vec<&str>> {
    let body = text.trim_start();
    let body = body
        .strip_prefix("apply_patch")
        .or_else(|| body.strip_prefix("applypatch"))
        .unwrap_or(body);
    if !body.contains("*** Begin Patch") {
        return None;
    }
    let files = body
        .lines()
        .filter_map(|l| {
            [
                "*** Update File: ",
                "*** Add File: ",
                "*** Delete File: ",
                "*** Move to: ",
            ]
            .iter()
            .find_map(|p| l.strip_prefix(p))
        })
        .map(str::trim)
        .filter(|f| !f.is_empty())
        .collect();
    Some(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_patch_names_the_files_it_touches_and_a_command_is_no_patch() {
        let heredoc = "apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: src/a.rs\n*** Move to: src/b.rs\n@@\n-x\n+y\n*** Delete File: old.rs\n*** Add File: /abs/new.rs\n+z\n*** End Patch\nEOF\n";
        assert_eq!(
            patched_files(heredoc),
            Some(vec!["src/a.rs", "src/b.rs", "old.rs", "/abs/new.rs"])
        );
        assert_eq!(
            patched_files("*** Begin Patch\n*** Update File: a.rs\n*** End Patch"),
            Some(vec!["a.rs"])
        );
        assert_eq!(patched_files("make test-slow"), None);
        assert_eq!(patched_files("grep -n 'Update File' notes.md"), None);
    }
}
