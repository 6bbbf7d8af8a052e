//! A Claude Code `Workflow` script read as text, never run: its `export const meta = {…}`
//! literal (name, description, phases) and its `phase('…')` and `agent(prompt, {label, phase})`
//! calls, so that an agent's label and phase are known where the client's files do not say them
//! yet (2.1.197 writes them only when the run settles).
//!
//! The script is JavaScript; this reads just enough of it: string and template literals,
//! comments, object and array literals. Any other expression is skipped as an unknown value.

/// A value of a JavaScript literal, as far as it is literal.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum JsValue {
    /// A string literal, or a template literal without `${…}`.
    Str(String),
    /// A template literal with `${…}`: its text before the first one.
    Template(String),
    /// An object literal's keys and values.
    Object(Vec<(String, JsValue)>),
    /// An array literal.
    Array(Vec<JsValue>),
    /// Any other expression.
    Other,
}

impl JsValue {
    fn get(&self, key: &str) -> Option<&JsValue> {
        match self {
            Self::Object(fields) => fields.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            Self::Str(_) | Self::Template(_) | Self::Array(_) | Self::Other => None,
        }
    }

    fn str(&self) -> Option<&str> {
        match self {
            Self::Str(text) => Some(text),
            Self::Template(_) | Self::Object(_) | Self::Array(_) | Self::Other => None,
        }
    }
}

/// What the script declares.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Script {
    /// `meta.name`.
    pub(crate) name: Option<String>,
    /// `meta.description`.
    pub(crate) description: Option<String>,
    /// `meta.phases`: title and detail, in order.
    pub(crate) phases: Vec<(String, Option<String>)>,
    /// The `agent()` calls, in the order they are written.
    pub(crate) agents: Vec<AgentCall>,
}

/// One `agent()` call.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct AgentCall {
    /// Its `label`, when a literal.
    pub(crate) label: Option<String>,
    /// Its `phase` option, else the last `phase('…')` before it.
    pub(crate) phase: Option<String>,
    /// Its prompt (the literal text before any `${…}`).
    pub(crate) prompt: Option<String>,
}

impl Script {
    /// Reads `text`; `None` when it has no `meta` literal.
    pub(crate) fn parse(text: &str) -> Option<Script> {
        let chars: Vec<char> = text.chars().collect();
        let start = find(&chars, "export const meta")?;
        let mut cursor = Cursor {
            chars: &chars,
            at: start + "export const meta".len(),
        };
        cursor.skip_space();
        if !cursor.eat('=') {
            return None;
        }
        let meta = cursor.value();
        let mut script = Script {
            name: meta.get("name").and_then(JsValue::str).map(str::to_owned),
            description: meta
                .get("description")
                .and_then(JsValue::str)
                .map(str::to_owned),
            ..Script::default()
        };
        if let Some(JsValue::Array(phases)) = meta.get("phases") {
            for phase in phases {
                let (title, detail) = match phase {
                    JsValue::Str(title) => (Some(title.as_str()), None),
                    other => (
                        other.get("title").and_then(JsValue::str),
                        other.get("detail").and_then(JsValue::str),
                    ),
                };
                if let Some(title) = title {
                    script
                        .phases
                        .push((title.to_owned(), detail.map(str::to_owned)));
                }
            }
        }
        script.agents = calls(&mut cursor);
        Some(script)
    }

    /// The `agent()` call whose prompt the agent's first prompt `prompt` shows.
    pub(crate) fn call_for(&self, prompt: &str) -> Option<&AgentCall> {
        let prompt = prompt.trim();
        self.agents.iter().find(|call| {
            call.prompt.as_deref().is_some_and(|text| {
                let text = text.trim();
                !text.is_empty() && prompt.contains(text)
            })
        })
    }
}

/// The `phase()` and `agent()` calls from the cursor on.
fn calls(cursor: &mut Cursor<'_>) -> Vec<AgentCall> {
    let mut agents = Vec::new();
    let mut current_phase: Option<String> = None;
    while cursor.at < cursor.chars.len() {
        if cursor.skip_literal_or_comment() {
            continue;
        }
        let c = cursor.chars[cursor.at];
        if !is_ident(c) {
            cursor.at += 1;
            continue;
        }
        let before = cursor.at.checked_sub(1).map(|i| cursor.chars[i]);
        let word = cursor.ident();
        if before.is_some_and(|c| is_ident(c) || c == '.') {
            continue;
        }
        let is_call = matches!(word.as_str(), "agent" | "phase") && {
            cursor.skip_space();
            cursor.eat('(')
        };
        if !is_call {
            continue;
        }
        let first = cursor.value();
        cursor.skip_space();
        let options = if cursor.eat(',') {
            cursor.value()
        } else {
            JsValue::Other
        };
        if word == "phase" {
            if let Some(title) = first.str() {
                current_phase = Some(title.to_owned());
            }
            continue;
        }
        agents.push(AgentCall {
            label: options
                .get("label")
                .and_then(JsValue::str)
                .map(str::to_owned),
            phase: options
                .get("phase")
                .and_then(JsValue::str)
                .map(str::to_owned)
                .or_else(|| current_phase.clone()),
            prompt: match first {
                JsValue::Str(text) | JsValue::Template(text) => Some(text),
                JsValue::Object(_) | JsValue::Array(_) | JsValue::Other => None,
            },
        });
    }
    agents
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '$'
}

fn find(chars: &[char], needle: &str) -> Option<usize> {
    let needle: Vec<char> = needle.chars().collect();
    chars.windows(needle.len()).position(|w| w == needle)
}

struct Cursor<'a> {
    chars: &'a [char],
    at: usize,
}

impl Cursor<'_> {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.at).copied()
    }

    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(c) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn ident(&mut self) -> String {
        let start = self.at;
        while self.peek().is_some_and(is_ident) {
            self.at += 1;
        }
        self.chars[start..self.at].iter().collect()
    }

    /// Skips white space and comments.
    fn skip_space(&mut self) {
        loop {
            match (self.peek(), self.chars.get(self.at + 1).copied()) {
                (Some(c), _) if c.is_whitespace() => self.at += 1,
                (Some('/'), Some('/')) => {
                    while self.peek().is_some_and(|c| c != '\n') {
                        self.at += 1;
                    }
                }
                (Some('/'), Some('*')) => {
                    self.at += 2;
                    while self.at < self.chars.len()
                        && !(self.chars[self.at] == '*'
                            && self.chars.get(self.at + 1) == Some(&'/'))
                    {
                        self.at += 1;
                    }
                    self.at = (self.at + 2).min(self.chars.len());
                }
                _ => return,
            }
        }
    }

    /// Skips a string, template or comment at the cursor; whether there was one.
    fn skip_literal_or_comment(&mut self) -> bool {
        match (self.peek(), self.chars.get(self.at + 1).copied()) {
            (Some('/'), Some('/' | '*')) => {
                self.skip_space();
                true
            }
            (Some('\'' | '"' | '`'), _) => {
                self.string();
                true
            }
            _ => false,
        }
    }

    /// A string or template literal at the cursor.
    fn string(&mut self) -> JsValue {
        let Some(quote) = self.peek() else {
            return JsValue::Other;
        };
        self.at += 1;
        let mut text = String::new();
        let mut prefix = None;
        while let Some(c) = self.peek() {
            self.at += 1;
            match c {
                '\\' => {
                    let escaped = self.peek().unwrap_or('\\');
                    self.at += 1;
                    text.push(match escaped {
                        'n' => '\n',
                        't' => '\t',
                        other => other,
                    });
                }
                '$' if quote == '`' && self.peek() == Some('{') => {
                    prefix.get_or_insert_with(|| text.clone());
                    self.at += 1;
                    self.skip_until(&['}']);
                    self.eat('}');
                }
                c if c == quote => break,
                '\n' if quote != '`' => break,
                c => text.push(c),
            }
        }
        match prefix {
            Some(prefix) => JsValue::Template(prefix),
            None => JsValue::Str(text),
        }
    }

    /// Skips an expression up to one of `ends` at depth 0 (not eaten).
    fn skip_until(&mut self, ends: &[char]) {
        let mut depth = 0usize;
        while let Some(c) = self.peek() {
            if self.skip_literal_or_comment() {
                continue;
            }
            if depth == 0 && ends.contains(&c) {
                return;
            }
            match c {
                '(' | '[' | '{' => depth += 1,
                ')' | ']' | '}' => depth = depth.saturating_sub(1),
                _ => {}
            }
            self.at += 1;
        }
    }

    /// A value at the cursor; an expression that is not a literal is skipped as `Other`.
    fn value(&mut self) -> JsValue {
        self.skip_space();
        match self.peek() {
            Some('\'' | '"' | '`') => {
                let value = self.string();
                self.skip_space();
                match self.peek() {
                    Some(',' | '}' | ']' | ')') | None => value,
                    Some(_) => {
                        self.skip_until(&[',', '}', ']', ')']);
                        JsValue::Other
                    }
                }
            }
            Some('{') => {
                self.at += 1;
                self.object()
            }
            Some('[') => {
                self.at += 1;
                let mut items = Vec::new();
                loop {
                    self.skip_space();
                    if self.eat(']') || self.peek().is_none() {
                        return JsValue::Array(items);
                    }
                    items.push(self.value());
                    self.skip_space();
                    if !self.eat(',') {
                        self.skip_until(&[']']);
                    }
                }
            }
            _ => {
                self.skip_until(&[',', '}', ']', ')']);
                JsValue::Other
            }
        }
    }

    /// An object literal's fields, the cursor past its `{`.
    fn object(&mut self) -> JsValue {
        let mut fields = Vec::new();
        loop {
            self.skip_space();
            if self.eat('}') || self.peek().is_none() {
                return JsValue::Object(fields);
            }
            let key = match self.peek() {
                Some('\'' | '"') => self.string().str().map(str::to_owned),
                Some(c) if is_ident(c) => Some(self.ident()),
                _ => None,
            };
            self.skip_space();
            match (key, self.peek()) {
                (Some(key), Some(':')) => {
                    self.at += 1;
                    let value = self.value();
                    fields.push((key, value));
                }
                _ => self.skip_until(&[',', '}']),
            }
            self.skip_space();
            if !self.eat(',') {
                self.skip_until(&[',', '}']);
                self.eat(',');
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCRIPT: &str = r#"export const meta = {
  name: 'probe-wf', // the name
  description: "two \"phases\"",
  phases: [{ title: 'Design', detail: 'one agent' }, { title: `Build`, }],
};
/* agent('not a call', {label: 'no'}) */
const note = "agent('nor this', {label: 'no'})";
phase('Design');
const a = await agent('Write the design. MARK-design', { label: 'design', schema: S });
const rs = await parallel([1, 2].map((i) => () =>
  agent(`Build part ${i} from ${a}. MARK-build`, { label: `build:${i}`, phase: 'Build' })));
await agent("Check it", {label: "check", phase: "Build"});
myagent('x', {label: 'no'});
return { a, rs };
"#;

    #[test]
    fn a_script_gives_its_meta_and_its_agent_calls_without_running() {
        let script = Script::parse(SCRIPT).unwrap();
        assert_eq!(script.name.as_deref(), Some("probe-wf"));
        assert_eq!(script.description.as_deref(), Some("two \"phases\""));
        assert_eq!(
            script.phases,
            [
                ("Design".to_owned(), Some("one agent".to_owned())),
                ("Build".to_owned(), None)
            ]
        );
        let labels: Vec<(Option<&str>, Option<&str>)> = script
            .agents
            .iter()
            .map(|call| (call.label.as_deref(), call.phase.as_deref()))
            .collect();
        assert_eq!(
            labels,
            [
                (Some("design"), Some("Design")),
                (None, Some("Build")),
                (Some("check"), Some("Build"))
            ]
        );
        let call = script
            .call_for("[Workflow harness]\n    Build part 2 from x. MARK-build")
            .unwrap();
        assert_eq!(call.phase.as_deref(), Some("Build"));
        assert_eq!(
            script
                .call_for("Write the design. MARK-design")
                .unwrap()
                .label
                .as_deref(),
            Some("design")
        );
        assert!(script.call_for("something else").is_none());
    }

    #[test]
    fn broken_or_foreign_text_gives_nothing_or_what_it_can() {
        assert_eq!(Script::parse(""), None);
        assert_eq!(Script::parse("const meta = {}"), None);
        assert_eq!(Script::parse("export const meta"), None);
        for cut in [10, 40, 80, 120, 200, SCRIPT.len() - 3] {
            // Truncated anywhere: no panic, no endless loop.
            let _ = Script::parse(&SCRIPT[..cut]);
        }
        let odd =
            Script::parse("export const meta = { name: NAME, phases: ['A', {title: 1}, `B${x}`] }")
                .unwrap();
        assert_eq!(odd.name, None);
        assert_eq!(odd.phases, [("A".to_owned(), None)]);
    }
}
