//! The typed payloads against the shapes Claude Code sends, and against malformed ones.

use serde_json::{Value, json};

use super::*;

fn parse_value(event: HookEvent, value: &Value) -> Result<(Envelope, Payload), String> {
    Payload::parse(event, value.to_string().as_bytes())
}

fn with_envelope(event: HookEvent, fields: Value) -> Value {
    let mut payload = json!({
        "hook_event_name": event.name(),
        "session_id": "s-1",
        "cwd": "/project",
        "transcript_path": "/home/u/.claude/projects/p/s-1.jsonl",
        "permission_mode": "default",
    });
    for (key, value) in fields.as_object().unwrap() {
        payload[key] = value.clone();
    }
    payload
}

#[test]
fn every_event_parses_with_its_required_fields() {
    let required = |event| match event {
        HookEvent::PreCompact => json!({"trigger": "manual"}),
        HookEvent::PreToolUse | HookEvent::PostToolUse => json!({"tool_name": "Bash"}),
        HookEvent::PostToolUseFailure => json!({"tool_name": "Bash", "error": "exit 1"}),
        HookEvent::StopFailure => json!({"error": "rate_limit"}),
        HookEvent::SubagentStart => json!({"agent_id": "a1"}),
        HookEvent::SessionStart
        | HookEvent::Stop
        | HookEvent::SubagentStop
        | HookEvent::SessionEnd => json!({}),
    };
    for event in HookEvent::ALL {
        let fields = required(event);
        let (envelope, _) = parse_value(event, &with_envelope(event, fields.clone()))
            .unwrap_or_else(|err| panic!("{event}: {err}"));
        assert_eq!(envelope.session_id, "s-1");
        assert_eq!(envelope.cwd, "/project");
        // Each field the event relies on is required: without it, nothing is recorded.
        for key in fields.as_object().unwrap().keys() {
            let mut payload = with_envelope(event, fields.clone());
            payload.as_object_mut().unwrap().remove(key);
            let err = parse_value(event, &payload).unwrap_err();
            assert!(
                err.contains(&format!("missing field `{key}`")),
                "{event}: {err}"
            );
            assert!(err.ends_with("nothing recorded"), "{err}");
            payload[key] = json!(7);
            let err = parse_value(event, &payload).unwrap_err();
            assert!(err.contains("invalid type"), "{event}: {err}");
        }
        for key in ["hook_event_name", "session_id", "cwd"] {
            let mut payload = with_envelope(event, fields.clone());
            payload.as_object_mut().unwrap().remove(key);
            assert!(
                parse_value(event, &payload).is_err(),
                "{event} without {key}"
            );
        }
    }
}

#[test]
fn a_payload_for_another_event_or_not_an_object_is_refused() {
    let stop = with_envelope(HookEvent::Stop, json!({}));
    let err = parse_value(HookEvent::PreCompact, &stop).unwrap_err();
    assert_eq!(
        err,
        "the payload is for `Stop`, not `PreCompact`; nothing recorded"
    );
    let cases: [(&[u8], &str); 6] = [
        (b"", "no payload on stdin"),
        (b"  \n", "no payload on stdin"),
        (b"not json", "is not JSON"),
        (b"[\"Stop\", \"s\", \"/p\"]", "is not a JSON object"),
        (b"42", "is not a JSON object"),
        (b"{\"hook_event_name\": \"Stop\"", "is not JSON"),
    ];
    for (bytes, expected) in cases {
        let err = Payload::parse(HookEvent::Stop, bytes).unwrap_err();
        assert!(err.contains(expected), "{bytes:?}: {err}");
    }
}

/// A field read only when present reads as absent when it has another type, as the untyped
/// reader had it: the payload stays usable.
#[test]
fn optional_fields_of_another_type_read_as_absent() {
    for odd in [
        json!(7),
        json!(null),
        json!(true),
        json!([1, {"a": 1}]),
        json!({"a": [1]}),
        json!("x"),
    ] {
        let payload = with_envelope(
            HookEvent::PostToolUse,
            json!({
                "tool_name": "Agent",
                "tool_use_id": odd,
                "agent_id": odd,
                "tool_input": odd,
                "tool_response": odd,
                "transcript_path": odd,
            }),
        );
        let (envelope, Payload::PostToolUse(tool_use)) =
            parse_value(HookEvent::PostToolUse, &payload).unwrap()
        else {
            panic!("not a PostToolUse");
        };
        let text = odd.as_str().map(str::to_owned);
        assert_eq!(envelope.transcript_path, text);
        assert_eq!(tool_use.tool_use_id, text);
        assert_eq!(tool_use.tool_input.prompt, None);
        assert!(tool_use.tool_response.content.is_empty());
    }
    let payload = with_envelope(
        HookEvent::PostToolUse,
        json!({
            "tool_name": "Agent",
            "tool_input": {"prompt": 7, "description": "d", "extra": {"deep": [1]}},
            "tool_response": {
                "status": "completed",
                "agentId": "a1",
                "interrupted": "yes",
                "content": ["loose", {"type": "text", "text": "first"}, 3, {"text": 9}, {"text": "last"}],
            },
        }),
    );
    let (_, Payload::PostToolUse(tool_use)) =
        parse_value(HookEvent::PostToolUse, &payload).unwrap()
    else {
        panic!("not a PostToolUse");
    };
    assert_eq!(tool_use.tool(), Tool::Agent);
    assert_eq!(tool_use.tool_input.prompt, None);
    assert_eq!(tool_use.tool_input.description.as_deref(), Some("d"));
    let response = &tool_use.tool_response;
    assert_eq!(response.status.as_deref(), Some("completed"));
    assert_eq!(response.agent_id.as_deref(), Some("a1"));
    assert_eq!(response.interrupted, None);
    let texts: Vec<Option<&str>> = response
        .content
        .iter()
        .map(|block| block.text.as_deref())
        .collect();
    assert_eq!(texts, [Some("first"), None, Some("last")]);
}

#[test]
fn tools_are_named_in_one_place() {
    for (name, tool) in [
        ("Agent", Tool::Agent),
        ("Bash", Tool::Bash),
        ("Write", Tool::FileEdit),
        ("Edit", Tool::FileEdit),
        ("MultiEdit", Tool::FileEdit),
        ("NotebookEdit", Tool::FileEdit),
        ("Read", Tool::FileRead),
        ("agent", Tool::Other),
        ("", Tool::Other),
    ] {
        assert_eq!(tool_named(name), tool, "{name}");
    }
}

/// A `Read` is a read of its `file_path`, whole unless Claude Code says it returned fewer lines
/// than the file has, or (where it says nothing) a range was asked; any other tool is no read.
#[test]
fn a_read_is_whole_unless_a_range_was_asked_or_fewer_lines_came_back() {
    let read = |tool: &str, input: Value, response: Value| {
        let payload = with_envelope(
            HookEvent::PostToolUse,
            json!({"tool_name": tool, "tool_input": input, "tool_response": response}),
        );
        let hooked = hooked(HookEvent::PostToolUse, payload.to_string().as_bytes())
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
    };
    let file = |start: u64, lines: u64| json!({"type": "text", "file": {"filePath": "/p/a.md", "startLine": start, "numLines": lines, "totalLines": 9}});
    let whole = read("Read", json!({"file_path": "/p/a.md"}), file(1, 9));
    assert_eq!(whole, (Tool::FileRead, Some("/p/a.md".to_owned()), true));
    for (input, response) in [
        (json!({"file_path": "/p/a.md"}), file(1, 4)),
        (json!({"file_path": "/p/a.md", "offset": 5}), file(5, 5)),
        (json!({"file_path": "/p/a.md", "limit": 3}), json!({})),
        (json!({"file_path": "/p/a.md", "offset": 2}), json!("text")),
    ] {
        assert!(!read("Read", input.clone(), response).2, "{input}");
    }
    assert!(
        read(
            "Read",
            json!({"file_path": "/p/a.md", "offset": null}),
            json!({})
        )
        .2
    );
    assert_eq!(
        read("Grep", json!({"file_path": "/p/a.md"}), file(1, 9)),
        (Tool::Other, None, false)
    );
}

/// What the write guard needs from a done call is typed here, from Claude Code's own fields:
/// a `Bash` call's `bashEditDiff.changedFiles`, a write's `structuredPatch` counts (a new
/// file's lines from its content), a `Write`'s content; another tool carries none of them.
#[test]
fn a_done_calls_changed_files_lines_and_content_are_read_here() {
    let done = |tool: &str, input: Value, response: Value| {
        let payload = with_envelope(
            HookEvent::PostToolUse,
            json!({"tool_name": tool, "tool_input": input, "tool_response": response}),
        );
        let hooked = hooked(HookEvent::PostToolUse, payload.to_string().as_bytes())
            .unwrap()
            .unwrap();
        let Event::ToolDone(call) = hooked.event else {
            panic!("{:?}", hooked.event)
        };
        call
    };
    let bash = done(
        "Bash",
        json!({"command": "mv a b"}),
        json!({"stdout": "", "bashEditDiff": {"changedFiles": ["/p/b", "/p/c"]}}),
    );
    assert_eq!(bash.tool_response.changed_files, ["/p/b", "/p/c"]);
    assert_eq!(bash.tool_response.lines_added, None);

    let edit = done(
        "Edit",
        json!({"file_path": "/p/a.rs", "old_string": "x", "new_string": "y\nz"}),
        json!({"structuredPatch": [{"lines": [" k", "-x", "+y", "+z"]}]}),
    );
    assert_eq!(
        (
            edit.tool_response.lines_added,
            edit.tool_response.lines_removed
        ),
        (Some(2), Some(1))
    );
    assert_eq!(edit.tool_input.content, None);

    let write = done(
        "Write",
        json!({"file_path": "/p/new.md", "content": "a\nb\nc\n"}),
        json!({"type": "create", "content": "a\nb\nc\n"}),
    );
    assert_eq!(write.tool_input.content.as_deref(), Some("a\nb\nc\n"));
    assert_eq!(
        (
            write.tool_response.lines_added,
            write.tool_response.lines_removed
        ),
        (Some(3), Some(0))
    );

    // A `Bash` call names no content, and a tool that writes nothing counts no lines.
    let read = done(
        "Read",
        json!({"file_path": "/p/a.md", "content": "not a write"}),
        json!({"structuredPatch": [{"lines": ["+x"]}], "bashEditDiff": {"changedFiles": ["/p/x"]}}),
    );
    assert_eq!(read.tool_input.content, None);
    assert!(read.tool_response.changed_files.is_empty());
    assert_eq!(read.tool_response.lines_added, None);
}
