//! Snapshots of the working tree kept as git objects on a private ref per workflow, and files put
//! back from them: `engine.rs` takes one, `fast.rs` does its work after `git status` in-process
//! (`index_file.rs` reads and patches the private index, `cache_tree.rs` its trees per
//! directory, so that only the changed directories' trees are made again, `objects.rs` makes
//! git's objects,
//! `numstat.rs` counts the lines changed where every diff agrees) when it can, `restore.rs` puts
//! files back, `plumbing.rs` runs git, `scan_cache.rs` keeps what a snapshot left out and why,
//! `settings_cache.rs` the settings the fast path read. Built on one `git status` with a private
//! index kept between snapshots (`cargo xtask bench --filter snapshot` measures them against `git
//! status`; see docs/performance.md).

mod cache_tree;
mod engine;
mod fast;
mod index_file;
mod numstat;
mod objects;
mod plumbing;
mod restore;
mod scan_cache;
mod settings_cache;

pub(crate) use crate::snapshot::{
    engine::{Changed, LeftOut, SnapshotOptions, Snapshots, Taken, raw as raw_diff},
    plumbing::display,
    restore::Step,
};
