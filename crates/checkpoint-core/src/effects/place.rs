//! Where an effect runs and what it is: the directory a line's `cd`s move it to, the effect
//! command cut out of its line (git's `-C` folded into that directory), and the commands a
//! doubted line holds as raw text.

use crate::effects::{
    Effect, Place,
    builtin::{PROGRAMS, base_name, unwrapped},
};

/// The directory after `words` when they are a `cd`, `pushd` or `popd` (`None` inside: back to
/// the call's own, also when the target is only known by running: `cd`, `cd -`, `cd ~/x`,
/// `cd "$DIR"`); `None` for another command.
pub(crate) fn cd(words: &[String], dir: Option<&str>) -> Option<Option<String>> {
    let (first, args) = words.split_first()?;
    match base_name(first) {
        "cd" | "pushd" => {}
        "popd" => return Some(None),
        _ => return None,
    }
    let target = args
        .iter()
        .find(|word| !word.starts_with('-') || *word == "-")
        .map(String::as_str);
    Some(match target {
        None | Some("-") => None,
        Some(target) if target.starts_with('~') || target.contains('$') => None,
        Some(target) => Some(joined(dir, target)),
    })
}

/// `target` seen from `dir` (relative to the call's directory, or absolute).
fn joined(dir: Option<&str>, target: &str) -> String {
    match dir {
        Some(dir) if !target.starts_with('/') => {
            format!("{}/{target}", dir.trim_end_matches('/'))
        }
        _ => target.to_owned(),
    }
}

/// The effect of one command run in `dir`: git's `-C <dir>` folded into the directory (so that
/// `git -C vendor push` is `cd vendor && git push`), and what of the place counts.
pub(crate) fn effect(mut words: Vec<String>, dir: Option<&str>) -> Effect {
    let mut dir = dir.map(str::to_owned);
    let program = words.first().map(|word| base_name(word).to_owned());
    if program.as_deref() == Some("git") {
        let mut index = 1;
        while let Some(word) = words.get(index) {
            match word.as_str() {
                "-C" if index + 1 < words.len() => {
                    let target = words.remove(index + 1);
                    words.remove(index);
                    dir = Some(joined(dir.as_deref(), &target));
                }
                "-c" | "--git-dir" | "--work-tree" | "--namespace" | "--exec-path"
                | "--config-env" | "--super-prefix" | "--list-cmds" | "--attr-source" => {
                    index += 2;
                }
                word if word.starts_with('-') => index += 1,
                _ => break,
            }
        }
    }
    let place = match program.as_deref() {
        Some("git") => Place::Repository,
        Some("gh") if words.iter().any(|word| names_repo(word)) => Place::Anywhere,
        Some("gh") => Place::Repository,
        Some(
            "curl" | "wget" | "http" | "https" | "xh" | "xhs" | "docker" | "podman" | "kubectl"
            | "oc",
        ) => Place::Anywhere,
        _ => Place::Directory,
    };
    let mut text = words
        .iter()
        .map(|word| quoted(word))
        .collect::<Vec<_>>()
        .join(" ");
    crate::redact::text(&mut text);
    Effect {
        text: settled(&text),
        dir,
        place,
    }
}

/// A redacted command with the quotes taken off the words that only a secret made quoted
/// (`'ana:[REDACTED:password]'`, once `'ana:two words'`), so that no byte of it tells what the
/// secret held.
fn settled(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('\'') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let Some(close) = after.find('\'') else {
            out.push_str(&rest[open..]);
            return out;
        };
        let inner = &after[..close];
        if inner.contains("[REDACTED:") && !inner.contains(char::is_whitespace) {
            out.push_str(inner);
        } else {
            out.push('\'');
            out.push_str(inner);
            out.push('\'');
        }
        rest = &after[close + 1..];
    }
    out.push_str(rest);
    out
}

/// `gh -R owner/repo`, `--repo`: the repository is named, not the one it runs in.
fn names_repo(word: &str) -> bool {
    word == "-R" || word == "--repo" || word.starts_with("--repo=") || word.starts_with("-R")
}

/// A word as a shell reads it back: as it is when it holds nothing special, else in single
/// quotes (only its value's for `--flag=value`, as a person writes it).
pub(crate) fn quoted(word: &str) -> String {
    let is_plain = |text: &str| {
        !text.is_empty()
            && text.chars().all(|c| {
                c.is_ascii_alphanumeric()
                    || matches!(c, '-' | '_' | '.' | '/' | ':' | '=' | '@' | ',' | '+' | '%')
            })
    };
    if is_plain(word) {
        return word.to_owned();
    }
    let single = |text: &str| format!("'{}'", text.replace('\'', "'\\''"));
    match word.split_once('=') {
        Some((name, value)) if name.starts_with("--") && is_plain(name) => {
            format!("{name}={}", single(value))
        }
        _ => single(word),
    }
}

/// The commands a doubted line may hold, read as raw text: quotes and substitution marks
/// dropped, split at every operator, and from each word that names a built-in program on.
pub(crate) fn loose_commands(line: &str) -> Vec<Vec<String>> {
    let cleaned: String = line
        .chars()
        .map(|c| match c {
            ';' | '&' | '|' | '(' | ')' | '`' | '<' | '>' | '\n' | '{' | '}' => '\n',
            '\'' | '"' | '\\' | '$' => ' ',
            c => c,
        })
        .collect();
    let mut commands = Vec::new();
    for part in cleaned.split('\n') {
        let words: Vec<String> = part.split_whitespace().map(str::to_owned).collect();
        for start in 0..words.len() {
            if PROGRAMS.contains(&base_name(&words[start])) {
                commands.extend(unwrapped(&words[start..], None, 0));
            }
        }
    }
    commands
}
