//! The house rule "layers only point down" (architecture.md), checked on the source: every
//! `crate::<module>` a file names must sit on its own layer or below, modules on one layer must
//! not import each other in a circle, every module in `lib.rs` must be placed on a layer, and
//! no two files of one module name each other in a circle (a `mod.rs` is the module's front
//! door — it declares and re-exports its files — so paths through it are not counted).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// From the bottom. Modules on one line share a layer.
const LAYERS: &[&[&str]] = &[
    &[
        "text", "fs", "shell", "git", "input", "error", "secrets", "env", "process", "durable",
        "settings",
    ],
    &["citation"],
    &["finding"],
    &["document"],
    &["resolve"],
    &["gate"],
    &["report"],
    &["store"],
    &["sync"],
    &["ops"],
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
        .filter_map(|l| {
            l.strip_prefix("pub mod ")
                .or_else(|| l.strip_prefix("pub(crate) mod "))
        })
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
    let circle = first_circle(&edges);
    assert!(circle.is_none(), "import circle: {circle:?}");
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

/// The module path of a file under `src/` (`store/slot/atomic.rs` → `store::slot::atomic`,
/// `store/slot/mod.rs` → `store::slot`), and whether it is a `mod.rs`.
fn module_path(rel: &Path) -> (Vec<String>, bool) {
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().to_string())
        .collect();
    let file = parts.pop().unwrap_or_default();
    let front_door = file == "mod.rs";
    if !front_door {
        parts.push(file.trim_end_matches(".rs").to_string());
    }
    (parts, front_door)
}

/// Every path a source text names from `crate::`, `super::` or `self::`, made absolute for a
/// file whose module is `own`, with `use` groups (`super::{a, b::c}`) expanded. Comments aside.
fn paths(text: &str, own: &[String]) -> Vec<Vec<String>> {
    let code: String = text
        .lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n");
    let bytes = code.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let starts_word = i == 0
            || !(bytes[i - 1].is_ascii_alphanumeric()
                || bytes[i - 1] == b'_'
                || bytes[i - 1] == b':'
                || bytes[i - 1] == b'$');
        let base: Option<(Vec<String>, usize)> = if !starts_word {
            None
        } else if bytes[i..].starts_with(b"crate::") {
            Some((Vec::new(), "crate::".len()))
        } else if bytes[i..].starts_with(b"self::") {
            Some((own.to_vec(), "self::".len()))
        } else if bytes[i..].starts_with(b"super::") {
            let mut b = own.to_vec();
            let mut n = 0;
            let mut rest = &code[i..];
            while let Some(r) = rest.strip_prefix("super::") {
                n += 1;
                rest = r;
            }
            for _ in 0..n {
                b.pop();
            }
            Some((b, "super::".len() * n))
        } else {
            None
        };
        match base {
            Some((prefix, skip)) => {
                let (found, used) = tree(&code[i + skip..], prefix);
                out.extend(found);
                i += skip + used.max(1);
            }
            None => i += 1,
        }
    }
    out
}

/// Parse one `use` tree (`a::b`, `a::{b, c::d}`) at the start of `text`, under `prefix`:
/// the paths it names and the bytes it took.
fn tree(text: &str, prefix: Vec<String>) -> (Vec<Vec<String>>, usize) {
    let bytes = text.as_bytes();
    let mut i = 0;
    let mut path = prefix;
    loop {
        while i < bytes.len() && bytes[i].is_ascii_whitespace() {
            i += 1;
        }
        if i < bytes.len() && bytes[i] == b'{' {
            let mut all = Vec::new();
            i += 1;
            loop {
                while i < bytes.len() && (bytes[i].is_ascii_whitespace() || bytes[i] == b',') {
                    i += 1;
                }
                if i >= bytes.len() || bytes[i] == b'}' {
                    return (all, i + 1);
                }
                let inner = &text[i..];
                let (found, used) = if inner.starts_with("self")
                    && !inner[4..].starts_with(|c: char| c.is_alphanumeric() || c == '_')
                {
                    (vec![path.clone()], 4)
                } else {
                    tree(inner, path.clone())
                };
                all.extend(found);
                i += used.max(1);
            }
        }
        let name: String = text[i..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        if name.is_empty() {
            return (vec![path], i);
        }
        path.push(name.clone());
        i += name.len();
        if text[i..].starts_with("::") {
            i += 2;
        } else {
            return (vec![path], i);
        }
    }
}

#[test]
fn no_two_files_of_a_module_name_each_other_in_a_circle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut modules: BTreeMap<Vec<String>, bool> = BTreeMap::new();
    let mut texts = Vec::new();
    for file in &files {
        let rel = file.strip_prefix(&src).expect("under src");
        if rel.starts_with("bin") || rel == Path::new("lib.rs") {
            continue;
        }
        let (module, front_door) = module_path(rel);
        modules.insert(module.clone(), front_door);
        texts.push((
            module,
            front_door,
            std::fs::read_to_string(file).expect("source"),
        ));
    }
    // What each front door re-exports: `pub(crate) use file::item;` in `a/mod.rs` makes
    // `a::item` a path into `a/file.rs`.
    let mut reexported: BTreeMap<Vec<String>, Vec<String>> = BTreeMap::new();
    for (module, front_door, text) in &texts {
        if *front_door {
            for path in reexports(text, module) {
                if let Some(name) = path.last() {
                    let mut at = module.clone();
                    at.push(name.clone());
                    reexported.insert(at, path);
                }
            }
        }
    }
    let lands_in = |path: &[String]| {
        (1..=path.len())
            .rev()
            .find_map(|n| modules.get(&path[..n]).map(|f| (path[..n].to_vec(), *f)))
    };
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (module, front_door, text) in &texts {
        if *front_door {
            continue;
        }
        for path in paths(text, module) {
            // The file a path lands in: its longest prefix that is a file's module — through a
            // front door's re-export to the file it names.
            let Some((mut target, mut target_front_door)) = lands_in(&path) else {
                continue;
            };
            if target_front_door && let Some(item) = path.get(target.len()) {
                let mut at = target.clone();
                at.push(item.clone());
                if let Some(found) = reexported.get(&at).and_then(|p| lands_in(p)) {
                    (target, target_front_door) = found;
                }
            }
            if target_front_door || &target == module {
                continue;
            }
            edges
                .entry(module.join("::"))
                .or_default()
                .insert(target.join("::"));
        }
    }
    let circles = circles(&edges);
    assert!(
        circles.is_empty(),
        "files naming each other in a circle: {circles:#?}"
    );
}

/// The paths a front door (`mod.rs`, module `own`) re-exports with `pub use` / `pub(crate) use`,
/// absolute (a path without `crate::`, `self::` or `super::` is relative to the module).
fn reexports(text: &str, own: &[String]) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for line in text.lines() {
        let Some(rest) = line
            .trim_start()
            .strip_prefix("pub(crate) use ")
            .or_else(|| line.trim_start().strip_prefix("pub use "))
        else {
            continue;
        };
        let relative = !["crate::", "self::", "super::"]
            .iter()
            .any(|p| rest.starts_with(p));
        let spelled = if relative {
            format!("self::{rest}")
        } else {
            rest.to_string()
        };
        out.extend(paths(&spelled, own));
    }
    out
}

#[test]
fn the_reexport_reader_follows_a_front_door() {
    let own = vec!["cli".to_string(), "render".to_string()];
    let found: Vec<String> = reexports(
        "mod write;\npub(crate) use write::{written, note};\npub use crate::store::Target;\n",
        &own,
    )
    .iter()
    .map(|p| p.join("::"))
    .collect();
    assert_eq!(
        found,
        [
            "cli::render::write::written",
            "cli::render::write::note",
            "store::Target"
        ]
    );
}

/// Every group of nodes that reach each other (each a circle or several sharing nodes).
fn circles(edges: &BTreeMap<String, BTreeSet<String>>) -> BTreeSet<Vec<String>> {
    let reach = |from: &str| {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from.to_string()];
        while let Some(m) = todo.pop() {
            for n in edges.get(&m).into_iter().flatten() {
                if seen.insert(n.clone()) {
                    todo.push(n.clone());
                }
            }
        }
        seen
    };
    let reached: BTreeMap<&String, BTreeSet<String>> =
        edges.keys().map(|m| (m, reach(m))).collect();
    reached
        .iter()
        .filter(|(m, r)| r.contains(m.as_str()))
        .map(|(m, r)| {
            r.iter()
                .filter(|n| reached.get(n).is_some_and(|back| back.contains(m.as_str())))
                .cloned()
                .collect()
        })
        .collect()
}

/// The first circle in a graph, as the nodes along it.
fn first_circle(edges: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
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
    edges
        .keys()
        .find_map(|m| visit(m, edges, &mut Vec::new(), &mut done))
}

#[test]
fn the_path_reader_resolves_super_self_crate_and_groups() {
    let own = vec![
        "hooks".to_string(),
        "texts".to_string(),
        "injection".to_string(),
    ];
    let found = paths(
        "use super::super::marker::Marker;\nuse crate::store::{index, info::Info};\n// super::gone\nlet x = self::helper();\nuse super::{truncate, self};\n",
        &own,
    );
    let joined: Vec<String> = found.iter().map(|p| p.join("::")).collect();
    assert_eq!(
        joined,
        [
            "hooks::marker::Marker",
            "store::index",
            "store::info::Info",
            "hooks::texts::injection::helper",
            "hooks::texts::truncate",
            "hooks::texts",
        ]
    );
}

/// Every source file under `src/`: its path there (`/`-separated) and its text.
fn sources() -> Vec<(String, String)> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files
        .iter()
        .map(|f| {
            let rel = f
                .strip_prefix(&src)
                .expect("under src")
                .display()
                .to_string();
            (rel, std::fs::read_to_string(f).expect("source"))
        })
        .collect()
}

/// `file:line` of every line of code (comments aside) holding one of `needles`, in the files
/// `keep` accepts.
fn code_holding(needles: &[&str], keep: impl Fn(&str) -> bool) -> Vec<String> {
    let mut found = Vec::new();
    for (rel, text) in sources().iter().filter(|(rel, _)| keep(rel)) {
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            if needles.iter().any(|f| code.contains(f)) {
                found.push(format!("{rel}:{}", n + 1));
            }
        }
    }
    found
}

/// One place decides what follows a change — `ops/after.rs` is the only caller of the
/// background push outside `sync` itself, and the only one to end a slot's change.
#[test]
fn one_place_decides_what_follows_a_change() {
    let callers = code_holding(&["auto_push(", "spawn_background_push("], |rel| {
        !rel.starts_with("sync/") && rel != "ops/after.rs"
    });
    assert!(
        callers.is_empty(),
        "the push after a change started outside ops/after.rs: {callers:?}"
    );
    let finishers = code_holding(&["change.finish()"], |rel| {
        rel != "ops/after.rs" && !rel.starts_with("store/")
    });
    assert!(
        finishers.is_empty(),
        "a slot change ended outside ops/after.rs: {finishers:?}"
    );
}

/// The operations floor knows no front end, and the front ends reach the store's changes and
/// the hooks only through it: `src/ops` never names clap or an output `Format`; `src/cli`
/// never names `store::slot` or `SlotChange`, and imports `hooks` only in its `hook` command.
#[test]
fn the_operations_floor_knows_no_front_end() {
    let front_end_in_ops = code_holding(&["clap", "Format"], |rel| rel.starts_with("ops/"));
    assert!(
        front_end_in_ops.is_empty(),
        "a front end named in src/ops: {front_end_in_ops:?}"
    );
    let store_in_cli = code_holding(&["store::slot", "SlotChange"], |rel| {
        rel.starts_with("cli/")
    });
    assert!(
        store_in_cli.is_empty(),
        "src/cli changes a slot itself: {store_in_cli:?}"
    );
    // Named in a group too: `use crate::store::{Store, slot};`.
    let grouped: Vec<String> = sources()
        .into_iter()
        .filter(|(rel, text)| {
            rel.starts_with("cli/")
                && text.split("store::{").skip(1).any(|group| {
                    group
                        .split('}')
                        .next()
                        .unwrap_or("")
                        .split(',')
                        .any(|item| matches!(item.trim(), "slot" | "change" | "change::SlotChange"))
                })
        })
        .map(|(rel, _)| rel)
        .collect();
    assert!(
        grouped.is_empty(),
        "src/cli changes a slot itself: {grouped:?}"
    );
    let hooks_in_cli = sources()
        .into_iter()
        .filter(|(rel, text)| {
            rel.starts_with("cli/") && rel != "cli/store/hook.rs" && imports(text).contains("hooks")
        })
        .map(|(rel, _)| rel)
        .collect::<Vec<_>>();
    assert!(
        hooks_in_cli.is_empty(),
        "src/cli imports hooks outside its hook command: {hooks_in_cli:?}"
    );
}

/// Nothing prints with the std macros (they panic on a closed pipe and bypass the
/// writers): no `println!`, `print!`, `eprintln!` or `eprint!` anywhere in the crate's code.
#[test]
fn nothing_prints_with_the_std_macros() {
    let found = code_holding(&["println!", "print!(", "eprintln!", "eprint!("], |_| true);
    assert!(found.is_empty(), "printed with a std macro: {found:?}");
}

/// The client's JSON stops at the hook door (`hooks/input.rs` reads it into a typed
/// `HookInput`), and each client is one file: its name appears only there, in the one enum of
/// clients (`harness/mod.rs`), and in the command-line words that name it.
#[test]
fn the_client_json_stops_at_the_door_and_each_client_is_one_file() {
    let clients = client_names();
    assert!(clients.len() >= 6, "clients found: {clients:?}");
    let mut maps = Vec::new();
    let mut named: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for (rel, text) in sources() {
        if text.contains("Map<String, Value>") || text.contains("Map<String, serde_json::Value>") {
            maps.push(rel.clone());
        }
        let lower = text.to_lowercase();
        for client in &clients {
            let seen = if client == "claude" {
                default_client_code(&lower)
            } else {
                lower.clone()
            };
            if names_word(&seen, client) {
                named.entry(client).or_default().push(rel.clone());
            }
        }
    }
    assert_eq!(maps, ["hooks/input.rs"], "Map<String, Value> past the door");
    for (client, files) in named {
        let own = |f: &str| f.starts_with(&format!("harness/{client}"));
        let strays: Vec<&String> = files
            .iter()
            .filter(|f| {
                !own(f)
                    && *f != "harness/mod.rs"
                    // The command-line words that name it (help examples, `trust codex`).
                    && *f != "cli/store/mod.rs"
                    && !(client == "codex" && *f == "cli/store/trust.rs")
            })
            .collect();
        assert!(
            strays.is_empty(),
            "{client} named outside its file: {strays:?}"
        );
    }
}

/// Claude Code is the default client: the defaults are its shape, so comments say its name,
/// and three names of ours sit in its folders: our state (`.claude/state/`, docs/store.md), the
/// gate's excluded `.claude` folder (docs/gate.md §3.3), the shipped plugin
/// (`contrib/claude-code`). Its code is held to its file like every other client's: this is the
/// text left once comments and those three names are taken out.
fn default_client_code(text: &str) -> String {
    text.lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .map(|l| {
            l.replace(".claude/state/", "")
                .replace("\".claude\"", "")
                .replace("contrib/claude-code/", "")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The clients, from the file names of `src/harness/` that implement `Client`
/// (`claude_code.rs` → `claude`).
fn client_names() -> Vec<String> {
    sources()
        .into_iter()
        .filter(|(rel, text)| rel.starts_with("harness/") && text.contains("impl Client for"))
        .filter_map(|(rel, _)| {
            let stem = rel.strip_prefix("harness/")?.strip_suffix(".rs")?;
            Some(stem.split('_').next()?.to_string())
        })
        .collect()
}

/// Whether `text` holds `word` as a word of its own (`cline` is not in `decline`).
fn names_word(text: &str, word: &str) -> bool {
    let boundary = |c: Option<char>| c.is_none_or(|c| !c.is_ascii_alphanumeric());
    text.match_indices(word).any(|(at, _)| {
        boundary(text[..at].chars().next_back()) && boundary(text[at + word.len()..].chars().next())
    })
}

#[test]
fn a_client_name_is_a_word_of_its_own() {
    assert!(names_word("see cline's hooks", "cline"));
    assert!(!names_word("we decline it", "cline"));
    assert!(names_word("cline", "cline"));
}

/// The gate half (what `verify-handoff` runs: its front end `cli/verify.rs`, the gate's
/// layers and the ground beneath them) imports nothing from the store half.
#[test]
fn the_gate_half_imports_nothing_from_the_store_half() {
    let store_half = ["store", "sync", "ops", "hooks", "harness"];
    let gate_half: Vec<&str> = LAYERS[..layer_of("store").expect("store is placed")]
        .iter()
        .flat_map(|l| l.iter().copied())
        .collect();
    let front_end = [
        "cli/verify.rs",
        "cli/reply.rs",
        "cli/mod.rs",
        "bin/verify-handoff.rs",
    ];
    let mut found = Vec::new();
    for (rel, text) in sources() {
        let top = rel.split('/').next().unwrap_or("").trim_end_matches(".rs");
        let front_end = front_end.contains(&rel.as_str());
        if !front_end && !gate_half.contains(&top) {
            continue;
        }
        for m in imports(&text) {
            if store_half.contains(&m.as_str()) {
                found.push(format!("{rel} imports crate::{m}"));
            }
        }
        if front_end && text.contains("cli::store") {
            found.push(format!("{rel} names the store's commands"));
        }
    }
    assert!(
        found.is_empty(),
        "the gate half reaches the store half: {found:?}"
    );
}

/// Commands and hooks compute and render into a `Reply`; `cli/reply.rs` alone writes
/// to the output. The two front ends only hand their writers to it, `main` only passes the
/// process's streams, and nothing else names a writer or the process's streams (the supervisor
/// hands its descriptors to the writer's process, never writes to them). The MCP server's
/// protocol writer (one task in `cli/store/mcp.rs`) is the one other writer of stdout.
#[test]
fn one_file_writes_to_the_output() {
    let front_ends = ["cli/store/mod.rs", "cli/verify.rs"];
    let mut writers = Vec::new();
    for (rel, text) in sources() {
        if rel == "cli/reply.rs" || rel.starts_with("bin/") {
            continue;
        }
        let code: String = text
            .lines()
            .map(|l| l.split("//").next().unwrap_or(""))
            .collect::<Vec<_>>()
            .join("\n");
        let names_a_writer = code.contains("dyn Write") || code.contains("dyn std::io::Write");
        let streams = code
            .replace("stdout().as_fd()", "")
            .replace("stderr().as_fd()", "")
            // Asking whether a stream is a terminal (colour) writes nothing.
            .replace("stdout().is_terminal()", "")
            .replace("stderr().is_terminal()", "");
        // The MCP server's one writer task speaks the protocol on stdout (and nothing else).
        let protocol = rel == "cli/store/mcp/door.rs" && !streams.contains("stderr()");
        let names_a_stream =
            !protocol && (streams.contains("stdout()") || streams.contains("stderr()"));
        let front_end = front_ends.contains(&rel.as_str());
        let front_end_writes =
            front_end && (code.contains("writeln!(") || code.contains(".write_all("));
        if (names_a_writer && !front_end) || names_a_stream || front_end_writes {
            writers.push(rel);
        }
    }
    assert!(
        writers.is_empty(),
        "writing to the output outside cli/reply.rs: {writers:?}"
    );
}

/// Every `<doc>.md §N` the code and the tests cite names a heading that exists
/// (`## N.` or `### N.M`), so a reader who follows one lands on the rule.
#[test]
fn every_docs_section_the_code_cites_exists() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    rust_files(&root.join("tests"), &mut files);
    let mut broken = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).expect("source");
        for (at, _) in text.match_indices(".md §") {
            let name: String = text[..at]
                .chars()
                .rev()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-')
                .collect::<String>()
                .chars()
                .rev()
                .collect();
            let section: String = text[at + ".md §".len()..]
                .chars()
                .take_while(|c| c.is_ascii_digit() || *c == '.')
                .collect();
            let section = section.trim_end_matches('.');
            if name.is_empty() || section.is_empty() {
                continue;
            }
            let doc = root.join("docs").join(format!("{name}.md"));
            let Ok(doc_text) = std::fs::read_to_string(&doc) else {
                broken.push(format!("{}: docs/{name}.md does not exist", file.display()));
                continue;
            };
            let found = doc_text.lines().any(|l| {
                let heading = l.trim_start_matches('#');
                l.starts_with("##")
                    && (heading.trim_start().starts_with(&format!("{section}."))
                        || heading.trim_start().starts_with(&format!("{section} ")))
            });
            if !found {
                broken.push(format!("{}: {name}.md §{section}", file.display()));
            }
        }
    }
    broken.sort();
    broken.dedup();
    assert!(
        broken.is_empty(),
        "sections cited that no heading has: {broken:#?}"
    );
}

/// The size the house keeps: no file in `src` over 650 lines (functions are held to 80 by
/// clippy, `clippy.toml` and the lint in `lib.rs`).
#[test]
fn no_file_in_src_is_over_650_lines() {
    let long: Vec<(String, usize)> = sources()
        .into_iter()
        .map(|(rel, text)| (rel, text.lines().count()))
        .filter(|(_, n)| *n > 650)
        .collect();
    assert!(long.is_empty(), "files over 650 lines: {long:?}");
}
