//! Import and export: the entry points that dispatch to each format's reader and writer, and
//! reconcile what was read with what would be written, so that nothing is lost.

use serde_json::{Map, Value};

use crate::{
    error::Result,
    model::{Activity, Workflow, check_invariants},
    seeds::{
        SeedFormat,
        carry::{Builder, Carry, reconcile},
        checkpoint_recovery, checkpoints_dir,
        common::{Built, Exported, ImportOptions, Imported, SeedSource},
        document, dotagent, nine_step, orchestkit,
    },
};

/// Converts a seed file (and its companions) into a new workflow.
///
/// Nothing is lost: fields the model has no place for, and the spelling of those it mapped, are
/// kept in `extensions[<format>]` for [`export`].
pub fn import(
    format: SeedFormat,
    source: &SeedSource,
    options: &ImportOptions,
) -> Result<Workflow> {
    let Imported {
        mut workflow,
        mut carry,
        documents,
    } = match format {
        SeedFormat::Dotagent => dotagent::read(source, options)?,
        SeedFormat::Orchestkit => orchestkit::read(source, options)?,
        SeedFormat::CheckpointRecovery => checkpoint_recovery::read(source, options)?,
        SeedFormat::CheckpointsDir => checkpoints_dir::read(source, options)?,
        SeedFormat::NineStep => nine_step::read(source, options)?,
    };
    workflow.refresh_status();
    // The file was last written by a session of the other system: a sign of life at its time,
    // so that the resume planner treats its phases in progress as interrupted once it is old.
    if !workflow.status.is_finished() {
        workflow.last_activity = Some(Activity {
            at: workflow.updated_at,
            source: format!("import:{}", format.name()),
            session_id: None,
        });
    }
    check_invariants(&workflow).map_err(|message| {
        document::invalid(
            format,
            &source.main.path,
            &source.main.bytes,
            format!("it does not describe a valid workflow: {message}"),
        )
    })?;
    let mut builder = Builder::new(&carry);
    let built = build(format, &workflow, &mut builder)?;
    let placed = builder.into_placed();
    for (root, raw) in &documents {
        if let Some(canonical) = built.iter().find(|built| built.root == *root) {
            reconcile(&mut carry, &placed, root, raw, &canonical.value);
        }
    }
    carry.store(&mut workflow, format);
    Ok(workflow)
}

/// Writes a workflow in a seed format.
///
/// A workflow imported from that format comes back as the file it was read from, with the changes
/// made since; fields the format has no place for are left out.
pub fn export(format: SeedFormat, workflow: &Workflow) -> Result<Exported> {
    let carry = Carry::load(workflow, format);
    let mut builder = Builder::new(&carry);
    let mut built = build(format, workflow, &mut builder)?.into_iter();
    let main = built.next().expect("every format builds its state file");
    Ok(Exported {
        bytes: to_bytes(main.value),
        companions: built
            .map(|built| (built.name.to_owned(), to_bytes(built.value)))
            .collect(),
    })
}

fn build(format: SeedFormat, workflow: &Workflow, builder: &mut Builder<'_>) -> Result<Vec<Built>> {
    match format {
        SeedFormat::Dotagent => dotagent::build(workflow, builder),
        SeedFormat::Orchestkit => orchestkit::build(workflow, builder),
        SeedFormat::CheckpointRecovery => checkpoint_recovery::build(workflow, builder),
        SeedFormat::CheckpointsDir => checkpoints_dir::build(workflow, builder),
        SeedFormat::NineStep => nine_step::build(workflow, builder),
    }
}

fn to_bytes(value: Map<String, Value>) -> Vec<u8> {
    let mut bytes =
        serde_json::to_vec_pretty(&Value::Object(value)).expect("a JSON value always serializes");
    bytes.push(b'\n');
    bytes
}
