//! The documented exit codes of `checkpoint` (see the README).

/// The command did what was asked.
pub const SUCCESS: u8 = 0;
/// An unexpected failure (I/O and everything not listed below).
pub const FAILURE: u8 = 1;
/// The command line was invalid (clap's code).
pub const USAGE: u8 = 2;
/// The transition is not allowed from the current state (nothing was written).
pub const REFUSED: u8 = 3;
/// The workflow, phase or task does not exist, or several workflows match.
pub const NOT_FOUND: u8 = 4;
/// Another process held the lock for longer than `CHECKPOINT_LOCK_TIMEOUT`.
pub const LOCKED: u8 = 5;
/// The state cannot be trusted: corrupt beyond repair, or written by a newer version (kept as is).
pub const UNTRUSTED: u8 = 6;
/// A write failed after it may have reached the disk: re-read the state before retrying.
pub const MAYBE_SAVED: u8 = 7;
/// `validate` found errors: the state cannot be trusted as is.
pub const INVALID: u8 = 8;
