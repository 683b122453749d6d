//! Every example in every command's `--help` (both binaries) runs as pasted: each line is run
//! by bash in a fresh HOME holding a fresh checkout (`~/src/shop`, a clone of a bare remote,
//! one handoff stored and two older versions in history, the files the examples read —
//! `handoff.md`, `api.md`, `ui.md`, `src/a.rs` — in it), and exits as its comment implies (`exit N`,
//! else 0). Lines run in order in one shell, so a line may use what the one before made.

use std::path::{Path, PathBuf};

use crate::util::{TestEnv, canonical, run};

/// Programs of other projects that an example may name and this suite cannot run: the
/// end-to-end suite runs each such line against the real client (named here by its scenario).
const PROVEN_ELSEWHERE: &[(&str, &str, &str)] = &[
    (
        "claude mcp add handoff -- handoff-store mcp",
        "tests/e2e/claude.rs",
        "\"mcp\", \"add\", \"handoff\"",
    ),
    (
        "handoff-store trust codex",
        "tests/e2e/codex.rs",
        ".args([\"trust\", \"codex\"])",
    ),
];

/// The example lines of one `--help` text: the indented lines after `Examples:` up to the
/// first blank line.
fn examples(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| l.trim() != "Examples:")
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .map(|l| l.trim().to_string())
        .collect()
}

/// The exit an example's comment promises (`# exit 1, …`), else 0.
fn promised_exit(line: &str) -> i32 {
    line.split_once("  #")
        .and_then(|(_, comment)| comment.trim().strip_prefix("exit "))
        .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// The `handoff-store` commands its `--help` lists (`help` aside).
fn commands(env: &TestEnv) -> Vec<String> {
    let help = run(env.cmd("handoff-store").arg("--help")).stdout;
    help.lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(str::to_string)
        .collect()
}

/// A fresh HOME with `~/src/shop` ready for the examples.
fn fresh_home(env: &TestEnv) -> (PathBuf, PathBuf) {
    let home = env.path("home");
    let seed = env.shop("seed", "main");
    env.git(
        &env.root(),
        &[
            "clone",
            "-q",
            "--bare",
            &seed.to_string_lossy(),
            "remote.git",
        ],
    );
    std::fs::create_dir_all(home.join("src")).expect("src");
    env.git(
        &home.join("src"),
        &[
            "clone",
            "-q",
            &env.path("remote.git").to_string_lossy(),
            "shop",
        ],
    );
    let shop = std::fs::canonicalize(home.join("src/shop")).expect("shop");
    let doc = |tag: &str| {
        canonical(&shop.to_string_lossy(), "main").replace("status: ", &format!("status: {tag} "))
    };
    for tag in ["one", "two", "three"] {
        let o = run(store(env, &home, &shop)
            .args(["write"])
            .write_stdin(doc(tag)));
        assert_eq!(o.code, 0, "setup write: {}{}", o.stdout, o.stderr);
    }
    std::fs::create_dir_all(shop.join("src")).expect("src");
    let a_rs: String = (1..=11).map(|n| format!("// line {n}\n")).collect();
    std::fs::write(shop.join("src/a.rs"), a_rs + "fn main() {}\n").expect("src/a.rs");
    for draft in ["handoff.md", "api.md", "ui.md"] {
        std::fs::write(shop.join(draft), doc(draft)).expect("draft");
    }
    (home, shop)
}

fn store(env: &TestEnv, home: &Path, dir: &Path) -> assert_cmd::Command {
    let mut c = env.cmd("handoff-store");
    c.env("HOME", home)
        .env_remove("HANDOFF_STORE_DIR")
        .current_dir(dir);
    c
}

/// The folder holding the binaries under test.
fn bin_dir() -> PathBuf {
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_handoff-store"));
    bin.parent().expect("bin dir").to_path_buf()
}

/// Run `lines` in order in one bash in `shop`; each line's exit code.
fn run_lines(env: &TestEnv, home: &Path, shop: &Path, lines: &[String]) -> Vec<(i32, String)> {
    let mut script = String::from("exec 3>\"$RESULTS\"\n");
    for (i, line) in lines.iter().enumerate() {
        script.push_str(&format!(
            "{{\n{line}\n}} </dev/null >>\"$OUT\" 2>&1\necho \"{i} $?\" >&3\n"
        ));
    }
    let results = env.path("results");
    let out = env.path("out");
    let path = format!("{}:/usr/local/bin:/usr/bin:/bin", bin_dir().display());
    let done = std::process::Command::new("bash")
        .arg("-c")
        .arg(&script)
        .current_dir(shop)
        .env_clear()
        .env("HOME", home)
        .env("PATH", path)
        .env("EDITOR", "true")
        .env("NO_COLOR", "1")
        .env("TERM", "dumb")
        .env("RESULTS", &results)
        .env("OUT", &out)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "Test")
        .env("GIT_AUTHOR_EMAIL", "test@example.com")
        .env("GIT_COMMITTER_NAME", "Test")
        .env("GIT_COMMITTER_EMAIL", "test@example.com")
        .output()
        .expect("bash");
    if !done.status.success() {
        return vec![(-1, String::from_utf8_lossy(&done.stderr).into_owned()); lines.len()];
    }
    let said = std::fs::read_to_string(&out).unwrap_or_default();
    std::fs::read_to_string(&results)
        .expect("results")
        .lines()
        .map(|l| {
            let code = l
                .split(' ')
                .nth(1)
                .and_then(|c| c.parse().ok())
                .unwrap_or(-1);
            (code, said.clone())
        })
        .collect()
}

#[test]
fn every_help_example_runs_as_pasted() {
    let names = commands(&TestEnv::new());
    assert!(names.len() > 20, "commands not found: {names:?}");
    let mut helps: Vec<(String, String)> = names
        .iter()
        .map(|c| {
            let env = TestEnv::new();
            (
                format!("handoff-store {c}"),
                run(env.cmd("handoff-store").args([c, "--help"])).stdout,
            )
        })
        .collect();
    let env = TestEnv::new();
    helps.push((
        "verify-handoff".into(),
        run(env.cmd("verify-handoff").arg("--help")).stdout,
    ));
    let mut failures = Vec::new();
    let mut ran = 0;
    for (name, help) in helps {
        let lines: Vec<String> = examples(&help)
            .into_iter()
            .filter(|l| {
                let elsewhere = PROVEN_ELSEWHERE
                    .iter()
                    .any(|(line, _, _)| l.starts_with(line));
                !elsewhere
            })
            .collect();
        if lines.is_empty() {
            continue;
        }
        let env = TestEnv::new();
        let (home, shop) = fresh_home(&env);
        let codes = run_lines(&env, &home, &shop, &lines);
        assert_eq!(codes.len(), lines.len(), "{name}: not every line ran");
        for (line, (code, said)) in lines.iter().zip(&codes) {
            ran += 1;
            let want = promised_exit(line);
            if *code != want {
                failures.push(format!(
                    "{name}: `{line}` exited {code}, not {want}\n{said}"
                ));
            }
        }
    }
    assert!(ran > 50, "only {ran} examples ran");
    assert!(failures.is_empty(), "{}", failures.join("\n---\n"));
}

/// A line this suite cannot run (it needs another project's program) is run by the
/// end-to-end suite against the real client.
#[test]
fn examples_run_elsewhere_are_in_the_end_to_end_suite() {
    for (line, file, code) in PROVEN_ELSEWHERE {
        let path = format!("{}/{file}", env!("CARGO_MANIFEST_DIR"));
        let source = std::fs::read_to_string(&path).expect("e2e source");
        assert!(
            source.contains(code),
            "`{line}`: {file} does not run {code}"
        );
    }
}

#[test]
fn an_example_promises_its_exit_in_its_comment() {
    assert_eq!(
        promised_exit("handoff-store status --check   # exit 1, a line per problem"),
        1
    );
    assert_eq!(promised_exit("handoff-store status"), 0);
    assert_eq!(promised_exit("handoff-store read   # show it"), 0);
}

/// The exit codes follow the examples in every `--help`, and every man page has an EXIT
/// STATUS section: handoff-store's 0–4, verify-handoff's 0–2.
#[test]
fn exit_codes_are_in_every_help_and_man_page() {
    let env = TestEnv::new();
    let listed = |text: &str, codes: std::ops::RangeInclusive<u8>| {
        let after = text
            .split_once("Exit status:\n")
            .map_or("", |(_, rest)| rest);
        codes
            .clone()
            .all(|c| after.lines().any(|l| l.starts_with(&format!("  {c}  "))))
            && after
                .lines()
                .filter(|l| l.starts_with("  ") && l.as_bytes().get(3) == Some(&b' '))
                .count()
                == codes.count()
    };
    let mut names = commands(&env);
    names.push(String::new());
    for name in &names {
        let mut cmd = env.cmd("handoff-store");
        if !name.is_empty() {
            cmd.arg(name);
        }
        let help = run(cmd.arg("--help")).stdout;
        assert!(listed(&help, 0..=4), "handoff-store {name} --help:\n{help}");
        if let Some(examples) = help.find("Examples:") {
            assert!(
                examples < help.find("Exit status:").unwrap_or(0),
                "{name}: the codes come after the examples"
            );
        }
        let page = if name.is_empty() {
            "handoff-store"
        } else {
            name
        };
        let man = run(env.cmd("handoff-store").args(["man", page])).stdout;
        let section = man
            .split_once(".SH \"EXIT STATUS\"\n")
            .map_or("", |(_, s)| s);
        assert!(
            (0..=4).all(|c| section.contains(&format!(".TP\n{c}\n"))),
            "man {page}:\n{man}"
        );
    }
    let help = run(env.cmd("verify-handoff").arg("--help")).stdout;
    assert!(listed(&help, 0..=2), "{help}");
    let man = run(env.cmd("handoff-store").args(["man", "verify-handoff"])).stdout;
    assert!(
        (0..=2).all(|c| man.contains(&format!(".TP\n{c}\n"))) && !man.contains(".TP\n3\n"),
        "{man}"
    );
}
