//! The command line: the tour from the README, output formats, errors and exit codes.

use insta::assert_snapshot;

use crate::support::TestEnv;

fn three_phases(env: &TestEnv) {
    env.ok(&[
        "init",
        "payments",
        "--title",
        "Payments refactor",
        "--phase",
        "design",
        "--phase",
        "build:design",
        "--phase",
        "docs:design",
    ]);
}

#[test]
fn tour() {
    let env = TestEnv::new();
    assert_snapshot!(env.snapshot(&["init", "payments", "--title", "Payments refactor", "--phase", "design", "--phase", "build:design", "--phase", "docs:design"]), @r"
    exit status: 0
    ----- stdout -----
    created workflow payments with 3 phases in `[TEMP]/project/.claude/checkpoints/payments`

    payments — Payments refactor  pending
    0 of 3 phases done · updated just now

    · design  ready
    · build   blocked by design
    · docs    blocked by design
    ----- stderr -----
    ");
    env.ok(&["start", "design"]);
    env.set_now("2026-03-01T12:30:00Z");
    assert_snapshot!(env.snapshot(&["complete", "design", "--artifact", "docs/design.md", "--commit-sha", "a1b2c3d4e5f6"]), @r"
    exit status: 0
    ----- stdout -----
    completed phase `design`; ready: `build`, `docs`
    ----- stderr -----
    warning: artifact `docs/design.md` does not exist; `checkpoint resume` will ask about it
    ");
    env.ok(&["start", "build"]);
    env.ok(&["progress", "build", "auth module done, starting billing"]);
    env.set_now("2026-03-01T13:00:00Z");
    assert_snapshot!(env.snapshot(&["status"]), @r"
    exit status: 0
    ----- stdout -----
    payments — Payments refactor  in progress
    1 of 3 phases done · updated 30 minutes ago

    ✓ design  done  30 minutes ago  (a1b2c3d)
    → build   in progress
              progress: auth module done, starting billing
    · docs    ready
    ----- stderr -----
    ");
    insta::assert_snapshot!(env.read("payments", "state.json").replace(&env.dir.path().display().to_string(), "[TEMP]"), @r#"
    {
      "schema_version": 1,
      "id": "payments",
      "title": "Payments refactor",
      "status": "in_progress",
      "created_at": "2026-03-01T12:00:00Z",
      "updated_at": "2026-03-01T12:30:00Z",
      "seq": 5,
      "git": {
        "worktree": "[TEMP]/project"
      },
      "context": {
        "key_decisions": [],
        "file_paths": [
          "docs/design.md"
        ],
        "notes": []
      },
      "phases": [
        {
          "id": "design",
          "name": "design",
          "dependencies": [],
          "status": "complete",
          "started_at": "2026-03-01T12:00:00Z",
          "completed_at": "2026-03-01T12:30:00Z",
          "attempts": 1,
          "artifacts": [
            {
              "path": "docs/design.md",
              "recorded_at": "2026-03-01T12:30:00Z"
            }
          ],
          "commit_sha": "a1b2c3d4e5f6"
        },
        {
          "id": "build",
          "name": "build",
          "dependencies": [
            "design"
          ],
          "status": "in_progress",
          "started_at": "2026-03-01T12:30:00Z",
          "attempts": 1,
          "progress": "auth module done, starting billing",
          "progress_at": "2026-03-01T12:30:00Z"
        },
        {
          "id": "docs",
          "name": "docs",
          "dependencies": [
            "design"
          ],
          "status": "pending"
        }
      ]
    }
    "#);
    let state = env.state("payments");
    assert_eq!(state["phases"][0]["artifacts"][0]["path"], "docs/design.md");
    assert_eq!(state["phases"][1]["status"], "in_progress");
    assert_eq!(state["seq"], 5);
    assert_eq!(env.read("payments", "journal.jsonl").lines().count(), 5);
    assert!(env.workflow_dir("payments").join("state.json.bak").exists());
}

#[test]
fn json_output_is_one_versioned_document() {
    let env = TestEnv::new();
    three_phases(&env);
    let status = env.json(&["status"]);
    assert_eq!(status["version"], 1);
    assert_eq!(status["workflow"]["id"], "payments");
    let views: Vec<&str> = status["phases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|phase| phase["view"].as_str().unwrap())
        .collect();
    assert_eq!(views, ["ready", "blocked", "blocked"]);
    assert_eq!(status["phases"][1]["waiting_for"][0], "design");
    let started = env.json(&["start", "design"]);
    assert_eq!(started["workflow"]["phases"][0]["status"], "in_progress");
    assert_eq!(started["workflow"]["phases"][0]["attempts"], 1);
    let list = env.json(&["list"]);
    assert_eq!(list["workflows"][0]["id"], "payments");
    assert_eq!(list["workflows"][0]["current_phase"], "design");
}

#[test]
fn refused_transitions_exit_3_and_write_nothing() {
    let env = TestEnv::new();
    three_phases(&env);
    let before = env.read("payments", "state.json");
    assert_snapshot!(env.snapshot(&["complete", "build"]), @r"
    exit status: 3
    ----- stdout -----
    ----- stderr -----
    checkpoint::invalid_transition

      × cannot complete phase `build`: it depends on `design`, which is not done
      help: complete the dependencies first, or pass `--force`
    ");
    assert_eq!(env.read("payments", "state.json"), before);
    env.ok(&["start", "design"]);
    env.ok(&["complete", "design"]);
    assert_snapshot!(env.snapshot(&["start", "design"]), @r"
    exit status: 3
    ----- stdout -----
    ----- stderr -----
    checkpoint::invalid_transition

      × phase `design` is complete
      help: to redo it, run `checkpoint start design --force`
    ");
    let forced = env.json(&["start", "design", "--force"]);
    assert_eq!(forced["workflow"]["phases"][0]["attempts"], 2);
}

#[test]
fn unknown_things_exit_4() {
    let env = TestEnv::new();
    assert_snapshot!(env.snapshot(&["status"]), @r"
    exit status: 4
    ----- stdout -----
    ----- stderr -----
    checkpoint::no_workflow

      × no workflow in `[TEMP]/project/.claude/checkpoints`
      help: create one with `checkpoint init <id> --phase <id>` (can be repeated)
    ");
    three_phases(&env);
    assert_snapshot!(env.snapshot(&["start", "deploy"]), @r"
    exit status: 4
    ----- stdout -----
    ----- stderr -----
    checkpoint::unknown_phase

      × no phase `deploy` in workflow `payments`
      help: phases are: `design`, `build`, `docs`
    ");
    env.ok(&["init", "other", "--phase", "a"]);
    let output = env.snapshot(&["status"]);
    assert!(output.starts_with("exit status: 4"), "{output}");
    assert!(
        output.contains("checkpoint::ambiguous_workflow"),
        "{output}"
    );
    assert!(
        output.contains("(or once with `--workflow <id>`): `other`, `payments`"),
        "{output}"
    );
    assert!(env.ok(&["status", "--workflow", "other"]).contains("other"));
}

#[test]
fn bad_plans_are_usage_errors() {
    let env = TestEnv::new();
    assert_snapshot!(env.snapshot(&["init", "w", "--phase", "a:c", "--phase", "b:a", "--phase", "c:b"]), @r"
    exit status: 2
    ----- stdout -----
    ----- stderr -----
    checkpoint::invalid_plan

      × invalid plan: the dependencies form a cycle: a -> c -> b -> a
      help: remove one of these dependencies so that phases can run in some order
    ");
    assert_eq!(
        env.run(&["init", "../escape", "--phase", "a"])
            .status
            .code(),
        Some(2)
    );
    assert_eq!(
        env.run(&["init", "w", "--phase", "a:missing"])
            .status
            .code(),
        Some(2)
    );
    assert!(!env.store().join("w").exists());
}

#[test]
fn plan_files_in_json_and_toml() {
    let env = TestEnv::new();
    std::fs::write(
        env.project().join("plan.toml"),
        "title = \"Ship it\"\nkind = \"implement\"\n[[phases]]\nid = \"design\"\noutputs = [\"design.md\"]\nrequires_approval = true\n[[phases]]\nid = \"build\"\ndependencies = [\"design\"]\non_failure = \"design\"\n",
    )
    .unwrap();
    env.ok(&["init", "ship", "--plan", "plan.toml"]);
    let state = env.state("ship");
    assert_eq!(state["kind"], "implement");
    assert_eq!(state["phases"][0]["outputs"][0], "design.md");
    assert_eq!(state["phases"][1]["on_failure"], "design");
    std::fs::write(
        env.project().join("bad.json"),
        "{\"phases\": [{\"id\": \"a\",\n \"depends\": []}]}",
    )
    .unwrap();
    let output = env.snapshot(&["init", "bad", "--plan", "bad.json"]);
    assert!(output.starts_with("exit status: 2"), "{output}");
    assert!(output.contains("unknown field `depends`"), "{output}");
    assert!(output.contains("bad.json:2:"), "{output}");
}

#[test]
fn approval_gate() {
    let env = TestEnv::new();
    std::fs::write(env.project().join("plan.json"), r#"{"phases": [{"id": "design", "requires_approval": true}, {"id": "build", "dependencies": ["design"]}]}"#).unwrap();
    env.ok(&["init", "gated", "--plan", "plan.json"]);
    env.ok(&["start", "design"]);
    assert_eq!(
        env.ok(&["complete", "design"]),
        "phase `design` is done and waits for approval: `checkpoint approve design`\n"
    );
    assert_eq!(env.state("gated")["status"], "awaiting_approval");
    assert_eq!(env.run(&["start", "build"]).status.code(), Some(3));
    env.ok(&["approve", "design", "--by", "ana"]);
    let state = env.state("gated");
    assert_eq!(state["phases"][0]["approval"]["by"], "ana");
    assert_eq!(state["phases"][0]["status"], "complete");
    env.ok(&["start", "build"]);
}

#[test]
fn tasks_gate_completion() {
    let env = TestEnv::new();
    env.ok(&["init", "t", "--phase", "impl"]);
    env.ok(&["task", "add", "impl", "task-001", "--output", "out/1.json"]);
    env.ok(&["task", "add", "impl", "task-002"]);
    env.ok(&["task", "start", "impl", "task-001"]);
    assert_eq!(env.state("t")["phases"][0]["status"], "in_progress");
    env.ok(&["task", "done", "impl", "task-001"]);
    let output = env.snapshot(&["complete", "impl"]);
    assert!(output.contains("tasks `task-002` are not done"), "{output}");
    env.ok(&["task", "done", "impl", "task-002"]);
    env.ok(&["complete", "impl"]);
    assert_eq!(env.state("t")["status"], "complete");
}

#[test]
fn context_summary() {
    let env = TestEnv::new();
    env.ok(&["init", "c", "--phase", "a"]);
    env.ok(&["decide", "REST over GraphQL"]);
    env.ok(&["note", "the billing API is flaky"]);
    env.ok(&["files", "src/a.rs", "src/b.rs"]);
    env.ok(&["files", "src/a.rs"]);
    let state = env.state("c");
    assert_eq!(
        state["context"]["key_decisions"][0]["text"],
        "REST over GraphQL"
    );
    assert_eq!(
        state["context"]["notes"][0]["text"],
        "the billing API is flaky"
    );
    assert_eq!(
        state["context"]["file_paths"],
        serde_json::json!(["src/a.rs", "src/b.rs"])
    );
    assert_eq!(
        state["seq"], 5,
        "a path already listed is not journaled again"
    );
}

#[test]
fn fresh_init_archives_the_old_workflow() {
    let env = TestEnv::new();
    env.ok(&["init", "w", "--phase", "a"]);
    assert_eq!(
        env.run(&["init", "w", "--phase", "a"]).status.code(),
        Some(3)
    );
    env.ok(&["init", "w", "--phase", "b", "--fresh"]);
    assert!(
        env.store()
            .join(".archive")
            .join("w_20260301_120000")
            .join("state.json")
            .exists()
    );
    assert_eq!(env.state("w")["phases"][0]["id"], "b");
}

#[test]
fn store_location() {
    let env = TestEnv::new();
    std::fs::create_dir_all(env.project().join("src/deep")).unwrap();
    env.cmd()
        .args(["init", "w", "--phase", "a"])
        .current_dir(env.project().join("src/deep"))
        .output()
        .unwrap();
    assert!(
        env.workflow_dir("w").join("state.json").exists(),
        "the store is at the git top level"
    );
    let custom = env.dir.path().join("elsewhere");
    let output = env
        .cmd()
        .args(["init", "x", "--phase", "a"])
        .env("CHECKPOINT_DIR", &custom)
        .output()
        .unwrap();
    assert!(output.status.success());
    assert!(custom.join("x").join("journal.jsonl").exists());
    let bare = TestEnv::bare();
    bare.ok(&["init", "y", "--phase", "a"]);
    assert!(
        bare.workflow_dir("y").exists(),
        "outside git the current directory is the root"
    );
}

#[test]
fn schema_is_published_and_current() {
    let env = TestEnv::new();
    let schema = env.ok(&["schema"]);
    let committed_path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/state.schema.json");
    let committed = std::fs::read_to_string(&committed_path).unwrap_or_default();
    if committed != schema {
        std::fs::write(&committed_path, &schema).unwrap();
        panic!(
            "docs/state.schema.json was stale and has been rewritten: run `cargo xtask codegen` and commit it"
        );
    }
    let parsed: serde_json::Value = serde_json::from_str(&schema).unwrap();
    assert_eq!(parsed["title"], "Workflow");
}

#[test]
fn completions_are_generated() {
    let env = TestEnv::new();
    assert!(env.ok(&["completions", "bash"]).contains("checkpoint"));
}

/// `checkpoint --help` ends with the exit codes `docs/commands.md` documents, each as it says.
#[test]
fn help_lists_the_exit_codes_of_the_readme() {
    let env = TestEnv::new();
    let help = env.ok(&["--help"]);
    let help = help.split_whitespace().collect::<Vec<_>>().join(" ");
    let readme = include_str!("../../../../docs/commands.md");
    let section = readme
        .split("### Exit codes")
        .nth(1)
        .expect("docs/commands.md has an exit-code section");
    let rows: Vec<(&str, &str)> = section
        .lines()
        .skip_while(|line| !line.starts_with('|'))
        .take_while(|line| line.starts_with('|'))
        .skip(2)
        .map(|row| {
            let cells: Vec<&str> = row.trim_matches('|').split(" | ").map(str::trim).collect();
            (cells[0], cells[1])
        })
        .collect();
    assert_eq!(rows.len(), 12, "{rows:?}");
    for (code, meaning) in rows {
        assert!(
            help.contains(&format!("{code} {meaning}")),
            "`--help` lacks exit code {code}: {meaning}\n{help}"
        );
    }
}

/// Every `--help` lists the global options under their own heading, once, without a paragraph
/// per `--format`/`--color` value, and `-h` opens with the same sentence as `--help`.
#[test]
fn help_puts_global_options_under_their_own_heading() {
    let env = TestEnv::new();
    let help = env.ok(&["start", "--help"]);
    let (own, global) = help
        .split_once("Global options:")
        .unwrap_or_else(|| panic!("no `Global options:` heading\n{help}"));
    assert!(own.contains("--force"), "{help}");
    for flag in ["--format", "--color", "--dir", "--workflow"] {
        assert!(
            !own.contains(flag),
            "`{flag}` is among the command's own options\n{help}"
        );
        assert!(global.contains(flag), "`{flag}` is missing\n{help}");
    }
    assert!(!help.contains("Possible values"), "{help}");
    assert_eq!(help.matches("mermaid").count(), 1, "{help}");

    for command in [&[][..], &["init"], &["resume"], &["task", "add"]] {
        let first_line = |flag: &str| {
            let mut args = command.to_vec();
            args.push(flag);
            env.ok(&args).lines().next().unwrap_or_default().to_owned()
        };
        assert_eq!(first_line("-h"), first_line("--help"), "{command:?}");
    }
}

/// Runs `checkpoint` and returns its exit code and rendered output.
fn exit_of(env: &TestEnv, cmd: &mut std::process::Command) -> (Option<i32>, String) {
    let output = cmd.output().unwrap();
    (output.status.code(), crate::support::render(env, &output))
}

#[test]
fn every_documented_exit_code_class_has_a_case() {
    let env = TestEnv::new();
    env.ok(&["init", "w", "--phase", "a", "--phase", "b:a"]);
    type Case<'a> = (i32, Vec<&'a str>, &'a [(&'a str, &'a str)], &'a str);
    let cases: Vec<Case> = vec![
        (0, vec!["status"], &[], ""),
        // Invalid input is 2, wherever it comes from.
        (
            2,
            vec!["pause", "--reason", "x", "--until", "yesterday"],
            &[],
            "--until yesterday",
        ),
        (
            2,
            vec!["init", "v", "--plan", "/nonexistent"],
            &[],
            "failed to read plan file",
        ),
        (
            2,
            vec!["status"],
            &[("CHECKPOINT_LOCK_TIMEOUT", "abc")],
            "CHECKPOINT_LOCK_TIMEOUT=abc",
        ),
        (
            2,
            vec!["init", "failed", "--phase", "a"],
            &[],
            "the store uses the name",
        ),
        (2, vec!["start"], &[], "required"),
        // A refusal is 3.
        (3, vec!["archive"], &[], "not finished"),
        (
            3,
            vec!["fork", "1", "--as", "w"],
            &[],
            "pick another id for `--as`",
        ),
        // Not found is 4.
        (4, vec!["diff", "0"], &[], "no journal entry 0"),
        (2, vec!["restore", "/etc"], &[], "is not an archive"),
        (
            4,
            vec!["restore", "nosuch_20260301_120000"],
            &[],
            "no archive",
        ),
        (4, vec!["start", "nosuch"], &[], "nosuch"),
    ];
    for (code, args, vars, expect) in cases {
        let mut cmd = env.cmd();
        cmd.args(&args).envs(vars.iter().copied());
        let (got, rendered) = exit_of(&env, &mut cmd);
        assert_eq!(got, Some(code), "{args:?}\n{rendered}");
        assert!(rendered.contains(expect), "{args:?}\n{rendered}");
    }
    let (_, restore) = exit_of(&env, env.cmd().args(["restore", "/etc"]));
    assert!(!restore.contains("checkpoint init /etc"), "{restore}");
    let (_, fork) = exit_of(&env, env.cmd().args(["fork", "1", "--as", "w"]));
    assert!(!fork.contains("--fresh"), "{fork}");

    // Locked is 5: another process holds the workflow's lock.
    let lock = std::fs::File::create(env.workflow_dir("w").join("lock")).unwrap();
    lock.lock().unwrap();
    let (got, rendered) = exit_of(
        &env,
        env.cmd()
            .args(["note", "x"])
            .env("CHECKPOINT_LOCK_TIMEOUT", "0.1"),
    );
    assert_eq!(got, Some(5), "{rendered}");
    lock.unlock().unwrap();

    // Validation errors are 8: a phase done before its dependency.
    env.ok(&["start", "b", "--force"]);
    env.ok(&["complete", "b", "--force"]);
    let (got, rendered) = exit_of(&env, env.cmd().arg("validate"));
    assert_eq!(got, Some(8), "{rendered}");

    // Untrusted state is 6: a state and a journal that are not ours.
    for file in ["state.json", "journal.jsonl"] {
        std::fs::write(env.workflow_dir("w").join(file), "not json at all\n").unwrap();
    }
    let (got, rendered) = exit_of(&env, env.cmd().arg("status"));
    assert_eq!(got, Some(6), "{rendered}");

    // An unexpected failure is 1: the workflow's directory is a file.
    std::fs::remove_dir_all(env.workflow_dir("w")).unwrap();
    std::fs::write(env.workflow_dir("w"), "a file").unwrap();
    let (got, rendered) = exit_of(&env, env.cmd().args(["--workflow", "w", "status"]));
    assert_eq!(got, Some(1), "{rendered}");
    // Exit code 7 needs a directory that refuses new files after the journal took the write:
    // `an_unwritable_checkpoint_directory_is_a_clean_error` covers it.
}

/// Runs `checkpoint` with stdout and stderr both a pipe nobody reads any more (`… 2>&1 | head`
/// after `head` exited), `stdin` as given; returns its exit code.
fn with_closed_pipes(env: &TestEnv, args: &[&str], stdin: std::process::Stdio) -> Option<i32> {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let status = env
        .cmd()
        .args(args)
        .stdin(stdin)
        .stdout(writer.try_clone().unwrap())
        .stderr(writer)
        .status()
        .unwrap();
    status.code()
}

#[test]
fn a_closed_pipe_ends_every_command_quietly_with_its_own_exit_code() {
    let env = TestEnv::new();
    three_phases(&env);
    env.ok(&["start", "design"]);
    env.ok(&["note", "a note"]);
    // An invalid workflow: `validate` exits 8 and prints findings on both streams.
    let state_path = env.workflow_dir("payments").join("state.json");
    let mut state = env.state("payments");
    state["phases"][1]["status"] = "complete".into();
    std::fs::write(&state_path, serde_json::to_string(&state).unwrap()).unwrap();
    let cases: &[(&[&str], i32)] = &[
        (&["validate", "--format", "json"], 8),
        (&["validate"], 8),
        (&["status"], 0),
        (&["--format", "json", "status"], 0),
        (&["log"], 0),
        (&["list"], 0),
        (&["resume", "--dry-run"], 0),
        (&["report"], 0),
        (&["--help"], 0),
        (&["status", "--help"], 0),
        (&["--version"], 0),
        (&["nosuchcommand"], 2),
        (&["start", "nosuchphase"], 4),
        (&["complete", "docs"], 3),
    ];
    for (args, code) in cases {
        let got = with_closed_pipes(&env, args, std::process::Stdio::null());
        assert_eq!(got, Some(*code), "{args:?}: never an abort or a panic");
    }
    // The hook, whatever it has to say, exits 0.
    let payload = env.project().join("payload.json");
    std::fs::write(
        &payload,
        crate::support::hook_payload(
            &env,
            "SessionStart",
            serde_json::json!({"source": "resume"}),
        ),
    )
    .unwrap();
    let stdin = std::fs::File::open(&payload).unwrap();
    assert_eq!(
        with_closed_pipes(&env, &["hook", "SessionStart"], stdin.into()),
        Some(0)
    );
}
