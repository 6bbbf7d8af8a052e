//! The phase DAG with statuses: as an indented tree for the terminal (`tree`), and as Mermaid or
//! Graphviz dot for a README or a pull request.

use std::fmt::Write as _;

use crate::{
    id::PhaseId,
    model::{Phase, PhaseStatus, Workflow},
};

/// One line of the terminal tree: the drawing before the phase, the phase (an index into the
/// workflow's phases), and its other dependencies, which the tree does not draw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeLine<'a> {
    pub prefix: String,
    pub phase: usize,
    pub also_after: Vec<&'a PhaseId>,
}

/// The phases as an indented tree: each phase under the last of its dependencies in the
/// workflow's order (so it comes after every one of them), its other dependencies named; the
/// phases without dependencies are the roots.
pub fn tree(workflow: &Workflow) -> Vec<TreeLine<'_>> {
    let phases = &workflow.phases;
    let index_of = |id: &PhaseId| phases.iter().position(|phase| &phase.id == id);
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); phases.len()];
    let mut roots = Vec::new();
    let mut parent_of = vec![None; phases.len()];
    for (index, phase) in phases.iter().enumerate() {
        match phase.dependencies.iter().filter_map(index_of).max() {
            Some(parent) => {
                children[parent].push(index);
                parent_of[index] = Some(parent);
            }
            None => roots.push(index),
        }
    }
    let mut lines = Vec::with_capacity(phases.len());
    // Depth first, iteratively: (phase, the drawing of its ancestors, last among its siblings).
    let mut stack: Vec<(usize, String, Option<bool>)> = roots
        .iter()
        .rev()
        .map(|&root| (root, String::new(), None))
        .collect();
    while let Some((index, indent, last)) = stack.pop() {
        let prefix = match last {
            None => String::new(),
            Some(true) => format!("{indent}└─ "),
            Some(false) => format!("{indent}├─ "),
        };
        let inner = match last {
            None => String::new(),
            Some(true) => format!("{indent}   "),
            Some(false) => format!("{indent}│  "),
        };
        let parent = parent_of[index].map(|parent| &phases[parent].id);
        lines.push(TreeLine {
            prefix,
            phase: index,
            also_after: phases[index]
                .dependencies
                .iter()
                .filter(|dep| Some(*dep) != parent)
                .collect(),
        });
        let kids = &children[index];
        for (position, &child) in kids.iter().enumerate().rev() {
            stack.push((child, inner.clone(), Some(position + 1 == kids.len())));
        }
    }
    lines
}

/// A Mermaid flowchart of the phases, coloured by status.
pub fn mermaid(workflow: &Workflow) -> String {
    let mut out = String::from("flowchart TD\n");
    for phase in &workflow.phases {
        let _ = writeln!(
            out,
            "    {}[\"{} ({}{})\"]:::{}",
            node(phase.id.as_str()),
            escape(&phase.name),
            label(phase.status),
            gate(phase),
            class(phase.status)
        );
    }
    for phase in &workflow.phases {
        for dep in &phase.dependencies {
            let _ = writeln!(
                out,
                "    {} --> {}",
                node(dep.as_str()),
                node(phase.id.as_str())
            );
        }
    }
    out.push_str(
        "    classDef done fill:#d4edda,stroke:#28a745\n    classDef active fill:#cce5ff,stroke:#007bff\n    classDef waiting fill:#fff3cd,stroke:#ffc107\n    classDef failed fill:#f8d7da,stroke:#dc3545\n    classDef pending fill:#f8f9fa,stroke:#6c757d\n",
    );
    out
}

/// A Graphviz digraph of the phases, coloured by status.
pub fn dot(workflow: &Workflow) -> String {
    let mut out = format!(
        "digraph \"{}\" {{\n    rankdir=TB;\n    node [shape=box, style=\"rounded,filled\"];\n",
        workflow.id
    );
    for phase in &workflow.phases {
        let colour = match class(phase.status) {
            "done" => "#d4edda",
            "active" => "#cce5ff",
            "waiting" => "#fff3cd",
            "failed" => "#f8d7da",
            _ => "#f8f9fa",
        };
        let _ = writeln!(
            out,
            "    \"{}\" [label=\"{}\\n{}{}\", fillcolor=\"{colour}\"];",
            phase.id,
            escape(&phase.name),
            label(phase.status),
            gate(phase)
        );
    }
    for phase in &workflow.phases {
        for dep in &phase.dependencies {
            let _ = writeln!(out, "    \"{dep}\" -> \"{}\";", phase.id);
        }
    }
    out.push_str("}\n");
    out
}

/// `, approval gate` after the status of a phase whose gate is ahead, so that it is seen before
/// it is reached.
fn gate(phase: &Phase) -> &'static str {
    if phase.requires_approval
        && matches!(
            phase.status,
            PhaseStatus::Pending | PhaseStatus::InProgress | PhaseStatus::Failed
        )
    {
        ", approval gate"
    } else {
        ""
    }
}

fn node(id: &str) -> String {
    id.replace(['.', '-'], "_")
}

fn escape(text: &str) -> String {
    text.replace('"', "'")
}

fn label(status: PhaseStatus) -> &'static str {
    match status {
        PhaseStatus::Pending => "pending",
        PhaseStatus::InProgress => "in progress",
        PhaseStatus::AwaitingApproval => "awaiting approval",
        PhaseStatus::Complete => "complete",
        PhaseStatus::Failed => "failed",
        PhaseStatus::Skipped => "skipped",
    }
}

fn class(status: PhaseStatus) -> &'static str {
    match status {
        PhaseStatus::Complete | PhaseStatus::Skipped => "done",
        PhaseStatus::InProgress => "active",
        PhaseStatus::AwaitingApproval => "waiting",
        PhaseStatus::Failed => "failed",
        PhaseStatus::Pending => "pending",
    }
}

#[cfg(test)]
mod tests {
    use chrono::DateTime;

    use super::*;
    use crate::{
        id::WorkflowId,
        plan::{PhasePlan, Plan},
    };

    fn workflow(specs: &[&str]) -> Workflow {
        Plan {
            phases: specs
                .iter()
                .map(|spec| PhasePlan::from_spec(spec).unwrap())
                .collect(),
            ..Plan::default()
        }
        .into_workflow(WorkflowId::new("w").unwrap(), None, DateTime::UNIX_EPOCH)
        .unwrap()
    }

    fn drawn(workflow: &Workflow) -> String {
        tree(workflow)
            .iter()
            .map(|line| {
                let also: Vec<&str> = line.also_after.iter().map(|id| id.as_str()).collect();
                format!(
                    "{}{} {:?}\n",
                    line.prefix, workflow.phases[line.phase].id, also
                )
            })
            .collect()
    }

    #[test]
    fn every_phase_is_drawn_once_after_all_its_dependencies() {
        let workflow = workflow(&[
            "design",
            "build:design",
            "docs:design",
            "release:build,docs",
            "extra",
        ]);
        assert_eq!(
            drawn(&workflow),
            "design []\n├─ build []\n└─ docs []\n   └─ release [\"build\"]\nextra []\n"
        );
        // A chain, a single phase, and none.
        assert_eq!(
            drawn(&self::workflow(&["a", "b:a", "c:b"])),
            "a []\n└─ b []\n   └─ c []\n"
        );
        assert_eq!(drawn(&self::workflow(&["only"])), "only []\n");
    }
}
