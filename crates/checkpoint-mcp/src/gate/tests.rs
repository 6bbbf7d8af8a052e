//! The gate's checks, line by line, and its replies.

use serde_json::{Value, json};

use super::*;

fn verdict(line: &str) -> Verdict {
    check(line.as_bytes(), &Pending::default())
}

/// The error reply of a line, as `(id, code)`.
#[track_caller]
fn reply(line: &str) -> (Value, i64) {
    match verdict(line) {
        Verdict::Reply(reply) => (
            reply["id"].clone(),
            reply["error"]["code"].as_i64().unwrap(),
        ),
        other => panic!("{line}: {other:?}"),
    }
}

#[test]
fn invalid_requests_are_answered_with_their_id() {
    for id in [json!(7), json!("seven"), json!(-1), json!(1.5)] {
        let request = |rest: &str| format!(r#"{{"jsonrpc":"2.0","id":{id},{rest}}}"#);
        for (rest, code) in [
            (r#""method":"tools/call","params":"a string""#, -32600),
            (r#""method":"tools/call","params":42"#, -32600),
            (r#""method":"tools/call","params":true"#, -32600),
            (r#""method":"tools/call","params":[1,2]"#, -32602),
            (r#""method":"tools/list","params":[]"#, -32602),
            (
                r#""method":"tools/call","params":{"name":"status","_meta":"x"}"#,
                -32602,
            ),
            (r#""method":"ping","params":{"_meta":[1]}"#, -32602),
            (r#""method":"tools/call""#, -32602),
            (r#""method":"resources/read""#, -32602),
            (r#""method":"prompts/get","params":null"#, -32602),
            (r#""method":"initialize""#, -32602),
            (r#""method":5"#, -32600),
            (r#""params":{}"#, -32600),
        ] {
            assert_eq!(reply(&request(rest)), (id.clone(), code), "{rest}");
        }
        // The wrong version, or none.
        let line = format!(r#"{{"jsonrpc":"1.0","id":{id},"method":"ping"}}"#);
        assert_eq!(reply(&line), (id.clone(), -32600));
        let line = format!(r#"{{"id":{id},"method":"ping"}}"#);
        assert_eq!(reply(&line), (id.clone(), -32600));
    }
}

#[test]
fn what_has_no_id_is_answered_with_null() {
    for (line, code) in [
        ("this is not JSON", -32700),
        (r#"{"jsonrpc":"2.0","id":1,"#, -32700),
        ("[1,2]", -32600),
        ("[]", -32600),
        ("42", -32600),
        (r#""a string""#, -32600),
        (r#"{"hello":"world"}"#, -32600),
        (r#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#, -32600),
        (r#"{"jsonrpc":"2.0","id":[1],"method":"ping"}"#, -32600),
    ] {
        assert_eq!(reply(line), (Value::Null, code), "{line}");
    }
}

#[test]
fn good_messages_pass_and_bad_notifications_are_dropped() {
    for line in [
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
        r#"{"jsonrpc":"2.0","id":"x","method":"ping","params":{}}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"status","arguments":{},"_meta":{"progressToken":1}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":3,"result":{}}"#,
        r#"{"jsonrpc":"2.0","id":4,"method":"workflows/explode","params":{}}"#,
    ] {
        assert_eq!(
            verdict(line),
            Verdict::Pass(line.as_bytes().to_vec()),
            "{line}"
        );
    }
    // `params: null` is no params.
    let Verdict::Pass(passed) =
        verdict(r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":null}"#)
    else {
        panic!("a ping with null params passes");
    };
    let passed: Value = serde_json::from_slice(&passed).unwrap();
    assert_eq!(passed, json!({"jsonrpc":"2.0","id":1,"method":"ping"}));
    for line in [
        "",
        "  \r",
        r#"{"jsonrpc":"2.0","method":"notifications/initialized","params":"x"}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":[1]}"#,
    ] {
        assert_eq!(verdict(line), Verdict::Skip, "{line}");
    }
}

#[test]
fn method_not_found_for_a_known_method_is_invalid_params() {
    let pending = Pending::default();
    for (id, method) in [
        (1, "prompts/get"),
        (2, "workflows/explode"),
        (3, "tools/call"),
    ] {
        let line = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{{}}}}"#);
        assert!(matches!(check(line.as_bytes(), &pending), Verdict::Pass(_)));
    }
    let not_found = |id: u64| {
        format!(r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32601,"message":"x"}}}}"#)
    };
    let settled: Value =
        serde_json::from_slice(&settle(not_found(1).as_bytes(), &pending)).unwrap();
    assert_eq!(
        (settled["id"].as_u64(), settled["error"]["code"].as_i64()),
        (Some(1), Some(-32602))
    );
    let settled: Value =
        serde_json::from_slice(&settle(not_found(2).as_bytes(), &pending)).unwrap();
    assert_eq!(settled["error"]["code"], -32601);
    let ok = r#"{"jsonrpc":"2.0","id":3,"result":{}}"#;
    assert_eq!(settle(ok.as_bytes(), &pending), ok.as_bytes());
    assert!(pending.lock().unwrap().is_empty());
}

#[test]
fn the_id_of_a_message_cut_short_is_found_when_it_comes_first() {
    let long = "x".repeat(100);
    for (start, id) in [
        (
            format!(r#"{{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{{"a":"{long}"#),
            json!(42),
        ),
        (
            format!(r#"{{"id":"abc","params":{{"a":"{long}"#),
            json!("abc"),
        ),
        (format!(r#"{{"params":{{"a":"{long}"#), Value::Null),
        (format!(r#"{{"params":{{"id":7,"a":"{long}"#), Value::Null),
        ("not json".to_owned(), Value::Null),
        (r#"{"id":{"a":1},"params":"#.to_owned(), Value::Null),
    ] {
        assert_eq!(leading_id(start.as_bytes()), id, "{start}");
    }
}
