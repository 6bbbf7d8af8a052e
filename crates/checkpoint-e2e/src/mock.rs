//! A scripted mock of the Anthropic Messages API served over hand-written HTTP/1.1 on 127.0.0.1.
//!
//! The mock answers the traffic the real `claude` client sends (see `shared/claude-code-facts.md`
//! §0): a `HEAD /` connectivity probe, one streaming `POST /v1/messages?beta=true` per agent-loop
//! turn, and occasional side requests.
//! Main requests consume a [`Turn`] script in order; every request is recorded for assertions.

pub mod gemini;
mod http;
pub mod responses;
mod sse;
#[cfg(test)]
mod tests;

use std::collections::VecDeque;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread::{self, JoinHandle};

use serde_json::{Value, json};

use self::{http::*, sse::*};

/// The text of the answer to a main request that arrives after the script is used up.
pub const SCRIPT_EXHAUSTED: &str = "MOCK-SCRIPT-EXHAUSTED";

/// The text of the answer to a side request (a `/v1/messages` POST without `tools`).
pub const SIDE_ANSWER: &str = "side";

/// The default answer to the compaction summary request, in a `<summary>` block as a model writes
/// it (without one, 2.1.330 asks a second time).
pub const DEFAULT_SUMMARY: &str = "<summary>SUMMARY-OF-CONVERSATION</summary>";

/// The marker that identifies the compaction summary request (facts §d "Compaction").
pub const SUMMARY_REQUEST_MARKER: &str =
    "Your task is to create a detailed summary of the conversation so far";

/// The largest request body the mock accepts, so that a broken client cannot exhaust memory.
const MAX_BODY_BYTES: usize = 64 * 1024 * 1024;

/// One scripted answer to a main request.
#[derive(Debug, Clone, PartialEq)]
pub enum Turn {
    /// A text-only assistant message with `stop_reason: "end_turn"`.
    Text(String),
    /// A single `tool_use` block with `stop_reason: "tool_use"`.
    ToolUse {
        /// The tool name, e.g. `Bash`.
        name: String,
        /// The tool input object, e.g. `{"command": "ls"}`.
        input: Value,
    },
    /// A text block followed by a `tool_use` block, with `stop_reason: "tool_use"`.
    TextThenTool {
        /// The text of the first block.
        text: String,
        /// The tool name.
        name: String,
        /// The tool input object.
        input: Value,
    },
    /// Several `tool_use` blocks in one message, with `stop_reason: "tool_use"`: the client runs
    /// them together (two `Agent` calls run their sub-agents at the same time).
    Tools(Vec<(String, Value)>),
    /// An HTTP error with the Anthropic error body `{"type":"error","error":{…}}`.
    Error {
        /// The HTTP status, e.g. 429.
        status: u16,
        /// The Anthropic error type, e.g. `rate_limit_error`.
        error_type: String,
        /// The human message.
        message: String,
        /// The value of a `retry-after` header (seconds), if any.
        retry_after: Option<u32>,
    },
    /// A `429 rate_limit_error` as the real API sends it, answered to every main request for
    /// `window` from the first one (the API refuses until its limit resets); then the script
    /// goes on with the next turn.
    ///
    /// Its headers are the API's: `retry-after` (`retry_after` seconds), and
    /// `anthropic-ratelimit-requests-limit`, `…-remaining: 0` and `…-reset` (RFC 3339, when the
    /// window closes); with `unified`, also a claude.ai subscription's
    /// `anthropic-ratelimit-unified-status: rejected`, `…-unified-reset` (Unix seconds) and
    /// `…-unified-representative-claim: five_hour`.
    RateLimit {
        /// The human message of the error body.
        message: String,
        /// The `retry-after` header, in seconds.
        retry_after: u64,
        /// How long the limit lasts from the first request it refuses.
        window: std::time::Duration,
        /// Whether to send the subscription (`unified`) headers too.
        unified: bool,
    },
}

impl Turn {
    /// A text-only turn.
    pub fn text(text: impl Into<String>) -> Turn {
        Turn::Text(text.into())
    }

    /// A single tool call.
    pub fn tool_use(name: impl Into<String>, input: Value) -> Turn {
        Turn::ToolUse {
            name: name.into(),
            input,
        }
    }

    /// A text block, then a tool call.
    pub fn text_then_tool(text: impl Into<String>, name: impl Into<String>, input: Value) -> Turn {
        Turn::TextThenTool {
            text: text.into(),
            name: name.into(),
            input,
        }
    }

    /// An HTTP error without a `retry-after` header.
    pub fn error(status: u16, error_type: impl Into<String>, message: impl Into<String>) -> Turn {
        Turn::Error {
            status,
            error_type: error_type.into(),
            message: message.into(),
            retry_after: None,
        }
    }
}

/// How the mock classified a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RequestKind {
    /// A `/v1/messages` POST with tools: consumes one [`Turn`] of the script.
    Main,
    /// A `/v1/messages` POST without tools: answered with [`SIDE_ANSWER`].
    Side,
    /// The compaction summary request: answered with the configured summary.
    Summary,
    /// A `POST /v1/messages/count_tokens`.
    CountTokens,
    /// A `/v1/messages` POST with tools whose first user message holds a marker given to
    /// [`MockApi::route`]: consumes a turn of that route's script, not the main one.
    Routed,
    /// Anything else (`HEAD /`, any GET, unknown paths).
    Other,
}

/// One HTTP request as the mock received it.
#[derive(Debug, Clone)]
pub struct RecordedRequest {
    /// The HTTP method, e.g. `POST`.
    pub method: String,
    /// The path without the query, e.g. `/v1/messages`.
    pub path: String,
    /// The query string without `?`, e.g. `beta=true`.
    pub query: Option<String>,
    /// The headers in arrival order, names as sent.
    pub headers: Vec<(String, String)>,
    /// The body parsed as JSON, or `Value::Null` when it is empty or not JSON.
    pub body: Value,
    /// How the mock classified and answered the request.
    pub kind: RequestKind,
}

impl RecordedRequest {
    /// Returns the first header called `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(header, _)| header.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }

    /// Returns all the text this request sent to the model, one piece per line.
    ///
    /// That is the `system` field (string or blocks), then for every message (including role
    /// `system` messages inside `messages`) its string content, its text blocks and the content
    /// of its `tool_result` blocks.
    pub fn model_text(&self) -> String {
        let mut pieces = Vec::new();
        collect_text(&self.body["system"], &mut pieces);
        if let Some(messages) = self.body["messages"].as_array() {
            for message in messages {
                collect_text(&message["content"], &mut pieces);
            }
        }
        pieces.join("\n")
    }

    /// Returns the text of the messages whose role is `role`, one piece per line.
    ///
    /// Like [`RecordedRequest::model_text`] without the `system` field and without the other
    /// roles' messages. Hook context arrives in role `system` messages inside `messages`
    /// (facts §e), an expanded slash command in role `user` ones (facts §a), so this tells the
    /// two apart.
    pub fn role_text(&self, role: &str) -> String {
        let mut pieces = Vec::new();
        for message in self
            .messages()
            .iter()
            .filter(|message| message["role"] == role)
        {
            collect_text(&message["content"], &mut pieces);
        }
        pieces.join("\n")
    }

    /// Returns the `messages` array of the body (empty when absent).
    pub fn messages(&self) -> &[Value] {
        self.body["messages"].as_array().map_or(&[], Vec::as_slice)
    }

    /// Returns every `tool_result` block of every message, in order.
    pub fn tool_results(&self) -> Vec<&Value> {
        self.messages()
            .iter()
            .filter_map(|message| message["content"].as_array())
            .flatten()
            .filter(|block| block["type"] == "tool_result")
            .collect()
    }
}

/// Options of a [`MockApi`] besides its script.
#[derive(Debug, Clone)]
pub struct MockConfig {
    /// The answer to the compaction summary request.
    pub summary: String,
    /// Headers sent with every successful answer to a main request, such as a subscription's
    /// `anthropic-ratelimit-unified-5h-utilization`.
    pub reply_headers: Vec<(String, String)>,
}

impl Default for MockConfig {
    fn default() -> MockConfig {
        MockConfig {
            summary: DEFAULT_SUMMARY.to_owned(),
            reply_headers: Vec::new(),
        }
    }
}

/// A running mock of the Messages API on `127.0.0.1`; dropping it stops the server.
#[derive(Debug)]
pub struct MockApi {
    addr: SocketAddr,
    shared: Arc<Shared>,
    accept_thread: Option<JoinHandle<()>>,
}

impl MockApi {
    /// Starts a mock that answers main requests with `script`, in order.
    pub fn start(script: Vec<Turn>) -> MockApi {
        MockApi::start_with(script, MockConfig::default())
    }

    /// Starts a mock with explicit options.
    pub fn start_with(script: Vec<Turn>, config: MockConfig) -> MockApi {
        let listener =
            TcpListener::bind("127.0.0.1:0").expect("binding an ephemeral loopback port succeeds");
        let addr = listener
            .local_addr()
            .expect("a bound listener has an address");
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                script: script.into(),
                routes: Vec::new(),
                config,
                requests: Vec::new(),
                n_tool_uses: 0,
                n_messages: 0,
                rate_limit_closes: None,
            }),
            stopping: AtomicBool::new(false),
            connections: Mutex::new(Vec::new()),
        });
        let accept_shared = Arc::clone(&shared);
        let accept_thread = thread::Builder::new()
            .name(format!("mock-api-accept-{}", addr.port()))
            .spawn(move || accept_loop(&listener, &accept_shared))
            .expect("spawning a thread succeeds");
        MockApi {
            addr,
            shared,
            accept_thread: Some(accept_thread),
        }
    }

    /// Returns the base URL to put in `ANTHROPIC_BASE_URL`, e.g. `http://127.0.0.1:41234`.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Appends turns to the end of the script.
    pub fn push_turns(&self, turns: impl IntoIterator<Item = Turn>) {
        self.shared.lock_state().script.extend(turns);
    }

    /// Answers the requests whose first user message contains `marker` with `turns`, in order,
    /// instead of the main script: a sub-agent's conversation starts with the prompt its
    /// dispatch gave it, so each sub-agent gets its own script however the client interleaves
    /// their requests. A route whose turns are used up answers [`SCRIPT_EXHAUSTED`].
    pub fn route(&self, marker: impl Into<String>, turns: impl IntoIterator<Item = Turn>) {
        self.shared
            .lock_state()
            .routes
            .push((marker.into(), turns.into_iter().collect()));
    }

    /// Returns the requests answered by the route of `marker`, in order.
    pub fn routed_requests(&self, marker: &str) -> Vec<RecordedRequest> {
        self.requests_of_kind(RequestKind::Routed)
            .into_iter()
            .filter(|request| first_user_text(&request.body).contains(marker))
            .collect()
    }

    /// Returns how many scripted turns have not been consumed yet.
    pub fn remaining_turns(&self) -> usize {
        self.shared.lock_state().script.len()
    }

    /// Returns a copy of every request received so far, in arrival order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shared.lock_state().requests.clone()
    }

    /// Returns the requests that consumed the script (or found it exhausted), in order.
    pub fn main_requests(&self) -> Vec<RecordedRequest> {
        self.requests_of_kind(RequestKind::Main)
    }

    /// Returns the requests of one kind, in order.
    pub fn requests_of_kind(&self, kind: RequestKind) -> Vec<RecordedRequest> {
        self.shared
            .lock_state()
            .requests
            .iter()
            .filter(|request| request.kind == kind)
            .cloned()
            .collect()
    }

    /// Returns all the text main request `main_idx` (0-based) sent to the model.
    ///
    /// See [`RecordedRequest::model_text`]; panics when there is no such main request.
    #[track_caller]
    pub fn request_text(&self, main_idx: usize) -> String {
        let main = self.main_requests();
        match main.get(main_idx) {
            Some(request) => request.model_text(),
            None => panic!(
                "there is no main request {main_idx}: only {} arrived",
                main.len()
            ),
        }
    }
}

impl Drop for MockApi {
    fn drop(&mut self) {
        self.shared.stopping.store(true, Ordering::SeqCst);
        // The accept loop blocks in `accept`: a throwaway connection wakes it up to see the flag.
        drop(TcpStream::connect(self.addr));
        if let Some(accept_thread) = self.accept_thread.take() {
            let _ = accept_thread.join();
        }
        let connections = std::mem::take(&mut *lock(&self.shared.connections));
        for (stream, _) in &connections {
            // Shutting the socket down unblocks a connection thread waiting in `read`.
            let _ = stream.shutdown(Shutdown::Both);
        }
        for (_, handle) in connections {
            let _ = handle.join();
        }
    }
}

/// State shared between the [`MockApi`] handle and the server threads.
#[derive(Debug)]
struct Shared {
    state: Mutex<State>,
    stopping: AtomicBool,
    /// A clone of every open connection's socket and its thread, so that `Drop` can stop them.
    connections: Mutex<Vec<(TcpStream, JoinHandle<()>)>>,
}

impl Shared {
    fn lock_state(&self) -> MutexGuard<'_, State> {
        lock(&self.state)
    }
}

#[derive(Debug)]
struct State {
    script: VecDeque<Turn>,
    /// Each route's marker and its own script.
    routes: Vec<(String, VecDeque<Turn>)>,
    config: MockConfig,
    requests: Vec<RecordedRequest>,
    n_tool_uses: u32,
    n_messages: u32,
    /// When the rate limit at the head of the script resets, once it refused a request.
    rate_limit_closes: Option<std::time::SystemTime>,
}

/// What the mock sends back, decided under the state lock and written after it is released.
enum Reply {
    Empty {
        status: u16,
    },
    Json {
        status: u16,
        body: Value,
        retry_after: Option<u32>,
        headers: Vec<(String, String)>,
    },
    Stream {
        events: Vec<(&'static str, Value)>,
        headers: Vec<(String, String)>,
    },
}

/// The content blocks of one assistant message.
struct AssistantMessage {
    blocks: Vec<Value>,
    stop_reason: &'static str,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panicking test thread must not turn every later lookup into a second panic.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

fn accept_loop(listener: &TcpListener, shared: &Arc<Shared>) {
    for stream in listener.incoming() {
        if shared.stopping.load(Ordering::SeqCst) {
            break;
        }
        let Ok(stream) = stream else { continue };
        let Ok(registered) = stream.try_clone() else {
            continue;
        };
        let conn_shared = Arc::clone(shared);
        let Ok(handle) = thread::Builder::new()
            .name("mock-api-conn".to_owned())
            .spawn(move || serve_connection(stream, &conn_shared))
        else {
            continue;
        };
        let mut connections = lock(&shared.connections);
        connections.retain(|(_, handle)| !handle.is_finished());
        connections.push((registered, handle));
    }
}

fn serve_connection(stream: TcpStream, shared: &Shared) {
    let Ok(read_half) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(read_half);
    let mut writer = stream;
    loop {
        if shared.stopping.load(Ordering::SeqCst) {
            return;
        }
        let request = match read_request(&mut reader, &mut writer) {
            Ok(Some(request)) => request,
            Ok(None) => return,
            Err(_) => {
                let _ = write_head(
                    &mut writer,
                    400,
                    &[("content-length", "0".to_owned())],
                    true,
                );
                return;
            }
        };
        let close = request.wants_close();
        let reply = handle(&request, shared);
        if write_reply(&mut writer, &request, reply, close).is_err() || close {
            return;
        }
    }
}

/// Classifies and records a request, and decides the reply.
fn handle(request: &HttpRequest, shared: &Shared) -> Reply {
    let (path, query) = match request.target.split_once('?') {
        Some((path, query)) => (path.to_owned(), Some(query.to_owned())),
        None => (request.target.clone(), None),
    };
    let body: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
    let mut state = shared.lock_state();
    let (kind, reply) = match (request.method.as_str(), path.as_str()) {
        ("POST", "/v1/messages") => answer_messages(&mut state, &body),
        ("POST", "/v1/messages/count_tokens") => {
            let input_tokens = estimate_tokens(&body);
            (
                RequestKind::CountTokens,
                Reply::Json {
                    status: 200,
                    body: json!({ "input_tokens": input_tokens }),
                    retry_after: None,
                    headers: Vec::new(),
                },
            )
        }
        ("HEAD" | "GET", _) => (RequestKind::Other, Reply::Empty { status: 200 }),
        _ => (
            RequestKind::Other,
            Reply::Json {
                status: 404,
                body: error_body("not_found_error", &format!("mock has no route for {path}")),
                retry_after: None,
                headers: Vec::new(),
            },
        ),
    };
    state.requests.push(RecordedRequest {
        method: request.method.clone(),
        path,
        query,
        headers: request.headers.clone(),
        body,
        kind,
    });
    reply
}

fn answer_messages(state: &mut State, body: &Value) -> (RequestKind, Reply) {
    let has_tools = body["tools"]
        .as_array()
        .is_some_and(|tools| !tools.is_empty());
    let (kind, message) = if is_summary_request(body) {
        (RequestKind::Summary, text_message(&state.config.summary))
    } else if !has_tools {
        (RequestKind::Side, text_message(SIDE_ANSWER))
    } else {
        let first_user = first_user_text(body);
        let route = state
            .routes
            .iter()
            .position(|(marker, _)| first_user.contains(marker.as_str()));
        let (kind, turn) = match route {
            Some(index) => (RequestKind::Routed, state.routes[index].1.pop_front()),
            None => (RequestKind::Main, state.script.pop_front()),
        };
        let message = match turn {
            None => text_message(SCRIPT_EXHAUSTED),
            Some(Turn::Text(text)) => text_message(&text),
            Some(Turn::ToolUse { name, input }) => AssistantMessage {
                blocks: vec![tool_use_block(state, &name, input)],
                stop_reason: "tool_use",
            },
            Some(Turn::Tools(calls)) => AssistantMessage {
                blocks: calls
                    .into_iter()
                    .map(|(name, input)| tool_use_block(state, &name, input))
                    .collect(),
                stop_reason: "tool_use",
            },
            Some(Turn::TextThenTool { text, name, input }) => AssistantMessage {
                blocks: vec![
                    json!({ "type": "text", "text": text }),
                    tool_use_block(state, &name, input),
                ],
                stop_reason: "tool_use",
            },
            Some(Turn::Error {
                status,
                error_type,
                message,
                retry_after,
            }) => {
                let body = error_body(&error_type, &message);
                return (
                    kind,
                    Reply::Json {
                        status,
                        body,
                        retry_after,
                        headers: Vec::new(),
                    },
                );
            }
            Some(Turn::RateLimit {
                message,
                retry_after,
                window,
                unified,
            }) => {
                let now = std::time::SystemTime::now();
                let closes = *state.rate_limit_closes.get_or_insert(now + window);
                if now >= closes {
                    // The limit has reset: this request gets the next turn.
                    state.rate_limit_closes = None;
                    return answer_messages(state, body);
                }
                let headers = rate_limit_headers(retry_after, closes, unified);
                let again = Turn::RateLimit {
                    message: message.clone(),
                    retry_after,
                    window,
                    unified,
                };
                match route {
                    Some(index) => state.routes[index].1.push_front(again),
                    None => state.script.push_front(again),
                }
                return (
                    kind,
                    Reply::Json {
                        status: 429,
                        body: error_body("rate_limit_error", &message),
                        retry_after: None,
                        headers,
                    },
                );
            }
        };
        (kind, message)
    };
    state.n_messages += 1;
    let id = format!("msg_mock_{:04}", state.n_messages);
    let model = body["model"].as_str().unwrap_or("claude-mock").to_owned();
    let input_tokens = estimate_tokens(body);
    let reply = if body["stream"].as_bool() == Some(true) {
        Reply::Stream {
            events: stream_events(&id, &model, input_tokens, message),
            headers: state.config.reply_headers.clone(),
        }
    } else {
        // The API streams only when asked to: a missing `stream` means a plain JSON message.
        Reply::Json {
            status: 200,
            body: json!({
                "id": id,
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": message.blocks,
                "stop_reason": message.stop_reason,
                "stop_sequence": null,
                "usage": usage(input_tokens, output_tokens(&message.blocks)),
            }),
            retry_after: None,
            headers: state.config.reply_headers.clone(),
        }
    };
    (kind, reply)
}

/// The headers of a 429 whose limit resets at `closes`.
fn rate_limit_headers(
    retry_after: u64,
    closes: std::time::SystemTime,
    unified: bool,
) -> Vec<(String, String)> {
    let reset: chrono::DateTime<chrono::Utc> = closes.into();
    let mut headers = vec![
        ("retry-after".to_owned(), retry_after.to_string()),
        (
            "anthropic-ratelimit-requests-limit".to_owned(),
            "50".to_owned(),
        ),
        (
            "anthropic-ratelimit-requests-remaining".to_owned(),
            "0".to_owned(),
        ),
        (
            "anthropic-ratelimit-requests-reset".to_owned(),
            reset.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        ),
    ];
    if unified {
        headers.extend([
            (
                "anthropic-ratelimit-unified-status".to_owned(),
                "rejected".to_owned(),
            ),
            (
                "anthropic-ratelimit-unified-reset".to_owned(),
                reset.timestamp().to_string(),
            ),
            (
                "anthropic-ratelimit-unified-representative-claim".to_owned(),
                "five_hour".to_owned(),
            ),
        ]);
    }
    headers
}

/// The text of the first user message of a request body, one piece per line.
fn first_user_text(body: &Value) -> String {
    let mut pieces = Vec::new();
    if let Some(first) = body["messages"]
        .as_array()
        .and_then(|messages| messages.iter().find(|message| message["role"] == "user"))
    {
        collect_text(&first["content"], &mut pieces);
    }
    pieces.join("\n")
}

fn is_summary_request(body: &Value) -> bool {
    let Some(messages) = body["messages"].as_array() else {
        return false;
    };
    let Some(last_user) = messages
        .iter()
        .rev()
        .find(|message| message["role"] == "user")
    else {
        return false;
    };
    let mut pieces = Vec::new();
    collect_text(&last_user["content"], &mut pieces);
    pieces
        .iter()
        .any(|piece| piece.contains(SUMMARY_REQUEST_MARKER))
}

fn text_message(text: &str) -> AssistantMessage {
    AssistantMessage {
        blocks: vec![json!({ "type": "text", "text": text })],
        stop_reason: "end_turn",
    }
}

fn tool_use_block(state: &mut State, name: &str, input: Value) -> Value {
    state.n_tool_uses += 1;
    let id = format!("toolu_mock_{:04}", state.n_tool_uses);
    json!({ "type": "tool_use", "id": id, "name": name, "input": input })
}

fn error_body(error_type: &str, message: &str) -> Value {
    json!({ "type": "error", "error": { "type": error_type, "message": message } })
}

/// Appends the text pieces of a `system` field or a message `content` to `pieces`.
fn collect_text(content: &Value, pieces: &mut Vec<String>) {
    match content {
        Value::String(text) => pieces.push(text.clone()),
        Value::Array(blocks) => {
            for block in blocks {
                match block["type"].as_str() {
                    Some("text") => {
                        if let Some(text) = block["text"].as_str() {
                            pieces.push(text.to_owned());
                        }
                    }
                    Some("tool_result") => collect_text(&block["content"], pieces),
                    _ => {}
                }
            }
        }
        _ => {}
    }
}
