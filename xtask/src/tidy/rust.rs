//! Just enough of Rust's lexical structure for tidy: source text with its comments and literals
//! blanked, the functions and their line spans, the `#[cfg(test)]` modules, and the paths a file
//! names (`use` trees and inline `crate::…`/`super::…` paths).

use std::ops::Range;

/// A source file with comments and the contents of string and character literals replaced by
/// spaces, so that braces, `fn` and `use` are found only where they are code.
/// Newlines are kept, so a byte offset has the same line number in both texts.
pub(crate) struct Code {
    chars: Vec<char>,
    /// The offset at which each line starts.
    line_starts: Vec<usize>,
}

/// A function with a body.
#[derive(Debug)]
pub(crate) struct Function {
    pub(crate) name: String,
    /// The line of the `fn` keyword, from 1.
    pub(crate) line: usize,
    /// From the `fn` line to the closing brace's, both included.
    pub(crate) n_lines: usize,
}

/// A path the file names, as written (`crate::store::Store`, `super::planner`), with its line.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct NamedPath {
    pub(crate) segments: Vec<String>,
    pub(crate) line: usize,
    /// Named by a `pub use` (or `pub(…) use`): a re-export.
    pub(crate) reexport: bool,
}

impl Code {
    pub(crate) fn new(text: &str) -> Code {
        let chars = blank(&text.chars().collect::<Vec<_>>());
        let mut line_starts = vec![0];
        line_starts.extend(
            chars
                .iter()
                .enumerate()
                .filter(|(_, c)| **c == '\n')
                .map(|(idx, _)| idx + 1),
        );
        Code { chars, line_starts }
    }

    /// The line (from 1) of a character offset.
    fn line(&self, offset: usize) -> usize {
        self.line_starts.partition_point(|start| *start <= offset)
    }

    /// The body of every `#[cfg(test)] mod name { … }`, as character offsets.
    pub(crate) fn test_modules(&self) -> Vec<Range<usize>> {
        let tokens = tokens(&self.chars);
        let mut ranges = Vec::new();
        for (idx, window) in tokens.windows(6).enumerate() {
            let is_cfg_test = matches!(
                window,
                [
                    (_, Token::Other('#')),
                    (_, Token::Other('[')),
                    (_, Token::Ident(cfg)),
                    (_, Token::Other('(')),
                    (_, Token::Ident(test)),
                    (_, Token::Other(')')),
                ] if cfg == "cfg" && test == "test"
            );
            if !is_cfg_test {
                continue;
            }
            // Further attributes may follow before `mod name {`.
            let mut rest = tokens[idx + 6..].iter().skip_while(|(_, token)| {
                !matches!(token, Token::Ident(word) if word == "mod" || word == "fn")
                    && !matches!(token, Token::Other(';') | Token::Open('{'))
            });
            if let (Some((_, Token::Ident(word))), Some(_), Some((open, Token::Open('{')))) =
                (rest.next(), rest.next(), rest.next())
                && word == "mod"
            {
                ranges.push(*open..matching_brace(&self.chars, *open));
            }
        }
        ranges
    }

    /// Every function with a body outside the given ranges.
    pub(crate) fn functions(&self, skip: &[Range<usize>]) -> Vec<Function> {
        let tokens = tokens(&self.chars);
        let mut functions = Vec::new();
        for (idx, (offset, token)) in tokens.iter().enumerate() {
            let (Token::Ident(word), Some((_, Token::Ident(name)))) = (token, tokens.get(idx + 1))
            else {
                continue;
            };
            if word != "fn" || skip.iter().any(|range| range.contains(offset)) {
                continue;
            }
            // The body starts at the first `{` outside the signature's brackets; a `;` there means
            // a declaration without one.
            let mut depth = 0i32;
            let body = tokens[idx + 2..]
                .iter()
                .find_map(|(at, token)| match token {
                    Token::Other('(' | '[') => {
                        depth += 1;
                        None
                    }
                    Token::Other(')' | ']') => {
                        depth -= 1;
                        None
                    }
                    Token::Open('{') if depth == 0 => Some(Some(*at)),
                    Token::Other(';') if depth == 0 => Some(None),
                    _ => None,
                });
            if let Some(Some(open)) = body {
                let line = self.line(*offset);
                let end = self.line(matching_brace(&self.chars, open));
                functions.push(Function {
                    name: name.clone(),
                    line,
                    n_lines: end - line + 1,
                });
            }
        }
        functions
    }

    /// The paths that start with `crate`, `super`, `self` or one of `roots` (the crate root's
    /// modules, as its own file names them), in `use` trees (expanded) and in code, outside the
    /// given ranges.
    pub(crate) fn paths(&self, skip: &[Range<usize>], roots: &[String]) -> Vec<NamedPath> {
        let tokens: Vec<_> = tokens(&self.chars)
            .into_iter()
            .filter(|(offset, _)| !skip.iter().any(|range| range.contains(offset)))
            .map(|(offset, token)| (self.line(offset), token))
            .collect();
        let mut paths = Vec::new();
        let mut idx = 0;
        while idx < tokens.len() {
            match &tokens[idx].1 {
                Token::Ident(word) if word == "use" => {
                    let before = |back: usize| idx.checked_sub(back).map(|at| &tokens[at].1);
                    let is_pub = |token: Option<&Token>| matches!(token, Some(Token::Ident(word)) if word == "pub");
                    let reexport = is_pub(before(1))
                        || (before(1) == Some(&Token::Other(')'))
                            && (is_pub(before(4)) || is_pub(before(5))));
                    let mut parser = UseTree {
                        tokens: &tokens,
                        idx: idx + 1,
                        reexport,
                    };
                    parser.tree(&[], &mut paths);
                    idx = parser.idx.max(idx + 1);
                }
                Token::Ident(word)
                    if is_relative_root(word)
                        || (roots.contains(word)
                            && tokens.get(idx + 1).map(|(_, token)| token)
                                == Some(&Token::PathSep)) =>
                {
                    let line = tokens[idx].0;
                    let mut segments = vec![word.clone()];
                    idx += 1;
                    while let (Some((_, Token::PathSep)), Some((_, Token::Ident(next)))) =
                        (tokens.get(idx), tokens.get(idx + 1))
                    {
                        segments.push(next.clone());
                        idx += 2;
                    }
                    if segments.len() > 1 {
                        paths.push(NamedPath {
                            segments,
                            line,
                            reexport: false,
                        });
                    }
                }
                _ => idx += 1,
            }
        }
        paths.retain(|path| {
            path.segments
                .first()
                .is_some_and(|first| is_relative_root(first) || roots.contains(first))
        });
        paths
    }
}

fn is_relative_root(word: &str) -> bool {
    matches!(word, "crate" | "super" | "self")
}

/// A parser of one `use` tree, from the token after `use` to its `;`.
struct UseTree<'a> {
    tokens: &'a [(usize, Token)],
    idx: usize,
    reexport: bool,
}

impl UseTree<'_> {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.idx).map(|(_, token)| token)
    }

    /// Reads a tree under `prefix`, adding each leaf path to `paths`.
    fn tree(&mut self, prefix: &[String], paths: &mut Vec<NamedPath>) {
        let mut segments = prefix.to_vec();
        let line = self.tokens.get(self.idx).map_or(0, |(line, _)| *line);
        if self.peek() == Some(&Token::PathSep) {
            self.idx += 1;
        }
        loop {
            match self.peek() {
                Some(Token::Ident(word)) if word == "as" => {
                    self.idx += 2;
                }
                Some(Token::Ident(word)) => {
                    segments.push(word.clone());
                    self.idx += 1;
                }
                Some(Token::PathSep | Token::Other('*')) => self.idx += 1,
                Some(Token::Open('{')) => {
                    self.idx += 1;
                    while !matches!(self.peek(), None | Some(Token::Close('}'))) {
                        self.tree(&segments, paths);
                        if self.peek() == Some(&Token::Other(',')) {
                            self.idx += 1;
                        }
                    }
                    self.idx += 1;
                    return;
                }
                _ => break,
            }
        }
        // `self` inside braces names the prefix itself.
        if segments.last().is_some_and(|last| last == "self") && segments.len() > 1 {
            segments.pop();
        }
        if segments.len() > 1 {
            paths.push(NamedPath {
                segments,
                line,
                reexport: self.reexport,
            });
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Ident(String),
    PathSep,
    Open(char),
    Close(char),
    Other(char),
}

/// The tokens of blanked code, each with its character offset.
fn tokens(chars: &[char]) -> Vec<(usize, Token)> {
    let mut tokens = Vec::new();
    let mut idx = 0;
    while idx < chars.len() {
        let c = chars[idx];
        let start = idx;
        let token = if is_ident_start(c) {
            while idx < chars.len() && is_ident_char(chars[idx]) {
                idx += 1;
            }
            let word: String = chars[start..idx].iter().collect();
            tokens.push((
                start,
                Token::Ident(word.trim_start_matches("r#").to_owned()),
            ));
            continue;
        } else if c == ':' && chars.get(idx + 1) == Some(&':') {
            idx += 1;
            Token::PathSep
        } else if c == '{' {
            Token::Open(c)
        } else if c == '}' {
            Token::Close(c)
        } else if c.is_whitespace() {
            idx += 1;
            continue;
        } else {
            Token::Other(c)
        };
        tokens.push((start, token));
        idx += 1;
    }
    tokens
}

fn is_ident_start(c: char) -> bool {
    c.is_alphabetic() || c == '_'
}

fn is_ident_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The offset of the `}` that closes the `{` at `open` (the end of the text when unclosed).
fn matching_brace(chars: &[char], open: usize) -> usize {
    let mut depth = 0usize;
    for (idx, c) in chars.iter().enumerate().skip(open) {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return idx;
                }
            }
            _ => {}
        }
    }
    chars.len().saturating_sub(1)
}

/// Replaces comments and the contents of literals by spaces, keeping newlines.
fn blank(source: &[char]) -> Vec<char> {
    let mut out = source.to_vec();
    let clear = |out: &mut Vec<char>, range: Range<usize>| {
        for c in &mut out[range] {
            if *c != '\n' {
                *c = ' ';
            }
        }
    };
    let mut idx = 0;
    while idx < source.len() {
        let c = source[idx];
        let next = source.get(idx + 1).copied();
        if c == '/' && next == Some('/') {
            let end = source[idx..]
                .iter()
                .position(|c| *c == '\n')
                .map_or(source.len(), |n| idx + n);
            clear(&mut out, idx..end);
            idx = end;
        } else if c == '/' && next == Some('*') {
            let end = block_comment_end(source, idx);
            clear(&mut out, idx..end);
            idx = end;
        } else if c == 'r'
            && !prev_is_ident_except_b(source, idx)
            && matches!(next, Some('"' | '#'))
            && let Some(end) = raw_string_end(source, idx + 1)
        {
            clear(&mut out, idx + 1..end);
            idx = end;
        } else if c == '"' {
            let end = string_end(source, idx + 1);
            clear(&mut out, idx + 1..end.saturating_sub(1));
            idx = end;
        } else if c == '\'' && !prev_is_ident_except_b(source, idx) {
            // A character literal, or a byte one (`b'{'`); not a lifetime or label.
            match char_literal_end(source, idx) {
                Some(end) => {
                    clear(&mut out, idx + 1..end - 1);
                    idx = end;
                }
                None => idx += 1,
            }
        } else {
            idx += 1;
        }
    }
    out
}

/// Whether the `r` or quote at `idx` continues an identifier (other than the `b` of `br"…"` or
/// `b'…'`).
fn prev_is_ident_except_b(source: &[char], idx: usize) -> bool {
    match idx.checked_sub(1).map(|prev| source[prev]) {
        Some('b') => idx >= 2 && is_ident_char(source[idx - 2]),
        Some(prev) => is_ident_char(prev),
        None => false,
    }
}

fn block_comment_end(source: &[char], start: usize) -> usize {
    let mut depth = 0usize;
    let mut idx = start;
    while idx + 1 < source.len() {
        match (source[idx], source[idx + 1]) {
            ('/', '*') => {
                depth += 1;
                idx += 2;
            }
            ('*', '/') => {
                depth -= 1;
                idx += 2;
                if depth == 0 {
                    return idx;
                }
            }
            _ => idx += 1,
        }
    }
    source.len()
}

/// The end (exclusive) of a raw string whose `#`s or `"` start at `idx`, if it is one.
fn raw_string_end(source: &[char], idx: usize) -> Option<usize> {
    let n_hashes = source[idx..].iter().take_while(|c| **c == '#').count();
    let quote = idx + n_hashes;
    if source.get(quote) != Some(&'"') {
        return None;
    }
    let mut at = quote + 1;
    while at < source.len() {
        if source[at] == '"'
            && source[at + 1..]
                .iter()
                .take(n_hashes)
                .filter(|c| **c == '#')
                .count()
                == n_hashes
        {
            return Some(at + 1 + n_hashes);
        }
        at += 1;
    }
    Some(source.len())
}

/// The end (exclusive, after the closing quote) of a string whose contents start at `idx`.
fn string_end(source: &[char], mut idx: usize) -> usize {
    while idx < source.len() {
        match source[idx] {
            '\\' => idx += 2,
            '"' => return idx + 1,
            _ => idx += 1,
        }
    }
    source.len()
}

/// The end (exclusive) of a character literal at `idx`, or `None` for a lifetime or label.
fn char_literal_end(source: &[char], idx: usize) -> Option<usize> {
    match (source.get(idx + 1), source.get(idx + 2)) {
        (Some('\\'), _) => {
            // The escaped character itself may be a quote (`'\''`).
            let close = source[idx + 3..].iter().position(|c| *c == '\'')?;
            Some(idx + 3 + close + 1)
        }
        (Some(_), Some('\'')) => Some(idx + 3),
        _ => None,
    }
}
