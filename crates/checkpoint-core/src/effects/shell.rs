//! A shell command line read the way a POSIX shell splits it, without running anything: the
//! simple commands it would run (in lists, pipelines, subshells, groups, command substitutions
//! and backticks), each as its words after quote removal.
//!
//! Redirections and their targets are left out, here-document bodies are skipped, comments end
//! at the line's end. What only running could tell (the value of `$VAR`, the output of a
//! substitution inside a word) is left as written, without the `$`.

/// How deep substitutions nest before the rest is read as plain text (a bound on recursion).
pub(crate) const MAX_DEPTH: usize = 16;

/// The simple commands of `script`, in order, each as its words; commands inside substitutions
/// come before the command that holds them.
pub(crate) fn simple_commands(script: &str, depth: usize) -> Vec<Vec<String>> {
    let chars: Vec<char> = script.chars().collect();
    let mut lexer = Lexer {
        chars: &chars,
        pos: 0,
        depth,
        word: None,
        words: Vec::new(),
        commands: Vec::new(),
        skip_target: false,
        heredocs: Vec::new(),
    };
    lexer.run();
    lexer.commands
}

struct Lexer<'a> {
    chars: &'a [char],
    pos: usize,
    depth: usize,
    /// The word being read (`Some("")` once an empty quoted word started).
    word: Option<String>,
    words: Vec<String>,
    commands: Vec<Vec<String>>,
    /// The next word is a redirection's target, not an argument.
    skip_target: bool,
    /// Here-documents whose bodies start after the next newline: delimiter, strip tabs.
    heredocs: Vec<(String, bool)>,
}

impl Lexer<'_> {
    fn peek(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.pos + ahead).copied()
    }

    fn run(&mut self) {
        while let Some(c) = self.peek(0) {
            self.pos += 1;
            match c {
                ' ' | '\t' | '\r' => self.end_word(),
                '\n' => {
                    self.end_command();
                    self.skip_heredoc_bodies();
                }
                ';' | '&' | '|' | '(' | ')' => {
                    if c == '&' && self.peek(0) == Some('>') {
                        // `&>file`: both streams to a file.
                        self.end_word();
                        self.redirection();
                    } else {
                        self.end_command();
                    }
                }
                '<' | '>' => {
                    if self.word.as_deref().is_some_and(is_fd) {
                        self.word = None;
                    } else {
                        self.end_word();
                    }
                    self.pos -= 1;
                    self.redirection();
                }
                '#' if self.word.is_none() => {
                    while self.peek(0).is_some_and(|c| c != '\n') {
                        self.pos += 1;
                    }
                }
                '\\' => match self.peek(0) {
                    Some('\n') => self.pos += 1,
                    Some(next) => {
                        self.pos += 1;
                        self.push(next);
                    }
                    None => {}
                },
                '\'' => {
                    self.word.get_or_insert_default();
                    while let Some(c) = self.peek(0) {
                        self.pos += 1;
                        if c == '\'' {
                            break;
                        }
                        self.push(c);
                    }
                }
                '"' => self.double_quoted(),
                '$' => self.dollar(),
                '`' => self.backticks(),
                c => self.push(c),
            }
        }
        self.end_command();
    }

    fn push(&mut self, c: char) {
        self.word.get_or_insert_default().push(c);
    }

    fn end_word(&mut self) {
        if let Some(word) = self.word.take() {
            if self.skip_target {
                self.skip_target = false;
            } else {
                self.words.push(word);
            }
        }
    }

    fn end_command(&mut self) {
        self.end_word();
        self.skip_target = false;
        if !self.words.is_empty() {
            self.commands.push(std::mem::take(&mut self.words));
        }
    }

    /// At `<` or `>`: reads the operator; its target (the next word) is left out, and a
    /// here-document's delimiter is noted.
    fn redirection(&mut self) {
        let mut op = String::new();
        while let Some(c) = self
            .peek(0)
            .filter(|c| matches!(c, '<' | '>' | '&' | '|' | '-'))
        {
            if c == '-' && !op.ends_with("<<") && !op.ends_with('&') {
                break;
            }
            op.push(c);
            self.pos += 1;
        }
        if op.starts_with("<<") && !op.starts_with("<<<") {
            self.heredoc(op.ends_with('-'));
            return;
        }
        if matches!(self.peek(0), Some('(')) {
            // Process substitution `<(…)`: its commands run.
            return;
        }
        self.skip_target = true;
    }

    /// Reads a here-document's delimiter (quotes removed).
    fn heredoc(&mut self, strip_tabs: bool) {
        while matches!(self.peek(0), Some(' ' | '\t')) {
            self.pos += 1;
        }
        let mut delimiter = String::new();
        while let Some(c) = self.peek(0) {
            if c.is_whitespace() || matches!(c, ';' | '&' | '|' | '<' | '>' | '(' | ')') {
                break;
            }
            self.pos += 1;
            if !matches!(c, '\'' | '"' | '\\') {
                delimiter.push(c);
            }
        }
        self.heredocs.push((delimiter, strip_tabs));
    }

    /// After a newline: skips the bodies of pending here-documents.
    fn skip_heredoc_bodies(&mut self) {
        for (delimiter, strip_tabs) in std::mem::take(&mut self.heredocs) {
            loop {
                let start = self.pos;
                while self.peek(0).is_some_and(|c| c != '\n') {
                    self.pos += 1;
                }
                let line: String = self.chars[start..self.pos].iter().collect();
                let at_end = self.peek(0).is_none();
                self.pos = (self.pos + 1).min(self.chars.len());
                let line = if strip_tabs {
                    line.trim_start_matches('\t')
                } else {
                    &line
                };
                if line == delimiter || at_end {
                    break;
                }
            }
        }
    }

    fn double_quoted(&mut self) {
        self.word.get_or_insert_default();
        while let Some(c) = self.peek(0) {
            self.pos += 1;
            match c {
                '"' => return,
                '\\' => match self.peek(0) {
                    Some(next @ ('$' | '`' | '"' | '\\')) => {
                        self.pos += 1;
                        self.push(next);
                    }
                    Some('\n') => self.pos += 1,
                    _ => self.push('\\'),
                },
                '$' => self.dollar(),
                '`' => self.backticks(),
                c => self.push(c),
            }
        }
    }

    /// After `$`: a command substitution runs its commands; `$((…))`, `${…}` and `$'…'` are
    /// read as text.
    fn dollar(&mut self) {
        match self.peek(0) {
            Some('(') if self.peek(1) == Some('(') => {
                let end = closing(self.chars, self.pos + 1, ')');
                self.pos = (end + 1).min(self.chars.len());
            }
            Some('(') => {
                let end = closing(self.chars, self.pos + 1, ')');
                let inner: String = self.chars[self.pos + 1..end].iter().collect();
                self.pos = (end + 1).min(self.chars.len());
                self.nested(&inner);
            }
            Some('{') => {
                let end = closing(self.chars, self.pos + 1, '}');
                let inner: String = self.chars[self.pos + 1..end].iter().collect();
                self.pos = (end + 1).min(self.chars.len());
                self.word.get_or_insert_default().push_str(&inner);
            }
            Some('\'') => {
                self.pos += 1;
                self.word.get_or_insert_default();
                while let Some(c) = self.peek(0) {
                    self.pos += 1;
                    match c {
                        '\'' => break,
                        '\\' => {
                            let escaped = self.peek(0).map_or('\\', |next| match next {
                                'n' => '\n',
                                't' => '\t',
                                other => other,
                            });
                            self.pos += 1;
                            self.push(escaped);
                        }
                        c => self.push(c),
                    }
                }
            }
            _ => {}
        }
    }

    fn backticks(&mut self) {
        let mut inner = String::new();
        while let Some(c) = self.peek(0) {
            self.pos += 1;
            match c {
                '`' => break,
                '\\' if matches!(self.peek(0), Some('`' | '\\' | '$')) => {
                    inner.push(self.peek(0).unwrap_or('\\'));
                    self.pos += 1;
                }
                c => inner.push(c),
            }
        }
        self.nested(&inner);
    }

    /// The commands of a substitution, before the command that holds it.
    fn nested(&mut self, inner: &str) {
        self.word.get_or_insert_default();
        if self.depth < MAX_DEPTH {
            self.commands.extend(simple_commands(inner, self.depth + 1));
        }
    }
}

/// Whether `word` is a file descriptor number before a redirection (`2>`).
fn is_fd(word: &str) -> bool {
    !word.is_empty() && word.bytes().all(|byte| byte.is_ascii_digit())
}

/// The index of the `close` that ends the group opened just before `start`, skipping quoted
/// text and nested groups; the end of `chars` when there is none.
fn closing(chars: &[char], start: usize, close: char) -> usize {
    let open = if close == ')' { '(' } else { '{' };
    let mut depth = 0usize;
    let mut pos = start;
    while let Some(&c) = chars.get(pos) {
        match c {
            '\\' => pos += 1,
            '\'' => {
                pos += 1;
                while chars.get(pos).is_some_and(|&c| c != '\'') {
                    pos += 1;
                }
            }
            '"' => {
                pos += 1;
                while let Some(&c) = chars.get(pos) {
                    match c {
                        '\\' => pos += 1,
                        '"' => break,
                        _ => {}
                    }
                    pos += 1;
                }
            }
            c if c == open => depth += 1,
            c if c == close => {
                if depth == 0 {
                    return pos;
                }
                depth -= 1;
            }
            _ => {}
        }
        pos += 1;
    }
    chars.len()
}
