//! `checkpoint setup <client>`: writes a client's hook configuration (this binary called for
//! each event it needs) and its MCP server entry for `checkpoint mcp`, in the project's files or
//! the user's; idempotent, keeping every setting the user had, `--remove` taking out only its
//! own entries, `--dry-run` printing the change. Each client's writer is its `setup.rs`
//! (`clients/<client>/setup.rs`), on the shared pieces of `clients/setup.rs`.

use std::path::{Path, PathBuf};

use clap::Args;
use miette::{IntoDiagnostic, Result, miette};

use crate::{
    clients::{
        self, Client,
        setup::{MAX_CONFIG_BYTES, Plan, Scope, Target},
    },
    ctx, env, output,
};

/// Arguments of `checkpoint setup`.
#[derive(Debug, Args)]
pub(crate) struct SetupArgs {
    /// The client to set up: `claude`, `codex` or `gemini`
    #[arg(value_parser = crate::clients::client_parser())]
    pub client: Client,
    /// Whose files: this project's, or the user's (every project)
    #[arg(long, value_enum, default_value_t = Scope::Project)]
    pub scope: Scope,
    /// Print the change and write nothing
    #[arg(long)]
    pub dry_run: bool,
    /// Take out the entries `setup` wrote, and only those
    #[arg(long)]
    pub remove: bool,
}

/// The command a project's files (which a team commits) run: `checkpoint`, found on each
/// teammate's PATH, when the `checkpoint` this machine's PATH finds is this binary; else this
/// binary's absolute path, said to be this machine's only.
fn project_command(binary: &Path, path: Option<&std::ffi::OsStr>) -> String {
    let found = path.and_then(|path| {
        std::env::split_paths(path)
            .filter(|dir| dir.is_absolute())
            .map(|dir| dir.join("checkpoint"))
            .find(|program| std::fs::metadata(program).is_ok_and(|meta| meta.is_file()))
    });
    match found {
        Some(program) if std::fs::canonicalize(&program).is_ok_and(|real| real == binary) => {
            return "checkpoint".to_owned();
        }
        Some(program) => output::warn(&format!(
            "the `checkpoint` on your PATH is `{}`, not this one: the project's files name `{}`, which a teammate's machine does not have; run the `checkpoint` on your PATH (`checkpoint setup …`) to write `checkpoint` instead",
            program.display(),
            binary.display()
        )),
        None => output::warn(&format!(
            "no `checkpoint` on your PATH: the project's files name `{}`, which a teammate's machine does not have; install it on the PATH (`cargo xtask install`, or the plugin's binary) and run `checkpoint setup` again to write `checkpoint` instead",
            binary.display()
        )),
    }
    binary.to_string_lossy().into_owned()
}

/// Runs `checkpoint setup`.
pub(crate) fn setup(args: &SetupArgs, dir: Option<&Path>) -> Result<()> {
    let cwd = ctx::current_dir()?;
    let location = ctx::Location::find(cwd, dir);
    let binary = std::env::current_exe()
        .and_then(std::fs::canonicalize)
        .into_diagnostic()?;
    let binary = match args.scope {
        // The user's own files may name this machine's binary.
        Scope::User => binary.to_string_lossy().into_owned(),
        Scope::Project => project_command(&binary, std::env::var_os(env::PATH).as_deref()),
    };
    let target = Target {
        scope: args.scope,
        project_root: location.project_root,
        binary,
        remove: args.remove,
        env: |name| std::env::var_os(name),
    };
    let plan = clients::home(args.client).setup(&target)?;
    apply(args, &plan)
}

/// Computes every file's new text first (so a malformed file stops the whole setup before
/// anything is written), then prints the diff or writes the files.
fn apply(args: &SetupArgs, plan: &Plan<'_>) -> Result<()> {
    let mut changes = Vec::new();
    for edit in &plan.edits {
        let path = writable(&edit.path, args)?;
        let before = read(&path)?;
        let after = (edit.edit)(before.as_deref()).map_err(|malformed| {
            let place = match malformed.line {
                Some(line) => format!("{}:{line}", path.display()),
                None => path.display().to_string(),
            };
            miette!(
                "{place}: {}; fix the file (or move it aside) and run `checkpoint setup {}` again; nothing was changed",
                malformed.message,
                args.client.name()
            )
        })?;
        match after {
            Some(after) if before.as_deref() != Some(after.as_str()) => {
                changes.push((path, before, after));
            }
            _ => {}
        }
    }
    let mut report = String::new();
    if changes.is_empty() {
        report.push_str(if args.remove {
            "Nothing to remove: no entry of `checkpoint setup` was found.\n"
        } else {
            "Already set up: nothing to change.\n"
        });
    }
    for (path, before, after) in &changes {
        let path = path.as_path();
        if args.dry_run {
            let before = before.as_deref().unwrap_or("");
            let name = path.display().to_string();
            let diff = similar::TextDiff::from_lines(before, after.as_str());
            report.push_str(
                &diff
                    .unified_diff()
                    .context_radius(3)
                    .header(&name, &name)
                    .to_string(),
            );
        } else {
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)
                    .map_err(|err| miette!("failed to create `{}`: {err}", parent.display()))?;
            }
            if args.remove && holds_nothing(after) {
                // Nothing of the user's is left: the file `setup` created goes.
                std::fs::remove_file(path)
                    .map_err(|err| miette!("failed to remove `{}`: {err}", path.display()))?;
                report.push_str(&format!("removed {}\n", path.display()));
                continue;
            }
            checkpoint_core::write_atomic(path, after.as_bytes(), true)?;
            report.push_str(&format!("wrote {}\n", path.display()));
        }
    }
    if args.dry_run && !changes.is_empty() {
        report.push_str("(dry run: nothing was written)\n");
    }
    if !args.remove && !plan.needs.is_empty() {
        report.push_str("\nBefore the hooks run:\n");
        for need in &plan.needs {
            report.push_str(&format!("- {need}\n"));
        }
    }
    output::emit(&report).into_diagnostic()
}

/// Whether a file's text holds nothing at all: no entry, no comment (`{}`, or blank).
fn holds_nothing(text: &str) -> bool {
    let text = text.trim();
    text.is_empty()
        || text
            .strip_prefix('{')
            .and_then(|inside| inside.strip_suffix('}'))
            .is_some_and(|inside| inside.trim().is_empty())
}

/// The file to write for `path`: itself, or the target of the symbolic link it is (so that a
/// settings file linked to the user's dotfiles gets the change, and stays a link). A link to
/// nowhere and a read-only file are refused, before anything is written.
fn writable(path: &Path, args: &SetupArgs) -> Result<PathBuf> {
    let fix = format!(
        "nothing was changed; run `checkpoint setup {} --dry-run` to see the change and make it yourself",
        args.client.name()
    );
    let target = match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => {
            std::fs::canonicalize(path).map_err(|err| {
                miette!(
                    "`{}` is a symbolic link to a file that cannot be reached ({err}); {fix}",
                    path.display()
                )
            })?
        }
        _ => path.to_owned(),
    };
    if args.dry_run {
        return Ok(target);
    }
    match std::fs::metadata(&target) {
        Ok(meta) if meta.permissions().readonly() => Err(miette!(
            "`{}` is read-only; {fix}, or make it writable (`chmod u+w`) and run again",
            target.display(),
        )),
        _ => Ok(target),
    }
}

/// A client's file as text, `None` when it does not exist.
fn read(path: &Path) -> Result<Option<String>> {
    let Some(bytes) = checkpoint_core::read_foreign(path, MAX_CONFIG_BYTES)? else {
        return Ok(None);
    };
    String::from_utf8(bytes).map(Some).map_err(|_| {
        miette!(
            "`{}` is not UTF-8 text; fix it (or move it aside) and run `checkpoint setup` again; nothing was changed",
            path.display()
        )
    })
}
