//! Finding secrets in a text: the token rules of `rules.rs`, JSON Web Tokens, `Bearer`
//! tokens, private key blocks, passwords in URLs, and the values of assignments whose key names
//! a secret; one linear scan.

use crate::redact::rules::{self, is_key_char, is_word_char};

/// A secret found in a text: its byte range and what it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Span {
    pub(super) start: usize,
    pub(super) end: usize,
    pub(super) kind: &'static str,
}

/// Key suffixes that make an assignment's value a secret, lowercase.
const SECRET_KEY_SUFFIXES: &[&str] = &[
    "password",
    "passwd",
    "secret",
    "token",
    "api_key",
    "api-key",
    "apikey",
    "access_key",
];

/// Words that make an assignment's value a secret wherever they appear in its key, lowercase.
const SECRET_KEY_WORDS: &[&str] = &[
    "secret",
    "private_key",
    "private-key",
    "privatekey",
    "passphrase",
    "credentials",
    "sshpass",
    "accountkey",
];

/// Parts of a key (between `_`, `-` and `.`) that make its value a secret, lowercase.
const SECRET_KEY_PARTS: &[&str] = &["pass", "pwd"];

/// Keys that hold no secret when their value is a path, though a part of them says so: the
/// shell's working directories.
const NOT_SECRET_KEYS: &[&str] = &["pwd", "oldpwd"];

/// The longest key of an assignment that is read; longer ones are not recognised.
const MAX_KEY_LEN: usize = 128;

const MARKER_PREFIX: &str = "[REDACTED:";

/// Finds the secrets in `text`: sorted, not overlapping.
///
/// The scan is linear: every position is tried once, and a key is read at most
/// [`MAX_KEY_LEN`] bytes ahead.
pub(super) fn find(text: &str) -> Vec<Span> {
    let bytes = text.as_bytes();
    let mut blocks = Vec::new();
    private_keys(text, &mut blocks);
    url_passwords(text, &mut blocks);
    blocks.sort_by_key(|span| span.start);
    let mut spans = blocks.clone();
    let mut blocks = blocks.iter().peekable();
    let mut last_end = 0;
    let mut i = 0;
    while i < bytes.len() {
        // A block (private key, URL password) is redacted whole, and nothing found before it runs
        // into it: its marker will start with `[`, and what ends there must end there already.
        while let Some(block) = blocks.next_if(|block| block.end <= i) {
            last_end = block.end;
        }
        let limit = match blocks.peek() {
            Some(block) if block.start <= i => {
                i = block.end;
                continue;
            }
            Some(block) => block.start,
            None => bytes.len(),
        };
        // Where a secret ends, its marker will end in `]`, a boundary: treating that position as
        // one already is what makes a second redaction find nothing more.
        let at_boundary =
            i == 0 || !is_word_char(bytes[i - 1]) && bytes[i - 1] != b'-' || i == last_end;
        let bytes = &bytes[..limit];
        let found = if at_boundary {
            prefixed_token(bytes, i, false)
                .or_else(|| jwt(bytes, i))
                .or_else(|| bearer(bytes, i, MIN_BEARER_LEN))
                .or_else(|| credential_flag(bytes, i))
                .or_else(|| cookie_header(bytes, i))
                .or_else(|| query_secret(bytes, i))
                .or_else(|| assignment(bytes, i))
        } else {
            // A token glued after other characters (`xxxxghp_…`), for prefixes distinctive enough.
            prefixed_token(bytes, i, true)
        };
        match found {
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

/// The password of credentials in a URL, `scheme://user:password@host` (`postgres://`,
/// `mongodb+srv://`, `https://`, …): the password is redacted, the user and host kept.
///
/// A URL whose user information already holds a marker is left alone, so that a second
/// redaction finds nothing more.
fn url_passwords(text: &str, spans: &mut Vec<Span>) {
    let bytes = text.as_bytes();
    let mut from = 0;
    while let Some(offset) = text[from..].find("://") {
        let scheme_end = from + offset;
        let start = scheme_end + 3;
        from = start;
        if scheme_end == 0 || !bytes[scheme_end - 1].is_ascii_alphanumeric() {
            continue;
        }
        let len = bytes[start..]
            .iter()
            .take_while(|&&b| b.is_ascii_alphanumeric() || b"-._~%!$&()*+,;=:@[]".contains(&b))
            .count();
        let authority = &text[start..start + len];
        let Some(at) = authority.rfind('@') else {
            continue;
        };
        // The next URL may start inside this authority (`a://u:p@b://…`, the host running into
        // a scheme): look for it right after the `@`, not after the whole run.
        from = start + at + 1;
        if authority[..at].contains(MARKER_PREFIX) {
            continue;
        }
        let Some(colon) = authority[..at].find(':') else {
            continue;
        };
        let span = Span {
            start: start + colon + 1,
            end: start + at,
            kind: "url-password",
        };
        let overlaps = spans
            .iter()
            .any(|other| other.start < span.end && span.start < other.end);
        if span.start < span.end && !overlaps {
            spans.push(span);
        }
    }
}

/// A token of [`rules::PREFIXES`] at `at`; `glued` when `at` follows a word character, where
/// only the rules whose prefix cannot end an ordinary word are tried.
fn prefixed_token(bytes: &[u8], at: usize, glued: bool) -> Option<Span> {
    for rule in rules::starting_with(bytes[at]) {
        if !bytes[at..].starts_with(rule.prefix.as_bytes()) || glued && !rule.may_be_glued() {
            continue;
        }
        let body = at + rule.prefix.len();
        let mut len = bytes[body..]
            .iter()
            .take_while(|&&b| (rule.body)(b))
            .count();
        // A token at the end of a sentence keeps its full stop.
        while len > rule.min_len && matches!(bytes[body + len - 1], b'.' | b'-') {
            len -= 1;
        }
        let mut end = body + len;
        if bytes.get(end).copied().is_some_and(is_word_char) {
            // A token glued after this one (`ghp_…ghp_…`) becomes a marker, whose `[` ends this
            // one: it ends where that one starts already, so that one pass finds what a second
            // would.
            let Some(glued) =
                (body + rule.min_len..=end).find(|&next| glued_token_starts(bytes, next))
            else {
                continue;
            };
            end = glued;
        }
        let fits = (rule.min_len..=rule.max_len).contains(&(end - body));
        if fits {
            return Some(Span {
                start: at,
                end,
                kind: rule.kind,
            });
        }
    }
    None
}

/// Whether a token that may be glued after others starts at `at`: its prefix and at least its
/// shortest body (where it ends is not looked at, so the check never chains).
fn glued_token_starts(bytes: &[u8], at: usize) -> bool {
    at < bytes.len()
        && rules::starting_with(bytes[at]).any(|rule| {
            rule.may_be_glued()
                && bytes[at..].starts_with(rule.prefix.as_bytes())
                && bytes[at + rule.prefix.len()..]
                    .iter()
                    .take(rule.min_len)
                    .take_while(|&&b| (rule.body)(b))
                    .count()
                    == rule.min_len
        })
}

/// A JSON Web Token, `ey<header>.ey<payload>.<signature>` (gitleaks' `jwt` rule).
fn jwt(bytes: &[u8], at: usize) -> Option<Span> {
    fn segment(bytes: &[u8], from: usize, char: fn(u8) -> bool) -> usize {
        bytes[from..].iter().take_while(|&&b| char(b)).count()
    }
    fn is_jwt_char(b: u8) -> bool {
        b.is_ascii_alphanumeric() || b"/\\_-".contains(&b)
    }
    if !bytes[at..].starts_with(b"ey") {
        return None;
    }
    let header = segment(bytes, at + 2, |b| b.is_ascii_alphanumeric());
    let mut i = at + 2 + header;
    if header < 17 || bytes.get(i) != Some(&b'.') || !bytes[i + 1..].starts_with(b"ey") {
        return None;
    }
    let payload = segment(bytes, i + 3, is_jwt_char);
    i += 3 + payload;
    if payload < 17 || bytes.get(i) != Some(&b'.') {
        return None;
    }
    i += 1;
    i += segment(bytes, i, is_jwt_char);
    i += bytes[i..]
        .iter()
        .take(2)
        .take_while(|&&b| b == b'=')
        .count();
    Some(Span {
        start: at,
        end: i,
        kind: "jwt",
    })
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

/// The secret of a command's credential flag: the password of `-u`/`--user user:password`
/// (curl's, and any program's), the token of `--oauth2-bearer`, the cookies of `--cookie` and of
/// a `-b` that holds `name=value` (not a cookie file's name).
fn credential_flag(bytes: &[u8], at: usize) -> Option<Span> {
    const FLAGS: &[(&[u8], &str, bool)] = &[
        (b"--oauth2-bearer", "bearer-token", true),
        (b"--cookie", "cookie", true),
        (b"--user", "password", true),
        (b"-u", "password", false),
        (b"-b", "cookie", false),
    ];
    let (flag, kind, long) = FLAGS
        .iter()
        .find(|(flag, ..)| bytes[at..].starts_with(flag))?;
    let mut i = at + flag.len();
    match bytes.get(i) {
        Some(b' ' | b'\t') => i += count_spaces(&bytes[i..]),
        Some(b'=') if *long => i += 1,
        // `-uuser:password`, glued.
        Some(&b) if !*long && !b.is_ascii_whitespace() && b != b'-' => {}
        _ => return None,
    }
    let (start, len) = match bytes.get(i) {
        Some(&quote @ (b'"' | b'\'')) => (
            i + 1,
            bytes[i + 1..]
                .iter()
                .take_while(|&&b| b != quote && b != b'\n')
                .count(),
        ),
        Some(b'-') | None => return None,
        _ => (
            i,
            bytes[i..]
                .iter()
                .take_while(|&&b| !b.is_ascii_whitespace() && b != b'"' && b != b'\'')
                .count(),
        ),
    };
    let end = start + len;
    let value = &bytes[start..end];
    let start = match *kind {
        "password" => start + value.iter().position(|&b| b == b':')? + 1,
        "cookie" if !*long && !value.contains(&b'=') => return None,
        _ => start,
    };
    (end > start && !bytes[start..].starts_with(MARKER_PREFIX.as_bytes())).then_some(Span {
        start,
        end,
        kind,
    })
}

/// The value of a `Cookie:` or `Set-Cookie:` header (any case), to its quote or line's end.
fn cookie_header(bytes: &[u8], at: usize) -> Option<Span> {
    let rest = &bytes[at..];
    let name = [&b"set-cookie:"[..], b"cookie:"]
        .into_iter()
        .find(|name| rest.len() >= name.len() && rest[..name.len()].eq_ignore_ascii_case(name))?;
    let start = at + name.len() + count_spaces(&rest[name.len()..]);
    let len = bytes[start..]
        .iter()
        .take_while(|&&b| !matches!(b, b'"' | b'\'' | b'\n' | b'\r'))
        .count();
    let len = bytes[start..start + len]
        .iter()
        .rposition(|b| !b.is_ascii_whitespace())
        .map_or(0, |last| last + 1);
    (len > 0 && !bytes[start..].starts_with(MARKER_PREFIX.as_bytes())).then_some(Span {
        start,
        end: start + len,
        kind: "cookie",
    })
}

/// Query parameters of a URL that carry a credential though their name alone would not say so
/// elsewhere: `?key=`, `&sig=`, `&signature=`, `&auth=`, cloud signed URLs' `X-Amz-Signature`,
/// `X-Amz-Credential`, `X-Goog-Signature`, `X-Goog-Credential`.
fn query_secret(bytes: &[u8], at: usize) -> Option<Span> {
    const NAMES: &[&str] = &[
        "key",
        "sig",
        "signature",
        "auth",
        "x-amz-signature",
        "x-amz-credential",
        "x-amz-security-token",
        "x-goog-signature",
        "x-goog-credential",
    ];
    if at == 0 || !matches!(bytes[at - 1], b'?' | b'&') {
        return None;
    }
    let name_len = bytes[at..]
        .iter()
        .take(MAX_KEY_LEN)
        .take_while(|&&b| is_key_char(b))
        .count();
    let name = &bytes[at..at + name_len];
    if bytes.get(at + name_len) != Some(&b'=')
        || !NAMES
            .iter()
            .any(|known| name.eq_ignore_ascii_case(known.as_bytes()))
    {
        return None;
    }
    let start = at + name_len + 1;
    let len = bytes[start..]
        .iter()
        .take_while(|&&b| !b.is_ascii_whitespace() && !matches!(b, b'&' | b'#' | b'"' | b'\''))
        .count();
    (len > 0 && !bytes[start..].starts_with(MARKER_PREFIX.as_bytes())).then_some(Span {
        start,
        end: start + len,
        kind: "secret",
    })
}

/// The value of an assignment `key=value`, `key: value` or `"key": "value"`, or of a flag
/// `--key value`, whose key names a secret (see [`is_secret_key`]); a token of a known kind in
/// the value keeps its kind.
fn assignment(bytes: &[u8], at: usize) -> Option<Span> {
    let key_len = bytes[at..]
        .iter()
        .take(MAX_KEY_LEN)
        .take_while(|&&b| is_key_char(b))
        .count();
    let key = &bytes[at..at + key_len];
    // The shape first (a key then `=`, `:` or a flag's value), then the key's name: most words
    // of a text are followed by none of these, and the name costs more to test.
    let mut i = at + key_len;
    if matches!(bytes.get(i), Some(b'"' | b'\'')) {
        i += 1;
    }
    let spaces = count_spaces(&bytes[i..]);
    i += spaces;
    if matches!(bytes.get(i), Some(b'=' | b':')) {
        i += 1;
        i += count_spaces(&bytes[i..]);
    } else if !(key.starts_with(b"--") && spaces > 0 && i == at + key_len + spaces) {
        // `--password value`: a flag and its value, separated by spaces only.
        return None;
    } else if bytes.get(i) == Some(&b'-') {
        // `--password --next-flag`: the flag has no value here.
        return None;
    }
    if !is_secret_key(key) {
        return None;
    }
    let shell_dir = is_shell_dir_key(key);
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
        _ => (i, unquoted_value_len(&bytes[i..])),
    };
    if len == 0 || bytes[start..].starts_with(MARKER_PREFIX.as_bytes()) {
        return None;
    }
    // `PWD=/home/me`: the shell's working directory, not a password (`pwd=` in a connection
    // string is one).
    if shell_dir && matches!(bytes[start], b'/' | b'~' | b'$' | b'.') {
        return None;
    }
    if is_bearer(&bytes[start..]) {
        // `token: Bearer <token>`: the token is the secret, whatever its length.
        return bearer(bytes, start, 1);
    }
    prefixed_token(bytes, start, false).or(Some(Span {
        start,
        end: start + len,
        kind: "secret",
    }))
}

/// The length of an unquoted value: up to a space, a quote, or a separator (`;`, `&`, `,`)
/// that ends it where the formats end a value: at the end of the text, before a space, another
/// separator or a quote, or before the next `key=` of a query or connection string
/// (`a=1&b=2`, `uid=etl;pwd=x;Encrypt=yes`). Elsewhere a separator is part of the value, as in
/// `password=Tr0ub4dor&3xyz`.
fn unquoted_value_len(bytes: &[u8]) -> usize {
    let is_separator = |b: u8| b",;&".contains(&b);
    let mut len = 0;
    while let Some(&b) = bytes.get(len) {
        if b.is_ascii_whitespace() || b == b'"' || b == b'\'' {
            break;
        }
        if is_separator(b) {
            let rest = &bytes[len + 1..];
            let ends = match rest.first() {
                None => true,
                Some(&next) => {
                    next.is_ascii_whitespace()
                        || is_separator(next)
                        || next == b'"'
                        || next == b'\''
                        || starts_assignment(rest)
                }
            };
            if ends {
                break;
            }
        }
        len += 1;
    }
    len
}

/// Whether `bytes` starts with `key=` (a key of at most [`MAX_KEY_LEN`] key characters).
fn starts_assignment(bytes: &[u8]) -> bool {
    let key_len = bytes
        .iter()
        .take(MAX_KEY_LEN)
        .take_while(|&&b| is_key_char(b) || b == b'.')
        .count();
    key_len > 0 && bytes.get(key_len) == Some(&b'=')
}

/// Whether a key is the shell's `PWD` or `OLDPWD`, whose value is a directory when it is a path.
fn is_shell_dir_key(key: &[u8]) -> bool {
    let bare = key.trim_ascii_start();
    let bare = &bare[bare.iter().take_while(|&&b| b == b'-').count()..];
    NOT_SECRET_KEYS
        .iter()
        .any(|&name| bare.eq_ignore_ascii_case(name.as_bytes()))
}

/// Whether an assignment's key names a secret: it ends in a secret name (`DB_PASSWORD`,
/// `GITHUB_TOKEN`), contains a secret word (`AWS_SECRET_ACCESS_KEY`, `AccountKey`), or has a part
/// that is one (`DB_PASS`, `MYSQL_PWD`).
fn is_secret_key(key: &[u8]) -> bool {
    if key.is_empty() || key.len() > MAX_KEY_LEN {
        return false;
    }
    let mut lower = [0_u8; MAX_KEY_LEN];
    let lower = &mut lower[..key.len()];
    lower.copy_from_slice(key);
    lower.make_ascii_lowercase();
    let lower = &*lower;
    SECRET_KEY_SUFFIXES
        .iter()
        .any(|suffix| lower.ends_with(suffix.as_bytes()))
        || SECRET_KEY_WORDS.iter().any(|word| {
            lower
                .windows(word.len())
                .any(|window| window == word.as_bytes())
        })
        || lower
            .split(|&b| matches!(b, b'_' | b'-' | b'.'))
            .any(|part| SECRET_KEY_PARTS.iter().any(|name| part == name.as_bytes()))
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
