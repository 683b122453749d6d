//! `status`: per harness and scope, whether our hook is installed and whether it would run, so an
//! install that silently does nothing is never the outcome. Each client says whether its
//! installed hook would run (`Client::would_run`); a client that keeps its own hook trust is
//! asked itself.

use std::path::Path;

use serde::Serialize;

use super::Harness;
use super::install::{Scope, installed_program, is_installed, plan};

/// One row of `status`.
#[derive(Debug, Serialize)]
pub(crate) struct Row {
    pub(crate) harness: &'static str,
    pub(crate) scope: &'static str,
    pub(crate) file: Option<String>,
    pub(crate) installed: bool,
    /// `yes`, `no` or `unknown`.
    pub(crate) runs: &'static str,
    pub(crate) why: String,
}

/// Whether a hook would run (`yes`, `no`, `unknown`) and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Verdict {
    pub(crate) runs: &'static str,
    pub(crate) why: String,
}

impl Verdict {
    pub(crate) fn yes(why: impl Into<String>) -> Verdict {
        Verdict {
            runs: "yes",
            why: why.into(),
        }
    }

    pub(crate) fn no(why: impl Into<String>) -> Verdict {
        Verdict {
            runs: "no",
            why: why.into(),
        }
    }

    pub(crate) fn unknown(why: impl Into<String>) -> Verdict {
        Verdict {
            runs: "unknown",
            why: why.into(),
        }
    }
}

/// `status`'s rows for the MCP servers of ours (`handoff-store mcp`) registered in the JSON
/// `file` under each path of `places` (an object of servers, each with `command` and `args`, or
/// `command` as an argument vector, as one client spells it), the file read once: whether the
/// program each names is there.
pub(crate) fn mcp_rows(harness: &'static str, file: &Path, places: &[&[&str]]) -> Vec<Row> {
    let Some(value) = crate::fs::read_regular_text(file)
        .ok()
        .and_then(|t| super::jsonc::value(&t))
    else {
        return Vec::new();
    };
    let servers = places.iter().filter_map(|at| {
        at.iter()
            .try_fold(&value, |v, k| v.get(k))
            .and_then(|v| v.as_object())
    });
    let strings = |v: Option<&serde_json::Value>| -> Vec<String> {
        v.and_then(|a| a.as_array())
            .map(|a| {
                a.iter()
                    .filter_map(|s| s.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    };
    servers
        .flatten()
        .filter_map(|(_, server)| {
            let argv = match server.get("command") {
                Some(serde_json::Value::String(c)) => std::iter::once(c.clone())
                    .chain(strings(server.get("args")))
                    .collect(),
                other => strings(other),
            };
            mcp_row(harness, file, &argv)
        })
        .collect()
}

/// The row for one registered server whose argument vector is `argv`, when it is ours: a
/// `handoff-store` program run with `mcp`.
pub(crate) fn mcp_row(harness: &'static str, file: &Path, argv: &[String]) -> Option<Row> {
    let (program, args) = argv.split_first()?;
    let path = Path::new(program);
    let ours = path
        .file_name()
        .is_some_and(|n| n.to_string_lossy().starts_with("handoff-store"))
        && args.first().map(String::as_str) == Some("mcp");
    if !ours {
        return None;
    }
    let verdict = match resolved(path) {
        Some(p) => Verdict::yes(format!("MCP server {}", p.display())),
        None => Verdict::no(format!(
            "MCP server {program}: no such program (moved, removed, or not on PATH)"
        )),
    };
    Some(Row {
        harness,
        scope: "mcp",
        file: Some(file.to_string_lossy().into_owned()),
        installed: true,
        runs: verdict.runs,
        why: verdict.why,
    })
}

pub(crate) fn scope_name(s: Scope) -> &'static str {
    match s {
        Scope::User => "user",
        Scope::Project => "project",
    }
}

/// Every client in both scopes, for the checkout at `root` (project scope) and `cwd`; first
/// what sits beside the hook files (a client's plugin, a setting of ours).
pub(crate) fn rows(root: Option<&Path>, cwd: &Path) -> Vec<Row> {
    let mut out: Vec<Row> = Harness::ALL
        .iter()
        .flat_map(|h| h.client().rows_beside(root, cwd))
        .collect();
    for h in Harness::ALL {
        for scope in [Scope::User, Scope::Project] {
            if let Ok(p) = plan(h, scope, root) {
                out.push(row(h, scope, &p, root, cwd));
            }
        }
    }
    out
}

/// The row of client `h`'s hook in `scope`: installed, and would it run (and why not).
fn row(h: Harness, scope: Scope, p: &super::install::Plan, root: Option<&Path>, cwd: &Path) -> Row {
    let client = h.client();
    let broken = unusable(p);
    // In a file the client cannot use as it is, a hook of ours anywhere counts.
    let installed = is_installed(p)
        || (broken.is_some()
            && crate::fs::read_regular_text(&p.file)
                .is_ok_and(|t| t.contains(" hook session-start")));
    let install = format!(
        "handoff-store install {} --{}",
        h.install_word(),
        scope_name(scope)
    );
    let verdict = if let Some(broken) = broken {
        // Whatever we find in it, the client cannot use it as it is.
        Verdict::no(broken)
    } else if !installed {
        Verdict::no(format!("not installed: {install}"))
    } else {
        match installed_program(p) {
            // A bare name (`install --on-path`) runs what PATH finds.
            Some(program)
                if program.components().count() == 1
                    && crate::env::on_path(&program, crate::env::is_executable).is_none() =>
            {
                Verdict::no(format!(
                    "it runs {} from PATH, and there is none: put handoff-store on PATH",
                    program.display()
                ))
            }
            Some(program)
                if program.components().count() > 1 && !crate::env::is_executable(&program) =>
            {
                Verdict::no(format!(
                    "the program it runs, {}, does not exist (moved or removed): run {install} again",
                    program.display()
                ))
            }
            Some(program) if through_node(&program) => {
                let v = client.would_run(scope, &p.file, cwd);
                Verdict {
                    runs: v.runs,
                    why: format!(
                        "{}; it runs {}, npm's shim, so each hook starts Node first: run {install} again, without --on-path, to name the binary",
                        v.why,
                        program.display()
                    ),
                }
            }
            _ => client.would_run(scope, &p.file, cwd),
        }
    };
    let verdict = match (verdict.runs, client.vetoed(root)) {
        ("yes", Some(why)) => Verdict::no(why),
        _ => verdict,
    };
    Row {
        harness: h.name(),
        scope: scope_name(scope),
        file: Some(p.file.to_string_lossy().into_owned()),
        installed,
        runs: verdict.runs,
        why: verdict.why,
    }
}

/// Why a hooks file the client reads cannot work as it is: unreadable, not JSON with comments,
/// a key on the way to the hooks twice (the client reads the last one, our edits and our
/// reading find the first), a hook script without its execute bit. `None` when it is fine or
/// absent.
fn unusable(plan: &super::install::Plan) -> Option<String> {
    use super::install::Shape;
    let file = plan.file.display();
    let bytes = match crate::fs::read(&plan.file) {
        Ok(b) => b,
        Err(e) if crate::fs::cause(&e).kind() == std::io::ErrorKind::NotFound => return None,
        Err(e) => return Some(format!("{file} cannot be read: {}", crate::fs::cause(&e))),
    };
    match &plan.shape {
        Shape::Json { groups, .. } => {
            let Ok(text) = String::from_utf8(bytes) else {
                return Some(format!(
                    "{file} is not UTF-8 text: the client cannot read it"
                ));
            };
            if super::jsonc::value(&text).is_none() {
                return Some(format!(
                    "{file} is not valid JSON: the client cannot read its hooks; fix it, then install again"
                ));
            }
            groups.iter().find_map(|(path, _)| {
                super::jsonc::duplicate_key(&text, path)
                    .map(|key| format!("{file} holds the key {key:?} twice in one object: the client reads the last one; remove one of them, then install again"))
            })
        }
        Shape::File {
            executable: false, ..
        } => None,
        Shape::File { .. } => (!crate::env::is_executable(&plan.file)).then(|| {
            format!("{file} is not executable, so the client never runs it: chmod +x {file}")
        }),
    }
}

/// Whether `program` (a path, or a bare name PATH resolves) is a Node script — npm's shim of
/// this package — rather than the binary.
fn through_node(program: &Path) -> bool {
    let Some(Ok(mut file)) = resolved(program).map(crate::fs::File::open) else {
        return false;
    };
    let mut head = [0u8; 64];
    let n = std::io::Read::read(&mut file, &mut head).unwrap_or(0);
    head[..n].starts_with(b"#!") && head[..n].windows(4).any(|w| w == b"node")
}

/// The executable a configured program names: the path itself, or a bare name as PATH finds it.
fn resolved(program: &Path) -> Option<std::path::PathBuf> {
    if program.components().count() > 1 {
        Some(program.to_path_buf()).filter(|p| crate::env::is_executable(p))
    } else {
        crate::env::on_path(program, crate::env::is_executable)
    }
}
