//! `checkpoint mcp`: the MCP server spoken to over stdio as a client would, line-delimited
//! JSON-RPC, with the state checked on disk and against the command line's own documents.

use std::{
    collections::HashMap,
    fs,
    io::{BufRead, BufReader, Write},
    process::{Child, ChildStdin, Command, Stdio},
    sync::mpsc::{self, Receiver},
    thread,
    time::Duration,
};

use serde_json::{Value, json};

use crate::support::TestEnv;

/// How long a test waits for one answer.
const ANSWER_WAIT: Duration = Duration::from_secs(30);

/// The tools the server offers, in order.
const TOOLS: [&str; 22] = [
    "status",
    "resume",
    "init",
    "start",
    "progress",
    "complete",
    "fail",
    "skip",
    "task_add",
    "task_start",
    "task_done",
    "task_fail",
    "note",
    "decide",
    "files",
    "pause",
    "effect",
    "effects",
    "resolve",
    "snapshots",
    "diff_files",
    "undo",
];

/// A running `checkpoint mcp` and the lines it writes on stdout.
struct Mcp {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
    next_id: u64,
    early: HashMap<u64, Value>,
}

impl Mcp {
    /// Starts `checkpoint mcp` in the project and initializes the session.
    fn start(env: &TestEnv) -> Mcp {
        Mcp::start_with(env, &[])
    }

    #[track_caller]
    fn start_with(env: &TestEnv, vars: &[(&str, &str)]) -> Mcp {
        let mut mcp = Mcp::spawn(env.cmd().arg("mcp").envs(vars.iter().copied()));
        let info = mcp.request(
            "initialize",
            json!({
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": { "name": "it", "version": "1" },
            }),
        );
        assert_eq!(info["result"]["serverInfo"]["name"], "checkpoint", "{info}");
        mcp.send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }).to_string());
        mcp
    }

    fn spawn(command: &mut Command) -> Mcp {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (sender, lines) = mpsc::channel();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        Mcp {
            child,
            stdin,
            lines,
            next_id: 0,
            early: HashMap::new(),
        }
    }

    fn send(&mut self, line: &str) {
        writeln!(self.stdin, "{line}").unwrap();
        self.stdin.flush().unwrap();
    }

    /// Sends a request and returns its id, without waiting for the answer.
    fn send_request(&mut self, method: &str, params: Value) -> u64 {
        self.next_id += 1;
        let id = self.next_id;
        self.send(
            &json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }).to_string(),
        );
        id
    }

    /// The next message on stdout; every line must be a JSON-RPC message.
    #[track_caller]
    fn next_message(&mut self) -> Value {
        let line = self
            .lines
            .recv_timeout(ANSWER_WAIT)
            .unwrap_or_else(|err| panic!("no answer from `checkpoint mcp`: {err}"));
        let message: Value = serde_json::from_str(&line)
            .unwrap_or_else(|err| panic!("stdout carried a line that is not JSON ({err}): {line}"));
        assert_eq!(message["jsonrpc"], "2.0", "{message}");
        message
    }

    /// Waits for the answer to request `id`, skipping notifications and keeping the answers
    /// to other requests (concurrent calls may finish in any order).
    #[track_caller]
    fn answer(&mut self, id: u64) -> Value {
        if let Some(answer) = self.early.remove(&id) {
            return answer;
        }
        loop {
            let message = self.next_message();
            match message["id"].as_u64() {
                Some(answered) if answered == id => return message,
                Some(answered) => {
                    self.early.insert(answered, message);
                }
                None => assert!(message.get("id").is_none(), "{message}"),
            }
        }
    }

    #[track_caller]
    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.send_request(method, params);
        self.answer(id)
    }

    /// Calls a tool; returns its result.
    #[track_caller]
    fn call(&mut self, tool: &str, arguments: Value) -> Value {
        let answer = self.request(
            "tools/call",
            json!({ "name": tool, "arguments": arguments }),
        );
        answer
            .get("result")
            .cloned()
            .unwrap_or_else(|| panic!("`{tool}` got a protocol error: {answer}"))
    }

    /// Calls a tool that must succeed; returns its structured content.
    #[track_caller]
    fn call_ok(&mut self, tool: &str, arguments: Value) -> Value {
        let result = self.call(tool, arguments.clone());
        assert_eq!(
            result["isError"], false,
            "`{tool}` {arguments} failed: {result:#}"
        );
        assert!(result["content"][0]["text"].is_string(), "{result:#}");
        result["structuredContent"].clone()
    }

    /// Calls a tool that must fail; returns its structured error.
    #[track_caller]
    fn call_err(&mut self, tool: &str, arguments: Value) -> Value {
        let result = self.call(tool, arguments.clone());
        assert_eq!(
            result["isError"], true,
            "`{tool}` {arguments} succeeded: {result:#}"
        );
        result["structuredContent"]["error"].clone()
    }

    /// Closes stdin and asserts the server exits cleanly.
    #[track_caller]
    fn finish(mut self) {
        drop(self.stdin);
        let status = self.child.wait().unwrap();
        assert!(status.success(), "`checkpoint mcp` exited with {status}");
        assert!(
            self.lines.try_recv().is_err(),
            "`checkpoint mcp` wrote more than its answers"
        );
    }
}

/// The error the command line reports, typed, in the file `CHECKPOINT_ERROR_FILE` names.
#[track_caller]
fn cli_error(env: &TestEnv, args: &[&str]) -> Value {
    let file = env.dir.path().join("cli-error.json");
    fs::write(&file, "").unwrap();
    let output = env
        .cmd()
        .env(checkpoint_contract::env::CHECKPOINT_ERROR_FILE, &file)
        .args(["--format", "json"])
        .args(args)
        .output()
        .unwrap();
    assert!(!output.status.success(), "checkpoint {args:?} succeeded");
    serde_json::from_str(&fs::read_to_string(&file).unwrap()).unwrap()
}

/// Asserts that an MCP tool error carries the command line's message, code and hint.
#[track_caller]
fn assert_same_error(mcp_error: &Value, cli_error: &Value) {
    assert_eq!(mcp_error["message"], cli_error["message"], "{mcp_error:#}");
    assert_eq!(mcp_error["code"], cli_error["code"], "{mcp_error:#}");
    assert_eq!(mcp_error["hint"], cli_error["help"], "{mcp_error:#}");
}

fn plan() -> Value {
    json!({
        "title": "Payments",
        "phases": [
            { "id": "design" },
            { "id": "build", "dependencies": ["design"] },
            { "id": "ship", "dependencies": ["build"] },
        ],
    })
}

#[test]
fn initialize_and_list_tools_with_schemas() {
    let env = TestEnv::new();
    let mut mcp = Mcp::spawn(env.cmd().arg("mcp"));
    let info = mcp.request(
        "initialize",
        json!({
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": { "name": "it", "version": "1" },
        }),
    );
    let result = &info["result"];
    assert_eq!(result["protocolVersion"], "2025-06-18", "{info:#}");
    for capability in ["tools", "resources", "prompts"] {
        assert!(result["capabilities"][capability].is_object(), "{info:#}");
    }
    assert!(
        result["instructions"]
            .as_str()
            .unwrap()
            .contains("Prefer them"),
        "{info:#}"
    );
    mcp.send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }).to_string());

    let tools = mcp.request("tools/list", json!({}))["result"]["tools"].clone();
    let names: Vec<&str> = tools
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, TOOLS);
    for tool in tools.as_array().unwrap() {
        let schema = &tool["inputSchema"];
        assert_eq!(schema["type"], "object", "{tool:#}");
        assert_eq!(schema["additionalProperties"], false, "{tool:#}");
        assert!(tool["description"].as_str().unwrap().len() > 40, "{tool:#}");
    }
    let complete = tools
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "complete")
        .unwrap();
    assert_eq!(
        complete["inputSchema"]["required"],
        json!(["phase"]),
        "{complete:#}"
    );
    assert_eq!(
        complete["inputSchema"]["properties"]["artifacts"]["type"], "array",
        "{complete:#}"
    );
    assert_eq!(
        complete["annotations"]["readOnlyHint"], false,
        "{complete:#}"
    );
    let status = tools
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "status")
        .unwrap();
    assert_eq!(status["annotations"]["readOnlyHint"], true, "{status:#}");
    // The init tool takes the plan as an object described by the plan file's schema.
    let init = tools
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "init")
        .unwrap();
    let plan_ref = init["inputSchema"]["properties"]["plan"]["$ref"]
        .as_str()
        .unwrap();
    let plan_schema = &init["inputSchema"]["$defs"][plan_ref.trim_start_matches("#/$defs/")];
    assert_eq!(plan_schema["required"], json!(["phases"]), "{init:#}");
    mcp.finish();
}

#[test]
fn every_tool_changes_the_state_as_the_cli_would() {
    let env = TestEnv::new();
    let mut mcp = Mcp::start(&env);

    let created = mcp.call_ok("init", json!({ "id": "pay", "plan": plan() }));
    assert_eq!(created["workflow"]["title"], "Payments", "{created:#}");
    assert_eq!(created["workflow"], env.state("pay"));

    mcp.call_ok(
        "task_add",
        json!({ "phase": "design", "task": "api", "title": "Sketch the API" }),
    );
    mcp.call_ok("task_start", json!({ "phase": "design", "task": "api" }));
    mcp.call_ok("task_done", json!({ "phase": "design", "task": "api" }));
    mcp.call_ok(
        "progress",
        json!({ "phase": "design", "note": "API sketched" }),
    );
    mcp.call_ok("note", json!({ "text": "the key is AKIAIOSFODNN7EXAMPLE" }));
    mcp.call_ok(
        "decide",
        json!({ "text": "REST over gRPC: simpler clients" }),
    );
    mcp.call_ok("files", json!({ "paths": ["docs/api.md", "src/pay.rs"] }));
    fs::create_dir_all(env.project().join("docs")).unwrap();
    fs::write(env.project().join("docs/api.md"), "# API\n").unwrap();
    let completed = mcp.call_ok(
        "complete",
        json!({ "phase": "design", "artifacts": ["docs/api.md"], "commit_sha": "0123456789abcdef0123456789abcdef01234567" }),
    );
    // The structured result is the document `--format json` prints, and it is what is on disk.
    assert_eq!(completed["version"], 1, "{completed:#}");
    assert_eq!(completed["workflow"], env.state("pay"));
    assert_eq!(mcp.call_ok("status", json!({})), env.json(&["status"]));

    // A session that stopped with `build` in progress: the plan proposes to recover it, and
    // only `apply` writes the recovery.
    mcp.call_ok("start", json!({ "phase": "build" }));
    // The session working on `build` stops (its Stop hook leaves a heartbeat) and is gone: half
    // an hour later the phase counts as interrupted (one active within
    // `interrupted_after_minutes` is live, and one no session worked on is never reset).
    let stop = json!({
        "session_id": "11111111-2222-3333-4444-555555555555",
        "transcript_path": "/tmp/transcript.jsonl",
        "cwd": env.project(),
        "hook_event_name": "Stop",
        "stop_hook_active": false,
    });
    assert_eq!(env.hook("Stop", &stop.to_string()).wait().0, 0);
    mcp.finish();
    env.set_now("2026-03-01T12:30:00Z");
    let mut mcp = Mcp::start(&env);
    let planned = mcp.call_ok("resume", json!({}));
    assert_eq!(planned["applied"], false, "{planned:#}");
    assert_eq!(planned, env.json(&["resume", "--dry-run"]));
    assert_eq!(env.state("pay")["phases"][1]["status"], "in_progress");
    let applied = mcp.call_ok("resume", json!({ "apply": true }));
    assert_eq!(applied["applied"], true, "{applied:#}");
    assert_eq!(env.state("pay")["phases"][1]["status"], "pending");

    mcp.call_ok("start", json!({ "phase": "build" }));
    mcp.call_ok(
        "task_add",
        json!({ "phase": "build", "task": "db", "output": "db.sql" }),
    );
    mcp.call_ok(
        "task_fail",
        json!({ "phase": "build", "task": "db", "reason": "no schema" }),
    );
    mcp.call_ok(
        "fail",
        json!({ "phase": "build", "reason": "blocked on the schema" }),
    );
    mcp.call_ok(
        "skip",
        json!({ "phase": "ship", "reason": "not this quarter" }),
    );
    mcp.call_ok(
        "pause",
        json!({ "reason": "rate_limit", "until": "2026-03-01T13:00:00Z" }),
    );

    let state = env.state("pay");
    let design = &state["phases"][0];
    assert_eq!(design["status"], "complete", "{state:#}");
    assert_eq!(design["progress"], "API sketched", "{state:#}");
    assert_eq!(design["artifacts"][0]["path"], "docs/api.md", "{state:#}");
    assert_eq!(
        design["commit_sha"],
        "0123456789abcdef0123456789abcdef01234567"
    );
    assert_eq!(design["tasks"][0]["status"], "done", "{state:#}");
    let build = &state["phases"][1];
    assert_eq!(build["status"], "failed", "{state:#}");
    assert_eq!(build["tasks"][0]["status"], "failed", "{state:#}");
    assert_eq!(state["phases"][2]["status"], "skipped", "{state:#}");
    assert_eq!(state["pause"]["reason"], "rate_limit", "{state:#}");
    let context = state["context"].to_string();
    for needle in ["REST over gRPC", "docs/api.md", "src/pay.rs", "the key is"] {
        assert!(context.contains(needle), "{needle} missing: {context}");
    }
    // Free text is redacted before it is journaled, exactly as on the command line.
    let journal = env.read("pay", "journal.jsonl");
    assert!(!journal.contains("AKIAIOSFODNN7EXAMPLE"), "{journal}");
    assert!(!context.contains("AKIAIOSFODNN7EXAMPLE"), "{context}");

    mcp.finish();
}

#[test]
fn errors_carry_the_cli_message_code_and_hint_and_change_nothing() {
    let env = TestEnv::new();
    env.ok(&[
        "init",
        "pay",
        "--phase",
        "design",
        "--phase",
        "build:design",
    ]);
    let before = env.read("pay", "state.json");
    let mut mcp = Mcp::start(&env);

    // A refused transition: the dependency is not done.
    let refused = mcp.call_err("complete", json!({ "phase": "build" }));
    assert_same_error(&refused, &cli_error(&env, &["complete", "build"]));
    assert_eq!(
        refused["exit_code"],
        checkpoint_contract::exit_code::REFUSED,
        "{refused:#}"
    );
    // An unknown phase, an unknown workflow.
    let unknown_phase = mcp.call_err("start", json!({ "phase": "nope" }));
    assert_same_error(&unknown_phase, &cli_error(&env, &["start", "nope"]));
    let unknown_workflow = mcp.call_err("status", json!({ "workflow": "nope" }));
    assert_same_error(
        &unknown_workflow,
        &cli_error(&env, &["--workflow", "nope", "status"]),
    );
    assert_eq!(
        unknown_workflow["exit_code"],
        checkpoint_contract::exit_code::NOT_FOUND,
        "{unknown_workflow:#}"
    );
    // A command line clap refuses (no paths): a usage error, with clap's message and usage.
    let usage = mcp.call_err("files", json!({ "paths": [] }));
    assert_same_error(&usage, &cli_error(&env, &["files"]));
    assert_eq!(
        usage["code"],
        checkpoint_contract::diagnostic::USAGE,
        "{usage:#}"
    );
    assert_eq!(
        usage["exit_code"],
        checkpoint_contract::exit_code::USAGE,
        "{usage:#}"
    );
    assert!(
        usage["message"].as_str().unwrap().contains("<PATHS>"),
        "{usage:#}"
    );
    assert_eq!(
        env.read("pay", "state.json"),
        before,
        "a refused call wrote state"
    );

    // Bad arguments: missing, mistyped, unknown; each names the argument.
    for (arguments, needle) in [
        (json!({}), "missing field `phase`"),
        (json!({ "phase": 3 }), "invalid type"),
        (
            json!({ "phase": "design", "sha": "x" }),
            "unknown field `sha`",
        ),
        (
            json!({ "phase": "design", "artifacts": "a.md" }),
            "invalid type",
        ),
    ] {
        let error = mcp.call_err("complete", arguments.clone());
        assert_eq!(
            error["code"], "checkpoint::mcp::invalid_arguments",
            "{error:#}"
        );
        assert!(
            error["message"].as_str().unwrap().contains(needle),
            "{arguments}: {error:#}"
        );
    }
    // An unknown tool is a protocol error, and the server keeps serving.
    let answer = mcp.request(
        "tools/call",
        json!({ "name": "approve", "arguments": { "phase": "design" } }),
    );
    assert_eq!(answer["error"]["code"], -32602, "{answer:#}");
    assert_eq!(
        env.read("pay", "state.json"),
        before,
        "a bad call wrote state"
    );
    mcp.call_ok("start", json!({ "phase": "design" }));
    mcp.finish();
}

#[test]
fn lock_timeout_is_a_tool_error_and_the_server_keeps_running() {
    let env = TestEnv::new();
    env.ok(&["init", "pay", "--phase", "design"]);
    env.ok(&["start", "design"]);
    let mut mcp = Mcp::start_with(&env, &[("CHECKPOINT_LOCK_TIMEOUT", "0.2")]);
    let lock = fs::OpenOptions::new()
        .write(true)
        .open(env.workflow_dir("pay").join("lock"))
        .unwrap();
    lock.lock().unwrap();

    let error = mcp.call_err("progress", json!({ "phase": "design", "note": "x" }));
    let cli = env
        .cmd()
        .env("CHECKPOINT_LOCK_TIMEOUT", "0.2")
        .args(["--format", "json", "progress", "design", "x"])
        .output()
        .unwrap();
    let cli: Value = serde_json::from_str(
        String::from_utf8(cli.stderr)
            .unwrap()
            .lines()
            .last()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(error["code"], cli["code"], "{error:#}");
    assert_eq!(error["hint"], cli["help"], "{error:#}");
    assert_eq!(
        error["exit_code"],
        checkpoint_contract::exit_code::LOCKED,
        "{error:#}"
    );
    assert!(
        error["hint"]
            .as_str()
            .unwrap()
            .contains("CHECKPOINT_LOCK_TIMEOUT"),
        "{error:#}"
    );

    lock.unlock().unwrap();
    mcp.call_ok(
        "progress",
        json!({ "phase": "design", "note": "after the lock" }),
    );
    assert_eq!(env.state("pay")["phases"][0]["progress"], "after the lock");
    mcp.finish();
}

#[test]
fn malformed_json_rpc_gets_an_answer_and_the_server_keeps_running() {
    let env = TestEnv::new();
    env.ok(&["init", "pay", "--phase", "design"]);
    let mut mcp = Mcp::start(&env);

    // Unparsable input is a parse error, answered with the id `null` (JSON-RPC 2.0 §5.1).
    mcp.send("this is not JSON");
    mcp.send("{\"jsonrpc\": \"2.0\", \"id\": 1,");
    for _ in 0..2 {
        let parse_error = mcp.next_message();
        assert_eq!(parse_error["error"]["code"], -32700, "{parse_error:#}");
        assert_eq!(parse_error["id"], Value::Null, "{parse_error:#}");
    }
    // JSON that is not a JSON-RPC message is an invalid request.
    mcp.send("{\"hello\": \"world\"}");
    let invalid = mcp.next_message();
    assert_eq!(invalid["error"]["code"], -32600, "{invalid:#}");
    assert_eq!(invalid["id"], Value::Null, "{invalid:#}");
    // An unknown method.
    let unknown = mcp.request("workflows/explode", json!({}));
    assert_eq!(unknown["error"]["code"], -32601, "{unknown:#}");
    // Tool arguments that are not an object.
    let not_object = mcp.request(
        "tools/call",
        json!({ "name": "status", "arguments": [1, 2] }),
    );
    assert!(not_object.get("error").is_some(), "{not_object:#}");

    let status = mcp.call_ok("status", json!({}));
    assert_eq!(status["workflow"]["id"], "pay", "{status:#}");
    mcp.finish();
}

#[test]
fn resources_and_the_resume_prompt() {
    let env = TestEnv::new();
    env.ok(&[
        "init",
        "pay",
        "--phase",
        "design",
        "--phase",
        "build:design",
    ]);
    env.ok(&["start", "design"]);
    env.ok(&["progress", "design", "halfway"]);
    let mut mcp = Mcp::start(&env);

    let listed = mcp.request("resources/list", json!({}));
    let uris: Vec<&str> = listed["result"]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|resource| resource["uri"].as_str().unwrap())
        .collect();
    assert_eq!(
        uris,
        ["checkpoint://pay/state", "checkpoint://pay/journal"],
        "{listed:#}"
    );

    let state = mcp.request("resources/read", json!({ "uri": "checkpoint://pay/state" }));
    let text = state["result"]["contents"][0]["text"].as_str().unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(text).unwrap(),
        env.state("pay")
    );
    let journal = mcp.request(
        "resources/read",
        json!({ "uri": "checkpoint://pay/journal" }),
    );
    let text = journal["result"]["contents"][0]["text"].as_str().unwrap();
    let entries = serde_json::from_str::<Value>(text).unwrap()["entries"].clone();
    assert_eq!(entries.as_array().unwrap().len(), 3, "{entries:#}");
    let missing = mcp.request(
        "resources/read",
        json!({ "uri": "checkpoint://nope/state" }),
    );
    assert_eq!(missing["error"]["code"], -32002, "{missing:#}");

    let prompts = mcp.request("prompts/list", json!({}));
    assert_eq!(
        prompts["result"]["prompts"][0]["name"], "resume",
        "{prompts:#}"
    );
    let prompt = mcp.request(
        "prompts/get",
        json!({ "name": "resume", "arguments": { "workflow": "pay" } }),
    );
    let text = prompt["result"]["messages"][0]["content"]["text"]
        .as_str()
        .unwrap();
    assert!(text.contains("workflow `pay`"), "{text}");
    assert!(text.contains("halfway"), "{text}");
    // The prompt only plans: the interrupted phase is still in progress on disk.
    assert_eq!(env.state("pay")["phases"][0]["status"], "in_progress");
    mcp.finish();
}

/// A command line and MCP calls writing one workflow at once lose nothing: both go through the
/// store's lock.
#[test]
fn cli_and_mcp_racing_lose_nothing() {
    const N: usize = 8;
    let env = TestEnv::new();
    env.ok(&["init", "pay", "--phase", "design"]);
    let mut mcp = Mcp::start(&env);

    let ids: Vec<u64> = (0..N)
        .map(|i| {
            mcp.send_request(
                "tools/call",
                json!({ "name": "note", "arguments": { "text": format!("mcp note {i}") } }),
            )
        })
        .collect();
    let cli: Vec<Child> = (0..N)
        .map(|i| {
            env.cmd()
                .args(["note", &format!("cli note {i}")])
                .stdout(Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for id in ids {
        let answer = mcp.answer(id);
        assert_eq!(answer["result"]["isError"], false, "{answer:#}");
    }
    for mut child in cli {
        assert!(child.wait().unwrap().success());
    }

    let notes = env.state("pay")["context"]["notes"].to_string();
    for i in 0..N {
        for source in ["mcp", "cli"] {
            let note = format!("{source} note {i}");
            assert!(notes.contains(&note), "{note} was lost: {notes}");
        }
    }
    let journal = env.read("pay", "journal.jsonl");
    assert_eq!(journal.lines().count(), 1 + 2 * N, "{journal}");
    mcp.finish();
}

/// `checkpoint mcp --help` documents the server as a user would read it.
#[test]
fn help_names_the_server() {
    let env = TestEnv::new();
    let help = env.ok(&["mcp", "--help"]);
    assert!(
        help.contains("Serve the project's workflows to MCP clients"),
        "{help}"
    );
    let top = env.ok(&["--help"]);
    assert!(top.contains("mcp"), "{top}");
}

/// Beside the structured document, a result carries a short text for clients that show only
/// text: what happened and where the workflow stands; `status` and `resume` add the document.
#[test]
fn results_carry_a_short_text_for_the_model() {
    let env = TestEnv::new();
    env.ok(&[
        "init",
        "pay",
        "--phase",
        "design",
        "--phase",
        "build:design",
    ]);
    let mut mcp = Mcp::start(&env);

    let started = mcp.call("start", json!({ "phase": "design" }));
    assert_eq!(
        started["content"][0]["text"],
        "started phase `design`\nworkflow `pay` is `in_progress`: `design` in_progress, `build` pending",
        "{started:#}"
    );
    let status = mcp.call("status", json!({}));
    let text = status["content"][0]["text"].as_str().unwrap();
    let (summary, document) = text.split_once("\n\n").unwrap();
    assert_eq!(
        summary,
        "status of the workflow\nworkflow `pay` is `in_progress`: `design` in_progress, `build` pending"
    );
    assert_eq!(
        serde_json::from_str::<Value>(document).unwrap(),
        status["structuredContent"]
    );
    mcp.finish();
}

/// The MCP `task_add` and `files` tools keep paths inside the project, as the CLI does: an
/// output or a file outside it is an error naming it, and nothing is stored.
#[test]
fn task_outputs_and_files_outside_the_project_are_refused_through_mcp() {
    let env = TestEnv::new();
    let mut mcp = Mcp::start(&env);
    mcp.call_ok("init", json!({ "id": "pay", "plan": plan() }));
    let before = env.read("pay", "journal.jsonl");
    for path in ["/etc/passwd", "../../../etc/hostname", "/root/.ssh/id_rsa"] {
        let error = mcp.call_err(
            "task_add",
            json!({ "phase": "design", "task": "t3", "output": path }),
        );
        assert_eq!(
            error["code"], "checkpoint::path_outside_project",
            "{error:#}"
        );
        let error = mcp.call_err("files", json!({ "paths": [path] }));
        assert_eq!(
            error["code"], "checkpoint::path_outside_project",
            "{error:#}"
        );
    }
    assert_eq!(
        env.read("pay", "journal.jsonl"),
        before,
        "nothing was stored"
    );
}

/// Every invalid request is answered with its own `id` and the JSON-RPC 2.0 code that fits:
/// parameters of the wrong type or missing for a method the server has are `-32602`, never
/// "method not found"; the server keeps running.
#[test]
fn invalid_requests_are_answered_with_their_id() {
    let env = TestEnv::new();
    env.ok(&["init", "pay", "--phase", "design"]);
    let mut mcp = Mcp::start(&env);
    let cases = [
        (json!("a string"), "tools/call", -32600),
        (json!(17), "tools/call", -32600),
        (json!([1, 2]), "tools/call", -32602),
        (json!([]), "tools/list", -32602),
        (
            json!({ "name": "status", "arguments": {}, "_meta": "x" }),
            "tools/call",
            -32602,
        ),
        (json!({ "_meta": 5 }), "tools/list", -32602),
        (json!({}), "prompts/get", -32602),
        (json!({}), "resources/read", -32602),
        (json!({ "uri": 5 }), "resources/read", -32602),
        (json!({ "arguments": {} }), "tools/call", -32602),
    ];
    for (n, (params, method, code)) in cases.into_iter().enumerate() {
        for id in [json!(1000 + n), json!(format!("req-{n}"))] {
            let request = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params });
            mcp.send(&request.to_string());
            let answer = mcp.next_message();
            assert_eq!(answer["id"], id, "{request} -> {answer}");
            assert_eq!(answer["error"]["code"], code, "{request} -> {answer}");
        }
    }
    // A request without `params` for a method that needs them.
    for method in ["tools/call", "resources/read", "prompts/get"] {
        mcp.send(&json!({ "jsonrpc": "2.0", "id": method, "method": method }).to_string());
        let answer = mcp.next_message();
        assert_eq!(answer["id"], method, "{answer}");
        assert_eq!(answer["error"]["code"], -32602, "{answer}");
    }
    // An `id` of the wrong type cannot be answered by it.
    mcp.send(r#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#);
    let answer = mcp.next_message();
    assert_eq!(
        (answer["id"].clone(), answer["error"]["code"].clone()),
        (Value::Null, json!(-32600))
    );
    // Methods that need no parameters, and unknown ones, are as before.
    let listed = mcp.request("tools/list", json!({}));
    assert_eq!(
        listed["result"]["tools"].as_array().unwrap().len(),
        TOOLS.len()
    );
    let unknown = mcp.request("workflows/explode", json!({}));
    assert_eq!(unknown["error"]["code"], -32601, "{unknown:#}");
    let status = mcp.call_ok("status", json!({}));
    assert_eq!(status["workflow"]["id"], "pay", "{status:#}");
    mcp.finish();
}

/// A line longer than the server reads is answered (with its id, read from its start), not
/// dropped with the client left waiting; the server keeps running.
#[test]
fn a_line_over_the_limit_gets_an_answer() {
    let env = TestEnv::new();
    env.ok(&["init", "pay", "--phase", "design"]);
    let mut mcp = Mcp::start(&env);
    let text = "x".repeat(16 * 1024 * 1024 + 1);
    for id in [json!(77), json!("big")] {
        let request = json!({
            "jsonrpc": "2.0",
            "id": id,
            "method": "tools/call",
            "params": { "name": "note", "arguments": { "text": text } },
        });
        mcp.send(&request.to_string());
        let answer = mcp.next_message();
        assert_eq!(answer["id"], id, "{answer}");
        assert_eq!(answer["error"]["code"], -32600, "{answer}");
        assert!(
            answer["error"]["message"]
                .as_str()
                .unwrap()
                .contains("over the limit"),
            "{answer}"
        );
    }
    // With the id after the long part, there is none to read: `null`.
    mcp.send(&format!(
        r#"{{"jsonrpc":"2.0","params":{{"x":"{text}"}},"id":5,"method":"ping"}}"#
    ));
    let answer = mcp.next_message();
    assert_eq!(
        (answer["id"].clone(), answer["error"]["code"].clone()),
        (Value::Null, json!(-32600))
    );
    drop(text);
    assert!(
        env.state("pay")["context"]["notes"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    let status = mcp.call_ok("status", json!({}));
    assert_eq!(status["workflow"]["id"], "pay", "{status:#}");
    mcp.finish();
}

/// Texts longer than one command-line argument may be (128 KiB) are recorded whole by the tools
/// that take long texts; any other value that long is refused for what it is, nothing changed.
#[test]
fn texts_longer_than_one_argument_are_recorded_or_refused_for_what_they_are() {
    let env = TestEnv::new();
    env.ok(&["init", "pay", "--phase", "design"]);
    let mut mcp = Mcp::start(&env);
    mcp.call_ok("start", json!({ "phase": "design" }));
    for len in [128 * 1024 - 1, 128 * 1024, 300 * 1024, 2 * 1024 * 1024] {
        let text = format!("{len} {}", "é".repeat(len / 2));
        mcp.call_ok("note", json!({ "text": text }));
        mcp.call_ok("decide", json!({ "text": text }));
        mcp.call_ok("progress", json!({ "phase": "design", "note": text }));
        let state = env.state("pay");
        assert_eq!(
            state["context"]["notes"]
                .as_array()
                .unwrap()
                .last()
                .unwrap()["text"],
            text
        );
        assert_eq!(
            state["context"]["key_decisions"]
                .as_array()
                .unwrap()
                .last()
                .unwrap()["text"],
            text
        );
        assert_eq!(state["phases"][0]["progress"], text);
    }
    let journal_before = env.read("pay", "journal.jsonl");
    let reason = "r".repeat(200 * 1024);
    for (tool, arguments) in [
        ("fail", json!({ "phase": "design", "reason": reason })),
        ("pause", json!({ "reason": reason })),
    ] {
        let error = mcp.call_err(tool, arguments);
        assert_eq!(
            error["code"], "checkpoint::mcp::argument_too_long",
            "{error:#}"
        );
        assert!(
            error["message"]
                .as_str()
                .unwrap()
                .contains("command-line argument"),
            "{error:#}"
        );
    }
    assert_eq!(env.read("pay", "journal.jsonl"), journal_before);
    mcp.finish();
}

/// The `effect` tool records as `checkpoint effect` does (its source `mcp`, redacted), and the
/// `effects` tool lists what `checkpoint effects` lists; no tool lets a repeat through.
#[test]
fn the_effect_tools_record_and_list_as_the_cli_would() {
    let env = TestEnv::new();
    env.ok(&["init", "fx", "--phase", "deploy"]);
    env.ok(&["start", "deploy"]);
    let mut mcp = Mcp::start(&env);

    let recorded = mcp.call_ok(
        "effect",
        json!({
            "phase": "deploy",
            "what": "-X emailed the customer with AKIAIOSFODNN7EXAMPLE",
            "output": "ticket OPS-7",
        }),
    );
    assert_eq!(recorded["effect"]["number"], 1, "{recorded:#}");
    assert_eq!(recorded["effect"]["source"], "mcp", "{recorded:#}");
    assert_eq!(recorded["effect"]["output"], "ticket OPS-7", "{recorded:#}");
    assert_eq!(recorded["workflow"], env.state("fx"));
    let listed = mcp.call_ok("effects", json!({}));
    assert_eq!(listed, env.json(&["effects"]));
    assert_eq!(
        mcp.call_ok("effects", json!({ "all": true, "phase": null })),
        env.json(&["effects", "--all"])
    );
    let journal = env.read("fx", "journal.jsonl");
    assert!(!journal.contains("AKIAIOSFODNN7EXAMPLE"), "{journal}");
    assert!(journal.contains("-X emailed the customer"), "{journal}");

    let error = mcp.call_err("effect", json!({ "phase": "nope", "what": "x" }));
    assert_eq!(
        error["exit_code"],
        checkpoint_contract::exit_code::NOT_FOUND,
        "{error:#}"
    );
    let unknown = mcp.call_err(
        "effect",
        json!({ "phase": "deploy", "what": "x", "force": true }),
    );
    assert!(unknown.to_string().contains("force"), "{unknown:#}");
    let tools = mcp.request("tools/list", json!({}))["result"]["tools"].clone();
    assert!(
        tools
            .as_array()
            .unwrap()
            .iter()
            .all(|tool| !tool["name"].as_str().unwrap().contains("allow")),
        "{tools:#}"
    );
    mcp.finish();
}

/// The MCP server means the workflow the command line means: the one `checkpoint use` chose,
/// else the only unfinished one, finished ones never in the way.
#[test]
fn the_server_means_the_workflow_use_chose_and_ignores_finished_ones() {
    let env = TestEnv::new();
    env.ok(&["init", "old", "--phase", "design"]);
    env.ok(&["abandon", "-w", "old"]);
    env.ok(&["init", "pay", "--phase", "design"]);
    let mut mcp = Mcp::start(&env);
    // One unfinished, one abandoned: the unfinished one, never "ambiguous".
    assert_eq!(mcp.call_ok("status", json!({}))["workflow"]["id"], "pay");
    env.ok(&["init", "search", "--phase", "design"]);
    assert_eq!(
        mcp.call_err("status", json!({}))["code"],
        "checkpoint::ambiguous_workflow"
    );
    env.ok(&["use", "search"]);
    assert_eq!(mcp.call_ok("status", json!({}))["workflow"]["id"], "search");
    mcp.call_ok("start", json!({ "phase": "design" }));
    assert_eq!(env.state("search")["phases"][0]["status"], "in_progress");
    assert_eq!(env.state("pay")["phases"][0]["status"], "pending");
    mcp.finish();
}

#[test]
fn the_file_tools_list_compare_and_undo_as_the_cli_would() {
    let env = crate::support::repo();
    let root = env.project();
    env.ok(&["init", "w", "--phase", "build"]);
    fs::write(root.join("a.txt"), "one\n").unwrap();
    env.ok(&["snapshot"]);
    fs::write(root.join("a.txt"), "two\n").unwrap();
    env.ok(&["snapshot"]);
    let mut mcp = Mcp::start(&env);
    assert_eq!(
        mcp.call_ok("snapshots", json!({})),
        env.json(&["snapshots"])
    );
    let diff = mcp.call_ok("diff_files", json!({ "from": "@1", "to": "@2" }));
    assert_eq!(diff["files"][0]["path"], "a.txt", "{diff:#}");
    let dry = mcp.call_ok("undo", json!({ "to": "@1", "dry_run": true }));
    assert_eq!(dry["dry_run"], true, "{dry:#}");
    assert_eq!(dry["files"][0]["action"], "modify", "{dry:#}");
    assert_eq!(fs::read_to_string(root.join("a.txt")).unwrap(), "two\n");
    let done = mcp.call_ok("undo", json!({ "to": "@1", "paths": ["a.txt"] }));
    assert_eq!(done["dry_run"], false, "{done:#}");
    assert_eq!(fs::read_to_string(root.join("a.txt")).unwrap(), "one\n");
    let error = mcp.call_err("undo", json!({ "to": "@7" }));
    assert_eq!(error["code"], "checkpoint::files::no_snapshot", "{error:#}");
    assert_eq!(
        error["exit_code"],
        checkpoint_contract::exit_code::NOT_FOUND,
        "{error:#}"
    );
}

/// The MCP server is the agent's tool: its `resolve` only proposes what became of an unknown
/// effect (a note naming the command a person runs), and the effect stays unknown and guarded.
#[test]
fn the_resolve_tool_only_proposes_and_the_effect_stays_unknown_until_a_person_says() {
    let env = TestEnv::new();
    env.ok(&["init", "fx", "--phase", "deploy"]);
    env.ok(&["start", "deploy"]);
    let push = |id: &str| {
        crate::support::hook_payload(
            &env,
            "PreToolUse",
            json!({"tool_name": "Bash", "tool_input": {"command": "git push origin main"}, "tool_use_id": id}),
        )
    };
    let guard = |id: &str| {
        let (code, out, err) = env
            .hook_with_env(
                "PreToolUse",
                &push(id),
                &[("CLAUDE_CODE_ENTRYPOINT", "sdk-cli")],
            )
            .wait();
        assert_eq!(code, 0, "{err}");
        out
    };
    // Let through, then cut off: a new session finds it unknown.
    assert_eq!(guard("toolu_1"), "");
    crate::support::session_start_context(&env);
    let mut mcp = Mcp::start(&env);
    let token = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";
    for done in [true, false] {
        let proposed = mcp.call_ok(
            "resolve",
            json!({"number": 1, "done": done, "evidence": format!("git ls-remote origin main: 1111 refs/heads/main ({token})")}),
        );
        assert_eq!(proposed["effect"]["unknown"], true, "{proposed:#}");
        assert_eq!(proposed["effect"]["ok"], false, "{proposed:#}");
    }
    // Still unknown, still refused; the proposals are in the journal for the person, redacted.
    assert_eq!(env.json(&["effects"])["effects"][0]["unknown"], true);
    assert!(guard("toolu_2").contains("outcome unknown"));
    let journal = env.read("fx", "journal.jsonl");
    assert!(!journal.contains(token), "{journal}");
    let log = env.ok(&["log", "--full"]);
    for part in [
        "proposed by an agent: effect 1 (`git push origin main`) happened",
        "checkpoint effects resolve 1 --done",
        "checkpoint effects resolve 1 --not-done",
    ] {
        assert!(log.contains(part), "{part} in {log}");
    }
    // What the person may not answer, the proposal may not either, and writes nothing.
    for number in [0, 2] {
        let error = mcp.call_err(
            "resolve",
            json!({"number": number, "done": true, "evidence": "x"}),
        );
        assert_eq!(
            error["exit_code"],
            checkpoint_contract::exit_code::REFUSED,
            "{error:#}"
        );
    }
    assert_eq!(env.read("fx", "journal.jsonl"), journal);
    mcp.finish();
    // From an agent's shell the CLI takes a proposal and refuses an answer.
    let inside = |args: &[&str]| {
        env.cmd()
            .args(args)
            .env("CLAUDECODE", "1")
            .output()
            .unwrap()
            .status
            .code()
    };
    assert_eq!(
        inside(&["effects", "resolve", "1", "--done", "--propose", "seen"]),
        Some(0)
    );
    assert_eq!(inside(&["effects", "resolve", "1", "--done"]), Some(3));
    assert_eq!(env.json(&["effects"])["effects"][0]["unknown"], true);
    // The person settles it.
    env.ok(&["effects", "resolve", "1", "--done"]);
    assert!(guard("toolu_3").contains("already succeeded"));
}
