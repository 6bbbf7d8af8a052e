//! JSON Schemas of the on-disk formats, generated from the model types.

use crate::{journal::Entry, model::Workflow, plan::Plan};

/// The JSON Schema of `state.json`, pretty-printed with a trailing newline.
pub fn state_schema() -> String {
    render(schemars::schema_for!(Workflow))
}

/// The JSON Schema of one `journal.jsonl` line.
pub fn journal_schema() -> String {
    render(schemars::schema_for!(Entry))
}

/// The JSON Schema of a plan file for `checkpoint init --plan`.
pub fn plan_schema() -> String {
    render(schemars::schema_for!(Plan))
}

fn render(schema: schemars::Schema) -> String {
    let mut text = serde_json::to_string_pretty(&schema).expect("a schema always serializes");
    text.push('\n');
    text
}
