//! Effects where agents really work and as they really write: a worktree (Claude Code's
//! `.claude/worktrees/<name>/`, or one outside the project) and a nested repository share the
//! project's ledger, each effect of a line is keyed on its own (wrappers and neighbours off, the
//! repository it runs in counted), the commit form Claude Code writes, and a secret that no
//! stored byte depends on.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::support::{TestEnv, hook_payload};

/// Workflow `w` with phase `deploy` in progress.
fn deploying(env: &TestEnv) {
    CALLS.set(1);
    env.ok(&["init", "w", "--phase", "deploy"]);
    env.ok(&["start", "deploy"]);
}

thread_local! {
    /// Numbers each call's `tool_use_id`, as a client does (from 1 in each workflow).
    static CALLS: std::cell::Cell<u64> = const { std::cell::Cell::new(1) };
}

/// A hook payload for a Bash call made in `cwd`.
fn bash_payload(env: &TestEnv, event: &str, cwd: &Path, command: &str) -> String {
    let mut extra = json!({
        "cwd": cwd,
        "tool_name": "Bash",
        "tool_input": {"command": command},
        "tool_use_id": format!("toolu_{}", CALLS.replace(CALLS.get() + 1)),
    });
    if event == "PostToolUse" {
        extra["tool_response"] = json!({"stdout": "done", "stderr": "", "interrupted": false});
    }
    hook_payload(env, event, extra)
}

/// A successful Bash call made in `cwd`, as the hooks see it.
fn ran_in(env: &TestEnv, cwd: &Path, command: &str) {
    let (code, out, err) = env
        .hook(
            "PostToolUse",
            &bash_payload(env, "PostToolUse", cwd, command),
        )
        .wait();
    assert_eq!((code, out.as_str()), (0, ""), "{err}");
}

/// Whether the guard refuses the call in `cwd` (headless); a call let through is then reported
/// failed (as if it ran and failed), which settles its intent and guards nothing.
fn refused_in(env: &TestEnv, cwd: &Path, command: &str) -> bool {
    let refused = probe(env, cwd, command);
    let intent = std::fs::read_dir(env.store()).unwrap().any(|dir| {
        std::fs::read_to_string(dir.unwrap().path().join("journal.jsonl")).is_ok_and(|text| {
            text.lines()
                .last()
                .is_some_and(|line| line.contains("\"intent\":true"))
        })
    });
    if !refused && intent {
        let mut failed: Value =
            serde_json::from_str(&bash_payload(env, "PostToolUseFailure", cwd, command)).unwrap();
        failed["error"] = json!("Exit code 1");
        let (code, _, err) = env.hook("PostToolUseFailure", &failed.to_string()).wait();
        assert_eq!(code, 0, "{err}");
    }
    refused
}

/// What the guard answers, nothing more.
fn probe(env: &TestEnv, cwd: &Path, command: &str) -> bool {
    let (code, out, err) = env
        .hook_with_env(
            "PreToolUse",
            &bash_payload(env, "PreToolUse", cwd, command),
            &[("CLAUDE_CODE_ENTRYPOINT", "sdk-cli")],
        )
        .wait();
    assert_eq!(code, 0, "{err}");
    if out.trim().is_empty() {
        return false;
    }
    let answer: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(answer["hookSpecificOutput"]["permissionDecision"], "deny");
    true
}

/// The commands of workflow `w`'s effects that succeeded.
fn effect_commands(env: &TestEnv) -> Vec<String> {
    ok_effects(env, "w")
}

fn ok_effects(env: &TestEnv, id: &str) -> Vec<String> {
    env.read(id, "journal.jsonl")
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .filter(|entry| entry["transition"]["op"] == "effect" && entry["transition"]["ok"] == true)
        .map(|entry| entry["transition"]["command"].as_str().unwrap().to_owned())
        .collect()
}

/// A git worktree of the project at `dir`, as `git worktree add` makes it: a `.git` file naming
/// its directory under the main `.git/worktrees/`, which names the common directory.
fn worktree(env: &TestEnv, dir: &Path, name: &str) -> PathBuf {
    let git_dir = env.project().join(".git").join("worktrees").join(name);
    std::fs::create_dir_all(&git_dir).unwrap();
    std::fs::write(git_dir.join("commondir"), "../..\n").unwrap();
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join(".git"), format!("gitdir: {}\n", git_dir.display())).unwrap();
    dir.to_owned()
}

#[test]
fn a_worktree_records_and_is_guarded_by_the_projects_ledger() {
    let env = TestEnv::new();
    deploying(&env);
    let root = env.project();
    let inside = worktree(&env, &root.join(".claude/worktrees/agent-1"), "agent-1");
    let outside = worktree(&env, &env.dir.path().join("elsewhere"), "elsewhere");
    let post = "curl -X POST https://hooks.example.com/deploy";
    ran_in(&env, &root, post);
    assert!(
        refused_in(&env, &inside, post),
        "a worktree inside the project"
    );
    assert!(refused_in(&env, &outside, post), "a worktree elsewhere");
    // And the other way: recorded from a worktree, refused at the root and in a subdirectory.
    ran_in(&env, &inside, "git push origin feature");
    assert_eq!(effect_commands(&env).len(), 2);
    std::fs::create_dir_all(root.join("src")).unwrap();
    for cwd in [root.clone(), root.join("src"), outside.clone()] {
        assert!(
            refused_in(&env, &cwd, "git push origin feature"),
            "{}",
            cwd.display()
        );
    }
    assert!(!refused_in(&env, &inside, "git push origin other"));
    // Nothing was written in the worktrees.
    assert!(!inside.join(".claude/checkpoints").exists());
    assert!(!outside.join(".claude/checkpoints").exists());
}

#[test]
fn a_nested_repository_is_its_own_repository_in_the_projects_ledger() {
    let env = TestEnv::new();
    deploying(&env);
    let root = env.project();
    let vendor = root.join("vendor/lib");
    std::fs::create_dir_all(vendor.join(".git")).unwrap();
    // Made inside the nested repository: recorded in the project's ledger.
    ran_in(&env, &vendor, "git push origin main");
    assert_eq!(
        effect_commands(&env),
        vec!["git push origin main".to_owned()]
    );
    assert!(!vendor.join(".claude/checkpoints").exists());
    assert!(refused_in(&env, &vendor, "git push origin main"));
    // The same push seen from the root through `cd` or `git -C`, or from its subdirectory.
    std::fs::create_dir_all(vendor.join("src")).unwrap();
    assert!(refused_in(
        &env,
        &root,
        "cd vendor/lib && git push origin main"
    ));
    assert!(refused_in(
        &env,
        &root,
        "git -C vendor/lib push origin main"
    ));
    assert!(refused_in(
        &env,
        &vendor.join("src"),
        "git push origin main"
    ));
    // The root's own push is another push.
    assert!(!refused_in(&env, &root, "git push origin main"));
    assert!(!refused_in(
        &env,
        &root,
        "cd vendor && git push origin main"
    ));
    // A package's publish counts its directory within the repository.
    std::fs::create_dir_all(root.join("packages/a")).unwrap();
    std::fs::create_dir_all(root.join("packages/b")).unwrap();
    ran_in(&env, &root, "cd packages/a && npm publish");
    assert!(refused_in(&env, &root.join("packages/a"), "npm publish"));
    assert!(!refused_in(&env, &root.join("packages/b"), "npm publish"));
    assert!(!refused_in(&env, &root, "npm publish"));
}

#[test]
fn each_effect_of_a_line_is_guarded_on_its_own() {
    let env = TestEnv::new();
    deploying(&env);
    let root = env.project();
    ran_in(&env, &root, "gh pr create --title T --body B");
    for command in [
        "gh pr create --title T --body B",
        "cd . && gh pr create --title T --body B",
        "gh pr create --title T --body B && echo ok",
        "sudo gh pr create --title T --body B",
        "VAR=x gh pr create --title T --body B",
        "bash -c 'gh pr create --title T --body B'",
        "echo 'gh pr create --title T --body B' | bash",
        "make test; gh pr create --title 'T' --body \"B\" 2>&1 | tee log",
    ] {
        assert!(refused_in(&env, &root, command), "{command}");
    }
    for command in [
        "gh pr create --title T --body C",
        "gh pr create --title T --body B --help",
        "echo 'gh pr create --title T --body B'",
    ] {
        assert!(!refused_in(&env, &root, command), "{command}");
    }
    // A line with two effects is two: each guards, and a line holding either is refused.
    ran_in(&env, &root, "git push origin main && npm publish");
    assert_eq!(
        effect_commands(&env),
        vec![
            "gh pr create --title T --body B".to_owned(),
            "git push origin main".into(),
            "npm publish".into()
        ]
    );
    assert!(refused_in(&env, &root, "npm publish"));
    assert!(refused_in(&env, &root, "npm test && git push origin main"));
}

/// The commit form Claude Code writes itself: a here-document in `$( … )`, an apostrophe in it.
const COMMIT_FORM: &str = "git commit -m \"$(cat <<'EOF'\nFix the flow so it doesn't break\n\nCo-Authored-By: Claude <noreply@anthropic.com>\nEOF\n)\" && git push origin main";

#[test]
fn the_clients_own_commit_form_is_recorded_and_guarded() {
    let env = TestEnv::new();
    deploying(&env);
    let root = env.project();
    ran_in(&env, &root, COMMIT_FORM);
    assert_eq!(
        effect_commands(&env),
        vec!["git push origin main".to_owned()]
    );
    assert!(refused_in(&env, &root, COMMIT_FORM));
    assert!(refused_in(&env, &root, "git push origin main"));
    // A line the reader cannot read to its end still records and guards what it holds.
    let broken = "git commit -m \"it's && git push origin release";
    let (code, _, err) = env
        .hook_with_env(
            "PreToolUse",
            &bash_payload(&env, "PreToolUse", &root, broken),
            &[("CLAUDE_CODE_ENTRYPOINT", "sdk-cli")],
        )
        .wait();
    assert_eq!(code, 0);
    assert!(err.contains("unclosed quote"), "{err}");
    ran_in(&env, &root, broken);
    assert!(effect_commands(&env).contains(&"git push origin release".to_owned()));
    assert!(refused_in(&env, &root, "git push origin release"));
}

/// Every byte of the store's files, in order of their names.
fn stored_bytes(env: &TestEnv) -> Vec<(String, Vec<u8>)> {
    let mut files = Vec::new();
    let mut dirs = vec![env.store()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.file_name().unwrap() != "lock" {
                files.push((path.display().to_string(), std::fs::read(&path).unwrap()));
            }
        }
    }
    files.sort();
    files
}

#[test]
fn no_stored_byte_depends_on_a_redacted_secret() {
    let secrets = ["hunter2", "Tr0ub4dor&3", "correct horse battery"];
    let commands = |secret: &str| {
        let in_url = secret.replace(' ', "%20").replace('&', "%26");
        vec![
            format!("curl -u ana:'{secret}' -X POST https://api.example.com/hook"),
            format!("curl --oauth2-bearer '{secret}' -d x=1 https://api.example.com/a"),
            format!("curl -H 'Cookie: session={secret}' -X PUT https://api.example.com/b"),
            format!("curl -b 'sid={secret}' -X DELETE https://api.example.com/c"),
            format!("curl -X POST 'https://api.example.com/d?key={in_url}&q=1'"),
            format!("curl -X POST 'https://api.example.com/e?sig={in_url}'"),
            format!("gh api -X POST repos/o/r/issues --password='{secret}'"),
        ]
    };
    let mut stores = Vec::new();
    for secret in secrets {
        let env = TestEnv::new();
        deploying(&env);
        for command in commands(secret) {
            ran_in(&env, &env.project(), &command);
        }
        env.ok(&["effects", "--all"]);
        let bytes = stored_bytes(&env);
        for (file, content) in &bytes {
            let text = String::from_utf8_lossy(content);
            assert!(!text.contains(secret), "{secret} in {file}");
        }
        // The same call with another secret is the same effect.
        let other = commands("another one");
        for command in &other {
            assert!(refused_in(&env, &env.project(), command), "{command}");
        }
        // The temporary directory's name is the one byte sequence that differs by design.
        let root = env.dir.path().display().to_string();
        stores.push(
            bytes
                .into_iter()
                .map(|(file, content)| {
                    let text = String::from_utf8_lossy(&content).replace(&root, "<tmp>");
                    (file.replace(&root, ""), text)
                })
                .collect::<Vec<_>>(),
        );
    }
    // Byte for byte the same stores, whatever the secret was.
    let names = |store: &Vec<(String, String)>| -> Vec<String> {
        store.iter().map(|(file, _)| file.clone()).collect()
    };
    assert_eq!(names(&stores[0]), names(&stores[1]));
    for store in &stores[1..] {
        for ((file, first), (_, later)) in stores[0].iter().zip(store) {
            assert_eq!(first, later, "{file} differs with the secret");
        }
    }
}

#[test]
fn one_allow_lets_one_repeat_through_whichever_workflows_hold_it() {
    let env = TestEnv::new();
    for id in ["a", "b"] {
        env.ok(&["init", id, "--phase", "deploy"]);
        env.ok(&["--workflow", id, "start", "deploy"]);
    }
    let root = env.project();
    let push = "git push origin main";
    ran_in(&env, &root, push);
    assert!(refused_in(&env, &root, push));
    env.ok(&["--workflow", "a", "effects", "allow", "1"]);
    assert!(!refused_in(&env, &root, push), "b still refuses");
    // The repeat, once run, is recorded in both and guards again in both.
    ran_in(&env, &root, push);
    assert!(refused_in(&env, &root, push));
    // Effect 2 is the probe above (let through, then failed); the recorded repeat is 3.
    env.ok(&["--workflow", "b", "effects", "allow", "3"]);
    assert!(!refused_in(&env, &root, push), "a still refuses");
}

#[test]
fn a_fork_keeps_the_effects_of_the_entries_it_copies() {
    let env = TestEnv::new();
    deploying(&env);
    let root = env.project();
    ran_in(&env, &root, "git push origin main");
    let journal = env.read("w", "journal.jsonl");
    let last: Value = serde_json::from_str(journal.lines().last().unwrap()).unwrap();
    let seq = last["seq"].as_u64().unwrap().to_string();
    ran_in(&env, &root, "npm publish");
    env.ok(&["fork", &seq, "--as", "f"]);
    env.ok(&["--workflow", "w", "abandon", "--reason", "journal full"]);
    // The push the fork copied is refused; the publish after the fork point is not its.
    assert!(refused_in(&env, &root, "git push origin main"));
    assert!(!refused_in(&env, &root, "npm publish"));
    assert_eq!(
        ok_effects(&env, "f"),
        vec!["git push origin main".to_owned()]
    );
    let listed = env.ok(&["--workflow", "f", "effects", "--all"]);
    assert!(listed.contains("git push origin main"), "{listed}");
}

#[test]
fn an_outcome_nobody_saw_is_unknown_and_guarded_until_a_person_resolves_it() {
    let env = TestEnv::new();
    deploying(&env);
    let root = env.project();
    let push = "git push origin release";
    // The call is let through and its intent journaled; the client is killed before its
    // `PostToolUse`, and a new session starts.
    assert!(!probe(&env, &root, push));
    crate::support::session_start_context(&env);
    let listed = env.ok(&["effects"]);
    assert!(listed.contains("unknown: may have happened"), "{listed}");
    assert_eq!(env.json(&["effects"])["effects"][0]["unknown"], true);
    // Another session (or another call of this one, still running) is refused, told to check.
    let (code, out, _) = env
        .hook_with_env(
            "PreToolUse",
            &bash_payload(&env, "PreToolUse", &root, &format!("cd . && {push}")),
            &[("CLAUDE_CODE_ENTRYPOINT", "sdk-cli")],
        )
        .wait();
    assert_eq!(code, 0);
    let reason = serde_json::from_str::<Value>(&out).unwrap()["hookSpecificOutput"]
        ["permissionDecisionReason"]
        .as_str()
        .unwrap()
        .to_owned();
    for part in [
        "outcome unknown",
        "git ls-remote origin release",
        "checkpoint effects resolve 1 --done",
    ] {
        assert!(reason.contains(part), "{part} in {reason}");
    }
    // An allow is no answer; nor is a resolve from an agent's shell.
    assert_eq!(env.run(&["effects", "allow", "1"]).status.code(), Some(3));
    let inside = env
        .cmd()
        .args(["effects", "resolve", "1", "--not-done"])
        .env("CLAUDECODE", "")
        .output()
        .unwrap();
    assert_eq!(inside.status.code(), Some(3));
    // A person says it did not happen: a repeat runs, and its own outcome settles it.
    env.ok(&["effects", "resolve", "1", "--not-done"]);
    assert!(!probe(&env, &root, push));
    ran_in(&env, &root, push);
    assert_eq!(effect_commands(&env), vec![push.to_owned()]);
    assert!(refused_in(&env, &root, push));
    // Said done, an unknown effect guards as a done one.
    assert!(!probe(&env, &root, "npm publish"));
    env.ok(&["effects", "resolve", "3", "--done"]);
    assert!(refused_in(&env, &root, "npm publish"));
    let log = env.ok(&["log"]);
    assert!(log.contains("about to run"), "{log}");
}

#[test]
fn a_later_session_is_told_of_an_unknown_outcome() {
    let env = TestEnv::new();
    deploying(&env);
    assert!(!probe(&env, &env.project(), "git push origin release"));
    let context = crate::support::session_start_context(&env);
    for part in [
        "may have happened",
        "git ls-remote origin release",
        "checkpoint effects resolve 1 --done|--not-done",
    ] {
        assert!(context.contains(part), "{part} in {context}");
    }
    let prompt = env.ok(&["resume", "--format", "prompt"]);
    assert!(prompt.contains("may have happened"), "{prompt}");
}
