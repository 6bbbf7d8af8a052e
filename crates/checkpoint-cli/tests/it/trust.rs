//! Trust under hostile input (issue 15): secrets of every common kind stay out of the store and
//! out of git, names the store uses are refused, control characters are escaped, exit codes
//! follow the documented table, and hooks act on a complete payload without waiting for EOF.

use std::fs;

use crate::{
    lifecycle::repo,
    support::{TestEnv, exits_by_itself, finish_guarded, git, render},
};

/// The secrets the issue found stored verbatim, one of each kind, made up.
const ISSUE_SECRETS: &[&str] = &[
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "AIzaSyD-1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6",
    "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
    "rk_live_51H8x2Lj3kQ9mN4pR7sT0uV",
    "postgres://app:Pa55w0rd-db@db.internal:5432/prod",
    "mongodb+srv://admin:Mong0Pass@cluster0.example.net/db",
    "https://deploy:HttpsPass9@git.example.com/repo.git",
    "npm_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
    "hf_AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh",
    "glpat-Ab1Cd2Ef3Gh4Ij5Kl6Mn",
    "--password FlagPass42",
    "APP_SECRET=AppSecret42",
    "SIGNING_PRIVATE_KEY=PrivKey42",
    "GPG_PASSPHRASE=Phrase42",
    "MYSQL_PWD=MyPwd42",
    "SMTP_PASS=SmtpPass42",
    "AWS_CREDENTIALS=Creds42",
    "SSHPASS=SshPass42",
    "AccountKey=QWNjb3VudEtleTQy;",
];

/// The part of each of [`ISSUE_SECRETS`] that must never reach the disk.
fn sensitive(secret: &str) -> &str {
    if let Some(rest) = secret.split_once("://").map(|(_, rest)| rest) {
        let userinfo = rest.split('@').next().unwrap();
        return userinfo.split_once(':').unwrap().1;
    }
    match secret.split_once(['=', ' ']) {
        Some((_, value)) => value.trim_end_matches(';'),
        None => secret,
    }
}

#[test]
fn secrets_of_every_kind_in_the_issue_never_reach_the_disk() {
    let env = TestEnv::new();
    let all = ISSUE_SECRETS.join(" ; ");
    env.ok(&["init", "w", "--phase", "a", "--title", &format!("t {all}")]);
    env.ok(&["start", "a"]);
    env.ok(&["note", &all]);
    env.ok(&["decide", &all]);
    env.ok(&["progress", "a", &all]);
    env.ok(&["complete", "a", "--artifact", ISSUE_SECRETS[0]]);
    let dir = env.workflow_dir("w");
    for entry in fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            continue;
        }
        let text = String::from_utf8_lossy(&fs::read(&path).unwrap()).into_owned();
        for secret in ISSUE_SECRETS {
            let value = sensitive(secret);
            assert!(!text.contains(value), "{value} reached {}", path.display());
        }
    }
}

#[test]
fn checkpoint_commits_leave_out_secret_files_and_say_why() {
    let env = repo();
    let project = env.project();
    let outside = env.dir.path().join("outside.txt");
    fs::write(&outside, "not the project's").unwrap();
    fs::write(project.join("work.txt"), "the phase's work\n").unwrap();
    fs::write(project.join(".env"), "DEBUG=1\n").unwrap();
    fs::write(project.join(".env.example"), "API_URL=http://localhost\n").unwrap();
    fs::create_dir_all(project.join("certs")).unwrap();
    fs::write(project.join("certs/server.pem"), "not even a key\n").unwrap();
    fs::write(project.join("id_rsa.pub"), "ssh-rsa AAAA\n").unwrap();
    fs::write(
        project.join("config.js"),
        "const key = \"AIzaSyD-1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6\";\n",
    )
    .unwrap();
    std::os::unix::fs::symlink(&outside, project.join("escape")).unwrap();
    std::os::unix::fs::symlink("work.txt", project.join("inside")).unwrap();
    env.ok(&["init", "w", "--phase", "a"]);
    env.ok(&["start", "a"]);
    let output = env.run(&["--format", "json", "complete", "a", "--commit"]);
    assert!(output.status.success(), "{}", render(&env, &output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    for line in [
        "warning: left `.env` out of the checkpoint commit: its name matches `.env`",
        "warning: left `certs/server.pem` out of the checkpoint commit: its name matches `*.pem`",
        "warning: left `id_rsa.pub` out of the checkpoint commit: its name matches `id_rsa*`",
        "warning: left `config.js` out of the checkpoint commit: it holds a secret (gcp-api-key)",
        "warning: left `escape` out of the checkpoint commit: it is a symbolic link to",
    ] {
        assert!(stderr.contains(line), "{line}\n{stderr}");
    }
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let commit = &report["checkpoint_commit"];
    let head = git(&project, &["rev-parse", "HEAD"]);
    assert_eq!(commit["sha"], head.trim());
    let left_out: Vec<(&str, &str)> = commit["left_out"]
        .as_array()
        .unwrap()
        .iter()
        .map(|file| {
            (
                file["path"].as_str().unwrap(),
                file["reason"]["reason"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        left_out,
        [
            (".env", "secret_name"),
            ("certs/server.pem", "secret_name"),
            ("config.js", "secret_content"),
            ("escape", "symlink_outside"),
            ("id_rsa.pub", "secret_name"),
        ]
    );
    let committed = git(&project, &["show", "--name-only", "--format=", "HEAD"]);
    let committed: Vec<&str> = committed.lines().collect();
    for wanted in [
        "work.txt",
        ".env.example",
        "inside",
        ".claude/checkpoints/w/state.json",
    ] {
        assert!(committed.contains(&wanted), "{wanted}: {committed:?}");
    }
    for unwanted in [
        ".env",
        "certs/server.pem",
        "config.js",
        "escape",
        "id_rsa.pub",
    ] {
        assert!(!committed.contains(&unwanted), "{unwanted}: {committed:?}");
    }
    // What was left out is still there, untracked, for the user to decide.
    let status = git(&project, &["status", "--porcelain"]);
    assert!(
        status.contains("?? .env\n") && status.contains("?? config.js\n"),
        "{status}"
    );
}

/// Makes workflow `id` as a binary from before reserved ids were refused would have: created
/// under another id, then renamed in its files and directory.
fn legacy_workflow(env: &TestEnv, id: &str, phases: &[&str]) {
    let stand_in = "stand-in-for-a-legacy-id";
    let mut args = vec!["init", stand_in];
    for phase in phases {
        args.extend(["--phase", phase]);
    }
    env.ok(&args);
    let from = env.workflow_dir(stand_in);
    for file in ["state.json", "journal.jsonl"] {
        let path = from.join(file);
        let text = fs::read_to_string(&path).unwrap();
        fs::write(&path, text.replace(stand_in, id)).unwrap();
    }
    fs::rename(&from, env.workflow_dir(id)).unwrap();
}

#[test]
fn ids_the_store_uses_are_refused_and_old_ones_stay_readable() {
    let env = TestEnv::new();
    for id in ["config.toml", "failed", "FAILED", "lock", "archive"] {
        let output = env.run(&["init", id, "--phase", "a"]);
        let rendered = render(&env, &output);
        assert_eq!(output.status.code(), Some(2), "{rendered}");
        assert!(
            rendered.contains("the store uses the name") && rendered.contains("choose another id"),
            "{rendered}"
        );
        assert!(!env.store().join(id).exists(), "{id} was created");
    }
    let output = env.run(&["init", ".", "--phase", "a"]);
    let rendered = render(&env, &output);
    assert!(
        rendered.contains("it is `.`") && !rendered.contains("contains `..`"),
        "{rendered}"
    );

    // A store from before: a workflow named `config.toml` and one named `failed`.
    legacy_workflow(&env, "config.toml", &["a"]);
    legacy_workflow(&env, "failed", &["a"]);
    env.ok(&["init", "other", "--phase", "a"]);
    let output = env.run(&["--workflow", "config.toml", "status"]);
    let rendered = render(&env, &output);
    assert_eq!(output.status.code(), Some(0), "{rendered}");
    assert!(
        rendered.contains("is a directory (a workflow of that name?)"),
        "{rendered}"
    );
    assert!(
        rendered.contains("the workflow `failed` has the name"),
        "{rendered}"
    );
    env.ok(&["--workflow", "failed", "status"]);
    // Archiving a failed workflow does not land inside the live `failed` workflow.
    env.ok(&["--workflow", "other", "start", "a"]);
    env.ok(&["--workflow", "other", "fail", "a", "--reason", "broke"]);
    env.ok(&["--workflow", "other", "archive"]);
    let inside: Vec<_> = fs::read_dir(env.workflow_dir("failed"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with("other"))
        .collect();
    assert!(inside.is_empty(), "{inside:?}");
    let list = env.ok(&["list"]);
    assert!(
        list.contains("failed") && list.contains("config.toml"),
        "{list}"
    );
    assert!(!list.contains("unreadable"), "{list}");
}

#[test]
fn control_characters_in_user_text_are_escaped_in_human_output() {
    let env = TestEnv::new();
    let hostile = "ok\u{1b}]0;pwned\u{7}\u{1b}[2J\rfake line\u{9b}31m";
    env.ok(&["init", "w", "--phase", "a", "--title", hostile]);
    env.ok(&["start", "a"]);
    env.ok(&["note", hostile]);
    env.ok(&["progress", "a", hostile]);
    for args in [
        &["status"][..],
        &["log"],
        &["list"],
        &["resume", "--dry-run"],
        &["fail", "a", "--reason", hostile],
    ] {
        let output = env.run(args);
        for stream in [&output.stdout, &output.stderr] {
            let text = String::from_utf8_lossy(stream);
            assert!(
                !text.contains(['\u{1b}', '\u{7}', '\r', '\u{9b}']),
                "{args:?} printed a raw control character: {text:?}"
            );
        }
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            args == ["list"]
                || stdout.contains(r"ok\u{1b}]0;pwned\u{7}\u{1b}[2J\rfake line\u{9b}31m"),
            "{args:?}: {stdout}"
        );
    }
    // With colour, only the colour sequences `checkpoint` writes stay raw.
    let coloured = env.ok(&["--color", "always", "status"]);
    assert!(
        coloured.contains("\u{1b}[") && coloured.contains("\u{1b}[0m"),
        "{coloured:?}"
    );
    assert!(
        !coloured.contains("\u{1b}]")
            && !coloured.contains("\u{1b}[2J")
            && !coloured.contains('\r'),
        "{coloured:?}"
    );
    // JSON is unaffected: the text comes back as it was written.
    let json = env.json(&["status"]);
    assert_eq!(json["workflow"]["context"]["notes"][0]["text"], hostile);
}

/// Issue 26: the bidirectional controls (embeddings, overrides, isolates, marks) reorder what
/// a terminal or a browser shows; every human view and the HTML report show them as escapes,
/// as the other control characters, and JSON keeps the text whole.
#[test]
fn bidirectional_controls_in_user_text_are_escaped_in_every_view() {
    let controls = [
        '\u{202a}', '\u{202b}', '\u{202c}', '\u{202d}', '\u{202e}', '\u{2066}', '\u{2067}',
        '\u{2068}', '\u{2069}', '\u{200e}', '\u{200f}', '\u{061c}',
    ];
    let hostile: String = controls
        .iter()
        .map(|c| format!("x{c}y"))
        .collect::<Vec<_>>()
        .join(" ");
    let env = TestEnv::new();
    env.ok(&[
        "init", "w", "--phase", "a", "--phase", "b:a", "--title", &hostile,
    ]);
    env.ok(&["start", "a"]);
    env.ok(&["note", &hostile]);
    env.ok(&["progress", "a", &hostile]);
    env.ok(&["complete", "a"]);
    env.ok(&["start", "b"]);
    env.ok(&["fail", "b", "--reason", &hostile]);
    env.ok(&["pause", "--reason", &hostile]);
    let expected = r"x\u{202e}y";
    for args in [
        &["status"][..],
        &["log"],
        &["list"],
        &["report"],
        &["watch", "--once"],
        &["resume", "--dry-run"],
        &["--color", "always", "status"],
        &["--color", "always", "log"],
    ] {
        let output = env.run(args);
        for stream in [&output.stdout, &output.stderr] {
            let text = String::from_utf8_lossy(stream);
            assert!(
                !text.contains(controls),
                "{args:?} printed a raw bidirectional control: {text:?}"
            );
        }
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            args == ["list"] || stdout.contains(expected),
            "{args:?}: {stdout}"
        );
    }
    env.ok(&["report", "--html", "night.html"]);
    let page = fs::read_to_string(env.project().join("night.html")).unwrap();
    assert!(!page.contains(controls), "raw in the HTML report");
    assert!(page.contains(expected), "{page}");
    let json = env.json(&["status"]);
    assert_eq!(
        json["workflow"]["context"]["notes"][0]["text"],
        hostile.as_str()
    );
}

/// Runs `checkpoint` and returns its exit code and rendered output.
fn exit_of(env: &TestEnv, cmd: &mut std::process::Command) -> (Option<i32>, String) {
    let output = cmd.output().unwrap();
    (output.status.code(), render(env, &output))
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
        (4, vec!["restore", "/etc"], &[], "is not an archive"),
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
    let lock = fs::File::create(env.workflow_dir("w").join("lock")).unwrap();
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
        fs::write(env.workflow_dir("w").join(file), "not json at all\n").unwrap();
    }
    let (got, rendered) = exit_of(&env, env.cmd().arg("status"));
    assert_eq!(got, Some(6), "{rendered}");

    // An unexpected failure is 1: the workflow's directory is a file.
    fs::remove_dir_all(env.workflow_dir("w")).unwrap();
    fs::write(env.workflow_dir("w"), "a file").unwrap();
    let (got, rendered) = exit_of(&env, env.cmd().args(["--workflow", "w", "status"]));
    assert_eq!(got, Some(1), "{rendered}");
    // Exit code 7 needs a directory that refuses new files after the journal took the write:
    // `an_unwritable_checkpoint_directory_is_a_clean_error` covers it.
}

/// Spawns a hook, writes `payload` to its stdin and keeps stdin open; returns the child and
/// the open stdin.
fn hook_with_open_stdin(
    env: &TestEnv,
    event: &str,
    payload: &[u8],
) -> (std::process::Child, std::process::ChildStdin) {
    use std::io::Write as _;
    let mut child = env.spawn_hook(event);
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(payload).unwrap();
    stdin.flush().unwrap();
    (child, stdin)
}

#[test]
fn hooks_act_on_a_complete_payload_while_stdin_stays_open() {
    let env = TestEnv::new();
    env.ok(&["init", "w", "--phase", "a"]);
    env.ok(&["start", "a"]);
    let payload = serde_json::json!({
        "session_id": "open-stdin", "transcript_path": "/t", "cwd": env.project(),
        "hook_event_name": "Stop", "stop_hook_active": false,
    });
    let (mut child, stdin) = hook_with_open_stdin(&env, "Stop", payload.to_string().as_bytes());
    let status = exits_by_itself(&mut child, std::time::Duration::from_secs(30));
    drop(stdin);
    assert_eq!(
        status.and_then(|status| status.code()),
        Some(0),
        "the hook waited for EOF"
    );
    let state = env.state("w");
    assert_eq!(state["last_activity"]["source"], "Stop");
    assert_eq!(state["last_activity"]["session_id"], "open-stdin");

    // An incomplete payload is given up at the deadline, with a warning and exit code 0.
    let (mut child, stdin) = hook_with_open_stdin(&env, "Stop", br#"{"session_id": "cut"#);
    let status = exits_by_itself(&mut child, std::time::Duration::from_secs(30));
    drop(stdin);
    assert_eq!(
        status.and_then(|status| status.code()),
        Some(0),
        "the hook hung"
    );
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("no complete JSON payload"), "{stderr}");
    assert_eq!(env.state("w")["last_activity"]["session_id"], "open-stdin");
}

#[test]
fn a_long_list_of_ready_phases_is_cut_with_a_count() {
    let env = TestEnv::new();
    let mut args = vec!["init".to_owned(), "w".to_owned()];
    for i in 0..40 {
        args.extend(["--phase".to_owned(), format!("p{i:02}")]);
    }
    env.ok(&args.iter().map(String::as_str).collect::<Vec<_>>());
    let plan = env.ok(&["resume", "--dry-run"]);
    let line = plan
        .lines()
        .find(|line| line.contains("also ready"))
        .unwrap_or_else(|| panic!("{plan}"));
    assert!(line.ends_with("p12 and 27 more"), "{line}");
    assert!(!line.contains("p13"), "{line}");
}

#[test]
fn schema_version_zero_is_refused_not_rewritten() {
    let env = TestEnv::new();
    env.ok(&["init", "w", "--phase", "a"]);
    let path = env.workflow_dir("w").join("state.json");
    let mut state = env.state("w");
    state["schema_version"] = 0.into();
    let text = serde_json::to_string_pretty(&state).unwrap();
    fs::write(&path, &text).unwrap();
    for args in [&["status"][..], &["start", "a"]] {
        let output = env.snapshot(args);
        assert!(output.starts_with("exit status: 6"), "{output}");
        assert!(
            output.contains("has schema version 0, which no `checkpoint` writes"),
            "{output}"
        );
    }
    assert_eq!(fs::read_to_string(&path).unwrap(), text);
}

#[test]
fn tasks_finish_only_in_a_phase_in_progress_and_done_tasks_do_not_fail() {
    let env = TestEnv::new();
    env.ok(&["init", "w", "--phase", "a", "--phase", "b:a"]);
    env.ok(&["task", "add", "a", "t1"]);
    env.ok(&["task", "add", "b", "t2"]);
    let journal = env.read("w", "journal.jsonl");
    // A pending phase, and a phase blocked by its dependency.
    for args in [["task", "done", "a", "t1"], ["task", "done", "b", "t2"]] {
        let output = env.snapshot(&args);
        assert!(output.starts_with("exit status: 3"), "{args:?}\n{output}");
        assert!(output.contains("start the phase first"), "{output}");
    }
    assert_eq!(
        env.read("w", "journal.jsonl"),
        journal,
        "a refusal writes nothing"
    );
    env.ok(&["start", "a"]);
    env.ok(&["task", "done", "a", "t1"]);
    let output = env.snapshot(&["task", "fail", "a", "t1", "--reason", "late"]);
    assert!(output.starts_with("exit status: 3"), "{output}");
    assert!(output.contains("task `t1` is already done"), "{output}");
    assert_eq!(env.state("w")["phases"][0]["tasks"][0]["status"], "done");
}

#[test]
fn resume_of_a_name_that_matches_nothing_is_not_found() {
    let env = TestEnv::new();
    env.ok(&["init", "real", "--phase", "a"]);
    env.ok(&["init", "other", "--phase", "a"]);
    env.ok(&["--workflow", "other", "start", "a"]);
    let journal = env.read("other", "journal.jsonl");
    for args in [
        &["resume", "nosuchwf"][..],
        &["resume", "nosuchwf", "--dry-run"],
    ] {
        let output = env.snapshot(args);
        assert!(output.starts_with("exit status: 4"), "{args:?}\n{output}");
        assert!(output.contains("nosuchwf"), "{output}");
        // The workflows there are, so the user can pick one.
        assert!(
            output.contains("`real`") && output.contains("`other`"),
            "{output}"
        );
        assert!(
            !output.contains("choosing as if none was named"),
            "{output}"
        );
    }
    assert_eq!(
        env.read("other", "journal.jsonl"),
        journal,
        "nothing was applied"
    );
    // Named, a workflow is resumed as before.
    env.ok(&["resume", "real", "--dry-run"]);
}

#[test]
fn an_unknown_config_key_is_a_warning_and_everything_keeps_working() {
    let env = TestEnv::new();
    env.ok(&["init", "w", "--phase", "a"]);
    fs::write(
        env.store().join("config.toml"),
        "stale_after_days = 3\nmax_in_progres = 1\n",
    )
    .unwrap();
    let output = env.run(&["start", "a"]);
    let rendered = render(&env, &output);
    assert_eq!(output.status.code(), Some(0), "{rendered}");
    assert!(
        rendered.contains("warning: unknown key `max_in_progres` in `")
            && rendered
                .contains("config.toml` line 2 (did you mean `max_in_progress`?): it is ignored"),
        "{rendered}"
    );
    // Hooks keep recording.
    let payload = serde_json::json!({
        "session_id": "s", "transcript_path": "/t", "cwd": env.project(),
        "hook_event_name": "Stop", "stop_hook_active": false,
    });
    let (mut child, stdin) = hook_with_open_stdin(&env, "Stop", payload.to_string().as_bytes());
    drop(stdin);
    assert_eq!(child.wait().unwrap().code(), Some(0));
    assert_eq!(env.state("w")["last_activity"]["source"], "Stop");
}

#[test]
fn a_missing_artifact_is_warned_about_at_complete() {
    let env = TestEnv::new();
    env.ok(&["init", "w", "--phase", "a", "--phase", "b"]);
    env.ok(&["start", "a"]);
    fs::write(env.project().join("here.md"), "x").unwrap();
    let output = env.run(&[
        "--format",
        "json",
        "complete",
        "a",
        "--artifact",
        "here.md",
        "--artifact",
        "gone.md",
    ]);
    let rendered = render(&env, &output);
    assert_eq!(output.status.code(), Some(0), "{rendered}");
    assert!(
        rendered.contains("warning: artifact `gone.md` does not exist"),
        "{rendered}"
    );
    assert!(!rendered.contains("artifact `here.md`"), "{rendered}");
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(
        report["warnings"],
        serde_json::json!([
            "artifact `gone.md` does not exist; `checkpoint resume` will ask about it"
        ])
    );
    // Without a missing artifact there is no `warnings` field.
    env.ok(&["start", "b"]);
    let report = env.json(&["complete", "b", "--artifact", "here.md"]);
    assert!(report.get("warnings").is_none(), "{report}");
}

#[test]
fn max_in_progress_is_enforced_on_start_and_in_the_plan() {
    let env = TestEnv::new();
    env.ok(&["init", "w", "--phase", "a", "--phase", "b", "--phase", "c"]);
    fs::write(env.store().join("config.toml"), "max_in_progress = 1\n").unwrap();
    let plan = env.json(&["resume", "--dry-run"]);
    assert_eq!(plan["plan"]["next"]["phase"], "a");
    let parallel = |plan: &serde_json::Value| plan["plan"]["next"]["parallel"].clone();
    assert!(
        parallel(&plan).as_array().is_none_or(Vec::is_empty),
        "one at a time: nothing runs beside the next phase: {plan}"
    );
    env.ok(&["start", "a"]);
    let journal = env.read("w", "journal.jsonl");
    let output = env.snapshot(&["start", "b"]);
    assert!(output.starts_with("exit status: 3"), "{output}");
    assert!(
        output.contains("`max_in_progress` is 1, and phase `a` is in progress"),
        "{output}"
    );
    assert_eq!(
        env.read("w", "journal.jsonl"),
        journal,
        "a refusal writes nothing"
    );
    env.ok(&["start", "b", "--force"]);

    // Two at a time: one phase runs beside the next.
    fs::write(env.store().join("config.toml"), "max_in_progress = 2\n").unwrap();
    env.ok(&["init", "v", "--phase", "a", "--phase", "b", "--phase", "c"]);
    let plan = env.json(&["--workflow", "v", "resume", "--dry-run"]);
    assert_eq!(parallel(&plan), serde_json::json!(["b"]), "{plan}");
}

#[test]
fn work_on_a_paused_workflow_lifts_the_pause_as_a_journaled_transition_and_says_so() {
    let env = TestEnv::new();
    env.ok(&["init", "w", "--phase", "a"]);
    env.ok(&["start", "a"]);
    env.ok(&[
        "pause",
        "--reason",
        "rate_limit",
        "--until",
        "2030-01-01T00:00:00Z",
    ]);
    let output = env.run(&["progress", "a", "halfway"]);
    let rendered = render(&env, &output);
    assert_eq!(output.status.code(), Some(0), "{rendered}");
    assert!(
        rendered.contains(
            "unpaused: the workflow was paused (rate_limit) since 2026-03-01T12:00:00+00:00"
        ),
        "{rendered}"
    );
    assert!(
        rendered.contains(
            "warning: the pause was until 2030-01-01T00:00:00+00:00, still in the future"
        ),
        "{rendered}"
    );
    let journal = env.read("w", "journal.jsonl");
    let kinds: Vec<String> = journal
        .lines()
        .map(|line| {
            let entry: serde_json::Value = serde_json::from_str(line).unwrap();
            entry["transition"]["op"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        })
        .collect();
    assert_eq!(
        kinds[kinds.len() - 2..],
        ["unpause", "phase_progress"],
        "{journal}"
    );
    assert!(env.state("w")["pause"].is_null());
    // Without a pause, nothing is said and nothing extra is journaled.
    let output = env.run(&["progress", "a", "more"]);
    assert!(!String::from_utf8_lossy(&output.stderr).contains("unpaused"));
    assert_eq!(
        env.read("w", "journal.jsonl").lines().count(),
        kinds.len() + 1
    );
}

#[test]
fn a_state_over_the_read_limit_is_refused_at_write_time() {
    let env = TestEnv::new();
    // 65 MiB of description: over the 64 MiB that readers accept.
    let description = "a".repeat(65 * 1024 * 1024);
    let plan = env.dir.path().join("plan.json");
    fs::write(
        &plan,
        serde_json::json!({"description": description, "phases": [{"id": "a"}]}).to_string(),
    )
    .unwrap();
    let output = env.snapshot(&["init", "w", "--plan", plan.to_str().unwrap()]);
    assert!(
        output.starts_with("exit status: 3"),
        "{}",
        &output[..output.len().min(2000)]
    );
    assert!(
        output.contains("bytes, over the limit of 67108864 bytes")
            && output.contains("nothing was written"),
        "{}",
        &output[..output.len().min(2000)]
    );
    assert!(!env.workflow_dir("w").join("journal.jsonl").exists());
    assert!(!env.workflow_dir("w").join("state.json").exists());
    // Nothing is left behind: no empty workflow directory that `list` or `init` trips over.
    assert!(!env.workflow_dir("w").exists());
    // The id stays free.
    env.ok(&["init", "w", "--phase", "a"]);
}

/// Runs `checkpoint` with `args`, giving up (and killing it) after a generous patience: a
/// guard against a hang, not a timing goal. Returns (exit code, stderr), `None` when it hung.
fn run_guarded(env: &TestEnv, args: &[&str]) -> Option<(i32, String)> {
    let child = env
        .cmd()
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    finish_guarded(child)
}

/// A plan or a seed file that is a FIFO, a device, a link to a device or a directory is
/// refused at once with an error naming it; nothing waits on it, reads it without end, or is
/// created.
#[test]
fn files_of_others_that_are_not_regular_files_are_refused_never_waited_on() {
    let env = TestEnv::new();
    let project = env.project();
    assert!(
        std::process::Command::new("mkfifo")
            .arg(project.join("fifo.json"))
            .status()
            .unwrap()
            .success()
    );
    std::os::unix::fs::symlink("/dev/zero", project.join("zero.json")).unwrap();
    fs::create_dir(project.join("dir.toml")).unwrap();
    for path in ["fifo.json", "zero.json", "/dev/zero", "dir.toml"] {
        let cases: [&[&str]; 3] = [
            &["init", "w", "--plan", path],
            &["import", path, "--from", "orchestkit"],
            &["import", path],
        ];
        for args in cases {
            let Some((code, stderr)) = run_guarded(&env, args) else {
                panic!("`{}` hung", args.join(" "));
            };
            assert_ne!(code, 0, "{args:?}: {stderr}");
            let name = path.trim_end_matches(".json").trim_end_matches(".toml");
            assert!(stderr.contains(name), "{args:?}: {stderr}");
        }
    }
    assert!(!env.workflow_dir("w").exists(), "nothing was created");
    // The FIFO of a settings file does not hang a command either.
    fs::create_dir_all(env.store()).unwrap();
    assert!(
        std::process::Command::new("mkfifo")
            .arg(env.store().join("config.toml"))
            .status()
            .unwrap()
            .success()
    );
    let Some((_, stderr)) = run_guarded(&env, &["list"]) else {
        panic!("`list` hung on a FIFO `config.toml`");
    };
    assert!(stderr.contains("config.toml"), "{stderr}");
}

/// Every path that reaches the store is checked by the same rule (no `..`, nothing outside the
/// project, no link leading out): task outputs and context files from the CLI (which the MCP
/// tools run), artifacts, and the outputs of an imported file; and no file outside the project
/// completes a phase or a task through the hook or the planner.
#[test]
fn paths_outside_the_project_never_reach_the_store_nor_complete_work() {
    let env = TestEnv::new();
    let project = env.project();
    let elsewhere = env.dir.path().join("elsewhere");
    fs::create_dir_all(&elsewhere).unwrap();
    fs::write(elsewhere.join("a.md"), "not the project's").unwrap();
    fs::create_dir_all(project.join("out")).unwrap();
    std::os::unix::fs::symlink(&elsewhere, project.join("linked")).unwrap();
    fs::write(
        project.join("plan.json"),
        r#"{"phases": [{"id": "a", "outputs": ["out/a.md"]}, {"id": "b", "dependencies": ["a"]}]}"#,
    )
    .unwrap();
    env.ok(&["init", "w", "--plan", "plan.json"]);
    env.ok(&["start", "a"]);
    let before = env.read("w", "journal.jsonl");
    let outside = [
        "/etc/passwd",
        "../../../etc/hostname",
        "out/../../x",
        "linked/a.md",
        elsewhere.join("a.md").to_str().unwrap(),
    ]
    .map(str::to_owned);
    for path in &outside {
        for args in [
            vec!["task", "add", "a", "t3", "--output", path],
            vec!["task", "done", "a", "t3", "--output", path],
            vec!["files", path],
            vec!["complete", "a", "--artifact", path],
        ] {
            let output = env.run(&args);
            assert_eq!(
                output.status.code(),
                Some(2),
                "{args:?}: {}",
                render(&env, &output)
            );
            let stderr = String::from_utf8_lossy(&output.stderr);
            assert!(stderr.contains("outside the project"), "{args:?}: {stderr}");
        }
    }
    assert_eq!(env.read("w", "journal.jsonl"), before, "nothing was stored");
    env.ok(&["files", "src/main.rs"]);
    assert_eq!(env.state("w")["context"]["file_paths"][0], "src/main.rs");

    // A declared output, and a task's, reached through a link leading out of the project.
    std::os::unix::fs::symlink(elsewhere.join("a.md"), project.join("out/a.md")).unwrap();
    let write = serde_json::json!({
        "session_id": "s",
        "transcript_path": "/tmp/transcript.jsonl",
        "cwd": project,
        "hook_event_name": "PostToolUse",
        "tool_name": "Write",
        "tool_input": {"file_path": project.join("out/a.md"), "content": "x"},
        "tool_response": {"type": "create"},
    });
    assert_eq!(env.hook("PostToolUse", &write.to_string()).wait().0, 0);
    let state = env.state("w");
    assert_eq!(state["phases"][0]["status"], "in_progress", "{state:#}");
    let plan = env.json(&["resume", "--dry-run"]);
    assert_eq!(
        plan["plan"]["recoveries"],
        serde_json::json!([]),
        "{plan:#}"
    );
    env.ok(&["task", "add", "a", "t1", "--output", "out/t1.md"]);
    env.ok(&["task", "start", "a", "t1"]);
    std::os::unix::fs::symlink(elsewhere.join("a.md"), project.join("out/t1.md")).unwrap();
    env.set_now("2026-03-01T18:00:00Z");
    let plan = env.json(&["resume", "--dry-run"]);
    let codes: Vec<&str> = plan["plan"]["recoveries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|recovery| recovery["code"].as_str().unwrap())
        .collect();
    assert!(
        !codes.contains(&"phase_output_present") && !codes.contains(&"task_output_present"),
        "{plan:#}"
    );

    // An imported file whose task names an output outside the project is refused whole.
    let other = TestEnv::new();
    let state_dir = other.project().join("memory/state");
    fs::create_dir_all(&state_dir).unwrap();
    fs::write(
        state_dir.join("phase.json"),
        r#"{"workflow_id": "wf", "current_phase": "IMPLEMENTATION", "phase_status": "in_progress"}"#,
    )
    .unwrap();
    for output in ["/etc/passwd", "../../etc/hostname"] {
        fs::write(
            state_dir.join("execution.json"),
            serde_json::json!({"tasks": [{"id": "t1", "status": "running", "output": output}]})
                .to_string(),
        )
        .unwrap();
        let result = other.run(&["import", "."]);
        assert_eq!(result.status.code(), Some(2), "{}", render(&other, &result));
        let stderr = String::from_utf8_lossy(&result.stderr);
        assert!(
            stderr.contains("outside the project") && stderr.contains("phase.json"),
            "{stderr}"
        );
        assert!(!other.workflow_dir("wf").exists());
    }
}
