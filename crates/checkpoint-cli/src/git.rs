//! Git checkpoints: commit the work after completed phases (the OrchestKit mini-commit rule),
//! never amending or rewriting history.

use std::{
    fmt, fs,
    io::{Read, Write},
    path::{Component, Path, PathBuf},
    process::{Command, Output, Stdio},
};

use checkpoint_core::{PhaseId, Workflow, redact};
use serde::Serialize;

/// A checkpoint commit that was made, or why none was.
pub(crate) enum CommitOutcome {
    Committed {
        sha: String,
        phases: Vec<PhaseId>,
        message: String,
    },
    NothingToCommit,
}

/// A changed file that a checkpoint commit left out, and why.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct LeftOut {
    /// The path, relative to the repository's top directory.
    pub(crate) path: String,
    pub(crate) reason: LeftOutReason,
}

/// Why a changed file was left out of a checkpoint commit.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub(crate) enum LeftOutReason {
    /// Its name is one secrets are kept under (`.env`, `*.pem`, `id_rsa`, …).
    SecretName { pattern: &'static str },
    /// Its content holds what redaction recognises as a secret.
    SecretContent { kinds: Vec<&'static str> },
    /// It is a symbolic link whose target is outside the project.
    SymlinkOutside { target: String },
}

impl fmt::Display for LeftOutReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::SecretName { pattern } => {
                write!(
                    f,
                    "its name matches `{pattern}`, a name secrets are kept under"
                )
            }
            Self::SecretContent { kinds } => {
                write!(f, "it holds a secret ({})", kinds.join(", "))
            }
            Self::SymlinkOutside { target } => {
                write!(
                    f,
                    "it is a symbolic link to `{target}`, outside the project"
                )
            }
        }
    }
}

/// File name patterns secrets are kept under: `*` stands for any run of characters.
const SECRET_NAMES: &[&str] = &[
    ".env",
    ".env.*",
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "id_rsa*",
    "id_dsa*",
    "id_ecdsa*",
    "id_ed25519*",
    "credentials*.json",
];

/// `.env` files that by convention hold placeholders, not secrets: their content is still read.
const TEMPLATE_NAMES: &[&str] = &[".env.example", ".env.sample", ".env.template", ".env.dist"];

/// The most of a file that is read to look for secrets.
const MAX_SCANNED: u64 = 4 << 20;

/// The message of a checkpoint commit for `phases`.
pub(crate) fn message(workflow: &Workflow, phases: &[PhaseId]) -> String {
    let numbers: Vec<usize> = phases
        .iter()
        .filter_map(|id| workflow.phase_index(id))
        .map(|index| index + 1)
        .collect();
    let (first, last) = (
        numbers.iter().min().copied().unwrap_or(0),
        numbers.iter().max().copied().unwrap_or(0),
    );
    let range = if first == last {
        format!("phase {first} complete")
    } else {
        format!("phases {first}-{last} complete")
    };
    let mut text = format!(
        "checkpoint: {range}\n\nWorkflow: {}\n\nCompleted:\n",
        workflow.id
    );
    for id in phases {
        if let Some(phase) = workflow.phase(id) {
            let number = workflow.phase_index(id).map_or(0, |index| index + 1);
            text.push_str(&format!("- Phase {number}: {}\n", phase.name));
        }
    }
    let remaining = workflow
        .phases
        .iter()
        .filter(|phase| !phase.status.is_done())
        .count();
    text.push_str(&format!(
        "\nRemaining: {}\n",
        crate::output::count(remaining, "phase")
    ));
    text
}

/// Stages the changed files, except the store's and the files that look
/// like secrets (see [`left_out`]), and commits; returns the SHA and what was left out.
pub(crate) fn commit(
    project_root: &Path,
    store_root: &Path,
    workflow: &Workflow,
    phases: &[PhaseId],
) -> Result<(CommitOutcome, Vec<LeftOut>), String> {
    let top = PathBuf::from(run(project_root, &["rev-parse", "--show-toplevel"])?.trim());
    let listed = run(
        &top,
        &[
            "ls-files",
            "-z",
            "--modified",
            "--deleted",
            "--others",
            "--exclude-standard",
        ],
    )?;
    let store = store_root
        .strip_prefix(&top)
        .or_else(|_| store_root.strip_prefix(project_root))
        .unwrap_or(store_root)
        .to_path_buf();
    let mut paths: Vec<&str> = listed.split('\0').filter(|path| !path.is_empty()).collect();
    paths.sort_unstable();
    paths.dedup();
    let mut staged = Vec::new();
    let mut excluded = Vec::new();
    for path in paths {
        if is_store_scratch(&store, Path::new(path)) {
            continue;
        }
        match left_out(&top, project_root, path) {
            Some(reason) => excluded.push(LeftOut {
                path: path.to_owned(),
                reason,
            }),
            None => staged.push(path),
        }
    }
    if !staged.is_empty() {
        let mut pathspecs = String::new();
        for path in &staged {
            pathspecs.push_str(":(literal)");
            pathspecs.push_str(path);
            pathspecs.push('\0');
        }
        run_with_input(
            &top,
            &["add", "-A", "--pathspec-from-file=-", "--pathspec-file-nul"],
            pathspecs.as_bytes(),
        )?;
    }
    let staged = git(&top, &["diff", "--cached", "--quiet"])
        .map_err(|err| format!("failed to run git: {err}"))?;
    if staged.status.success() {
        return Ok((CommitOutcome::NothingToCommit, excluded));
    }
    let message = message(workflow, phases);
    run(&top, &["commit", "--quiet", "-m", &message])?;
    let head = run(&top, &["rev-parse", "HEAD"])?;
    Ok((
        CommitOutcome::Committed {
            sha: head.trim().to_owned(),
            phases: phases.to_vec(),
            message,
        },
        excluded,
    ))
}

/// Whether a path (relative to the top directory) is in the store: the store is this
/// worktree's working state, shared by `push` and `pull`, never committed (its own ignore file
/// keeps it out of `git status`; a copy committed before that is left as it is).
fn is_store_scratch(store: &Path, path: &Path) -> bool {
    path.starts_with(store)
}

/// Why a changed file must stay out of a checkpoint commit, if it must: its name, its content,
/// or, for a symbolic link, a target outside the project.
pub(crate) fn left_out(top: &Path, project_root: &Path, path: &str) -> Option<LeftOutReason> {
    let full = top.join(path);
    let Ok(metadata) = fs::symlink_metadata(&full) else {
        // A deleted file: committing its deletion shares nothing.
        return None;
    };
    if metadata.file_type().is_symlink() {
        let target = fs::read_link(&full).ok()?;
        let parent = full.parent().unwrap_or(top);
        let inside = |root: &Path| {
            let resolved = fs::canonicalize(parent.join(&target))
                .unwrap_or_else(|_| lexical(&parent.join(&target)));
            let root = fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
            resolved.starts_with(root)
        };
        return (!inside(project_root)).then(|| LeftOutReason::SymlinkOutside {
            target: target.to_string_lossy().into_owned(),
        });
    }
    let name = Path::new(path)
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    if !TEMPLATE_NAMES.contains(&name.as_str())
        && let Some(&pattern) = SECRET_NAMES
            .iter()
            .find(|pattern| glob_matches(pattern, &name))
    {
        return Some(LeftOutReason::SecretName { pattern });
    }
    if !metadata.is_file() {
        return None;
    }
    let mut content = Vec::new();
    fs::File::open(&full)
        .and_then(|file| file.take(MAX_SCANNED).read_to_end(&mut content))
        .ok()?;
    let kinds = redact::kinds(&String::from_utf8_lossy(&content));
    (!kinds.is_empty()).then_some(LeftOutReason::SecretContent { kinds })
}

/// Whether a file named `name` is one secrets are kept under (`.env`, `*.pem`, `id_rsa`, …).
pub(crate) fn has_secret_name(name: &str) -> bool {
    !TEMPLATE_NAMES.contains(&name)
        && SECRET_NAMES
            .iter()
            .any(|pattern| glob_matches(pattern, name))
}

/// Whether `name` matches `pattern`, where `*` stands for any run of characters.
fn glob_matches(pattern: &str, name: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == name,
        Some((prefix, suffix)) => {
            name.len() >= prefix.len() + suffix.len()
                && name.starts_with(prefix)
                && name.ends_with(suffix)
        }
    }
}

/// `path` with `.` and `..` resolved without the file system (for a link whose target is
/// missing).
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// The trimmed stdout of a successful `git` command, if it printed anything.
pub(crate) fn read(root: &Path, args: &[&str]) -> Option<String> {
    let output = git(root, args).ok()?;
    output
        .status
        .success()
        .then(|| String::from_utf8_lossy(&output.stdout).trim().to_owned())
        .filter(|text| !text.is_empty())
}

fn git(root: &Path, args: &[&str]) -> std::io::Result<Output> {
    Command::new("git").args(args).current_dir(root).output()
}

fn run(root: &Path, args: &[&str]) -> Result<String, String> {
    checked(args, git(root, args))
}

fn run_with_input(root: &Path, args: &[&str], input: &[u8]) -> Result<String, String> {
    let spawn = || -> std::io::Result<Output> {
        let mut child = Command::new("git")
            .args(args)
            .current_dir(root)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()?;
        child
            .stdin
            .take()
            .expect("stdin is piped")
            .write_all(input)?;
        child.wait_with_output()
    };
    checked(args, spawn())
}

/// The stdout of a git command that ran and succeeded, or what went wrong.
fn checked(args: &[&str], output: std::io::Result<Output>) -> Result<String, String> {
    let output = output
        .map_err(|err| format!("failed to run `git {}`: {err}", args.first().unwrap_or(&"")))?;
    if output.status.success() {
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    } else {
        Err(format!(
            "`git {}` failed: {}",
            args.first().unwrap_or(&""),
            String::from_utf8_lossy(&output.stderr).trim()
        ))
    }
}
