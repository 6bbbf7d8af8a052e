//! A scripted mock of the OpenAI Responses API on 127.0.0.1, for Codex CLI: one streaming
//! `POST /v1/responses` per agent turn, answered by the next [`ResponsesTurn`]; every request
//! body is recorded. The stream is the minimal one Codex 0.169.0 accepts: each output item as
//! `response.output_item.done`, then `response.completed`.

use super::*;

/// One scripted answer of the model.
#[derive(Debug, Clone)]
pub enum ResponsesTurn {
    /// A message.
    Text(String),
    /// A shell command, through the `exec_command` tool.
    Shell(String),
    /// A patch, through the freeform `apply_patch` tool.
    Patch(String),
    /// A client-executed tool search.
    ToolSearch(String),
    /// A call of a deferred MCP tool: its namespace (`mcp__<server>`), name and arguments.
    Namespaced {
        namespace: String,
        name: String,
        arguments: Value,
    },
    /// An HTTP error (a 429 with `Retry-After` seconds).
    Error {
        status: u16,
        retry_after: Option<u32>,
        message: String,
    },
}

/// The text of the answer once the script is used up.
pub const RESPONSES_EXHAUSTED: &str = "MOCK-RESPONSES-EXHAUSTED";

#[derive(Default)]
struct ResponsesState {
    script: VecDeque<ResponsesTurn>,
    requests: Vec<Value>,
    calls: usize,
}

/// The mock server; stops when dropped.
pub struct ResponsesMock {
    addr: SocketAddr,
    state: Arc<Mutex<ResponsesState>>,
    stopping: Arc<AtomicBool>,
}

impl ResponsesMock {
    /// Starts a mock that answers with `script`, in order.
    pub fn start(script: Vec<ResponsesTurn>) -> ResponsesMock {
        let listener =
            TcpListener::bind("127.0.0.1:0").expect("binding an ephemeral loopback port succeeds");
        let addr = listener
            .local_addr()
            .expect("a bound listener has an address");
        let state = Arc::new(Mutex::new(ResponsesState {
            script: script.into(),
            ..ResponsesState::default()
        }));
        let stopping = Arc::new(AtomicBool::new(false));
        let name = format!("responses-mock-{}", addr.port());
        spawn_accepting(listener, name, &state, &stopping, serve);
        ResponsesMock {
            addr,
            state,
            stopping,
        }
    }

    /// The provider's `base_url` (`http://127.0.0.1:<port>/v1`).
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// The bodies of the `POST /v1/responses` requests so far.
    pub fn requests(&self) -> Vec<Value> {
        lock(&self.state).requests.clone()
    }

    /// Appends turns to the script.
    pub fn push(&self, turns: impl IntoIterator<Item = ResponsesTurn>) {
        lock(&self.state).script.extend(turns);
    }
}

impl Drop for ResponsesMock {
    fn drop(&mut self) {
        self.stopping.store(true, Ordering::SeqCst);
        drop(TcpStream::connect(self.addr));
    }
}

fn serve(stream: TcpStream, state: &Mutex<ResponsesState>) {
    let Ok(read_half) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(read_half);
    let mut writer = stream;
    while let Ok(Some(request)) = read_request(&mut reader, &mut writer) {
        let close = request.wants_close();
        let reply = if request.method == "POST" && request.target.starts_with("/v1/responses") {
            let body: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
            let mut state = lock(state);
            state.requests.push(body);
            state.calls += 1;
            let call = state.calls;
            let turn = state
                .script
                .pop_front()
                .unwrap_or_else(|| ResponsesTurn::Text(RESPONSES_EXHAUSTED.to_owned()));
            answer(turn, call)
        } else {
            Reply::Empty { status: 404 }
        };
        if write_reply(&mut writer, &request, reply, close).is_err() || close {
            return;
        }
    }
}

fn answer(turn: ResponsesTurn, call: usize) -> Reply {
    let call_id = format!("call_mock_{call:04}");
    let item = match turn {
        ResponsesTurn::Text(text) => json!({"type": "message", "role": "assistant",
            "content": [{"type": "output_text", "text": text}]}),
        ResponsesTurn::Shell(cmd) => json!({"type": "function_call", "call_id": call_id,
            "name": "exec_command", "arguments": json!({"cmd": cmd}).to_string()}),
        ResponsesTurn::Patch(patch) => json!({"type": "custom_tool_call", "call_id": call_id,
            "name": "apply_patch", "input": patch}),
        ResponsesTurn::ToolSearch(query) => json!({"type": "tool_search_call", "call_id": call_id,
            "execution": "client", "arguments": {"query": query, "limit": 8}}),
        ResponsesTurn::Namespaced {
            namespace,
            name,
            arguments,
        } => json!({"type": "function_call", "call_id": call_id, "namespace": namespace,
            "name": name, "arguments": arguments.to_string()}),
        ResponsesTurn::Error {
            status,
            retry_after,
            message,
        } => {
            return Reply::Json {
                status,
                body: json!({"error": {"message": message, "type": "rate_limit_exceeded",
                    "code": "rate_limit_exceeded"}}),
                retry_after,
                headers: Vec::new(),
            };
        }
    };
    Reply::Stream {
        events: vec![
            (
                "response.output_item.done",
                json!({"type": "response.output_item.done", "item": item}),
            ),
            (
                "response.completed",
                json!({"type": "response.completed", "response": {"id": format!("resp_{call}")}}),
            ),
        ],
        headers: Vec::new(),
    }
}
