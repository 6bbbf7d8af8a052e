//! Snapshots of the working tree kept as git objects on a private ref per workflow, and files
//! put back from them: `engine.rs` takes one, `restore.rs` puts files back, `plumbing.rs` runs
//! git. Built on git processes with a private index kept between snapshots (measured against
//! an in-process git library in `cargo xtask bench`; see ARCHITECTURE.md).

mod engine;
mod plumbing;
mod restore;

pub(crate) use crate::snapshot::{
    engine::{Changed, LeftOut, SnapshotOptions, Snapshots, Taken},
    plumbing::display,
    restore::Step,
};
