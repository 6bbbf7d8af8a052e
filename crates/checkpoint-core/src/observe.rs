//! What a session was seen doing, turned into transitions: the hooks' domain rules, pure, seeing
//! files through [`Probe`].

use chrono::{DateTime, Duration, Utc};

use crate::{
    PhaseId,
    config::Config,
    model::{PhaseStatus, TaskStatus, Workflow},
    resume::{Probe, unfinished_outputs},
    transition::Transition,
};

/// A file at `path` (relative to the project root) was written while a phase is in progress: it
/// joins the context summary, and each phase in progress that declares it as an output is
/// complete once all its outputs exist and are not empty, its tasks are done and its
/// dependencies are done.
///
/// Nothing happens when no phase is in progress.
pub(crate) fn file_written(workflow: &Workflow, path: &str, probe: &dyn Probe) -> Vec<Transition> {
    let in_progress = || {
        workflow
            .phases
            .iter()
            .filter(|phase| phase.status == PhaseStatus::InProgress)
    };
    if in_progress().next().is_none() {
        return Vec::new();
    }
    let mut transitions = Vec::new();
    if !workflow
        .context
        .file_paths
        .iter()
        .any(|known| known == path)
    {
        transitions.push(Transition::FilePath {
            path: path.to_owned(),
        });
    }
    for phase in in_progress().filter(|phase| phase.outputs.iter().any(|output| output == path)) {
        // A file that was there before the phase started is not its work.
        let outputs_exist = unfinished_outputs(phase, probe).is_empty();
        let tasks_done = phase
            .tasks
            .iter()
            .all(|task| task.status == TaskStatus::Done);
        if outputs_exist && tasks_done && workflow.dependencies_done(phase) {
            transitions.push(Transition::PhaseComplete {
                phase: phase.id.clone(),
                artifacts: phase.outputs.clone(),
                commit_sha: None,
                force: false,
            });
        }
    }
    transitions
}

/// Several files were written at once (one patch may add or change many): `file_written` for
/// each, a path given twice counted once, each phase completed once.
pub fn files_written<'a>(
    workflow: &Workflow,
    paths: impl IntoIterator<Item = &'a str>,
    probe: &dyn Probe,
) -> Vec<Transition> {
    let mut seen: Vec<&str> = Vec::new();
    let mut completed: Vec<PhaseId> = Vec::new();
    let mut transitions = Vec::new();
    for path in paths {
        if seen.contains(&path) {
            continue;
        }
        seen.push(path);
        for transition in file_written(workflow, path, probe) {
            if let Transition::PhaseComplete { phase, .. } = &transition {
                if completed.contains(phase) {
                    continue;
                }
                completed.push(phase.clone());
            }
            transitions.push(transition);
        }
    }
    transitions
}

/// A commit `sha` was made: it belongs to the phase in progress, else to the phase completed
/// last that no commit holds yet; nothing when that phase already records it.
pub fn commit_made(workflow: &Workflow, sha: &str) -> Vec<Transition> {
    let target = workflow
        .phases
        .iter()
        .find(|phase| phase.status == PhaseStatus::InProgress)
        .or_else(|| {
            workflow
                .phases
                .iter()
                .filter(|phase| phase.status.is_done() && phase.commit_sha.is_none())
                .max_by_key(|phase| phase.completed_at)
        });
    target
        .filter(|phase| phase.commit_sha.as_deref() != Some(sha))
        .map(|phase| Transition::PhaseCommit {
            phase: phase.id.clone(),
            sha: sha.to_owned(),
        })
        .into_iter()
        .collect()
}

/// Whether a shell command runs `git commit` (not `git commit-tree` or a message mentioning it).
pub fn is_git_commit(command: &str) -> bool {
    command.split(['&', ';', '|', '\n']).any(|part| {
        let mut words = part
            .split_whitespace()
            .skip_while(|word| word.contains('='));
        words.next() == Some("git") && words.find(|word| !word.starts_with('-')) == Some("commit")
    })
}

/// With `strict_stop`, why a session may not stop yet: a phase in progress has no progress
/// note, or none in the last `progress_fresh_minutes` before `now` (the reason, for the model);
/// `None` lets it stop.
pub fn stop_blocked(workflow: &Workflow, config: &Config, now: DateTime<Utc>) -> Option<String> {
    if !config.strict_stop {
        return None;
    }
    let fresh = Duration::minutes(i64::from(config.progress_fresh_minutes));
    let phase = workflow.phases.iter().find(|phase| {
        phase.status == PhaseStatus::InProgress
            && phase.progress_at.is_none_or(|at| now - at.utc() > fresh)
    })?;
    Some(format!(
        "Phase `{}` of workflow `{}` is in progress without a recent progress note. Before stopping, record where you are: `checkpoint progress {} \"<what is done, what comes next>\"` (or `checkpoint complete {}` if it is done).",
        phase.id, workflow.id, phase.id, phase.id
    ))
}

/// The session ended on an API failure such as a rate limit (`error`, as the client words it):
/// the workflow pauses until a person or new work lifts it.
pub fn api_failed(error: &str) -> Transition {
    Transition::Pause {
        reason: format!("API error: {error}"),
        until: None,
    }
}

#[cfg(test)]
mod tests {
    use chrono::{DateTime, Duration, Utc};

    use super::*;
    use crate::{
        PhasePlan, Plan, TaskId, WorkflowId, resume::OUTPUT_MTIME_TOLERANCE_SECS, testing::Files,
        timestamp::Timestamp, transition::apply_in_place,
    };

    fn phase(id: &str) -> PhaseId {
        PhaseId::new(id).unwrap()
    }

    /// Phases `a` and `b` (after `a`); `a` declares `a.md` and `dir` as outputs.
    fn workflow() -> Workflow {
        let plan = Plan {
            phases: vec![
                PhasePlan::from_spec("a").unwrap(),
                PhasePlan::from_spec("b:a").unwrap(),
            ],
            ..Plan::default()
        };
        let mut workflow = plan
            .into_workflow(WorkflowId::new("w").unwrap(), None, DateTime::UNIX_EPOCH)
            .unwrap();
        workflow.phases[0].outputs = vec!["a.md".into(), "dir".into()];
        workflow
    }

    fn change(workflow: &mut Workflow, transition: Transition) {
        let seq = workflow.seq + 1;
        let now = DateTime::UNIX_EPOCH + Duration::seconds(i64::try_from(seq).unwrap());
        apply_in_place(workflow, &transition, seq, now).unwrap();
    }

    fn start(workflow: &mut Workflow, id: &str) {
        change(
            workflow,
            Transition::PhaseStart {
                phase: phase(id),
                force: false,
            },
        );
    }

    fn complete(workflow: &mut Workflow, id: &str) {
        change(
            workflow,
            Transition::PhaseComplete {
                phase: phase(id),
                artifacts: Vec::new(),
                commit_sha: None,
                force: true,
            },
        );
    }

    fn completes(transitions: &[Transition]) -> Vec<&str> {
        transitions
            .iter()
            .filter_map(|transition| match transition {
                Transition::PhaseComplete { phase, .. } => Some(phase.as_str()),
                _ => None,
            })
            .collect()
    }

    /// [`Files`], each modified at the given second after the epoch.
    struct Dated(Files, i64);

    impl Probe for Dated {
        fn file_size(&self, path: &str) -> Option<u64> {
            self.0.file_size(path)
        }
        fn git_branch(&self) -> Option<String> {
            None
        }
        fn commit_exists(&self, _sha: &str) -> Option<bool> {
            None
        }
        fn worktree(&self) -> Option<String> {
            None
        }
        fn modified(&self, path: &str) -> Option<DateTime<Utc>> {
            self.0
                .file_size(path)
                .map(|_| DateTime::UNIX_EPOCH + Duration::seconds(self.1))
        }
    }

    #[test]
    fn an_output_modified_before_its_phase_started_does_not_complete_it() {
        let mut workflow = workflow();
        start(&mut workflow, "a");
        let started = workflow.phases[0].started_at.unwrap().utc().timestamp();
        let files = || Files(vec![("a.md", 3), ("dir", u64::MAX)]);
        let at =
            |second| completes(&file_written(&workflow, "a.md", &Dated(files(), second))).len();
        // Long before, no; within the tolerance or after, yes.
        assert_eq!(at(started - 100), 0);
        assert_eq!(at(started - OUTPUT_MTIME_TOLERANCE_SECS - 1), 0);
        assert_eq!(at(started - OUTPUT_MTIME_TOLERANCE_SECS), 1);
        assert_eq!(at(started + 50), 1);
    }

    /// One patch that writes both outputs of a phase, and one of them twice, completes it once
    /// and names each file once; applying the transitions in order succeeds.
    #[test]
    fn files_written_together_complete_their_phase_once() {
        let mut workflow = workflow();
        start(&mut workflow, "a");
        let started = workflow.phases[0].started_at.unwrap().utc().timestamp();
        let probe = Dated(Files(vec![("a.md", 3), ("dir", 9)]), started + 5);
        let transitions = files_written(&workflow, ["a.md", "dir", "a.md"], &probe);
        assert_eq!(completes(&transitions), ["a"]);
        let named: Vec<&str> = transitions
            .iter()
            .filter_map(|transition| match transition {
                Transition::FilePath { path } => Some(path.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(named, ["a.md", "dir"]);
        for transition in transitions {
            change(&mut workflow, transition);
        }
        assert_eq!(workflow.phases[0].status, PhaseStatus::Complete);
        assert!(files_written(&workflow, [], &probe).is_empty());
    }

    #[test]
    fn a_written_file_counts_only_while_a_phase_is_in_progress() {
        let workflow = workflow();
        let files = Files(vec![("a.md", 3), ("dir", u64::MAX)]);
        assert_eq!(file_written(&workflow, "a.md", &files), Vec::new());
    }

    #[test]
    fn declared_outputs_complete_their_phase_once_all_exist_and_are_not_empty() {
        let mut workflow = workflow();
        start(&mut workflow, "a");
        let all = Files(vec![("a.md", 3), ("dir", u64::MAX)]);
        let transitions = file_written(&workflow, "a.md", &all);
        assert_eq!(
            transitions[0],
            Transition::FilePath {
                path: "a.md".into()
            }
        );
        assert_eq!(completes(&transitions), ["a"]);
        let Transition::PhaseComplete { artifacts, .. } = &transitions[1] else {
            panic!("{transitions:?}");
        };
        assert_eq!(artifacts, &["a.md", "dir"]);

        let empty = Files(vec![("a.md", 0), ("dir", u64::MAX)]);
        assert!(completes(&file_written(&workflow, "a.md", &empty)).is_empty());
        let missing = Files(vec![("a.md", 3)]);
        assert!(completes(&file_written(&workflow, "a.md", &missing)).is_empty());
        // A file that is no output of the phase only joins the summary.
        assert_eq!(
            file_written(&workflow, "notes.md", &all),
            [Transition::FilePath {
                path: "notes.md".into()
            }]
        );
    }

    #[test]
    fn a_known_path_is_not_recorded_twice() {
        let mut workflow = workflow();
        start(&mut workflow, "a");
        change(
            &mut workflow,
            Transition::FilePath {
                path: "a.md".into(),
            },
        );
        let transitions = file_written(&workflow, "a.md", &Files(vec![("a.md", 3)]));
        assert_eq!(transitions, Vec::new());
    }

    #[test]
    fn unfinished_tasks_or_dependencies_keep_a_phase_open() {
        let mut workflow = workflow();
        start(&mut workflow, "a");
        change(
            &mut workflow,
            Transition::TaskAdd {
                phase: phase("a"),
                task: TaskId::new("t").unwrap(),
                title: None,
                output: None,
            },
        );
        let all = Files(vec![("a.md", 3), ("dir", u64::MAX), ("b.md", 1)]);
        assert!(completes(&file_written(&workflow, "a.md", &all)).is_empty());

        let mut workflow = self::workflow();
        workflow.phases[1].outputs = vec!["b.md".into()];
        workflow.phases[1].status = PhaseStatus::InProgress;
        assert!(!workflow.dependencies_done(&workflow.phases[1]));
        assert!(completes(&file_written(&workflow, "b.md", &all)).is_empty());
    }

    #[test]
    fn a_commit_goes_to_the_phase_in_progress_else_the_last_completed_without_one() {
        let mut workflow = workflow();
        start(&mut workflow, "a");
        assert_eq!(
            commit_made(&workflow, "abc"),
            [Transition::PhaseCommit {
                phase: phase("a"),
                sha: "abc".into()
            }]
        );
        complete(&mut workflow, "a");
        assert_eq!(
            commit_made(&workflow, "abc"),
            [Transition::PhaseCommit {
                phase: phase("a"),
                sha: "abc".into()
            }]
        );
        change(
            &mut workflow,
            Transition::PhaseCommit {
                phase: phase("a"),
                sha: "abc".into(),
            },
        );
        // Every completed phase holds a commit and none is in progress: nothing to attribute.
        assert_eq!(commit_made(&workflow, "def"), Vec::new());
        start(&mut workflow, "b");
        complete(&mut workflow, "b");
        assert_eq!(
            commit_made(&workflow, "def"),
            [Transition::PhaseCommit {
                phase: phase("b"),
                sha: "def".into()
            }]
        );
    }

    /// `strict_stop` blocks a stop while a phase in progress has no note within
    /// `progress_fresh_minutes` of now: none, just past, exactly at the bound, in the future.
    #[test]
    fn strict_stop_blocks_a_stop_without_a_fresh_note() {
        let now = DateTime::UNIX_EPOCH + Duration::days(1);
        let strict = |minutes: u32| Config {
            strict_stop: true,
            progress_fresh_minutes: minutes,
            ..Config::default()
        };
        let mut w = workflow();
        assert_eq!(
            stop_blocked(&w, &strict(20), now),
            None,
            "nothing in progress"
        );
        start(&mut w, "a");
        let blocked = stop_blocked(&w, &strict(20), now).unwrap();
        insta::assert_snapshot!(blocked, @r#"Phase `a` of workflow `w` is in progress without a recent progress note. Before stopping, record where you are: `checkpoint progress a "<what is done, what comes next>"` (or `checkpoint complete a` if it is done)."#);
        assert_eq!(
            stop_blocked(&w, &Config::default(), now),
            None,
            "not strict"
        );
        let noted = |w: &mut Workflow, at: DateTime<Utc>| {
            w.phases[0].progress_at = Some(Timestamp::from(at));
        };
        for (age, minutes, blocks) in [
            (Duration::zero(), 20, false),
            (Duration::minutes(20), 20, false),
            (Duration::minutes(20) + Duration::seconds(1), 20, true),
            (Duration::days(400), 20, true),
            (-Duration::minutes(5), 20, false),
            (Duration::zero(), 0, false),
            (Duration::seconds(1), 0, true),
            (Duration::days(400), u32::MAX, false),
        ] {
            noted(&mut w, now - age);
            assert_eq!(
                stop_blocked(&w, &strict(minutes), now).is_some(),
                blocks,
                "a note {age} old, fresh for {minutes} minutes"
            );
        }
    }

    #[test]
    fn an_api_failure_pauses() {
        assert_eq!(
            api_failed("rate_limit"),
            Transition::Pause {
                reason: "API error: rate_limit".into(),
                until: None
            }
        );
        let mut w = workflow();
        start(&mut w, "a");
        change(&mut w, api_failed(""));
        assert_eq!(w.status, crate::WorkflowStatus::Paused);
    }

    #[test]
    fn recognises_git_commit() {
        assert!(is_git_commit("git commit -m 'x'"));
        assert!(is_git_commit("git add -A && git commit -qm done"));
        assert!(is_git_commit("GIT_AUTHOR_NAME=a git commit -m x"));
        assert!(!is_git_commit("git commit-tree abc"));
        assert!(!is_git_commit("echo git commit"));
        assert!(!is_git_commit("git status"));
    }
}
