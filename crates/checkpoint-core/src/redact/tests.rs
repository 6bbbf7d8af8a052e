//! Tests of redaction: one per pattern, then properties over random text.

use proptest::prelude::*;

use super::*;
use crate::redact;

/// Redacts `input`, expects `expect`, and checks that a second redaction finds nothing more;
/// returns how many secrets were replaced.
#[track_caller]
fn check(input: &str, expect: &str) -> usize {
    let mut text = input.to_owned();
    let n = redact::text(&mut text);
    assert_eq!(text, expect);
    assert_eq!(n > 0, input != expect, "count {n} for {input:?}");
    let mut again = text.clone();
    assert_eq!(
        redact::text(&mut again),
        0,
        "a second pass found more in {text:?}"
    );
    n
}

#[test]
fn anthropic_and_openai_keys() {
    check(
        "key sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789_-xyz here",
        "key [REDACTED:api-key] here",
    );
    check(
        "OPENAI sk-proj-0123456789abcdefghijABCDEFGHIJ.",
        "OPENAI [REDACTED:api-key].",
    );
    check(
        "the sk-learn library and task-sk-1",
        "the sk-learn library and task-sk-1",
    );
}

#[test]
fn aws_access_keys() {
    check("id AKIAIOSFODNN7EXAMPLE,", "id [REDACTED:aws-key],");
    check("ASIAY34FZKBOKMUTVV7A", "[REDACTED:aws-key]");
    check(
        "AKIA is a prefix, AKIASHORT too",
        "AKIA is a prefix, AKIASHORT too",
    );
}

#[test]
fn github_tokens() {
    check(
        "push with ghp_1234567890abcdefghijABCDEFGHIJ123456 now",
        "push with [REDACTED:github-token] now",
    );
    check(
        "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz",
        "[REDACTED:github-token]",
    );
    check("ghs_short", "ghs_short");
}

#[test]
fn slack_tokens() {
    check(
        "bot xoxb-123456789012-1234567890123-AbCdEfGhIjKl ok",
        "bot [REDACTED:slack-token] ok",
    );
    check("xoxp-1234567890-abc", "[REDACTED:slack-token]");
    check("xoxo", "xoxo");
}

#[test]
fn bearer_tokens() {
    check(
        "curl -H 'Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.e30.sig' url",
        "curl -H 'Authorization: Bearer [REDACTED:bearer-token]' url",
    );
    check(
        "bearer  abcdefgh12345678",
        "bearer  [REDACTED:bearer-token]",
    );
    check("the bearer of bad news", "the bearer of bad news");
}

#[test]
fn private_key_blocks() {
    check(
        "before\n-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\nabc\n-----END RSA PRIVATE KEY-----\nafter",
        "before\n[REDACTED:private-key]\nafter",
    );
    check(
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEA (truncated",
        "[REDACTED:private-key]",
    );
    check(
        "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----",
        "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----",
    );
}

#[test]
fn generic_assignments() {
    check(
        "login with password=hunter2 then",
        "login with password=[REDACTED:secret] then",
    );
    check("GITHUB_TOKEN: abc123", "GITHUB_TOKEN: [REDACTED:secret]");
    check(
        r#"{"client_secret": "s3cr3t value", "n": 1}"#,
        r#"{"client_secret": "[REDACTED:secret]", "n": 1}"#,
    );
    check(
        "url?access_token=abc&x=1; db.password = 'p w'",
        "url?access_token=[REDACTED:secret]&x=1; db.password = '[REDACTED:secret]'",
    );
    check(
        "max_tokens=100, token budget, tokens: 5, password=",
        "max_tokens=100, token budget, tokens: 5, password=",
    );
}

#[test]
fn values_next_to_other_secrets_stay_redacted_once() {
    // Found by the `redact` fuzz target: a second pass must find nothing.
    check(
        "clientpassword=[R-----BEGIN RSA PRIVATE KEY-----\nMII\n-----END RSA PRIVATE KEY-----",
        "clientpassword=[REDACTED:secret][REDACTED:private-key]",
    );
    check(
        "token: Bearer abcdefgh, api_key=Bearer x",
        "token: Bearer [REDACTED:bearer-token], api_key=Bearer [REDACTED:bearer-token]",
    );
    check(
        "token: Bearer [REDACTED:bearer-token]",
        "token: Bearer [REDACTED:bearer-token]",
    );
}

#[test]
fn counts_every_secret_and_keeps_the_rest() {
    let mut text =
        "a AKIAIOSFODNN7EXAMPLE b token=x c ghp_1234567890abcdefghijABCDEFGHIJ123456".to_owned();
    assert_eq!(redact::text(&mut text), 3);
    assert_eq!(
        text,
        "a [REDACTED:aws-key] b token=[REDACTED:secret] c [REDACTED:github-token]"
    );
}

#[test]
fn every_free_text_field_of_a_transition() {
    let key = "sk-ant-api03-0123456789abcdefghijklmnop";
    let mut transition = Transition::PhaseApprove {
        phase: crate::PhaseId::new("a").unwrap(),
        by: Some(format!("me {key}")),
        note: Some(format!("note {key}")),
    };
    assert_eq!(super::transition(&mut transition), 2);
    let text = serde_json::to_string(&transition).unwrap();
    assert!(!text.contains(key), "{text}");

    let plan = crate::Plan {
        title: Some(format!("title {key}")),
        description: Some(format!("password={key}")),
        kind: None,
        phases: vec![crate::PhasePlan::from_spec("a").unwrap()],
    };
    let mut workflow = plan
        .into_workflow(
            crate::WorkflowId::new("w").unwrap(),
            None,
            chrono::DateTime::UNIX_EPOCH,
        )
        .unwrap();
    workflow.phases[0].progress = Some(key.to_owned());
    workflow
        .extensions
        .insert("x".into(), serde_json::json!({"deep": [key]}));
    let mut transition = Transition::Init {
        workflow: Box::new(workflow),
    };
    assert_eq!(super::transition(&mut transition), 4);
    let text = serde_json::to_string(&transition).unwrap();
    assert!(!text.contains(key), "{text}");
}

/// Secrets of every kind, as a strategy.
fn secret() -> impl Strategy<Value = String> {
    prop_oneof![
        "sk-(ant-api03-|proj-)?[A-Za-z0-9_-]{20,60}",
        "AKIA[A-Z0-9]{16}",
        "gh[pousr]_[A-Za-z0-9]{36}",
        "github_pat_[A-Za-z0-9_]{22,82}",
        "xox[abposr]-[A-Za-z0-9-]{10,40}",
        "Bearer [A-Za-z0-9._~+/=-]{8,40}",
        "(password|api_key|ACCESS_TOKEN)=[A-Za-z0-9!@#%^*]{1,30}",
        "-----BEGIN (RSA |EC |OPENSSH )?PRIVATE KEY-----\n[A-Za-z0-9+/=\n]{0,80}\n-----END (RSA |EC |OPENSSH )?PRIVATE KEY-----",
    ]
}

/// The part of a generated secret that must not survive.
fn sensitive_part(secret: &str) -> &str {
    match secret.split_once(['=', ' ']) {
        Some((_, value)) if !secret.starts_with("-----") => value,
        _ => secret,
    }
}

proptest! {
    #[test]
    fn embedded_secrets_never_survive(
        before in "[a-z ,.:()\n]{0,20}",
        secret in secret(),
        after in "[ ,.;)\n][a-z ,.]{0,20}",
    ) {
        let mut text = format!("{before} {secret}{after}");
        prop_assert!(redact::text(&mut text) >= 1);
        // The markers themselves may contain a short value's letters; the text around it too.
        let sensitive = sensitive_part(&secret);
        let mut stripped = text.clone();
        while let Some(start) = stripped.find("[REDACTED:") {
            let end = stripped[start..].find(']').map_or(stripped.len(), |end| start + end + 1);
            stripped.replace_range(start..end, "");
        }
        let prefix = &secret[..secret.len() - sensitive.len()];
        if prefix.is_empty() {
            // A whole-token secret (16 characters or more) cannot hide in the short prose around it.
            prop_assert!(!stripped.contains(sensitive), "{text}");
        } else {
            // An assignment or bearer value: nothing of it may follow its key.
            let first = sensitive.chars().next().expect("generated values are not empty");
            if !after.starts_with(first) {
                prop_assert!(!stripped.contains(&format!("{prefix}{first}")), "{text}");
            }
        }
    }

    #[test]
    fn redacting_twice_changes_nothing_more(text in any::<String>(), secret in secret()) {
        let mut once = format!("{text} {secret} {text}");
        redact::text(&mut once);
        let mut twice = once.clone();
        prop_assert_eq!(redact::text(&mut twice), 0);
        prop_assert_eq!(twice, once);
    }

    #[test]
    fn redacting_twice_changes_nothing_more_when_secrets_touch(
        first in secret(),
        joint in "[-_ ]?",
        second in secret(),
    ) {
        // Found by the `redact` fuzz target: `AKIA…-password=x` left `password=x` for a second
        // pass, whose marker `]` made a boundary the first pass did not see.
        let mut once = format!("{first}{joint}{second}");
        text(&mut once);
        let mut twice = once.clone();
        prop_assert_eq!(text(&mut twice), 0, "{}", once);
        prop_assert_eq!(twice, once);
    }

    #[test]
    fn plain_prose_is_untouched(text in "[a-z ,.\n]{0,200}") {
        let mut redacted = text.clone();
        prop_assert_eq!(redact::text(&mut redacted), 0);
        prop_assert_eq!(redacted, text);
    }
}

#[test]
fn a_secret_right_before_an_assignment_goes_in_one_pass() {
    let redacted = check(
        "RS AKIAIOSFODNN4EXAMPLE-password=x and -----BEGIN RSA PRIVATE KEY-----\nAbc\n-----END RSA PRIVATE KEY-----_token=y",
        "RS [REDACTED:aws-key]-password=[REDACTED:secret] and [REDACTED:private-key]_token=[REDACTED:secret]",
    );
    assert_eq!(redacted, 4);
}

#[test]
fn a_quoted_value_never_joins_lines() {
    // Found by the `redact` fuzz target: the value ran to the next quote, lines away, and its
    // marker joined a `-----BEGIN` line to a `PRIVATE KEY-----` one for a second pass to find.
    let redacted = check(
        "\"client_secret\": \"yn Bearer ab0defgh1234\n-----BEGIN\"RSAN RSA PRIVATE KEY------",
        "\"client_secret\": \"[REDACTED:secret]\n-----BEGIN\"RSAN RSA PRIVATE KEY------",
    );
    assert_eq!(redacted, 1);
}
