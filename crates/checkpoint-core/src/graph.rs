//! The phase DAG with statuses, as Mermaid or Graphviz dot, for a README or a pull request.

use std::fmt::Write as _;

use crate::model::{PhaseStatus, Workflow};

/// A Mermaid flowchart of the phases, coloured by status.
pub fn mermaid(workflow: &Workflow) -> String {
    let mut out = String::from("flowchart TD\n");
    for phase in &workflow.phases {
        let _ = writeln!(
            out,
            "    {}[\"{} ({})\"]:::{}",
            node(phase.id.as_str()),
            escape(&phase.name),
            label(phase.status),
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
            "    \"{}\" [label=\"{}\\n{}\", fillcolor=\"{colour}\"];",
            phase.id,
            escape(&phase.name),
            label(phase.status)
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
