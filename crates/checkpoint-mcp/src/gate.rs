//! The front of the stdio transport: every line from the client is read here first, with a
//! bound, and checked as a JSON-RPC 2.0 message. A line that is not a valid request gets its
//! error reply here, carrying the request's `id` whenever it has one (`null` only when there is
//! none to read); valid lines go on to the MCP service, and its replies come back through here.
//!
//! Codes (JSON-RPC 2.0): `-32700` a line that is not JSON; `-32600` a message that is not a
//! request (no `method`, an `id` or `params` of the wrong type, a batch, a line over the bound);
//! `-32602` parameters a known method cannot take (positional ones, a `_meta` that is not an
//! object, missing ones, or ones the service could not read); `-32601` only for a method the
//! server does not have.

use std::{
    collections::HashMap,
    io,
    sync::{Arc, Mutex},
};

use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, Visitor};
use serde_json::{Value, json};
use tokio::{
    io::{AsyncBufRead, AsyncBufReadExt, AsyncWrite, AsyncWriteExt},
    sync::mpsc,
};

/// The longest line read from the client, newline excluded: the MCP SDK's own bound.
pub(crate) const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;
const METHOD_NOT_FOUND: i64 = -32601;
const INVALID_PARAMS: i64 = -32602;

/// The methods the server answers whose `params` are required.
const NEEDS_PARAMS: [&str; 4] = ["initialize", "tools/call", "resources/read", "prompts/get"];

/// The methods the server answers: for these, a "method not found" from the service means it
/// could not read the parameters.
const KNOWN_METHODS: [&str; 9] = [
    "initialize",
    "ping",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/read",
    "prompts/list",
    "prompts/get",
    "logging/setLevel",
];

/// The methods of the requests passed on and not answered yet, by their id (as JSON text).
pub(crate) type Pending = Arc<Mutex<HashMap<String, String>>>;

/// What to do with one line from the client.
#[derive(Debug, PartialEq)]
pub(crate) enum Verdict {
    /// Pass it on to the service, as it is or rewritten.
    Pass(Vec<u8>),
    /// Answer it with this error reply; the service never sees it.
    Reply(Value),
    /// Nothing to do: a blank line, or a notification the service cannot take.
    Skip,
}

/// Reads the client's lines from `input` until it ends, passing the good ones to `service` and
/// sending the error replies of the others to `replies`; then tells the service the input ended.
pub(crate) async fn forward(
    mut input: impl AsyncBufRead + Unpin,
    mut service: impl AsyncWrite + Unpin,
    replies: mpsc::UnboundedSender<Value>,
    pending: Pending,
) -> io::Result<()> {
    let mut line = Vec::new();
    loop {
        let verdict = match read_line(&mut input, &mut line).await? {
            Line::End => break,
            Line::Complete => check(&line, &pending),
            Line::TooLong(len) => Verdict::Reply(error(
                leading_id(&line),
                INVALID_REQUEST,
                format!(
                    "the message is {len} bytes, over the limit of {MAX_LINE_BYTES} bytes for one message; nothing was done"
                ),
            )),
        };
        match verdict {
            Verdict::Pass(mut bytes) => {
                bytes.push(b'\n');
                if service.write_all(&bytes).await.is_err() {
                    // The service stopped: nothing more can be answered.
                    break;
                }
            }
            Verdict::Reply(reply) => {
                let _ = replies.send(reply);
            }
            Verdict::Skip => {}
        }
    }
    service.shutdown().await
}

/// Writes the service's replies and the gate's own to `output`, one line each, until both end.
/// A "method not found" the service gave a known method becomes "invalid params".
pub(crate) async fn answer(
    mut from_service: impl AsyncBufRead + Unpin,
    mut replies: mpsc::UnboundedReceiver<Value>,
    mut output: impl AsyncWrite + Unpin,
    pending: Pending,
) -> io::Result<()> {
    let mut line = Vec::new();
    let (mut service_open, mut replies_open) = (true, true);
    while service_open || replies_open {
        let bytes = tokio::select! {
            read = from_service.read_until(b'\n', &mut line), if service_open => {
                if read? == 0 {
                    service_open = false;
                    continue;
                }
                let bytes = settle(&line, &pending);
                line.clear();
                bytes
            }
            reply = replies.recv(), if replies_open => match reply {
                Some(reply) => {
                    let mut bytes = reply.to_string().into_bytes();
                    bytes.push(b'\n');
                    bytes
                }
                None => {
                    replies_open = false;
                    continue;
                }
            },
        };
        output.write_all(&bytes).await?;
        output.flush().await?;
    }
    Ok(())
}

/// A reply of the service, as it goes to the client: its request is no longer pending, and a
/// "method not found" for a method the server has is an "invalid params".
fn settle(line: &[u8], pending: &Pending) -> Vec<u8> {
    let Ok(Value::Object(mut reply)) = serde_json::from_slice::<Value>(line) else {
        return line.to_vec();
    };
    let Some(id) = reply.get("id").map(Value::to_string) else {
        return line.to_vec();
    };
    let method = pending
        .lock()
        .expect("the pending map is never poisoned: no panic holds it")
        .remove(&id);
    let not_found = reply
        .get("error")
        .and_then(|error| error.get("code"))
        .and_then(Value::as_i64)
        == Some(METHOD_NOT_FOUND);
    match method {
        Some(method) if not_found && KNOWN_METHODS.contains(&method.as_str()) => {
            reply.insert(
                "error".into(),
                json!({
                    "code": INVALID_PARAMS,
                    "message": format!("invalid params for `{method}`: see the method's parameters in the MCP specification"),
                }),
            );
            let mut bytes = Value::Object(reply).to_string().into_bytes();
            bytes.push(b'\n');
            bytes
        }
        _ => line.to_vec(),
    }
}

/// Checks one line from the client (newline excluded).
pub(crate) fn check(line: &[u8], pending: &Pending) -> Verdict {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return Verdict::Skip;
    }
    let message = match serde_json::from_slice::<Value>(line) {
        Ok(message) => message,
        Err(err) => {
            return Verdict::Reply(error(
                Value::Null,
                PARSE_ERROR,
                format!("parse error: {err}"),
            ));
        }
    };
    let mut message = match message {
        Value::Object(message) => message,
        Value::Array(_) => {
            return Verdict::Reply(error(
                Value::Null,
                INVALID_REQUEST,
                "batches are not supported: send one message per line".into(),
            ));
        }
        _ => {
            return Verdict::Reply(error(
                Value::Null,
                INVALID_REQUEST,
                "a JSON-RPC message is an object".into(),
            ));
        }
    };
    let id = match message.get("id") {
        None => None,
        Some(id @ (Value::String(_) | Value::Number(_) | Value::Null)) => Some(id.clone()),
        Some(_) => {
            return Verdict::Reply(error(
                Value::Null,
                INVALID_REQUEST,
                "`id` must be a string or a number".into(),
            ));
        }
    };
    let reply_id = id.clone().unwrap_or(Value::Null);
    let invalid = |code: i64, text: String| {
        // A notification gets no reply, even an error (JSON-RPC 2.0 §4.1).
        match &id {
            Some(id) => Verdict::Reply(error(id.clone(), code, text)),
            None => Verdict::Skip,
        }
    };
    if message.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Verdict::Reply(error(
            reply_id,
            INVALID_REQUEST,
            "`jsonrpc` must be \"2.0\"".into(),
        ));
    }
    let method = match message.get("method") {
        Some(Value::String(method)) => method.clone(),
        Some(_) => {
            return Verdict::Reply(error(
                reply_id,
                INVALID_REQUEST,
                "`method` must be a string".into(),
            ));
        }
        // A reply to a request of the server.
        None if id.is_some()
            && (message.contains_key("result") || message.contains_key("error")) =>
        {
            return Verdict::Pass(line.to_vec());
        }
        None => {
            return Verdict::Reply(error(
                reply_id,
                INVALID_REQUEST,
                "a request needs a `method`".into(),
            ));
        }
    };
    let mut rewritten = false;
    match message.get("params") {
        Some(Value::Object(params))
            if params.get("_meta").is_some_and(|meta| !meta.is_object()) =>
        {
            return invalid(
                INVALID_PARAMS,
                format!("invalid params for `{method}`: `_meta` must be an object"),
            );
        }
        Some(Value::Object(_)) => {}
        Some(Value::Array(_)) => {
            return invalid(
                INVALID_PARAMS,
                format!(
                    "invalid params for `{method}`: MCP takes named parameters, an object, not an array"
                ),
            );
        }
        // No parameters, said explicitly.
        Some(Value::Null) => {
            message.remove("params");
            rewritten = true;
        }
        Some(_) => {
            return invalid(
                INVALID_REQUEST,
                "`params` must be an object (or left out)".into(),
            );
        }
        None => {}
    }
    if !message.contains_key("params") && NEEDS_PARAMS.contains(&method.as_str()) {
        return invalid(
            INVALID_PARAMS,
            format!("invalid params for `{method}`: `params` is missing"),
        );
    }
    if let Some(id) = &id {
        pending
            .lock()
            .expect("the pending map is never poisoned: no panic holds it")
            .insert(id.to_string(), method);
    }
    if rewritten {
        Verdict::Pass(Value::Object(message).to_string().into_bytes())
    } else {
        Verdict::Pass(line.to_vec())
    }
}

fn error(id: Value, code: i64, message: String) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message } })
}

/// What [`read_line`] read.
enum Line {
    /// The input ended.
    End,
    /// A whole line (its last may lack the newline).
    Complete,
    /// A line over [`MAX_LINE_BYTES`], of this many bytes: only its start was kept.
    TooLong(usize),
}

/// Reads one line into `line` (newline excluded), never keeping more than [`MAX_LINE_BYTES`]:
/// the rest of a longer line is read and dropped.
async fn read_line(
    input: &mut (impl AsyncBufRead + Unpin),
    line: &mut Vec<u8>,
) -> io::Result<Line> {
    line.clear();
    let mut total = 0usize;
    loop {
        let chunk = input.fill_buf().await?;
        if chunk.is_empty() {
            return Ok(match total {
                0 => Line::End,
                _ if total > MAX_LINE_BYTES => Line::TooLong(total),
                _ => Line::Complete,
            });
        }
        let newline = chunk.iter().position(|&b| b == b'\n');
        let part = &chunk[..newline.unwrap_or(chunk.len())];
        let room = MAX_LINE_BYTES.saturating_sub(line.len());
        line.extend_from_slice(&part[..part.len().min(room)]);
        total += part.len();
        let consumed = part.len() + usize::from(newline.is_some());
        input.consume(consumed);
        if newline.is_some() {
            return Ok(if total > MAX_LINE_BYTES {
                Line::TooLong(total)
            } else {
                Line::Complete
            });
        }
    }
}

/// The top-level `id` of a message cut short, when it comes before the cut and is a string or
/// a number; `null` otherwise.
fn leading_id(start: &[u8]) -> Value {
    struct Seek<'a>(&'a mut Option<Value>);
    impl<'de> DeserializeSeed<'de> for Seek<'_> {
        type Value = ();
        fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
            deserializer.deserialize_map(self)
        }
    }
    impl<'de> Visitor<'de> for Seek<'_> {
        type Value = ();
        fn expecting(&self, formatter: &mut std::fmt::Formatter) -> std::fmt::Result {
            formatter.write_str("a JSON-RPC message")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
            while let Some(key) = map.next_key::<String>()? {
                if key == "id" {
                    *self.0 = Some(map.next_value::<Value>()?);
                    return Ok(());
                }
                map.next_value::<IgnoredAny>()?;
            }
            Ok(())
        }
    }
    let mut found = None;
    let mut deserializer = serde_json::Deserializer::from_slice(start);
    // The message is cut short, so the parse ends in an error: what counts is the id found.
    let _ = Seek(&mut found).deserialize(&mut deserializer);
    match found {
        Some(id @ (Value::String(_) | Value::Number(_))) => id,
        _ => Value::Null,
    }
}

#[cfg(test)]
mod tests;
