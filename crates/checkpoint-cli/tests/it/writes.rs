//! Several sessions and sub-agents in one checkout, through the real hooks: the write guard
//! before a file tool's write, what a whole read sees, a Bash command's overwrite reported,
//! whole-checkout commands, `who`, claims, and the record's robustness (kill -9, clocks, eight
//! writers at once).

use std::{path::Path, process::Command};

use serde_json::{Value, json};

use crate::support::{TestEnv, git, repo};

/// One writer: a session, or a sub-agent of one, driving the hooks as Claude Code does.
struct Writer<'e> {
    env: &'e TestEnv,
    session: String,
    agent: Option<String>,
    /// The directory its hooks run in.
    cwd: std::path::PathBuf,
    transcript: String,
}

/// What a hook answered.
struct Answer {
    out: Value,
}

impl Answer {
    fn refusal(&self) -> Option<String> {
        let out = &self.out["hookSpecificOutput"];
        (out["permissionDecision"] == "deny" || out["permissionDecision"] == "ask")
            .then(|| out["permissionDecisionReason"].as_str().unwrap().to_owned())
    }

    fn context(&self) -> Option<String> {
        self.out["hookSpecificOutput"]["additionalContext"]
            .as_str()
            .map(str::to_owned)
    }
}

impl<'e> Writer<'e> {
    fn session(env: &'e TestEnv, session: &str) -> Self {
        Self {
            env,
            session: session.into(),
            agent: None,
            cwd: env.project(),
            transcript: "/tmp/transcript.jsonl".into(),
        }
    }

    fn agent(env: &'e TestEnv, session: &str, agent: &str) -> Self {
        Self {
            agent: Some(agent.into()),
            ..Self::session(env, session)
        }
    }

    fn start_hook(&self, event: &str, extra: Value) -> crate::support::HookRun {
        let mut payload = json!({
            "session_id": self.session,
            "transcript_path": self.transcript,
            "cwd": self.cwd,
            "hook_event_name": event,
        });
        if let Some(agent) = &self.agent {
            payload["agent_id"] = json!(agent);
            payload["agent_type"] = json!("worker");
        }
        payload
            .as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        self.env.hook(event, &payload.to_string())
    }

    fn hook(&self, event: &str, extra: Value) -> Answer {
        let (code, stdout, stderr) = self.start_hook(event, extra).wait();
        assert_eq!(code, 0, "{stderr}");
        assert!(!stderr.contains("record of writes"), "{stderr}");
        Answer {
            out: serde_json::from_str(stdout.trim()).unwrap_or(Value::Null),
        }
    }

    fn clone_as(&self) -> Self {
        Self {
            env: self.env,
            session: self.session.clone(),
            agent: self.agent.clone(),
            cwd: self.cwd.clone(),
            transcript: self.transcript.clone(),
        }
    }

    fn path(&self, file: &str) -> String {
        self.cwd.join(file).display().to_string()
    }

    /// A `Write` of `content`: its reason when refused, else written and recorded.
    fn write(&self, file: &str, content: &str) -> Result<(), String> {
        let path = self.path(file);
        let input = json!({"file_path": path, "content": content});
        let before = self.hook(
            "PreToolUse",
            json!({"tool_name": "Write", "tool_input": input}),
        );
        if let Some(reason) = before.refusal() {
            return Err(reason);
        }
        let original = std::fs::read_to_string(&path).ok();
        std::fs::write(&path, content).unwrap();
        let response = json!({
            "type": if original.is_some() { "update" } else { "create" },
            "filePath": path,
            "content": content,
            "structuredPatch": [],
            "originalFile": original,
        });
        self.hook(
            "PostToolUse",
            json!({"tool_name": "Write", "tool_input": input, "tool_response": response}),
        );
        Ok(())
    }

    /// A `Read` of the whole file, or of `lines` of it.
    fn read_lines(&self, file: &str, lines: Option<(u64, u64)>) {
        let path = self.path(file);
        let content = std::fs::read_to_string(&path).unwrap();
        let total = content.lines().count() as u64;
        let (start, count) = lines.unwrap_or((1, total));
        let mut input = json!({"file_path": path});
        if lines.is_some() {
            input["offset"] = json!(start);
            input["limit"] = json!(count);
        }
        let response = json!({"type": "text", "file": {
            "filePath": path, "content": content, "numLines": count, "startLine": start, "totalLines": total,
        }});
        self.hook(
            "PostToolUse",
            json!({"tool_name": "Read", "tool_input": input, "tool_response": response}),
        );
    }

    fn read(&self, file: &str) {
        self.read_lines(file, None);
    }

    /// The hooks around a Bash command run by someone else meanwhile: before it.
    fn bash_start(&self, command: &str) {
        let input = json!({"command": command, "description": "run"});
        let before = self.hook(
            "PreToolUse",
            json!({"tool_name": "Bash", "tool_input": input}),
        );
        assert!(before.refusal().is_none());
    }

    /// …and after it: what the model was told.
    fn bash_end(&self, command: &str) -> Option<String> {
        let input = json!({"command": command, "description": "run"});
        self.hook(
            "PostToolUse",
            json!({"tool_name": "Bash", "tool_input": input, "tool_response": {
                "stdout": "", "stderr": "", "interrupted": false, "isImage": false,
            }}),
        )
        .context()
    }

    /// A Bash command run in the writer's directory: its refusal, or what the model was told
    /// after it.
    fn bash(&self, command: &str) -> Result<Option<String>, String> {
        let input = json!({"command": command, "description": "run"});
        let before = self.hook(
            "PreToolUse",
            json!({"tool_name": "Bash", "tool_input": input}),
        );
        if let Some(reason) = before.refusal() {
            return Err(reason);
        }
        let output = Command::new("sh")
            .args(["-c", command])
            .current_dir(&self.cwd)
            .output()
            .unwrap();
        assert!(output.status.success(), "{command}");
        let after = self.hook(
            "PostToolUse",
            json!({"tool_name": "Bash", "tool_input": input, "tool_response": {
                "stdout": "", "stderr": "", "interrupted": false, "isImage": false,
            }}),
        );
        Ok(after.context())
    }
}

/// A git repository with a workflow (the store), phase `build` in progress.
fn project() -> TestEnv {
    let env = repo();
    env.ok(&["init", "w", "--phase", "build", "--phase", "docs"]);
    env.ok(&["start", "build"]);
    env
}

/// The facts' scenario: session 2 wrote the file, session 1 appended through Bash; session 2's
/// next write is refused naming session 1 and what to do, and after a read it goes through,
/// the file holding both changes.
#[test]
fn a_write_over_another_sessions_bash_change_is_refused_until_read() {
    let env = project();
    let one = Writer::session(&env, "s-one");
    let two = Writer::session(&env, "s-two");
    two.write("shared.txt", "from two\n").unwrap();
    one.bash("echo 'from one' >> shared.txt").unwrap();
    let reason = two.write("shared.txt", "from two, again\n").unwrap_err();
    assert!(reason.contains("`shared.txt` changed since you last read it: session s-one changed it with the command `echo 'from one' >> shared.txt`"), "{reason}");
    assert!(reason.contains("phase `build`"), "{reason}");
    assert!(
        reason.contains("read it again, then make your change"),
        "{reason}"
    );
    assert!(reason.contains("checkpoint undo --to @"), "{reason}");
    assert_eq!(
        std::fs::read_to_string(env.project().join("shared.txt")).unwrap(),
        "from two\nfrom one\n"
    );
    two.read("shared.txt");
    two.write("shared.txt", "from two\nfrom one\nand two again\n")
        .unwrap();
    // Session 1, which had not seen that, is refused in turn; after reading, it writes.
    assert!(one.write("shared.txt", "x").is_err());
    one.read("shared.txt");
    one.write("shared.txt", "from two\nfrom one\nand two again\nand one\n")
        .unwrap();
}

/// Two sessions' hooks race: session 1's command changed the file, and session 2 writes before
/// session 1's `PostToolUse` recorded it. The refusal names the session whose command was
/// running, not a process outside the sessions; once that command has ended, a change no hook
/// saw is nobody's.
#[test]
fn a_change_by_a_command_whose_hook_has_not_reported_yet_is_its_sessions() {
    use std::io::Write as _;
    let env = project();
    let one = Writer::session(&env, "s-one");
    let two = Writer::session(&env, "s-two");
    two.write("shared.txt", "from two\n").unwrap();
    let append = |line: &str| {
        std::fs::OpenOptions::new()
            .append(true)
            .open(env.project().join("shared.txt"))
            .unwrap()
            .write_all(line.as_bytes())
            .unwrap();
    };
    one.bash_start("echo 'from one' >> shared.txt");
    append("from one\n");
    let reason = two.write("shared.txt", "two alone\n").unwrap_err();
    assert!(
        reason.contains("changed since you last read it: session s-one changed it"),
        "{reason}"
    );
    assert!(!reason.contains("outside the sessions"), "{reason}");
    // The command ends and its hook records the change as session 1's (and tells it that it
    // appended to session 2's change, unseen).
    one.bash_end("echo 'from one' >> shared.txt");
    two.read("shared.txt");
    two.write("shared.txt", "from two\nfrom one\n").unwrap();
    // No command running: a change no hook saw is a person's or a process's.
    append("from nobody\n");
    let reason = two.write("shared.txt", "two again\n").unwrap_err();
    assert!(reason.contains("outside the sessions"), "{reason}");
}

/// Headless the guard denies; in an interactive session it asks.
#[test]
fn the_guard_asks_where_a_person_sits_at_the_terminal() {
    let env = project();
    Writer::session(&env, "s-one")
        .write("a.txt", "one\n")
        .unwrap();
    let path = env.project().join("a.txt").display().to_string();
    let payload = json!({
        "session_id": "s-two", "cwd": env.project(), "hook_event_name": "PreToolUse",
        "tool_name": "Edit", "tool_input": {"file_path": path, "old_string": "one", "new_string": "two"},
    })
    .to_string();
    for (entrypoint, decision) in [("cli", "ask"), ("sdk-cli", "deny")] {
        let (code, stdout, _) = env
            .hook_with_env(
                "PreToolUse",
                &payload,
                &[("CLAUDE_CODE_ENTRYPOINT", entrypoint)],
            )
            .wait();
        assert_eq!(code, 0);
        let out: Value = serde_json::from_str(&stdout).unwrap();
        assert_eq!(
            out["hookSpecificOutput"]["permissionDecision"], decision,
            "{entrypoint}"
        );
        assert!(
            out["hookSpecificOutput"]["permissionDecisionReason"]
                .as_str()
                .unwrap()
                .contains("you have not read `a.txt`, and session s-one changed it")
        );
    }
}

/// A writer that only touches its own files is never refused, whatever it does: writes,
/// edits through Bash, deletes and recreates, reads in parts.
#[test]
fn a_writer_that_only_touches_its_own_files_is_never_refused() {
    let env = project();
    let one = Writer::session(&env, "s-one");
    let two = Writer::session(&env, "s-two");
    two.write("theirs.txt", "theirs\n").unwrap();
    for round in 0..3 {
        one.write("mine.txt", &format!("round {round}\n")).unwrap();
        assert_eq!(one.bash("sed -i 's/round/Round/' mine.txt").unwrap(), None);
        one.write("mine.txt", &format!("Round {round}, again\n"))
            .unwrap();
        one.bash("rm mine.txt && echo back > mine.txt").unwrap();
        one.read_lines("mine.txt", Some((1, 1)));
        one.write("mine.txt", "last\n").unwrap();
        one.write(&format!("new-{round}.txt"), "new\n").unwrap();
    }
    two.read("theirs.txt");
    two.write("theirs.txt", "still theirs\n").unwrap();
}

/// A partial read is not a read of the file: the write stays refused until a whole one.
#[test]
fn a_partial_read_does_not_count_as_seeing_the_file() {
    let env = project();
    let one = Writer::session(&env, "s-one");
    let two = Writer::session(&env, "s-two");
    one.write("long.txt", "a\nb\nc\nd\n").unwrap();
    two.read_lines("long.txt", Some((1, 2)));
    assert!(two.write("long.txt", "mine\n").is_err());
    two.read("long.txt");
    two.write("long.txt", "mine\n").unwrap();
}

/// Deleted and recreated by another session: judged by content.
#[test]
fn a_file_deleted_and_recreated_by_another_session_is_refused_until_read() {
    let env = project();
    let one = Writer::session(&env, "s-one");
    let two = Writer::session(&env, "s-two");
    one.write("f.txt", "first\n").unwrap();
    two.read("f.txt");
    one.bash("rm f.txt").unwrap();
    let reason = two.write("f.txt", "two\n").unwrap_err();
    assert!(
        reason.contains("session s-one deleted it with the command `rm f.txt`"),
        "{reason}"
    );
    one.write("f.txt", "second\n").unwrap();
    assert!(two.write("f.txt", "two\n").is_err());
    two.read("f.txt");
    two.write("f.txt", "two\n").unwrap();
}

/// A rename by Bash: the old path is gone (its writer's deletion), the new one is the mover's.
#[test]
fn a_rename_by_bash_is_a_deletion_of_the_old_path() {
    let env = project();
    let one = Writer::session(&env, "s-one");
    let two = Writer::session(&env, "s-two");
    two.write("old.txt", "two's\n").unwrap();
    one.read("old.txt");
    let told = one.bash("mv old.txt new.txt").unwrap();
    assert_eq!(told, None, "one had seen two's version");
    let reason = two.write("old.txt", "again\n").unwrap_err();
    assert!(reason.contains("deleted it with the command `mv old.txt new.txt`"));
}

/// A Bash command that replaces another session's unseen change is told at once, with the
/// command that brings it back, and `watch` can show it.
#[test]
fn a_bash_overwrite_of_an_unseen_change_is_reported_with_its_undo() {
    let env = project();
    let one = Writer::session(&env, "s-one");
    let two = Writer::session(&env, "s-two");
    git(&env.project(), &["add", "-A"]);
    one.write("notes.md", "one's notes\n").unwrap();
    let told = two
        .bash("printf 'two wins\\n' > notes.md")
        .unwrap()
        .unwrap();
    assert!(
        told.contains("your command `printf 'two wins\\n' > notes.md` changed `notes.md`, which session s-one had changed with `Write`"),
        "{told}"
    );
    let undo = told
        .split("`checkpoint undo --to ")
        .nth(1)
        .expect("an undo command");
    let target = undo.split_whitespace().next().unwrap();
    env.ok(&["undo", "--to", target, "--", "notes.md"]);
    assert_eq!(
        std::fs::read_to_string(env.project().join("notes.md")).unwrap(),
        "one's notes\n"
    );
    let notices =
        std::fs::read_to_string(env.store().join(".writes").join("notices.jsonl")).unwrap();
    assert!(notices.contains("\"path\"") && notices.contains("s-one"));
}

/// Sub-agents of one session are separate writers.
#[test]
fn sub_agents_of_one_lead_are_separate_writers() {
    let env = project();
    let first = Writer::agent(&env, "lead", "agent-1");
    let second = Writer::agent(&env, "lead", "agent-2");
    let lead = Writer::session(&env, "lead");
    first.write("out.md", "first\n").unwrap();
    for other in [&second, &lead] {
        let reason = other.write("out.md", "other\n").unwrap_err();
        assert!(
            reason.contains("sub-agent agent-1 of session lead"),
            "{reason}"
        );
    }
    first.write("out.md", "first, again\n").unwrap();
}

/// A writer whose session died (its `SessionEnd`, or no hook for longer than `idle_minutes`)
/// no longer holds files it wrote but others never saw.
#[test]
fn a_dead_writer_holds_nothing() {
    let env = project();
    let one = Writer::session(&env, "s-one");
    let two = Writer::session(&env, "s-two");
    one.write("a.txt", "one\n").unwrap();
    one.write("b.txt", "one\n").unwrap();
    assert!(two.write("a.txt", "two\n").is_err());
    // No hook for two hours: gone.
    env.set_now("2026-03-01T14:00:00Z");
    two.write("a.txt", "two\n").unwrap();
    // Ended: gone at once.
    env.set_now("2026-03-01T14:01:00Z");
    let three = Writer::session(&env, "s-three");
    three.write("c.txt", "three\n").unwrap();
    assert!(two.write("c.txt", "two\n").is_err());
    three.hook("SessionEnd", json!({"reason": "other"}));
    two.write("c.txt", "two\n").unwrap();
}

/// Hooks whose clocks disagree: content decides, never the order of times.
#[test]
fn clocks_that_disagree_change_nothing_but_the_times_shown() {
    let env = project();
    let one = Writer::session(&env, "s-one");
    let two = Writer::session(&env, "s-two");
    env.set_now("2026-03-01T12:30:00Z");
    two.write("skew.txt", "two\n").unwrap();
    // Session one's clock is half an hour behind.
    env.set_now("2026-03-01T12:00:00Z");
    one.bash("echo one >> skew.txt").unwrap();
    let reason = two.write("skew.txt", "two again\n").unwrap_err();
    assert!(reason.contains("at 2026-03-01 12:00 UTC"), "{reason}");
    two.read("skew.txt");
    two.write("skew.txt", "two\none\ntwo again\n").unwrap();
}

/// The same session in two worktrees writes two files, neither refused; another session in
/// the other worktree is guarded there.
#[test]
fn the_same_session_in_two_worktrees_writes_both() {
    let env = project();
    git(&env.project(), &["add", "-A"]);
    git(&env.project(), &["commit", "-qm", "init", "--allow-empty"]);
    let other = env.dir.path().join("other-tree");
    git(
        &env.project(),
        &[
            "worktree",
            "add",
            "-q",
            other.to_str().unwrap(),
            "-b",
            "other",
        ],
    );
    let main = Writer::session(&env, "s-one");
    let there = Writer {
        cwd: other.clone(),
        ..Writer::session(&env, "s-one")
    };
    main.write("same.txt", "main\n").unwrap();
    there.write("same.txt", "worktree\n").unwrap();
    main.write("same.txt", "main again\n").unwrap();
    there.write("same.txt", "worktree again\n").unwrap();
    let stranger = Writer {
        cwd: other,
        ..Writer::session(&env, "s-two")
    };
    assert!(stranger.write("same.txt", "no\n").is_err());
    assert_eq!(
        std::fs::read_to_string(env.project().join("same.txt")).unwrap(),
        "main again\n"
    );
}

/// A hook killed at any point leaves the record readable: later hooks work, and a write the
/// killed hook did not record is at worst refused once, never lost.
#[test]
fn a_killed_hook_leaves_the_record_usable() {
    let env = project();
    let one = Writer::session(&env, "s-one");
    let two = Writer::session(&env, "s-two");
    one.write("k.txt", "one\n").unwrap();
    for _ in 0..20 {
        let mut child = env.spawn_hook("PostToolUse");
        let payload = json!({
            "session_id": "s-two", "cwd": env.project(), "hook_event_name": "PostToolUse",
            "tool_name": "Write", "tool_input": {"file_path": one.path("k.txt"), "content": "two\n"},
            "tool_response": {"type": "update", "structuredPatch": []},
        });
        use std::io::Write as _;
        let _ = child
            .stdin
            .take()
            .unwrap()
            .write_all(payload.to_string().as_bytes());
        let _ = child.kill();
        let _ = child.wait();
    }
    let writes_dir = env.store().join(".writes");
    for entry in walk(&writes_dir) {
        if entry.extension().is_some_and(|ext| ext == "json") {
            let text = std::fs::read_to_string(&entry).unwrap();
            serde_json::from_str::<Value>(&text)
                .unwrap_or_else(|err| panic!("{}: {err}", entry.display()));
        }
    }
    two.read("k.txt");
    two.write("k.txt", "two\n").unwrap();
    assert!(one.write("k.txt", "one again\n").is_err());
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            found.extend(walk(&path));
        } else {
            found.push(path);
        }
    }
    found
}

/// Eight writers at once (their hooks run at the same time), each on its own file: no record
/// is lost or torn, and a writer's own file never refuses it.
#[test]
fn eight_concurrent_writers_keep_every_record() {
    let env = project();
    let writers: Vec<Writer<'_>> = (0..8)
        .map(|n| Writer::session(&env, &format!("s-{n}")))
        .collect();
    for round in 0..4 {
        let phase = |event: &str, with_response: bool| {
            let runs: Vec<_> = writers
                .iter()
                .enumerate()
                .map(|(n, writer)| {
                    let input = json!({"file_path": writer.path(&format!("own-{n}.txt")), "content": format!("{round}\n")});
                    let mut extra = json!({"tool_name": "Write", "tool_input": input});
                    if with_response {
                        extra["tool_response"] = json!({"type": "update", "structuredPatch": []});
                    }
                    writer.start_hook(event, extra)
                })
                .collect();
            for run in runs {
                let (code, stdout, stderr) = run.wait();
                assert_eq!(code, 0, "{stderr}");
                assert!(!stdout.contains("permissionDecision"), "{stdout}");
                assert!(!stderr.contains("warning"), "{stderr}");
            }
        };
        phase("PreToolUse", false);
        for n in 0..8 {
            std::fs::write(
                env.project().join(format!("own-{n}.txt")),
                format!("{round}\n"),
            )
            .unwrap();
        }
        phase("PostToolUse", true);
    }
    for n in 0..8 {
        let who = env.json(&["who", &format!("own-{n}.txt"), "--format", "json"]);
        let writes = who["files"][0]["writes"].as_array().unwrap();
        assert_eq!(writes.len(), 4, "{who}");
        assert!(writes.iter().all(|w| w["session"] == format!("s-{n}")));
    }
    let log = std::fs::read_to_string(env.store().join(".writes").join("log.jsonl")).unwrap();
    assert!(
        log.lines()
            .all(|line| serde_json::from_str::<Value>(line).is_ok())
    );
    assert_eq!(log.lines().filter(|line| line.contains("own-")).count(), 32);
}

/// A whole-checkout git command is refused while another live session works in the checkout,
/// naming it; alone, or with the other session ended, it runs.
#[test]
fn a_whole_checkout_command_is_refused_under_another_live_session() {
    let env = project();
    git(&env.project(), &["add", "-A"]);
    git(&env.project(), &["commit", "-qm", "init", "--allow-empty"]);
    let one = Writer::session(&env, "s-one");
    let two = Writer::session(&env, "s-two");
    one.bash("git stash list").unwrap();
    one.bash("git branch side").unwrap();
    two.hook("SessionStart", json!({"source": "startup"}));
    let reason = one.bash("git switch side").unwrap_err();
    assert!(
        reason.contains("`git switch side` changes the whole checkout, and other sessions are at work in it: session s-two"),
        "{reason}"
    );
    two.hook("SessionEnd", json!({"reason": "other"}));
    one.bash("git switch side").unwrap();
}

/// Two sub-agents of one lead on the same declared output: the phase's holder writes it, the
/// other is refused naming the holder and the phase; once the holder stops, the claim ends.
#[test]
fn a_phases_declared_output_is_held_by_the_sub_agent_holding_the_phase() {
    let env = repo();
    std::fs::write(
        env.project().join("plan.json"),
        r#"{"phases": [{"id": "a", "outputs": ["report.md"]}, {"id": "b"}]}"#,
    )
    .unwrap();
    env.ok(&["init", "par", "--plan", "plan.json"]);
    let transcript = env.dir.path().join("home/projects/lead.jsonl");
    let meta_dir = env.dir.path().join("home/projects/lead/subagents");
    std::fs::create_dir_all(&meta_dir).unwrap();
    let lead = Writer {
        transcript: transcript.display().to_string(),
        ..Writer::session(&env, "lead")
    };
    for (call, phase, agent) in [("toolu_a", "a", "agenta"), ("toolu_b", "b", "agentb")] {
        lead.hook(
            "PreToolUse",
            json!({"tool_name": "Agent", "tool_use_id": call, "tool_input": {
                "description": format!("Work on {phase}"),
                "prompt": format!("Do it.\ncheckpoint phase: {phase}\n"),
                "subagent_type": "general-purpose",
            }}),
        );
        std::fs::write(
            meta_dir.join(format!("agent-{agent}.meta.json")),
            json!({"agentType": "general-purpose", "toolUseId": call}).to_string(),
        )
        .unwrap();
        lead.hook("SubagentStart", json!({"agent_id": agent}));
    }
    let holder = Writer {
        agent: Some("agenta".into()),
        transcript: transcript.display().to_string(),
        ..Writer::session(&env, "lead")
    };
    let other = Writer {
        agent: Some("agentb".into()),
        ..holder.clone_as()
    };
    let reason = other.write("report.md", "b's\n").unwrap_err();
    assert!(
        reason.contains("`report.md` is held by sub-agent agenta of session lead for phase `a`"),
        "{reason}"
    );
    holder.write("report.md", "a's\n").unwrap();
    assert!(other.write("notes.md", "free\n").is_ok());
    holder.hook(
        "SubagentStop",
        json!({"agent_type": "general-purpose", "last_assistant_message": "done"}),
    );
    other.read("report.md");
    other.write("report.md", "a's\nb's\n").unwrap();
}

/// `who`: every writer of a file, most recent first, in words and in JSON; a path nobody wrote
/// has none.
#[test]
fn who_lists_a_files_writers_most_recent_first() {
    let env = project();
    let one = Writer::session(&env, "s-one");
    let sub = Writer::agent(&env, "s-one", "helper");
    one.write("w.txt", "a\n").unwrap();
    sub.read("w.txt");
    env.set_now("2026-03-01T12:05:00Z");
    sub.bash("echo b >> w.txt").unwrap();
    let who = env.json(&["who", "w.txt", "nobody.txt", "--format", "json"]);
    assert_eq!(
        who,
        json!({"files": [
            {"path": "w.txt", "writes": [
                {"at": "2026-03-01T12:05:00Z", "session": "s-one", "agent": "helper", "phase": "build", "tool": "Bash: echo b >> w.txt", "added": null, "removed": null},
                {"at": "2026-03-01T12:00:00Z", "session": "s-one", "agent": null, "phase": "build", "tool": "Write", "added": 1, "removed": 0},
            ]},
            {"path": "nobody.txt", "writes": []},
        ]})
    );
    let text = env.ok(&["who", "w.txt"]);
    assert!(
        text.contains("sub-agent helper of session s-one phase `build`  Bash: echo b >> w.txt"),
        "{text}"
    );
    assert!(
        text.contains("session s-one phase `build`  Write +1 -0"),
        "{text}"
    );
}

/// `claim`: a session holds paths for a phase; another writer is refused there, the holder is
/// not; handed back, or its phase completed, the claim ends.
#[test]
fn a_claim_holds_paths_until_handed_back_or_its_phase_ends() {
    let env = project();
    env.ok(&["claim", "build", "src/*", "--session", "s-one"]);
    let two = Writer::session(&env, "s-two");
    let one = Writer::session(&env, "s-one");
    one.hook("SessionStart", json!({"source": "startup"}));
    std::fs::create_dir_all(env.project().join("src")).unwrap();
    let reason = two.write("src/deep/x.rs", "x").unwrap_err();
    assert!(
        reason.contains("held by session s-one for phase `build` (claim `src/*`"),
        "{reason}"
    );
    one.write("src/x.rs", "x").unwrap();
    env.ok(&["claim", "build", "--release", "--session", "s-one"]);
    two.read("src/x.rs");
    two.write("src/x.rs", "y").unwrap();
    env.ok(&["claim", "build", "docs/*", "--session", "s-one"]);
    std::fs::create_dir_all(env.project().join("docs")).unwrap();
    assert!(two.write("docs/a.md", "y").is_err());
    env.ok(&["complete", "build"]);
    one.bash("echo checkpoint").unwrap();
    two.write("docs/a.md", "y").unwrap();
    let unknown = env.run(&["claim", "nope", "x", "--session", "s-one"]);
    assert!(!unknown.status.success());
}

/// Codex CLI's `apply_patch` and Gemini CLI's `write_file` over another session's file are
/// refused in each client's own form (Codex: only `deny` refuses; Gemini: its `decision`).
#[test]
fn codex_and_gemini_writes_are_refused_in_their_own_forms() {
    let env = project();
    Writer::session(&env, "s-claude")
        .write("a.txt", "claude's\n")
        .unwrap();
    let root = env.project();
    let codex = json!({
        "session_id": "codex-1", "turn_id": "t-1", "cwd": root, "hook_event_name": "PreToolUse",
        "model": "gpt-5.5", "permission_mode": "bypassPermissions", "tool_name": "apply_patch",
        "tool_input": {"command": "*** Begin Patch\n*** Update File: a.txt\n@@\n-claude's\n+codex's\n*** End Patch\n"},
        "tool_use_id": "call_1",
    });
    let (code, stdout, stderr) = env
        .client_hook("codex", "PreToolUse", &codex.to_string())
        .wait();
    assert_eq!(code, 0, "{stderr}");
    let out: Value = serde_json::from_str(&stdout).unwrap();
    let specific = out["hookSpecificOutput"].as_object().unwrap();
    assert_eq!(specific.len(), 3, "{out}");
    assert_eq!(specific["permissionDecision"], "deny");
    assert!(
        specific["permissionDecisionReason"]
            .as_str()
            .unwrap()
            .contains("session s-claude changed it with `Write`")
    );
    let gemini = json!({
        "session_id": "gemini-1", "cwd": root, "hook_event_name": "BeforeTool",
        "timestamp": "2026-11-25T15:51:19.850Z", "tool_name": "write_file",
        "tool_input": {"file_path": "a.txt", "content": "gemini's\n"},
    });
    let (code, stdout, stderr) = env
        .client_hook("gemini", "BeforeTool", &gemini.to_string())
        .wait();
    assert_eq!(code, 0, "{stderr}");
    let out: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(out["decision"], "deny", "{out}");
    assert!(
        out["reason"]
            .as_str()
            .unwrap()
            .contains("you have not read `a.txt`")
    );
}

/// Two sessions' Bash commands at once, the one that only waited found the other's change
/// first (hooks run in no order between sessions): the change is nobody's own, so the waiting
/// session's next write is still refused, naming both.
#[test]
fn a_change_found_while_another_sessions_command_ran_is_nobodys_own() {
    let env = project();
    let one = Writer::session(&env, "s-one");
    let two = Writer::session(&env, "s-two");
    two.write("shared.txt", "from two\n").unwrap();
    let wait = "until grep -q 'from one' shared.txt; do sleep 0.1; done";
    let append = "echo 'from one' >> shared.txt";
    two.bash_start(wait);
    one.bash_start(append);
    std::fs::write(env.project().join("shared.txt"), "from two\nfrom one\n").unwrap();
    two.bash_end(wait);
    one.bash_end(append);
    let reason = two.write("shared.txt", "two alone\n").unwrap_err();
    assert!(
        reason.contains(
            "session s-two or session s-one changed it with a command running at the time"
        ),
        "{reason}"
    );
    two.read("shared.txt");
    two.write("shared.txt", "from two\nfrom one\nagain\n")
        .unwrap();
    // Without the other command running, the finder's own change is its own.
    one.read("shared.txt");
    one.bash("echo more >> shared.txt").unwrap();
    one.write("shared.txt", "x\n").unwrap();
}

/// Another session's command changed the file between a `Write` and its hook, and that
/// command's own hook came first and found nothing: the write is recorded as what it wrote,
/// and the change, found after by a command that started later, is the other command's.
#[test]
fn a_change_between_a_write_and_its_hook_is_the_other_commands() {
    let env = project();
    let one = Writer::session(&env, "s-one");
    let two = Writer::session(&env, "s-two");
    let path = env.project().join("shared.txt");
    let append = "echo 'from one' >> shared.txt";
    one.bash_start(append);
    std::thread::sleep(std::time::Duration::from_millis(50));
    let input = json!({"file_path": two.path("shared.txt"), "content": "from two\n"});
    two.hook(
        "PreToolUse",
        json!({"tool_name": "Write", "tool_input": input}),
    );
    std::fs::write(&path, "from two\n").unwrap();
    std::fs::write(&path, "from two\nfrom one\n").unwrap();
    one.bash_end(append);
    two.hook(
        "PostToolUse",
        json!({"tool_name": "Write", "tool_input": input, "tool_response": {"type": "create", "content": "from two\n"}}),
    );
    std::thread::sleep(std::time::Duration::from_millis(50));
    two.bash("true").unwrap();
    let reason = two.write("shared.txt", "two alone\n").unwrap_err();
    assert!(
        reason.contains("session s-one changed it with `Bash`"),
        "{reason}"
    );
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "from two\nfrom one\n"
    );
}

/// A project whose plan declares `claims`: `build` holds `src/**/*.rs` and the directory
/// `docs/`, `review` holds `notes/*`.
fn claims_project() -> TestEnv {
    let env = repo();
    std::fs::write(
        env.project().join("plan.json"),
        r#"{"phases": [
            {"id": "build", "claims": ["src/**/*.rs", "./docs/"]},
            {"id": "review", "claims": ["notes/*"]}
        ]}"#,
    )
    .unwrap();
    env.ok(&["init", "w", "--plan", "plan.json"]);
    for dir in ["src/deep/er", "docs/guide", "notes"] {
        std::fs::create_dir_all(env.project().join(dir)).unwrap();
    }
    env
}

/// `checkpoint <args>` run from `session`'s own shell (`CLAUDE_CODE_SESSION_ID` set).
#[track_caller]
fn ok_in_session(env: &TestEnv, session: &str, args: &[&str]) {
    let output = env
        .cmd()
        .args(args)
        .env("CLAUDE_CODE_SESSION_ID", session)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// A phase's plan `claims` are held by the session that started it, as `checkpoint claim` holds
/// them: another writer's write under them is refused naming the holder, the phase and the
/// claim (`**` at any depth, a directory's whole content), the holder writes, paths outside
/// them are free; the claims end when the phase completes or fails, or is handed back, from
/// whichever terminal that is done (no hook of the holder in between).
#[test]
fn a_plans_claims_are_held_by_the_phases_holder_until_it_ends() {
    let env = claims_project();
    let one = Writer::session(&env, "s-one");
    let two = Writer::session(&env, "s-two");
    one.hook("SessionStart", json!({"source": "startup"}));
    ok_in_session(&env, "s-one", &["start", "build"]);
    for path in [
        "src/a.rs",
        "src/deep/er/b.rs",
        "docs/guide/c.md",
        "docs/d.md",
    ] {
        let reason = two.write(path, "two\n").unwrap_err();
        assert!(
            reason.contains(&format!(
                "`{path}` is held by session s-one for phase `build`"
            )),
            "{path}: {reason}"
        );
        one.write(path, "one\n").unwrap();
    }
    let reason = two.write("src/x.rs", "two\n").unwrap_err();
    assert!(reason.contains("(claim `src/**/*.rs`"), "{reason}");
    for free in ["src/a.md", "README.md", "docsy.md", "notes/n.md"] {
        two.write(free, "two\n").unwrap();
    }
    // Completed from a person's terminal: the claims end without any hook of their holder.
    env.ok(&["complete", "build"]);
    two.read("src/a.rs");
    two.write("src/a.rs", "two\n").unwrap();
    two.write("docs/new.md", "two\n").unwrap();
    // Failed: they end too.
    ok_in_session(&env, "s-one", &["start", "review"]);
    two.read("notes/n.md");
    assert!(two.write("notes/n.md", "two again\n").is_err());
    env.ok(&["fail", "review", "--reason", "broken"]);
    two.write("notes/n.md", "two again\n").unwrap();
    // Handed back.
    ok_in_session(&env, "s-one", &["start", "review"]);
    assert!(two.write("notes/m.md", "two\n").is_err());
    env.ok(&["claim", "review", "--release", "--session", "s-one"]);
    two.write("notes/m.md", "two\n").unwrap();
    // Held again with `checkpoint claim <phase>` and no glob: the plan's claims.
    env.ok(&["claim", "review", "--session", "s-one"]);
    assert!(two.write("notes/o.md", "two\n").is_err());
}

/// A phase started where no session runs it (a person's terminal) is held by nobody: its
/// claims refuse no one.
#[test]
fn a_phase_started_outside_any_session_holds_no_claims() {
    let env = claims_project();
    Writer::session(&env, "s-one").hook("SessionStart", json!({"source": "startup"}));
    env.ok(&["start", "build"]);
    Writer::session(&env, "s-two")
        .write("src/a.rs", "two\n")
        .unwrap();
}

/// The sub-agent a phase is dispatched to holds the phase's plan `claims` (with its declared
/// outputs); another sub-agent is refused naming it; its `SubagentStop` ends them.
#[test]
fn a_plans_claims_are_held_by_the_sub_agent_holding_the_phase() {
    let env = claims_project();
    let transcript = env.dir.path().join("home/projects/lead.jsonl");
    let meta_dir = env.dir.path().join("home/projects/lead/subagents");
    std::fs::create_dir_all(&meta_dir).unwrap();
    let lead = Writer {
        transcript: transcript.display().to_string(),
        ..Writer::session(&env, "lead")
    };
    for (call, phase, agent) in [
        ("toolu_a", "build", "agenta"),
        ("toolu_b", "review", "agentb"),
    ] {
        lead.hook(
            "PreToolUse",
            json!({"tool_name": "Agent", "tool_use_id": call, "tool_input": {
                "description": format!("Work on {phase}"),
                "prompt": format!("Do it.\ncheckpoint phase: {phase}\n"),
                "subagent_type": "general-purpose",
            }}),
        );
        std::fs::write(
            meta_dir.join(format!("agent-{agent}.meta.json")),
            json!({"agentType": "general-purpose", "toolUseId": call}).to_string(),
        )
        .unwrap();
        lead.hook("SubagentStart", json!({"agent_id": agent}));
    }
    let builder = Writer {
        agent: Some("agenta".into()),
        ..lead.clone_as()
    };
    let reviewer = Writer {
        agent: Some("agentb".into()),
        ..lead.clone_as()
    };
    let reason = reviewer.write("src/deep/x.rs", "b\n").unwrap_err();
    assert!(
        reason.contains(
            "`src/deep/x.rs` is held by sub-agent agenta of session lead for phase `build`"
        ),
        "{reason}"
    );
    let reason = builder.write("notes/r.md", "a\n").unwrap_err();
    assert!(reason.contains("held by sub-agent agentb"), "{reason}");
    builder.write("src/deep/x.rs", "a\n").unwrap();
    builder.hook(
        "SubagentStop",
        json!({"agent_type": "general-purpose", "last_assistant_message": "done"}),
    );
    reviewer.read("src/deep/x.rs");
    reviewer.write("src/deep/x.rs", "a\nb\n").unwrap();
}

/// A bad claim in a plan file (JSON or TOML) stops `init`, naming the file, the phase, the
/// claim and the fix, and creates nothing; `checkpoint claim` refuses the same globs.
#[test]
fn a_bad_claim_is_refused_naming_the_file_and_the_fix() {
    let env = repo();
    for (file, claim, why) in [
        ("plan.json", "../elsewhere/*", "a path outside the project"),
        ("plan.json", "/etc/*", "an absolute path"),
        ("plan.toml", "**", "holds the whole checkout"),
        ("plan.toml", "", "an empty claim"),
    ] {
        let text = if file.ends_with(".json") {
            json!({"phases": [{"id": "a", "claims": [claim]}]}).to_string()
        } else {
            format!("[[phases]]\nid = \"a\"\nclaims = [{claim:?}]\n")
        };
        std::fs::write(env.project().join(file), text).unwrap();
        let output = env.run(&["init", "bad", "--plan", file]);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{claim}");
        assert!(
            stderr.contains("plan file `")
                && stderr.contains(&format!("{file}`: phase `a` claims `{claim}`, ")),
            "{stderr}"
        );
        assert!(stderr.contains(why), "{stderr}");
        assert!(
            stderr.contains("a glob over paths from the checkout's top"),
            "{stderr}"
        );
        assert!(!env.store().join("bad").exists());
    }
    let env = project();
    for glob in ["../x", "/tmp/x", "*"] {
        let output = env.run(&["claim", "build", glob, "--session", "s-one"]);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{glob}");
        assert!(
            stderr.contains(&format!("cannot claim `{glob}`")),
            "{stderr}"
        );
    }
    let output = env.run(&["claim", "build", "--session", "s-one"]);
    assert!(String::from_utf8_lossy(&output.stderr).contains("declares no claims"));
}

/// `report` and `watch` show, per session and sub-agent, the files it wrote (from the record of
/// writes), and each Bash overwrite: whose change, by whom, and the `checkpoint undo` that
/// brings it back (which does); in words and in JSON, and as a line of `watch --plain` as soon
/// as it happens.
#[test]
fn report_and_watch_show_each_writers_files_and_the_overwrites() {
    let env = project();
    git(&env.project(), &["add", "-A"]);
    let one = Writer::session(&env, "s-one");
    let helper = Writer::agent(&env, "s-one", "helper");
    let two = Writer::session(&env, "s-two");
    one.write("notes.md", "one's notes\n").unwrap();
    one.write("a.txt", "a\n").unwrap();
    helper.write("b.txt", "b\n").unwrap();
    let mut watching = crate::watch::Watching::start(&env, &["--plain"], false);
    two.bash("printf 'two wins\\n' > notes.md")
        .unwrap()
        .unwrap();
    watching.wait_for("for the overwrite", |line| {
        line.starts_with("notes.md overwritten: session s-two's command")
    });
    let (code, stderr, _) = watching.stop("-TERM");
    assert_eq!(code, Some(0), "{stderr}");

    let report = env.ok(&["report"]);
    for line in [
        "files written (`checkpoint who <path>` lists a file's writers):",
        "  session s-one wrote 2 files: a.txt, notes.md",
        "  sub-agent helper of session s-one wrote 1 file: b.txt",
        "  session s-two wrote 1 file: notes.md",
        "  notes.md overwritten: session s-two's command `printf 'two wins\\n' > notes.md` replaced session s-one's change (Write) at 2026-03-01T12:00:00Z; `checkpoint undo --to @",
    ] {
        assert!(report.contains(line), "{line}\n{report}");
    }
    let json = env.json(&["report"]);
    assert_eq!(
        json["writers"],
        json!([
            {"session": "s-one", "agent": null, "files": ["a.txt", "notes.md"], "writes": 2, "last_at": "2026-03-01T12:00:00Z"},
            {"session": "s-one", "agent": "helper", "files": ["b.txt"], "writes": 1, "last_at": "2026-03-01T12:00:00Z"},
            {"session": "s-two", "agent": null, "files": ["notes.md"], "writes": 1, "last_at": "2026-03-01T12:00:00Z"},
        ])
    );
    let overwrite = &json["overwrites"][0];
    assert_eq!(json["overwrites"].as_array().unwrap().len(), 1);
    assert_eq!(overwrite["path"], "notes.md");
    assert_eq!(overwrite["session"], "s-two");
    assert_eq!(overwrite["overwritten_session"], "s-one");
    assert_eq!(overwrite["overwritten_tool"], "Write");
    let watched = env.json(&["watch", "--once"]);
    assert_eq!(watched["writers"], json["writers"]);
    assert_eq!(watched["overwrites"], json["overwrites"]);
    let view = env.ok(&["watch", "--once"]);
    assert!(
        view.contains("session s-one wrote 2 files: a.txt, notes.md"),
        "{view}"
    );
    assert!(view.contains("notes.md overwritten: "), "{view}");
    // The undo it names brings the overwritten change back.
    let undo = overwrite["undo"].as_str().unwrap();
    let args: Vec<&str> = undo.split_whitespace().skip(1).collect();
    env.ok(&args);
    assert_eq!(
        std::fs::read_to_string(env.project().join("notes.md")).unwrap(),
        "one's notes\n"
    );
}

/// A workflow nobody wrote in has no `writers` or `overwrites` (absent, not empty), and a
/// write made before the workflow began is not its.
#[test]
fn a_report_counts_only_the_writes_since_its_workflow_began() {
    let env = repo();
    env.set_now("2026-03-01T11:00:00Z");
    env.ok(&["init", "old", "--phase", "a"]);
    Writer::session(&env, "s-one")
        .write("early.txt", "x\n")
        .unwrap();
    env.set_now("2026-03-01T12:00:00Z");
    env.ok(&["init", "new", "--phase", "a"]);
    let json = env.json(&["report", "--workflow", "new"]);
    assert!(json.get("writers").is_none(), "{json}");
    assert!(json.get("overwrites").is_none(), "{json}");
    let old = env.json(&["report", "--workflow", "old"]);
    assert_eq!(old["writers"][0]["files"], json!(["early.txt"]));
}

/// Claude Code's list of live sessions (`~/.claude/sessions/<pid>.json`): a session killed with
/// no chance to remove its file (`kill -9`) is listed with a dead pid, and is gone: the files it
/// wrote and its claims no longer hold; listed with a live pid, it still holds them.
#[test]
fn a_session_whose_listed_pid_is_dead_holds_nothing() {
    let env = project();
    let one = Writer::session(&env, "s-one");
    let two = Writer::session(&env, "s-two");
    one.write("a.txt", "one\n").unwrap();
    env.ok(&["claim", "build", "src/*", "--session", "s-one"]);
    std::fs::create_dir_all(env.project().join("src")).unwrap();
    let sessions = env.dir.path().join("home/.claude/sessions");
    std::fs::create_dir_all(&sessions).unwrap();
    let list = |session: &str, pid: u32| {
        std::fs::write(
            sessions.join(format!("{session}.json")),
            json!({"pid": pid, "sessionId": session, "cwd": env.project(), "kind": "interactive"})
                .to_string(),
        )
        .unwrap();
    };
    let live = std::process::id();
    list("s-one", live);
    list("s-two", live);
    assert!(two.write("a.txt", "two\n").is_err());
    assert!(two.write("src/x.rs", "two\n").is_err());
    let mut gone = Command::new("true").spawn().unwrap();
    let dead = gone.id();
    gone.wait().unwrap();
    list("s-one", dead);
    two.write("a.txt", "two\n").unwrap();
    two.write("src/x.rs", "two\n").unwrap();
}

/// A writer's claims end after `[writes] idle_minutes` without a hook, as configured.
#[test]
fn claims_end_after_the_configured_idle_time() {
    let env = project();
    std::fs::write(
        env.store().join("config.toml"),
        "[writes]\nidle_minutes = 5\n",
    )
    .unwrap();
    let one = Writer::session(&env, "s-one");
    let two = Writer::session(&env, "s-two");
    one.hook("SessionStart", json!({"source": "startup"}));
    env.ok(&["claim", "build", "src/*", "--session", "s-one"]);
    std::fs::create_dir_all(env.project().join("src")).unwrap();
    env.set_now("2026-03-01T12:04:00Z");
    assert!(two.write("src/a.rs", "two\n").is_err());
    env.set_now("2026-03-01T12:06:00Z");
    two.write("src/a.rs", "two\n").unwrap();
}

/// A writer whose clock is a day ahead: once its hooks stop it is not believed live for that
/// day (its files and claims free), yet its changes still count (content decides); its hooks
/// with a corrected clock make it live again.
#[test]
fn a_writer_from_the_future_is_live_only_while_it_works() {
    let env = project();
    let one = Writer::session(&env, "s-one");
    let two = Writer::session(&env, "s-two");
    std::fs::create_dir_all(env.project().join("src")).unwrap();
    two.write("h.txt", "two\n").unwrap();
    env.set_now("2026-03-02T12:00:00Z");
    one.write("f.txt", "one\n").unwrap();
    env.ok(&["claim", "build", "src/*", "--session", "s-one"]);
    one.bash("echo one >> h.txt").unwrap();
    env.set_now("2026-03-01T12:01:00Z");
    two.write("f.txt", "two\n").unwrap();
    two.write("src/a.rs", "two\n").unwrap();
    let reason = two.write("h.txt", "two again\n").unwrap_err();
    assert!(
        reason.contains(
            "session s-one changed it with the command `echo one >> h.txt` at 2026-03-02 12:00 UTC"
        ),
        "{reason}"
    );
    one.hook("SessionStart", json!({"source": "resume"}));
    assert!(two.write("src/b.rs", "two\n").is_err());
}

/// A hook killed in the middle of its line in the log leaves it torn: the next writes still
/// start lines of their own, so the check after a Bash command finds them and the overwrite is
/// told; a temporary file a killed hook left beside the records is ignored.
#[test]
fn a_hook_killed_mid_append_loses_only_its_own_line() {
    let env = project();
    let one = Writer::session(&env, "s-one");
    let two = Writer::session(&env, "s-two");
    one.write("x.txt", "x\n").unwrap();
    let writes = env.store().join(".writes");
    use std::io::Write as _;
    std::fs::OpenOptions::new()
        .append(true)
        .open(writes.join("log.jsonl"))
        .unwrap()
        .write_all(b"{\"at\":\"2026-03-01T12:00:00Z\",\"path\":\"/tor")
        .unwrap();
    let paths = writes.join("paths");
    let some_dir = std::fs::read_dir(&paths).unwrap().next().unwrap().unwrap();
    std::fs::write(some_dir.path().join(".tmpKILLED"), b"{\"path\":").unwrap();
    one.write("n.txt", "one's\n").unwrap();
    let told = two.bash("echo two > n.txt").unwrap();
    assert!(
        told.as_deref()
            .is_some_and(|told| told.contains("which session s-one had changed with `Write`")),
        "{told:?}"
    );
    let log = std::fs::read_to_string(writes.join("log.jsonl")).unwrap();
    let unreadable = log
        .lines()
        .filter(|line| serde_json::from_str::<Value>(line).is_err())
        .count();
    assert_eq!(unreadable, 1, "{log}");
    let report = env.json(&["report"]);
    assert_eq!(report["overwrites"][0]["path"], "n.txt");
}

/// Eight writers at once on one file: the one that wrote it and those that read it are let
/// through, those that never saw it are refused naming the writer; and at once again, each
/// after reading, all are let through.
#[test]
fn eight_concurrent_writers_on_one_file_are_each_judged_rightly() {
    let env = project();
    let writers: Vec<Writer<'_>> = (0..8)
        .map(|n| Writer::session(&env, &format!("s-{n}")))
        .collect();
    writers[0].write("shared.txt", "zero\n").unwrap();
    for reader in &writers[1..4] {
        reader.read("shared.txt");
    }
    let at_once = |readers: bool| {
        let runs: Vec<_> = writers
            .iter()
            .map(|writer| {
                let input = json!({"file_path": writer.path("shared.txt"), "content": "x\n"});
                if readers {
                    let content = std::fs::read_to_string(writer.path("shared.txt")).unwrap();
                    let lines = content.lines().count();
                    writer.start_hook("PostToolUse", json!({"tool_name": "Read", "tool_input": {"file_path": writer.path("shared.txt")},
                        "tool_response": {"type": "text", "file": {"filePath": writer.path("shared.txt"), "content": content, "numLines": lines, "startLine": 1, "totalLines": lines}}}))
                } else {
                    writer.start_hook("PreToolUse", json!({"tool_name": "Write", "tool_input": input}))
                }
            })
            .collect();
        runs.into_iter()
            .map(|run| {
                let (code, stdout, stderr) = run.wait();
                assert_eq!(code, 0, "{stderr}");
                assert!(!stderr.contains("warning"), "{stderr}");
                stdout
            })
            .collect::<Vec<_>>()
    };
    let answers = at_once(false);
    for (n, answer) in answers.iter().enumerate() {
        if n < 4 {
            assert!(!answer.contains("permissionDecision"), "s-{n}: {answer}");
        } else {
            assert!(
                answer.contains("\"deny\"") && answer.contains("session s-0 changed it"),
                "s-{n}: {answer}"
            );
        }
    }
    at_once(true);
    let answers = at_once(false);
    for (n, answer) in answers.iter().enumerate() {
        assert!(!answer.contains("permissionDecision"), "s-{n}: {answer}");
    }
}

/// A rename (or a creation) by Bash, where the client lists the files the command changed
/// (Claude Code's `bashEditDiff.changedFiles`): the new path is the mover's, so another session
/// that never saw it is refused there, and the mover is not.
#[test]
fn a_file_renamed_by_bash_is_the_movers_at_its_new_path() {
    let env = project();
    let one = Writer::session(&env, "s-one");
    let two = Writer::session(&env, "s-two");
    one.write("old.txt", "one's\n").unwrap();
    let command = "mv old.txt new.txt && echo made > made.txt";
    let input = json!({"command": command, "description": "run"});
    one.hook(
        "PreToolUse",
        json!({"tool_name": "Bash", "tool_input": input}),
    );
    std::thread::sleep(std::time::Duration::from_millis(30));
    let output = Command::new("sh")
        .args(["-c", command])
        .current_dir(env.project())
        .output()
        .unwrap();
    assert!(output.status.success());
    let changed: Vec<String> = ["old.txt", "new.txt", "made.txt"]
        .iter()
        .map(|file| one.path(file))
        .collect();
    one.hook(
        "PostToolUse",
        json!({"tool_name": "Bash", "tool_input": input, "tool_response": {
            "stdout": "", "stderr": "", "interrupted": false, "isImage": false,
            "bashEditDiff": {"files": [], "moreFiles": 0, "changedFiles": changed},
        }}),
    );
    for file in ["new.txt", "made.txt"] {
        let reason = two.write(file, "two\n").unwrap_err();
        assert!(
            reason.contains(&format!("you have not read `{file}`, and session s-one changed it with the command `mv old.txt new.txt")),
            "{reason}"
        );
    }
    one.write("new.txt", "one's, renamed\n").unwrap();
    let who = env.json(&["who", "new.txt", "--format", "json"]);
    assert_eq!(
        who["files"][0]["writes"][1]["tool"],
        format!("Bash: {command}")
    );
}
