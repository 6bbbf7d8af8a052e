//! JSON with comments (`//`, `/* */`), as Gemini CLI reads its `settings.json`, parsed with
//! the place of every value so that a member can be set or removed by splicing the text: the
//! user's comments, order and layout stay as they were.
//!
//! Strict JSON otherwise (no trailing comma: the client would not read one); an error says the
//! line and column.

use std::fmt;

use serde_json::Value;

/// The deepest nesting read (a deeper file is refused, not a stack overflow).
const MAX_DEPTH: usize = 128;

/// A value and where it is in the text.
#[derive(Debug, Clone)]
pub(crate) struct Node {
    pub(crate) start: usize,
    pub(crate) end: usize,
    pub(crate) kind: Kind,
}

/// What a value is.
#[derive(Debug, Clone)]
pub(crate) enum Kind {
    Object(Vec<Member>),
    Array(Vec<Node>),
    Scalar,
}

/// An object's member: its key and where the member starts (its key's quote).
#[derive(Debug, Clone)]
pub(crate) struct Member {
    pub(crate) key: String,
    pub(crate) start: usize,
    pub(crate) value: Node,
}

/// Why a text is not JSON with comments, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SyntaxError {
    pub(crate) line: usize,
    pub(crate) column: usize,
    pub(crate) message: String,
}

impl fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "line {}, column {}: {}",
            self.line, self.column, self.message
        )
    }
}

/// Parses `text` (one value, comments allowed around and between tokens).
pub(crate) fn parse(text: &str) -> Result<Node, SyntaxError> {
    let mut parser = Parser { text, at: 0 };
    parser.skip()?;
    let node = parser.value(0)?;
    parser.skip()?;
    if parser.at < text.len() {
        return Err(parser.error("more text after the value"));
    }
    Ok(node)
}

impl Node {
    /// The members of an object, `None` for any other value.
    pub(crate) fn members(&self) -> Option<&[Member]> {
        match &self.kind {
            Kind::Object(members) => Some(members),
            Kind::Array(_) | Kind::Scalar => None,
        }
    }

    /// The elements of an array, `None` for any other value.
    pub(crate) fn elements(&self) -> Option<&[Node]> {
        match &self.kind {
            Kind::Array(elements) => Some(elements),
            Kind::Object(_) | Kind::Scalar => None,
        }
    }

    /// The member `key` of an object.
    pub(crate) fn get(&self, key: &str) -> Option<&Member> {
        self.members()?.iter().find(|member| member.key == key)
    }

    /// The value, without its comments.
    pub(crate) fn to_value(&self, text: &str) -> Value {
        match &self.kind {
            Kind::Object(members) => Value::Object(
                members
                    .iter()
                    .map(|member| (member.key.clone(), member.value.to_value(text)))
                    .collect(),
            ),
            Kind::Array(elements) => Value::Array(
                elements
                    .iter()
                    .map(|element| element.to_value(text))
                    .collect(),
            ),
            Kind::Scalar => serde_json::from_str(&text[self.start..self.end]).unwrap_or_default(),
        }
    }
}

/// `text` with member `key` added at the end of `object` (which must be an object), its value
/// `value` laid out at the object's indentation.
pub(crate) fn insert_member(text: &str, object: &Node, key: &str, value: &Value) -> String {
    let members = object.members().unwrap_or_default();
    let indent = inner_indent(text, object, members.first().map(|member| member.start));
    let key = Value::String(key.to_owned());
    let entry = format!("{key}: {}", layout(value, &indent));
    insert_last(
        text,
        object,
        members.last().map(|member| member.value.end),
        &indent,
        &entry,
    )
}

/// `text` with `value` appended to `array` (which must be an array).
pub(crate) fn push_element(text: &str, array: &Node, value: &Value) -> String {
    let elements = array.elements().unwrap_or_default();
    let indent = inner_indent(text, array, elements.first().map(|element| element.start));
    let entry = layout(value, &indent);
    insert_last(
        text,
        array,
        elements.last().map(|element| element.end),
        &indent,
        &entry,
    )
}

/// `text` with the value at `node` replaced by `value`.
pub(crate) fn replace(text: &str, node: &Node, value: &Value) -> String {
    let indent = line_indent(text, node.start);
    format!(
        "{}{}{}",
        &text[..node.start],
        layout(value, &indent),
        &text[node.end..]
    )
}

/// `text` without the entry that spans `start..end` (a member or an element), the `index`th
/// of `count` in its container; the separating comma goes with it.
pub(crate) fn remove_entry(
    text: &str,
    start: usize,
    end: usize,
    previous_end: Option<usize>,
) -> String {
    // After the entry: its comma, if any (only blanks and comments may stand between).
    let after = skip_blank(text, end);
    if text[after..].starts_with(',') {
        // Not the last: take the entry, its comma and the blanks up to the next line.
        let mut cut = after + 1;
        let rest = &text[cut..];
        let blank = rest.len() - rest.trim_start_matches([' ', '\t']).len();
        cut += blank;
        if text[cut..].starts_with('\n') {
            cut += 1;
        }
        let line_start = text[..start].rfind('\n').map_or(0, |at| at + 1);
        let from = if text[line_start..start].trim().is_empty() {
            line_start
        } else {
            start
        };
        return format!("{}{}", &text[..from], &text[cut..]);
    }
    // The last: take the comma before it, or only the entry when it is the only one.
    let from = previous_end.unwrap_or(start);
    format!("{}{}", &text[..from], &text[end..])
}

/// The first position at or after `at` that is not a blank or a comment.
fn skip_blank(text: &str, at: usize) -> usize {
    let mut parser = Parser { text, at };
    let _ = parser.skip();
    parser.at
}

/// `entry` put after `last_end` (the end of the container's last entry), or first in an empty
/// container.
fn insert_last(
    text: &str,
    container: &Node,
    last_end: Option<usize>,
    indent: &str,
    entry: &str,
) -> String {
    match last_end {
        Some(end) => format!("{},\n{indent}{entry}{}", &text[..end], &text[end..]),
        None => {
            let open = container.start + 1;
            let outer = line_indent(text, container.start);
            let close = container.end - 1;
            let inside = &text[open..close];
            if inside.trim().is_empty() {
                format!(
                    "{}\n{indent}{entry}\n{outer}{}",
                    &text[..open],
                    &text[close..]
                )
            } else {
                // Only comments inside: keep them, the entry after them.
                format!(
                    "{}\n{indent}{entry}\n{outer}{}",
                    &text[..close].trim_end(),
                    &text[close..]
                )
            }
        }
    }
}

/// The indentation of a container's entries: that of its first entry, else its own plus two
/// spaces.
fn inner_indent(text: &str, container: &Node, first: Option<usize>) -> String {
    if let Some(first) = first {
        let line_start = text[..first].rfind('\n').map_or(0, |at| at + 1);
        let before = &text[line_start..first];
        if before.trim().is_empty() && line_start > container.start {
            return before.to_owned();
        }
    }
    format!("{}  ", line_indent(text, container.start))
}

/// The blanks that start the line `at` is on.
fn line_indent(text: &str, at: usize) -> String {
    let line_start = text[..at].rfind('\n').map_or(0, |at| at + 1);
    text[line_start..]
        .chars()
        .take_while(|c| *c == ' ' || *c == '\t')
        .collect()
}

/// `value` pretty-printed, its later lines indented by `indent`.
fn layout(value: &Value, indent: &str) -> String {
    let pretty = serde_json::to_string_pretty(value).unwrap_or_default();
    pretty.replace('\n', &format!("\n{indent}"))
}

struct Parser<'a> {
    text: &'a str,
    at: usize,
}

impl Parser<'_> {
    fn error(&self, message: &str) -> SyntaxError {
        let before = &self.text[..self.at.min(self.text.len())];
        let line = before.matches('\n').count() + 1;
        let column = before
            .rfind('\n')
            .map_or(before, |at| &before[at + 1..])
            .chars()
            .count()
            + 1;
        SyntaxError {
            line,
            column,
            message: message.to_owned(),
        }
    }

    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.at).copied()
    }

    /// Skips blanks and comments.
    fn skip(&mut self) -> Result<(), SyntaxError> {
        loop {
            let rest = &self.text[self.at..];
            let trimmed = rest.trim_start_matches([' ', '\t', '\n', '\r']);
            self.at += rest.len() - trimmed.len();
            if trimmed.starts_with("//") {
                self.at += trimmed.find('\n').unwrap_or(trimmed.len());
            } else if let Some(comment) = trimmed.strip_prefix("/*") {
                match comment.find("*/") {
                    Some(end) => self.at += end + 4,
                    None => return Err(self.error("a comment is not closed")),
                }
            } else {
                return Ok(());
            }
        }
    }

    fn value(&mut self, depth: usize) -> Result<Node, SyntaxError> {
        if depth > MAX_DEPTH {
            return Err(self.error("the values are nested too deep"));
        }
        let start = self.at;
        let kind = match self.peek() {
            Some(b'{') => Kind::Object(self.object(depth)?),
            Some(b'[') => Kind::Array(self.array(depth)?),
            Some(b'"') => {
                self.string()?;
                Kind::Scalar
            }
            Some(_) => {
                self.scalar()?;
                Kind::Scalar
            }
            None => return Err(self.error("a value is missing")),
        };
        Ok(Node {
            start,
            end: self.at,
            kind,
        })
    }

    fn object(&mut self, depth: usize) -> Result<Vec<Member>, SyntaxError> {
        self.at += 1;
        let mut members = Vec::new();
        self.skip()?;
        if self.peek() == Some(b'}') {
            self.at += 1;
            return Ok(members);
        }
        loop {
            self.skip()?;
            if self.peek() != Some(b'"') {
                return Err(self.error("expected a member's name in double quotes"));
            }
            let start = self.at;
            let key = self.string()?;
            self.skip()?;
            if self.peek() != Some(b':') {
                return Err(self.error("expected `:` after a member's name"));
            }
            self.at += 1;
            self.skip()?;
            let value = self.value(depth + 1)?;
            members.push(Member { key, start, value });
            self.skip()?;
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(b'}') => {
                    self.at += 1;
                    return Ok(members);
                }
                _ => return Err(self.error("expected `,` or `}`")),
            }
        }
    }

    fn array(&mut self, depth: usize) -> Result<Vec<Node>, SyntaxError> {
        self.at += 1;
        let mut elements = Vec::new();
        self.skip()?;
        if self.peek() == Some(b']') {
            self.at += 1;
            return Ok(elements);
        }
        loop {
            self.skip()?;
            elements.push(self.value(depth + 1)?);
            self.skip()?;
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(b']') => {
                    self.at += 1;
                    return Ok(elements);
                }
                _ => return Err(self.error("expected `,` or `]`")),
            }
        }
    }

    /// A string, its value returned.
    fn string(&mut self) -> Result<String, SyntaxError> {
        let start = self.at;
        let bytes = self.text.as_bytes();
        let mut at = start + 1;
        loop {
            match bytes.get(at) {
                None => return Err(self.error("a string is not closed")),
                Some(b'"') => break,
                Some(b'\\') => at += 2,
                Some(_) => at += 1,
            }
        }
        self.at = at + 1;
        let raw = self.text.get(start..self.at).unwrap_or_default();
        serde_json::from_str(raw).map_err(|_| {
            self.at = start;
            self.error("a string is not valid JSON")
        })
    }

    /// A number, `true`, `false` or `null`.
    fn scalar(&mut self) -> Result<(), SyntaxError> {
        let rest = &self.text[self.at..];
        let len = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || "+-.".contains(c)))
            .unwrap_or(rest.len());
        if len == 0 || serde_json::from_str::<Value>(&rest[..len]).is_err() {
            return Err(self.error("expected a value"));
        }
        self.at += len;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn reads_comments_and_says_where_an_error_is() {
        let text =
            "// mine\n{\n  /* a */ \"a\": [1, {\"b\": null}], // c\n  \"c\": \"x\\\"y\"\n}\n";
        let node = parse(text).unwrap();
        assert_eq!(
            node.to_value(text),
            json!({"a": [1, {"b": null}], "c": "x\"y"})
        );
        for (bad, line, column) in [
            ("{\n  \"a\": 1,\n}", 3, 1),
            ("{\"a\" 1}", 1, 6),
            ("{\n\n  \"a\": tru }", 3, 8),
            ("{} x", 1, 4),
            ("/* open", 1, 1),
            ("", 1, 1),
            ("{\"a\": \"open", 1, 7),
        ] {
            let err = parse(bad).unwrap_err();
            assert_eq!((err.line, err.column), (line, column), "{bad:?}: {err}");
        }
        let deep = "[".repeat(100_000);
        assert!(parse(&deep).unwrap_err().message.contains("too deep"));
    }

    #[test]
    fn edits_keep_everything_else() {
        let text = "{\n  // keep\n  \"a\": 1 // one\n}\n";
        let node = parse(text).unwrap();
        let added = insert_member(text, &node, "b", &json!({"c": [2]}));
        assert_eq!(
            added,
            "{\n  // keep\n  \"a\": 1,\n  \"b\": {\n    \"c\": [\n      2\n    ]\n  } // one\n}\n"
        );
        let node = parse(&added).unwrap();
        let b = node.get("b").unwrap();
        let a = node.get("a").unwrap();
        let removed = remove_entry(&added, b.start, b.value.end, Some(a.value.end));
        assert_eq!(removed, "{\n  // keep\n  \"a\": 1 // one\n}\n");
        let node = parse(&removed).unwrap();
        let a = node.get("a").unwrap();
        let only = remove_entry(&removed, a.start, a.value.end, None);
        assert_eq!(parse(&only).unwrap().to_value(&only), json!({}));
        assert!(only.contains("// keep") && only.contains("// one"));
        let empty = "{}";
        let with = insert_member(empty, &parse(empty).unwrap(), "x", &json!(true));
        assert_eq!(with, "{\n  \"x\": true\n}");
        let list = "[1, 2]";
        let node = parse(list).unwrap();
        let pushed = push_element(list, &node, &json!(3));
        assert_eq!(parse(&pushed).unwrap().to_value(&pushed), json!([1, 2, 3]));
        let first = &node.elements().unwrap()[0];
        let second = &node.elements().unwrap()[1];
        let cut = remove_entry(list, first.start, first.end, None);
        assert_eq!(cut, "[2]");
        let cut = remove_entry(list, second.start, second.end, Some(first.end));
        assert_eq!(cut, "[1]");
    }
}
