//! The token rules: secrets recognised by a fixed prefix and the shape of what follows it.
//!
//! Ported from gitleaks' rule set (`config/gitleaks.toml` of gitleaks v8, MIT licence), keeping
//! each rule's prefix, alphabet and length; the comment on each rule names the gitleaks rule id.
//! Two deliberate differences: an alphabet is sometimes a little wider than gitleaks' (AWS key ids
//! take any upper-case letter or digit, hex takes either case), because redacting a near-secret is
//! cheaper than storing a secret; and rules that gitleaks anchors on a keyword and an entropy
//! threshold (its `generic-api-key`) are covered instead by the assignment, flag and URL rules of
//! the parent module.

/// A token recognised by its prefix.
pub(super) struct Prefix {
    pub(super) prefix: &'static str,
    /// The characters the body after the prefix may use.
    pub(super) body: fn(u8) -> bool,
    /// The shortest body.
    pub(super) min_len: usize,
    /// The longest body: a longer run of body characters is not this token.
    pub(super) max_len: usize,
    pub(super) kind: &'static str,
}

impl Prefix {
    /// Whether the prefix is distinctive enough to be found glued after other word characters
    /// (`xxxxghp_…`): at least four characters, and not a plain word or syllable that ends
    /// ordinary words (`task-…`, `…SK<hex>`, `rapidapi…`).
    pub(super) fn may_be_glued(&self) -> bool {
        self.prefix.len() >= 4 && !NOT_GLUED.contains(&self.prefix)
    }
}

/// Prefixes of four characters or more that ordinary words end with (`risk_test_…`,
/// `work_live_…`, `rapidapi…`).
const NOT_GLUED: &[&str] = &[
    "sk_live_", "sk_test_", "sk_prod_", "rk_live_", "rk_test_", "rk_prod_", "API-", "dapi", "EAAA",
    "ico-", "pul-", "EZAK", "EZTK", "LTAI",
];

/// No upper bound on a body's length.
const ANY: usize = usize::MAX;

const fn rule(
    prefix: &'static str,
    body: fn(u8) -> bool,
    min_len: usize,
    max_len: usize,
    kind: &'static str,
) -> Prefix {
    Prefix {
        prefix,
        body,
        min_len,
        max_len,
        kind,
    }
}

/// Every token rule; where two prefixes share a start, the longer comes first.
pub(super) const PREFIXES: &[Prefix] = &[
    // anthropic-api-key, anthropic-admin-api-key, openai-api-key (and older `sk-` keys).
    rule("sk-", is_key_char, 20, ANY, "api-key"),
    // stripe-access-token: live, test and prod, secret (`sk_`) and restricted (`rk_`) keys.
    rule("sk_live_", is_alnum, 10, 99, "stripe-access-token"),
    rule("sk_test_", is_alnum, 10, 99, "stripe-access-token"),
    rule("sk_prod_", is_alnum, 10, 99, "stripe-access-token"),
    rule("rk_live_", is_alnum, 10, 99, "stripe-access-token"),
    rule("rk_test_", is_alnum, 10, 99, "stripe-access-token"),
    rule("rk_prod_", is_alnum, 10, 99, "stripe-access-token"),
    // aws-access-token.
    rule("AKIA", is_upper_alnum, 16, 16, "aws-key"),
    rule("ASIA", is_upper_alnum, 16, 16, "aws-key"),
    rule("ABIA", is_upper_alnum, 16, 16, "aws-key"),
    rule("ACCA", is_upper_alnum, 16, 16, "aws-key"),
    rule("A3T", is_upper_alnum, 17, 17, "aws-key"),
    // github-pat, github-oauth, github-app-token, github-refresh-token, github-fine-grained-pat.
    rule("ghp_", is_alnum, 30, ANY, "github-token"),
    rule("gho_", is_alnum, 30, ANY, "github-token"),
    rule("ghu_", is_alnum, 30, ANY, "github-token"),
    rule("ghs_", is_alnum, 30, ANY, "github-token"),
    rule("ghr_", is_alnum, 30, ANY, "github-token"),
    rule("github_pat_", is_word_char, 20, ANY, "github-token"),
    // gitlab-pat (and its routable form), gitlab-ptt, gitlab-rrt, gitlab-deploy-token,
    // gitlab-runner-authentication-token, gitlab-feed-token, gitlab-oauth-app-secret,
    // gitlab-cicd-job-token, gitlab-incoming-mail-token, gitlab-kubernetes-agent-token.
    rule("glpat-", is_gitlab_char, 20, ANY, "gitlab-token"),
    rule("glptt-", is_hex, 40, 40, "gitlab-token"),
    rule("GR1348941", is_key_char, 20, 20, "gitlab-token"),
    rule("gldt-", is_key_char, 20, ANY, "gitlab-token"),
    rule("glrt-", is_key_char, 20, ANY, "gitlab-token"),
    rule("glft-", is_key_char, 20, ANY, "gitlab-token"),
    rule("gloas-", is_key_char, 64, ANY, "gitlab-token"),
    rule("glcbt-", is_key_char, 20, ANY, "gitlab-token"),
    rule("glimt-", is_key_char, 25, ANY, "gitlab-token"),
    rule("glagent-", is_key_char, 50, ANY, "gitlab-token"),
    // slack-bot-token, slack-user-token, slack-legacy-*, slack-app-token, slack-config-*-token.
    rule("xoxa-", is_slack_char, 10, ANY, "slack-token"),
    rule("xoxb-", is_slack_char, 10, ANY, "slack-token"),
    rule("xoxp-", is_slack_char, 10, ANY, "slack-token"),
    rule("xoxo-", is_slack_char, 10, ANY, "slack-token"),
    rule("xoxr-", is_slack_char, 10, ANY, "slack-token"),
    rule("xoxs-", is_slack_char, 10, ANY, "slack-token"),
    rule("xoxe-", is_slack_char, 10, ANY, "slack-token"),
    rule("xoxe.xox", is_slack_char, 10, ANY, "slack-token"),
    rule("xapp-", is_slack_char, 10, ANY, "slack-token"),
    // slack-webhook-url.
    rule(
        "hooks.slack.com/services/",
        is_base64_char,
        43,
        56,
        "slack-webhook",
    ),
    rule(
        "hooks.slack.com/workflows/",
        is_base64_char,
        43,
        56,
        "slack-webhook",
    ),
    rule(
        "hooks.slack.com/triggers/",
        is_base64_char,
        43,
        56,
        "slack-webhook",
    ),
    // gcp-api-key.
    rule("AIza", is_key_char, 35, 35, "gcp-api-key"),
    // npm-access-token.
    rule("npm_", is_alnum, 36, 36, "npm-access-token"),
    // pypi-upload-token.
    rule(
        "pypi-AgEIcHlwaS5vcmc",
        is_key_char,
        50,
        ANY,
        "pypi-upload-token",
    ),
    // rubygems-api-token.
    rule("rubygems_", is_hex, 48, 48, "rubygems-api-token"),
    // clojars-api-token.
    rule("CLOJARS_", is_alnum, 60, 60, "clojars-api-token"),
    // huggingface-access-token, huggingface-organization-api-token.
    rule("hf_", is_alpha, 34, 34, "huggingface-access-token"),
    rule("api_org_", is_alpha, 34, 34, "huggingface-access-token"),
    // sendgrid-api-token.
    rule("SG.", is_sendgrid_char, 66, 66, "sendgrid-api-token"),
    // twilio-api-key.
    rule("SK", is_hex, 32, 32, "twilio-api-key"),
    // shopify-access-token, shopify-custom-access-token, shopify-private-app-access-token,
    // shopify-shared-secret.
    rule("shpat_", is_hex, 32, 32, "shopify-token"),
    rule("shpca_", is_hex, 32, 32, "shopify-token"),
    rule("shppa_", is_hex, 32, 32, "shopify-token"),
    rule("shpss_", is_hex, 32, 32, "shopify-token"),
    // digitalocean-pat, digitalocean-access-token, digitalocean-refresh-token.
    rule("dop_v1_", is_hex, 64, 64, "digitalocean-token"),
    rule("doo_v1_", is_hex, 64, 64, "digitalocean-token"),
    rule("dor_v1_", is_hex, 64, 64, "digitalocean-token"),
    // doppler-api-token.
    rule("dp.pt.", is_alnum, 43, 43, "doppler-api-token"),
    // pulumi-api-token.
    rule("pul-", is_hex, 40, 40, "pulumi-api-token"),
    // postman-api-token: `PMAK-<24 hex>-<34 hex>`.
    rule("PMAK-", is_hex_or_dash, 59, 59, "postman-api-token"),
    // linear-api-key.
    rule("lin_api_", is_alnum, 40, 40, "linear-api-key"),
    // databricks-api-token.
    rule("dapi", is_hex, 32, 32, "databricks-api-token"),
    // age-secret-key.
    rule("AGE-SECRET-KEY-1", is_upper_alnum, 58, 58, "age-secret-key"),
    // grafana-cloud-api-token, grafana-service-account-token.
    rule("glc_", is_base64_char, 32, 400, "grafana-token"),
    rule("glsa_", is_word_char, 41, 41, "grafana-token"),
    // sentry-org-token, sentry-user-token.
    rule("sntrys_eyJ", is_base64_char, 100, ANY, "sentry-token"),
    rule("sntryu_", is_hex, 64, 64, "sentry-token"),
    // vault-service-token, vault-batch-token.
    rule("hvs.", is_key_char, 90, ANY, "vault-token"),
    rule("hvb.", is_key_char, 138, ANY, "vault-token"),
    // atlassian-api-token.
    rule("ATATT3", is_atlassian_char, 186, 186, "atlassian-api-token"),
    // flyio-access-token.
    rule("fo1_", is_key_char, 43, 43, "flyio-access-token"),
    rule("fm1a_", is_base64_char, 100, ANY, "flyio-access-token"),
    rule("fm1r_", is_base64_char, 100, ANY, "flyio-access-token"),
    rule("fm2_", is_base64_char, 100, ANY, "flyio-access-token"),
    // heroku-api-key-v2.
    rule("HRKU-AA", is_key_char, 58, 58, "heroku-api-key"),
    // planetscale-api-token, planetscale-password, planetscale-oauth-token.
    rule(
        "pscale_tkn_",
        is_planetscale_char,
        32,
        64,
        "planetscale-token",
    ),
    rule(
        "pscale_pw_",
        is_planetscale_char,
        32,
        64,
        "planetscale-token",
    ),
    rule(
        "pscale_oauth_",
        is_planetscale_char,
        32,
        64,
        "planetscale-token",
    ),
    // prefect-api-token.
    rule("pnu_", is_alnum, 36, 36, "prefect-api-token"),
    // readme-api-token.
    rule("rdme_", is_alnum, 70, 70, "readme-api-token"),
    // shippo-api-token.
    rule("shippo_live_", is_hex, 40, 40, "shippo-api-token"),
    rule("shippo_test_", is_hex, 40, 40, "shippo-api-token"),
    // dynatrace-api-token: `dt0c01.<24>.<64>`.
    rule("dt0c01.", is_alnum_or_dot, 89, 89, "dynatrace-api-token"),
    // easypost-api-token, easypost-test-api-token.
    rule("EZAK", is_alnum, 54, 54, "easypost-api-token"),
    rule("EZTK", is_alnum, 54, 54, "easypost-api-token"),
    // duffel-api-token.
    rule("duffel_live_", is_duffel_char, 43, 43, "duffel-api-token"),
    rule("duffel_test_", is_duffel_char, 43, 43, "duffel-api-token"),
    // alibaba-access-key-id.
    rule("LTAI", is_alnum, 20, 20, "alibaba-access-key-id"),
    // new-relic-user-api-key, new-relic-browser-api-token, new-relic-insert-key.
    rule("NRAK-", is_alnum, 27, 27, "new-relic-key"),
    rule("NRJS-", is_hex, 19, 19, "new-relic-key"),
    rule("NRII-", is_key_char, 32, 32, "new-relic-key"),
    // openshift-user-token.
    rule("sha256~", is_key_char, 43, 43, "openshift-user-token"),
    // octopus-deploy-api-key.
    rule("API-", is_upper_alnum, 26, 26, "octopus-deploy-api-key"),
    // infracost-api-token.
    rule("ico-", is_alnum, 32, 32, "infracost-api-token"),
    // perplexity-api-key.
    rule("pplx-", is_alnum, 48, 48, "perplexity-api-key"),
    // square-access-token, square-secret.
    rule("EAAA", is_key_char, 22, 60, "square-token"),
    rule("sq0atp-", is_key_char, 22, 60, "square-token"),
    rule("sq0csp-", is_key_char, 43, 43, "square-token"),
    // typeform-api-token.
    rule("tfp_", is_typeform_char, 59, 59, "typeform-api-token"),
    // frameio-api-token.
    rule("fio-u-", is_typeform_char, 64, 64, "frameio-api-token"),
    // 1password-secret-key is anchored on `A3-`; its service account tokens on `ops_eyJ`.
    rule("ops_eyJ", is_base64_char, 250, ANY, "1password-token"),
];

/// The rules whose prefix starts with `b`, in the order of [`PREFIXES`]: the only ones that can
/// match where `b` is, so that a position costs a few rules, not a hundred (which a debug build
/// made microseconds a byte).
pub(super) fn starting_with(b: u8) -> impl Iterator<Item = &'static Prefix> {
    let mut rules = BY_FIRST_BYTE[usize::from(b)];
    std::iter::from_fn(move || {
        if rules == 0 {
            return None;
        }
        let index = rules.trailing_zeros() as usize;
        rules &= rules - 1;
        Some(&PREFIXES[index])
    })
}

/// For each byte, the rules whose prefix starts with it: bit `i` for `PREFIXES[i]`.
const BY_FIRST_BYTE: [u128; 256] = {
    assert!(PREFIXES.len() <= 128, "one bit a rule");
    let mut table = [0; 256];
    let mut i = 0;
    while i < PREFIXES.len() {
        table[PREFIXES[i].prefix.as_bytes()[0] as usize] |= 1 << i;
        i += 1;
    }
    table
};

pub(super) fn is_word_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

pub(super) fn is_key_char(b: u8) -> bool {
    is_word_char(b) || b == b'-'
}

fn is_alnum(b: u8) -> bool {
    b.is_ascii_alphanumeric()
}

fn is_alpha(b: u8) -> bool {
    b.is_ascii_alphabetic()
}

fn is_upper_alnum(b: u8) -> bool {
    b.is_ascii_uppercase() || b.is_ascii_digit()
}

fn is_hex(b: u8) -> bool {
    b.is_ascii_hexdigit()
}

fn is_hex_or_dash(b: u8) -> bool {
    is_hex(b) || b == b'-'
}

fn is_alnum_or_dot(b: u8) -> bool {
    is_alnum(b) || b == b'.'
}

fn is_slack_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'-'
}

fn is_gitlab_char(b: u8) -> bool {
    is_key_char(b) || b == b'.'
}

fn is_base64_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"+/=".contains(&b)
}

fn is_sendgrid_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"=_-.".contains(&b)
}

fn is_atlassian_char(b: u8) -> bool {
    is_key_char(b) || b == b'='
}

fn is_planetscale_char(b: u8) -> bool {
    is_key_char(b) || b"=.".contains(&b)
}

fn is_duffel_char(b: u8) -> bool {
    is_key_char(b) || b == b'='
}

fn is_typeform_char(b: u8) -> bool {
    is_key_char(b) || b"=.".contains(&b)
}
