//! Effect patterns, from a plan's phases (`effects = [...]`) or `config.toml` (`[effects]
//! commands`): globs over a Bash command or an MCP tool's name; a leading `!` removes.

/// One pattern: `*` is any run of characters (spaces and `/` too), `?` one character, `\`
/// makes the next character plain; everything else matches itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Pattern {
    /// `!…`: what it matches is not an effect.
    pub(crate) removes: bool,
    /// It names MCP tools (`mcp__…`) rather than Bash commands.
    pub(crate) mcp: bool,
    glob: Vec<char>,
}

impl Pattern {
    pub(crate) fn new(text: &str) -> Self {
        let text = text.trim();
        let (removes, glob) = match text.strip_prefix('!') {
            Some(rest) => (true, rest.trim_start()),
            None => (false, text),
        };
        let glob = super::normalized(glob);
        Self {
            removes,
            mcp: glob.starts_with("mcp__"),
            glob: glob.chars().collect(),
        }
    }

    /// Whether the whole of `text` matches.
    pub(crate) fn matches(&self, text: &str) -> bool {
        let text: Vec<char> = text.chars().collect();
        glob_match(&self.glob, &text)
    }
}

/// Matches `glob` against the whole of `text`, backtracking to the last `*` only (linear in
/// practice, never exponential).
fn glob_match(glob: &[char], text: &[char]) -> bool {
    let (mut g, mut t) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        match glob.get(g) {
            Some('*') => {
                star = Some((g, t));
                g += 1;
                continue;
            }
            Some('?') => {
                g += 1;
                t += 1;
                continue;
            }
            Some('\\') if glob.get(g + 1) == Some(&text[t]) => {
                g += 2;
                t += 1;
                continue;
            }
            Some(&c) if c != '\\' && c == text[t] => {
                g += 1;
                t += 1;
                continue;
            }
            _ => {}
        }
        match star {
            Some((star_g, star_t)) => {
                g = star_g + 1;
                t = star_t + 1;
                star = Some((star_g, star_t + 1));
            }
            None => return false,
        }
    }
    glob[g..].iter().all(|&c| c == '*')
}
