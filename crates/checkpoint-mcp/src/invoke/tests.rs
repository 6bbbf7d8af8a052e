//! Tests of running the `checkpoint` binary: the structured result and the error of a command.

use super::*;

#[test]
fn error_is_the_last_json_line_after_warnings() {
    let stderr = "warning: waiting for the lock on `x/lock`\n{\"message\": \"timed out\",\"code\": \"checkpoint::locked\",\"severity\": \"error\",\"causes\": [],\"help\": \"raise `CHECKPOINT_LOCK_TIMEOUT`\",\"labels\": [],\"related\": []}";
    let error = parse_error(stderr, Some(5));
    assert_eq!(
        error,
        CliError {
            message: "timed out".into(),
            code: Some("checkpoint::locked".into()),
            hint: Some("raise `CHECKPOINT_LOCK_TIMEOUT`".into()),
            exit_code: Some(5),
        }
    );
    assert_eq!(
        error.to_text(),
        "error [checkpoint::locked]: timed out\nhint: raise `CHECKPOINT_LOCK_TIMEOUT`"
    );
}

#[test]
fn usage_error_keeps_the_text() {
    let error = parse_error("error: invalid value 'x' for '--until <TIME>'\n", Some(2));
    assert_eq!(error.message, "invalid value 'x' for '--until <TIME>'");
    assert_eq!(error.code.as_deref(), Some("checkpoint::usage"));
    assert_eq!(error.hint, None);
}
