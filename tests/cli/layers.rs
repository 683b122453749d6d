//! The house rule "layers only point down" (architecture.md), checked on the source: every
//! `crate::<module>` a file names must sit on its own layer or below, modules on one layer must
//! not import each other in a circle, and every module in `lib.rs` must be placed on a layer.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// From the bottom. Modules on one line share a layer.
const LAYERS: &[&[&str]] = &[
    &["text", "git", "input", "error", "secrets", "env", "process"],
    &["citation"],
    &["finding"],
    &["document"],
    &["resolve"],
    &["gate"],
    &["report"],
    &["store"],
    &["sync"],
    &["hooks"],
    &["harness"],
    &["cli"],
];

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&module))
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).expect("src").flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The modules a source text names as `crate::<module>`, comments aside.
fn imports(text: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for line in text.lines() {
        let code = line.split("//").next().unwrap_or("");
        let mut rest = code;
        while let Some(at) = rest.find("crate::") {
            let after = &rest[at + "crate::".len()..];
            let name: String = after
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            // `handoff_store::crate::` never occurs; `$crate::` would be a macro.
            if !name.is_empty() && !rest[..at].ends_with('$') {
                found.insert(name);
            }
            rest = after;
        }
    }
    found
}

#[test]
fn no_module_imports_one_above_it_or_in_a_circle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let lib = std::fs::read_to_string(src.join("lib.rs")).expect("lib.rs");
    let declared: Vec<String> = lib
        .lines()
        .filter_map(|l| l.strip_prefix("pub mod "))
        .map(|l| l.trim_end_matches(';').to_string())
        .collect();
    let unplaced: Vec<&String> = declared.iter().filter(|m| layer_of(m).is_none()).collect();
    assert!(
        unplaced.is_empty(),
        "modules on no layer (add them to LAYERS and architecture.md): {unplaced:?}"
    );

    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut upward = Vec::new();
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in &files {
        let rel = file.strip_prefix(&src).expect("under src");
        let top = rel
            .components()
            .next()
            .map(|c| {
                c.as_os_str()
                    .to_string_lossy()
                    .trim_end_matches(".rs")
                    .to_string()
            })
            .unwrap_or_default();
        let Some(own) = layer_of(&top) else {
            continue; // lib.rs and the binaries
        };
        let text = std::fs::read_to_string(file).expect("source");
        for m in imports(&text) {
            if m == top {
                continue;
            }
            match layer_of(&m) {
                Some(l) if l > own => upward.push(format!("{} imports crate::{m}", rel.display())),
                Some(_) => {
                    edges.entry(top.clone()).or_default().insert(m);
                }
                None => upward.push(format!("{} imports unknown crate::{m}", rel.display())),
            }
        }
    }
    assert!(upward.is_empty(), "arrows pointing up: {upward:#?}");

    // A circle among modules (only possible within one layer once nothing points up).
    fn visit(
        m: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(i) = path.iter().position(|p| p == m) {
            return Some(path[i..].to_vec());
        }
        if done.contains(m) {
            return None;
        }
        path.push(m.to_string());
        for n in edges.get(m).into_iter().flatten() {
            if let Some(c) = visit(n, edges, path, done) {
                return Some(c);
            }
        }
        path.pop();
        done.insert(m.to_string());
        None
    }
    let mut done = BTreeSet::new();
    for m in edges.keys() {
        let cycle = visit(m, &edges, &mut Vec::new(), &mut done);
        assert!(cycle.is_none(), "import circle: {cycle:?}");
    }
}

#[test]
fn the_import_reader_sees_what_it_must() {
    let found = imports(
        "use crate::store::slot;\n// crate::cli in a comment\nlet x = crate::git::open(p); /* */\n",
    );
    assert_eq!(
        found.into_iter().collect::<Vec<_>>(),
        ["git", "store"],
        "code counts, comments do not"
    );
}
