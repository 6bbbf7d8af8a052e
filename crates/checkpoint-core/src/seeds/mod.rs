//! The state files of the five checkpoint systems `checkpoint` replaces ("seeds"): finding them,
//! importing them as workflows without losing information, and writing workflows back in their
//! formats.
//!
//! Import maps what the model can hold and keeps everything else, and the way the file spelled
//! what was mapped, under `Workflow::extensions[<format>]`, so an export after an import gives back
//! an equivalent file. See `docs/seeds.md` for each format's mapping.

mod carry;
mod checkpoints_dir;
mod document;
mod dotagent;
mod files;
mod format;
mod nine_step;
mod orchestkit;
mod recovery;

pub use crate::seeds::{
    files::{Discovered, NINE_STEP_STATE_FILE, discover, locate, read_source, write_export},
    format::{Exported, ImportOptions, SeedFile, SeedFormat, SeedSource, detect, export, import},
};

#[cfg(test)]
mod tests;
