//! Validation: everything that makes a state untrustworthy or worth a warning, as findings with a
//! severity, a stable code, the phase concerned and a hint.

use std::fmt;

use chrono::{DateTime, Duration, Utc};

use crate::{
    config::Config,
    id::PhaseId,
    model::{Phase, PhaseStatus, Workflow},
    resume::codes::FindingCode,
    store::Recovery,
};

/// What validation may ask of the world: files and git, answered by the caller.
pub trait Probe {
    /// The size of a file (or `Some(u64::MAX)` for a directory) at a path relative to the
    /// project root (or absolute); `None` when it does not exist.
    fn file_size(&self, path: &str) -> Option<u64>;
    /// The branch checked out now, where known.
    fn git_branch(&self) -> Option<String>;
    /// Whether a commit exists in the repository; `None` when git cannot tell.
    fn commit_exists(&self, sha: &str) -> Option<bool>;
    /// [`Probe::commit_exists`] for several commits at once (one git process, not one each).
    fn commits_exist(&self, shas: &[&str]) -> Vec<Option<bool>> {
        shas.iter().map(|sha| self.commit_exists(sha)).collect()
    }
    /// The worktree's top-level directory now.
    fn worktree(&self) -> Option<String>;
    /// When a file (relative to the project root) was last modified; `None` when it does not
    /// exist or the probe cannot tell.
    fn modified(&self, _path: &str) -> Option<DateTime<Utc>> {
        None
    }
}

/// How much earlier than its phase's start a declared output may have been modified and still
/// count as the phase's work: file systems keep modification times to a second or two (FAT to
/// two), and the clock that stamped the start is read a moment before the agent writes.
pub(crate) const OUTPUT_MTIME_TOLERANCE_SECS: i64 = 2;

/// Whether a declared output is the work of a phase that started at `started`: written or
/// changed since then, within [`OUTPUT_MTIME_TOLERANCE_SECS`]. A file a probe cannot date
/// counts (the test probes); a real file system always dates it.
pub(crate) fn written_since(probe: &dyn Probe, path: &str, started: Option<DateTime<Utc>>) -> bool {
    match (started, probe.modified(path)) {
        (Some(started), Some(modified)) => {
            modified >= started - Duration::seconds(OUTPUT_MTIME_TOLERANCE_SECS)
        }
        _ => true,
    }
}

/// The declared outputs of `phase` that do not show its work, each with why: missing, empty,
/// or not written since the phase started. The one rule of what a phase's files need to be
/// done: `complete` refuses while any is listed (unless `--force`), and the hooks complete a
/// phase only when none is.
pub fn unfinished_outputs(phase: &Phase, probe: &dyn Probe) -> Vec<(String, &'static str)> {
    phase
        .outputs
        .iter()
        .filter_map(|output| {
            let why = match probe.file_size(output) {
                None => "missing",
                Some(0) => "empty",
                Some(_)
                    if !written_since(
                        probe,
                        output,
                        phase.started_at.map(crate::timestamp::Timestamp::utc),
                    ) =>
                {
                    "older than the phase's start"
                }
                Some(_) => return None,
            };
            Some((output.clone(), why))
        })
        .collect()
}

/// The hint of a state that disagrees with its journal (`validate`, `resume`): the one
/// command that repairs it.
pub const JOURNAL_MISMATCH_HINT: &str = "`checkpoint validate --repair` rebuilds `state.json` from the journal, which is the record, and keeps this one as `state.json.mismatch-<time>`";

/// How bad a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    /// The state cannot be trusted as is: a person must decide.
    Error,
    /// Worth knowing before continuing.
    Warning,
    /// What was done about a leftover.
    Info,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Error => "error",
            Self::Warning => "warning",
            Self::Info => "info",
        })
    }
}

/// One thing validation found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// How bad it is.
    pub severity: Severity,
    /// A stable code, for example `output.missing`.
    pub code: FindingCode,
    /// The phase it concerns.
    pub phase: Option<PhaseId>,
    /// What was found.
    pub message: String,
    /// What to do about it.
    pub hint: Option<String>,
}

impl Finding {
    fn new(
        severity: Severity,
        code: FindingCode,
        phase: Option<&PhaseId>,
        message: String,
        hint: Option<String>,
    ) -> Self {
        Self {
            severity,
            code,
            phase: phase.cloned(),
            message,
            hint,
        }
    }
}

/// How far in the future a timestamp may be before it counts as wrong (clock skew).
const FUTURE_SLACK_SECS: i64 = 300;

/// Validates a loaded state; `recoveries` are what the store did to load it.
pub fn validate(
    workflow: &Workflow,
    recoveries: &[Recovery],
    probe: &dyn Probe,
    config: &Config,
    now: DateTime<Utc>,
) -> Vec<Finding> {
    let mut findings = Vec::new();
    for recovery in recoveries {
        findings.push(recovery_finding(recovery));
    }
    check_times(workflow, config, now, &mut findings);
    check_progression(workflow, config, &mut findings);
    check_files(workflow, probe, &mut findings);
    check_git(workflow, probe, &mut findings);
    check_limits(workflow, config, &mut findings);
    findings.sort_by_key(|finding| finding.severity);
    findings
}

/// The finding that reports a recovery, with its hint.
pub fn recovery_finding(recovery: &Recovery) -> Finding {
    let (severity, code, hint) = match recovery {
        Recovery::JournalReplayed { .. } => (Severity::Info, FindingCode::StateReplayed, None),
        Recovery::StateRebuilt { .. } => (
            Severity::Error,
            FindingCode::StateRebuilt,
            Some(
                "check the rebuilt state (`checkpoint status`), then confirm it with `checkpoint resume --yes`",
            ),
        ),
        Recovery::TornJournalLine { held: true, .. } => (
            Severity::Warning,
            FindingCode::JournalTorn,
            Some("the state holds the change it began to record: there is nothing to repeat"),
        ),
        Recovery::TornJournalLine { held: false, .. } => (
            Severity::Warning,
            FindingCode::JournalTorn,
            Some("the transition it held never completed; repeat it if it matters"),
        ),
        Recovery::ForeignJournalLines { .. } => (
            Severity::Warning,
            FindingCode::JournalForeign,
            Some(
                "`checkpoint resume` (or any command that writes) moves them aside as `journal.jsonl.foreign-<time>`, keeping them, after which `checkpoint log` reads the whole history again",
            ),
        ),
        Recovery::UnreadableJournalLine { .. } => (
            Severity::Warning,
            FindingCode::JournalUnreadable,
            Some(crate::store::JOURNAL_REPAIR_HINT),
        ),
        Recovery::TempFiles { .. } => (Severity::Info, FindingCode::WriteTempFiles, None),
        Recovery::JournalBehind { .. } => (
            Severity::Warning,
            FindingCode::JournalBehind,
            Some("the state is used as is; `checkpoint log` shows only what the journal kept"),
        ),
    };
    Finding::new(
        severity,
        code,
        None,
        recovery.to_string(),
        hint.map(str::to_owned),
    )
}

fn check_times(
    workflow: &Workflow,
    config: &Config,
    now: DateTime<Utc>,
    findings: &mut Vec<Finding>,
) {
    let limit = now + Duration::seconds(FUTURE_SLACK_SECS);
    let mut future = |what: String, at: DateTime<Utc>, phase: Option<&PhaseId>| {
        if at > limit {
            findings.push(Finding::new(
                Severity::Error,
                FindingCode::TimeFuture,
                phase,
                format!("{what} is in the future ({})", at.to_rfc3339()),
                Some("the clock was wrong or the file was edited; check the system clock".into()),
            ));
        }
    };
    future("`created_at`".into(), workflow.created_at, None);
    future("`updated_at`".into(), workflow.updated_at, None);
    for phase in &workflow.phases {
        for (name, at) in [
            ("started_at", phase.started_at),
            ("completed_at", phase.completed_at),
        ] {
            if let Some(at) = at {
                future(
                    format!("`{name}` of phase `{}`", phase.id),
                    at.utc(),
                    Some(&phase.id),
                );
            }
        }
    }
    if workflow.updated_at < workflow.created_at {
        findings.push(Finding::new(
            Severity::Warning,
            FindingCode::TimeOrder,
            None,
            "`updated_at` is before `created_at`".into(),
            None,
        ));
    }
    for phase in &workflow.phases {
        if let (Some(started), Some(completed)) = (phase.started_at, phase.completed_at)
            && completed < started
        {
            findings.push(Finding::new(
                Severity::Warning,
                FindingCode::TimeOrder,
                Some(&phase.id),
                format!("phase `{}` completed before it started", phase.id),
                None,
            ));
        }
    }
    let stale_after = Duration::days(i64::from(config.stale_after_days));
    if !workflow.status.is_finished() && now - workflow.updated_at > stale_after {
        findings.push(Finding::new(
            Severity::Warning,
            FindingCode::StateStale,
            None,
            format!("the workflow was last updated {} days ago", (now - workflow.updated_at).num_days()),
            Some("continue with care, or archive it and start fresh with `checkpoint resume --fresh` (nothing is deleted)".into()),
        ));
    }
}

fn check_progression(workflow: &Workflow, config: &Config, findings: &mut Vec<Finding>) {
    let done = workflow.done_set();
    for phase in &workflow.phases {
        let active = matches!(
            phase.status,
            PhaseStatus::Complete | PhaseStatus::InProgress | PhaseStatus::AwaitingApproval
        );
        if !active {
            continue;
        }
        for dep in &phase.dependencies {
            if !done.is_done(dep) {
                let (severity, verb) = if phase.status == PhaseStatus::InProgress {
                    (Severity::Warning, "is in progress")
                } else {
                    (Severity::Error, "is done")
                };
                findings.push(Finding::new(
                    severity,
                    FindingCode::DependencyIncomplete,
                    Some(&phase.id),
                    format!("phase `{}` {verb} but its dependency `{dep}` is not", phase.id),
                    Some(format!("redo `{dep}` (`checkpoint resume --restart {dep}`) or check how `{}` got ahead", phase.id)),
                ));
            }
        }
    }
    let in_progress = workflow
        .phases
        .iter()
        .filter(|phase| phase.status == PhaseStatus::InProgress)
        .count();
    if config.max_in_progress > 0 && in_progress > config.max_in_progress as usize {
        findings.push(Finding::new(
            Severity::Warning,
            FindingCode::TooManyInProgress,
            None,
            format!(
                "{in_progress} phases are in progress; the limit is {}",
                config.max_in_progress
            ),
            Some(
                "finish or fail the extra phases, or raise `max_in_progress` in `config.toml`"
                    .into(),
            ),
        ));
    }
}

/// `probe.file_size(path)`, remembered in `sizes`.
fn cached_file_size<'a>(
    sizes: &mut Vec<(&'a str, Option<u64>)>,
    probe: &dyn Probe,
    path: &'a str,
) -> Option<u64> {
    if let Some((_, size)) = sizes.iter().find(|(seen, _)| *seen == path) {
        return *size;
    }
    let size = probe.file_size(path);
    sizes.push((path, size));
    size
}

fn check_files(workflow: &Workflow, probe: &dyn Probe, findings: &mut Vec<Finding>) {
    for phase in workflow
        .phases
        .iter()
        .filter(|phase| phase.status.is_done() || phase.status == PhaseStatus::AwaitingApproval)
    {
        if phase.status == PhaseStatus::Skipped {
            continue;
        }
        // A phase's outputs are usually also its artifacts: each file is looked at once.
        let mut sizes = Vec::new();
        let mut file_size = |path| cached_file_size(&mut sizes, probe, path);
        for artifact in &phase.artifacts {
            if file_size(&artifact.path).is_none() {
                findings.push(Finding::new(
                    Severity::Error,
                    FindingCode::ArtifactMissing,
                    Some(&phase.id),
                    format!("artifact `{}` of phase `{}` does not exist", artifact.path, phase.id),
                    Some(format!("restore it (for example from git), or redo the phase with `checkpoint resume --restart {}`", phase.id)),
                ));
            }
        }
        for output in &phase.outputs {
            match file_size(output) {
                None => findings.push(Finding::new(
                    Severity::Error,
                    FindingCode::OutputMissing,
                    Some(&phase.id),
                    format!(
                        "declared output `{output}` of completed phase `{}` does not exist",
                        phase.id
                    ),
                    Some(format!(
                        "restore it, or redo the phase with `checkpoint resume --restart {}`",
                        phase.id
                    )),
                )),
                Some(0) => findings.push(Finding::new(
                    Severity::Warning,
                    FindingCode::OutputEmpty,
                    Some(&phase.id),
                    format!(
                        "declared output `{output}` of completed phase `{}` is empty",
                        phase.id
                    ),
                    Some("check that the phase really finished".into()),
                )),
                Some(_) => {}
            }
        }
    }
}

fn check_git(workflow: &Workflow, probe: &dyn Probe, findings: &mut Vec<Finding>) {
    let Some(git) = &workflow.git else { return };
    if let (Some(recorded), Some(current)) = (&git.branch, probe.git_branch())
        && recorded != &current
    {
        findings.push(Finding::new(
                Severity::Warning,
                FindingCode::GitBranchChanged,
                None,
                format!("the workflow started on branch `{recorded}` but `{current}` is checked out"),
                Some(format!("check out `{recorded}` (`git switch {recorded}`) before continuing, unless the switch was intended")),
            ));
    }
    if let (Some(recorded), Some(current)) = (&git.worktree, probe.worktree())
        && recorded != &current
    {
        findings.push(Finding::new(
                Severity::Warning,
                FindingCode::GitWorktreeMoved,
                None,
                format!("the workflow started in worktree `{recorded}` but runs in `{current}` now"),
                Some("paths in the state are relative to the project root, so a moved worktree is fine if it is the same checkout".into()),
            ));
    }
    let with_commits: Vec<(&Phase, &str)> = workflow
        .phases
        .iter()
        .filter_map(|phase| phase.commit_sha.as_deref().map(|sha| (phase, sha)))
        .collect();
    let mut shas: Vec<&str> = with_commits.iter().map(|(_, sha)| *sha).collect();
    shas.sort_unstable();
    shas.dedup();
    let exists: std::collections::HashMap<&str, Option<bool>> = shas
        .iter()
        .copied()
        .zip(probe.commits_exist(&shas))
        .collect();
    for (phase, sha) in with_commits {
        if exists.get(sha).copied().flatten() == Some(false) {
            // A squash merge, a rebase or another clone loses the commit but not the work: with
            // the phase's files present this is worth knowing, not a reason to stop.
            let (severity, hint) = if work_present(workflow, phase, probe) {
                (
                    Severity::Warning,
                    "the history was rewritten (a squash merge or a rebase) or this is another clone; the phase's files are present, so the work goes on",
                )
            } else {
                (
                    Severity::Error,
                    "the history was rewritten or this is another clone, and the phase's files are missing; fetch the commit, or redo the phase",
                )
            };
            findings.push(Finding::new(
                severity,
                FindingCode::GitCommitMissing,
                Some(&phase.id),
                format!(
                    "commit `{sha}` of phase `{}` is not in the repository",
                    phase.id
                ),
                Some(hint.into()),
            ));
        }
    }
}

/// Whether a phase's work is on disk: its artifacts and outputs, or, for a phase that names no
/// files (as most other systems' phases), the workflow's file paths; at least one, and all of them.
fn work_present(workflow: &Workflow, phase: &Phase, probe: &dyn Probe) -> bool {
    let own: Vec<&str> = phase
        .artifacts
        .iter()
        .map(|artifact| artifact.path.as_str())
        .chain(phase.outputs.iter().map(String::as_str))
        .collect();
    let files = if own.is_empty() {
        workflow
            .context
            .file_paths
            .iter()
            .map(String::as_str)
            .collect()
    } else {
        own
    };
    !files.is_empty() && files.iter().all(|path| probe.file_size(path).is_some())
}

fn check_limits(workflow: &Workflow, config: &Config, findings: &mut Vec<Finding>) {
    for phase in &workflow.phases {
        let max_attempts = phase.max_attempts.unwrap_or(config.max_attempts);
        if phase.status == PhaseStatus::Failed && phase.failures >= max_attempts {
            findings.push(Finding::new(
                Severity::Error,
                FindingCode::PhaseRepeatedFailure,
                Some(&phase.id),
                format!("phase `{}` failed {} times (limit {max_attempts}); last error: {}", phase.id, phase.failures, phase.error.as_deref().unwrap_or("unknown")),
                Some(format!("a person decides: review the plan, retry with `checkpoint start {} --force`, skip with `checkpoint skip {}`, or abandon", phase.id, phase.id)),
            ));
        }
        // The checkpoint-recovery pattern: a failed phase replanned up to the limit goes to a
        // person (retry, skip or abort) instead of another automatic replan or retry.
        if phase.status == PhaseStatus::Failed
            && config.max_replans > 0
            && phase.replan_count >= config.max_replans
        {
            findings.push(Finding::new(
                Severity::Error,
                FindingCode::PhaseReplanLimit,
                Some(&phase.id),
                format!(
                    "phase `{}` failed after {} replans (limit {}); last error: {}; a person decides: retry, skip or abort",
                    phase.id,
                    phase.replan_count,
                    config.max_replans,
                    phase.error.as_deref().unwrap_or("unknown")
                ),
                Some(format!(
                    "retry with `checkpoint start {} --force`, skip with `checkpoint skip {}`, or abort with `checkpoint resume --abandon`",
                    phase.id, phase.id
                )),
            ));
        } else if phase.replan_count > config.max_replans {
            findings.push(Finding::new(
                Severity::Error,
                FindingCode::PhaseReplanLimit,
                Some(&phase.id),
                format!(
                    "phase `{}` was replanned {} times (limit {})",
                    phase.id, phase.replan_count, config.max_replans
                ),
                Some("replanning is looping: a person should redesign this phase".into()),
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use chrono::DateTime;

    use super::*;
    use crate::{
        Artifact, Phase, PhasePlan, PhaseStatus, Plan, WorkflowId,
        testing::{Files, Recording},
    };

    fn done(phase: &mut Phase, artifacts: &[&str], outputs: &[&str]) {
        phase.status = PhaseStatus::Complete;
        phase.artifacts = artifacts
            .iter()
            .map(|path| Artifact {
                path: (*path).to_owned(),
                recorded_at: DateTime::UNIX_EPOCH,
            })
            .collect();
        phase.outputs = outputs.iter().map(|path| (*path).to_owned()).collect();
    }

    #[test]
    fn each_file_of_a_phase_is_looked_at_once_and_every_finding_is_kept() {
        let plan = Plan {
            phases: vec![
                PhasePlan::from_spec("a").unwrap(),
                PhasePlan::from_spec("b").unwrap(),
            ],
            ..Plan::default()
        };
        let mut workflow = plan
            .into_workflow(WorkflowId::new("w").unwrap(), None, DateTime::UNIX_EPOCH)
            .unwrap();
        done(
            &mut workflow.phases[0],
            &["a.md", "gone.md"],
            &["a.md", "gone.md", "empty.md"],
        );
        done(&mut workflow.phases[1], &["a.md"], &["a.md"]);
        let files = Recording::new(Files(vec![("a.md", 10), ("empty.md", 0)]));
        let mut findings = Vec::new();
        check_files(&workflow, &files, &mut findings);
        assert_eq!(
            *files.asked.borrow(),
            ["a.md", "gone.md", "empty.md", "a.md"],
            "once per file and phase"
        );
        let codes: Vec<_> = findings
            .iter()
            .map(|finding| finding.code.as_str())
            .collect();
        assert_eq!(
            codes,
            ["artifact.missing", "output.missing", "output.empty"]
        );
    }
}
