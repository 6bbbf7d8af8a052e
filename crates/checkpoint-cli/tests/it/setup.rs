//! `checkpoint setup <client>`: the files each client reads, written idempotently, keeping the
//! user's settings and comments, `--remove`, `--dry-run`, malformed files left alone; and the
//! hooks it writes, run as the client runs them.

use std::{path::Path, process::Command};

use serde_json::{Value, json};

use crate::support::{TestEnv, bin};

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap()
}

fn json_of(path: &Path) -> Value {
    serde_json::from_str(&read(path)).unwrap()
}

/// The user's own Codex configuration: comments, a model, an MCP server of theirs.
const USER_TOML: &str = "# my settings\nmodel = \"gpt-5.5\" # the model I use\n\n[mcp_servers.docs]\n# docs server\ncommand = \"docs-mcp\"\nargs = [\"--stdio\"]\n";

/// The user's own Codex hooks: a hook on `Stop` and one on `UserPromptSubmit`.
fn user_hooks() -> Value {
    json!({"hooks": {
        "Stop": [{"hooks": [{"type": "command", "command": "notify-send done", "timeout": 3}]}],
        "UserPromptSubmit": [{"matcher": "", "hooks": [{"type": "command", "command": "log-prompt"}]}],
    }})
}

fn codex_dir(env: &TestEnv) -> std::path::PathBuf {
    env.project().join(".codex")
}

fn with_user_codex_files(env: &TestEnv) {
    let dir = codex_dir(env);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("config.toml"), USER_TOML).unwrap();
    std::fs::write(dir.join("hooks.json"), user_hooks().to_string()).unwrap();
}

/// The hook commands in a hooks file, by event.
fn commands(hooks: &Value) -> Vec<(String, String)> {
    let mut found = Vec::new();
    for (event, groups) in hooks["hooks"].as_object().unwrap() {
        for group in groups.as_array().unwrap() {
            for handler in group["hooks"].as_array().unwrap() {
                found.push((
                    event.clone(),
                    handler["command"].as_str().unwrap().to_owned(),
                ));
            }
        }
    }
    found
}

fn ours(hooks: &Value) -> Vec<(String, String)> {
    commands(hooks)
        .into_iter()
        .filter(|(_, command)| command.contains(" hook --client "))
        .collect()
}

#[test]
fn setup_codex_writes_its_hooks_and_mcp_server_keeping_the_users() {
    let env = TestEnv::new();
    with_user_codex_files(&env);
    let out = env.ok(&["setup", "codex"]);
    assert!(out.contains("trusted project"), "{out}");
    assert!(out.contains("--dangerously-bypass-hook-trust"), "{out}");
    let dir = codex_dir(&env);
    let toml = read(&dir.join("config.toml"));
    assert!(
        toml.starts_with(USER_TOML),
        "the user's file, comments and all, is kept:\n{toml}"
    );
    let binary = std::fs::canonicalize(bin()).unwrap();
    assert!(
        toml.ends_with(&format!(
            "\n[mcp_servers.checkpoint]\ncommand = \"{}\"\nargs = [\"mcp\"]\n",
            binary.display()
        )),
        "{toml}"
    );
    let hooks = json_of(&dir.join("hooks.json"));
    let events: Vec<String> = ours(&hooks).into_iter().map(|(event, _)| event).collect();
    assert_eq!(
        events,
        [
            "Stop",
            "SessionStart",
            "PreCompact",
            "PreToolUse",
            "PostToolUse"
        ]
    );
    for (event, command) in ours(&hooks) {
        assert_eq!(
            command,
            format!("{} hook --client codex {event}", binary.display())
        );
    }
    assert_eq!(
        hooks["hooks"]["PostToolUse"][0]["matcher"],
        "^(Bash|apply_patch)$"
    );
    // The guard against a repeat of a recorded effect (measured on the real client end to end).
    assert_eq!(
        hooks["hooks"]["PreToolUse"][0]["matcher"],
        "^(Bash|apply_patch|mcp__.*)$"
    );
    assert_eq!(
        hooks["hooks"]["UserPromptSubmit"],
        user_hooks()["hooks"]["UserPromptSubmit"]
    );
    assert_eq!(hooks["hooks"]["Stop"][0], user_hooks()["hooks"]["Stop"][0]);
}

#[test]
fn setup_is_idempotent_and_remove_takes_out_only_its_own() {
    for client in ["codex", "claude"] {
        let env = TestEnv::new();
        with_user_codex_files(&env);
        let claude_dir = env.project().join(".claude");
        std::fs::create_dir_all(&claude_dir).unwrap();
        let user_settings =
            json!({"permissions": {"allow": ["Bash(ls)"]}, "hooks": user_hooks()["hooks"]});
        std::fs::write(claude_dir.join("settings.json"), user_settings.to_string()).unwrap();
        let mcp = json!({"mcpServers": {"docs": {"command": "docs-mcp"}}});
        std::fs::write(env.project().join(".mcp.json"), mcp.to_string()).unwrap();
        let files = [
            codex_dir(&env).join("config.toml"),
            codex_dir(&env).join("hooks.json"),
            claude_dir.join("settings.json"),
            env.project().join(".mcp.json"),
        ];
        let snapshot = || files.iter().map(|path| read(path)).collect::<Vec<_>>();
        let original = snapshot();
        env.ok(&["setup", client]);
        let first = snapshot();
        assert_ne!(first, original, "{client}");
        let again = env.ok(&["setup", client]);
        assert!(again.contains("Already set up"), "{again}");
        assert_eq!(snapshot(), first, "{client}: a second run changes nothing");
        let removed = env.ok(&["setup", client, "--remove"]);
        assert!(!removed.contains("Before the hooks run"), "{removed}");
        let after = snapshot();
        for (path, (after, original)) in files.iter().zip(after.iter().zip(&original)) {
            assert_eq!(
                after,
                original,
                "{client}: {} is as the user wrote it, byte for byte",
                path.display()
            );
        }
        let nothing = env.ok(&["setup", client, "--remove"]);
        assert!(nothing.contains("Nothing to remove"), "{nothing}");
        assert_eq!(snapshot(), after);
    }
}

#[test]
fn dry_run_prints_the_change_and_writes_nothing() {
    let env = TestEnv::new();
    with_user_codex_files(&env);
    let before = read(&codex_dir(&env).join("config.toml"));
    let out = env.ok(&["setup", "codex", "--dry-run"]);
    assert!(out.contains("+[mcp_servers.checkpoint]"), "{out}");
    assert!(out.contains("+args = [\"mcp\"]"), "{out}");
    assert!(out.contains("hook --client codex SessionStart"), "{out}");
    assert!(out.contains("dry run: nothing was written"), "{out}");
    assert_eq!(read(&codex_dir(&env).join("config.toml")), before);
    assert_eq!(json_of(&codex_dir(&env).join("hooks.json")), user_hooks());
    let fresh = TestEnv::new();
    fresh.ok(&["setup", "claude", "--dry-run"]);
    fresh.ok(&["setup", "codex", "--remove", "--dry-run"]);
    assert!(!fresh.project().join(".claude").exists());
    assert!(!fresh.project().join(".mcp.json").exists());
    assert!(!codex_dir(&fresh).exists());
}

#[test]
fn a_malformed_file_is_reported_with_its_line_and_nothing_is_written() {
    let cases: [(&str, &str, &str, &str); 5] = [
        (
            "codex",
            ".codex/config.toml",
            "model = \"x\"\n\n[mcp_servers\ncommand = 1\n",
            "config.toml:3",
        ),
        (
            "codex",
            ".codex/hooks.json",
            "{\n  \"hooks\": {\n    \"Stop\": [,]\n  }\n}\n",
            "hooks.json:3",
        ),
        (
            "codex",
            ".codex/hooks.json",
            "{\"hooks\": {\"Stop\": {}}}",
            "`hooks.Stop` is not an array",
        ),
        (
            "claude",
            ".claude/settings.json",
            "{\n  \"model\": \"opus\",\n  oops\n}\n",
            "settings.json:3",
        ),
        ("claude", ".mcp.json", "[]", ".mcp.json:1"),
    ];
    for (client, file, text, expect) in cases {
        let env = TestEnv::new();
        let path = env.project().join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        for args in [vec!["setup", client], vec!["setup", client, "--remove"]] {
            let output = env.run(&args);
            let stderr = String::from_utf8_lossy(&output.stderr);
            assert_eq!(output.status.code(), Some(1), "{file}: {stderr}");
            assert!(stderr.contains(expect), "{file}: {stderr}");
            assert!(stderr.contains("nothing was changed"), "{stderr}");
            assert_eq!(read(&path), text, "{file} is left untouched");
            let written: Vec<_> = walk(&env.project());
            assert_eq!(
                written,
                std::slice::from_ref(&path),
                "no other file was written"
            );
        }
    }
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            if path.file_name().unwrap() != ".git" {
                files.extend(walk(&path));
            }
        } else {
            files.push(path);
        }
    }
    files
}

#[test]
fn a_server_named_checkpoint_of_the_users_is_left_alone() {
    let env = TestEnv::new();
    let dir = codex_dir(&env);
    std::fs::create_dir_all(&dir).unwrap();
    let text = "[mcp_servers.checkpoint]\ncommand = \"my-own-server\"\n";
    std::fs::write(dir.join("config.toml"), text).unwrap();
    let output = env.run(&["setup", "codex"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&output.stderr).contains("server of your own"));
    assert_eq!(read(&dir.join("config.toml")), text);
    assert!(!dir.join("hooks.json").exists());
}

#[test]
fn user_scope_writes_codex_home_or_the_home_directory() {
    let env = TestEnv::new();
    let codex_home = env.dir.path().join("codex-home");
    let output = env
        .cmd()
        .args(["setup", "codex", "--scope", "user"])
        .env("CODEX_HOME", &codex_home)
        .output()
        .unwrap();
    assert!(output.status.success());
    assert!(codex_home.join("hooks.json").is_file());
    assert!(read(&codex_home.join("config.toml")).contains("[mcp_servers.checkpoint]"));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(!stdout.contains("trusted project"), "{stdout}");
    assert!(!codex_dir(&env).exists());
    env.ok(&["setup", "codex", "--scope", "user"]);
    let home = env.dir.path().join("home");
    assert!(home.join(".codex/hooks.json").is_file());
    env.ok(&["setup", "claude", "--scope", "user"]);
    assert!(home.join(".claude/settings.json").is_file());
    assert!(
        json_of(&home.join(".claude.json"))["mcpServers"]["checkpoint"]["args"] == json!(["mcp"])
    );
    let config_dir = env.dir.path().join("claude-config");
    let output = env
        .cmd()
        .args(["setup", "claude", "--scope", "user"])
        .env("CLAUDE_CONFIG_DIR", &config_dir)
        .output()
        .unwrap();
    assert!(output.status.success());
    assert!(config_dir.join("settings.json").is_file());
    assert!(config_dir.join(".claude.json").is_file());
}

#[test]
fn a_trusted_project_is_not_told_to_trust_itself() {
    let env = TestEnv::new();
    let home = env.dir.path().join("home").join(".codex");
    std::fs::create_dir_all(&home).unwrap();
    let project = env.project();
    std::fs::write(
        home.join("config.toml"),
        format!(
            "[projects.{}]\ntrust_level = \"trusted\"\n",
            Value::String(project.display().to_string())
        ),
    )
    .unwrap();
    let out = env.ok(&["setup", "codex"]);
    assert!(!out.contains("trusted project"), "{out}");
    assert!(out.contains("reviewed"), "{out}");
}

#[test]
fn setup_claude_registers_every_event_the_plugin_does() {
    let env = TestEnv::new();
    env.ok(&["setup", "claude"]);
    let settings = json_of(&env.project().join(".claude/settings.json"));
    let plugin: Value = serde_json::from_str(include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../plugin/hooks/hooks.json"
    )))
    .unwrap();
    let events = |hooks: &Value| {
        let mut events: Vec<(String, Value)> = hooks["hooks"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(event, groups)| (event.clone(), groups[0]["matcher"].clone()))
            .collect();
        events.sort_by(|a, b| a.0.cmp(&b.0));
        events
    };
    assert_eq!(events(&settings), events(&plugin));
    let mcp = json_of(&env.project().join(".mcp.json"));
    assert_eq!(mcp["mcpServers"]["checkpoint"]["args"], json!(["mcp"]));
}

/// The commands `setup codex` writes work as Codex runs them (through a shell, the payload on
/// stdin): an `apply_patch` completes a phase.
#[test]
fn the_hooks_setup_writes_run_through_a_shell() {
    let env = TestEnv::new();
    let plan = json!({"phases": [{"id": "spec", "outputs": ["docs/spec.md"]}]});
    std::fs::write(env.project().join("plan.json"), plan.to_string()).unwrap();
    env.ok(&["init", "w", "--plan", "plan.json"]);
    env.ok(&["start", "spec"]);
    env.ok(&["setup", "codex"]);
    std::fs::create_dir_all(env.project().join("docs")).unwrap();
    std::fs::write(env.project().join("docs/spec.md"), "# spec").unwrap();
    let hooks = json_of(&codex_dir(&env).join("hooks.json"));
    let command = hooks["hooks"]["PostToolUse"][0]["hooks"][0]["command"]
        .as_str()
        .unwrap()
        .to_owned();
    let payload = json!({"session_id": "s", "cwd": env.project(), "hook_event_name": "PostToolUse",
        "tool_name": "apply_patch", "tool_input": {"command": "*** Begin Patch\n*** Add File: docs/spec.md\n+# spec\n*** End Patch"},
        "tool_response": "Exit code: 0\nOutput:\nSuccess.\n"});
    let mut child = Command::new("sh")
        .args(["-c", &command])
        .env("HOME", env.dir.path().join("home"))
        .env("CHECKPOINT_TEST_NOW", crate::support::NOW)
        .current_dir(env.project())
        .stdin(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write as _;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(payload.to_string().as_bytes())
        .unwrap();
    assert!(child.wait().unwrap().success());
    assert_eq!(env.state("w")["phases"][0]["status"], "complete");
}

/// Each client's hooks file with a hook of the user's added to the group of ours under the
/// first event: a re-run and `--remove` keep it, in its group, and take only ours.
#[test]
fn a_users_hook_in_a_group_of_ours_is_kept_by_every_client() {
    for (client, file) in [
        ("claude", ".claude/settings.json"),
        ("codex", ".codex/hooks.json"),
        ("gemini", ".gemini/settings.json"),
    ] {
        let env = TestEnv::new();
        env.ok(&["setup", client]);
        let path = env.project().join(file);
        let mut settings = json_of(&path);
        let mine = json!({"type": "command", "command": "notify-send started", "timeout": 3});
        settings["hooks"]["SessionStart"][0]["hooks"]
            .as_array_mut()
            .unwrap()
            .push(mine.clone());
        std::fs::write(&path, serde_json::to_string_pretty(&settings).unwrap()).unwrap();
        for args in [vec!["setup", client], vec!["setup", client, "--remove"]] {
            env.ok(&args);
            let after = json_of(&path);
            let kept: Vec<&Value> = after["hooks"]["SessionStart"]
                .as_array()
                .unwrap()
                .iter()
                .flat_map(|group| group["hooks"].as_array().unwrap())
                .filter(|hook| **hook == mine)
                .collect();
            assert_eq!(kept.len(), 1, "{client} {args:?}: {after:#}");
        }
        let after = read(&path);
        assert!(!after.contains(" hook --client "), "{client}: {after}");
    }
}

/// Large numbers and duplicate keys survive a setup and its removal byte for byte (a parse and
/// a print would round the one and drop the other); the files `setup` created, holding nothing
/// of the user's after `--remove`, are removed.
#[test]
fn setup_claude_edits_in_place_and_remove_takes_out_the_files_it_created() {
    let env = TestEnv::new();
    let settings = env.project().join(".claude/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    let user = "{\n  \"cleanupPeriodDays\": 123456789012345678901234567890,\n  \"model\": \"a\",\n  \"model\": \"b\"\n}\n";
    std::fs::write(&settings, user).unwrap();
    env.ok(&["setup", "claude"]);
    let installed = read(&settings);
    assert!(
        installed.contains("123456789012345678901234567890"),
        "{installed}"
    );
    assert!(
        installed.contains("\"model\": \"a\",\n  \"model\": \"b\""),
        "{installed}"
    );
    assert!(env.project().join(".mcp.json").exists());
    env.ok(&["setup", "claude", "--remove"]);
    assert_eq!(read(&settings), user);
    assert!(
        !env.project().join(".mcp.json").exists(),
        "the `.mcp.json` setup created and that holds nothing else is removed"
    );
    std::fs::remove_file(&settings).unwrap();
    env.ok(&["setup", "claude"]);
    env.ok(&["setup", "claude", "--remove"]);
    assert!(
        !settings.exists(),
        "the settings file setup created is removed"
    );
}

/// A settings file that is a symbolic link (to the user's dotfiles) is written through: the
/// link stays, its target gets the hooks. A link to nowhere and a read-only file are refused,
/// naming the file, and nothing at all is written.
#[cfg(unix)]
#[test]
fn setup_writes_through_a_link_and_refuses_a_read_only_file() {
    use std::os::unix::fs::PermissionsExt;
    for client in ["claude", "gemini", "codex"] {
        let env = TestEnv::new();
        let dir = env.project().join(format!(".{client}"));
        std::fs::create_dir_all(&dir).unwrap();
        let name = if client == "codex" {
            "hooks.json"
        } else {
            "settings.json"
        };
        let dotfiles = env.project().parent().unwrap().join("dotfiles");
        std::fs::create_dir_all(&dotfiles).unwrap();
        let real = dotfiles.join(name);
        std::fs::write(&real, "{\"theme\": \"dark\"}\n").unwrap();
        let link = dir.join(name);
        std::os::unix::fs::symlink(&real, &link).unwrap();
        env.ok(&["setup", client]);
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        let written = read(&real);
        assert!(written.contains(" hook --client "), "{client}: {written}");
        assert!(
            written.contains("\"theme\": \"dark\""),
            "{client}: {written}"
        );

        // Read-only: refused, and nothing is written (not even the other file).
        env.ok(&["setup", client, "--remove"]);
        let snapshot = walk(&env.project());
        let before = read(&real);
        std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o444)).unwrap();
        let output = env.run(&["setup", client]);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_ne!(output.status.code(), Some(0), "{client}");
        assert!(
            stderr.contains("read-only") && stderr.contains(name),
            "{stderr}"
        );
        assert_eq!(read(&real), before);
        assert_eq!(walk(&env.project()), snapshot, "{client}");

        // A link to nowhere: refused.
        std::fs::remove_file(&link).unwrap();
        std::os::unix::fs::symlink(dotfiles.join("missing.json"), &link).unwrap();
        let output = env.run(&["setup", client]);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_ne!(output.status.code(), Some(0), "{client}");
        assert!(stderr.contains("symbolic link"), "{stderr}");
        assert!(!dotfiles.join("missing.json").exists());
    }
}

/// `setup codex` reads the user's `config.toml` (to know whether the project is trusted)
/// through the bounded reader: a FIFO there does not hang it, a link to `/dev/zero` is not
/// read; the project is set up and the user is told to trust it.
#[cfg(unix)]
#[test]
fn setup_codex_reads_the_users_config_with_bounds() {
    for kind in ["fifo", "zero"] {
        let env = TestEnv::new();
        let home = env.dir.path().join("codex-home");
        std::fs::create_dir_all(&home).unwrap();
        let config = home.join("config.toml");
        if kind == "fifo" {
            let made = Command::new("mkfifo").arg(&config).status().unwrap();
            assert!(made.success());
        } else {
            std::os::unix::fs::symlink("/dev/zero", &config).unwrap();
        }
        let mut child = env
            .cmd()
            .args(["setup", "codex"])
            .env("CODEX_HOME", &home)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let status =
            crate::support::exits_by_itself(&mut child, std::time::Duration::from_secs(60));
        assert_eq!(status.and_then(|status| status.code()), Some(0), "{kind}");
        let mut stdout = String::new();
        std::io::Read::read_to_string(&mut child.stdout.take().unwrap(), &mut stdout).unwrap();
        assert!(stdout.contains("trust"), "{kind}: {stdout}");
    }
}
