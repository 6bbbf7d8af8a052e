//! What several commands share, each in a module named for what it does: commands import
//! services, core and `output`, never each other.

pub(crate) mod handoff;
pub(crate) mod handoff_receive;
pub(crate) mod new_workflow;
pub(crate) mod remote_sync;
pub(crate) mod resume_plan;
pub(crate) mod snapshots;
pub(crate) mod store_write;
pub(crate) mod transcript;
pub(crate) mod writers;
pub(crate) mod writes;
