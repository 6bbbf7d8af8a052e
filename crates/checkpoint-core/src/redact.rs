//! Redaction: well-known secret patterns are replaced by a marker in every free-text field of a
//! transition before it is journaled, so that a token pasted into a note never reaches the disk.
//!
//! The patterns are matched by hand (no regex engine): API keys `sk-…` (Anthropic, OpenAI), AWS
//! access key ids `AKIA…`/`ASIA…`, GitHub tokens `ghp_…` (and `gho_`, `ghu_`, `ghs_`, `ghr_`) and
//! `github_pat_…`, Slack tokens `xox?-…`, `Bearer <token>`, `-----BEGIN … PRIVATE KEY-----` blocks,
//! and the values of assignments whose key ends in `password`, `passwd`, `secret`, `token`,
//! `api_key`, `apikey` or `access_key` (`password=…`, `GITHUB_TOKEN: …`, `"secret": "…"`).
//! Redacting twice changes nothing more.

use crate::{
    model::{Phase, Task, Workflow},
    transition::Transition,
};

/// Replaces the secrets in `text` with `[REDACTED:<kind>]` markers; returns how many it replaced.
pub fn text(text: &mut String) -> usize {
    let spans = find(text);
    if spans.is_empty() {
        return 0;
    }
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for span in &spans {
        debug_assert!(
            span.start >= last,
            "`find` returns spans that do not overlap"
        );
        out.push_str(&text[last..span.start]);
        out.push_str("[REDACTED:");
        out.push_str(span.kind);
        out.push(']');
        last = span.end;
    }
    out.push_str(&text[last..]);
    *text = out;
    spans.len()
}

/// Redacts every free-text field of a transition (for `init` and `snapshot`, of the whole
/// workflow); returns how many secrets it replaced.
pub fn transition(transition: &mut Transition) -> usize {
    let mut n = 0;
    let mut field = |value: &mut String| n += text(value);
    // Fields are named exhaustively (no `..`), so a new field must be considered here.
    match transition {
        Transition::Init { workflow } => return self::workflow(workflow),
        Transition::SyncResolve {
            keep: _,
            diverged_at: _,
            fork: _,
            base,
        } => return base.as_deref_mut().map_or(0, workflow),
        Transition::Snapshot { workflow, reason } => {
            field(reason);
            return n + self::workflow(workflow);
        }
        Transition::PhaseStart { phase: _, force: _ }
        | Transition::TaskStart { phase: _, task: _ }
        | Transition::Unpause => {}
        Transition::PhaseProgress { phase: _, note } => field(note),
        Transition::PhaseComplete {
            phase: _,
            artifacts,
            commit_sha,
            force: _,
        } => {
            artifacts.iter_mut().for_each(&mut field);
            commit_sha.iter_mut().for_each(field);
        }
        Transition::PhaseFail { phase: _, reason }
        | Transition::PhaseReset { phase: _, reason }
        | Transition::PhaseReject { phase: _, reason }
        | Transition::Replan { phase: _, reason }
        | Transition::TaskFail {
            phase: _,
            task: _,
            reason,
        }
        | Transition::TaskReset {
            phase: _,
            task: _,
            reason,
        }
        | Transition::Pause { reason, until: _ } => field(reason),
        Transition::PhaseSkip { phase: _, reason } | Transition::Abandon { reason } => {
            reason.iter_mut().for_each(field);
        }
        Transition::PhaseApprove { phase: _, by, note } => {
            by.iter_mut().chain(note.iter_mut()).for_each(field);
        }
        Transition::PhaseCommit { phase: _, sha } => field(sha),
        Transition::TaskAdd {
            phase: _,
            task: _,
            title,
            output,
        } => title.iter_mut().chain(output.iter_mut()).for_each(field),
        Transition::TaskDone {
            phase: _,
            task: _,
            output,
        } => output.iter_mut().for_each(field),
        Transition::Note { text: note } | Transition::Decide { text: note } => field(note),
        Transition::FilePath { path } => field(path),
        Transition::ToolFailure {
            phase: _,
            tool,
            error,
        } => {
            field(tool);
            field(error);
        }
        Transition::Heartbeat { source, session_id }
        | Transition::Compaction {
            trigger: source,
            session_id,
        } => {
            field(source);
            session_id.iter_mut().for_each(field);
        }
        Transition::RunStart { pid: _, client } => field(client),
        Transition::RunSessionStart {
            number: _,
            phase: _,
            resumed,
        } => resumed.iter_mut().for_each(field),
        Transition::RunSessionEnd {
            number: _,
            session_id,
            exit: _,
            outcome,
            transitions: _,
        } => {
            field(outcome);
            session_id.iter_mut().for_each(field);
        }
        Transition::RunWait { until: _, reason } | Transition::RunStop { reason, exit: _ } => {
            field(reason);
        }
    }
    n
}

/// Redacts every free-text field of a workflow; returns how many secrets it replaced.
pub fn workflow(workflow: &mut Workflow) -> usize {
    let mut n = 0;
    let Workflow {
        schema_version: _,
        id: _,
        title,
        description,
        kind,
        status: _,
        created_at: _,
        updated_at: _,
        seq: _,
        git,
        context,
        phases,
        pause,
        last_activity,
        replans,
        extensions,
    } = workflow;
    let mut field = |value: &mut String| n += text(value);
    title
        .iter_mut()
        .chain(description.iter_mut())
        .chain(kind.iter_mut())
        .for_each(&mut field);
    if let Some(git) = git {
        git.branch
            .iter_mut()
            .chain(git.worktree.iter_mut())
            .chain(git.head.iter_mut())
            .for_each(&mut field);
    }
    context.file_paths.iter_mut().for_each(&mut field);
    for note in &mut context.notes {
        field(&mut note.text);
    }
    for decision in &mut context.key_decisions {
        field(&mut decision.text);
    }
    for phase in phases {
        self::phase(phase, &mut field);
    }
    if let Some(pause) = pause {
        field(&mut pause.reason);
    }
    if let Some(activity) = last_activity {
        field(&mut activity.source);
        activity.session_id.iter_mut().for_each(&mut field);
    }
    for replan in replans {
        field(&mut replan.reason);
    }
    for value in extensions.values_mut() {
        json(value, &mut field);
    }
    n
}

fn phase(phase: &mut Phase, field: &mut impl FnMut(&mut String)) {
    let Phase {
        id: _,
        name,
        description,
        dependencies: _,
        status: _,
        started_at: _,
        completed_at: _,
        attempts: _,
        failures: _,
        progress,
        progress_at: _,
        outputs,
        artifacts,
        commit_sha,
        error,
        replan_count: _,
        requires_approval: _,
        approval,
        on_failure: _,
        max_attempts: _,
        tasks,
    } = phase;
    field(name);
    description
        .iter_mut()
        .chain(progress.iter_mut())
        .chain(commit_sha.iter_mut())
        .chain(error.iter_mut())
        .chain(outputs.iter_mut())
        .for_each(&mut *field);
    for artifact in artifacts {
        field(&mut artifact.path);
    }
    if let Some(approval) = approval {
        approval
            .by
            .iter_mut()
            .chain(approval.note.iter_mut())
            .for_each(&mut *field);
    }
    for Task {
        id: _,
        title,
        status: _,
        attempts: _,
        started_at: _,
        completed_at: _,
        output,
        error,
    } in tasks
    {
        title
            .iter_mut()
            .chain(output.iter_mut())
            .chain(error.iter_mut())
            .for_each(&mut *field);
    }
}

fn json(value: &mut serde_json::Value, field: &mut impl FnMut(&mut String)) {
    match value {
        serde_json::Value::String(string) => field(string),
        serde_json::Value::Array(items) => items.iter_mut().for_each(|item| json(item, field)),
        serde_json::Value::Object(map) => map.values_mut().for_each(|item| json(item, field)),
        _ => {}
    }
}

/// A secret found in a text: its byte range and what it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Span {
    start: usize,
    end: usize,
    kind: &'static str,
}

/// A token recognised by its prefix.
struct Prefix {
    prefix: &'static str,
    /// The characters the body after the prefix may use.
    body: fn(u8) -> bool,
    /// The shortest body (for AWS key ids, the only length).
    min_len: usize,
    kind: &'static str,
}

/// Token prefixes.
const PREFIXES: &[Prefix] = &[
    Prefix {
        prefix: "sk-",
        body: is_key_char,
        min_len: 20,
        kind: "api-key",
    },
    Prefix {
        prefix: "AKIA",
        body: is_upper_alnum,
        min_len: 16,
        kind: "aws-key",
    },
    Prefix {
        prefix: "ASIA",
        body: is_upper_alnum,
        min_len: 16,
        kind: "aws-key",
    },
    Prefix {
        prefix: "ghp_",
        body: is_alnum,
        min_len: 30,
        kind: "github-token",
    },
    Prefix {
        prefix: "gho_",
        body: is_alnum,
        min_len: 30,
        kind: "github-token",
    },
    Prefix {
        prefix: "ghu_",
        body: is_alnum,
        min_len: 30,
        kind: "github-token",
    },
    Prefix {
        prefix: "ghs_",
        body: is_alnum,
        min_len: 30,
        kind: "github-token",
    },
    Prefix {
        prefix: "ghr_",
        body: is_alnum,
        min_len: 30,
        kind: "github-token",
    },
    Prefix {
        prefix: "github_pat_",
        body: is_word_char,
        min_len: 20,
        kind: "github-token",
    },
    Prefix {
        prefix: "xoxa-",
        body: is_slack_char,
        min_len: 10,
        kind: "slack-token",
    },
    Prefix {
        prefix: "xoxb-",
        body: is_slack_char,
        min_len: 10,
        kind: "slack-token",
    },
    Prefix {
        prefix: "xoxp-",
        body: is_slack_char,
        min_len: 10,
        kind: "slack-token",
    },
    Prefix {
        prefix: "xoxo-",
        body: is_slack_char,
        min_len: 10,
        kind: "slack-token",
    },
    Prefix {
        prefix: "xoxr-",
        body: is_slack_char,
        min_len: 10,
        kind: "slack-token",
    },
    Prefix {
        prefix: "xoxs-",
        body: is_slack_char,
        min_len: 10,
        kind: "slack-token",
    },
];

/// Key suffixes that make an assignment's value a secret, lowercase.
const SECRET_KEYS: &[&str] = &[
    "password",
    "passwd",
    "secret",
    "token",
    "api_key",
    "api-key",
    "apikey",
    "access_key",
];

/// The longest key of an assignment that is read; longer ones are not recognised.
const MAX_KEY_LEN: usize = 128;

const MARKER_PREFIX: &str = "[REDACTED:";

/// Finds the secrets in `text`: sorted, not overlapping.
///
/// The scan is linear: every position is tried once, and a key is read at most
/// [`MAX_KEY_LEN`] bytes ahead.
fn find(text: &str) -> Vec<Span> {
    let bytes = text.as_bytes();
    let mut spans = Vec::new();
    private_keys(text, &mut spans);
    // Where a secret ends, its marker will end in `]`, a boundary: treating that position as
    // one already is what makes a second redaction find nothing more.
    let block_ends: Vec<usize> = spans.iter().map(|span| span.end).collect();
    let mut last_end = 0;
    let mut i = 0;
    while i < bytes.len() {
        let at_boundary = i == 0
            || !is_word_char(bytes[i - 1]) && bytes[i - 1] != b'-'
            || i == last_end
            || block_ends.binary_search(&i).is_ok();
        let found = if at_boundary {
            prefixed_token(bytes, i)
                .or_else(|| bearer(bytes, i, MIN_BEARER_LEN))
                .or_else(|| assignment(bytes, i))
        } else {
            None
        };
        match found.and_then(|span| clip(&spans, span)) {
            Some(span) => {
                i = span.end;
                last_end = span.end;
                spans.push(span);
            }
            None => i += 1,
        }
    }
    spans.sort_by_key(|span| span.start);
    spans
}

/// Cuts `span` short of the first private key block it runs into (so that the marker of the block
/// stays whole, and a second redaction finds nothing); `None` when nothing is left.
fn clip(spans: &[Span], mut span: Span) -> Option<Span> {
    for other in spans {
        if other.start < span.end && span.start < other.end {
            span.end = other.start;
        }
    }
    (span.start < span.end).then_some(span)
}

/// `-----BEGIN <anything> PRIVATE KEY-----` through the matching `END` line (or the end of text).
fn private_keys(text: &str, spans: &mut Vec<Span>) {
    const BEGIN: &str = "-----BEGIN ";
    const TAIL: &str = "PRIVATE KEY-----";
    let mut from = 0;
    while let Some(offset) = text[from..].find(BEGIN) {
        let start = from + offset;
        let line_end = text[start..].find('\n').map_or(text.len(), |n| start + n);
        let Some(tail) = text[start..line_end].find(TAIL) else {
            from = start + BEGIN.len();
            continue;
        };
        let after_begin = start + tail + TAIL.len();
        let end = match text[after_begin..].find("-----END ") {
            Some(offset) => {
                let end_start = after_begin + offset;
                match text[end_start..].find(TAIL) {
                    Some(tail) => end_start + tail + TAIL.len(),
                    None => text.len(),
                }
            }
            None => text.len(),
        };
        spans.push(Span {
            start,
            end,
            kind: "private-key",
        });
        from = end;
    }
}

fn prefixed_token(bytes: &[u8], at: usize) -> Option<Span> {
    for &Prefix {
        prefix,
        body: body_char,
        min_len,
        kind,
    } in PREFIXES
    {
        if !bytes[at..].starts_with(prefix.as_bytes()) {
            continue;
        }
        let body = at + prefix.len();
        let len = bytes[body..].iter().take_while(|&&b| body_char(b)).count();
        let end = body + len;
        // AWS key ids are exactly 16 characters; the others have at least `min_len`.
        let fits = if kind == "aws-key" {
            len == min_len
        } else {
            len >= min_len
        };
        if fits && !bytes.get(end).copied().is_some_and(is_word_char) {
            return Some(Span {
                start: at,
                end,
                kind,
            });
        }
    }
    None
}

/// The shortest token after a free-standing `Bearer` that is redacted (`the bearer of` is not).
const MIN_BEARER_LEN: usize = 8;

/// `Bearer <token>` (any case) with a token of at least `min_len` characters: the token is
/// redacted, the word kept.
fn bearer(bytes: &[u8], at: usize, min_len: usize) -> Option<Span> {
    const WORD: &[u8] = b"bearer";
    if bytes.len() < at + WORD.len() || !bytes[at..at + WORD.len()].eq_ignore_ascii_case(WORD) {
        return None;
    }
    let spaces = bytes[at + WORD.len()..]
        .iter()
        .take_while(|&&b| b == b' ' || b == b'\t')
        .count();
    if spaces == 0 {
        return None;
    }
    let start = at + WORD.len() + spaces;
    let len = bytes[start..]
        .iter()
        .take_while(|&&b| b.is_ascii_alphanumeric() || b"-._~+/=".contains(&b))
        .count();
    (len >= min_len && !bytes[start..].starts_with(MARKER_PREFIX.as_bytes())).then_some(Span {
        start,
        end: start + len,
        kind: "bearer-token",
    })
}

/// The value of an assignment `key=value`, `key: value` or `"key": "value"` whose key ends in a
/// secret name; a token of a known kind in the value keeps its kind.
fn assignment(bytes: &[u8], at: usize) -> Option<Span> {
    let key_len = bytes[at..]
        .iter()
        .take(MAX_KEY_LEN)
        .take_while(|&&b| is_word_char(b) || b == b'-')
        .count();
    let key = &bytes[at..at + key_len];
    let secret_key = SECRET_KEYS.iter().any(|suffix| {
        key.len() >= suffix.len()
            && key[key.len() - suffix.len()..].eq_ignore_ascii_case(suffix.as_bytes())
    });
    if !secret_key {
        return None;
    }
    let mut i = at + key_len;
    if matches!(bytes.get(i), Some(b'"' | b'\'')) {
        i += 1;
    }
    i += count_spaces(&bytes[i..]);
    if !matches!(bytes.get(i), Some(b'=' | b':')) {
        return None;
    }
    i += 1;
    i += count_spaces(&bytes[i..]);
    let (start, len) = match bytes.get(i) {
        Some(&quote @ (b'"' | b'\'')) => {
            // A quoted value ends at its line's end at the latest: a span across lines would
            // join them, and could make a private key header for a second pass to find.
            let start = i + 1;
            let len = bytes[start..]
                .iter()
                .take_while(|&&b| b != quote && b != b'\n')
                .count();
            (start, len)
        }
        _ => {
            let len = bytes[i..]
                .iter()
                .take_while(|&&b| !b.is_ascii_whitespace() && !b",;&\"'".contains(&b))
                .count();
            (i, len)
        }
    };
    if len == 0 || bytes[start..].starts_with(MARKER_PREFIX.as_bytes()) {
        return None;
    }
    if is_bearer(&bytes[start..]) {
        // `token: Bearer <token>`: the token is the secret, whatever its length.
        return bearer(bytes, start, 1);
    }
    prefixed_token(bytes, start).or(Some(Span {
        start,
        end: start + len,
        kind: "secret",
    }))
}

/// Whether `bytes` starts with the word `bearer` (any case) and a space.
fn is_bearer(bytes: &[u8]) -> bool {
    bytes.len() > 6
        && bytes[..6].eq_ignore_ascii_case(b"bearer")
        && matches!(bytes[6], b' ' | b'\t')
}

fn count_spaces(bytes: &[u8]) -> usize {
    bytes
        .iter()
        .take_while(|&&b| b == b' ' || b == b'\t')
        .count()
}

fn is_word_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

fn is_alnum(b: u8) -> bool {
    b.is_ascii_alphanumeric()
}

fn is_upper_alnum(b: u8) -> bool {
    b.is_ascii_uppercase() || b.is_ascii_digit()
}

fn is_key_char(b: u8) -> bool {
    is_word_char(b) || b == b'-'
}

fn is_slack_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'-'
}

#[cfg(test)]
mod tests;
