//! `checkpoint completions`: shell completion scripts (bash, zsh, fish) that also complete the
//! phase, task and workflow ids of the current store, by calling the hidden
//! `checkpoint __complete <words>` where an id is expected.

use checkpoint_core::{PhaseId, WorkflowId};
use clap::Args;
use clap_complete::Shell;
use miette::{IntoDiagnostic, Result};

use crate::{ctx::Ctx, output};

/// Arguments of `checkpoint completions`.
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  checkpoint completions bash > ~/.local/share/bash-completion/completions/checkpoint
  checkpoint completions zsh > ~/.zfunc/_checkpoint     # a directory on $fpath
  checkpoint completions fish > ~/.config/fish/completions/checkpoint.fish")]
pub(crate) struct CompletionsArgs {
    /// The shell
    pub shell: Shell,
}

/// Arguments of the hidden `checkpoint __complete`, which the scripts call.
#[derive(Debug, Args)]
pub(crate) struct CompleteArgs {
    /// The words of the command line before the one being completed, after `checkpoint`
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub words: Vec<String>,
}

/// Writes the script completing `command` (the whole command line's, given by the caller so that
/// no command module imports `cli.rs` back).
pub(crate) fn completions(args: &CompletionsArgs, command: clap::Command) -> Result<()> {
    output::emit(&script(args.shell, command)).into_diagnostic()
}

/// The completion script of `shell`: clap's, with its main function renamed so that a function
/// of ours asks `checkpoint __complete` first and falls back to it when no id is expected.
pub(crate) fn script(shell: Shell, mut command: clap::Command) -> String {
    let mut bytes = Vec::new();
    clap_complete::generate(shell, &mut command, "checkpoint", &mut bytes);
    let script = String::from_utf8_lossy(&bytes).into_owned();
    match shell {
        Shell::Bash => format!("{}\n{BASH_IDS}", renamed_main(&script)),
        Shell::Zsh => {
            let script = renamed_main(&script);
            let dispatch = "\nif [ \"$funcstack[1]\" = \"_checkpoint\" ]; then";
            match script.rfind(dispatch) {
                Some(at) => format!("{}\n{ZSH_IDS}{}", &script[..at], &script[at..]),
                None => script,
            }
        }
        Shell::Fish => format!("{script}{FISH_IDS}"),
        _ => script,
    }
}

/// The script with clap's main function, `_checkpoint`, renamed `_checkpoint_static`.
fn renamed_main(script: &str) -> String {
    const MAIN: &str = "_checkpoint() {";
    match script.strip_prefix(MAIN) {
        Some(rest) => format!("_checkpoint_static() {{{rest}"),
        None => script.replacen(&format!("\n{MAIN}"), "\n_checkpoint_static() {", 1),
    }
}

const BASH_IDS: &str = r#"# The ids of the current store, where one is expected (`checkpoint __complete`).
_checkpoint() {
    local ids
    ids="$(checkpoint __complete "${COMP_WORDS[@]:1:COMP_CWORD-1}" 2>/dev/null)"
    if [[ -n "$ids" ]]; then
        local IFS=$'\n'
        COMPREPLY=( $(compgen -W "$ids" -- "${COMP_WORDS[COMP_CWORD]}") )
        return 0
    fi
    _checkpoint_static "$@"
}
"#;

const ZSH_IDS: &str = r#"# The ids of the current store, where one is expected (`checkpoint __complete`).
_checkpoint() {
    local -a ids
    ids=("${(@f)$(checkpoint __complete "${(@)words[2,CURRENT-1]}" 2>/dev/null)}")
    ids=(${ids:#})
    if (( ${#ids} )); then
        compadd -a ids
    else
        _checkpoint_static "$@"
    fi
}
"#;

const FISH_IDS: &str = r#"# The ids of the current store, where one is expected (`checkpoint __complete`); files are
# offered as before everywhere else.
function __fish_checkpoint_ids
    checkpoint __complete (commandline -opc)[2..-1] 2>/dev/null
end
complete -c checkpoint -f -n '__fish_checkpoint_ids | string length -q' -a '(__fish_checkpoint_ids)'
"#;

/// What is expected at the cursor, after `words`.
#[derive(Debug, PartialEq, Eq)]
enum Expected {
    Workflow,
    Phase,
    /// A task of this phase.
    Task(String),
}

/// Options whose next word is their value (so that it is not taken for a positional one).
const VALUED: &[&str] = &[
    "--format",
    "--color",
    "--dir",
    "--workflow",
    "-w",
    "--reason",
    "-r",
    "--note",
    "--by",
    "--artifact",
    "--file",
    "--output",
    "--until",
    "--as",
    "--phase",
    "--restart",
    "--commit-sha",
    "--plan",
    "--title",
    "--description",
    "--kind",
    "--max-sessions",
    "--max-wait",
    "--window",
];

/// What `words` (the command line before the cursor, after `checkpoint`) expect next, and the
/// workflow they name with `-w`/`--workflow`, if any.
fn expected(words: &[String]) -> (Option<Expected>, Option<String>) {
    let workflow = words
        .windows(2)
        .find(|pair| pair[0] == "-w" || pair[0] == "--workflow")
        .map(|pair| pair[1].clone())
        .or_else(|| {
            words
                .iter()
                .find_map(|word| word.strip_prefix("--workflow=").map(str::to_owned))
        });
    match words.last().map(String::as_str) {
        Some("-w" | "--workflow") => return (Some(Expected::Workflow), workflow),
        Some("--phase" | "--restart") => return (Some(Expected::Phase), workflow),
        Some(option) if VALUED.contains(&option) => return (None, workflow),
        _ => {}
    }
    let mut positional = Vec::new();
    let mut skip = false;
    for word in words {
        if skip {
            skip = false;
        } else if VALUED.contains(&word.as_str()) {
            skip = true;
        } else if !word.starts_with('-') {
            positional.push(word.as_str());
        }
    }
    let expected = match positional.as_slice() {
        [
            "start" | "progress" | "complete" | "fail" | "skip" | "approve" | "reject" | "replan"
            | "effect" | "rewind",
        ] => Some(Expected::Phase),
        ["use" | "resume" | "watch" | "run"] => Some(Expected::Workflow),
        ["task", "add" | "start" | "done" | "fail"] => Some(Expected::Phase),
        ["task", "start" | "done" | "fail", phase] => Some(Expected::Task((*phase).to_owned())),
        _ => None,
    };
    (expected, workflow)
}

/// Prints the ids expected after `args.words`, one a line; nothing when none is (or on any
/// error: a completion never complains).
pub(crate) fn ids(ctx: Option<Ctx>, args: &CompleteArgs) -> Result<()> {
    let (Some(expected), named) = expected(&args.words) else {
        return Ok(());
    };
    let Some(mut ctx) = ctx else {
        return Ok(());
    };
    if named.is_some() {
        ctx.workflow = named;
    }
    let ids: Vec<String> = match expected {
        Expected::Workflow => ctx
            .store
            .list()
            .unwrap_or_default()
            .iter()
            .map(WorkflowId::to_string)
            .collect(),
        Expected::Phase | Expected::Task(_) => {
            let Ok(loaded) = ctx.load() else {
                return Ok(());
            };
            match expected {
                Expected::Task(phase) => PhaseId::new(&phase)
                    .ok()
                    .and_then(|phase| loaded.workflow.phase(&phase))
                    .map(|phase| phase.tasks.iter().map(|task| task.id.to_string()).collect())
                    .unwrap_or_default(),
                _ => loaded
                    .workflow
                    .phases
                    .iter()
                    .map(|phase| phase.id.to_string())
                    .collect(),
            }
        }
    };
    if ids.is_empty() {
        return Ok(());
    }
    output::emit(&format!("{}\n", ids.join("\n"))).into_diagnostic()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(line: &str) -> Option<Expected> {
        let words: Vec<String> = line.split_whitespace().map(str::to_owned).collect();
        expected(&words).0
    }

    #[test]
    fn ids_are_expected_where_the_command_line_takes_one() {
        assert_eq!(of("start"), Some(Expected::Phase));
        assert_eq!(of("-w pay complete"), Some(Expected::Phase));
        assert_eq!(of("progress design"), None, "the note is free text");
        assert_eq!(of("fail --reason x"), Some(Expected::Phase));
        assert_eq!(of("task start"), Some(Expected::Phase));
        assert_eq!(of("task done build"), Some(Expected::Task("build".into())));
        assert_eq!(of("task add build"), None, "a new task's id is new");
        assert_eq!(of("status -w"), Some(Expected::Workflow));
        assert_eq!(of("use"), Some(Expected::Workflow));
        assert_eq!(of("effects --phase"), Some(Expected::Phase));
        assert_eq!(of(""), None);
        assert_eq!(of("--format"), None);
        assert_eq!(
            expected(&["-w".into(), "pay".into(), "start".into()])
                .1
                .as_deref(),
            Some("pay")
        );
    }
}
