//! Deterministic benchmark fixtures, shared by `benches/library.rs` and `benches/process.rs`:
//! the canonical 2-citation repository, a 20,000-file repository in 200 directories with
//! handoffs of 200 and 1,000 line citations and of 50 symbol citations, and a store of 10,000
//! handoffs. Built once under `target/bench-fixtures/` (the git CLI builds the repositories;
//! the product never runs git) and reused while their version stamp matches.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// Bump when the generated content changes.
const VERSION: &str = "v1";
pub const DIRS: usize = 200;
pub const FILES_PER_DIR: usize = 100;
pub const LINES: usize = 50;
pub const STORE_SIZE: usize = 10_000;

/// Paths of every fixture.
pub struct Fixtures {
    pub home: PathBuf,
    pub small_repo: PathBuf,
    pub small_handoff: PathBuf,
    pub big_repo: PathBuf,
    pub lines_200: PathBuf,
    pub lines_1000: PathBuf,
    /// 1,000 line citations, 100 of them moved (`--fix`).
    pub moved_1000: PathBuf,
    pub lines_20000: PathBuf,
    pub symbols_50: PathBuf,
    pub store: PathBuf,
    /// The small repository's slot name in `store`.
    pub small_slot: String,
}

fn git(dir: &Path, args: &[&str]) {
    let ok = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "Bench")
        .env("GIT_AUTHOR_EMAIL", "bench@example.com")
        .env("GIT_COMMITTER_NAME", "Bench")
        .env("GIT_COMMITTER_EMAIL", "bench@example.com")
        .env("GIT_AUTHOR_DATE", "2026-01-01T00:00:00Z")
        .env("GIT_COMMITTER_DATE", "2026-01-01T00:00:00Z")
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "git {args:?} failed in {}", dir.display());
}

fn write(path: &Path, text: &str) {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).expect("fixture dirs");
    }
    std::fs::write(path, text).expect("fixture file");
}

/// Where fixtures live: `<target dir>/bench-fixtures`.
pub fn base() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target"));
    target.join("bench-fixtures")
}

fn big_file(dir: usize, file: usize) -> String {
    let id = dir * FILES_PER_DIR + file;
    let mut text = String::with_capacity(LINES * 48);
    for line in 1..=LINES {
        if line == 25 && id % 400 == 7 {
            text.push_str(&format!("pub struct SymbolKey{};\n", id / 400));
        } else {
            text.push_str(&format!(
                "pub fn f{id}_{line}() -> u32 {{ {line} }} // filler\n"
            ));
        }
    }
    text
}

fn citation_path(id: usize) -> String {
    format!("src/mod{:03}/file{:05}.rs", id / FILES_PER_DIR, id)
}

fn handoff(checkout: &Path, pointers: &[String], decisions: &str) -> String {
    format!(
        "# Handoff — benchmark\nbranch: main\ncheckout: {}\nstatus: benchmark fixture\nprogress: complete\n\n## Do not re-derive\n\n### Decisions\n{decisions}\n\n### Dead ends\n- None.\n\n### Traps\n- None.\n\n## Next\n1. Measure.\n\n## Pointers\n```text\n{}\n```\n",
        checkout.display(),
        pointers.join("\n")
    )
}

pub fn line_handoff(repo: &Path, n: usize) -> String {
    // Spread the citations over the whole repository, one file each.
    let step = DIRS * FILES_PER_DIR / n;
    let pointers: Vec<String> = (0..n)
        .map(|i| {
            let id = i * step;
            let line = 1 + (i * 7) % LINES;
            let line = if line == 25 { 26 } else { line };
            format!("{}:{line} | pub fn f{id}_{line}()", citation_path(id))
        })
        .collect();
    handoff(
        repo,
        &pointers,
        "- Every pointer below was checked by hand.",
    )
}

/// [`line_handoff`] of 1,000 citations where every tenth cites its line 3 too low: 100
/// pointers whose text moved to one other line, for `--fix`.
pub fn moved_handoff(repo: &Path) -> String {
    let step = DIRS * FILES_PER_DIR / 1000;
    let pointers: Vec<String> = (0..1000)
        .map(|i| {
            let id = i * step;
            let line = 1 + (i * 7) % LINES;
            let line = if line == 25 { 26 } else { line };
            let cited = if i % 10 == 0 { line + 3 } else { line };
            format!("{}:{cited} | pub fn f{id}_{line}()", citation_path(id))
        })
        .collect();
    handoff(
        repo,
        &pointers,
        "- Every pointer below was checked by hand.",
    )
}

/// The 50 symbol citations: 48 that exist (spread over the tree) and 2 that do not, which
/// forces a full scan.
pub fn symbols() -> Vec<String> {
    let mut pointers: Vec<String> = (0..48).map(|i| format!("SymbolKey{}", i)).collect();
    pointers.push("MissingSymbolOne".into());
    pointers.push("MissingSymbolTwo".into());
    pointers
}

fn symbol_handoff(repo: &Path) -> String {
    let pointers = symbols();
    handoff(
        repo,
        &pointers,
        "- The symbols below are the public surface.",
    )
}

fn small(base: &Path) -> (PathBuf, PathBuf) {
    let repo = base.join("small");
    let mut php = String::from("<?php\n");
    for i in 2..24 {
        php.push_str(&format!("// line {i}\n"));
    }
    php.push_str("    public function build()\n");
    for i in 25..=40 {
        php.push_str(&format!("// tail {i}\n"));
    }
    write(&repo.join("app/Mail/Invoice.php"), &php);
    write(&repo.join("composer.json"), "{}\n");
    git(&repo, &["init", "-q", "-b", "main"]);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-q", "-m", "init"]);
    let doc = format!(
        "# Handoff — type the mailables\nbranch: main\ncheckout: {}\nstatus: Invoice done; Reminder not started.\nprogress: complete\n\n## Do not re-derive\n\n### Decisions\n- Type the builder's return, not each caller. `app/Mail/Invoice.php:24`\n\n### Dead ends\n- A docblock on the caller. `app/Mail/`\n\n### Traps\n- None.\n\n## Next\n1. Do Reminder the same way.\n\n## Pointers\n```text\napp/Mail/Invoice.php:24 | public function build\napp/Mail/\n```\n",
        repo.display()
    );
    let handoff = base.join("small.md");
    write(&handoff, &doc);
    (repo, handoff)
}

fn big(base: &Path) -> PathBuf {
    let repo = base.join("big");
    for d in 0..DIRS {
        for f in 0..FILES_PER_DIR {
            write(
                &repo.join(citation_path(d * FILES_PER_DIR + f)),
                &big_file(d, f),
            );
        }
    }
    write(&repo.join("tests/smoke.rs"), "#[test]\nfn smoke() {}\n");
    write(&repo.join("Cargo.toml"), "[package]\nname = \"big\"\n");
    write(&repo.join("docs/guide.md"), "# Guide\n");
    git(&repo, &["init", "-q", "-b", "main"]);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-q", "-m", "init"]);
    repo
}

fn store(base: &Path) -> PathBuf {
    let store = base.join("store");
    std::fs::create_dir_all(&store).expect("store");
    for i in 0..STORE_SIZE {
        let name = format!(
            "repo{i:05}-main-{:08x}.md",
            (i as u64).wrapping_mul(2_654_435_761) & 0xffff_ffff
        );
        let doc = format!(
            "# Handoff — task {i}\nbranch: main\ncheckout: /nonexistent/repo{i:05}\nstatus: fixture {i}\nprogress: {}\nhead: {:040x}\n\n## Do not re-derive\n\n### Decisions\n- None.\n\n### Dead ends\n- None.\n\n### Traps\n- None.\n\n## Next\n1. Nothing.\n\n## Pointers\n```\n```\n",
            if i % 3 == 0 { "consumed" } else { "complete" },
            i
        );
        write(&store.join(name), &doc);
    }
    store
}

/// Build (or reuse) every fixture.
pub fn ensure() -> Fixtures {
    let base = base();
    let stamp = base.join(format!(".complete-{VERSION}"));
    let small_repo = base.join("small");
    let big_repo = base.join("big");
    if !stamp.exists() {
        let _ = std::fs::remove_dir_all(&base);
        std::fs::create_dir_all(base.join("home")).expect("fixture home");
        eprintln!("building benchmark fixtures in {} (once)…", base.display());
        small(&base);
        big(&base);
        store(&base);
        write(&base.join("lines200.md"), &line_handoff(&big_repo, 200));
        write(&base.join("lines1000.md"), &line_handoff(&big_repo, 1000));
        write(&base.join("symbols50.md"), &symbol_handoff(&big_repo));
        write(&stamp, VERSION);
    }
    if !base.join("moved1000.md").exists() {
        write(&base.join("moved1000.md"), &moved_handoff(&big_repo));
    }
    // Added after the first fixtures were built: made on its own when missing.
    if !base.join("lines20000.md").exists() {
        write(
            &base.join("lines20000.md"),
            &line_handoff(&big_repo, 20_000),
        );
    }
    let small_main = std::fs::canonicalize(&small_repo).expect("small repo");
    let slot = handoff_store::store::slot_name(small_main.to_string_lossy().as_bytes(), "main");
    // The small repository's own handoff sits among the 10,000 (re-copied: benches consume it).
    std::fs::copy(base.join("small.md"), base.join("store").join(&slot)).expect("slot");
    Fixtures {
        home: base.join("home"),
        small_repo: small_main,
        small_handoff: base.join("small.md"),
        big_repo,
        lines_200: base.join("lines200.md"),
        lines_1000: base.join("lines1000.md"),
        moved_1000: base.join("moved1000.md"),
        lines_20000: base.join("lines20000.md"),
        symbols_50: base.join("symbols50.md"),
        store: base.join("store"),
        small_slot: slot,
    }
}
