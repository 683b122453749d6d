//! The harness adapters: `install` / `uninstall` round trips on existing configuration files
//! (other hooks and comments in them), and each harness's documented input and output shapes
//! through `hook session-start --harness <name>` (Cursor cannot be installed here, so its
//! fixtures are all it gets; Codex's trust and the real clients are in tests/e2e).

use std::path::{Path, PathBuf};

use crate::util::*;

fn hs(env: &TestEnv, dir: &Path, args: &[&str]) -> assert_cmd::Command {
    let mut c = env.store();
    c.args(args)
        .current_dir(dir)
        .env("CODEX_HOME", env.home().join(".codex"))
        // No codex here: the install says how to trust the hook instead of asking Codex.
        .env("PATH", "/usr/bin:/bin")
        .env("LAST_CLEAR_STATE_DIR", env.marker_dir());
    c
}

/// Install, check the file holds our hook and everything it held before, uninstall, and check
/// the file is byte-identical to what it was.
fn round_trip(env: &TestEnv, repo: &Path, what: &str, scope: &str, file: &Path, before: &str) {
    std::fs::create_dir_all(file.parent().expect("parent")).expect("dirs");
    std::fs::write(file, before).expect("existing config");
    let o = run(&mut hs(env, repo, &["install", what, scope]));
    assert_eq!(o.code, 0, "{}{}", o.stdout, o.stderr);
    let during = std::fs::read_to_string(file).expect("config");
    let ours = match what {
        "claude" => "hook session-start\"".to_string(),
        _ => format!("hook session-start --harness {what}"),
    };
    assert!(during.contains(&ours), "{during}");
    // Every comment and every other hook's command is still there.
    let kept = before
        .lines()
        .filter(|l| l.trim_start().starts_with("//"))
        .map(|l| l.trim().to_string())
        .chain(
            before
                .split('"')
                .filter(|w| w.starts_with("echo "))
                .map(str::to_string),
        );
    for piece in kept {
        assert!(during.contains(&piece), "kept {piece:?}: {during}");
    }
    let again = run(&mut hs(env, repo, &["install", what, scope]));
    assert!(again.stdout.contains("already there"), "{}", again.stdout);
    let o = run(&mut hs(env, repo, &["uninstall", what, scope]));
    assert_eq!(o.code, 0, "{}{}", o.stdout, o.stderr);
    assert_eq!(std::fs::read_to_string(file).expect("config"), before);
}

#[test]
fn install_and_uninstall_leave_existing_configuration_byte_identical() {
    let env = TestEnv::new();
    let repo = env.repo("r", "main", &[("a.txt", "a\n")]);
    round_trip(
        &env,
        &repo,
        "codex",
        "--user",
        &env.home().join(".codex/hooks.json"),
        "{\n  \"hooks\": {\n    \"Stop\": [\n      {\"hooks\": [{\"type\": \"command\", \"command\": \"echo stop\"}]}\n    ]\n  }\n}\n",
    );
    round_trip(
        &env,
        &repo,
        "codex",
        "--project",
        &repo.join(".codex/hooks.json"),
        "{\"hooks\":{\"SessionStart\":[{\"hooks\":[{\"type\":\"command\",\"command\":\"echo theirs\"}]}]}}",
    );
    round_trip(
        &env,
        &repo,
        "gemini",
        "--user",
        &env.home().join(".gemini/settings.json"),
        "{\n  // the theme I like\n  \"theme\": \"GitHub\",\n  \"hooks\": {\n    \"SessionStart\": [\n      {\"hooks\": [{\"type\": \"command\", \"command\": \"echo hi\", \"timeout\": 500}]}\n    ]\n  }\n}\n",
    );
    round_trip(
        &env,
        &repo,
        "claude",
        "--user",
        &env.home().join(".claude/settings.json"),
        "{\n  // mine\n  \"model\": \"opus\",\n  \"hooks\": {\n    \"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"echo stop\"}]}]\n  }\n}\n",
    );
    round_trip(
        &env,
        &repo,
        "claude",
        "--project",
        &repo.join(".claude/settings.json"),
        "{\"permissions\": {\"allow\": [\"Read\"]}}\n",
    );
    round_trip(
        &env,
        &repo,
        "cursor",
        "--project",
        &repo.join(".cursor/hooks.json"),
        "{\n  \"version\": 1,\n  // format on stop\n  \"hooks\": {\n    \"stop\": [{\"command\": \"echo fmt\"}]\n  }\n}\n",
    );
}

/// Where `install <what>` writes by default, for the repository `repo`.
fn default_file(env: &TestEnv, repo: &Path, what: &str) -> PathBuf {
    match what {
        "claude" => env.home().join(".claude/settings.json"),
        "codex" => env.home().join(".codex/hooks.json"),
        "gemini" => env.home().join(".gemini/settings.json"),
        "cursor" => env.home().join(".cursor/hooks.json"),
        "copilot" => repo.join(".github/hooks/handoff-store.json"),
        _ => repo.join(".clinerules/hooks/TaskStart"),
    }
}

fn is_link(p: &Path) -> bool {
    std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_symlink())
}

fn mode(p: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).expect("meta").permissions().mode() & 0o7777
}

/// An install never hurts the file it edits, for every harness: a symlinked
/// configuration is edited through the link (the link stays, the target's mode kept); a link
/// to /dev/null or a dangling one is refused with a clear message and left as it was; a
/// read-only file comes back with its bytes and its mode; nothing we write is group- or
/// world-writable.
#[test]
fn installs_never_hurt_the_file_they_edit() {
    use std::os::unix::fs::{PermissionsExt, symlink};
    for what in ["claude", "codex", "gemini", "copilot", "cline", "cursor"] {
        let env = TestEnv::new();
        let repo = env.repo("r", "main", &[("a.txt", "a\n")]);
        let file = default_file(&env, &repo, what);
        std::fs::create_dir_all(file.parent().expect("parent")).expect("dirs");
        let json = what != "cline";

        // A dangling link, then a link to /dev/null: refused, the link untouched.
        for (to, says) in [
            (env.path("dotfiles/nowhere.json"), "does not exist"),
            (PathBuf::from("/dev/null"), "not a regular file"),
        ] {
            symlink(&to, &file).expect("link");
            for verb in ["install", "uninstall"] {
                let o = run(&mut hs(&env, &repo, &[verb, what]));
                if verb == "install" || o.code != 0 {
                    assert_ne!(
                        o.code,
                        0,
                        "{what} {verb} through a link to {}",
                        to.display()
                    );
                    assert!(o.stderr.contains(says), "{what}: {}", o.stderr);
                }
                assert_eq!(
                    std::fs::read_link(&file).expect("still a link"),
                    to,
                    "{what} {verb}"
                );
            }
            assert!(!to.exists() || to == Path::new("/dev/null"));
            std::fs::remove_file(&file).expect("unlink");
        }

        if json {
            // A link into a dotfiles folder, its target private: edited through the link.
            let target = env.path(&format!("dotfiles/{what}.json"));
            std::fs::create_dir_all(target.parent().expect("parent")).expect("dotfiles");
            let before = "{\n  // mine\n  \"version\": 1\n}\n";
            std::fs::write(&target, before).expect("target");
            std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o600))
                .expect("chmod");
            symlink(&target, &file).expect("link");
            let o = run(&mut hs(&env, &repo, &["install", what]));
            assert_eq!(o.code, 0, "{what}: {}", o.stderr);
            assert!(is_link(&file), "{what}: the link stays");
            assert!(
                std::fs::read_to_string(&target)
                    .expect("target")
                    .contains("hook session-start"),
                "{what}: the linked file holds our hook"
            );
            assert_eq!(mode(&target), 0o600, "{what}: the target's mode kept");
            let o = run(&mut hs(&env, &repo, &["uninstall", what]));
            assert_eq!(o.code, 0, "{what}: {}", o.stderr);
            assert!(is_link(&file), "{what}: the link stays");
            assert_eq!(
                std::fs::read_to_string(&target).expect("target"),
                before,
                "{what}"
            );
            assert_eq!(mode(&target), 0o600, "{what}");
            std::fs::remove_file(&file).expect("unlink");

            // Read-only: the bytes and the mode come back.
            std::fs::write(&file, before).expect("file");
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o444)).expect("ro");
            assert_eq!(
                run(&mut hs(&env, &repo, &["install", what])).code,
                0,
                "{what}"
            );
            assert_eq!(mode(&file), 0o444, "{what}");
            assert_eq!(
                run(&mut hs(&env, &repo, &["uninstall", what])).code,
                0,
                "{what}"
            );
            assert_eq!(
                std::fs::read_to_string(&file).expect("file"),
                before,
                "{what}"
            );
            assert_eq!(mode(&file), 0o444, "{what}");
            std::fs::remove_file(&file).expect("rm");
        }

        // A file we create is neither group- nor world-writable, whatever the umask.
        let o = run(&mut hs(&env, &repo, &["install", what]));
        assert_eq!(o.code, 0, "{what}: {}", o.stderr);
        assert_eq!(mode(&file) & 0o022, 0, "{what}: {:o}", mode(&file));
        assert_eq!(run(&mut hs(&env, &repo, &["uninstall", what])).code, 0);
        assert!(!file.exists(), "{what}: a file we created goes whole");
    }
}

/// `uninstall` takes out only what we added: a hook the user put into our group
/// stays, and no key or array the file did not have is left behind (even when the file was
/// edited since, so it cannot simply be restored).
#[test]
fn uninstall_removes_only_what_we_added() {
    for what in ["claude", "codex", "gemini"] {
        let env = TestEnv::new();
        let repo = env.repo("r", "main", &[("a.txt", "a\n")]);
        let file = default_file(&env, &repo, what);
        std::fs::create_dir_all(file.parent().expect("parent")).expect("dirs");
        std::fs::write(&file, "{\n  \"theme\": \"light\"\n}\n").expect("file");
        assert_eq!(run(&mut hs(&env, &repo, &["install", what])).code, 0);
        // The user adds a hook of their own inside our SessionStart group, and edits a key.
        let mut v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&file).expect("file")).expect("json");
        v["hooks"]["SessionStart"][0]["hooks"]
            .as_array_mut()
            .expect("our group")
            .push(serde_json::json!({"type": "command", "command": "echo mine"}));
        v["theme"] = serde_json::json!("dark");
        std::fs::write(&file, serde_json::to_string_pretty(&v).expect("json")).expect("edit");
        let o = run(&mut hs(&env, &repo, &["uninstall", what]));
        assert_eq!(o.code, 0, "{what}: {}", o.stderr);
        let after: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&file).expect("file")).expect("json");
        assert_eq!(
            after,
            serde_json::json!({"theme": "dark", "hooks": {"SessionStart": [{"hooks": [
                {"type": "command", "command": "echo mine"}]}]}}),
            "{what}: only ours went, and no empty array of ours stayed"
        );

        // Without the user's hook: no `hooks` key at all, as before the install.
        std::fs::write(&file, "{\n  \"theme\": \"light\"\n}\n").expect("file");
        assert_eq!(run(&mut hs(&env, &repo, &["install", what])).code, 0);
        let edited = std::fs::read_to_string(&file)
            .expect("file")
            .replace("light", "dark");
        std::fs::write(&file, edited).expect("edit");
        assert_eq!(run(&mut hs(&env, &repo, &["uninstall", what])).code, 0);
        let after: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&file).expect("file")).expect("json");
        assert_eq!(after, serde_json::json!({"theme": "dark"}), "{what}");
    }
}

#[test]
fn a_file_edited_since_install_loses_only_our_hook() {
    let env = TestEnv::new();
    let repo = env.repo("r", "main", &[("a.txt", "a\n")]);
    let file = env.home().join(".gemini/settings.json");
    std::fs::create_dir_all(file.parent().expect("parent")).expect("dirs");
    std::fs::write(&file, "{\n  // mine\n  \"theme\": \"GitHub\"\n}\n").expect("settings");
    assert_eq!(run(&mut hs(&env, &repo, &["install", "gemini"])).code, 0);
    let edited = std::fs::read_to_string(&file)
        .expect("settings")
        .replace("\"GitHub\"", "\"Dracula\"");
    std::fs::write(&file, &edited).expect("the user edits");
    let o = run(&mut hs(&env, &repo, &["uninstall", "gemini"]));
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(
        o.stdout.contains("only our hook was taken out"),
        "{}",
        o.stdout
    );
    let after = std::fs::read_to_string(&file).expect("settings");
    assert!(
        after.contains("\"Dracula\"") && after.contains("// mine"),
        "{after}"
    );
    assert!(!after.contains("--harness gemini"), "{after}");
}

/// An install made by an earlier release (SessionStart only, as Gemini's was before PreCompress
/// and AfterAgent were added): installing again adds the new hooks, and uninstall still gives
/// back the file as it was before the first install, not the earlier release's version of it.
#[test]
fn installing_over_an_earlier_release_keeps_the_users_file_for_uninstall() {
    let env = TestEnv::new();
    let repo = env.repo("r", "main", &[("a.txt", "a\n")]);
    let file = env.home().join(".gemini/settings.json");
    std::fs::create_dir_all(file.parent().expect("parent")).expect("dirs");
    let mine = "{\n  // mine\n  \"theme\": \"GitHub\"\n}\n";
    std::fs::write(&file, mine).expect("settings");
    assert_eq!(run(&mut hs(&env, &repo, &["install", "gemini"])).code, 0);
    // What the earlier release left: its SessionStart group, and its record of the file.
    let earlier = format!(
        "{{\n  // mine\n  \"theme\": \"GitHub\",\n  \"hooks\": {{\"SessionStart\": [{{\"hooks\": [{{\"type\": \"command\", \"command\": \"{} hook session-start --harness gemini\", \"timeout\": 10000}}]}}]}}\n}}\n",
        assert_cmd::cargo::cargo_bin("handoff-store").display()
    );
    std::fs::write(&file, &earlier).expect("earlier install");
    let records: Vec<_> = std::fs::read_dir(env.store_dir().join(".installs"))
        .expect("install records")
        .flatten()
        .map(|e| e.path())
        .collect();
    assert_eq!(records.len(), 1, "{records:?}");
    let mut record: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&records[0]).expect("record")).expect("json");
    record["after"] = serde_json::Value::String(earlier.clone());
    std::fs::write(&records[0], record.to_string()).expect("record");

    let o = run(&mut hs(&env, &repo, &["install", "gemini"]));
    assert_eq!(o.code, 0, "{}{}", o.stdout, o.stderr);
    let now = std::fs::read_to_string(&file).expect("settings");
    assert_eq!(
        now.matches("hook session-start --harness gemini").count(),
        1,
        "{now}"
    );
    assert!(
        now.contains("\"PreCompress\"") && now.contains("hook post-compact --harness gemini"),
        "{now}"
    );
    let o = run(&mut hs(&env, &repo, &["uninstall", "gemini"]));
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_eq!(std::fs::read_to_string(&file).expect("settings"), mine);
}

#[test]
fn files_of_our_own_are_created_and_removed_whole() {
    let env = TestEnv::new();
    let repo = env.repo("r", "main", &[("a.txt", "a\n")]);
    let copilot = repo.join(".github/hooks/handoff-store.json");
    assert_eq!(run(&mut hs(&env, &repo, &["install", "copilot"])).code, 0);
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&copilot).expect("copilot hooks"))
            .expect("json");
    assert_eq!(v["version"], 1);
    let hook = &v["hooks"]["sessionStart"][0];
    assert_eq!(hook["type"], "command");
    assert!(
        hook["bash"]
            .as_str()
            .is_some_and(|b| b.ends_with("hook session-start --harness copilot")),
        "{v}"
    );
    assert_eq!(hook["timeoutSec"], 10);
    assert_eq!(run(&mut hs(&env, &repo, &["uninstall", "copilot"])).code, 0);
    assert!(!copilot.exists());

    let cline = repo.join(".clinerules/hooks/TaskStart");
    assert_eq!(run(&mut hs(&env, &repo, &["install", "cline"])).code, 0);
    let script = std::fs::read_to_string(&cline).expect("script");
    assert!(script.starts_with("#!/bin/sh\nexec "), "{script}");
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&cline)
        .expect("meta")
        .permissions()
        .mode();
    assert_eq!(mode & 0o111, 0o111, "executable");
    let tool = repo.join(".clinerules/hooks/PreToolUse");
    let script = std::fs::read_to_string(&tool).expect("the tripwires' script");
    assert!(
        script.starts_with("#!/bin/sh\nexec ")
            && script.ends_with(" hook pre-tool-use --harness cline\n"),
        "{script}"
    );
    let mode = std::fs::metadata(&tool).expect("meta").permissions().mode();
    assert_eq!(mode & 0o111, 0o111, "executable");
    assert_eq!(run(&mut hs(&env, &repo, &["uninstall", "cline"])).code, 0);
    assert!(!cline.exists() && !tool.exists());
    assert!(
        !repo.join(".clinerules").exists(),
        "the folders install created are removed with the file"
    );

    // Someone else's TaskStart is never replaced.
    std::fs::create_dir_all(repo.join(".clinerules/hooks")).expect("their folder");
    std::fs::write(&cline, "#!/bin/sh\necho theirs\n").expect("theirs");
    let o = run(&mut hs(&env, &repo, &["install", "cline"]));
    assert_eq!(o.code, 3, "{}", o.stderr);
    assert!(o.stderr.contains("not ours"), "{}", o.stderr);
    assert_eq!(
        std::fs::read_to_string(&cline).expect("theirs"),
        "#!/bin/sh\necho theirs\n"
    );
    let o = run(&mut hs(&env, &repo, &["install", "copilot", "--user"]));
    assert_eq!(o.code, 2, "copilot has no user scope: {}", o.stderr);
    // Cline's CLI also reads the user's ~/.cline/hooks.
    let user = env.home().join(".cline/hooks/TaskStart");
    assert_eq!(
        run(&mut hs(&env, &repo, &["install", "cline", "--user"])).code,
        0
    );
    assert!(user.exists());
    assert_eq!(
        run(&mut hs(&env, &repo, &["uninstall", "cline", "--user"])).code,
        0
    );
    assert!(!user.exists());
}

/// Cline's tripwires are a `PreToolUse` script beside `TaskStart`: someone else's script of
/// that name is left alone and `install` says so, `uninstall` leaves it too, and a hook
/// answers Cline's tool-call input (its CLI's `tool_call`, its extension's `preToolUse`).
#[test]
fn clines_tool_script_is_ours_only_where_none_was() {
    let env = TestEnv::new();
    let repo = env.repo("r", "main", &[("src/legacy.rs", "fn old() {}\n")]);
    env.stored(
        &repo,
        "# Handoff — t\nstatus: s.\n\n## Do not re-derive\n\n### Decisions\n- None.\n\n### Dead ends\n- `make test-slow` hangs.\n\n### Traps\n- `src/legacy.rs` looks dead.\n\n## Next\n1. Go.\n\n## Pointers\n```text\nsrc/legacy.rs:1 | fn old\n```\n",
    );
    let tool = repo.join(".clinerules/hooks/PreToolUse");
    std::fs::create_dir_all(repo.join(".clinerules/hooks")).expect("their folder");
    std::fs::write(&tool, "#!/bin/sh\necho theirs\n").expect("theirs");
    let o = run(&mut hs(&env, &repo, &["install", "cline"]));
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(
        o.stdout
            .contains("PreToolUse is someone else's, so it was left alone"),
        "{}",
        o.stdout
    );
    assert!(repo.join(".clinerules/hooks/TaskStart").is_file());
    assert_eq!(run(&mut hs(&env, &repo, &["uninstall", "cline"])).code, 0);
    assert_eq!(
        std::fs::read_to_string(&tool).expect("theirs"),
        "#!/bin/sh\necho theirs\n"
    );
    std::fs::remove_file(&tool).expect("theirs gone");
    assert_eq!(run(&mut hs(&env, &repo, &["install", "cline"])).code, 0);
    let fire = |stdin: serde_json::Value| {
        let o = run(env
            .hook("pre-tool-use", &stdin.to_string())
            .args(["--harness", "cline"]));
        assert_eq!((o.code, o.stderr.as_str()), (0, ""));
        serde_json::from_str::<serde_json::Value>(&o.stdout)
            .ok()
            .and_then(|v| v["contextModification"].as_str().map(str::to_string))
            .filter(|t| !t.is_empty())
    };
    let cli = |task: &str, name: &str, input: serde_json::Value| {
        serde_json::json!({"taskId": task, "hookName": "tool_call", "workspaceRoots": [repo],
            "tool_call": {"id": "call_1", "name": name, "input": input}})
    };
    let said = fire(cli(
        "t1",
        "run_commands",
        serde_json::json!({"commands": ["ls", "make test-slow"]}),
    ))
    .expect("the dead end");
    assert!(
        said.contains("This call touches `make test-slow`"),
        "{said}"
    );
    let said = fire(cli(
        "t1",
        "editor",
        serde_json::json!({"path": repo.join("src/legacy.rs"), "new_text": "x"}),
    ))
    .expect("the trap");
    assert!(said.contains("`src/legacy.rs` looks dead"), "{said}");
    let extension = serde_json::json!({"taskId": "t2", "hookName": "PreToolUse",
        "workspaceRoots": [repo], "preToolUse": {"toolName": "execute_command",
        "parameters": {"command": "make test-slow"}}});
    assert!(fire(extension).is_some(), "the extension's spelling");
    assert_eq!(
        fire(cli(
            "t3",
            "read_files",
            serde_json::json!({"paths": [repo.join("src/legacy.rs")]})
        )),
        None,
        "a read is how one checks"
    );
}

/// OpenCode's install is a plugin file naming this binary as a JSON string (run by argument
/// vector); uninstall removes it and the folders it made, and leaves a folder that held
/// something else; status reads the program the plugin runs.
#[test]
fn opencode_gets_a_plugin_that_uninstall_removes_with_its_folders() {
    let env = TestEnv::new();
    let repo = env.repo("r", "main", &[("a.txt", "a\n")]);
    let plugin = repo.join(".opencode/plugins/handoff-store.js");
    let o = run(&mut hs(&env, &repo, &["install", "opencode", "--project"]));
    assert_eq!(o.code, 0, "{}", o.stderr);
    let text = std::fs::read_to_string(&plugin).expect("plugin");
    let bin = assert_cmd::cargo::cargo_bin("handoff-store");
    let named = format!(
        "const PROGRAM = {};",
        serde_json::json!(bin.to_string_lossy())
    );
    assert!(text.contains(&named), "{text}");
    assert!(text.contains("shell: false") && !text.contains("@PROGRAM@"));
    let status = run(&mut hs(&env, &repo, &["status", "--all"]));
    assert!(
        status
            .stdout
            .lines()
            .any(|l| l.split_whitespace().take(4).eq([
                "opencode",
                "project",
                "installed=yes",
                "runs=yes"
            ])),
        "{}",
        status.stdout
    );
    assert_eq!(
        run(&mut hs(
            &env,
            &repo,
            &["uninstall", "opencode", "--project"]
        ))
        .code,
        0
    );
    assert!(!repo.join(".opencode").exists(), "its folders are removed");

    // A folder that held something of the user's before stays, with it.
    std::fs::create_dir_all(repo.join(".opencode")).expect("theirs");
    std::fs::write(repo.join(".opencode/opencode.json"), "{}\n").expect("theirs");
    assert_eq!(
        run(&mut hs(&env, &repo, &["install", "opencode", "--project"])).code,
        0
    );
    assert_eq!(
        run(&mut hs(
            &env,
            &repo,
            &["uninstall", "opencode", "--project"]
        ))
        .code,
        0
    );
    assert!(!repo.join(".opencode/plugins").exists());
    assert_eq!(
        std::fs::read_to_string(repo.join(".opencode/opencode.json")).expect("theirs"),
        "{}\n"
    );

    // The user scope follows XDG_CONFIG_HOME as OpenCode does.
    let config = env.home().join("xdg");
    let o =
        run(hs(&env, &repo, &["install", "opencode", "--user"]).env("XDG_CONFIG_HOME", &config));
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(config.join("opencode/plugins/handoff-store.js").is_file());
}

/// `install codex` steers Codex's compaction through `compact_prompt` in `config.toml`,
/// format-preserving; uninstall gives the file back byte for byte, or takes only our key out of
/// a file edited since; a `compact_prompt` of the user's own is never touched, and status says
/// which it is.
#[test]
fn codex_compaction_is_steered_through_compact_prompt_and_given_back() {
    let env = TestEnv::new();
    let repo = env.repo("r", "main", &[("a.txt", "a\n")]);
    let config = env.home().join(".codex/config.toml");
    std::fs::create_dir_all(config.parent().expect("dir")).expect("dir");
    let mine = "# mine\nmodel = \"o3\"\n\n[tui]\ntheme = \"dark\"\n";
    std::fs::write(&config, mine).expect("config");
    let o = run(&mut hs(&env, &repo, &["install", "codex"]));
    assert!(
        o.stdout.contains("steer     compact_prompt set in"),
        "{}",
        o.stdout
    );
    let during = std::fs::read_to_string(&config).expect("config");
    let doc: toml_edit::DocumentMut = during.parse().expect("toml");
    assert!(
        doc.get("compact_prompt")
            .and_then(|v| v.as_str())
            .is_some_and(|p| p.contains("Keep verbatim, in a section of their own")),
        "{during}"
    );
    assert!(
        during.starts_with("# mine\nmodel = \"o3\"\n")
            && during.contains("[tui]\ntheme = \"dark\"\n")
    );
    let status = run(&mut hs(&env, &repo, &["status", "--all"]));
    assert!(
        status.stdout.contains("steering installed=yes"),
        "{}",
        status.stdout
    );
    let o = run(&mut hs(&env, &repo, &["uninstall", "codex"]));
    assert!(
        o.stdout.contains("compact_prompt (our steering)"),
        "{}",
        o.stdout
    );
    assert_eq!(std::fs::read_to_string(&config).expect("config"), mine);

    // Edited since: only our key goes.
    assert_eq!(run(&mut hs(&env, &repo, &["install", "codex"])).code, 0);
    let edited = format!(
        "{}\n[profiles.x]\nmodel = \"gpt\"\n",
        std::fs::read_to_string(&config).expect("config")
    );
    std::fs::write(&config, &edited).expect("edit");
    assert_eq!(run(&mut hs(&env, &repo, &["uninstall", "codex"])).code, 0);
    let left = std::fs::read_to_string(&config).expect("config");
    assert!(
        !left.contains("compact_prompt") && left.contains("[profiles.x]"),
        "{left}"
    );

    // The user's own compact_prompt is theirs.
    let theirs = "compact_prompt = \"mine\"\n";
    std::fs::write(&config, theirs).expect("theirs");
    let o = run(&mut hs(&env, &repo, &["install", "codex"]));
    assert!(o.stdout.contains("your own compact_prompt"), "{}", o.stdout);
    let status = run(&mut hs(&env, &repo, &["status", "--all"]));
    assert!(
        status.stdout.contains("compact_prompt of your own"),
        "{}",
        status.stdout
    );
    assert_eq!(run(&mut hs(&env, &repo, &["uninstall", "codex"])).code, 0);
    assert_eq!(std::fs::read_to_string(&config).expect("config"), theirs);
}

/// `status` finds our MCP server where each client's own `mcp add` writes it (Claude Code's
/// `.mcp.json`, Codex's `[mcp_servers.*]`, Gemini CLI's `mcpServers`, OpenCode's `mcp` with the
/// command as an argument vector), says whether the program it names is there, and ignores
/// other servers.
#[test]
fn status_shows_mcp_registrations_in_each_clients_file() {
    let env = TestEnv::new();
    let repo = env.repo("r", "main", &[("a.txt", "a\n")]);
    let bin = assert_cmd::cargo::cargo_bin("handoff-store");
    let bin = bin.to_string_lossy();
    let write = |path: &Path, text: String| {
        std::fs::create_dir_all(path.parent().expect("dir")).expect("dir");
        std::fs::write(path, text).expect("config");
    };
    let other = r#""other": {"command": "/usr/bin/true", "args": ["mcp"]}"#;
    write(
        &repo.join(".mcp.json"),
        format!(
            r#"{{"mcpServers": {{"handoff": {{"type": "stdio", "command": "{bin}", "args": ["mcp"]}}, {other}}}}}"#
        ),
    );
    write(
        &env.home().join(".codex/config.toml"),
        format!("[mcp_servers.handoff]\ncommand = \"{bin}\"\nargs = [\"mcp\"]\n"),
    );
    write(
        &env.home().join(".gemini/settings.json"),
        r#"{"mcpServers": {"handoff": {"command": "/gone/handoff-store", "args": ["mcp"]}}}"#
            .into(),
    );
    write(
        &repo.join("opencode.json"),
        format!(r#"{{"mcp": {{"handoff": {{"type": "local", "command": ["{bin}", "mcp"]}}}}}}"#),
    );
    let status = run(&mut hs(&env, &repo, &["status", "--all"])).stdout;
    let rows: Vec<Vec<&str>> = status
        .lines()
        .map(|l| l.split_whitespace().take(4).collect())
        .filter(|w: &Vec<&str>| w.get(1) == Some(&"mcp"))
        .collect();
    assert_eq!(
        rows,
        [
            ["claude-code", "mcp", "installed=yes", "runs=yes"],
            ["codex", "mcp", "installed=yes", "runs=yes"],
            ["gemini", "mcp", "installed=yes", "runs=no"],
            ["opencode", "mcp", "installed=yes", "runs=yes"],
        ],
        "{status}"
    );
    assert!(
        status.contains("MCP server /gone/handoff-store: no such program"),
        "{status}"
    );
}

#[test]
fn codex_without_the_codex_program_says_how_to_trust_and_status_says_why() {
    let env = TestEnv::new();
    let repo = env.repo("r", "main", &[("a.txt", "a\n")]);
    let o = run(&mut hs(&env, &repo, &["install", "codex"]));
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stdout.contains("/hooks"), "{}", o.stdout);
    let hooks: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(env.home().join(".codex/hooks.json")).expect("hooks.json"),
    )
    .expect("json");
    for (event, ours) in [
        ("SessionStart", "hook session-start --harness codex"),
        ("PreCompact", "hook pre-compact --harness codex"),
        ("PostCompact", "hook post-compact --harness codex"),
    ] {
        assert!(
            hooks["hooks"][event][0]["hooks"][0]["command"]
                .as_str()
                .is_some_and(|c| c.ends_with(ours)),
            "{event}: {hooks}"
        );
    }
    assert!(o.stdout.contains("not trusted yet"), "{}", o.stdout);
    let (code, v) = json(hs(&env, &repo, &["status", "--format", "json"]).arg(&repo));
    assert_eq!(code, 0);
    let rows = v["harnesses"].as_array().expect("rows");
    let codex_user = rows
        .iter()
        .find(|r| r["harness"] == "codex" && r["scope"] == "user")
        .expect("codex user row");
    assert_eq!(codex_user["installed"], true);
    assert_eq!(codex_user["runs"], "unknown", "{codex_user}");
    let gemini_user = rows
        .iter()
        .find(|r| r["harness"] == "gemini" && r["scope"] == "user")
        .expect("gemini row");
    assert_eq!(
        (
            gemini_user["installed"].clone(),
            gemini_user["runs"].clone()
        ),
        (serde_json::json!(false), serde_json::json!("no"))
    );
}

/// Copilot loads a repository's hooks only in a folder it trusts: `install copilot` says how,
/// and `status` reads the trust from Copilot's config.json (comments and all).
#[test]
fn copilot_status_follows_the_folder_trust_copilot_records() {
    let env = TestEnv::new();
    let repo = env.shop("shop", "main");
    let o = run(hs(&env, &repo, &["install", "copilot"]).arg(&repo));
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stdout.contains("trustedFolders"), "{}", o.stdout);
    let row = || {
        let (code, v) = json(hs(&env, &repo, &["status", "--format", "json"]).arg(&repo));
        assert_eq!(code, 0);
        v["harnesses"]
            .as_array()
            .and_then(|rows| {
                rows.iter()
                    .find(|r| r["harness"] == "copilot" && r["scope"] == "project")
                    .cloned()
            })
            .expect("copilot project row")
    };
    let untrusted = row();
    assert_eq!(
        (untrusted["installed"].clone(), untrusted["runs"].clone()),
        (serde_json::json!(true), serde_json::json!("no")),
        "{untrusted}"
    );
    env.write(
        "home/.copilot/config.json",
        format!(
            "// This file is managed automatically.\n{{\n  \"trustedFolders\": [\"/elsewhere\", {}]\n}}\n",
            serde_json::json!(repo)
        ),
    );
    assert_eq!(row()["runs"], "yes", "{}", row());
}

/// A repository with a stored handoff, and the `hook session-start --harness h` output for
/// `input` (its cwd pointed at the repository).
fn fire(env: &TestEnv, h: &str, input: serde_json::Value) -> Outcome {
    let mut c = env.store();
    c.args(["hook", "session-start", "--harness", h])
        .env("LAST_CLEAR_STATE_DIR", env.marker_dir())
        .write_stdin(input.to_string());
    run(&mut c)
}

fn with_handoff(env: &TestEnv) -> PathBuf {
    with_handoff_at(env).0
}

/// The repository and its slot.
fn with_handoff_at(env: &TestEnv) -> (PathBuf, PathBuf) {
    let repo = env.shop("shop", "main");
    let slot = env.stored(&repo, &canonical(&repo.to_string_lossy(), "main"));
    (repo, slot)
}

/// Gemini CLI's /clear fires SessionStart(clear) but drops its output (0.61.0): that firing
/// prints nothing and leaves the handoff unread; the new session's first prompt (BeforeAgent,
/// `user-prompt-submit --harness gemini`) delivers it in Gemini's shape and consumes it, once.
/// A session that SessionStart(startup) claimed gets nothing from its prompts.
#[test]
fn gemini_delivers_after_its_clear_on_the_first_prompt() {
    let env = TestEnv::new();
    let (repo, slot) = with_handoff_at(&env);
    let prompt = |sid: &str| {
        let mut c = env.store();
        c.args(["hook", "user-prompt-submit", "--harness", "gemini"])
            .env("LAST_CLEAR_STATE_DIR", env.marker_dir())
            .write_stdin(
                serde_json::json!({"session_id": sid, "cwd": repo, "hook_event_name": "BeforeAgent",
                    "prompt": "go on", "transcript_path": "", "timestamp": "t"})
                .to_string(),
            );
        run(&mut c)
    };
    let started = |sid: &str, source: &str| {
        fire(
            &env,
            "gemini",
            serde_json::json!({"session_id": sid, "cwd": repo, "source": source,
                "hook_event_name": "SessionStart", "timestamp": "t"}),
        )
    };
    let unread = || {
        std::fs::read_to_string(&slot)
            .expect("slot")
            .contains("progress: complete")
    };
    // No offer at Gemini CLI's fresh start: its headless mode would put it in front of a
    // first-prompt slash command (measured in tests/e2e).
    let o = started("g-plain", "startup");
    assert_eq!((o.code, o.stdout.as_str()), (0, ""));
    assert!(unread());
    assert_eq!(
        prompt("g-plain").stdout,
        "",
        "a started session's prompt is quiet"
    );

    let o = started("g-cleared", "clear");
    assert_eq!((o.code, o.stdout.as_str()), (0, ""), "{}", o.stderr);
    assert!(
        unread(),
        "a clear whose output Gemini drops consumes nothing"
    );
    let o = prompt("g-cleared");
    let v: serde_json::Value = serde_json::from_str(&o.stdout).expect("json");
    assert_eq!(v["hookSpecificOutput"]["hookEventName"], "BeforeAgent");
    assert!(
        v["hookSpecificOutput"]["additionalContext"]
            .as_str()
            .is_some_and(|t| t.contains("type the mailables")),
        "{v}"
    );
    assert!(!unread(), "delivered, it is consumed");
    assert_eq!(prompt("g-cleared").stdout, "", "once per session");
}

#[test]
fn cursor_fixture_input_gets_additional_context() {
    let env = TestEnv::new();
    let repo = with_handoff(&env);
    // Cursor's documented sessionStart input.
    let o = fire(
        &env,
        "cursor",
        serde_json::json!({
            "conversation_id": "c-1", "generation_id": "g-1", "hook_event_name": "sessionStart",
            "workspace_roots": [repo], "cursor_version": "1.7.0"
        }),
    );
    assert_eq!((o.code, o.stderr.as_str()), (0, ""));
    let v: serde_json::Value = serde_json::from_str(&o.stdout).expect("one JSON object");
    let text = v["additional_context"]
        .as_str()
        .expect("additional_context");
    assert!(text.contains("type the mailables"), "{text}");
    assert_eq!(v.as_object().map(|m| m.len()), Some(1));
    // Nothing to say: an empty object, which Cursor accepts.
    let empty = env.repo("empty", "main", &[("x", "x\n")]);
    let o = fire(
        &env,
        "cursor",
        serde_json::json!({"conversation_id": "c-2", "workspace_roots": [empty]}),
    );
    assert_eq!(o.stdout.trim(), "{}");
}

#[test]
fn cline_and_copilot_fixture_inputs_get_their_shapes() {
    let env = TestEnv::new();
    let (repo, slot) = with_handoff_at(&env);
    let o = fire(
        &env,
        "cline",
        serde_json::json!({
            "clineVersion": "3.40.0", "hookName": "TaskStart", "timestamp": "1", "taskId": "t-1",
            "workspaceRoots": [repo], "taskStart": {"taskMetadata": {"taskId": "t-1"}}
        }),
    );
    let v: serde_json::Value = serde_json::from_str(&o.stdout).expect("json");
    assert_eq!(v["cancel"], false);
    assert!(
        v["contextModification"]
            .as_str()
            .is_some_and(|t| t.contains("type the mailables")),
        "{v}"
    );
    // Cline's CLI drops a start hook's output, so a delivery there never consumes.
    assert!(
        std::fs::read_to_string(&slot)
            .expect("slot")
            .contains("progress: complete")
    );
    // Resuming a task adds nothing, but Cline still gets its object.
    let o = fire(
        &env,
        "cline",
        serde_json::json!({"hookName": "TaskResume", "taskId": "t-2", "workspaceRoots": [repo]}),
    );
    let v: serde_json::Value = serde_json::from_str(&o.stdout).expect("json");
    assert_eq!(v["contextModification"], "");

    let repo2 = env.shop("shop2", "main");
    env.stored(&repo2, &canonical(&repo2.to_string_lossy(), "main"));
    let o = fire(
        &env,
        "copilot",
        serde_json::json!({"sessionId": "s-1", "cwd": repo2, "source": "new", "timestamp": 1}),
    );
    let v: serde_json::Value = serde_json::from_str(&o.stdout).expect("json");
    assert!(
        v["additionalContext"]
            .as_str()
            .is_some_and(|t| t.contains("type the mailables")),
        "{v}"
    );
}

#[test]
fn a_harness_hook_never_fails_on_bad_input() {
    let env = TestEnv::new();
    for h in ["codex", "gemini", "copilot", "cline", "cursor"] {
        for event in [
            "session-start",
            "pre-compact",
            "post-compact",
            "user-prompt-submit",
        ] {
            for input in ["", "not json", "[1,2]", "{\"cwd\": 5}"] {
                let mut c = env.store();
                c.args(["hook", event, "--harness", h])
                    .env("PATH", "/usr/bin:/bin")
                    .write_stdin(input.to_string());
                let o = run(&mut c);
                assert_eq!(o.code, 0, "{h} {event} {input}");
                assert_eq!(o.stderr, "", "{h} {event} {input}");
                if event != "session-start" {
                    assert_eq!(o.stdout, "", "{h} {event} {input}");
                }
            }
        }
    }
}

/// `status` has rows for Claude Code (its settings hooks in both scopes, and the
/// plugin), says when the program an installed hook runs is gone, and `--check` fails then,
/// one line per problem; the JSON twin lists the same problems.
#[test]
fn status_answers_is_it_working_and_check_fails_on_a_hook_that_would_not_run() {
    let env = TestEnv::new();
    let repo = env.repo("r", "main", &[("a.txt", "a\n")]);
    let status = |args: &[&str]| {
        let mut all = vec!["status"];
        all.extend_from_slice(args);
        run(&mut hs(&env, &repo, &all))
    };
    let o = status(&["--check"]);
    assert_eq!(
        (o.code, o.stdout.as_str()),
        (0, "OK\n"),
        "nothing installed, nothing wrong, and --check says only that"
    );
    let o = status(&[]);
    assert!(
        o.stdout.contains("hooks    none installed — ") && !o.stdout.contains("claude-code"),
        "only what is installed, by default: {}",
        o.stdout
    );
    let o = status(&["--all"]);
    let all = squeezed(&o.stdout);
    assert!(
        all.contains("claude-code user installed=no ")
            && all.contains("not installed: handoff-store install claude --user")
            && all.contains("claude-code plugin installed=no "),
        "{}",
        o.stdout
    );

    // Installed by a copy of the binary that is then removed (a moved install).
    let copy = env.path("bin/handoff-store");
    std::fs::create_dir_all(copy.parent().expect("bin")).expect("bin");
    std::fs::copy(assert_cmd::cargo::cargo_bin("handoff-store"), &copy).expect("copy");
    // Another test thread's fork may hold the copy's write descriptor for the moment before
    // its exec (ETXTBSY): that passes, so it is tried again.
    let installed = (0..50)
        .find_map(|_| {
            match std::process::Command::new(&copy)
                .args(["install", "claude"])
                .current_dir(&repo)
                .env("HOME", env.home())
                .env("HANDOFF_STORE_DIR", env.store_dir())
                .output()
            {
                Err(e) if e.raw_os_error() == Some(26) => {
                    std::thread::sleep(std::time::Duration::from_millis(20));
                    None
                }
                other => Some(other),
            }
        })
        .expect("the copy was busy throughout")
        .expect("the copy runs");
    assert!(installed.status.success());
    let settings = std::fs::read_to_string(env.home().join(".claude/settings.json")).expect("s");
    assert!(
        settings.contains(&format!("{} hook session-start", copy.display())),
        "{settings}"
    );
    let o = status(&[]);
    assert_eq!(o.code, 0);
    assert!(
        squeezed(&o.stdout).starts_with("claude-code user installed=yes runs=yes ")
            && !o.stdout.contains("claude-code plugin"),
        "{}",
        o.stdout
    );
    // With --all, the installed row comes first, and the plugin is not recommended beside it.
    let o = status(&["--all"]);
    let all = squeezed(&o.stdout);
    assert!(
        all.starts_with("claude-code user installed=yes runs=yes ")
            && all.contains("claude-code plugin installed=no runs=no ")
            && all.contains("not needed: installed in the user scope")
            && !all.contains("claude plugin install"),
        "{}",
        o.stdout
    );
    // The columns line up.
    let columns: std::collections::BTreeSet<usize> = o
        .stdout
        .lines()
        .filter(|l| l.contains(" runs="))
        .flat_map(|l| [l.find("installed="), l.find(" runs="), l.find(" /")])
        .map(|at| at.unwrap_or(0))
        .collect();
    assert_eq!(columns.len(), 3, "{}", o.stdout);
    std::fs::remove_file(&copy).expect("the binary moves away");
    let o = status(&["--check"]);
    assert_eq!(o.code, 1, "{}", o.stdout);
    assert!(
        o.stdout.lines().all(|l| l.starts_with("problem  ")),
        "--check prints only its problems: {}",
        o.stdout
    );
    assert!(
        o.stdout.contains(&format!(
            "problem  claude-code (user): the program it runs, {}, does not exist",
            copy.display()
        )) && o
            .stdout
            .contains("run handoff-store install claude --user again"),
        "{}",
        o.stdout
    );
    let o = status(&["--check", "--format", "json"]);
    assert_eq!(o.code, 1);
    let v: serde_json::Value = serde_json::from_str(&o.stdout).expect("json");
    assert_eq!(v["problems"].as_array().map(Vec::len), Some(1), "{v}");
    let row = v["harnesses"]
        .as_array()
        .expect("rows")
        .iter()
        .find(|r| r["harness"] == "claude-code" && r["scope"] == "user")
        .expect("claude row")
        .clone();
    assert_eq!(
        (row["installed"].clone(), row["runs"].clone()),
        (true.into(), "no".into())
    );

    // Installing again with this binary repairs it: one hook per event, naming this one.
    assert_eq!(run(&mut hs(&env, &repo, &["install", "claude"])).code, 0);
    let settings = std::fs::read_to_string(env.home().join(".claude/settings.json")).expect("s");
    assert_eq!(
        settings.matches("hook session-start").count(),
        1,
        "{settings}"
    );
    assert_eq!(status(&["--check"]).code, 0);
}

/// `status --check` tells the truth about hooks that would not run: a settings file
/// with two top-level `"hooks"` keys (and `install` refuses to edit such a file, naming the
/// key), Claude Code's `"disableAllHooks": true`, a Cline `TaskStart` without its execute bit,
/// an invalid config file, and a store that cannot be used.
#[test]
fn status_check_tells_the_truth_about_hooks_that_would_not_run() {
    let env = TestEnv::new();
    let repo = env.repo("r", "main", &[("a.txt", "a\n")]);
    let check = || run(&mut hs(&env, &repo, &["status", "--check"]));
    let settings = env.home().join(".claude/settings.json");
    std::fs::create_dir_all(settings.parent().expect("dir")).expect("dir");

    // Two "hooks" keys: install refuses and leaves the file as it was.
    let doubled = "{\n  \"hooks\": {},\n  \"model\": \"x\",\n  \"hooks\": {}\n}\n";
    std::fs::write(&settings, doubled).expect("settings");
    let o = run(&mut hs(&env, &repo, &["install", "claude"]));
    assert_eq!(o.code, 2, "{}{}", o.stdout, o.stderr);
    assert!(o.stderr.contains("\"hooks\" twice"), "{}", o.stderr);
    assert_eq!(std::fs::read_to_string(&settings).expect("s"), doubled);
    // Ours in the first of two (edited by an older release, or by hand): it would not run.
    std::fs::remove_file(&settings).expect("rm");
    assert_eq!(run(&mut hs(&env, &repo, &["install", "claude"])).code, 0);
    let ours = std::fs::read_to_string(&settings).expect("s");
    let with_second = ours.replacen('{', "{\n  \"hooks\": {},", 1);
    let with_second = format!(
        "{}, \"hooks\": {{}}\n}}\n",
        with_second.trim_end().trim_end_matches('}')
    );
    std::fs::write(&settings, &with_second).expect("settings");
    let o = check();
    assert_eq!(o.code, 1, "{}", o.stdout);
    assert!(
        o.stdout.contains("holds the key \"hooks\" twice"),
        "{}",
        o.stdout
    );

    // disableAllHooks.
    let disabled = ours.replacen('{', "{\n  \"disableAllHooks\": true,", 1);
    std::fs::write(&settings, &disabled).expect("settings");
    let o = check();
    assert_eq!(o.code, 1, "{}", o.stdout);
    assert!(
        o.stdout
            .contains("problem  claude-code (user): \"disableAllHooks\": true in"),
        "{}",
        o.stdout
    );
    std::fs::write(&settings, &ours).expect("settings");
    assert_eq!(check().code, 0, "{}", check().stdout);

    // Cline's TaskStart without its execute bit.
    assert_eq!(run(&mut hs(&env, &repo, &["install", "cline"])).code, 0);
    let task_start = repo.join(".clinerules/hooks/TaskStart");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&task_start, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    let o = check();
    assert_eq!(o.code, 1, "{}", o.stdout);
    assert!(o.stdout.contains("is not executable"), "{}", o.stdout);
    chmod_x(&task_start);
    assert_eq!(check().code, 0);

    // An invalid config file (ours in it, and a stray brace after it).
    std::fs::write(&settings, format!("{}\n{{\n", ours.trim_end())).expect("settings");
    let o = check();
    assert_eq!(o.code, 1, "{}", o.stdout);
    assert!(o.stdout.contains("is not valid JSON"), "{}", o.stdout);
    std::fs::write(&settings, &ours).expect("settings");

    // A store that cannot be used.
    let not_a_folder = env.write("store-file", "x");
    let o = run(hs(&env, &repo, &["status", "--check"]).env("HANDOFF_STORE_DIR", &not_a_folder));
    assert_eq!(o.code, 1, "{}", o.stdout);
    assert!(o.stdout.contains("problem  store: "), "{}", o.stdout);
}

/// Every folder under `dir` whose mode lets group or others write.
fn writable_by_others(dir: &Path) -> Vec<(PathBuf, u32)> {
    use std::os::unix::fs::PermissionsExt;
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let Ok(meta) = std::fs::symlink_metadata(e.path()) else {
            continue;
        };
        if meta.is_dir() {
            let mode = meta.permissions().mode() & 0o777;
            if mode & 0o022 != 0 {
                out.push((e.path(), mode));
            }
            out.extend(writable_by_others(&e.path()));
        }
    }
    out
}

/// With a umask of 000, no folder we make is group- or world-writable — the
/// agents' config folders (user and project), the skill's, git's hooks folder, the store.
/// Inside `.git` the objects and refs follow the umask as git's own do (git's rule, not ours).
#[test]
fn folders_we_make_are_never_world_writable_whatever_the_umask() {
    let env = TestEnv::new();
    let repo = env.shop("r", "main");
    let bin = assert_cmd::cargo::cargo_bin("handoff-store");
    let with_umask = |args: &[&str], stdin: &str| {
        let mut c = std::process::Command::new("sh");
        c.arg("-c")
            .arg("umask 000; exec \"$0\" \"$@\"")
            .arg(&bin)
            .args(args)
            .current_dir(&repo)
            .env("HOME", env.home())
            .env("HANDOFF_STORE_DIR", env.store_dir())
            .env("CODEX_HOME", env.home().join(".codex"))
            .env("PATH", "/usr/bin:/bin");
        let o = assert_cmd::Command::from_std(c)
            .write_stdin(stdin)
            .output()
            .expect("runs");
        assert!(
            o.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    };
    for args in [
        &["install", "claude"][..],
        &["install", "claude", "--project"],
        &["install", "gemini"],
        &["install", "cursor"],
        &["install", "cline"],
        &["install", "copilot"],
        &["install", "git-hook"],
    ] {
        with_umask(args, "");
    }
    let doc = canonical(&repo.to_string_lossy(), "main");
    with_umask(&["write"], &doc);
    with_umask(&["write"], &doc.replace("status: ", "status: again "));
    let mut loose = writable_by_others(&env.home());
    loose.extend(
        writable_by_others(&repo)
            .into_iter()
            .filter(|(p, _)| !p.starts_with(repo.join(".git")) || p.ends_with("hooks")),
    );
    loose.extend(writable_by_others(&env.store_dir()));
    assert!(loose.is_empty(), "{loose:?}");
}

/// `uninstall claude --project` in a repository that had no `.claude/` leaves none: the skill's
/// folders and the one the install created go, empty; one holding anything else stays.
#[test]
fn uninstall_project_removes_the_folders_its_install_created() {
    let env = TestEnv::new();
    let repo = env.repo("r", "main", &[("a.txt", "a\n")]);
    let install = run(&mut hs(&env, &repo, &["install", "claude", "--project"]));
    assert_eq!(install.code, 0, "{}{}", install.stdout, install.stderr);
    assert!(repo.join(".claude/skills/handoff/SKILL.md").is_file());
    let o = run(&mut hs(&env, &repo, &["uninstall", "claude", "--project"]));
    assert_eq!(o.code, 0, "{}{}", o.stdout, o.stderr);
    assert!(
        !repo.join(".claude").exists(),
        "an empty .claude/ left behind"
    );

    assert_eq!(
        run(&mut hs(&env, &repo, &["install", "claude", "--project"])).code,
        0
    );
    std::fs::write(repo.join(".claude/notes.md"), "mine\n").expect("notes");
    assert_eq!(
        run(&mut hs(&env, &repo, &["uninstall", "claude", "--project"])).code,
        0
    );
    assert_eq!(
        std::fs::read_to_string(repo.join(".claude/notes.md")).expect("kept"),
        "mine\n"
    );
    assert!(!repo.join(".claude/skills").exists() && !repo.join(".claude/settings.json").exists());
}

/// `install` in a repository that has no handoff yet says, in one clause, that nothing happens
/// there until its first: the promise of a delivery after /clear is not made for nothing.
#[test]
fn install_in_a_repository_not_in_use_says_nothing_happens_there_yet() {
    let env = crate::util::TestEnv::new();
    let repo = env.shop("shop", "main");
    let o = crate::util::run(
        env.store()
            .args(["install", "claude", "--user"])
            .current_dir(&repo),
    );
    assert_eq!(o.code, 0, "{}{}", o.stdout, o.stderr);
    assert!(
        o.stdout
            .contains("nothing happens here until its first `handoff-store write`"),
        "{}",
        o.stdout
    );
    env.stored(
        &repo,
        &crate::util::canonical(&repo.to_string_lossy(), "main"),
    );
    let o = crate::util::run(
        env.store()
            .args(["install", "claude", "--user"])
            .current_dir(&repo),
    );
    assert!(!o.stdout.contains("nothing happens here"), "{}", o.stdout);
}

/// Codex's files stay the user's: uninstall takes away the `~/.codex/` its install created; an
/// edited CRLF `config.toml` keeps CRLF on every line; a read-only one is not rewritten; a FIFO
/// where it should be never hangs `status` or `install`.
#[test]
fn codex_config_keeps_its_line_endings_its_mode_and_its_folder() {
    use std::os::unix::fs::PermissionsExt;
    let env = TestEnv::new();
    let repo = env.repo("r", "main", &[("a.txt", "a\n")]);
    let codex = env.home().join(".codex");
    assert!(!codex.exists());
    assert_eq!(run(&mut hs(&env, &repo, &["install", "codex"])).code, 0);
    assert_eq!(run(&mut hs(&env, &repo, &["uninstall", "codex"])).code, 0);
    assert!(!codex.exists(), "an empty ~/.codex/ it created was left");

    let config = codex.join("config.toml");
    std::fs::create_dir_all(&codex).expect("dir");
    std::fs::write(&config, "# mine\r\nmodel = \"o3\"\r\n").expect("config");
    assert_eq!(run(&mut hs(&env, &repo, &["install", "codex"])).code, 0);
    let edited =
        std::fs::read_to_string(&config).expect("config") + "[tui]\r\ntheme = \"dark\"\r\n";
    std::fs::write(&config, &edited).expect("edit");
    assert_eq!(run(&mut hs(&env, &repo, &["uninstall", "codex"])).code, 0);
    let left = std::fs::read_to_string(&config).expect("config");
    assert!(!left.contains("compact_prompt"), "{left}");
    assert_eq!(
        left.matches('\n').count(),
        left.matches("\r\n").count(),
        "a line lost its CR: {left:?}"
    );

    std::fs::write(&config, "# mine\n").expect("config");
    std::fs::set_permissions(&config, std::fs::Permissions::from_mode(0o444)).expect("chmod");
    let o = run(&mut hs(&env, &repo, &["install", "codex"]));
    assert_eq!(
        std::fs::read_to_string(&config).expect("config"),
        "# mine\n",
        "{}",
        o.stdout
    );
    assert!(o.stdout.contains("read-only"), "{}{}", o.stdout, o.stderr);
    assert_eq!(run(&mut hs(&env, &repo, &["uninstall", "codex"])).code, 0);

    std::fs::remove_file(&config).expect("rm");
    let made = std::process::Command::new("mkfifo")
        .arg(&config)
        .status()
        .expect("mkfifo");
    assert!(made.success());
    let o = run(hs(&env, &repo, &["status", "--all"]).timeout(std::time::Duration::from_secs(60)));
    assert_eq!(o.code, 0, "{}{}", o.stdout, o.stderr);
    let o = run(hs(&env, &repo, &["install", "codex"]).timeout(std::time::Duration::from_secs(60)));
    assert!(
        o.stdout.contains("not a regular file"),
        "{}{}",
        o.stdout,
        o.stderr
    );
}

/// The OpenCode plugin's transcripts (tool output verbatim) stay private and apart: a folder
/// that was there becomes 0700, each file is a new 0600 one, a link planted at a transcript's
/// name is replaced and never followed, session ids `a/b` and `a_b` get files of their own, and
/// a relative `XDG_STATE_HOME` puts nothing inside the repository. Runs the installed plugin
/// under Node with a stand-in for OpenCode's client; without Node it says it skipped.
#[test]
fn the_opencode_plugin_keeps_its_transcripts_private_and_apart() {
    use std::os::unix::fs::PermissionsExt;
    if std::process::Command::new("node")
        .arg("--version")
        .output()
        .map_or(true, |o| !o.status.success())
    {
        skipped("needs Node.js to run the OpenCode plugin");
        return;
    }
    let env = TestEnv::new();
    let repo = env.repo("r", "main", &[("a.txt", "a\n")]);
    assert_eq!(
        run(&mut hs(&env, &repo, &["install", "opencode", "--project"])).code,
        0
    );
    let plugin = repo.join(".opencode/plugins/handoff-store.js");
    let script = env.write(
        "compact.mjs",
        format!(
            "import {{ HandoffStore }} from {};\n\
             const client = {{ session: {{ messages: async () => ({{ data: [{{ info: {{ role: 'user' }}, parts: [{{ type: 'text', text: 'secret tool output' }}] }}] }}) }} }};\n\
             const p = await HandoffStore({{ client, directory: {} }});\n\
             await p['experimental.session.compacting']({{ sessionID: process.argv[2] }}, {{ context: [] }});\n",
            serde_json::json!(plugin.to_string_lossy()),
            serde_json::json!(repo.to_string_lossy())
        ),
    );
    let state = env.path("state");
    let folder = state.join("handoff-store/opencode");
    std::fs::create_dir_all(&folder).expect("folder");
    std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o755)).expect("0755");
    let compact = |sid: &str, xdg: &std::ffi::OsStr| {
        let mut c = std::process::Command::new("node");
        c.arg(&script)
            .arg(sid)
            .current_dir(&repo)
            .env("HOME", env.home())
            .env("HANDOFF_STORE_DIR", env.store_dir())
            .env("XDG_STATE_HOME", xdg);
        let o = c.output().expect("node");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    };
    compact("a/b", state.as_os_str());
    compact("a_b", state.as_os_str());
    let files: Vec<std::path::PathBuf> = std::fs::read_dir(&folder)
        .expect("folder")
        .flatten()
        .map(|e| e.path())
        .collect();
    assert_eq!(files.len(), 2, "a/b and a_b share a file: {files:?}");
    let mode = |p: &std::path::Path| {
        std::fs::symlink_metadata(p)
            .expect("meta")
            .permissions()
            .mode()
            & 0o777
    };
    assert_eq!(mode(&folder), 0o700, "the folder stays readable by others");
    for f in &files {
        assert_eq!(mode(f), 0o600, "{}", f.display());
    }
    // A link planted at a transcript's name is replaced, never written through.
    let notes = env.write("notes.txt", "mine\n");
    let first = files
        .iter()
        .find(|f| std::fs::read_to_string(f).is_ok_and(|t| t.contains("secret tool output")))
        .expect("a transcript")
        .clone();
    for f in &files {
        std::fs::remove_file(f).expect("rm");
        std::os::unix::fs::symlink(&notes, f).expect("link");
    }
    compact("a/b", state.as_os_str());
    assert_eq!(std::fs::read_to_string(&notes).expect("notes"), "mine\n");
    assert!(
        files
            .iter()
            .any(|f| std::fs::symlink_metadata(f).is_ok_and(|m| m.is_file())),
        "the link was followed: {first:?}"
    );
    // A relative XDG_STATE_HOME: nothing inside the repository.
    compact("rel", std::ffi::OsStr::new("rel-state"));
    assert!(
        !repo.join("rel-state").exists(),
        "transcripts went into the repository"
    );
    assert!(
        env.home()
            .join(".local/state/handoff-store/opencode")
            .is_dir()
    );
}
