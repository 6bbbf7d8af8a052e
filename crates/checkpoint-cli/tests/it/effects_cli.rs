//! The effect ledger's commands and views (issue 29): `effect` (by hand), `effects` (the list,
//! human and JSON), `effects allow <n>` (one repeat through the guard), and the effects in
//! `status`, `log`, `watch` and `report`. The hooks' record and guard are in `effects.rs`.

use serde_json::{Value, json};

use crate::support::{TestEnv, render};

/// A workflow `rel`: `deploy`, then `announce`; `deploy` in progress.
fn deploying(env: &TestEnv) {
    env.ok(&[
        "init",
        "rel",
        "--phase",
        "deploy",
        "--phase",
        "announce:deploy",
    ]);
    env.ok(&["start", "deploy"]);
}

/// A hook payload for a Bash call of `command`.
fn bash_payload(env: &TestEnv, event: &str, command: &str) -> String {
    let mut payload = json!({
        "session_id": "11111111-2222-3333-4444-555555555555",
        "transcript_path": "/tmp/transcript.jsonl",
        "cwd": env.project(),
        "hook_event_name": event,
        "tool_name": "Bash",
        "tool_input": { "command": command, "description": "push" },
        "tool_use_id": "toolu_01",
        "permission_mode": "default",
    });
    if event == "PostToolUseFailure" {
        payload["error"] = json!("Exit code 1");
    }
    if event == "PostToolUse" {
        payload["tool_response"] = json!({
            "stdout": "",
            "stderr": "To example.invalid:rel.git\n   1111111..2222222  main -> main\n",
            "interrupted": false,
            "isImage": false,
        });
    }
    payload.to_string()
}

/// The guard's answer to a headless session's Bash call of `command`: the hook's stdout (empty
/// when the call may run).
fn pre_tool_use(env: &TestEnv, command: &str) -> String {
    let output = env
        .cmd()
        .args(["hook", "PreToolUse"])
        .env("CLAUDE_CODE_ENTRYPOINT", "sdk-cli")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write;
            child
                .stdin
                .take()
                .unwrap()
                .write_all(bash_payload(env, "PreToolUse", command).as_bytes())?;
            child.wait_with_output()
        })
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    String::from_utf8(output.stdout).unwrap()
}

fn denied(answer: &str) -> bool {
    serde_json::from_str::<Value>(answer).is_ok_and(|answer| {
        answer["hookSpecificOutput"]["permissionDecision"]
            .as_str()
            .is_some_and(|decision| decision == "deny" || decision == "ask")
    })
}

/// The `op` of every journal entry of `rel`.
fn ops(env: &TestEnv) -> Vec<String> {
    env.read("rel", "journal.jsonl")
        .lines()
        .map(|line| {
            serde_json::from_str::<Value>(line).unwrap()["transition"]["op"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect()
}

#[test]
fn an_effect_recorded_by_hand_is_listed_with_everything_known_of_it() {
    let env = TestEnv::new();
    deploying(&env);

    let out = env.ok(&[
        "effect",
        "deploy",
        "emailed the customer the invoice",
        "--output",
        "sent to billing@example.com",
    ]);

    assert!(out.contains("recorded effect 1 on phase `deploy`"), "{out}");
    let listed = env.json(&["effects"]);
    assert_eq!(listed["workflow"], "rel", "{listed:#}");
    assert_eq!(listed["shown"], "unfinished", "{listed:#}");
    assert_eq!(listed["total"], 1, "{listed:#}");
    let effect = &listed["effects"][0];
    assert_eq!(effect["number"], 1, "{effect:#}");
    assert_eq!(effect["phase"], "deploy", "{effect:#}");
    assert_eq!(effect["attempt"], 1, "{effect:#}");
    assert_eq!(
        effect["command"], "emailed the customer the invoice",
        "{effect:#}"
    );
    assert_eq!(
        effect["output"], "sent to billing@example.com",
        "{effect:#}"
    );
    assert_eq!(effect["ok"], true, "{effect:#}");
    assert_eq!(effect["source"], "manual", "{effect:#}");
    assert_eq!(effect["tool"], Value::Null, "{effect:#}");
    assert_eq!(effect["session_id"], Value::Null, "{effect:#}");
    assert_eq!(effect["at"], "2026-03-01T12:00:00Z", "{effect:#}");
    assert_eq!(effect["guards"], true, "{effect:#}");
    assert_eq!(effect["allowed"], false, "{effect:#}");
    let human = env.ok(&["effects"]);
    for needle in [
        "1 effect of the phases not done",
        "#1 deploy (attempt 1)  2026-03-01 12:00:00 UTC",
        "emailed the customer the invoice",
        "→ sent to billing@example.com",
        "`checkpoint effects allow <n>`",
    ] {
        assert!(human.contains(needle), "{needle:?} missing:\n{human}");
    }
    // `--format json` of `effect` is the workflow and the effect it recorded.
    let recorded = env.json(&["effect", "deploy", "filed ticket OPS-7"]);
    assert_eq!(recorded["effect"]["number"], 2, "{recorded:#}");
    assert_eq!(recorded["workflow"]["id"], "rel", "{recorded:#}");
    assert_eq!(ops(&env).last().unwrap(), "effect");
}

#[test]
fn a_bad_effect_is_refused_with_its_reason_and_writes_nothing() {
    let env = TestEnv::new();
    deploying(&env);
    let before = env.read("rel", "journal.jsonl");

    let unknown = env.run(&["effect", "nope", "pushed"]);
    assert_eq!(unknown.status.code(), Some(4), "{}", render(&env, &unknown));
    assert!(
        String::from_utf8_lossy(&unknown.stderr).contains("nope"),
        "{}",
        render(&env, &unknown)
    );
    for what in ["", "   \n\t"] {
        let empty = env.run(&["effect", "deploy", what]);
        assert_eq!(empty.status.code(), Some(2), "{}", render(&env, &empty));
    }
    let bad_id = env.run(&["effect", "../x", "pushed"]);
    assert_eq!(bad_id.status.code(), Some(2), "{}", render(&env, &bad_id));
    let conflicting = env.run(&["effects", "--phase", "deploy", "--all"]);
    assert_eq!(
        conflicting.status.code(),
        Some(2),
        "{}",
        render(&env, &conflicting)
    );
    let no_phase = env.run(&["effects", "--phase", "nope"]);
    assert_eq!(
        no_phase.status.code(),
        Some(4),
        "{}",
        render(&env, &no_phase)
    );

    assert_eq!(env.read("rel", "journal.jsonl"), before);
}

#[test]
fn effects_lists_the_unfinished_phases_by_default_one_phase_or_all() {
    let env = TestEnv::new();
    deploying(&env);
    env.ok(&["effect", "deploy", "git push origin release"]);
    env.ok(&["complete", "deploy"]);
    env.ok(&["start", "announce"]);
    env.ok(&["effect", "announce", "posted the release notes"]);

    let numbers = |args: &[&str]| -> Vec<u64> {
        env.json(args)["effects"]
            .as_array()
            .unwrap()
            .iter()
            .map(|effect| effect["number"].as_u64().unwrap())
            .collect()
    };
    assert_eq!(numbers(&["effects"]), [2]);
    assert_eq!(numbers(&["effects", "--all"]), [1, 2]);
    assert_eq!(numbers(&["effects", "--phase", "deploy"]), [1]);
    assert_eq!(env.json(&["effects", "--all"])["shown"], "all");
    assert_eq!(
        env.json(&["effects", "--phase", "deploy"])["shown"],
        "phase"
    );

    let env = TestEnv::new();
    deploying(&env);
    let none = env.ok(&["effects"]);
    assert_eq!(none, "no effects of the phases not done and of no phase\n");
    assert_eq!(env.json(&["effects"])["effects"], json!([]));
}

#[test]
fn a_bash_command_recorded_by_hand_guards_its_repeats() {
    let env = TestEnv::new();
    deploying(&env);
    assert!(!denied(&pre_tool_use(&env, "git push origin main")));
    // The call let through ran and failed: its intent is settled, and guards nothing.
    let failed = bash_payload(&env, "PostToolUseFailure", "git push origin main");
    assert_eq!(env.hook("PostToolUseFailure", &failed).wait().0, 0);

    env.ok(&["effect", "deploy", "git push origin main"]);

    let answer = pre_tool_use(&env, "git  push origin   main");
    assert!(denied(&answer), "the repeat was not refused: {answer:?}");
    assert!(answer.contains("checkpoint effects allow 2"), "{answer}");
    assert!(!denied(&pre_tool_use(&env, "git push origin other")));
}

#[test]
fn effects_allow_lets_exactly_one_repeat_through_and_journals_who() {
    let env = TestEnv::new();
    deploying(&env);
    let push = "git push origin main";
    assert_eq!(
        env.hook("PostToolUse", &bash_payload(&env, "PostToolUse", push))
            .wait()
            .0,
        0
    );
    assert!(denied(&pre_tool_use(&env, push)));

    let out = env.ok(&["effects", "allow", "1", "--by", "alice"]);
    assert!(out.contains("one repeat of effect 1"), "{out}");
    let journal = env.read("rel", "journal.jsonl");
    let allow: Value = serde_json::from_str(journal.lines().last().unwrap()).unwrap();
    assert_eq!(allow["transition"]["op"], "effect_allow", "{allow:#}");
    assert_eq!(allow["transition"]["effect"], 1, "{allow:#}");
    assert_eq!(allow["transition"]["by"], "alice", "{allow:#}");
    assert_eq!(allow["at"], "2026-03-01T12:00:00Z", "{allow:#}");
    let listed = env.json(&["effects"]);
    assert_eq!(listed["effects"][0]["allowed"], true, "{listed:#}");
    assert_eq!(listed["effects"][0]["guards"], false, "{listed:#}");

    // The repeat passes the guard; once it ran (its PostToolUse), the next one is refused again.
    assert!(!denied(&pre_tool_use(&env, push)));
    assert_eq!(
        env.hook("PostToolUse", &bash_payload(&env, "PostToolUse", push))
            .wait()
            .0,
        0
    );
    let answer = pre_tool_use(&env, push);
    assert!(denied(&answer), "a second repeat went through: {answer:?}");
    assert!(answer.contains("checkpoint effects allow 2"), "{answer}");
    let listed = env.json(&["effects", "--all"]);
    assert_eq!(listed["effects"][0]["allowed"], false, "{listed:#}");
    assert_eq!(listed["effects"][1]["guards"], true, "{listed:#}");
}

#[test]
fn effects_allow_refuses_what_it_cannot_allow_and_writes_nothing() {
    let env = TestEnv::new();
    deploying(&env);
    env.ok(&["effect", "deploy", "git push origin main"]);
    let failed = json!({
        "session_id": "11111111-2222-3333-4444-555555555555",
        "transcript_path": "/tmp/transcript.jsonl",
        "cwd": env.project(),
        "hook_event_name": "PostToolUseFailure",
        "tool_name": "Bash",
        "tool_input": { "command": "git push origin broken" },
        "tool_use_id": "toolu_02",
        "error": "Exit code 1\nrejected",
    });
    assert_eq!(
        env.hook("PostToolUseFailure", &failed.to_string()).wait().0,
        0
    );
    let listed = env.json(&["effects"]);
    assert_eq!(listed["effects"][1]["ok"], false, "{listed:#}");
    let before = env.read("rel", "journal.jsonl");

    for (args, code, needle) in [
        (&["effects", "allow", "99"][..], 3, "no effect 99"),
        (&["effects", "allow", "0"][..], 3, "no effect 0"),
        (&["effects", "allow", "2"][..], 3, "failed"),
        (&["effects", "allow", "-1"][..], 2, "-1"),
        (&["effects", "allow", "one"][..], 2, "one"),
    ] {
        let output = env.run(args);
        let shown = render(&env, &output);
        assert_eq!(output.status.code(), Some(code), "{args:?}: {shown}");
        assert!(
            shown.contains(needle),
            "{args:?}: {needle:?} missing:\n{shown}"
        );
    }
    // From inside any client's agent shell, where the model would let itself through: each
    // client's marker variables, an empty value included.
    for (name, value) in [
        ("CLAUDECODE", "1"),
        ("CLAUDECODE", ""),
        ("CLAUDE_CODE_ENTRYPOINT", "sdk-cli"),
        ("CLAUDE_CODE_SESSION_ID", ""),
        ("GEMINI_CLI", "1"),
        ("GEMINI_CLI_NO_RELAUNCH", "true"),
        ("CODEX_CI", "1"),
        ("CODEX_THREAD_ID", "t"),
        ("CODEX_SESSION_ID", ""),
        ("CODEX_TOOL_CALL_ID", "call_1"),
    ] {
        let inside = env
            .cmd()
            .args(["effects", "allow", "1"])
            .env(name, value)
            .output()
            .unwrap();
        let shown = render(&env, &inside);
        assert_eq!(inside.status.code(), Some(3), "{name}={value}: {shown}");
        assert!(shown.contains("a person's decision"), "{shown}");
        assert!(shown.contains(name), "{shown}");
        assert_eq!(env.read("rel", "journal.jsonl"), before);
    }

    // An allow not yet used is not given twice.
    env.ok(&["effects", "allow", "1"]);
    let twice = env.run(&["effects", "allow", "1"]);
    assert_eq!(twice.status.code(), Some(3), "{}", render(&env, &twice));
    assert!(
        render(&env, &twice).contains("already allowed"),
        "{}",
        render(&env, &twice)
    );
}

#[test]
fn secrets_in_an_effect_recorded_by_hand_never_reach_the_disk() {
    let env = TestEnv::new();
    deploying(&env);
    let token = "ghp_9876543210zyxwvutsABCDEFGHIJ654321";
    let key = "AKIAIOSFODNN7EXAMPLE";
    let output = env.run(&[
        "effect",
        "deploy",
        &format!("curl -X POST -H 'Authorization: token {token}' https://api.example.com/deploy"),
        "--output",
        &format!("deployed with {key}"),
    ]);
    assert!(output.status.success(), "{}", render(&env, &output));
    for entry in std::fs::read_dir(env.workflow_dir("rel")).unwrap() {
        let path = entry.unwrap().path();
        let text = String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned();
        for secret in [token, key] {
            assert!(
                !text.contains(secret),
                "`{}` holds {secret}:\n{text}",
                path.display()
            );
        }
    }
    let listed = env.json(&["effects"]).to_string();
    assert!(listed.contains("REDACTED"), "{listed}");
    assert!(!listed.contains(token) && !listed.contains(key), "{listed}");
}

#[test]
fn an_output_is_kept_to_1000_characters_cut_on_a_character_boundary() {
    let env = TestEnv::new();
    deploying(&env);
    for long in ["é".repeat(5_000), "x".repeat(1_001), "🚀".repeat(999)] {
        env.ok(&["effect", "deploy", "published", "--output", &long]);
        let listed = env.json(&["effects", "--all"]);
        let effects = listed["effects"].as_array().unwrap();
        let output = effects.last().unwrap()["output"].as_str().unwrap();
        assert!(
            output.chars().count() <= 1_000,
            "{} characters",
            output.chars().count()
        );
        assert!(long.starts_with(output.trim_end_matches('…')), "{output}");
    }
    let short = "v1.2.3 published";
    env.ok(&["effect", "deploy", "npm publish", "--output", short]);
    assert_eq!(
        env.json(&["effects"])["effects"][3]["output"],
        short,
        "a short output is kept whole"
    );
}

#[test]
fn status_shows_each_phases_effect_count() {
    let env = TestEnv::new();
    deploying(&env);
    let status = env.json(&["status"]);
    assert_eq!(status["phases"][0]["effects"], 0, "{status:#}");
    env.ok(&["effect", "deploy", "git push origin main"]);
    env.ok(&["effect", "deploy", "gh pr create --fill"]);

    let status = env.json(&["status"]);
    assert_eq!(status["phases"][0]["effects"], 2, "{status:#}");
    assert_eq!(status["phases"][1]["effects"], 0, "{status:#}");
    let human = env.ok(&["status"]);
    let deploy_line = human
        .lines()
        .find(|line| line.contains("deploy"))
        .unwrap_or_else(|| panic!("no deploy line:\n{human}"));
    assert!(deploy_line.contains("2 effects done"), "{human}");
    let announce_line = human
        .lines()
        .find(|line| line.contains("announce"))
        .unwrap();
    assert!(!announce_line.contains("effect"), "{human}");
}

#[test]
fn log_watch_and_report_show_effects_as_events() {
    let env = TestEnv::new();
    deploying(&env);
    env.ok(&[
        "effect",
        "deploy",
        "gh pr create --fill",
        "--output",
        "https://github.com/o/r/pull/42",
    ]);
    env.ok(&["effects", "allow", "1", "--by", "alice"]);

    let log = env.ok(&["log"]);
    let effect_line = log.lines().find(|line| line.contains(" effect ")).unwrap();
    assert!(
        effect_line.contains("deploy: gh pr create --fill → https://github.com/o/r/pull/42"),
        "{log}"
    );
    let allow_line = log
        .lines()
        .find(|line| line.contains("effect_allow"))
        .unwrap();
    assert!(allow_line.contains("effect 1"), "{log}");
    assert!(allow_line.contains("alice"), "{log}");

    let watch = env.ok(&["watch", "--once"]);
    assert!(watch.contains("1 effect done"), "{watch}");
    assert!(
        watch.contains("last effect: #1 (deploy) `gh pr create --fill` done"),
        "{watch}"
    );
    let watch_json = env.json(&["watch", "--once"]);
    assert_eq!(watch_json["phases"][0]["effects"], 1, "{watch_json:#}");

    let report = env.json(&["report"]);
    let effects: Vec<&Value> = report["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|span| span["kind"] == "effect")
        .collect();
    assert_eq!(effects.len(), 2, "{report:#}");
    assert_eq!(effects[0]["phase"], "deploy", "{report:#}");
    assert!(
        effects[0]["label"]
            .as_str()
            .unwrap()
            .contains("gh pr create --fill → https://github.com/o/r/pull/42"),
        "{report:#}"
    );
    let human = env.ok(&["report"]);
    assert!(
        human.contains("effect   `deploy` gh pr create --fill"),
        "{human}"
    );
    let page = env.project().join("report.html");
    env.ok(&["report", "--html", page.to_str().unwrap()]);
    let html = std::fs::read_to_string(page).unwrap();
    assert!(html.contains("gh pr create --fill"), "{html}");
}
