//! The crash-safe store: one directory per workflow holding `state.json`, its backup, the journal
//! and a lock file.
//!
//! A write holds the lock, appends the transitions to the journal (fsynced), then replaces
//! `state.json` atomically (temp file, fsync, rename, fsync of the directory). The journal is the
//! source of truth: a state that lags behind it is brought up to date by replay, and a state that
//! does not parse is rebuilt from it (or from the backup) and kept aside, never overwritten.

mod archive;
mod checked;
mod effects_index;
mod handle;
mod layout;
mod load;
mod loaded;
mod lock;
mod own;
mod repair;
mod results;
mod sync;
mod update;
mod write;
mod writes;

pub(crate) use crate::store::layout::{BACKUP_FILE, TEMP_PREFIX};
#[cfg(test)]
pub(crate) use crate::store::write::MAX_DEFERRED_ENTRIES;
pub use crate::store::{
    archive::{ARCHIVE_DIR, FAILED_DIR},
    handle::{Store, StoreOptions},
    layout::{
        DEFAULT_STORE, JOURNAL_FILE, STATE_FILE, common_dir, default_store, effect_dir,
        effect_place, project_root, project_with_store,
    },
    load::parse_state,
    loaded::{JOURNAL_REPAIR_HINT, Loaded, Recovery, Verification},
    repair::JournalRepair,
    write::DEFER_STATE_BYTES,
    writes::{BashRun, Notice},
};

#[cfg(test)]
mod tests;
