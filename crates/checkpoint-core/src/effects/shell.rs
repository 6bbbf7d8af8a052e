//! A shell command line read the way a POSIX shell splits it, without running anything: the
//! simple commands it would run (in lists, pipelines, subshells, groups, command substitutions
//! and backticks), each as its words after quote removal.
//!
//! Redirections and their targets are left out, comments end at the line's end. What a command
//! reads on its standard input when the line says it (a here-document's body, a here-string, the
//! words of an `echo` or `printf` piped into it) is kept beside it, so that `bash <<EOF` or
//! `echo … | sh` can be read as the script it runs. What only running could tell (the value of
//! `$VAR`, the output of a substitution inside a word) is left as written, without the `$`.
//!
//! A line the reader cannot read to its end the way a shell would (an unclosed quote,
//! substitution or here-document) is read as far as it goes, and the doubt is reported, so that
//! the caller can look for effects in the raw text too (fail closed).

/// How deep substitutions nest before the rest is read as plain text (a bound on recursion).
pub(crate) const MAX_DEPTH: usize = 16;

/// One simple command: its words, and the text it reads on its standard input when the line
/// says what that is.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Simple {
    pub(crate) words: Vec<String>,
    pub(crate) stdin: Option<String>,
}

/// What the reader made of a script: its simple commands, and why it doubts it read them all.
#[derive(Debug, Clone, Default)]
pub(crate) struct Reading {
    pub(crate) commands: Vec<Simple>,
    pub(crate) doubt: Option<&'static str>,
}

/// The simple commands of `script`, in order, each as its words; commands inside substitutions
/// come before the command that holds them.
pub(crate) fn simple_commands(script: &str, depth: usize) -> Reading {
    let chars: Vec<char> = script.chars().collect();
    let mut lexer = Lexer {
        chars: &chars,
        pos: 0,
        depth,
        word: None,
        words: Vec::new(),
        commands: Vec::new(),
        skip_target: false,
        here_string: false,
        stdin: None,
        piped_from: None,
        pipes: Vec::new(),
        heredocs: Vec::new(),
        doubt: None,
    };
    lexer.run();
    lexer.pipe_stdin();
    Reading {
        commands: lexer.commands,
        doubt: lexer.doubt,
    }
}

struct Lexer<'a> {
    chars: &'a [char],
    pos: usize,
    depth: usize,
    /// The word being read (`Some("")` once an empty quoted word started).
    word: Option<String>,
    words: Vec<String>,
    commands: Vec<Simple>,
    /// The next word is a redirection's target, not an argument.
    skip_target: bool,
    /// That target is a here-string's word: the command's standard input.
    here_string: bool,
    /// The standard input of the command being read.
    stdin: Option<String>,
    /// The command whose output the command being read reads (after a `|`).
    piped_from: Option<usize>,
    /// Each pipe: the reading command's index and the writing one's.
    pipes: Vec<(usize, usize)>,
    /// Here-documents whose bodies start after the next newline: delimiter, strip tabs, and
    /// the index of the command that reads it (once that command has ended).
    heredocs: Vec<(String, bool, Option<usize>)>,
    /// Why the reader doubts it read the line as a shell would.
    doubt: Option<&'static str>,
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
                    } else if c == '|'
                        && self.peek(0) != Some('|')
                        && self.peek_back(2) != Some('|')
                    {
                        let ended = self.end_command();
                        self.piped_from = ended;
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
                    let mut closed = false;
                    while let Some(c) = self.peek(0) {
                        self.pos += 1;
                        if c == '\'' {
                            closed = true;
                            break;
                        }
                        self.push(c);
                    }
                    if !closed {
                        self.doubt("an unclosed quote");
                    }
                }
                '"' => self.double_quoted(),
                '$' => self.dollar(),
                '`' => self.backticks(),
                c => self.push(c),
            }
        }
        self.end_command();
        if self
            .heredocs
            .iter()
            .any(|(delimiter, ..)| !delimiter.is_empty())
        {
            self.doubt("a here-document without its body");
        }
    }

    fn peek_back(&self, behind: usize) -> Option<char> {
        self.pos
            .checked_sub(behind)
            .and_then(|at| self.chars.get(at).copied())
    }

    fn doubt(&mut self, why: &'static str) {
        self.doubt.get_or_insert(why);
    }

    /// Gives each command read after a `|` the words of the `echo` or `printf` before it, or
    /// that command's own standard input (`cat <<EOF | sh`), as its standard input.
    fn pipe_stdin(&mut self) {
        for (reader, writer) in std::mem::take(&mut self.pipes) {
            if self.commands[reader].stdin.is_some() {
                continue;
            }
            let writer = &self.commands[writer];
            let text = match writer
                .words
                .first()
                .map(|word| word.rsplit('/').next().unwrap_or(word))
            {
                Some("echo" | "printf") => Some(
                    writer.words[1..]
                        .iter()
                        .skip_while(|word| word.starts_with('-'))
                        .map(|word| word.replace("\\n", "\n"))
                        .collect::<Vec<_>>()
                        .join(" "),
                ),
                Some("cat") => writer.stdin.clone(),
                _ => None,
            };
            self.commands[reader].stdin = text;
        }
    }

    fn push(&mut self, c: char) {
        self.word.get_or_insert_default().push(c);
    }

    fn end_word(&mut self) {
        if let Some(word) = self.word.take() {
            if self.skip_target {
                self.skip_target = false;
                if std::mem::take(&mut self.here_string) {
                    self.stdin = Some(word);
                }
            } else {
                self.words.push(word);
            }
        }
    }

    /// Ends the command being read; its index, when it had words.
    fn end_command(&mut self) -> Option<usize> {
        self.end_word();
        self.skip_target = false;
        self.here_string = false;
        let stdin = self.stdin.take();
        let piped_from = self.piped_from.take();
        if self.words.is_empty() {
            return None;
        }
        let index = self.commands.len();
        self.commands.push(Simple {
            words: std::mem::take(&mut self.words),
            stdin,
        });
        if let Some(writer) = piped_from {
            self.pipes.push((index, writer));
        }
        for (_, _, reader) in &mut self.heredocs {
            reader.get_or_insert(index);
        }
        Some(index)
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
        self.here_string = op == "<<<";
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
        self.heredocs.push((delimiter, strip_tabs, None));
    }

    /// After a newline: reads the bodies of pending here-documents, each the standard input of
    /// the command that reads it.
    fn skip_heredoc_bodies(&mut self) {
        for (delimiter, strip_tabs, reader) in std::mem::take(&mut self.heredocs) {
            let mut body = String::new();
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
                if line == delimiter {
                    break;
                }
                body.push_str(line);
                body.push('\n');
                if at_end {
                    self.doubt("a here-document without its end");
                    break;
                }
            }
            if let Some(command) = reader.and_then(|index| self.commands.get_mut(index)) {
                command.stdin.get_or_insert(body);
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
        self.doubt("an unclosed quote");
    }

    /// After `$`: a command substitution runs its commands; `$((…))`, `${…}` and `$'…'` are
    /// read as text.
    fn dollar(&mut self) {
        match self.peek(0) {
            Some('(') if self.peek(1) == Some('(') => {
                let end = self.closing(self.pos + 1, ')');
                self.pos = (end + 1).min(self.chars.len());
            }
            Some('(') => {
                let end = self.closing(self.pos + 1, ')');
                let inner: String = self.chars[self.pos + 1..end].iter().collect();
                self.pos = (end + 1).min(self.chars.len());
                self.nested(&inner);
            }
            Some('{') => {
                let end = self.closing(self.pos + 1, '}');
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

    /// [`closing`], noting the doubt when the group never closes.
    fn closing(&mut self, start: usize, close: char) -> usize {
        let end = closing(self.chars, start, close);
        if end == self.chars.len() {
            self.doubt("an unclosed substitution");
        }
        end
    }

    fn backticks(&mut self) {
        let mut inner = String::new();
        let mut closed = false;
        while let Some(c) = self.peek(0) {
            self.pos += 1;
            match c {
                '`' => {
                    closed = true;
                    break;
                }
                '\\' if matches!(self.peek(0), Some('`' | '\\' | '$')) => {
                    inner.push(self.peek(0).unwrap_or('\\'));
                    self.pos += 1;
                }
                c => inner.push(c),
            }
        }
        if !closed {
            self.doubt("an unclosed backtick");
        }
        self.nested(&inner);
    }

    /// The commands of a substitution, before the command that holds it.
    fn nested(&mut self, inner: &str) {
        self.word.get_or_insert_default();
        if self.depth < MAX_DEPTH {
            let reading = simple_commands(inner, self.depth + 1);
            if let Some(doubt) = reading.doubt {
                self.doubt(doubt);
            }
            self.commands.extend(reading.commands);
        }
    }
}

/// Whether `word` is a file descriptor number before a redirection (`2>`).
fn is_fd(word: &str) -> bool {
    !word.is_empty() && word.bytes().all(|byte| byte.is_ascii_digit())
}

/// The index of the `close` that ends the group opened just before `start`, skipping quoted
/// text, here-document bodies and nested groups; the end of `chars` when there is none.
fn closing(chars: &[char], start: usize, close: char) -> usize {
    let open = if close == ')' { '(' } else { '{' };
    let mut depth = 0usize;
    let mut pos = start;
    let mut heredocs: Vec<(String, bool)> = Vec::new();
    while let Some(&c) = chars.get(pos) {
        match c {
            '\n' if !heredocs.is_empty() => {
                pos = skip_bodies(chars, pos + 1, &std::mem::take(&mut heredocs));
                continue;
            }
            '<' if chars.get(pos + 1) == Some(&'<') && chars.get(pos + 2) != Some(&'<') => {
                let (delimiter, strip, end) = heredoc_delimiter(chars, pos + 2);
                heredocs.push((delimiter, strip));
                pos = end;
                continue;
            }
            '#' if pos == start || chars.get(pos - 1).is_some_and(|c| c.is_whitespace()) => {
                while chars.get(pos).is_some_and(|&c| c != '\n') {
                    pos += 1;
                }
                continue;
            }
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

/// After `<<` at `at`: the delimiter (quotes removed), whether tabs are stripped (`<<-`), and
/// where the delimiter ends.
fn heredoc_delimiter(chars: &[char], at: usize) -> (String, bool, usize) {
    let mut pos = at;
    let strip = chars.get(pos) == Some(&'-');
    pos += usize::from(strip);
    while matches!(chars.get(pos), Some(' ' | '\t')) {
        pos += 1;
    }
    let mut delimiter = String::new();
    while let Some(&c) = chars.get(pos) {
        if c.is_whitespace() || matches!(c, ';' | '&' | '|' | '<' | '>' | '(' | ')') {
            break;
        }
        pos += 1;
        if !matches!(c, '\'' | '"' | '\\') {
            delimiter.push(c);
        }
    }
    (delimiter, strip, pos)
}

/// From the start of a line: past the bodies of `heredocs`, in order; the position after the
/// last delimiter line (the end of `chars` when one is missing).
fn skip_bodies(chars: &[char], mut pos: usize, heredocs: &[(String, bool)]) -> usize {
    for (delimiter, strip) in heredocs {
        loop {
            let start = pos;
            while chars.get(pos).is_some_and(|&c| c != '\n') {
                pos += 1;
            }
            let line: String = chars[start..pos].iter().collect();
            let at_end = pos >= chars.len();
            pos = (pos + 1).min(chars.len());
            let line = if *strip {
                line.trim_start_matches('\t')
            } else {
                &line
            };
            if line == delimiter || at_end {
                break;
            }
        }
    }
    pos
}
