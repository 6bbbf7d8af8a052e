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
fn a_url_inside_an_authority_is_redacted_in_one_call() {
    // Found by the `redact` fuzz target: the first URL's authority ran over the second URL's
    // scheme, so one pass left the second password and a second redaction found it.
    check(
        "s://:@@v://:@@",
        "s://:[REDACTED:url-password]@v://:[REDACTED:url-password]@",
    );
    check(
        "git+ssh://u:@h:p@x://a:pw@host/r",
        "git+ssh://u:[REDACTED:url-password]@x://a:[REDACTED:url-password]@host/r",
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
        priority: None,
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
        "(sk|rk)_live_[A-Za-z0-9]{10,99}",
        "AIza[A-Za-z0-9_-]{35}",
        "(npm_[a-z0-9]{36}|hf_[A-Za-z]{34}|glpat-[A-Za-z0-9_-]{20})",
        "eyJ[A-Za-z0-9]{17,30}\\.eyJ[A-Za-z0-9_-]{17,40}\\.[A-Za-z0-9_-]{10,40}",
        "(--password|--token) [A-Za-z0-9!@#%^*]{1,30}",
        "(SSHPASS|DB_PASS|AccountKey|MY_PRIVATE_KEY)=[A-Za-z0-9!@#%^*]{1,30}",
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
/// One realistic sample of each kind of secret, which must be redacted, and a near-miss
/// that must not be. The samples are made up, in the shapes of gitleaks' rules.
#[test]
fn corpus_of_token_kinds() {
    let corpus: &[(&str, &str, &str, &str)] = &[
        (
            "export ANTHROPIC=\"sk-ant-api03-AbeuEchsVEoR7TJYHSDATOCN1D61_k7U4O5Zi_czrwcK-tmoYgj7LZDwTkENNvOX8R4jI8so-XWbHlKif5hGu-9-fh8k7AA\"",
            "export ANTHROPIC=\"[REDACTED:api-key]\"",
            "the sk-ant-api03 prefix",
            "anthropic_api_key",
        ),
        (
            "key sk-proj-D5GkbhQW3ShM5Nd3XbSXasGF-QPFO_OaTCRhwnZQqQmOR69pYamt7uzPVZT3BlbkFJDo7uR60dIRqITxh7BmiG set",
            "key [REDACTED:api-key] set",
            "use sk-learn for that",
            "openai_project_key",
        ),
        (
            "aws id AKIANE4KOUKDX2O2KXJL.",
            "aws id [REDACTED:aws-key].",
            "AKIA4433K1E1R2PB2VZ is one short",
            "aws_access_key_id",
        ),
        (
            "sts ASIAKCA54BV45QY54ZHK",
            "sts [REDACTED:aws-key]",
            "ASIAN markets",
            "aws_temporary_key_id",
        ),
        (
            "push with ghp_Q9uC6EvTKDHfn2okWJGzQgSzRvu533Cql73r now",
            "push with [REDACTED:github-token] now",
            "ghp_short",
            "github_pat",
        ),
        (
            "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",
            "[REDACTED:github-token]",
            "github_pat_ is the prefix",
            "github_fine_grained_pat",
        ),
        (
            "oauth=gho_7xk4HPQn87J2IMXOYTvNhZMcqXdocw2zvHsL",
            "oauth=[REDACTED:github-token]",
            "gho_abc",
            "github_oauth",
        ),
        (
            "GL glpat-OPU1Wb8D1iv3rphlfX3T ok",
            "GL [REDACTED:gitlab-token] ok",
            "glpat-short",
            "gitlab_pat",
        ),
        (
            "runner glrt-tzSlrgSHg4dsa49CsvXE",
            "runner [REDACTED:gitlab-token]",
            "glrt-x",
            "gitlab_runner_token",
        ),
        (
            "trigger glptt-7daf135c9a384078e4c92c71fb556339b5749d4f",
            "trigger [REDACTED:gitlab-token]",
            "glptt-7041bd2fa5b1e1fa57cbecbc24873326c6a2db6z",
            "gitlab_pipeline_trigger",
        ),
        (
            "bot xoxb-063686090021-1752867801162-6ZY4biFstJtuxD13NGp8eYjt ok",
            "bot [REDACTED:slack-token] ok",
            "xoxo",
            "slack_bot_token",
        ),
        (
            "app xapp-1-AYV851R7LT2-4305636541031-b1979005441a6a28417053866d94740a140842a46b3c52157856a511d35cf2e7",
            "app [REDACTED:slack-token]",
            "xapp-1",
            "slack_app_token",
        ),
        (
            "POST https://hooks.slack.com/services/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",
            "POST https://[REDACTED:slack-webhook]",
            "https://hooks.slack.com/services/ is the endpoint",
            "slack_webhook",
        ),
        (
            "stripe sk_live_vexBADqM5jUPMDH7eibzxY27",
            "stripe [REDACTED:stripe-access-token]",
            "sk_live_ prefix",
            "stripe_live_secret",
        ),
        (
            "restricted rk_live_UZc4YC9oRqJOEQ6B0m73Duop;",
            "restricted [REDACTED:stripe-access-token];",
            "rk_live_short",
            "stripe_restricted",
        ),
        (
            "test sk_test_Z1fXjQVYnNuNvzclG7EgEXKu",
            "test [REDACTED:stripe-access-token]",
            "risk_test_PVT5lYDbP3aoirAp1MkQ2Jq8",
            "stripe_test_secret",
        ),
        (
            "maps key AIzajxq1sndWOEcb6gf36q_TJMIjjeGkEieIiaG here",
            "maps key [REDACTED:gcp-api-key] here",
            "AIza4xD9IvTlXrDCwGSZHmZ_NJiUHm33xAZuAq",
            "gcp_api_key",
        ),
        (
            "//registry/:_authToken npm_PsvB423tG8bYDz84orSbUDGNIRMa2aDRA7eF",
            "//registry/:_authToken [REDACTED:npm-access-token]",
            "npm_pXaldjCDn91hIMRxbWZEmZ1MMndwnWBmddV",
            "npm_token",
        ),
        (
            "upload pypi-AgEIcHlwaS5vcmcC2rqB3zJE4rkdXaeGLymk-Rr2Uep_XCx-6-kDs_5EzTrwPm__6DWY9m-LbWp",
            "upload [REDACTED:pypi-upload-token]",
            "pypi-AgEIcHlwaS5vcmc",
            "pypi_token",
        ),
        (
            "gem rubygems_aacc311098d56817fb2e904784b2a966c5e801728b3d19e5",
            "gem [REDACTED:rubygems-api-token]",
            "rubygems_867b3887acda2961a830a45b4408243a4d92fdf1148495e",
            "rubygems_token",
        ),
        (
            "deploy CLOJARS_4l5w67w1hn5ioj9mdh1iuvotjbmskniopf442cwjbrto9ucmv33iyrqbvejk",
            "deploy [REDACTED:clojars-api-token]",
            "CLOJARS_7ra2yeg5ffaupgrhqq9h17z8dkqc4lwwyr540g46n6hak49crmq4zrm0s4o",
            "clojars_token",
        ),
        (
            "HF 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",
            "HF [REDACTED:huggingface-access-token]",
            "hf_ZHmXuHfNlKxPxSTmrHhHBJLlLMRtaDNou1",
            "huggingface_token",
        ),
        (
            "org 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",
            "org [REDACTED:huggingface-access-token]",
            "api_org_UqmUkthEuBnFedkcpbcB",
            "huggingface_org_token",
        ),
        (
            "mail 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",
            "mail [REDACTED:sendgrid-api-token]",
            "SG.TZhaqY6NfIas72RRSRka6h",
            "sendgrid_key",
        ),
        (
            "twilio SK4d6ebfc90b1a0dcb2b033cb49109f652",
            "twilio [REDACTED:twilio-api-key]",
            "SKUc525873cb9d08cbe7369d0315368e4a",
            "twilio_api_key",
        ),
        (
            "shop 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",
            "shop [REDACTED:shopify-token]",
            "shpat_97af7e05c72a6554b7c34ddc2e835dc",
            "shopify_token",
        ),
        (
            "do dop_v1_c4a7bef58f579f40936c850c4d7397e7f354222854cd061fc8cd32c4b747f3d1",
            "do [REDACTED:digitalocean-token]",
            "dop_v1_dc75ef961acde0d79560c9deba208f1f0a6d00efabbf94fd14224aa65f8891c",
            "digitalocean_pat",
        ),
        (
            "doppler dp.pt.xjKUuvG0eca6r3nP8CZGW5aJFhqolgBu8mTsMq3ZhY2",
            "doppler [REDACTED:doppler-api-token]",
            "dp.pt.short",
            "doppler_token",
        ),
        (
            "pulumi pul-8a3ef4624ee4504af68d00c825f4124dc3ff8755",
            "pulumi [REDACTED:pulumi-api-token]",
            "pul-a4b75765b11acb30536e5d6aaee39db11f7664c",
            "pulumi_token",
        ),
        (
            "postman PMAK-c3c58668d356076d71b558c5-0a946818e9ca66a158b669ecbf48f911d9",
            "postman [REDACTED:postman-api-token]",
            "PMAK-e8c1e8503040a7b2a4fe1e9c",
            "postman_key",
        ),
        (
            "linear lin_api_NwSCyfufmWlOKEnhkGRiXmTjsKfkZFB4h9ALwkcE",
            "linear [REDACTED:linear-api-key]",
            "lin_api_4YmmkTt31qsU8oi3YCDpyLva2HSsaJJT6vq7dE3",
            "linear_key",
        ),
        (
            "dbx dapi6452ef6594d2c1e216923dc4da7b9e07",
            "dbx [REDACTED:databricks-api-token]",
            "dapi3587c327aa921adc5c9e08a9851c10c",
            "databricks_token",
        ),
        (
            "age AGE-SECRET-KEY-1M0DZ02DMP30JS53D3ZGMS755HFQTNZ43RTA60DZRLSEJYCEXQWLN25MKGA",
            "age [REDACTED:age-secret-key]",
            "AGE-SECRET-KEY-1",
            "age_secret_key",
        ),
        (
            "grafana glsa_ulZi9G6UzAhVNynqxEvEp5EkHRpYNnFA_b9c83913",
            "grafana [REDACTED:grafana-token]",
            "glsa_D1wxYXouDJ",
            "grafana_service_account",
        ),
        (
            "sentry 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",
            "sentry [REDACTED:sentry-token]",
            "sntryu_c977fab40629ab6d898cc88d6c2df5719ccd02adf0269d9d4cbd4743418c5db",
            "sentry_user_token",
        ),
        (
            "vault hvs.FtLxgy6awZdgs3YYWmrr1T_ZXgiPYLqdjFQVwDPNV5ZSWw6U1wLZdAVSy2BeYcyxes24suCytF-Qhi6ajFBVH7GkHhRz4be",
            "vault [REDACTED:vault-token]",
            "hvs._sWAB-18DTSpcBXOda7e",
            "vault_service_token",
        ),
        (
            "jira ATATT3X5INVWXC_LRpuALwim9olneWIBzRzGsrZHWDYlFtuLEBD47XWDW2M-EKnBlTbqbarNkzZJcro98ZAVuo55zm20TAskbiT6J9XOWnBEwtgYPYZz_UBBksrd53Ct3ehDexdYXx03FF7_TP1YnFNRb0NXfg-b9ueZ1W6sojjonkVREMC12cqZmrK3pwfN",
            "jira [REDACTED:atlassian-api-token]",
            "ATATT3hm3U9lTb2teKs61YI1mt",
            "atlassian_token",
        ),
        (
            "fly fo1_4nQQ-yOWDo_BDKmfHGZmHOwLdRO9Cr6bGbYpaTw6oIx",
            "fly [REDACTED:flyio-access-token]",
            "fo1_AqAJSz2L2CPJoDWBea5zpYIMK8W_ngDf3MZAOEd-kg",
            "flyio_token",
        ),
        (
            "heroku HRKU-AAlNTGx6livxTX5LP0qP5CRK_ZOgPTycucoY-0to1UWSuJbOYr6Ih9B9r7jP",
            "heroku [REDACTED:heroku-api-key]",
            "HRKU-AA97PRshLCXfNW-UgejQRsbv8zQSQRbJugPIMj1mV3MGbYPvEQNy4eNlSyX",
            "heroku_key",
        ),
        (
            "pscale pscale_tkn_klwR01HtAjxCzyq4f3koPMKvkQTI2vXwveNA6MMZQCD",
            "pscale [REDACTED:planetscale-token]",
            "pscale_tkn_TLaFptqw93oD5m8ESJP7WvzLP7_GkSn",
            "planetscale_token",
        ),
        (
            "prefect pnu_Q0PlWOvIBdAt5oiRY4UcpS31KfNr0u08WmI4",
            "prefect [REDACTED:prefect-api-token]",
            "pnu_S57F0CeOUF5zzjaqiwqqokWU6GShqX1VyNB",
            "prefect_token",
        ),
        (
            "readme rdme_uydq71h6e93x6kcplo3afm3s9919yvqgflrio6x2x37vcajxsyl3ukbxtwo4y4t4zguger",
            "readme [REDACTED:readme-api-token]",
            "rdme_ypk47z2uloqgqgjfwl23j21ymf4yvj17hhh0j6avh1e20gd6dirn09ar9pax41rn4ca4m",
            "readme_token",
        ),
        (
            "shippo shippo_live_3d3baa857a6eccaa5da267f0b8d708c9c5530a5d",
            "shippo [REDACTED:shippo-api-token]",
            "shippo_live_d475a1edfa993bce66a25619cd560d0d160ccf9",
            "shippo_token",
        ),
        (
            "dt dt0c01.OIOSJKCJBY0CLGBNHGRX9S3T.XcRBauYV91npwoBzoheVpRb92xuMpHLnpnOwcUHuzVlpcVAjcsVllaxcUcCrj7jI",
            "dt [REDACTED:dynatrace-api-token]",
            "dt0c01.PXQY9GPCCVWKKVYU8GU6Y7L6",
            "dynatrace_token",
        ),
        (
            "ep EZAKBde3TYqsEZoKhkF9Hlxm26lVR0fLsNQqSrJ6yYtJQUsqJMY4K7mMS1",
            "ep [REDACTED:easypost-api-token]",
            "EZAKguomMklyu5ETLACZUineXnASvkIHRgcDKd9qPiBmBeGPsdmimPcau",
            "easypost_key",
        ),
        (
            "duffel duffel_live__6OG-S_rxbJoiKjo706KTg0OtU9mgG-KIOZzLUJUNfL",
            "duffel [REDACTED:duffel-api-token]",
            "duffel_live_ZOWK8GDBFn-xCjhc5uyzfhkZ0PRBGJC6x_3jOiEA6w",
            "duffel_token",
        ),
        (
            "ali LTAIkZQ6xrnEGE48W7AHNGcW",
            "ali [REDACTED:alibaba-access-key-id]",
            "LTAInocm16rTRSnxzwRp7tP",
            "alibaba_key_id",
        ),
        (
            "nr NRAK-RB105ZEE81G0P27P6R0ESVKLG8Y",
            "nr [REDACTED:new-relic-key]",
            "NRAK-QGR3PPSI7CXS9RGG46LMHZPTNP",
            "new_relic_key",
        ),
        (
            "oc login --token sha256~hZtNbmGMMkxaxtWLbpATJdagRw6u5Od_OFsZksJUwdF",
            "oc login --token [REDACTED:openshift-user-token]",
            "sha256~smoqeD-MbLYzO0Tz3lTocbXXlOxn4QnyuPFIc_aK-D",
            "openshift_token",
        ),
        (
            "octo API-Z93WBQFII01ISCJGCU4XAJWMS2",
            "octo [REDACTED:octopus-deploy-api-key]",
            "API-A6U41DOFAN1WMIAGS9F2KNOH3",
            "octopus_key",
        ),
        (
            "ic ico-40g4jJE7YdWefk9gtAM4JUXyWMrCVlpP",
            "ic [REDACTED:infracost-api-token]",
            "ico-2RU08Mbq8j4qNx3aj2UkllR1pm8BlIx",
            "infracost_key",
        ),
        (
            "pplx 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",
            "pplx [REDACTED:perplexity-api-key]",
            "pplx-BTBuxEI4eVWsFj8ZxfqAgt74NnGGGEnIJFqoaASnwR7ixK5",
            "perplexity_key",
        ),
        (
            "sq sq0csp-bqhJe6jlagvXLqBdJIKPh72M68hkkI4THhURciyETJZ",
            "sq [REDACTED:square-token]",
            "sq0csp-67ypfqfjLwSnvyGUF-ws0voQSJduNjJno8fMHV4kz4",
            "square_secret",
        ),
        (
            "tf tfp_3Ckx4sQRm1c1K-_sRXjUUa_f-7o8duleGUtTHjICQD0oC5G-Q6Y-KpOtx3w",
            "tf [REDACTED:typeform-api-token]",
            "tfp_U5ACZrl-OzYpo3gBPMwcCD66cg41kjmyrrl3ZozI-TQOkLmF0Y6WO0iv0a",
            "typeform_token",
        ),
        (
            "fio fio-u-aSZPxRCp0Dflk6taP8if53o9jep6ZSgGWFqW31UfsEXZXIxdXYL1lrLKdYq00xaK",
            "fio [REDACTED:frameio-api-token]",
            "fio-u-DQJL720vvtFDZ7CfqqEjQVvY9cL8OQdORcstcFAKZe9PFhp6w_YMcNH0eNeRRwp",
            "frameio_token",
        ),
        (
            "session eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIn0.78i3YKMfO-2QEXbLAKV7m2sKtxxBwNi98OJpNVLnTGT expires",
            "session [REDACTED:jwt] expires",
            "eyJhbGciOiJIUzI1NiJ9 alone",
            "jwt",
        ),
    ];
    for &(sample, redacted, near_miss, name) in corpus {
        assert_eq!(check(sample, redacted), 1, "{name}");
        check(near_miss, near_miss);
    }
}

#[test]
fn credentials_in_urls() {
    check(
        "DATABASE_URL=postgres://app:s3cr3t-Pa55@db.internal:5432/prod",
        "DATABASE_URL=postgres://app:[REDACTED:url-password]@db.internal:5432/prod",
    );
    check(
        "mongo mongodb+srv://admin:hunter2@cluster0.example.net/test?retryWrites=true",
        "mongo mongodb+srv://admin:[REDACTED:url-password]@cluster0.example.net/test?retryWrites=true",
    );
    check(
        "clone https://oauth2:tok3n@gitlab.example.com/group/repo.git",
        "clone https://oauth2:[REDACTED:url-password]@gitlab.example.com/group/repo.git",
    );
    // A user without a password, an `@` in the path, and scp-like git addresses hold no secret.
    for near_miss in [
        "https://user@example.com/path",
        "https://example.com/users/a:b@c",
        "git@github.com:org/repo.git",
        "see http://localhost:8080/ and ://x:y@z",
    ] {
        check(near_miss, near_miss);
    }
}

#[test]
fn password_flags() {
    check(
        "mysql --user root --password hunter2 db",
        "mysql --user root --password [REDACTED:secret] db",
    );
    check(
        "vault login --token=s.abcdef \"--client-secret\" 'x'",
        "vault login --token=[REDACTED:secret] \"--client-secret\" 'x'",
    );
    check(
        "deploy --api-key   'two words' --verbose",
        "deploy --api-key   '[REDACTED:secret]' --verbose",
    );
    for near_miss in [
        "run --password --user bob",
        "use --password-file /run/secrets/db",
        "a --verbose flag and a password",
    ] {
        check(near_miss, near_miss);
    }
}

#[test]
fn assignments_by_the_name_of_their_key() {
    let cases = [
        (
            "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG",
            "AWS_SECRET_ACCESS_KEY",
        ),
        ("SECRET_KEY_BASE: abc123", "SECRET_KEY_BASE"),
        ("GPG_PRIVATE_KEY=\"lQdGBF4\"", "GPG_PRIVATE_KEY"),
        ("key_passphrase = correct-horse", "key_passphrase"),
        ("MYSQL_PWD=hunter2", "MYSQL_PWD"),
        ("DB_PASS=hunter2", "DB_PASS"),
        ("SMTP_CREDENTIALS: user:pw", "SMTP_CREDENTIALS"),
        ("SSHPASS=hunter2", "SSHPASS"),
        (
            "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=Zm9vYmFy+/==;EndpointSuffix=core",
            "AccountKey",
        ),
    ];
    for (input, key) in cases {
        let mut text = input.to_owned();
        assert_eq!(redact::text(&mut text), 1, "{input}");
        assert!(
            text.contains(key) && text.contains("[REDACTED:secret]"),
            "{text}"
        );
        check(input, &text);
    }
    for near_miss in [
        "PWD=/home/me/project",
        "OLDPWD=/tmp",
        "bypass=true, compass: north, passes=3",
        "AccountName=acct",
    ] {
        check(near_miss, near_miss);
    }
}

/// A value ends where the shell or the format ends it: a `;`, `&` or `,` inside it is part of
/// it, one before the next `key=`, a space, a quote or the end ends it.
#[test]
fn a_value_ends_where_its_format_ends_it() {
    let cases = [
        ("password=Tr0ub4dor&3xyz", "password=[REDACTED:secret]"),
        (
            "export DB_PASSWORD=a;b,c&d then",
            "export DB_PASSWORD=[REDACTED:secret] then",
        ),
        (
            "Server=x;uid=etl;pwd=S3cr3t&x;Encrypt=yes",
            "Server=x;uid=etl;pwd=[REDACTED:secret];Encrypt=yes",
        ),
        (
            "Server=x;Uid=etl;Pwd=S3cr3t;Encrypt=yes",
            "Server=x;Uid=etl;Pwd=[REDACTED:secret];Encrypt=yes",
        ),
        (
            "DRIVER={x};PWD=hunter2;UID=sa",
            "DRIVER={x};PWD=[REDACTED:secret];UID=sa",
        ),
        (
            "Host=db;Password=p@ss;w0rd,x;Database=app",
            "Host=db;Password=[REDACTED:secret];Database=app",
        ),
        (
            "url?access_token=abc&x=1&y=2",
            "url?access_token=[REDACTED:secret]&x=1&y=2",
        ),
        ("token=abc, then more", "token=[REDACTED:secret], then more"),
        (
            "password=x&& echo ok",
            "password=[REDACTED:secret]&& echo ok",
        ),
        ("password=x; echo ok", "password=[REDACTED:secret]; echo ok"),
        (
            r#"{"password":"a&b;c","user":"u"}"#,
            r#"{"password":"[REDACTED:secret]","user":"u"}"#,
        ),
        (
            "password='Tr0ub4dor&3 xyz' end",
            "password='[REDACTED:secret]' end",
        ),
        ("password=a&", "password=[REDACTED:secret]&"),
    ];
    for (input, expect) in cases {
        check(input, expect);
    }
    // The shell's directories stay, and so do plain words.
    for near_miss in ["PWD=/home/me", "OLDPWD=~/x", "cd $PWD; pwd", "pwd=$HOME"] {
        check(near_miss, near_miss);
    }
}

/// A token glued after letters, digits or `_` is found, for every distinctive prefix; a plain
/// word that ends like a short prefix is not.
#[test]
fn a_token_glued_after_letters_is_found() {
    let github = "ghp_1234567890abcdefghijABCDEFGHIJ123456";
    for glue in ["xxxx", "x", "1", "_", "abc_def"] {
        check(
            &format!("{glue}{github} rest"),
            &format!("{glue}[REDACTED:github-token] rest"),
        );
    }
    check("keyAKIAIOSFODNN7EXAMPLE.", "key[REDACTED:aws-key].");
    check("Xglpat-abcdefghij0123456789", "X[REDACTED:gitlab-token]");
    check("zzxoxb-1234567890-abcdefghij", "zz[REDACTED:slack-token]");
    for near_miss in [
        "task-implementation-of-the-login-flow",
        "the rapidapi0123456789abcdef0123456789abcdef key",
        "TASK0123456789abcdef0123456789abcdef",
        "graph_abcdefghijabcdefghijabcdefghijabcd",
        "risk_test_PVT5lYDbP3aoirAp1MkQ2Jq8",
    ] {
        check(near_miss, near_miss);
    }
}

/// Text that is shortened is redacted first: a secret straddling the cut leaves nothing of
/// itself, and the cut falls on a character boundary.
#[test]
fn shortened_text_is_redacted_before_the_cut() {
    let github = "ghp_1234567890abcdefghijABCDEFGHIJ123456";
    for before in 0..github.len() + 2 {
        // Multi-byte characters before the token put the cut inside and around it.
        let text = format!("{} {github} after", "é".repeat(before));
        for max in [before, before + 1, before + 5, before + 21, before + 40] {
            let short = shortened(&text, max);
            assert!(!short.contains("ghp_"), "{short}");
            assert!(!short.contains("1234567890"), "{short}");
            assert!(short.chars().count() <= max + 1, "{short}");
        }
    }
    assert_eq!(shortened("short", 10), "short");
    assert_eq!(shortened("ééé", 2), "éé…");
    assert_eq!(shortened("", 0), "");
}

/// A failure's text (a tool's error, an agent's) is kept redacted and cut at 500 characters,
/// the one bound every hook uses: 500 kept whole, 501 cut, a secret near the end gone.
#[test]
fn a_failure_text_is_redacted_and_cut_at_its_one_bound() {
    let exact = "e".repeat(500);
    assert_eq!(failure_text(&exact), exact);
    let over = "é".repeat(501);
    assert_eq!(failure_text(&over), format!("{}…", "é".repeat(500)));
    let secret = format!(
        "{} ghp_1234567890abcdefghijABCDEFGHIJ123456",
        "x".repeat(470)
    );
    let kept = failure_text(&secret);
    assert!(
        !kept.contains("ghp_") && !kept.contains("1234567890"),
        "{kept}"
    );
    assert!(kept.chars().count() <= 501, "{kept}");
}

proptest! {
    /// Separators, keys and glued tokens in any order: what is stored is a fixed point.
    #[test]
    fn redaction_is_a_fixed_point_around_separators_and_glued_tokens(
        text in "(password=|Pwd=|PWD=/|token=|sk_test_|ghp_[a-zA-Z0-9]{36}|AKIA[A-Z0-9]{16}|[a-zA-Z0-9=;&,' \"_/-]){0,16}",
    ) {
        let mut once = text.clone();
        redact::text(&mut once);
        let mut twice = once.clone();
        prop_assert_eq!(redact::text(&mut twice), 0, "{}", once);
        prop_assert_eq!(twice, once);
    }
}

#[test]
fn credentials_of_commands() {
    check(
        "curl -u ana:s3cret -X POST https://x",
        "curl -u ana:[REDACTED:password] -X POST https://x",
    );
    check(
        "curl -uana:s3cret https://x",
        "curl -uana:[REDACTED:password] https://x",
    );
    check(
        "curl --user 'ana:two words' https://x",
        "curl --user 'ana:[REDACTED:password]' https://x",
    );
    check(
        "curl --user=ana:pw https://x",
        "curl --user=ana:[REDACTED:password] https://x",
    );
    check(
        "curl --oauth2-bearer abc123 https://x",
        "curl --oauth2-bearer [REDACTED:bearer-token] https://x",
    );
    check(
        "curl -H 'Cookie: session=abc; theme=dark' https://x",
        "curl -H 'Cookie: [REDACTED:cookie]' https://x",
    );
    check(
        "Set-Cookie: id=a3fWa; Secure\nnext line",
        "Set-Cookie: [REDACTED:cookie]\nnext line",
    );
    check(
        "curl -b 'session=abc' --cookie sid=1 https://x",
        "curl -b '[REDACTED:cookie]' --cookie [REDACTED:cookie] https://x",
    );
    check(
        "curl 'https://x/api?key=AbC123&q=1' https://y/?sig=zz#top",
        "curl 'https://x/api?key=[REDACTED:secret]&q=1' https://y/?sig=[REDACTED:secret]#top",
    );
    check(
        "GET /a?api_key=k1&token=t2&signature=s3&X-Amz-Signature=s4",
        "GET /a?api_key=[REDACTED:secret]&token=[REDACTED:secret]&signature=[REDACTED:secret]&X-Amz-Signature=[REDACTED:secret]",
    );
    check(
        "psql --password=hunter2 && mysql --password hunter3",
        "psql --password=[REDACTED:secret] && mysql --password [REDACTED:secret]",
    );
    for near_miss in [
        "git push -u origin main",
        "sudo -u deploy make",
        "curl -b cookies.txt https://x",
        "the cookie jar is empty",
        "https://x/?q=key=1",
        "tar -b 20 -cf x",
    ] {
        check(near_miss, near_miss);
    }
}
