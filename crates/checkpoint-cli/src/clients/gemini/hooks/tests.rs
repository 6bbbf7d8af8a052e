//! Gemini CLI's payloads as canonical events: its `read_file` as a read, whole or not.

use serde_json::{Value, json};

use super::*;

/// The tool, the file read and whether it was whole, of an `AfterTool` of `tool`.
fn after_tool(tool: &str, input: Value, response: Value) -> (Tool, Option<String>, bool) {
    let payload = json!({
        "hook_event_name": "AfterTool",
        "session_id": "s-1",
        "cwd": "/project",
        "transcript_path": "/home/u/.gemini/tmp/p/chats/s-1.json",
        "tool_name": tool,
        "tool_input": input,
        "tool_response": response,
    });
    let hooked = hooked(HookEvent::AfterTool, payload.to_string().as_bytes())
        .unwrap()
        .unwrap();
    let Event::ToolDone(call) = hooked.event else {
        panic!("{:?}", hooked.event)
    };
    (
        call.tool,
        call.tool_input.read,
        call.tool_response.whole_read,
    )
}

/// `read_file` is a read of its `file_path` (or the older `absolute_path`), whole unless a
/// range was asked or Gemini CLI cut the file and said so; any other tool is no read.
#[test]
fn read_file_is_a_read_whole_unless_ranged_or_cut() {
    let text = json!({"llmContent": "line 1\nline 2\n", "returnDisplay": ""});
    assert_eq!(
        after_tool("read_file", json!({"file_path": "docs/a.md"}), text.clone()),
        (Tool::FileRead, Some("docs/a.md".to_owned()), true)
    );
    assert_eq!(
        after_tool(
            "read_file",
            json!({"absolute_path": "/project/a.md"}),
            text.clone()
        ),
        (Tool::FileRead, Some("/project/a.md".to_owned()), true)
    );
    for key in ["offset", "limit", "start_line", "end_line"] {
        let input = json!({"file_path": "a.md", key: 3});
        assert!(!after_tool("read_file", input, text.clone()).2, "{key}");
    }
    let cut = json!({"llmContent": "\nIMPORTANT: The file content has been truncated.\n"});
    assert!(!after_tool("read_file", json!({"file_path": "a.md"}), cut).2);
    assert_eq!(
        after_tool("glob", json!({"file_path": "a.md"}), text),
        (Tool::Other, None, false)
    );
}
