//! The tripwire (docs/hooks.md §10): a tool call that repeats a handoff's dead end or trap
//! gets one line for the model, once per item per session; ordinary work gets nothing.

use std::path::Path;

use crate::util::{TestEnv, run};

/// The corpus's dead ends: each quotes a command (some also cite a path).
const DEAD_ENDS: [&str; 28] = [
    "`cargo test -- --test-threads=1` hangs on the shared port.",
    "`npm run build:legacy` emits the old bundle the CDN rejects.",
    "`make test-slow` hangs on the fixture lock.",
    "`docker compose up --build` rebuilds the base image for 20 minutes.",
    "`pip install -e .[dev]` pins an old setuptools.",
    "`git rebase -i origin/main` loses the generated files.",
    "`pytest tests/integration --runslow` needs the staging database.",
    "`go test ./... -race` times out in the cgo package.",
    "`yarn upgrade react` pulls React 19, which the router does not take.",
    "`cargo update -p tokio` breaks the pinned hyper.",
    "`kubectl apply -f deploy/staging.yaml` is owned by the platform team.",
    "`terraform apply -auto-approve` without a plan review.",
    "`bundle exec rake db:reset` wipes the seeds.",
    "`./scripts/regen.sh --all` regenerates 4,000 files.",
    "`npx prisma migrate reset` drops the shadow database.",
    "`git stash pop` on this branch conflicts in the lockfile.",
    "`rm -rf node_modules` does not help: the npm cache is the problem.",
    "`cargo clippy --fix` rewrites the macros wrongly.",
    "`python manage.py flush` deletes the fixtures.",
    "`mvn clean install -DskipTests` hides the broken module.",
    "`gradle build --offline` uses a stale wrapper.",
    "`pnpm dedupe` reorders the workspace.",
    "`brew upgrade node` moved us to Node 23.",
    "`apt-get install libssl1.0-dev` is not in this distribution.",
    "`ng update @angular/core` needs the CLI first.",
    "`sed -i s/foo/bar/ src/config.rs` mangles the raw strings; see `src/config.rs:3`.",
    "`cargo bench --bench process` on a loaded machine gives noise.",
    "Bumping `crates/core/Cargo.toml:5` to edition 2024 broke the proc macro.",
];

/// The corpus's traps: each cites a path (a file, a `path:N`, or a folder).
const TRAPS: [&str; 24] = [
    "`src/legacy.rs` looks dead but is loaded by name.",
    "`config/prod.yaml:2` is the real timeout; the code's default is never used.",
    "`vendor/patched/` holds a patched crate: never regenerate it.",
    "`migrations/0042_backfill.sql` already ran in production.",
    "`src/generated/schema.rs` is generated; edit the schema instead.",
    "`web/src/api/client.ts:2` retries silently.",
    "`.github/workflows/release.yml` publishes on every tag.",
    "`scripts/deploy.sh:2` assumes bash 5.",
    "`tests/fixtures/big.json` is compared byte for byte.",
    "`docs/api/openapi.yaml` is the contract clients generate from.",
    "`src/auth/session.rs:3` keeps the old cookie name for the mobile app.",
    "`db/schema.sql` must match the migrations by hand.",
    "`src/ffi/bindings.rs` is written by bindgen at build time.",
    "`frontend/.env.production` is read at build time only.",
    "`infra/modules/vpc/` is shared with another team.",
    "`src/time/tz.rs:2` uses the server's zone on purpose.",
    "`assets/icons/` are referenced by hash from the CDN.",
    "`proto/events.proto` field numbers can never change.",
    "`src/metrics/names.rs:2` names are scraped by dashboards.",
    "`packages/ui/theme.ts` is imported by the email renderer too.",
    "`src/cache/lru.rs:2` is not thread safe despite the name.",
    "`locales/en.json` keys are used by the translators' tool.",
    "`Makefile.inc` is included by the CI image (`ci/image/Dockerfile`).",
    "`src/payments/refund.rs:2` must stay idempotent.",
];

/// Ordinary commands, in the shapes real sessions run: builds, tests, git, package managers,
/// looking around. None repeats a dead end of the corpus.
const ORDINARY: [&str; 158] = [
    "cargo build",
    "cargo build --release",
    "cargo test",
    "cargo test -p core",
    "cargo test --workspace",
    "cargo test parser::tests",
    "cargo check --all-targets",
    "cargo fmt --all",
    "cargo clippy --all-targets -- -D warnings",
    "cargo run --bin server",
    "cargo doc --no-deps",
    "cargo update",
    "cargo bench --bench library",
    "cargo tree -i tokio",
    "cargo add serde --features derive",
    "git status",
    "git status --short",
    "git diff",
    "git diff --stat HEAD~1",
    "git log --oneline -20",
    "git log -p src/main.rs",
    "git add -A",
    "git add src/lib.rs",
    "git commit -m 'fix the parser'",
    "git commit --amend --no-edit",
    "git push origin feature/x",
    "git push",
    "git pull --rebase",
    "git fetch origin",
    "git checkout -b fix/timeout",
    "git switch main",
    "git branch -a",
    "git show HEAD",
    "git stash",
    "git stash list",
    "git rebase origin/main",
    "git merge --no-ff feature/y",
    "git blame src/parser.rs",
    "git restore --staged .",
    "git cherry-pick abc123",
    "npm install",
    "npm ci",
    "npm test",
    "npm run build",
    "npm run lint",
    "npm run dev",
    "npm run test -- --watch",
    "npm install --save-dev typescript",
    "npm outdated",
    "npx tsc --noEmit",
    "npx eslint src --fix",
    "npx prisma generate",
    "npx prisma migrate dev",
    "yarn install",
    "yarn test",
    "yarn add lodash",
    "yarn build",
    "pnpm install",
    "pnpm test",
    "pnpm run build",
    "pytest",
    "pytest tests/unit -x",
    "pytest tests/integration",
    "pytest -k parser -v",
    "python -m pytest",
    "python manage.py migrate",
    "python manage.py runserver",
    "python -m venv .venv",
    "pip install requests",
    "pip install -r requirements.txt",
    "pip list --outdated",
    "go build ./...",
    "go test ./...",
    "go test ./pkg/parser -run TestParse",
    "go mod tidy",
    "go vet ./...",
    "make",
    "make test",
    "make build",
    "make lint",
    "make -j4 all",
    "make clean",
    "make test-fast",
    "ls",
    "ls -la src",
    "cat README.md",
    "cat src/main.rs | head -50",
    "grep -rn TODO src",
    "rg 'fn main' --type rust",
    "find . -name '*.rs' | wc -l",
    "sed -n 1,40p src/lib.rs",
    "head -20 Cargo.toml",
    "tail -f log/server.log",
    "wc -l src/*.rs",
    "echo $PATH",
    "mkdir -p tmp/out",
    "cp config/dev.yaml config/local.yaml",
    "mv old.txt new.txt",
    "rm -rf target",
    "rm -f tmp/out/*.json",
    "touch src/new.rs",
    "chmod +x scripts/run.sh",
    "pwd",
    "which cargo",
    "env | sort",
    "docker ps",
    "docker compose up -d db",
    "docker compose logs -f api",
    "docker build -t app .",
    "docker compose down",
    "kubectl get pods -n staging",
    "kubectl logs deploy/api",
    "kubectl describe pod api-0",
    "terraform plan",
    "terraform init",
    "terraform fmt -recursive",
    "bundle install",
    "bundle exec rspec",
    "bundle exec rake db:migrate",
    "rails console",
    "mvn test",
    "mvn -q package",
    "gradle test",
    "./gradlew build",
    "./scripts/test.sh",
    "./scripts/regen.sh schema",
    "bash scripts/setup.sh",
    "node scripts/check.js",
    "tsc -p tsconfig.json",
    "jest src/api",
    "vitest run",
    "eslint . --ext .ts",
    "prettier --write src",
    "black .",
    "ruff check src",
    "mypy src",
    "curl -s localhost:8080/health",
    "brew install jq",
    "brew upgrade",
    "apt-get update",
    "apt-get install -y jq",
    "ng serve",
    "ng update",
    "cd web && npm test",
    "cd crates/core && cargo test",
    "RUST_LOG=debug cargo run",
    "time cargo build",
    "cargo test 2>&1 | tail -30",
    "git log --oneline | head",
    "cargo test --release",
    "go test -race ./pkg/x",
    "yarn upgrade",
    "git rebase -i HEAD~3",
    "cargo clippy",
    "sed -i s/a/b/ README.md",
    "rm -rf dist",
    "docker compose up",
    "pip install -e .",
];

/// Ordinary edits: files no trap or dead end cites.
const EDITS: [&str; 40] = [
    "src/main.rs",
    "src/lib.rs",
    "src/parser.rs",
    "src/legacy_v2.rs",
    "src/legacy.rs.orig",
    "src/generated.rs",
    "src/auth/token.rs",
    "src/cache/mod.rs",
    "src/time/mod.rs",
    "src/payments/charge.rs",
    "src/metrics/mod.rs",
    "src/ffi/mod.rs",
    "config/dev.yaml",
    "config/prod.yml",
    "vendor/other/lib.rs",
    "vendor/patched2/lib.rs",
    "migrations/0043_next.sql",
    "web/src/api/types.ts",
    "web/src/app.tsx",
    ".github/workflows/ci.yml",
    "scripts/test.sh",
    "tests/fixtures/small.json",
    "tests/parser.rs",
    "docs/api/README.md",
    "db/seeds.sql",
    "frontend/.env.development",
    "infra/modules/dns/main.tf",
    "assets/logo.svg",
    "proto/commands.proto",
    "packages/ui/button.tsx",
    "locales/de.json",
    "Makefile",
    "README.md",
    "Cargo.toml",
    "crates/core/src/lib.rs",
    "crates/cli/Cargo.toml",
    "ci/image/README.md",
    "CHANGELOG.md",
    "src/config.rs.bak",
    "package.json",
];

/// Every path the corpus cites or edits, so the repository holds them all.
fn files() -> Vec<String> {
    let mut files: Vec<String> = Vec::new();
    for item in DEAD_ENDS.iter().chain(TRAPS.iter()) {
        for span in item.split('`').skip(1).step_by(2) {
            let path = span.split(':').next().unwrap_or(span);
            if path.contains('/') && !path.contains(' ') && !path.ends_with('/') {
                files.push(path.to_string());
            }
            if let Some(folder) = path.strip_suffix('/') {
                files.push(format!("{folder}/kept.txt"));
            }
        }
    }
    files.extend(EDITS.iter().map(|e| e.to_string()));
    files.sort();
    files.dedup();
    files
}

/// The handoff: the corpus's dead ends and traps, every cited path in Pointers.
fn corpus_handoff() -> String {
    let mut pointers: Vec<String> = Vec::new();
    for item in DEAD_ENDS.iter().chain(TRAPS.iter()) {
        for span in item.split('`').skip(1).step_by(2) {
            if span.contains('/') && !span.contains(' ') {
                pointers.push(span.to_string());
            }
        }
    }
    let list = |items: &[&str]| -> String { items.iter().map(|i| format!("- {i}\n")).collect() };
    format!(
        "# Handoff — the corpus\nstatus: testing tripwires.\n\n## Do not re-derive\n\n### Decisions\n- Keep `make test` as the gate.\n\n### Dead ends\n{}\n### Traps\n{}\n## Next\n1. Run `make test-slow` once the lock is fixed.\n\n## Pointers\n```text\n{}\n```\n",
        list(&DEAD_ENDS),
        list(&TRAPS),
        pointers.join("\n")
    )
}

fn corpus_repo(env: &TestEnv) -> std::path::PathBuf {
    let files = files();
    let owned: Vec<(String, String)> = files
        .iter()
        .map(|f| {
            (
                f.clone(),
                "line one\nline two\nline three\nline four\nline five\n".to_string(),
            )
        })
        .collect();
    let refs: Vec<(&str, &str)> = owned
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    env.repo("corpus", "main", &refs)
}

/// A Claude Code PreToolUse input.
fn bash(repo: &Path, sid: &str, command: &str) -> String {
    serde_json::json!({"session_id": sid, "cwd": repo, "hook_event_name": "PreToolUse",
        "tool_name": "Bash", "tool_input": {"command": command}})
    .to_string()
}

fn edit(repo: &Path, sid: &str, tool: &str, rel: &str) -> String {
    serde_json::json!({"session_id": sid, "cwd": repo, "hook_event_name": "PreToolUse",
        "tool_name": tool, "tool_input": {"file_path": repo.join(rel), "old_string": "a",
        "new_string": "b", "content": "x"}})
    .to_string()
}

/// The note a tool hook printed, if any (the hook always exits 0 and keeps stderr empty).
fn note(env: &TestEnv, event: &str, stdin: &str) -> Option<String> {
    let o = run(&mut env.hook(event, stdin));
    assert_eq!((o.code, o.stderr.as_str()), (0, ""), "{stdin}");
    if o.stdout.is_empty() {
        return None;
    }
    let v: serde_json::Value = serde_json::from_str(&o.stdout).expect("one JSON line");
    assert!(
        v["systemMessage"]
            .as_str()
            .is_some_and(|m| m.starts_with("handoff-store: the model was reminded")),
        "the person's receipt: {}",
        o.stdout
    );
    assert!(
        v["hookSpecificOutput"].get("permissionDecision").is_none(),
        "never decides"
    );
    v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .map(str::to_string)
}

#[test]
fn ordinary_work_against_fifty_dead_ends_and_traps_gives_no_note() {
    let env = TestEnv::new();
    let repo = corpus_repo(&env);
    env.stored(&repo, &corpus_handoff());
    assert!(DEAD_ENDS.len() + TRAPS.len() >= 50);
    let mut calls: Vec<String> = ORDINARY
        .iter()
        .map(|c| bash(&repo, "ordinary", c))
        .collect();
    // The same shapes in the forms sessions vary them in.
    for (i, c) in ORDINARY.iter().enumerate().take(100) {
        calls.push(bash(
            &repo,
            "ordinary",
            &format!("cd {} && {c}", repo.display()),
        ));
        if i % 2 == 0 {
            calls.push(bash(&repo, "ordinary", &format!("{c} 2>&1 | tail -20")));
        }
    }
    for (i, e) in EDITS.iter().enumerate() {
        let tool = ["Edit", "Write", "MultiEdit"][i % 3];
        calls.push(edit(&repo, "ordinary", tool, e));
    }
    // Reading a cited file is how one checks a trap: never a trigger.
    for t in [
        "src/legacy.rs",
        "config/prod.yaml",
        "vendor/patched/kept.txt",
    ] {
        calls.push(edit(&repo, "ordinary", "Read", t));
        calls.push(bash(&repo, "ordinary", &format!("cat {t}")));
    }
    assert!(calls.len() >= 300, "{} calls", calls.len());
    let said: Vec<(String, String)> = calls
        .iter()
        .filter_map(|c| note(&env, "pre-tool-use", c).map(|n| (c.clone(), n)))
        .collect();
    assert!(said.is_empty(), "false alarms: {said:#?}");
    // The same session, the same handoff: a repeat is heard (the silence above is not a
    // hook that hears nothing).
    assert!(
        note(
            &env,
            "pre-tool-use",
            &bash(&repo, "ordinary", "make test-slow")
        )
        .is_some()
    );
}

#[test]
fn each_quoted_form_trips_once_per_session_and_says_which_item() {
    let env = TestEnv::new();
    let repo = corpus_repo(&env);
    env.stored(&repo, &corpus_handoff());
    let hits = [
        ("make test-slow", "make test-slow"),
        ("cd web && make -j4 test-slow V=1", "make test-slow"),
        ("FOO=1 cargo test -p x -- --test-threads=1", "cargo test"),
        ("docker compose up --build api", "docker compose up --build"),
        (
            "/usr/local/bin/terraform apply -auto-approve",
            "terraform apply",
        ),
        ("git stash pop && git status", "git stash pop"),
        ("sudo apt-get install -y libssl1.0-dev", "apt-get install"),
        (
            "npx prisma migrate reset --force",
            "npx prisma migrate reset",
        ),
        ("./scripts/regen.sh --all --verbose", "regen.sh --all"),
        ("yarn upgrade react react-dom", "yarn upgrade react"),
        ("go test ./... -race -count=1", "go test"),
        ("pip install -e .[dev]", "pip install"),
        ("python manage.py flush --noinput", "python manage.py flush"),
    ];
    for (i, (command, item)) in hits.iter().enumerate() {
        let sid = format!("s{i}");
        let said = note(&env, "pre-tool-use", &bash(&repo, &sid, command))
            .unwrap_or_else(|| panic!("`{command}` trips the dead end quoting {item}"));
        assert!(
            said.starts_with("Your handoff lists as a dead end: \""),
            "{said}"
        );
        assert!(said.contains(item), "{command}: {said}");
        assert!(
            said.ends_with("go on only if something changed since."),
            "{said}"
        );
        assert!(
            said.chars().count() <= 300,
            "{} chars: {said}",
            said.chars().count()
        );
        assert_eq!(
            note(&env, "pre-tool-use", &bash(&repo, &sid, command)),
            None,
            "said once per session: {command}"
        );
    }
    // Edits: a cited file, a file beneath a cited folder; the pointer's verdict is said.
    let said = note(
        &env,
        "pre-tool-use",
        &edit(&repo, "e1", "Edit", "config/prod.yaml"),
    )
    .expect("an edit of a cited file trips the trap");
    assert!(
        said.starts_with(
            "Your handoff lists as a trap: \"`config/prod.yaml:2` is the real timeout"
        ) && said.contains("(config/prod.yaml:2 OK)")
            && said.contains("This call touches `config/prod.yaml`"),
        "{said}"
    );
    let said = note(
        &env,
        "pre-tool-use",
        &edit(&repo, "e1", "Write", "vendor/patched/new.rs"),
    )
    .expect("a file written beneath a cited folder");
    assert!(
        said.contains("`vendor/patched/` holds a patched crate"),
        "{said}"
    );
    // A relative path, as Gemini CLI may give it, from the session's directory.
    let rel =
        serde_json::json!({"session_id": "g1", "cwd": repo.join("src"), "tool_name": "replace",
        "tool_input": {"file_path": "legacy.rs"}})
        .to_string();
    let said = run(env
        .hook("post-tool-use", &rel)
        .args(["--harness", "gemini"]));
    let v: serde_json::Value = serde_json::from_str(&said.stdout).expect("Gemini's AfterTool");
    assert_eq!(v["hookSpecificOutput"]["hookEventName"], "AfterTool");
    let text = v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap_or_default();
    assert!(
        text.contains("`src/legacy.rs` looks dead")
            && text.contains("That call ran `src/legacy.rs`"),
        "{text}"
    );
}

/// Codex gives its shell as `Bash`; a patch run through it (`apply_patch <<'EOF'`, which Codex
/// applies itself) is an edit of each file the patch names, relative to the session's
/// directory; a heredoc that is no patch is a command like any other.
#[test]
fn a_codex_patch_through_its_shell_is_an_edit_of_the_files_it_names() {
    let env = TestEnv::new();
    let repo = corpus_repo(&env);
    env.stored(&repo, &corpus_handoff());
    let codex = |sid: &str, cwd: &Path, command: &str| {
        let stdin = serde_json::json!({"session_id": sid, "cwd": cwd, "hook_event_name": "PreToolUse",
            "tool_name": "Bash", "tool_input": {"command": command}, "tool_use_id": "call_1",
            "turn_id": "t", "model": "gpt-5", "permission_mode": "default", "transcript_path": null})
        .to_string();
        let o = run(env
            .hook("pre-tool-use", &stdin)
            .args(["--harness", "codex"]));
        assert_eq!((o.code, o.stderr.as_str()), (0, ""), "{stdin}");
        (!o.stdout.is_empty()).then(|| {
            let v: serde_json::Value = serde_json::from_str(&o.stdout).expect("one JSON line");
            assert_eq!(v["hookSpecificOutput"]["hookEventName"], "PreToolUse");
            assert!(v["hookSpecificOutput"].get("permissionDecision").is_none());
            v["hookSpecificOutput"]["additionalContext"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
    };
    let patch = "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: notes.md\n+hi\n*** Update File: legacy.rs\n@@\n-a\n+b\n*** End Patch\nEOF\n";
    let said = codex("c1", &repo.join("src"), patch).expect("the patch updates src/legacy.rs");
    assert!(
        said.contains("`src/legacy.rs` looks dead")
            && said.contains("This call touches `src/legacy.rs`"),
        "{said}"
    );
    assert_eq!(codex("c1", &repo.join("src"), patch), None, "said once");
    let elsewhere = patch.replace("legacy.rs", "fresh.rs");
    assert_eq!(
        codex("c2", &repo.join("src"), &elsewhere),
        None,
        "another file"
    );
    let heredoc = "cat <<'EOF' > /tmp/x\nsrc/legacy.rs\nEOF\n";
    assert_eq!(codex("c3", &repo, heredoc), None, "no patch, no edit");
    let said = codex("c4", &repo, "make test-slow").expect("its shell is a shell");
    assert!(
        said.starts_with("Your handoff lists as a dead end"),
        "{said}"
    );
}

/// Copilot CLI's preToolUse (`toolName`, `toolArgs`): `bash` is its shell; its freeform
/// `apply_patch` (the patch as `toolArgs` itself) and `edit` are edits of the files they name;
/// the note comes as its flat `additionalContext`.
#[test]
fn copilot_says_it_at_its_shell_and_its_patch() {
    let env = TestEnv::new();
    let repo = corpus_repo(&env);
    env.stored(&repo, &corpus_handoff());
    let copilot = |sid: &str, tool: &str, args: serde_json::Value| {
        let stdin = serde_json::json!({"sessionId": sid, "timestamp": 1, "cwd": repo,
            "toolName": tool, "toolArgs": args})
        .to_string();
        let o = run(env
            .hook("pre-tool-use", &stdin)
            .args(["--harness", "copilot"]));
        assert_eq!((o.code, o.stderr.as_str()), (0, ""), "{stdin}");
        (!o.stdout.is_empty()).then(|| {
            let v: serde_json::Value = serde_json::from_str(&o.stdout).expect("one JSON line");
            v["additionalContext"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
    };
    let patch = "*** Begin Patch\n*** Update File: src/legacy.rs\n@@\n-a\n+b\n*** End Patch\n";
    let said = copilot("p1", "apply_patch", serde_json::json!(patch)).expect("the patch");
    assert!(said.contains("This call touches `src/legacy.rs`"), "{said}");
    let said = copilot(
        "p2",
        "edit",
        serde_json::json!({"path": repo.join("src/legacy.rs")}),
    )
    .expect("an edit");
    assert!(said.contains("`src/legacy.rs` looks dead"), "{said}");
    let said = copilot(
        "p3",
        "bash",
        serde_json::json!({"command": "make test-slow"}),
    )
    .expect("its shell");
    assert!(
        said.starts_with("Your handoff lists as a dead end"),
        "{said}"
    );
    assert_eq!(
        copilot(
            "p4",
            "view",
            serde_json::json!({"path": repo.join("src/legacy.rs")})
        ),
        None,
        "a read is how one checks"
    );
}

/// OpenCode's plugin passes `tool.execute.after`'s tool and args: `bash`, `edit` / `write`
/// (`filePath`), `apply_patch` (`patchText`); the note comes back as `{"context": …}`, worded
/// as after the call.
#[test]
fn opencode_says_it_after_its_shell_its_edit_and_its_patch() {
    let env = TestEnv::new();
    let repo = corpus_repo(&env);
    env.stored(&repo, &corpus_handoff());
    let opencode = |sid: &str, tool: &str, args: serde_json::Value| {
        let stdin = serde_json::json!({"session_id": sid, "cwd": repo, "tool_name": tool,
            "tool_input": args})
        .to_string();
        let o = run(env
            .hook("post-tool-use", &stdin)
            .args(["--harness", "opencode"]));
        assert_eq!((o.code, o.stderr.as_str()), (0, ""), "{stdin}");
        (!o.stdout.is_empty()).then(|| {
            let v: serde_json::Value = serde_json::from_str(&o.stdout).expect("one JSON line");
            v["context"].as_str().unwrap_or_default().to_string()
        })
    };
    let said = opencode(
        "o1",
        "bash",
        serde_json::json!({"command": "make test-slow"}),
    )
    .expect("its shell");
    assert!(said.contains("That call ran `make test-slow`"), "{said}");
    let said = opencode(
        "o2",
        "edit",
        serde_json::json!({"filePath": repo.join("src/legacy.rs")}),
    )
    .expect("an edit");
    assert!(said.contains("That call ran `src/legacy.rs`"), "{said}");
    let patch = "*** Begin Patch\n*** Update File: src/legacy.rs\n@@\n-a\n+b\n*** End Patch";
    let said =
        opencode("o3", "apply_patch", serde_json::json!({"patchText": patch})).expect("a patch");
    assert!(said.contains("`src/legacy.rs` looks dead"), "{said}");
    assert_eq!(
        opencode(
            "o4",
            "read",
            serde_json::json!({"filePath": repo.join("src/legacy.rs")})
        ),
        None,
        "a read is how one checks"
    );
}

#[test]
fn a_teammates_item_keeps_its_frame_and_the_setting_switches_it_off() {
    let env = TestEnv::new();
    let repo = env.repo("r", "main", &[("src/legacy.rs", "fn old() {}\n")]);
    let slot = env.stored(
        &repo,
        "# Handoff — t\nstatus: s.\n\n## Do not re-derive\n\n### Decisions\n- None.\n\n### Dead ends\n- `make test-slow` hangs.\n\n### Traps\n- None.\n\n## Next\n1. Go.\n\n## Pointers\n```text\nsrc/legacy.rs:1 | fn old\n```\n",
    );
    // As sync brings a teammate's version in: a `from:` line in the envelope.
    let text = std::fs::read_to_string(&slot).expect("slot");
    let pulled = text.replacen(
        "status: ",
        "from: alice-laptop via origin, written 2026-12-01T10:00:00Z\nstatus: ",
        1,
    );
    std::fs::write(&slot, pulled).expect("placed");
    let said = note(&env, "pre-tool-use", &bash(&repo, "t1", "make test-slow")).expect("said");
    assert!(
        said.starts_with("A teammate's handoff (\"alice-laptop\" via origin) lists as a dead end:"),
        "{said}"
    );
    let status = |env: &TestEnv| run(env.store().arg("status").current_dir(&repo)).stdout;
    assert!(
        status(&env).contains("\ntripwire 1 armed: "),
        "{}",
        status(&env)
    );
    env.git(&repo, &["config", "handoff.tripwires", "false"]);
    assert_eq!(
        note(&env, "pre-tool-use", &bash(&repo, "t2", "make test-slow")),
        None
    );
    assert!(
        status(&env).contains("\ntripwire off (handoff.tripwires false)\n"),
        "{}",
        status(&env)
    );
    env.git(&repo, &["config", "handoff.tripwires", "true"]);
    env.git(&repo, &["config", "handoff.enabled", "false"]);
    assert_eq!(
        note(&env, "pre-tool-use", &bash(&repo, "t3", "make test-slow")),
        None
    );
    env.git(&repo, &["config", "--unset", "handoff.enabled"]);
    assert!(note(&env, "pre-tool-use", &bash(&repo, "t4", "make test-slow")).is_some());
    // Another branch has no handoff: the match never reaches outside the session's branch.
    env.git(&repo, &["switch", "-q", "-c", "other"]);
    assert_eq!(
        note(&env, "pre-tool-use", &bash(&repo, "t5", "make test-slow")),
        None
    );
}

#[test]
fn two_hooks_firing_at_once_say_it_once() {
    let env = TestEnv::new();
    let (repo, _) = one_dead_end(&env);
    for round in 0..5 {
        let sid = format!("twice-{round}");
        let input = bash(&repo, &sid, "make test-slow");
        let children: Vec<std::process::Child> = (0..2)
            .map(|_| {
                let mut c = env.store_process();
                c.args(["hook", "pre-tool-use"])
                    .stdin(std::process::Stdio::piped())
                    .stdout(std::process::Stdio::piped());
                let mut child = c.spawn().expect("spawn");
                use std::io::Write;
                let _ = child
                    .stdin
                    .take()
                    .expect("stdin")
                    .write_all(input.as_bytes());
                child
            })
            .collect();
        let said = children
            .into_iter()
            .map(|c| c.wait_with_output().expect("ran"))
            .filter(|o| !o.stdout.is_empty())
            .count();
        assert_eq!(said, 1, "round {round}: exactly one of two hooks says it");
    }
}

#[test]
fn a_pruned_slot_takes_its_tripwires_with_it() {
    let env = TestEnv::new();
    let (repo, slot) = one_dead_end(&env);
    assert!(note(&env, "pre-tool-use", &bash(&repo, "p1", "make test-slow")).is_some());
    let cache = wires_of(&env, &slot);
    assert!(cache.is_file(), "the wires are kept beside the slot");
    run(env.store().arg("set-progress").arg(&slot).arg("consumed"));
    env.age(&slot, 40 * 86_400);
    let o = run(env.store().args(["prune", "--apply"]));
    assert!(!slot.exists(), "{}", o.stdout);
    assert!(!cache.exists(), "the slot's wires went with it");
}

#[test]
fn the_wires_of_a_slot_removed_by_hand_are_pruned() {
    let env = TestEnv::new();
    let (repo, slot) = one_dead_end(&env);
    assert!(note(&env, "pre-tool-use", &bash(&repo, "h1", "make test-slow")).is_some());
    let cache = wires_of(&env, &slot);
    std::fs::remove_file(&slot).expect("removed by hand");
    let dry = run(env.store().arg("prune"));
    assert!(
        dry.stdout.contains(&format!(
            "would delete  {}  (tripwires of a slot that is gone, ",
            cache.display()
        )),
        "{}",
        dry.stdout
    );
    run(env.store().args(["prune", "--apply"]));
    assert!(!cache.exists());
}

/// A repository whose handoff has one dead end, quoting `make test-slow`; its slot.
fn one_dead_end(env: &TestEnv) -> (std::path::PathBuf, std::path::PathBuf) {
    let repo = env.repo("r", "main", &[("a.txt", "a\n")]);
    let slot = env.stored(
        &repo,
        "# Handoff — t\nstatus: s.\n\n## Do not re-derive\n\n### Decisions\n- None.\n\n### Dead ends\n- `make test-slow` hangs.\n\n### Traps\n- None.\n\n## Next\n1. Go.\n\n## Pointers\n```text\na.txt:1 | a\n```\n",
    );
    (repo, slot)
}

/// Where the wires of `slot` are kept.
fn wires_of(env: &TestEnv, slot: &Path) -> std::path::PathBuf {
    let name = slot
        .file_name()
        .expect("name")
        .to_string_lossy()
        .into_owned();
    env.store_dir()
        .join(".tripwires")
        .join(format!("{name}.json"))
}

#[test]
fn status_counts_the_armed_items_and_writes_nothing() {
    let env = TestEnv::new();
    let (repo, slot) = one_dead_end(&env);
    let o = run(env.store().arg("status").current_dir(&repo));
    assert!(o.stdout.contains("\ntripwire 1 armed: "), "{}", o.stdout);
    assert!(
        !wires_of(&env, &slot).exists(),
        "status is a read: no cache written"
    );
}
