//! A scripted mock of the Gemini API (`generativelanguage`'s `v1beta`) on 127.0.0.1, for the
//! real Gemini CLI: `POST /v1beta/models/<model>:streamGenerateContent?alt=sse` with `tools` is
//! a main request and consumes one [`GeminiTurn`]; a request without tools (the model router,
//! the next-speaker check) is a side request, answered with a JSON object holding the keys
//! both read; `:countTokens` gets a count. Every request is recorded.
//! The client reaches it with `GOOGLE_GEMINI_BASE_URL` and `security.auth.selectedType =
//! "gemini-api-key"` in its user settings (facts G1).

use super::*;

/// The text of the answer to a main request that arrives after the script is used up.
pub const GEMINI_SCRIPT_EXHAUSTED: &str = "MOCK-GEMINI-SCRIPT-EXHAUSTED";

/// One scripted answer to a main request.
#[derive(Debug, Clone, PartialEq)]
pub enum GeminiTurn {
    /// A text-only model turn.
    Text(String),
    /// One function call, e.g. `write_file` with `{"file_path": …, "content": …}`.
    Call {
        /// The tool's name as the client offers it.
        name: String,
        /// Its arguments.
        args: Value,
    },
    /// An HTTP error with Google's error body, `{"error": {"code", "message", "status"}}`
    /// (the client reads a wait only from `message`; it ignores `Retry-After`).
    Error {
        /// The HTTP status, e.g. 429.
        status: u16,
        /// The message, e.g. "Quota exceeded. Please retry in 1s.".
        message: String,
    },
}

impl GeminiTurn {
    /// A function call.
    pub fn call(name: impl Into<String>, args: Value) -> GeminiTurn {
        GeminiTurn::Call {
            name: name.into(),
            args,
        }
    }

    /// A 429 `RESOURCE_EXHAUSTED` with `message`.
    pub fn quota(message: impl Into<String>) -> GeminiTurn {
        GeminiTurn::Error {
            status: 429,
            message: message.into(),
        }
    }
}

/// One request as the mock received it.
#[derive(Debug, Clone)]
pub struct GeminiRequest {
    /// The path without the query, e.g. `/v1beta/models/gemini-3.8-flash:streamGenerateContent`.
    pub path: String,
    /// The body parsed as JSON, or `Value::Null`.
    pub body: Value,
    /// Whether it consumed a turn of the script.
    pub main: bool,
}

impl GeminiRequest {
    /// Every text part of every content and of the system instruction, one per line.
    pub fn text(&self) -> String {
        let mut pieces = Vec::new();
        collect_parts(&self.body["systemInstruction"], &mut pieces);
        for content in self.body["contents"].as_array().into_iter().flatten() {
            collect_parts(content, &mut pieces);
        }
        pieces.join("\n")
    }

    /// The names of the functions the request offers.
    pub fn tool_names(&self) -> Vec<String> {
        self.body["tools"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|tool| tool["functionDeclarations"].as_array())
            .flatten()
            .filter_map(|declaration| declaration["name"].as_str().map(str::to_owned))
            .collect()
    }

    /// The `functionResponse` parts the request carries, in order.
    pub fn function_responses(&self) -> Vec<&Value> {
        self.body["contents"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|content| content["parts"].as_array())
            .flatten()
            .filter_map(|part| part.get("functionResponse"))
            .collect()
    }
}

fn collect_parts(content: &Value, pieces: &mut Vec<String>) {
    for part in content["parts"].as_array().into_iter().flatten() {
        if let Some(text) = part["text"].as_str() {
            pieces.push(text.to_owned());
        }
        if let Some(response) = part.get("functionResponse") {
            pieces.push(response["response"].to_string());
        }
    }
}

#[derive(Debug, Default)]
struct GeminiState {
    script: VecDeque<GeminiTurn>,
    requests: Vec<GeminiRequest>,
}

/// A running mock of the Gemini API on `127.0.0.1`; dropping it stops the server.
#[derive(Debug)]
pub struct GeminiMock {
    addr: SocketAddr,
    state: Arc<Mutex<GeminiState>>,
    stopping: Arc<AtomicBool>,
    accept_thread: Option<JoinHandle<()>>,
}

impl GeminiMock {
    /// Starts a mock that answers main requests with `script`, in order.
    pub fn start(script: Vec<GeminiTurn>) -> GeminiMock {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the Gemini mock");
        let addr = listener.local_addr().expect("the Gemini mock's address");
        let state = Arc::new(Mutex::new(GeminiState {
            script: script.into(),
            requests: Vec::new(),
        }));
        let stopping = Arc::new(AtomicBool::new(false));
        let accept_thread =
            spawn_accepting(listener, "gemini-mock".to_owned(), &state, &stopping, serve);
        GeminiMock {
            addr,
            state,
            stopping,
            accept_thread: Some(accept_thread),
        }
    }

    /// The base URL for `GOOGLE_GEMINI_BASE_URL`.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Every request so far.
    pub fn requests(&self) -> Vec<GeminiRequest> {
        lock(&self.state).requests.clone()
    }

    /// The main requests so far.
    pub fn main_requests(&self) -> Vec<GeminiRequest> {
        self.requests()
            .into_iter()
            .filter(|request| request.main)
            .collect()
    }

    /// Appends turns to the script.
    pub fn push_turns(&self, turns: impl IntoIterator<Item = GeminiTurn>) {
        lock(&self.state).script.extend(turns);
    }

    /// The turns not yet used.
    pub fn remaining_turns(&self) -> usize {
        lock(&self.state).script.len()
    }
}

impl Drop for GeminiMock {
    fn drop(&mut self) {
        self.stopping.store(true, Ordering::SeqCst);
        drop(TcpStream::connect(self.addr));
        if let Some(accept_thread) = self.accept_thread.take() {
            let _ = accept_thread.join();
        }
    }
}

fn serve(stream: TcpStream, state: &Mutex<GeminiState>) {
    let Ok(read_half) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(read_half);
    let mut writer = stream;
    while let Ok(Some(request)) = read_request(&mut reader, &mut writer) {
        let close = request.wants_close();
        let (status, content_type, body) = answer(&request, state);
        let headers = [
            ("content-type", content_type.to_owned()),
            ("content-length", body.len().to_string()),
        ];
        let written = write_head(&mut writer, status, &headers, close)
            .and_then(|()| writer.write_all(body.as_bytes()))
            .and_then(|()| writer.flush());
        if written.is_err() || close {
            return;
        }
    }
}

/// Records a request and decides its status, content type and body.
fn answer(request: &HttpRequest, state: &Mutex<GeminiState>) -> (u16, &'static str, String) {
    let path = request
        .target
        .split_once('?')
        .map_or(request.target.as_str(), |(path, _)| path)
        .to_owned();
    let body: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
    let streaming = path.ends_with(":streamGenerateContent");
    let generate = streaming || path.ends_with(":generateContent");
    let main = generate
        && body["tools"]
            .as_array()
            .is_some_and(|tools| !tools.is_empty());
    let mut state = lock(state);
    state.requests.push(GeminiRequest {
        path: path.clone(),
        body,
        main,
    });
    if path.ends_with(":countTokens") {
        return (
            200,
            "application/json",
            json!({"totalTokens": 10}).to_string(),
        );
    }
    if !generate {
        return (200, "application/json", "{}".to_owned());
    }
    let parts = if main {
        match state.script.pop_front() {
            Some(GeminiTurn::Text(text)) => json!([{ "text": text }]),
            Some(GeminiTurn::Call { name, args }) => {
                json!([{ "functionCall": { "name": name, "args": args } }])
            }
            Some(GeminiTurn::Error { status, message }) => {
                let error = json!({"error": {"code": status, "message": message, "status": "RESOURCE_EXHAUSTED"}});
                return (status, "application/json", error.to_string());
            }
            None => json!([{ "text": GEMINI_SCRIPT_EXHAUSTED }]),
        }
    } else {
        // The router's and the next-speaker check's keys, as JSON text.
        let side = json!({
            "complexity_reasoning": "mock",
            "complexity_score": 1,
            "reasoning": "mock",
            "next_speaker": "user",
        });
        json!([{ "text": side.to_string() }])
    };
    let reply = json!({
        "candidates": [{ "content": { "role": "model", "parts": parts }, "finishReason": "STOP", "index": 0 }],
        "usageMetadata": { "promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15 },
    });
    if streaming {
        (200, "text/event-stream", format!("data: {reply}\n\n"))
    } else {
        (200, "application/json", reply.to_string())
    }
}
