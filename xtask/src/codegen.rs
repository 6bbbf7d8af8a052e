//! `cargo xtask codegen`: the committed JSON Schemas of the file formats, from the model types.

use std::{fs, path::Path};

use crate::Result;

/// Writes (or with `check`, verifies) `docs/*.schema.json`.
pub(crate) fn run(root: &Path, check: bool) -> Result {
    let files = [
        (
            "docs/state.schema.json",
            checkpoint_core::schema::state_schema(),
        ),
        (
            "docs/journal.schema.json",
            checkpoint_core::schema::journal_schema(),
        ),
        (
            "docs/plan.schema.json",
            checkpoint_core::schema::plan_schema(),
        ),
    ];
    let mut stale = Vec::new();
    for (path, contents) in files {
        let path = root.join(path);
        if fs::read_to_string(&path).ok().as_deref() == Some(contents.as_str()) {
            continue;
        }
        if check {
            stale.push(path.display().to_string());
        } else {
            fs::write(&path, contents)
                .map_err(|err| format!("failed to write `{}`: {err}", path.display()))?;
            eprintln!("wrote {}", path.display());
        }
    }
    if stale.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "stale generated files (run `cargo xtask codegen`): {}",
            stale.join(", ")
        ))
    }
}
