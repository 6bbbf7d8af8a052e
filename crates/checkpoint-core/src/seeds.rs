//! The state files of the five checkpoint systems `checkpoint` replaces ("seeds"): finding them,
//! importing them as workflows without losing information, and writing workflows back in their
//! formats.
//!
//! Import maps what the model can hold and keeps everything else, and the way the file spelled
//! what was mapped, under `Workflow::extensions[<format>]`, so an export after an import gives back
//! an equivalent file. See `docs/seeds.md` for each format's mapping.

mod carry;
mod checkpoint_recovery;
mod checkpoints_dir;
pub(crate) mod common;
mod convert;
mod document;
mod dotagent;
mod files;
mod format;
mod nine_step;
mod orchestkit;
#[cfg(test)]
mod stages;

pub use crate::seeds::{
    common::{Exported, ImportOptions, SeedFile, SeedSource},
    convert::{export, import},
    files::{Discovered, discover, locate, read_source, write_export},
    format::{SeedFormat, detect},
};

#[cfg(test)]
mod tests;
