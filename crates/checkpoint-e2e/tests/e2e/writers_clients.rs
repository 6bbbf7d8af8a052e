//! The write guard of several sessions on Codex CLI and Gemini CLI (issue 42), on the real
//! clients: two sessions at once in one checkout, session A writes `shared.txt` and `own.txt`
//! through the client's file tool, session B appends to `shared.txt` through the shell, and A's
//! next file-tool write of `shared.txt` is refused by its `PreToolUse` (`BeforeTool`) hook naming
//! session B, the file keeping B's change; A's writes of `own.txt`, which nobody else touched,
//! are never refused. The sessions share one scripted mock: B runs while A waits in a shell
//! command for a flag the test sets once B is done, so the order of the turns is fixed.

use std::process::{Child, Output, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use checkpoint_e2e::{
    CodexEnv, GeminiEnv, GeminiMock, GeminiTurn, Plugin, ResponsesMock, ResponsesTurn,
};
use serde_json::{Value, json};

use crate::support::{assert_contains_all, checkpoint_command};

/// What session B appends to `shared.txt`.
const OTHER: &str = "from other";
/// The flag session A waits for: B is done.
const FLAG: &str = "other.done";
/// How long a session may take.
const SESSION_WAIT: Duration = Duration::from_secs(120);

/// Waits until `count()` reaches `n`, or panics naming `what`.
#[track_caller]
fn wait_for(what: &str, n: usize, count: impl Fn() -> usize) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while count() < n {
        assert!(Instant::now() < deadline, "{what}: {} of {n}", count());
        thread::sleep(Duration::from_millis(50));
    }
}

/// Waits for `child` to end (killing it after [`SESSION_WAIT`]); its output.
fn finish(mut child: Child) -> Output {
    let deadline = Instant::now() + SESSION_WAIT;
    while child.try_wait().ok().flatten().is_none() && Instant::now() < deadline {
        thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    child.wait_with_output().expect("the session's output")
}

fn show(output: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        output.status.code(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// The session that made the shell write of `shared.txt`, from `checkpoint who --format json`.
#[track_caller]
fn shell_writer(who: &str) -> String {
    let who: Value = serde_json::from_str(who).unwrap();
    who["files"][0]["writes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|write| {
            let tool = write["tool"].as_str().unwrap_or_default();
            tool.starts_with("Bash") || tool.starts_with("run_shell_command")
        })
        .and_then(|write| write["session"].as_str())
        .unwrap_or_else(|| panic!("no shell write of shared.txt in {who:#}"))
        .to_owned()
}

/// The reason's parts every refusal of A's write of `shared.txt` holds: B is named first (A's
/// own waiting command ran at the time too, so the reason names it as well, after B).
fn refusal_parts(other: &str) -> [String; 4] {
    [
        "`shared.txt` changed since you last read it: ".to_owned(),
        format!("read it: session {other} "),
        "(`printf 'from other".to_owned(),
        "so it was not made: read it again, then make your change".to_owned(),
    ]
}

/// The output of the last tool call a Responses request carries, as the model reads it.
fn last_output(request: &Value) -> String {
    request["input"]
        .as_array()
        .and_then(|items| {
            items.iter().rev().find(|item| {
                item["type"]
                    .as_str()
                    .is_some_and(|kind| kind.ends_with("_output"))
            })
        })
        .map(|item| match &item["output"] {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        })
        .unwrap_or_default()
}

fn patch(body: &str) -> ResponsesTurn {
    ResponsesTurn::Patch(format!("*** Begin Patch\n{body}\n*** End Patch"))
}

/// Codex CLI: a refused `apply_patch` (its `PreToolUse` hook's `permissionDecision: "deny"`),
/// what the model reads, the file untouched; after `cat` of the file (Codex's read) the patch
/// goes through; `own.txt` written twice without a word.
#[test]
fn codex_refuses_an_apply_patch_over_another_sessions_change() {
    let mock = ResponsesMock::start(vec![
        // Session A, before B.
        patch("*** Add File: shared.txt\n+from one\n*** Add File: own.txt\n+mine"),
        ResponsesTurn::Shell(format!("until [ -f {FLAG} ]; do sleep 0.1; done")),
        // Session B.
        ResponsesTurn::Shell(format!("printf '{OTHER}\\n' >> shared.txt")),
        ResponsesTurn::Text("B-DONE".into()),
        // Session A, after B.
        patch("*** Update File: shared.txt\n@@\n-from one\n+one alone"),
        ResponsesTurn::Shell("cat shared.txt".into()),
        patch("*** Update File: shared.txt\n@@\n from one\n+and one again"),
        patch("*** Update File: own.txt\n@@\n-mine\n+mine v2"),
        ResponsesTurn::Text("A-DONE".into()),
    ]);
    let env = CodexEnv::new(&mock, 0);
    let checkpoint = Plugin::find().checkpoint_bin();
    let ck = |args: &[&str]| {
        let output = env.command(&checkpoint).args(args).output().unwrap();
        assert!(
            output.status.success(),
            "checkpoint {args:?}: {}",
            show(&output)
        );
        String::from_utf8_lossy(&output.stdout).into_owned()
    };
    ck(&["init", "w", "--phase", "work"]);
    ck(&["start", "work"]);
    ck(&["setup", "codex"]);
    let exec = |prompt: &str| {
        let mut command = env.command(env.codex_bin());
        command
            .args(["exec", "--json", "--dangerously-bypass-hook-trust", prompt])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        command
    };
    let a = exec("SESSION-A").spawn().expect("codex runs");
    wait_for("session A's first two requests", 2, || {
        mock.requests().len()
    });
    let b = exec("SESSION-B").output().expect("codex runs");
    assert!(b.status.success(), "{}", show(&b));
    std::fs::write(env.project().join(FLAG), "").unwrap();
    let a = finish(a);
    assert!(a.status.success(), "{}", show(&a));
    let requests = mock.requests();
    assert_eq!(requests.len(), 9, "{}", show(&a));

    let other = shell_writer(&ck(&["who", "shared.txt", "--format", "json"]));
    let refused = last_output(&requests[5]);
    let parts = refusal_parts(&other);
    let parts: Vec<&str> = parts.iter().map(String::as_str).collect();
    // Codex puts its own words before the reason, and the patch after it.
    assert_contains_all(
        "the refused apply_patch",
        &refused,
        &["Command blocked by PreToolUse hook: checkpoint: "],
    );
    assert_contains_all("the refused apply_patch", &refused, &parts);
    // Codex has no read tool: `cat` of the whole file is its read, and the patch after it
    // goes through, keeping B's line.
    let after_cat = last_output(&requests[7]);
    assert!(
        !after_cat.contains("checkpoint:") && !after_cat.contains("blocked"),
        "{after_cat}"
    );
    assert_eq!(
        std::fs::read_to_string(env.project().join("shared.txt")).unwrap(),
        "from one\nand one again\nfrom other\n"
    );
    // `own.txt`: nobody else touched it, never refused.
    let own = last_output(&requests[8]);
    assert!(
        !own.contains("checkpoint:") && !own.contains("blocked"),
        "{own}"
    );
    assert_eq!(
        std::fs::read_to_string(env.project().join("own.txt")).unwrap(),
        "mine v2\n"
    );
}

/// A Gemini CLI session in `project`'s environment, its output piped.
fn gemini(env: &GeminiEnv, prompt: &str) -> std::process::Command {
    let prompt = format!("--prompt={prompt}");
    env.command(&[&prompt, "--output-format", "stream-json", "--yolo"], &[])
}

/// The last function response of main request `n`, as the model reads it.
fn responses(mock: &GeminiMock, n: usize) -> String {
    mock.main_requests()[n]
        .function_responses()
        .last()
        .map(|response| response.to_string())
        .unwrap_or_default()
}

/// Gemini CLI: a refused `write_file` and a refused `replace` (its `BeforeTool` hook's
/// `{"decision": "deny"}`), what the model reads, the file untouched; after its `read_file` the
/// write goes through; `own.txt` written twice without a word.
#[test]
fn gemini_refuses_a_write_file_and_a_replace_over_another_sessions_change() {
    let call = |name: &str, args: Value| GeminiTurn::call(name, args);
    let mock = GeminiMock::start(vec![
        // Session A, before B.
        call(
            "write_file",
            json!({"file_path": "shared.txt", "content": "from one\n"}),
        ),
        call(
            "write_file",
            json!({"file_path": "own.txt", "content": "mine\n"}),
        ),
        call(
            "run_shell_command",
            json!({"command": format!("until [ -f {FLAG} ]; do sleep 0.1; done")}),
        ),
        // Session B.
        call(
            "run_shell_command",
            json!({"command": format!("printf '{OTHER}\\n' >> shared.txt")}),
        ),
        GeminiTurn::Text("B-DONE".into()),
        // Session A, after B.
        call(
            "write_file",
            json!({"file_path": "shared.txt", "content": "one alone\n"}),
        ),
        call(
            "replace",
            json!({"file_path": "shared.txt", "old_string": "from one", "new_string": "ONE", "instruction": "rename"}),
        ),
        call("read_file", json!({"file_path": "shared.txt"})),
        call(
            "write_file",
            json!({"file_path": "shared.txt", "content": "from one\nfrom other\nand one again\n"}),
        ),
        call(
            "replace",
            json!({"file_path": "own.txt", "old_string": "mine", "new_string": "mine v2", "instruction": "bump"}),
        ),
        GeminiTurn::Text("A-DONE".into()),
    ]);
    let env = GeminiEnv::new(&mock);
    let plugin = Plugin::find();
    let ck = |args: &[&str]| {
        let output = checkpoint_command(&plugin, env.project_dir(), env.home())
            .env("GEMINI_CLI_HOME", env.home())
            .args(args)
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "checkpoint {args:?}: {}",
            show(&output)
        );
        String::from_utf8_lossy(&output.stdout).into_owned()
    };
    ck(&["init", "w", "--phase", "work"]);
    ck(&["start", "work"]);
    ck(&["setup", "gemini"]);
    let a = gemini(&env, "SESSION-A").spawn().expect("gemini runs");
    wait_for("session A's first three requests", 3, || {
        mock.main_requests().len()
    });
    let b = gemini(&env, "SESSION-B").output().expect("gemini runs");
    assert!(b.status.success(), "{}", show(&b));
    std::fs::write(env.project_dir().join(FLAG), "").unwrap();
    let a = finish(a);
    assert!(a.status.success(), "{}", show(&a));
    assert_eq!(mock.remaining_turns(), 0, "{}", show(&a));
    let main = mock.main_requests();
    assert_eq!(main.len(), 11, "{}", show(&a));

    let other = shell_writer(&ck(&["who", "shared.txt", "--format", "json"]));
    let parts = refusal_parts(&other);
    let parts: Vec<&str> = parts.iter().map(String::as_str).collect();
    for (n, tool) in [(6, "write_file"), (7, "replace")] {
        let refused = responses(&mock, n);
        // Gemini CLI gives the model an error response, its own words before the reason.
        assert!(
            refused.contains("\"error\":\"Tool execution blocked: checkpoint: "),
            "{refused}"
        );
        assert_contains_all(tool, &refused, &parts);
    }
    let after_read = responses(&mock, 9);
    assert!(
        !after_read.contains("checkpoint:") && !after_read.contains("blocked"),
        "{after_read}"
    );
    // Nothing of B's is lost: the write after the read holds it.
    assert_eq!(
        std::fs::read_to_string(env.project_dir().join("shared.txt")).unwrap(),
        "from one\nfrom other\nand one again\n"
    );
    let own = responses(&mock, 10);
    assert!(
        !own.contains("checkpoint:") && !own.contains("blocked"),
        "{own}"
    );
    assert_eq!(
        std::fs::read_to_string(env.project_dir().join("own.txt")).unwrap(),
        "mine v2\n"
    );
}
