//! Text helpers for the views: free text shortened and lines cut on character boundaries as
//! people see them, control characters escaped, counts, relative times and short SHAs.

use std::borrow::Cow;

pub(crate) use checkpoint_core::resume::ago;

/// `line` cut to `width` columns (a wide character takes two), not counting colour sequences
/// (the only escapes left), and never inside a character as people see it (see
/// [`cut_point`]).
pub(super) fn cut(line: &str, width: usize, color: bool) -> String {
    let mut out = String::with_capacity(line.len().min(width * 4));
    let mut columns = 0;
    let mut prev = None;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            out.push(c);
            for c in chars.by_ref() {
                out.push(c);
                if c == 'm' {
                    break;
                }
            }
            continue;
        }
        let c_width = char_width(c);
        if columns + c_width > width && may_cut_between(prev, c, 0) {
            if color {
                out.push_str("\u{1b}[0m");
            }
            break;
        }
        out.push(c);
        columns += c_width;
        prev = Some(c);
    }
    out
}

/// How many columns of one free-text field (a note, a reason, a title) a view shows at most;
/// the rest is cut, and the view says where the text is whole ([`shorten`]).
pub(crate) const TEXT_COLUMNS: usize = 200;

/// The commands that print free text whole: the journal's entries, the state's fields, the
/// report's labels.
pub(crate) const WHOLE_IN_LOG: &str = "checkpoint log --full";
pub(crate) const WHOLE_IN_STATE: &str = "checkpoint show";
pub(crate) const WHOLE_IN_REPORT: &str = "checkpoint report --format json";

/// A free-text field for a view: whole when it fits in [`TEXT_COLUMNS`] columns, else cut
/// there with an ellipsis, how much was left out and `whole`, the command that prints it whole.
/// JSON documents never go through this: they keep every text whole.
pub(crate) fn shorten<'a>(text: &'a str, whole: &str) -> Cow<'a, str> {
    // A character takes at most as many columns as it has bytes.
    if text.len() <= TEXT_COLUMNS {
        return Cow::Borrowed(text);
    }
    let Some(end) = cut_point(text, TEXT_COLUMNS) else {
        return Cow::Borrowed(text);
    };
    let left = text[end..].chars().count();
    Cow::Owned(format!(
        "{}… ({left} more characters: `{whole}`)",
        &text[..end]
    ))
}

/// Where to cut `text` so that it and an ellipsis fit in `columns` columns, or `None` when it
/// fits whole. The cut falls between two characters as people see them: never before a
/// combining mark, a joiner, a variation selector or a skin tone, never after a joiner, never
/// inside a flag (a pair of regional indicators).
pub(crate) fn cut_point(text: &str, columns: usize) -> Option<usize> {
    let mut used = 0;
    let mut cut = 0;
    let mut prev = None;
    // Regional indicators in a row so far: a flag is a pair of them.
    let mut indicators = 0;
    for (idx, c) in text.char_indices() {
        if used < columns && may_cut_between(prev, c, indicators) {
            cut = idx;
        }
        used += char_width(c);
        if used > columns {
            return Some(cut);
        }
        indicators = if is_regional_indicator(c) {
            indicators + 1
        } else {
            0
        };
        prev = Some(c);
    }
    None
}

/// The columns `text` takes in a terminal (see [`char_width`]).
pub(crate) fn columns(text: &str) -> usize {
    text.chars().map(char_width).sum()
}

/// The columns `c` takes in a terminal: 2 for a wide one (CJK, most emoji), 0 for a combining
/// one.
fn char_width(c: char) -> usize {
    if matches!(c, '\u{1f3fb}'..='\u{1f3ff}') {
        // A skin tone modifies the emoji before it.
        return 0;
    }
    unicode_width::UnicodeWidthChar::width(c).unwrap_or(0)
}

/// Whether a text may be cut between `prev` and `c` without splitting a character as people see
/// it; `indicators`: how many regional indicators come just before `c`.
fn may_cut_between(prev: Option<char>, c: char, indicators: usize) -> bool {
    let joins = |c: char| char_width(c) == 0 || matches!(c, '\u{200d}' | '\u{fe00}'..='\u{fe0f}');
    !(joins(c) || prev == Some('\u{200d}') || (is_regional_indicator(c) && indicators % 2 == 1))
}

fn is_regional_indicator(c: char) -> bool {
    matches!(c, '\u{1f1e6}'..='\u{1f1ff}')
}

/// User-supplied text made safe for a terminal: control characters other than newline and tab
/// (ESC, BEL, CR, DEL, C1 controls) are written as escapes (`\u{1b}`, `\r`), so that a note
/// cannot move the cursor, retitle the terminal or hide what came before it on its line; so are
/// the invisible bidirectional controls (see [`is_bidi_control`]), so that a note cannot show
/// its text in another order than it is (`\u{202e}`).
pub(crate) fn escape(text: &str) -> Cow<'_, str> {
    if !has_unsafe_bytes(text.as_bytes()) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if is_unsafe(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Text shown on one line of a view laid out line by line (`log`, the `report` text): its
/// newlines and tabs written as `\n` and `\t`, so that a note cannot break the layout (the other
/// control characters are escaped on output, see [`escape`]).
pub(crate) fn one_line(text: &str) -> Cow<'_, str> {
    if !text.contains(['\n', '\t']) {
        return Cow::Borrowed(text);
    }
    Cow::Owned(text.replace('\n', "\\n").replace('\t', "\\t"))
}

/// Whether [`escape`] writes `c` as an escape.
fn is_unsafe(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t') || is_bidi_control(c)
}

/// Whether UTF-8 `bytes` hold a character [`is_unsafe`] finds, byte by byte: every human output
/// goes through [`escape`], and a check per character cost `status` more than its rendering.
fn has_unsafe_bytes(bytes: &[u8]) -> bool {
    bytes.iter().enumerate().any(|(idx, &byte)| match byte {
        b'\n' | b'\t' => false,
        0..0x20 | 0x7f => true,
        // C1 controls (U+0080–U+009F), the Arabic letter mark (U+061C), and the marks,
        // embeddings, overrides (U+200E, U+200F, U+202A–U+202E) and isolates (U+2066–U+2069).
        0xc2 => matches!(bytes.get(idx + 1), Some(0x80..=0x9f)),
        0xd8 => bytes.get(idx + 1) == Some(&0x9c),
        0xe2 => matches!(
            (bytes.get(idx + 1), bytes.get(idx + 2)),
            (Some(0x80), Some(0x8e | 0x8f | 0xaa..=0xae)) | (Some(0x81), Some(0xa6..=0xa9))
        ),
        _ => false,
    })
}

/// The bidirectional formatting characters of Unicode (UAX #9): the embeddings and overrides
/// (U+202A–U+202E), the isolates (U+2066–U+2069) and the marks (U+200E, U+200F, U+061C). They
/// are invisible, and reorder the text that follows them ("Trojan Source").
pub(crate) fn is_bidi_control(c: char) -> bool {
    matches!(
        c,
        '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}' | '\u{061c}'
    )
}

/// "1 phase", "3 phases": a count with its noun, singular for one.
pub(crate) fn count(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

pub(crate) fn short_sha(sha: &str) -> &str {
    sha.get(..7).unwrap_or(sha)
}

#[cfg(test)]
mod tests;

/// `, $0.42, 12034 tokens` when a session's result said what it spent.
pub(crate) fn spent_text(cost_usd: Option<f64>, tokens: Option<u64>) -> String {
    let mut text = String::new();
    if let Some(cost) = cost_usd {
        text.push_str(&format!(", ${cost:.2}"));
    }
    if let Some(tokens) = tokens {
        text.push_str(&format!(", {tokens} tokens"));
    }
    text
}
