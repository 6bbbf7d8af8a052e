//! The shipped markdown (`skills/*/SKILL.md`, `commands/*.md`) against the CLI it drives and the
//! client's rules for `!` lines (facts §b), without running `claude`.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use checkpoint_e2e::Plugin;
use serde_json::Value;

use crate::support::{checkpoint_command, path_str, scratch_repo};

/// One shipped markdown file.
struct Doc {
    path: PathBuf,
    is_skill: bool,
    frontmatter: Vec<(String, String)>,
    body: String,
}

impl Doc {
    fn field(&self, key: &str) -> Option<&str> {
        self.frontmatter
            .iter()
            .find(|(name, _)| name == key)
            .map(|(_, value)| value.as_str())
    }

    /// The `!` lines: `` !`<command>` `` alone on a line.
    fn bang_lines(&self) -> Vec<&str> {
        self.body
            .lines()
            .filter_map(|line| line.trim().strip_prefix("!`")?.strip_suffix('`'))
            .collect()
    }
}

/// Every `skills/*/SKILL.md` and `commands/*.md` of the bundle; panics when there are none.
#[track_caller]
fn shipped_docs(plugin: &Plugin) -> Vec<Doc> {
    let mut paths = Vec::new();
    for skill in read_dir_sorted(&plugin.dir().join("skills")) {
        paths.push((skill.join("SKILL.md"), true));
    }
    for command in read_dir_sorted(&plugin.dir().join("commands")) {
        if command.extension().is_some_and(|ext| ext == "md") {
            paths.push((command, false));
        }
    }
    let docs: Vec<Doc> = paths
        .into_iter()
        .map(|(path, is_skill)| {
            let text = fs::read_to_string(&path)
                .unwrap_or_else(|err| panic!("failed to read `{}`: {err}", path.display()));
            let (frontmatter, body) = split_frontmatter(&text);
            Doc {
                path,
                is_skill,
                frontmatter,
                body,
            }
        })
        .collect();
    assert!(
        docs.iter().any(|doc| doc.is_skill) && docs.iter().any(|doc| !doc.is_skill),
        "the bundle at `{}` ships no skills or no commands",
        plugin.dir().display()
    );
    docs
}

fn read_dir_sorted(dir: &Path) -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap_or_else(|err| panic!("failed to list `{}`: {err}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .collect();
    paths.sort();
    paths
}

/// The `key: value` lines of a leading `---` block, and the rest of the file.
fn split_frontmatter(text: &str) -> (Vec<(String, String)>, String) {
    let Some(rest) = text.strip_prefix("---\n") else {
        return (Vec::new(), text.to_owned());
    };
    let Some(end) = rest.find("\n---\n") else {
        return (Vec::new(), text.to_owned());
    };
    let fields = rest[..end]
        .lines()
        .filter_map(|line| line.split_once(':'))
        .map(|(key, value)| {
            let value = value.trim().trim_matches('"').to_owned();
            (key.trim().to_owned(), value)
        })
        .collect();
    (fields, rest[end + "\n---\n".len()..].to_owned())
}

/// The code in a markdown body: fenced blocks line by line, and inline code spans.
fn code_snippets(body: &str) -> Vec<String> {
    let mut snippets = Vec::new();
    let mut in_fence = false;
    for line in body.lines() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
            continue;
        }
        if in_fence {
            snippets.push(line.to_owned());
        } else {
            // Odd pieces between backticks are code spans (none of ours spans lines).
            snippets.extend(line.split('`').skip(1).step_by(2).map(str::to_owned));
        }
    }
    snippets
}

/// The subcommand words after each `checkpoint` (or `…/bin/checkpoint`) in `snippet`: the
/// first bare word, and the second one too when there is one.
fn mentioned_subcommands(snippet: &str) -> Vec<Vec<String>> {
    let words: Vec<&str> = snippet.split_whitespace().collect();
    let is_bare = |word: &&&str| {
        word.chars().next().is_some_and(|c| c.is_ascii_lowercase())
            && word
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
    };
    words
        .iter()
        .enumerate()
        .filter(|(_, word)| **word == "checkpoint" || word.ends_with("/bin/checkpoint"))
        .map(|(idx, _)| {
            words[idx + 1..]
                .iter()
                .take_while(is_bare)
                .take(2)
                .map(|word| (*word).to_owned())
                .collect::<Vec<_>>()
        })
        .filter(|mention| !mention.is_empty())
        .collect()
}

#[test]
fn shipped_markdown_has_frontmatter_with_a_description_and_skills_a_name() {
    let plugin = Plugin::find();
    for doc in shipped_docs(&plugin) {
        let path = doc.path.display();
        assert!(!doc.frontmatter.is_empty(), "`{path}` has no frontmatter");
        assert!(
            doc.field("description")
                .is_some_and(|description| description.len() > 20),
            "`{path}` has no useful `description`"
        );
        if doc.is_skill {
            // Without `name` the skill is not reachable by its slash name (facts §i).
            let dir_name = doc
                .path
                .parent()
                .and_then(Path::file_name)
                .unwrap()
                .to_str()
                .unwrap();
            assert_eq!(
                doc.field("name"),
                Some(dir_name),
                "`{path}`: `name` must match its directory"
            );
        }
    }
}

#[test]
fn every_checkpoint_subcommand_the_markdown_mentions_exists() {
    let plugin = Plugin::find();
    let mut mentions: BTreeSet<Vec<String>> = BTreeSet::new();
    for doc in shipped_docs(&plugin) {
        for snippet in code_snippets(&doc.body) {
            mentions.extend(mentioned_subcommands(&snippet));
        }
    }
    let firsts: BTreeSet<&str> = mentions.iter().map(|mention| mention[0].as_str()).collect();
    for expected in ["resume", "progress", "complete", "start", "init", "task"] {
        assert!(
            firsts.contains(expected),
            "the parser missed `checkpoint {expected}`: {firsts:?}"
        );
    }
    let repo = scratch_repo();
    let help = |args: &[&str]| {
        checkpoint_command(&plugin, repo.path(), repo.path())
            .args(args)
            .arg("--help")
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };
    let mut missing = Vec::new();
    for first in &firsts {
        let output = help(&[first]);
        if !output.status.success() {
            missing.push(format!("checkpoint {first}"));
            continue;
        }
        // Where the subcommand has subcommands of its own (`task`), the second word is one;
        // unless it also runs alone (`effects`, whose usage has a line without `<COMMAND>`).
        let stdout = String::from_utf8_lossy(&output.stdout);
        if !stdout.contains("Commands:") {
            continue;
        }
        let runs_alone = stdout
            .lines()
            .map(str::trim)
            .map(|line| line.strip_prefix("Usage:").map_or(line, str::trim))
            .any(|line| {
                line.starts_with(&format!("checkpoint {first}")) && !line.contains("<COMMAND>")
            });
        for mention in mentions.iter().filter(|mention| mention[0] == *first) {
            match mention.get(1) {
                Some(second) if !help(&[first, second]).status.success() => {
                    missing.push(format!("checkpoint {first} {second}"));
                }
                Some(_) => {}
                None if runs_alone => {}
                None => missing.push(format!("checkpoint {first} (without its subcommand)")),
            }
        }
    }
    assert!(
        missing.is_empty(),
        "the markdown mentions commands the CLI lacks: {missing:?}"
    );
}

#[test]
fn bang_lines_use_no_shell_variables() {
    let plugin = Plugin::find();
    let docs = shipped_docs(&plugin);
    let mut n_bang_lines = 0;
    for doc in &docs {
        for line in doc.bang_lines() {
            n_bang_lines += 1;
            // claude substitutes these two before the permission check; any other `$` makes the
            // check fail and drops the whole command (facts §b GOTCHA 1).
            let rest = line
                .replace("${CLAUDE_PLUGIN_ROOT}", "")
                .replace("$ARGUMENTS", "");
            assert!(
                !rest.contains('$') && !rest.contains('`'),
                "`{}`: the `!` line `{line}` has a shell expansion",
                doc.path.display()
            );
        }
    }
    let resume = docs
        .iter()
        .find(|doc| doc.field("name") == Some("checkpoint-resume"))
        .unwrap();
    assert_eq!(
        resume.bang_lines().len(),
        1,
        "the resume skill has no `!` line"
    );
    assert!(n_bang_lines >= 2, "found only {n_bang_lines} `!` lines");
}

/// Every `!` line, as claude would run it (`${CLAUDE_PLUGIN_ROOT}` and `$ARGUMENTS` replaced,
/// then `sh -c` in the project), exits 0 in every situation a user may type it in: a failing
/// line drops the command without a word (facts §b GOTCHA 2).
#[test]
fn bang_lines_exit_0_whatever_the_state() {
    let plugin = Plugin::find();
    let docs = shipped_docs(&plugin);
    let root = path_str(plugin.dir());

    let empty = scratch_repo();
    let interrupted = scratch_repo();
    let run_ok = |repo: &Path, args: &[&str]| {
        let output = checkpoint_command(&plugin, repo, repo)
            .args(args)
            .output()
            .unwrap();
        assert!(output.status.success(), "checkpoint {args:?}: {output:?}");
    };
    run_ok(
        interrupted.path(),
        &["init", "wf", "--phase", "design", "--phase", "build:design"],
    );
    run_ok(interrupted.path(), &["start", "design"]);
    let two = scratch_repo();
    for id in ["wf-a", "wf-b"] {
        run_ok(two.path(), &["init", id, "--phase", "design"]);
        run_ok(two.path(), &["--workflow", id, "start", "design"]);
    }
    let newer = scratch_repo();
    run_ok(newer.path(), &["init", "wf", "--phase", "design"]);
    let state_path = newer.path().join(".claude/checkpoints/wf/state.json");
    let mut state: Value = serde_json::from_str(&fs::read_to_string(&state_path).unwrap()).unwrap();
    state["schema_version"] = 99.into();
    fs::write(&state_path, state.to_string()).unwrap();
    let garbage = scratch_repo();
    run_ok(garbage.path(), &["init", "wf", "--phase", "design"]);
    fs::write(
        garbage.path().join(".claude/checkpoints/wf/state.json"),
        "{ not json",
    )
    .unwrap();
    fs::write(
        garbage.path().join(".claude/checkpoints/wf/state.json.bak"),
        "",
    )
    .unwrap();

    let situations = [
        ("no workflow", empty.path()),
        ("an interrupted workflow", interrupted.path()),
        ("two interrupted workflows", two.path()),
        ("a state of a newer version", newer.path()),
        ("a corrupt state", garbage.path()),
    ];
    let arguments = [
        "",
        "wf-b",
        "no-such-workflow",
        "\"two words\" x",
        "../../etc",
    ];
    let mut failures = Vec::new();
    for doc in &docs {
        for line in doc.bang_lines() {
            for (situation, repo) in situations {
                for args in arguments {
                    let command = line
                        .replace("${CLAUDE_PLUGIN_ROOT}", root)
                        .replace("$ARGUMENTS", args);
                    let output = std::process::Command::new("sh")
                        .args(["-c", &command])
                        .env_clear()
                        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
                        .env("HOME", repo)
                        .env("NO_COLOR", "1")
                        .current_dir(repo)
                        .stdin(Stdio::null())
                        .output()
                        .unwrap();
                    let stdout = String::from_utf8_lossy(&output.stdout);
                    if !output.status.success() || stdout.trim().is_empty() {
                        failures.push(format!(
                            "`{}` with {situation}, arguments {args:?}: {}\nstdout: {stdout}\nstderr: {}",
                            doc.path.file_name().unwrap().to_string_lossy(),
                            output.status,
                            String::from_utf8_lossy(&output.stderr)
                        ));
                    }
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} `!` line runs would drop their command:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// `checkpoint resume --format prompt --no-fail`, the resume skill's `!` line, on a state it
/// cannot read: exit 0 and a message that says what is wrong, not that there is nothing to do.
/// (Both streams of a `!` line reach the model; see `client.rs`.)
#[test]
fn resume_no_fail_with_a_state_of_a_newer_version_says_so() {
    let plugin = Plugin::find();
    let repo = scratch_repo();
    let run = |args: &[&str]| {
        checkpoint_command(&plugin, repo.path(), repo.path())
            .args(args)
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };
    assert!(
        run(&["init", "wf-new", "--phase", "design"])
            .status
            .success()
    );
    let state_path = repo.path().join(".claude/checkpoints/wf-new/state.json");
    let mut state: Value = serde_json::from_str(&fs::read_to_string(&state_path).unwrap()).unwrap();
    state["schema_version"] = 99.into();
    fs::write(&state_path, state.to_string()).unwrap();

    // Named, the workflow's problem is reported.
    let named = run(&["resume", "wf-new", "--format", "prompt", "--no-fail"]);
    assert_eq!(named.status.code(), Some(0), "{named:?}");
    let stdout = String::from_utf8_lossy(&named.stdout);
    assert!(stdout.contains("schema version 99"), "{stdout}");
    assert!(stdout.contains("upgrade `checkpoint`"), "{stdout}");

    // Unnamed, as `/checkpoint-resume` runs it.
    let unnamed = run(&["resume", "--format", "prompt", "--no-fail"]);
    assert_eq!(unnamed.status.code(), Some(0), "{unnamed:?}");
    let stdout = String::from_utf8_lossy(&unnamed.stdout);
    let both = format!("{stdout}{}", String::from_utf8_lossy(&unnamed.stderr));
    assert!(both.contains("wf-new"), "{both}");
    assert!(both.contains("schema version 99"), "{both}");
    // FIXME: today the workflow is skipped with a warning on stderr and stdout says "nothing to
    // resume", which contradicts it and invites starting over.
    assert!(!stdout.contains("nothing to resume"), "{both}");
}
