//! Every environment variable the server reads or sets, by name (the command line keeps its own
//! list in `checkpoint-cli`'s `env.rs`; these names are the same variables).

/// The checkpoint directory, like `--dir` (read; the `checkpoint` commands it runs read it too).
pub(crate) const CHECKPOINT_DIR: &str = "CHECKPOINT_DIR";
/// Set for every `checkpoint` command the server runs: no live line on its stderr.
pub(crate) const CHECKPOINT_NO_PROGRESS: &str = "CHECKPOINT_NO_PROGRESS";
