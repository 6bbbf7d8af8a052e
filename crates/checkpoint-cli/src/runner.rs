//! The parts of `checkpoint run` besides its loop (in `commands/run.rs`): which client a run
//! drives (its session command is the client's, `clients/<client>/session.rs`), the session
//! process, the runner lock, and what the user sees. No client's name appears here.

pub(crate) mod all;
pub(crate) mod args;
pub(crate) mod display;
pub(crate) mod lock;
pub(crate) mod observed;
pub(crate) mod process;
pub(crate) mod prompt;
pub(crate) mod select;
