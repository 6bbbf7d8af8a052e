//! Git checkpoints: commit the work after completed phases (the OrchestKit mini-commit rule),
//! never amending or rewriting history.

use std::{
    path::Path,
    process::{Command, Output},
};

use checkpoint_core::{PhaseId, PhaseStatus, Workflow};

/// A checkpoint commit that was made, or why none was.
pub(crate) enum CommitOutcome {
    Committed {
        sha: String,
        phases: Vec<PhaseId>,
        message: String,
    },
    NothingToCommit,
}

/// The completed phases that no checkpoint commit holds yet, in plan order.
pub(crate) fn uncommitted_phases(workflow: &Workflow) -> Vec<PhaseId> {
    workflow
        .phases
        .iter()
        .filter(|phase| phase.status == PhaseStatus::Complete && phase.commit_sha.is_none())
        .map(|phase| phase.id.clone())
        .collect()
}

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

/// Stages everything except the store's locks and temp files, and commits; returns the SHA.
pub(crate) fn commit(
    project_root: &Path,
    store_root: &Path,
    workflow: &Workflow,
    phases: &[PhaseId],
) -> Result<CommitOutcome, String> {
    run(project_root, &["add", "-A"])?;
    // Never commit the store's lock or temp files: unstage them (a pathspec exclude on `add`
    // fails when the store is ignored).
    let store = store_root
        .strip_prefix(project_root)
        .unwrap_or(store_root)
        .to_string_lossy()
        .into_owned();
    let lock = format!(":(glob){store}/**/lock");
    let run_lock = format!(":(glob){store}/**/run.lock");
    let temp = format!(":(glob){store}/**/.state.json.tmp-*");
    run(
        project_root,
        &["reset", "--quiet", "--", &lock, &run_lock, &temp],
    )?;
    let staged = git(project_root, &["diff", "--cached", "--quiet"])
        .map_err(|err| format!("failed to run git: {err}"))?;
    if staged.status.success() {
        return Ok(CommitOutcome::NothingToCommit);
    }
    let message = message(workflow, phases);
    run(project_root, &["commit", "--quiet", "-m", &message])?;
    let head = run(project_root, &["rev-parse", "HEAD"])?;
    Ok(CommitOutcome::Committed {
        sha: head.trim().to_owned(),
        phases: phases.to_vec(),
        message,
    })
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
    let output = git(root, args)
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
