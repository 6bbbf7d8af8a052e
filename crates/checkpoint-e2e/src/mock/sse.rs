//! The Messages API's streaming format: the SSE events of one assistant message, and the
//! rough token counts the mock reports.

use super::*;

pub(super) fn usage(input_tokens: usize, output_tokens: usize) -> Value {
    json!({
        "input_tokens": input_tokens,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "output_tokens": output_tokens,
    })
}

/// A rough token count (four bytes a token), enough for a client that only displays it.
pub(super) fn estimate_tokens(body: &Value) -> usize {
    let mut pieces = Vec::new();
    collect_text(&body["system"], &mut pieces);
    if let Some(messages) = body["messages"].as_array() {
        for message in messages {
            collect_text(&message["content"], &mut pieces);
        }
    }
    pieces.iter().map(|piece| piece.len()).sum::<usize>() / 4 + 1
}

pub(super) fn output_tokens(blocks: &[Value]) -> usize {
    blocks
        .iter()
        .map(|block| block.to_string().len())
        .sum::<usize>()
        / 4
        + 1
}

/// Builds the SSE events of one streamed message, in the Messages API streaming format.
pub(super) fn stream_events(
    id: &str,
    model: &str,
    input_tokens: usize,
    message: AssistantMessage,
) -> Vec<(&'static str, Value)> {
    let n_output = output_tokens(&message.blocks);
    let mut events = vec![
        (
            "message_start",
            json!({
                "type": "message_start",
                "message": {
                    "id": id,
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [],
                    "stop_reason": null,
                    "stop_sequence": null,
                    "usage": usage(input_tokens, 1),
                },
            }),
        ),
        ("ping", json!({ "type": "ping" })),
    ];
    for (block_idx, block) in message.blocks.into_iter().enumerate() {
        if block["type"] == "tool_use" {
            let start = json!({
                "type": "tool_use",
                "id": block["id"],
                "name": block["name"],
                "input": {},
            });
            events.push(("content_block_start", block_start(block_idx, start)));
            // Two partial pieces exercise the client's accumulation of `partial_json`.
            let input_json = block["input"].to_string();
            let (first, second) = input_json.split_at(char_boundary_near_middle(&input_json));
            for partial_json in [first, second] {
                let delta = json!({ "type": "input_json_delta", "partial_json": partial_json });
                events.push(("content_block_delta", block_delta(block_idx, delta)));
            }
        } else {
            let text = block["text"].as_str().unwrap_or_default();
            let start = json!({ "type": "text", "text": "" });
            events.push(("content_block_start", block_start(block_idx, start)));
            let (first, second) = text.split_at(char_boundary_near_middle(text));
            for piece in [first, second]
                .into_iter()
                .filter(|piece| !piece.is_empty())
            {
                let delta = json!({ "type": "text_delta", "text": piece });
                events.push(("content_block_delta", block_delta(block_idx, delta)));
            }
        }
        events.push((
            "content_block_stop",
            json!({ "type": "content_block_stop", "index": block_idx }),
        ));
    }
    events.push((
        "message_delta",
        json!({
            "type": "message_delta",
            "delta": { "stop_reason": message.stop_reason, "stop_sequence": null },
            "usage": usage(input_tokens, n_output),
        }),
    ));
    events.push(("message_stop", json!({ "type": "message_stop" })));
    events
}

pub(super) fn block_start(block_idx: usize, content_block: Value) -> Value {
    json!({ "type": "content_block_start", "index": block_idx, "content_block": content_block })
}

pub(super) fn block_delta(block_idx: usize, delta: Value) -> Value {
    json!({ "type": "content_block_delta", "index": block_idx, "delta": delta })
}

pub(super) fn char_boundary_near_middle(text: &str) -> usize {
    let mut idx = text.len() / 2;
    while !text.is_char_boundary(idx) {
        idx += 1;
    }
    idx
}
