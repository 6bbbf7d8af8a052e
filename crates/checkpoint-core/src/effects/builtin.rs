//! The built-in list of commands that change something outside the project (`git push`,
//! `gh pr create`, `npm publish`, a `curl` that posts, …), and the wrappers a command may run
//! behind (`env VAR=x`, `sudo -u`, `timeout 5`, `xargs`, `bash -c '…'`, an absolute path).

use crate::effects::shell::{MAX_DEPTH, Simple, simple_commands};

/// The commands `words` (one simple command, reading `stdin` when the line says what) runs once
/// its wrappers are taken off, each with the words as written (`/usr/bin/git`, not `git`); a
/// `sh -c` script, a shell reading a here-document, a here-string or a piped `echo`, an `eval`,
/// a `find -exec`, a `git submodule foreach` and an `npx` give the commands they run. None for a
/// command that runs nothing (`command -v git`).
pub(crate) fn unwrapped(words: &[String], stdin: Option<&str>, depth: usize) -> Vec<Vec<String>> {
    let mut rest = words;
    loop {
        while rest.first().is_some_and(|word| is_assignment(word)) {
            rest = &rest[1..];
        }
        let Some(first) = rest.first() else {
            return Vec::new();
        };
        let name = base_name(first);
        let after = &rest[1..];
        let skipped = match name {
            "env" => env_options(after),
            "sudo" | "doas" => {
                Options::new(&["u", "g", "h", "p", "C", "D", "r", "t", "U", "T", "R"])
                    .long(&[
                        "user",
                        "group",
                        "host",
                        "prompt",
                        "chdir",
                        "role",
                        "type",
                        "other-user",
                        "close-from",
                        "command-timeout",
                    ])
                    .skip(after)
            }
            "command" => {
                if after
                    .iter()
                    .take_while(|word| word.starts_with('-'))
                    .any(|word| word.contains(['v', 'V']))
                {
                    return Vec::new();
                }
                Options::new(&[]).skip(after)
            }
            "exec" => Options::new(&["a"]).skip(after),
            "nohup" | "builtin" | "then" | "do" | "else" | "elif" | "if" | "while" | "until"
            | "!" | "{" | "}" => Skip::Words(0),
            "time" => Options::new(&[]).skip(after),
            "nice" => Options::new(&["n"]).long(&["adjustment"]).skip(after),
            "ionice" => Options::new(&["c", "n", "p", "P", "u"])
                .long(&["class", "classdata"])
                .skip(after),
            "stdbuf" => Options::new(&["i", "o", "e"])
                .long(&["input", "output", "error"])
                .skip(after),
            "timeout" => match Options::new(&["s", "k"])
                .long(&["signal", "kill-after"])
                .skip(after)
            {
                // The duration follows the options.
                Skip::Words(n) => Skip::Words(n + 1),
                other => other,
            },
            "xargs" => Options::new(&["a", "d", "E", "e", "I", "i", "L", "l", "n", "P", "s"])
                .long(&[
                    "arg-file",
                    "delimiter",
                    "eof",
                    "replace",
                    "max-lines",
                    "max-args",
                    "max-procs",
                    "max-chars",
                    "process-slot-var",
                ])
                .skip(after),
            "bash" | "sh" | "zsh" | "dash" | "ksh" | "ash" | "mksh" => {
                return shell_script(rest, stdin, depth);
            }
            "eval" => return script(&after.join(" "), depth),
            "npx" | "bunx" => match runner(after, depth) {
                Ok(skip) => skip,
                Err(commands) => return commands,
            },
            "npm" | "pnpm" | "yarn" | "bun"
                if matches!(
                    after.first().map(String::as_str),
                    Some("exec" | "x" | "dlx")
                ) =>
            {
                match runner(&after[1..], depth) {
                    Ok(Skip::Words(n)) => Skip::Words(n + 1),
                    Ok(other) => other,
                    Err(commands) => return commands,
                }
            }
            "find" => {
                let mut commands = vec![rest.to_vec()];
                commands.extend(find_exec(after, depth));
                return commands;
            }
            "git" => {
                let mut commands = vec![rest.to_vec()];
                if let Some(text) = submodule_foreach(after) {
                    commands.extend(script(&text, depth));
                }
                return commands;
            }
            _ => return vec![rest.to_vec()],
        };
        match skipped {
            Skip::Words(n) => rest = &after[n.min(after.len())..],
            Skip::Script(text, n) => {
                let mut commands = script(&text, depth);
                if let Some(last) = commands.last_mut() {
                    last.extend(after[n.min(after.len())..].iter().cloned());
                }
                return commands;
            }
        }
    }
}

/// `npx`'s (or `npm exec`'s) options before the command it runs, or the commands of its `-c`
/// script.
fn runner(args: &[String], depth: usize) -> Result<Skip, Vec<Vec<String>>> {
    let mut index = 0;
    while let Some(word) = args.get(index) {
        match word.as_str() {
            "--" => return Ok(Skip::Words(index + 1)),
            "-c" | "--call" => {
                return Err(args
                    .get(index + 1)
                    .map(|text| script(text, depth))
                    .unwrap_or_default());
            }
            "-p" | "--package" | "-w" | "--workspace" => index += 2,
            word if word.starts_with("--call=") => {
                return Err(script(&word["--call=".len()..], depth));
            }
            word if word.starts_with('-') => index += 1,
            _ => break,
        }
    }
    Ok(Skip::Words(index))
}

/// The commands a `find` runs: each `-exec`/`-execdir`/`-ok`/`-okdir` up to its `;` or `+`.
fn find_exec(args: &[String], depth: usize) -> Vec<Vec<String>> {
    let mut commands = Vec::new();
    let mut index = 0;
    while let Some(word) = args.get(index) {
        index += 1;
        if matches!(word.as_str(), "-exec" | "-execdir" | "-ok" | "-okdir") {
            let start = index;
            while args
                .get(index)
                .is_some_and(|word| word != ";" && word != "+")
            {
                index += 1;
            }
            if depth < MAX_DEPTH {
                commands.extend(unwrapped(&args[start..index], None, depth + 1));
            }
        }
    }
    commands
}

/// The script of `git [options] submodule [--quiet] foreach [--recursive] <command>…`.
fn submodule_foreach(args: &[String]) -> Option<String> {
    let at = git_command_at(args);
    let rest = args.get(at..)?;
    let (first, rest) = rest.split_first()?;
    if first != "submodule" {
        return None;
    }
    let rest: Vec<&String> = rest
        .iter()
        .skip_while(|word| word.starts_with('-'))
        .collect();
    let (command, rest) = rest.split_first()?;
    if *command != "foreach" {
        return None;
    }
    let words: Vec<&str> = rest
        .iter()
        .skip_while(|word| word.starts_with('-'))
        .map(|word| word.as_str())
        .collect();
    (!words.is_empty()).then(|| words.join(" "))
}

/// Where git's subcommand is, past its global options.
fn git_command_at(args: &[String]) -> usize {
    let mut index = 0;
    while let Some(word) = args.get(index) {
        match word.as_str() {
            "-C" | "-c" | "--git-dir" | "--work-tree" | "--namespace" | "--exec-path"
            | "--config-env" | "--super-prefix" | "--list-cmds" | "--attr-source" => index += 2,
            word if word.starts_with('-') => index += 1,
            _ => break,
        }
    }
    index
}

/// Whether a command asks for its help (`--help`, `-h`), which changes nothing.
fn asks_help(args: &[String]) -> bool {
    args.iter()
        .take_while(|word| *word != "--")
        .any(|word| word == "--help" || word == "-h")
}

/// The built-in programs, for a look at text the reader doubts.
pub(crate) const PROGRAMS: &[&str] = &[
    "git",
    "gh",
    "npm",
    "pnpm",
    "yarn",
    "cargo",
    "docker",
    "podman",
    "kubectl",
    "oc",
    "helm",
    "terraform",
    "tofu",
    "curl",
    "wget",
    "http",
    "https",
    "xh",
    "xhs",
];

/// Whether one command (its wrappers off, its words as [`unwrapped`] gives them) is on the
/// built-in list.
pub(crate) fn is_builtin_effect(words: &[String]) -> bool {
    let Some((first, args)) = words.split_first() else {
        return false;
    };
    if asks_help(args) {
        return false;
    }
    match base_name(first) {
        "git" => git(args),
        "gh" => gh(args),
        "npm" | "pnpm" | "yarn" => {
            let words = positionals(
                args,
                &[
                    "registry",
                    "workspace",
                    "w",
                    "C",
                    "prefix",
                    "tag",
                    "access",
                    "otp",
                ],
            );
            !matches!(
                words.first().copied(),
                Some("run" | "run-script" | "view" | "info" | "show" | "help")
            ) && words.contains(&"publish")
                && !dry_run(args)
        }
        "cargo" => {
            let args: Vec<String> = args
                .iter()
                .filter(|word| !word.starts_with('+'))
                .cloned()
                .collect();
            positionals(&args, &["Z", "C"])
                .first()
                .is_some_and(|word| *word == "publish")
                && !dry_run(&args)
                && !args.iter().any(|word| word == "-n")
        }
        "docker" | "podman" => {
            let found = positionals(
                args,
                &["H", "c", "l", "context", "config", "host", "log-level"],
            );
            matches!(
                found.as_slice(),
                ["push", ..] | ["image", "push", ..] | ["manifest", "push", ..]
            )
        }
        "kubectl" | "oc" => kubectl(args),
        "helm" => {
            matches!(
                positionals(args, &["n", "namespace", "kube-context", "kubeconfig"])
                    .first()
                    .copied(),
                Some("install" | "upgrade" | "uninstall" | "delete" | "del" | "un" | "rollback")
            ) && !dry_run(args)
        }
        "terraform" | "tofu" => {
            matches!(
                positionals(args, &[]).first().copied(),
                Some("apply" | "destroy")
            )
        }
        "curl" => curl(args),
        "wget" => wget(args),
        "http" | "https" | "xh" | "xhs" => httpie(args),
        _ => false,
    }
}

/// The commands of a script's text.
pub(crate) fn script(text: &str, depth: usize) -> Vec<Vec<String>> {
    if depth >= MAX_DEPTH {
        return Vec::new();
    }
    unwrap_all(&simple_commands(text, depth + 1).commands, depth + 1)
}

/// The commands of simple commands, their wrappers off.
pub(crate) fn unwrap_all(commands: &[Simple], depth: usize) -> Vec<Vec<String>> {
    commands
        .iter()
        .flat_map(|command| unwrapped(&command.words, command.stdin.as_deref(), depth))
        .collect()
}

/// `bash -c '<script>'` (with any flags, `-lc`, `-o pipefail`): the script's commands; a shell
/// running a file is that file's command; a shell with neither reads its script on its
/// standard input (a here-document, a here-string, a piped `echo`).
fn shell_script(words: &[String], stdin: Option<&str>, depth: usize) -> Vec<Vec<String>> {
    let mut command_flag = false;
    let mut index = 1;
    while let Some(word) = words.get(index) {
        if word == "--" {
            index += 1;
            break;
        }
        if word.starts_with("--") {
            index += 1;
            continue;
        }
        let Some(flags) = word
            .strip_prefix(['-', '+'])
            .filter(|flags| !flags.is_empty())
        else {
            break;
        };
        command_flag |= flags.contains('c');
        index += if flags.contains('o') || flags.contains('O') {
            2
        } else {
            1
        };
    }
    match (command_flag, words.get(index)) {
        (true, Some(text)) => script(text, depth),
        (false, Some(_)) => vec![words[index..].to_vec()],
        (_, None) => stdin.map(|text| script(text, depth)).unwrap_or_default(),
    }
}

/// How many words of options a wrapper takes before its command, or an `env -S` script.
enum Skip {
    Words(usize),
    /// The script's text, and the words it consumed.
    Script(String, usize),
}

/// A wrapper's options: the short ones that take a value, the long ones that do.
struct Options<'a> {
    short: &'a [&'a str],
    long: &'a [&'a str],
}

impl<'a> Options<'a> {
    fn new(short: &'a [&'a str]) -> Self {
        Self { short, long: &[] }
    }

    fn long(self, long: &'a [&'a str]) -> Self {
        Self { long, ..self }
    }

    /// How many words of `args` are options (and their values) before the command.
    fn skip(&self, args: &[String]) -> Skip {
        let mut index = 0;
        while let Some(word) = args.get(index) {
            index += 1;
            if word == "--" {
                break;
            }
            if let Some(long) = word.strip_prefix("--") {
                if !long.contains('=') && self.long.contains(&long) {
                    index += 1;
                }
                continue;
            }
            let Some(cluster) = word.strip_prefix('-').filter(|cluster| !cluster.is_empty()) else {
                index -= 1;
                break;
            };
            // `-n5`, `-u root`, `-Eu root`: a flag that takes a value ends the cluster.
            for (at, flag) in cluster.char_indices() {
                if self.short.iter().any(|short| short.starts_with(flag)) {
                    if at + flag.len_utf8() == cluster.len() {
                        index += 1;
                    }
                    break;
                }
            }
        }
        Skip::Words(index)
    }
}

/// `env`'s options, assignments and `-S` script.
fn env_options(args: &[String]) -> Skip {
    let mut index = 0;
    while let Some(word) = args.get(index) {
        match word.as_str() {
            "--" => return Skip::Words(index + 1),
            "-S" | "--split-string" => {
                return match args.get(index + 1) {
                    Some(text) => Skip::Script(text.clone(), index + 2),
                    None => Skip::Words(index + 1),
                };
            }
            "-u" | "--unset" | "-C" | "--chdir" => index += 2,
            word if is_assignment(word) => index += 1,
            word if word.starts_with("-S") => {
                return Skip::Script(word[2..].to_owned(), index + 1);
            }
            word if word.starts_with("--split-string=") => {
                return Skip::Script(word["--split-string=".len()..].to_owned(), index + 1);
            }
            word if word.starts_with('-') && word.len() > 1 => index += 1,
            _ => break,
        }
    }
    Skip::Words(index)
}

/// `NAME=value` (or `NAME+=value`) before a command.
fn is_assignment(word: &str) -> bool {
    let Some((name, _)) = word.split_once('=') else {
        return false;
    };
    let name = name.strip_suffix('+').unwrap_or(name);
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|first| first.is_ascii_alphabetic() || first == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `/usr/bin/git` is `git`.
pub(crate) fn base_name(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

/// The words that are not options, skipping the value after each option named in `with_value`
/// (one letter for `-x value`, a longer name for `--name value`).
fn positionals<'w>(args: &'w [String], with_value: &[&str]) -> Vec<&'w str> {
    let mut found = Vec::new();
    let mut index = 0;
    while let Some(word) = args.get(index) {
        index += 1;
        if word == "--" {
            found.extend(args[index..].iter().map(String::as_str));
            break;
        }
        if let Some(flag) = word.strip_prefix('-').filter(|flag| !flag.is_empty()) {
            let name = flag.strip_prefix('-').unwrap_or(flag);
            let short = !flag.starts_with('-') && flag.len() == 1;
            let long = flag.starts_with('-') && name.len() > 1 && !name.contains('=');
            if (short || long) && with_value.contains(&name) {
                index += 1;
            }
            continue;
        }
        found.push(word.as_str());
    }
    found
}

fn dry_run(args: &[String]) -> bool {
    args.iter().any(|word| {
        word == "--dry-run" || word.starts_with("--dry-run=") && word != "--dry-run=none"
    })
}

/// `git [-C dir] [-c k=v] … push`, unless `--dry-run` or `-n`.
fn git(args: &[String]) -> bool {
    let index = git_command_at(args);
    let Some(("push", rest)) = args
        .get(index..)
        .and_then(|rest| rest.split_first())
        .map(|(first, rest)| (first.as_str(), rest))
    else {
        return false;
    };
    !rest.iter().take_while(|word| *word != "--").any(|word| {
        word == "--dry-run"
            || (word.starts_with('-')
                && !word.starts_with("--")
                && word[1..].chars().all(|c| "nvqfuad".contains(c))
                && word.contains('n'))
    })
}

/// `gh pr create|merge|comment|review`, `gh issue create|comment|close`, `gh release create`,
/// and `gh api` with a write method or fields.
fn gh(args: &[String]) -> bool {
    let words = positionals(args, &["R", "repo", "hostname"]);
    match words.as_slice() {
        [
            "pr",
            "create" | "merge" | "comment" | "review" | "close" | "reopen" | "edit" | "ready",
            ..,
        ]
        | [
            "issue",
            "create" | "comment" | "close" | "reopen" | "edit" | "delete" | "transfer",
            ..,
        ]
        | ["release", "create" | "delete" | "upload" | "edit", ..]
        | [
            "repo",
            "create" | "delete" | "fork" | "rename" | "archive" | "edit",
            ..,
        ] => true,
        ["api", ..] => args.iter().enumerate().any(|(index, word)| {
            let method = match word.as_str() {
                "-X" | "--method" => args.get(index + 1).map(String::as_str),
                word => word
                    .strip_prefix("--method=")
                    .or_else(|| word.strip_prefix("-X").filter(|m| !m.is_empty())),
            };
            method.is_some_and(is_write_method)
                || matches!(
                    word.as_str(),
                    "-f" | "-F" | "--field" | "--raw-field" | "--input"
                )
                || word.starts_with("--field=")
                || word.starts_with("--raw-field=")
        }),
        _ => false,
    }
}

/// `kubectl apply|create|delete|patch|rollout …` (not `rollout status|history`), unless a dry
/// run on the client or the server.
fn kubectl(args: &[String]) -> bool {
    let words = positionals(
        args,
        &[
            "n",
            "s",
            "l",
            "f",
            "o",
            "c",
            "namespace",
            "context",
            "kubeconfig",
            "cluster",
            "user",
            "server",
            "token",
        ],
    );
    let write = match words.as_slice() {
        ["rollout", "status" | "history", ..] => false,
        [
            "apply" | "create" | "delete" | "patch" | "rollout" | "replace" | "scale" | "set"
            | "label" | "annotate" | "edit" | "expose" | "drain" | "cordon" | "uncordon" | "taint",
            ..,
        ] => true,
        _ => false,
    };
    write && !dry_run(args)
}

fn is_write_method(method: &str) -> bool {
    !matches!(
        method.to_ascii_uppercase().as_str(),
        "GET" | "HEAD" | "OPTIONS" | "TRACE"
    )
}

/// `curl` with a write method (`-X POST`, `-XPOST`, `--request=post`) or a body (`-d`,
/// `--data*`, `--json`, `-F`, `--form*`, `-T`), unless `-G` makes the data a query.
fn curl(args: &[String]) -> bool {
    /// Short options that take a value (besides the ones looked at).
    const VALUED: &str = "AbcCDeEHKmoQrtuUwxYyzP";
    let mut method = None;
    let mut body = false;
    let mut get = false;
    let mut index = 0;
    while let Some(word) = args.get(index) {
        index += 1;
        if word == "--" {
            break;
        }
        if let Some(long) = word.strip_prefix("--") {
            let (name, value) = match long.split_once('=') {
                Some((name, value)) => (name, Some(value.to_owned())),
                None => (long, None),
            };
            match name {
                "request" | "X" => {
                    method = value.or_else(|| args.get(index).cloned());
                    index += 1;
                }
                "json" | "form" | "form-string" | "upload-file" => body = true,
                name if name.starts_with("data") => body = true,
                "get" => get = true,
                "head" => method = Some("HEAD".into()),
                _ => {}
            }
            continue;
        }
        let Some(cluster) = word.strip_prefix('-').filter(|cluster| !cluster.is_empty()) else {
            continue;
        };
        for (at, flag) in cluster.char_indices() {
            let rest = &cluster[at + 1..];
            match flag {
                'X' => {
                    method = if rest.is_empty() {
                        args.get(index).cloned()
                    } else {
                        Some(rest.to_owned())
                    };
                    index += usize::from(rest.is_empty());
                    break;
                }
                'd' | 'F' | 'T' => {
                    body = true;
                    index += usize::from(rest.is_empty());
                    break;
                }
                'G' => get = true,
                'I' => method = Some("HEAD".into()),
                flag if VALUED.contains(flag) => {
                    index += usize::from(rest.is_empty());
                    break;
                }
                _ => {}
            }
        }
    }
    match method {
        Some(method) => is_write_method(&method),
        None => body && !get,
    }
}

/// `wget` with `--post-data`, `--post-file`, `--body-*` or a write `--method`.
fn wget(args: &[String]) -> bool {
    args.iter().enumerate().any(|(index, word)| {
        let method = match word.as_str() {
            "--method" => args.get(index + 1).map(String::as_str),
            word => word.strip_prefix("--method="),
        };
        method.is_some_and(is_write_method)
            || ["--post-data", "--post-file", "--body-data", "--body-file"]
                .iter()
                .any(|flag| word == flag || word.starts_with(&format!("{flag}=")))
    })
}

/// HTTPie (`http`, `https`, `xh`): a write `METHOD` before the URL, or data items after it
/// (`x=y`, `x:=y`, `x@file`), unless `--offline`.
fn httpie(args: &[String]) -> bool {
    if args.iter().any(|word| word == "--offline") {
        return false;
    }
    let words = positionals(
        args,
        &[
            "a",
            "A",
            "o",
            "p",
            "s",
            "P",
            "auth",
            "auth-type",
            "output",
            "print",
            "style",
            "session",
            "session-read-only",
            "verify",
            "cert",
            "cert-key",
            "proxy",
            "timeout",
            "pretty",
            "format-options",
            "max-redirects",
            "boundary",
            "default-scheme",
            "ssl",
            "ciphers",
            "response-charset",
            "response-mime",
            "raw",
        ],
    );
    let (method, items) = match words.split_first() {
        Some((first, rest)) if is_method(first) => {
            (Some(*first), rest.get(1..).unwrap_or_default())
        }
        Some((_, rest)) => (None, rest),
        None => return false,
    };
    match method {
        Some(method) => is_write_method(method),
        None => {
            items.iter().any(|item| is_data_item(item))
                || args
                    .iter()
                    .any(|word| word == "--raw" || word.starts_with("--raw="))
        }
    }
}

/// An HTTP method's name, in any case.
fn is_method(word: &str) -> bool {
    matches!(
        word.to_ascii_uppercase().as_str(),
        "GET" | "HEAD" | "POST" | "PUT" | "PATCH" | "DELETE" | "OPTIONS" | "TRACE" | "CONNECT"
    )
}

/// An HTTPie request item that sends data: `field=value`, `field:=json`, `field@file`,
/// `field=@file`, `field:=@file` (not `name==query` nor `Header:value`).
fn is_data_item(item: &str) -> bool {
    let Some(at) = item.find(['=', ':', '@']) else {
        return false;
    };
    let rest = &item[at..];
    if at == 0 {
        return false;
    }
    if rest.starts_with("==") {
        return false;
    }
    rest.starts_with(":=") || rest.starts_with('=') || rest.starts_with('@')
}
