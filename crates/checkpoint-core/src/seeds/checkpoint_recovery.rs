//! The checkpoint-recovery pattern's `.claude/data/checkpoints/<workflow>.json`: numbered phases
//! with per-phase metadata and artifacts, and the replan log and counts.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::{
    error::Result,
    model::{Artifact, ContextSummary, Phase, PhaseStatus, Replan, Workflow},
    seeds::{
        carry::{Builder, Carry, Slot},
        common::{
            Built, ImportOptions, Imported, MAX_PHASES, SeedSource, complete_pending,
            current_index, new_workflow, numbered_phases, phase_id, times_of, workflow_id,
        },
        document::{Num, fields_of, invalid, objects, parse, time_value},
        format::SeedFormat,
    },
    timestamp::Timestamp,
};

const FORMAT: SeedFormat = SeedFormat::CheckpointRecovery;

const ROOT: &str = "$";
const METADATA: &str = "$.phase_metadata";
const REPLANS: &str = "$.replan_history";

#[derive(Deserialize)]
struct RecoveryFile {
    workflow_id: Option<String>,
    current_phase: Option<Num>,
    completed_phases: Option<Vec<Num>>,
    phase_metadata: Option<BTreeMap<String, PhaseMetadata>>,
    replan_history: Option<Vec<ReplanEntry>>,
    replan_count: Option<BTreeMap<String, Num>>,
}

#[derive(Deserialize)]
struct PhaseMetadata {
    status: Option<String>,
    artifacts: Option<Vec<String>>,
    timestamp: Option<Value>,
    error: Option<Value>,
}

#[derive(Deserialize)]
struct ReplanEntry {
    phase: Option<Num>,
    reason: Option<String>,
    timestamp: Option<Value>,
}

pub(crate) fn read(source: &SeedSource, options: &ImportOptions) -> Result<Imported> {
    let path = &source.main.path;
    let (file, raw): (RecoveryFile, _) = parse(FORMAT, path, &source.main.bytes)?;
    let mut carry = Carry::default();
    carry.object(ROOT, &raw, fields_of::<RecoveryFile>());
    let plan = source
        .plan
        .as_ref()
        .map(|plan| Plan::parse(&String::from_utf8_lossy(&plan.bytes)))
        .unwrap_or_default();

    let current = file.current_phase.and_then(Num::ordinal);
    let completed = Num::ordinals(file.completed_phases.as_ref());
    let n_phases = phase_count(&file, &plan, current, &completed);
    if n_phases == 0 || n_phases > MAX_PHASES {
        return Err(invalid(
            FORMAT,
            path,
            &source.main.bytes,
            format!(
                "it names {} phases (from `current_phase`, `completed_phases`, `phase_metadata` and the plan)",
                n_phases
            ),
        ));
    }
    let mut phases = numbered_phases(n_phases, |n| match plan.phases.get(&n) {
        Some(name) if !name.is_empty() => format!("Phase {n}: {name}"),
        _ => format!("Phase {n}"),
    });

    for n in &completed {
        let phase = &mut phases[*n as usize - 1];
        phase.status = PhaseStatus::Complete;
        phase.attempts = 1;
    }
    if let Some(current) = current.filter(|current| *current <= n_phases) {
        complete_pending(&mut phases[..current as usize - 1]);
    }
    read_metadata(&file, &raw, &mut carry, &mut phases, options.now);
    for (key, count) in file.replan_count.iter().flatten() {
        if let (Some(n), Some(count)) = (ordinal(key).filter(|n| *n <= n_phases), count.ordinal()) {
            phases[n as usize - 1].replan_count = count;
        }
    }
    let replans = read_replans(&file, &raw, &mut carry, n_phases, options.now);

    let stem = path.file_stem().and_then(|stem| stem.to_str());
    let id = workflow_id(
        options,
        &[file.workflow_id.as_deref(), stem],
        "checkpoint-recovery",
    );
    let (created_at, updated_at) = times_of(&phases, options.now);
    let mut workflow = new_workflow(id, phases, created_at, updated_at);
    workflow.title = plan.title;
    workflow.context = context_of(&raw);
    workflow.replans = replans;
    Ok(Imported {
        workflow,
        carry,
        documents: vec![(ROOT, raw)],
    })
}

/// A phase number written as a key (`"3"`), if it is one.
fn ordinal(key: &str) -> Option<u32> {
    key.trim().parse::<u32>().ok().filter(|n| *n >= 1)
}

/// How many phases the file describes: the highest phase any field or the plan mentions.
fn phase_count(file: &RecoveryFile, plan: &Plan, current: Option<u32>, completed: &[u32]) -> u32 {
    let mentioned = completed
        .iter()
        .copied()
        .chain(
            file.phase_metadata
                .iter()
                .flatten()
                .filter_map(|(key, _)| ordinal(key)),
        )
        .chain(
            file.replan_count
                .iter()
                .flatten()
                .filter_map(|(key, _)| ordinal(key)),
        )
        .chain(
            file.replan_history
                .iter()
                .flatten()
                .filter_map(|entry| entry.phase?.ordinal()),
        )
        .chain(plan.phases.keys().copied())
        .max()
        .unwrap_or(0);
    // `current_phase` moves past the last phase when it completes; with the plan at hand that is
    // recognisable, without it the phase is taken to exist.
    match current {
        Some(current) if plan.phases.is_empty() || current <= mentioned => current.max(mentioned),
        _ => mentioned,
    }
}

/// Reads `phase_metadata` into the phases: status, time, artifacts, error.
fn read_metadata(
    file: &RecoveryFile,
    raw: &Map<String, Value>,
    carry: &mut Carry,
    phases: &mut [Phase],
    now: DateTime<Utc>,
) {
    let raw_metadata = raw
        .get("phase_metadata")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let mut kept_keys = Vec::new();
    for (key, metadata) in file.phase_metadata.iter().flatten() {
        let Some(n) = ordinal(key) else {
            kept_keys.push(key.as_str());
            continue;
        };
        let raw_entry = raw_metadata
            .get(key)
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let slot = carry.object(
            &format!("{METADATA}.{n}"),
            &raw_entry,
            fields_of::<PhaseMetadata>(),
        );
        let time = slot.time("timestamp", metadata.timestamp.as_ref());
        let phase = &mut phases[n as usize - 1];
        if let Some(status) = metadata.status.as_deref().and_then(status_of) {
            phase.status = status;
        }
        if phase.status != PhaseStatus::Pending {
            phase.attempts = phase.attempts.max(1);
        }
        if phase.status == PhaseStatus::Failed {
            phase.failures = 1;
        }
        if phase.status.is_done() {
            phase.completed_at = time.map(Timestamp::from);
        } else {
            phase.started_at = time.map(Timestamp::from);
        }
        phase.artifacts = metadata
            .artifacts
            .iter()
            .flatten()
            .map(|path| Artifact {
                path: path.clone(),
                recorded_at: time.unwrap_or(now),
            })
            .collect();
        match &metadata.error {
            Some(Value::String(error)) if phase.status == PhaseStatus::Failed => {
                phase.error = Some(error.clone());
            }
            // An error on a phase that did not fail is the note of where its work stopped:
            // its progress, and the export writes it back as it was.
            Some(Value::String(note)) => {
                phase.progress = Some(note.clone());
                slot.keep(&raw_entry, "error");
            }
            Some(_) => slot.keep(&raw_entry, "error"),
            None => {}
        }
    }
    let metadata_slot = carry.object_mut(METADATA);
    for key in kept_keys {
        metadata_slot.keep(&raw_metadata, key);
    }
}

/// Reads `replan_history`; entries of no known phase are kept as they are.
fn read_replans(
    file: &RecoveryFile,
    raw: &Map<String, Value>,
    carry: &mut Carry,
    n_phases: u32,
    now: DateTime<Utc>,
) -> Vec<Replan> {
    let mut replans = Vec::new();
    for (entry, raw_entry) in file
        .replan_history
        .iter()
        .flatten()
        .zip(objects(raw, "replan_history"))
    {
        let Some(n) = entry
            .phase
            .and_then(Num::ordinal)
            .filter(|n| *n <= n_phases)
        else {
            carry
                .list_mut(REPLANS)
                .push(Slot::verbatim(Value::Object(raw_entry)));
            continue;
        };
        let mut slot = Slot::keyed(
            &replans.len().to_string(),
            &raw_entry,
            fields_of::<ReplanEntry>(),
        );
        let at = slot
            .time("timestamp", entry.timestamp.as_ref())
            .unwrap_or(now);
        carry.list_mut(REPLANS).push(slot);
        replans.push(Replan {
            phase: phase_id(n),
            reason: entry.reason.clone().unwrap_or_default(),
            at,
        });
    }
    replans
}

/// The plan and the artifacts the file names, as the context's files.
fn context_of(raw: &Map<String, Value>) -> ContextSummary {
    let mut context = ContextSummary::default();
    let mut add_path = |path: &str| {
        if !context.file_paths.iter().any(|known| known == path) {
            context.file_paths.push(path.to_owned());
        }
    };
    if let Some(plan_path) = raw.get("plan_path").and_then(Value::as_str) {
        add_path(plan_path);
    }
    if let Some(paths) = raw.get("artifact_paths").and_then(Value::as_object) {
        for path in paths.values().filter_map(Value::as_str) {
            add_path(path);
        }
    }
    context
}

pub(crate) fn build(workflow: &Workflow, builder: &mut Builder<'_>) -> Result<Vec<Built>> {
    let number = |index: usize| Value::from(index + 1);
    let mut top = Map::new();
    top.insert("workflow_id".into(), Value::from(workflow.id.as_str()));
    top.insert("current_phase".into(), number(current_index(workflow)));
    top.insert(
        "completed_phases".into(),
        workflow
            .phases
            .iter()
            .enumerate()
            .filter(|(_, phase)| phase.status.is_done())
            .map(|(index, _)| number(index))
            .collect(),
    );
    let mut metadata = Map::new();
    // Every phase has an entry, so the file says how many phases there are.
    for (index, phase) in workflow.phases.iter().enumerate() {
        let mut entry = Map::new();
        entry.insert("status".into(), Value::from(word(phase.status)));
        entry.insert(
            "artifacts".into(),
            phase
                .artifacts
                .iter()
                .map(|artifact| Value::from(artifact.path.as_str()))
                .collect(),
        );
        let time = if phase.status.is_done() {
            phase.completed_at
        } else {
            phase.started_at
        };
        if let Some(time) = time {
            entry.insert("timestamp".into(), time_value(time.utc()));
        }
        if let Some(error) = &phase.error {
            entry.insert("error".into(), Value::from(error.as_str()));
        }
        let key = (index + 1).to_string();
        let entry = builder.object(&format!("{METADATA}.{key}"), entry);
        metadata.insert(key, Value::Object(entry));
    }
    top.insert(
        "phase_metadata".into(),
        Value::Object(builder.object(METADATA, metadata)),
    );
    let replans = workflow
        .replans
        .iter()
        .enumerate()
        .map(|(index, replan)| {
            let mut entry = Map::new();
            let n = workflow
                .phase_index(&replan.phase)
                .map_or(Value::Null, number);
            entry.insert("phase".into(), n);
            entry.insert("reason".into(), Value::from(replan.reason.as_str()));
            entry.insert("timestamp".into(), time_value(replan.at));
            (index.to_string(), entry)
        })
        .collect();
    let replans = builder.list(REPLANS, replans);
    top.insert("replan_history".into(), replans);
    top.insert(
        "replan_count".into(),
        workflow
            .phases
            .iter()
            .enumerate()
            .filter(|(_, phase)| phase.replan_count > 0)
            .map(|(index, phase)| ((index + 1).to_string(), Value::from(phase.replan_count)))
            .collect::<Map<String, Value>>()
            .into(),
    );
    Ok(vec![Built {
        root: ROOT,
        name: "checkpoint.json",
        value: builder.object(ROOT, top),
    }])
}

pub(crate) fn status_of(word: &str) -> Option<PhaseStatus> {
    match word.to_lowercase().as_str() {
        "pending" | "not_started" => Some(PhaseStatus::Pending),
        "in_progress" | "running" | "active" | "replanned" => Some(PhaseStatus::InProgress),
        "awaiting_approval" | "waiting_approval" => Some(PhaseStatus::AwaitingApproval),
        "completed" | "complete" | "done" | "success" => Some(PhaseStatus::Complete),
        "failed" | "error" => Some(PhaseStatus::Failed),
        "skipped" => Some(PhaseStatus::Skipped),
        _ => None,
    }
}

pub(crate) fn word(status: PhaseStatus) -> &'static str {
    match status {
        PhaseStatus::Pending => "pending",
        PhaseStatus::InProgress => "in_progress",
        PhaseStatus::AwaitingApproval => "awaiting_approval",
        PhaseStatus::Complete => "completed",
        PhaseStatus::Failed => "failed",
        PhaseStatus::Skipped => "skipped",
    }
}

/// What an implementation plan in Markdown says: its title and its numbered phases.
#[derive(Debug, Default)]
struct Plan {
    title: Option<String>,
    phases: BTreeMap<u32, String>,
}

impl Plan {
    /// Reads `# Title` and headings such as `### Phase 3: Tests` (at most [`MAX_PHASES`]).
    fn parse(text: &str) -> Self {
        let mut plan = Self::default();
        for line in text.lines() {
            let Some(heading) = line.strip_prefix('#') else {
                continue;
            };
            let heading = heading.trim_start_matches('#').trim();
            if line.starts_with("# ") && plan.title.is_none() {
                plan.title = Some(heading.to_owned());
            }
            let Some(rest) = heading
                .get(..6)
                .filter(|word| word.eq_ignore_ascii_case("phase "))
                .map(|_| &heading[6..])
            else {
                continue;
            };
            let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
            let Some(n) = digits
                .parse::<u32>()
                .ok()
                .filter(|n| (1..=MAX_PHASES).contains(n))
            else {
                continue;
            };
            let name = rest[digits.len()..]
                .trim_start_matches([':', '-', '—', '.', ' '])
                .trim();
            plan.phases.entry(n).or_insert_with(|| name.to_owned());
        }
        plan
    }
}
