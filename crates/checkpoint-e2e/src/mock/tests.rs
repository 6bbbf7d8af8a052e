//! Tests of the mock's HTTP and Messages API behaviour through a raw TCP client.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::mock::{MockApi, MockConfig, RequestKind, Turn};

/// A minimal keep-alive HTTP/1.1 client.
struct Client {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
}

struct Response {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Response {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap()
    }

    /// Returns the `(event, data)` pairs of an SSE body.
    fn events(&self) -> Vec<(String, Value)> {
        self.body
            .split("\n\n")
            .filter(|frame| !frame.trim().is_empty())
            .map(|frame| {
                let event = frame
                    .lines()
                    .find_map(|l| l.strip_prefix("event: "))
                    .unwrap();
                let data = frame
                    .lines()
                    .find_map(|l| l.strip_prefix("data: "))
                    .unwrap();
                (event.to_owned(), serde_json::from_str(data).unwrap())
            })
            .collect()
    }
}

impl Client {
    fn connect(mock: &MockApi) -> Client {
        let stream = TcpStream::connect(mock.base_url().trim_start_matches("http://")).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        Client {
            reader: BufReader::new(stream.try_clone().unwrap()),
            writer: stream,
        }
    }

    fn send(
        &mut self,
        method: &str,
        target: &str,
        body: Option<&Value>,
        chunked: bool,
    ) -> Response {
        let mut head = format!("{method} {target} HTTP/1.1\r\nHost: mock\r\n");
        let body = body.map(Value::to_string).unwrap_or_default();
        if chunked {
            head.push_str("Transfer-Encoding: chunked\r\n\r\n");
            let (first, second) = body.split_at(body.len() / 2);
            for piece in [first, second] {
                head.push_str(&format!("{:x};ext=1\r\n{piece}\r\n", piece.len()));
            }
            head.push_str("0\r\n\r\n");
        } else {
            head.push_str(&format!("Content-Length: {}\r\n\r\n{body}", body.len()));
        }
        self.writer.write_all(head.as_bytes()).unwrap();
        self.read_response(method == "HEAD")
    }

    fn read_response(&mut self, head_only: bool) -> Response {
        let mut line = String::new();
        self.reader.read_line(&mut line).unwrap();
        let status = line.split_whitespace().nth(1).unwrap().parse().unwrap();
        let mut headers = Vec::new();
        loop {
            line.clear();
            self.reader.read_line(&mut line).unwrap();
            let trimmed = line.trim_end();
            if trimmed.is_empty() {
                break;
            }
            let (name, value) = trimmed.split_once(':').unwrap();
            headers.push((name.trim().to_owned(), value.trim().to_owned()));
        }
        let mut response = Response {
            status,
            headers,
            body: String::new(),
        };
        if head_only {
            return response;
        }
        let mut body = Vec::new();
        if response.header("transfer-encoding") == Some("chunked") {
            loop {
                line.clear();
                self.reader.read_line(&mut line).unwrap();
                let size = usize::from_str_radix(line.trim_end(), 16).unwrap();
                let mut chunk = vec![0; size + 2];
                self.reader.read_exact(&mut chunk).unwrap();
                if size == 0 {
                    break;
                }
                body.extend(&chunk[..size]);
            }
        } else {
            let length: usize = response.header("content-length").unwrap().parse().unwrap();
            body.resize(length, 0);
            self.reader.read_exact(&mut body).unwrap();
        }
        response.body = String::from_utf8(body).unwrap();
        response
    }
}

fn main_body(prompt: &str) -> Value {
    json!({
        "model": "claude-test",
        "stream": true,
        "tools": [{ "name": "Bash", "input_schema": { "type": "object" } }],
        "system": [{ "type": "text", "text": "SYSTEM-BLOCK" }],
        "messages": [{ "role": "user", "content": [{ "type": "text", "text": prompt }] }],
    })
}

/// Concatenates the text and JSON deltas of a stream, per block.
fn accumulate(events: &[(String, Value)]) -> Vec<String> {
    let mut blocks = Vec::new();
    for (event, data) in events {
        match event.as_str() {
            "content_block_start" => blocks.push(String::new()),
            "content_block_delta" => {
                let idx = data["index"].as_u64().unwrap() as usize;
                let delta = &data["delta"];
                let piece = delta["text"]
                    .as_str()
                    .or(delta["partial_json"].as_str())
                    .unwrap();
                blocks[idx].push_str(piece);
            }
            _ => {}
        }
    }
    blocks
}

#[test]
fn head_then_streamed_text_on_one_keep_alive_connection() {
    let mock = MockApi::start(vec![Turn::text("HELLO-FROM-MOCK")]);
    let mut client = Client::connect(&mock);
    let head = client.send("HEAD", "/", None, false);
    assert_eq!(head.status, 200);

    let response = client.send(
        "POST",
        "/v1/messages?beta=true",
        Some(&main_body("hi")),
        false,
    );
    assert_eq!(response.status, 200);
    assert_eq!(
        response.header("content-type"),
        Some("text/event-stream; charset=utf-8")
    );
    let events = response.events();
    let names: Vec<&str> = events.iter().map(|(event, _)| event.as_str()).collect();
    assert_eq!(
        names,
        [
            "message_start",
            "ping",
            "content_block_start",
            "content_block_delta",
            "content_block_delta",
            "content_block_stop",
            "message_delta",
            "message_stop",
        ]
    );
    for (event, data) in &events {
        assert_eq!(data["type"], event.as_str());
    }
    assert_eq!(events[0].1["message"]["model"], "claude-test");
    assert_eq!(events[0].1["message"]["id"], "msg_mock_0001");
    assert_eq!(
        events[2].1["content_block"],
        json!({ "type": "text", "text": "" })
    );
    assert_eq!(events[3].1["delta"]["type"], "text_delta");
    assert_eq!(events[6].1["delta"]["stop_reason"], "end_turn");
    assert!(events[6].1["usage"]["output_tokens"].as_u64().unwrap() > 0);
    assert_eq!(accumulate(&events), ["HELLO-FROM-MOCK"]);

    let requests = mock.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(
        (requests[0].method.as_str(), requests[0].kind),
        ("HEAD", RequestKind::Other)
    );
    assert_eq!(requests[1].path, "/v1/messages");
    assert_eq!(requests[1].query.as_deref(), Some("beta=true"));
    assert_eq!(requests[1].header("HOST"), Some("mock"));
    assert_eq!(mock.main_requests().len(), 1);
}

#[test]
fn tool_use_streams_input_json_and_numbers_ids() {
    let input = json!({ "command": "echo tool-ran > out.txt", "description": "é" });
    let mock = MockApi::start(vec![
        Turn::tool_use("Bash", input.clone()),
        Turn::text_then_tool("thinking aloud", "Write", json!({ "file_path": "x" })),
    ]);
    let mut client = Client::connect(&mock);

    let events = client
        .send("POST", "/v1/messages", Some(&main_body("go")), true)
        .events();
    let start = &events
        .iter()
        .find(|(event, _)| event == "content_block_start")
        .unwrap()
        .1;
    assert_eq!(start["content_block"]["id"], "toolu_mock_0001");
    assert_eq!(start["content_block"]["name"], "Bash");
    assert_eq!(start["content_block"]["input"], json!({}));
    let delta = &events
        .iter()
        .find(|(event, _)| event == "content_block_delta")
        .unwrap()
        .1;
    assert_eq!(delta["delta"]["type"], "input_json_delta");
    let blocks = accumulate(&events);
    assert_eq!(serde_json::from_str::<Value>(&blocks[0]).unwrap(), input);
    let message_delta = &events
        .iter()
        .find(|(event, _)| event == "message_delta")
        .unwrap()
        .1;
    assert_eq!(message_delta["delta"]["stop_reason"], "tool_use");

    let events = client
        .send("POST", "/v1/messages", Some(&main_body("more")), false)
        .events();
    let blocks = accumulate(&events);
    assert_eq!(blocks[0], "thinking aloud");
    assert_eq!(
        serde_json::from_str::<Value>(&blocks[1]).unwrap(),
        json!({ "file_path": "x" })
    );
    let starts: Vec<&Value> = events
        .iter()
        .filter(|(event, _)| event == "content_block_start")
        .map(|(_, data)| data)
        .collect();
    assert_eq!(starts[1]["index"], 1);
    assert_eq!(starts[1]["content_block"]["id"], "toolu_mock_0002");

    // The chunked request body was decoded and parsed.
    assert_eq!(mock.main_requests()[0].body, main_body("go"));
}

#[test]
fn side_summary_and_count_tokens_requests_do_not_consume_the_script() {
    let config = MockConfig {
        summary: "CUSTOM-SUMMARY".to_owned(),
        ..MockConfig::default()
    };
    let mock = MockApi::start_with(vec![Turn::text("FIRST")], config);
    let mut client = Client::connect(&mock);

    let mut side = main_body("title please");
    side.as_object_mut().unwrap().remove("tools");
    let events = client
        .send("POST", "/v1/messages", Some(&side), false)
        .events();
    assert_eq!(accumulate(&events), ["side"]);

    let mut summary = main_body("x");
    summary["messages"] = json!([
        { "role": "user", "content": "hello" },
        { "role": "assistant", "content": [{ "type": "text", "text": "hi" }] },
        { "role": "user", "content": [{ "type": "text", "text":
            "CRITICAL: Respond with TEXT ONLY. Your task is to create a detailed summary of the conversation so far." }] },
    ]);
    let events = client
        .send("POST", "/v1/messages", Some(&summary), false)
        .events();
    assert_eq!(accumulate(&events), ["CUSTOM-SUMMARY"]);

    let count = client.send(
        "POST",
        "/v1/messages/count_tokens",
        Some(&main_body("x")),
        false,
    );
    assert_eq!(count.status, 200);
    assert!(count.json()["input_tokens"].as_u64().unwrap() > 0);

    assert_eq!(mock.remaining_turns(), 1);
    let events = client
        .send("POST", "/v1/messages", Some(&main_body("a")), false)
        .events();
    assert_eq!(accumulate(&events), ["FIRST"]);
    let events = client
        .send("POST", "/v1/messages", Some(&main_body("b")), false)
        .events();
    assert_eq!(accumulate(&events), ["MOCK-SCRIPT-EXHAUSTED"]);

    let kinds: Vec<RequestKind> = mock.requests().iter().map(|request| request.kind).collect();
    assert_eq!(
        kinds,
        [
            RequestKind::Side,
            RequestKind::Summary,
            RequestKind::CountTokens,
            RequestKind::Main,
            RequestKind::Main,
        ]
    );
}

#[test]
fn error_turn_answers_with_anthropic_error_body_and_retry_after() {
    let mock = MockApi::start(vec![
        Turn::Error {
            status: 429,
            error_type: "rate_limit_error".to_owned(),
            message: "mock rate_limit_error".to_owned(),
            retry_after: Some(3),
        },
        Turn::error(529, "overloaded_error", "mock overloaded_error"),
    ]);
    let mut client = Client::connect(&mock);
    let response = client.send("POST", "/v1/messages", Some(&main_body("a")), false);
    assert_eq!(response.status, 429);
    assert_eq!(response.header("retry-after"), Some("3"));
    assert_eq!(
        response.json(),
        json!({ "type": "error", "error": { "type": "rate_limit_error", "message": "mock rate_limit_error" } })
    );
    let response = client.send("POST", "/v1/messages", Some(&main_body("b")), false);
    assert_eq!(response.status, 529);
    assert_eq!(response.header("retry-after"), None);
    assert_eq!(mock.main_requests().len(), 2);
}

#[test]
fn a_rate_limit_refuses_every_request_until_its_window_closes() {
    let mock = MockApi::start(vec![
        Turn::RateLimit {
            message: "mock rate limit".to_owned(),
            retry_after: 1,
            window: Duration::from_millis(600),
            unified: true,
        },
        Turn::text("AFTER"),
    ]);
    let mut client = Client::connect(&mock);
    let started = std::time::SystemTime::now();
    for _ in 0..2 {
        let response = client.send("POST", "/v1/messages", Some(&main_body("a")), false);
        assert_eq!(response.status, 429);
        assert_eq!(response.header("retry-after"), Some("1"));
        assert_eq!(
            response.header("anthropic-ratelimit-requests-remaining"),
            Some("0")
        );
        assert_eq!(
            response.header("anthropic-ratelimit-unified-status"),
            Some("rejected")
        );
        let reset: i64 = response
            .header("anthropic-ratelimit-unified-reset")
            .unwrap()
            .parse()
            .unwrap();
        let started: chrono::DateTime<chrono::Utc> = started.into();
        assert!((reset - started.timestamp()).abs() <= 1, "{reset}");
        let rfc3339 = response
            .header("anthropic-ratelimit-requests-reset")
            .unwrap();
        assert!(
            chrono::DateTime::parse_from_rfc3339(rfc3339).is_ok(),
            "{rfc3339}"
        );
        assert_eq!(response.json()["error"]["type"], "rate_limit_error");
    }
    std::thread::sleep(Duration::from_millis(700));
    let response = client.send("POST", "/v1/messages", Some(&main_body("b")), false);
    assert_eq!(response.status, 200);
    assert_eq!(mock.remaining_turns(), 0);
    assert_eq!(mock.main_requests().len(), 3);
}

#[test]
fn non_streaming_request_gets_a_plain_json_message() {
    let mock = MockApi::start(vec![Turn::tool_use("Bash", json!({ "command": "ls" }))]);
    let mut body = main_body("a");
    body["stream"] = json!(false);
    let response = Client::connect(&mock).send("POST", "/v1/messages", Some(&body), false);
    assert_eq!(response.status, 200);
    let message = response.json();
    assert_eq!(message["type"], "message");
    assert_eq!(message["stop_reason"], "tool_use");
    assert_eq!(
        message["content"],
        json!([{
            "type": "tool_use", "id": "toolu_mock_0001", "name": "Bash", "input": { "command": "ls" }
        }])
    );
}

#[test]
fn model_text_covers_system_messages_and_tool_results() {
    let mock = MockApi::start(vec![]);
    let mut body = main_body("PROMPT-TEXT");
    body["messages"] = json!([
        { "role": "system", "content": "SYSTEM-MESSAGE-TEXT" },
        { "role": "user", "content": "STRING-CONTENT" },
        { "role": "assistant", "content": [
            { "type": "tool_use", "id": "t1", "name": "Bash", "input": { "command": "NOT-TEXT" } }
        ] },
        { "role": "user", "content": [
            { "type": "tool_result", "tool_use_id": "t1", "content": "RESULT-STRING", "is_error": false },
            { "type": "tool_result", "tool_use_id": "t2",
              "content": [{ "type": "text", "text": "RESULT-BLOCK" }] },
            { "type": "text", "text": "AFTER-RESULT" },
        ] },
    ]);
    Client::connect(&mock).send("POST", "/v1/messages", Some(&body), false);
    let text = mock.request_text(0);
    for expected in [
        "SYSTEM-BLOCK",
        "SYSTEM-MESSAGE-TEXT",
        "STRING-CONTENT",
        "RESULT-STRING",
        "RESULT-BLOCK",
        "AFTER-RESULT",
    ] {
        assert!(text.contains(expected), "{expected} missing from {text}");
    }
    assert!(!text.contains("NOT-TEXT"));
    let request = &mock.main_requests()[0];
    assert_eq!(request.tool_results().len(), 2);
    assert_eq!(request.tool_results()[0]["is_error"], false);
    // `role_text` keeps one role's messages and leaves out the top-level `system` field.
    let system = request.role_text("system");
    assert_eq!(system, "SYSTEM-MESSAGE-TEXT");
    let user = request.role_text("user");
    assert_eq!(
        user,
        "STRING-CONTENT\nRESULT-STRING\nRESULT-BLOCK\nAFTER-RESULT"
    );
}

#[test]
fn drop_stops_the_server_despite_an_idle_keep_alive_connection() {
    let mock = MockApi::start(vec![]);
    let addr = mock.base_url().trim_start_matches("http://").to_owned();
    let mut client = Client::connect(&mock);
    client.send("HEAD", "/", None, false);
    let started = Instant::now();
    drop(mock);
    assert!(started.elapsed() < Duration::from_secs(5));
    // The idle connection was closed by the server and nothing listens on the port any more.
    let mut rest = Vec::new();
    assert_eq!(client.reader.read_to_end(&mut rest).unwrap_or(0), 0);
    assert!(TcpStream::connect(addr).is_err());
}
