//! The first hour: which workflow a command means (`checkpoint use`, and only unfinished
//! workflows making a choice ambiguous), the store kept out of git, "did you mean", a lock's
//! holder named, `init` outside a repository.

use crate::support::{TestEnv, git, repo, session_start_context};

/// A workflow `id` with phases `design` and `build`, created at `now`.
fn workflow(env: &TestEnv, id: &str, now: &str) {
    env.set_now(now);
    env.ok(&["init", id, "--phase", "design", "--phase", "build:design"]);
}

#[test]
fn finished_workflows_never_make_the_choice_ambiguous() {
    let env = TestEnv::new();
    workflow(&env, "old", "2026-03-01T09:00:00Z");
    workflow(&env, "newer", "2026-03-01T10:00:00Z");
    env.ok(&["abandon", "-w", "old", "--reason", "superseded"]);
    env.set_now("2026-03-01T11:00:00Z");
    for phase in ["design", "build"] {
        env.ok(&["complete", phase, "-w", "newer"]);
    }
    // None unfinished: the most recently active one, said to be finished.
    env.set_now("2026-03-01T12:00:00Z");
    let output = env.run(&["status"]);
    assert!(output.status.success(), "{output:?}");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stdout.starts_with("newer"), "{stdout}");
    assert!(stdout.contains("complete"), "{stdout}");
    assert!(
        stderr.contains("no workflow is unfinished: `newer`"),
        "{stderr}"
    );
    // The same rule for every command: `log` and `resume` mean it too.
    assert!(
        env.ok(&["log"]).contains("newer") || env.json(&["log"]).to_string().contains("complete")
    );
    // One unfinished among finished ones is meant, however old it is.
    workflow(&env, "ancient", "2026-01-01T00:00:00Z");
    env.set_now("2026-03-01T12:00:00Z");
    assert!(env.ok(&["status"]).starts_with("ancient"));
    assert_eq!(env.json(&["status"])["workflow"]["id"], "ancient");
    // Two unfinished are ambiguous: only those are listed, most recent first.
    workflow(&env, "fresh", "2026-02-01T00:00:00Z");
    env.set_now("2026-03-01T12:00:00Z");
    let output = env.run(&["status"]);
    assert_eq!(output.status.code(), Some(4));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("2 workflows are unfinished"), "{stderr}");
    assert!(stderr.contains("`fresh`, `ancient`"), "{stderr}");
    assert!(
        !stderr.contains("`old`") && !stderr.contains("`newer`"),
        "{stderr}"
    );
}

#[test]
fn use_chooses_the_workflow_every_command_and_hook_means_until_none() {
    let env = repo();
    workflow(&env, "main-line", "2026-03-01T09:00:00Z");
    env.ok(&["fork", "1", "--as", "experiment"]);
    env.set_now("2026-03-01T12:00:00Z");
    assert_eq!(env.run(&["status"]).status.code(), Some(4));
    // The older one, chosen: every command means it.
    let said = env.ok(&["use", "main-line"]);
    assert!(said.contains("`main-line`"), "{said}");
    assert!(env.ok(&["status"]).starts_with("main-line"));
    assert!(env.ok(&["status"]).contains("used in this worktree"));
    env.ok(&["start", "design"]);
    assert_eq!(env.state("main-line")["phases"][0]["status"], "in_progress");
    assert_eq!(env.state("experiment")["phases"][0]["status"], "pending");
    // `--workflow` still wins for one command.
    env.ok(&["note", "-w", "experiment", "tried it"]);
    assert!(env.read("experiment", "journal.jsonl").contains("tried it"));
    // `list` shows it, in text and JSON.
    let list = env.ok(&["list"]);
    let line = list
        .lines()
        .find(|line| line.starts_with("main-line"))
        .unwrap();
    assert!(line.contains("used here"), "{list}");
    let json = env.json(&["list"]);
    let used: Vec<&str> = json["workflows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|entry| entry["used"] == true)
        .map(|entry| entry["id"].as_str().unwrap())
        .collect();
    assert_eq!(used, ["main-line"]);
    // The session-start hook briefs it first, though the other was active more recently.
    env.set_now("2026-03-01T12:30:00Z");
    env.ok(&["note", "-w", "experiment", "more recent"]);
    let context = session_start_context(&env);
    let at_used = context.find("main-line").unwrap();
    let at_other = context.find("experiment").unwrap_or(usize::MAX);
    assert!(at_used < at_other, "{context}");
    // Stored with the store, never committed nor pushed: git does not see it.
    let status = git(
        &env.project(),
        &["status", "--porcelain", "--untracked-files=all"],
    );
    assert!(!status.contains("checkpoints"), "{status}");
    // `use --none`: the rule decides again.
    env.ok(&["use", "--none"]);
    assert_eq!(env.run(&["status"]).status.code(), Some(4));
    // A choice whose workflow went away says how to choose again.
    env.ok(&["use", "experiment"]);
    std::fs::remove_dir_all(env.workflow_dir("experiment")).unwrap();
    let output = env.run(&["status"]);
    assert_eq!(output.status.code(), Some(4));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("`checkpoint use --none`"), "{stderr}");
    // A typo is not stored, and gets the closest id.
    let output = env.run(&["use", "main-lien"]);
    assert_eq!(output.status.code(), Some(4));
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("did you mean `main-line`?"),
        "{output:?}"
    );
}

#[test]
fn the_store_is_never_committed_and_never_in_git_status() {
    let env = repo();
    let project = env.project();
    workflow(&env, "w", "2026-03-01T09:00:00Z");
    env.ok(&["start", "design"]);
    // The store's private files, as crashes and repairs leave them.
    let dir = env.workflow_dir("w");
    std::fs::write(dir.join("state.json.corrupt-2026"), "{").unwrap();
    std::fs::write(dir.join("journal.jsonl.torn-2026"), "{").unwrap();
    std::fs::write(dir.join(".state.json.tmp-1"), "{").unwrap();
    env.ok(&["use", "w"]);
    std::fs::write(project.join("work.txt"), "done\n").unwrap();
    env.ok(&["complete", "design", "--commit"]);
    let committed = git(&project, &["show", "--name-only", "--format=", "HEAD"]);
    assert_eq!(committed.trim(), "work.txt");
    let status = git(
        &project,
        &["status", "--porcelain", "--untracked-files=all"],
    );
    assert_eq!(status, "", "nothing of the store shows");
    assert!(
        std::fs::read_to_string(env.store().join(".gitignore"))
            .unwrap()
            .lines()
            .any(|line| line == "*")
    );
    // A copy committed before the store ignored itself is never committed again.
    git(&project, &["add", "-f", ".claude/checkpoints/w/state.json"]);
    git(&project, &["commit", "-q", "-m", "an old habit"]);
    std::fs::write(project.join("more.txt"), "more\n").unwrap();
    env.ok(&["complete", "build", "--commit"]);
    let committed = git(&project, &["show", "--name-only", "--format=", "HEAD"]);
    assert_eq!(committed.trim(), "more.txt");
    // A store elsewhere in the project (`--dir`) ignores itself too.
    env.ok(&["--dir", "elsewhere", "init", "x", "--phase", "a"]);
    let status = git(
        &project,
        &["status", "--porcelain", "--untracked-files=all"],
    );
    assert!(!status.contains("elsewhere"), "{status}");
    // A user's own ignore file in the store is left as it is.
    std::fs::write(project.join("elsewhere/.gitignore"), "lock\n").unwrap();
    env.ok(&["--dir", "elsewhere", "start", "a"]);
    assert_eq!(
        std::fs::read_to_string(project.join("elsewhere/.gitignore")).unwrap(),
        "lock\n"
    );
}

#[test]
fn typos_get_the_closest_phase_task_workflow_and_effect() {
    let env = TestEnv::new();
    workflow(&env, "payments", "2026-03-01T09:00:00Z");
    let cases: [(&[&str], &str); 5] = [
        (&["start", "desgin"], "did you mean `design`?"),
        (&["complete", "biuld"], "did you mean `build`?"),
        (&["status", "-w", "paymnets"], "did you mean `payments`?"),
        (
            &["task", "start", "design", "tsk-1"],
            "did you mean `task-1`?",
        ),
        (&["effects", "allow", "122"], "did you mean `12`?"),
    ];
    env.ok(&["task", "add", "design", "task-1"]);
    env.ok(&["task", "add", "design", "review-notes"]);
    for n in 1..=12 {
        env.ok(&["effect", "design", &format!("sent mail {n}")]);
    }
    for (args, wanted) in cases {
        let output = env.run(args);
        assert!(!output.status.success(), "{args:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(wanted), "{args:?}: {stderr}");
    }
    // A name close to nothing gets no guess, only the list.
    let stderr =
        String::from_utf8_lossy(&env.run(&["start", "deploy-to-production"]).stderr).into_owned();
    assert!(!stderr.contains("did you mean"), "{stderr}");
    assert!(stderr.contains("phases are: `design`, `build`"), "{stderr}");
}

#[test]
fn waiting_on_a_lock_names_its_holder_and_what_to_do_when_it_is_gone() {
    let env = TestEnv::new();
    workflow(&env, "w", "2026-03-01T09:00:00Z");
    // Any write leaves its holder line in the lock file.
    env.ok(&["note", "first"]);
    let line = std::fs::read_to_string(env.workflow_dir("w").join("lock")).unwrap();
    assert!(line.starts_with("pid "), "{line}");
    assert!(line.contains("(`checkpoint note`)"), "{line}");
    assert!(line.contains("since 2026-03-01T09:00:00Z"), "{line}");
    // Held by another process: the waiting one names it, and times out naming it too.
    let lock_path = env.workflow_dir("w").join("lock");
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(&lock_path)
        .unwrap();
    file.lock().unwrap();
    std::fs::write(
        &lock_path,
        "pid 4242 (`checkpoint run`) since 2026-03-01T08:00:00Z\n",
    )
    .unwrap();
    let output = env
        .cmd()
        .args(["note", "second"])
        .env("CHECKPOINT_LOCK_TIMEOUT", "0.2")
        .output()
        .unwrap();
    file.unlock().unwrap();
    assert_eq!(output.status.code(), Some(5));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("held by pid 4242 (`checkpoint run`) since 2026-03-01T08:00:00Z"),
        "{stderr}"
    );
    assert!(stderr.contains("if that process is gone"), "{stderr}");
    assert!(stderr.contains("fuser"), "{stderr}");
}

#[test]
fn init_outside_a_git_repository_says_where_the_store_goes_and_why() {
    let env = TestEnv::bare();
    let output = env.run(&["init", "w", "--phase", "a"]);
    assert!(output.status.success(), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("not inside a git repository"), "{stderr}");
    assert!(stderr.contains(".claude/checkpoints"), "{stderr}");
    assert!(stderr.contains("git init"), "{stderr}");
    // Inside a repository, nothing to say.
    let env = TestEnv::new();
    let output = env.run(&["init", "w", "--phase", "a"]);
    assert!(!String::from_utf8_lossy(&output.stderr).contains("git repository"));
    // A subdirectory of a repository: the store is at the top level, also without a word.
    std::fs::create_dir_all(env.project().join("sub")).unwrap();
    let output = env
        .cmd()
        .current_dir(env.project().join("sub"))
        .args(["init", "v", "--phase", "a"])
        .output()
        .unwrap();
    assert!(output.status.success());
    assert!(!String::from_utf8_lossy(&output.stderr).contains("git repository"));
    assert!(env.workflow_dir("v").join("state.json").exists());
}

#[test]
fn graph_draws_the_dag_in_the_terminal_and_gates_show_before_they_are_reached() {
    let env = TestEnv::new();
    let plan = env.project().join("plan.json");
    std::fs::write(
        &plan,
        r#"{"phases": [{"id": "design"}, {"id": "build", "dependencies": ["design"]}, {"id": "docs", "dependencies": ["design"]}, {"id": "release", "dependencies": ["build", "docs"], "requires_approval": true}]}"#,
    )
    .unwrap();
    env.ok(&["init", "w", "--plan", "plan.json"]);
    env.ok(&["start", "design"]);
    env.ok(&["complete", "design"]);
    env.ok(&["start", "build"]);
    let graph = env.ok(&["graph"]);
    let lines: Vec<&str> = graph.lines().collect();
    assert_eq!(lines[0], "w  in progress", "{graph}");
    assert!(lines[2].starts_with("✓ design  done"), "{graph}");
    assert!(lines[3].starts_with("├─ → build  in progress"), "{graph}");
    assert!(lines[4].starts_with("└─ · docs  ready"), "{graph}");
    assert!(
        lines[5].starts_with("   └─ · release  blocked by build")
            && lines[5].contains("◆ approval gate ahead")
            && lines[5].ends_with("(also after `build`)"),
        "{graph}"
    );
    // The gate in `status`, before it is reached, and no more once it is.
    let status = env.ok(&["status"]);
    let release = status
        .lines()
        .find(|line| line.contains("release"))
        .unwrap();
    assert!(release.contains("◆ approval gate ahead"), "{status}");
    assert!(
        !status
            .lines()
            .find(|line| line.contains("build"))
            .unwrap()
            .contains("gate")
    );
    // Mermaid and dot name it too.
    assert!(
        env.ok(&["graph", "--format", "mermaid"])
            .contains("release (pending, approval gate)")
    );
    assert!(
        env.ok(&["graph", "--format", "dot"])
            .contains("pending, approval gate")
    );
    for phase in ["build", "docs", "release"] {
        if phase != "build" {
            env.ok(&["start", phase]);
        }
        env.ok(&["complete", phase]);
    }
    let status = env.ok(&["status"]);
    assert!(!status.contains("gate ahead"), "{status}");
    assert!(status.contains("awaiting approval"), "{status}");
}

#[test]
fn setup_writes_a_command_a_teammate_can_run_into_the_project_and_paths_only_for_the_user() {
    for client in ["codex", "gemini"] {
        let env = repo();
        // `checkpoint` on the PATH: the project's files name it so, never by this machine's path.
        let bin_dir = crate::support::bin().parent().unwrap().to_owned();
        let path = std::env::join_paths(std::iter::once(bin_dir.clone()).chain(
            std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
        ))
        .unwrap();
        let output = env
            .cmd()
            .args(["setup", client])
            .env("PATH", &path)
            .output()
            .unwrap();
        assert!(output.status.success(), "{output:?}");
        let files: Vec<std::path::PathBuf> = match client {
            "codex" => vec![
                env.project().join(".codex/hooks.json"),
                env.project().join(".codex/config.toml"),
            ],
            _ => vec![env.project().join(".gemini/settings.json")],
        };
        for file in &files {
            let text = std::fs::read_to_string(file).unwrap_or_default();
            if text.is_empty() {
                continue;
            }
            assert!(
                !text.contains(&*bin_dir.to_string_lossy()),
                "{client}: {text}"
            );
            assert!(
                !text.contains(env.dir.path().to_str().unwrap()),
                "{client}: {text}"
            );
        }
        let all: String = files
            .iter()
            .map(|file| std::fs::read_to_string(file).unwrap_or_default())
            .collect();
        assert!(
            all.contains(&format!("checkpoint hook --client {client} SessionStart")),
            "{client}: {all}"
        );
        // Not on the PATH: the absolute path, said to be this machine's only.
        let env = repo();
        let output = env
            .cmd()
            .args(["setup", client])
            .env("PATH", "/usr/bin:/bin")
            .output()
            .unwrap();
        assert!(output.status.success(), "{output:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains("no `checkpoint` on your PATH"),
            "{client}: {stderr}"
        );
        // Another `checkpoint` first on the PATH is not this one: the absolute path, said why.
        let env = repo();
        let other = env.dir.path().join("other-bin");
        std::fs::create_dir_all(&other).unwrap();
        std::fs::write(other.join("checkpoint"), "#!/bin/sh\n").unwrap();
        let output = env
            .cmd()
            .args(["setup", client])
            .env(
                "PATH",
                format!("{}:{}", other.display(), path.to_string_lossy()),
            )
            .output()
            .unwrap();
        assert!(output.status.success(), "{output:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains("not this one"), "{client}: {stderr}");
        // The user's files name this binary by its path, wherever it is.
        let env = repo();
        let home = env.dir.path().join("home");
        let output = env
            .cmd()
            .args(["setup", client, "--scope", "user"])
            .env("PATH", &path)
            .env("CODEX_HOME", home.join(".codex"))
            .output()
            .unwrap();
        assert!(output.status.success(), "{output:?}");
        let user_file = match client {
            "codex" => home.join(".codex/hooks.json"),
            _ => home.join(".gemini/settings.json"),
        };
        let text = std::fs::read_to_string(&user_file).unwrap();
        let binary = std::fs::canonicalize(crate::support::bin()).unwrap();
        assert!(
            text.contains(&*binary.to_string_lossy()),
            "{client}: {text}"
        );
    }
}

#[test]
fn shell_completion_offers_the_phase_task_and_workflow_ids_of_the_store() {
    let env = TestEnv::new();
    workflow(&env, "payments", "2026-03-01T09:00:00Z");
    env.ok(&["task", "add", "build", "task-001"]);
    env.ok(&["task", "add", "build", "task-002"]);
    workflow(&env, "search", "2026-03-01T10:00:00Z");
    env.ok(&["use", "payments"]);
    let ids = |words: &[&str]| {
        let mut args = vec!["__complete"];
        args.extend_from_slice(words);
        env.ok(&args)
    };
    assert_eq!(ids(&["start"]), "design\nbuild\n");
    assert_eq!(ids(&["task", "done", "build"]), "task-001\ntask-002\n");
    assert_eq!(ids(&["use"]), "payments\nsearch\n");
    assert_eq!(ids(&["status", "-w"]), "payments\nsearch\n");
    assert_eq!(ids(&["-w", "search", "complete"]), "design\nbuild\n");
    assert_eq!(
        ids(&["progress", "design"]),
        "",
        "free text is not completed"
    );
    assert_eq!(ids(&["task", "done", "nosuch"]), "");
    // The bash script asks the store, and falls back to clap's completion of subcommands.
    let script = env.project().join("checkpoint.bash");
    std::fs::write(&script, env.ok(&["completions", "bash"])).unwrap();
    let bin_dir = crate::support::bin().parent().unwrap().to_owned();
    let complete = |line: &str| {
        let words: Vec<&str> = line.split(' ').collect();
        let program = format!(
            "source {}; COMP_WORDS=({}); COMP_CWORD={}; _checkpoint checkpoint '{}' '{}'; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
            script.display(),
            words
                .iter()
                .map(|word| format!("'{word}'"))
                .collect::<Vec<_>>()
                .join(" "),
            words.len() - 1,
            words[words.len() - 1],
            words[words.len() - 2],
        );
        let output = std::process::Command::new("bash")
            .args(["-c", &program])
            .current_dir(env.project())
            .env("PATH", format!("{}:/usr/bin:/bin", bin_dir.display()))
            .env("HOME", env.dir.path().join("home"))
            .env("CHECKPOINT_TEST_NOW", "2026-03-01T12:00:00Z")
            .output()
            .unwrap();
        String::from_utf8_lossy(&output.stdout).into_owned()
    };
    assert_eq!(complete("checkpoint start d"), "design\n");
    assert_eq!(
        complete("checkpoint task done build task-00"),
        "task-001\ntask-002\n"
    );
    assert_eq!(complete("checkpoint use s"), "search\n");
    assert!(
        complete("checkpoint sta")
            .lines()
            .any(|line| line == "status")
    );
    // zsh and fish call the same command where an id is expected.
    assert!(
        env.ok(&["completions", "zsh"])
            .contains("checkpoint __complete")
    );
    assert!(
        env.ok(&["completions", "fish"])
            .contains("checkpoint __complete")
    );
}

#[test]
fn the_main_commands_help_ends_with_examples_that_parse() {
    let env = TestEnv::new();
    for command in [
        "init",
        "start",
        "progress",
        "complete",
        "status",
        "use",
        "resume",
        "list",
        "log",
        "graph",
        "run",
        "push",
        "pull",
        "watch",
        "report",
        "completions",
    ] {
        let help = env.ok(&[command, "--help"]);
        let (_, examples) = help
            .rsplit_once("Examples:\n")
            .unwrap_or_else(|| panic!("`{command} --help` has no examples:\n{help}"));
        let lines: Vec<&str> = examples
            .lines()
            .filter(|line| !line.trim().is_empty())
            .collect();
        assert!((2..=3).contains(&lines.len()), "{command}: {examples}");
        assert!(
            lines
                .iter()
                .any(|line| line.contains(&format!("checkpoint {command}"))),
            "{command}: {examples}"
        );
        for line in lines {
            // The command itself, up to a pipe, a redirection or a comment; quotes kept whole.
            let line = line.trim();
            let at = line
                .find("checkpoint ")
                .unwrap_or_else(|| panic!("{command}: `{line}` runs no checkpoint"));
            let line = &line[at..];
            let end = line.find(['|', '>', '#']).unwrap_or(line.len());
            let mut words = Vec::new();
            let mut quoted = false;
            let mut word = String::new();
            for c in line[..end].chars() {
                match c {
                    '"' => quoted = !quoted,
                    ' ' if !quoted => {
                        if !word.is_empty() {
                            words.push(std::mem::take(&mut word));
                        }
                    }
                    _ => word.push(c),
                }
            }
            if !word.is_empty() {
                words.push(word);
            }
            if let Err(err) = checkpoint_cli::command().try_get_matches_from(&words) {
                panic!("`{line}` does not parse: {err}");
            }
        }
    }
}
