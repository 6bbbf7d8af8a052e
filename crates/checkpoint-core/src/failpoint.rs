//! Failpoints: I/O errors injected at named steps of the store's write path, so that tests can
//! check that every failure leaves the old state or the new one.
//!
//! The steps and [`Failpoint`] are always defined, so that a caller can parse a test setting, but
//! an error is injected only when the crate is built with the `failpoints` feature, which is off
//! by default and enabled by the CLI's integration tests. Without it, [`ENABLED`] is false and the
//! store ignores [`StoreOptions::failpoint`](crate::store::StoreOptions::failpoint).

use std::io;

/// Whether this build injects errors (the `failpoints` feature).
pub const ENABLED: bool = cfg!(feature = "failpoints");

/// A step of the write path, in the order a write takes them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Appending the transitions to `journal.jsonl`: the injected failure writes half the bytes
    /// first, as a crash mid-append would.
    JournalAppend,
    /// Fsyncing the journal.
    JournalFsync,
    /// Writing the new state to a temporary file.
    TempWrite,
    /// Fsyncing the temporary file.
    TempFsync,
    /// Linking the old `state.json` to `state.json.bak`.
    BackupLink,
    /// Renaming the temporary file over `state.json`.
    Rename,
    /// Fsyncing the workflow's directory.
    DirFsync,
}

/// The error a failpoint injects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    /// A generic I/O error.
    Io,
    /// `ENOSPC`: the disk is full.
    NoSpace,
}

/// Where to inject an error, and which.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Failpoint {
    /// The step that fails.
    pub step: Step,
    /// How it fails.
    pub failure: Failure,
}

impl Step {
    /// Every step, in write order.
    pub const ALL: [Step; 7] = [
        Step::JournalAppend,
        Step::JournalFsync,
        Step::TempWrite,
        Step::TempFsync,
        Step::BackupLink,
        Step::Rename,
        Step::DirFsync,
    ];

    /// The step's name in a failpoint spec.
    pub fn as_str(self) -> &'static str {
        match self {
            Step::JournalAppend => "journal_append",
            Step::JournalFsync => "journal_fsync",
            Step::TempWrite => "temp_write",
            Step::TempFsync => "temp_fsync",
            Step::BackupLink => "backup_link",
            Step::Rename => "rename",
            Step::DirFsync => "dir_fsync",
        }
    }
}

impl Failpoint {
    /// Parses `<step>` or `<step>:enospc`, for example `rename` or `temp_write:enospc`.
    pub fn parse(spec: &str) -> Option<Self> {
        let (step, failure) = match spec.split_once(':') {
            Some((step, "enospc")) => (step, Failure::NoSpace),
            Some(_) => return None,
            None => (spec, Failure::Io),
        };
        let step = Step::ALL.into_iter().find(|known| known.as_str() == step)?;
        Some(Self { step, failure })
    }
}

/// Fails with the injected error when `failpoint` names `step`.
#[cfg(feature = "failpoints")]
pub(crate) fn check(failpoint: Option<Failpoint>, step: Step) -> io::Result<()> {
    match failpoint {
        Some(failpoint) if failpoint.step == step => Err(match failpoint.failure {
            Failure::Io => io::Error::other(format!("injected failure at `{}`", step.as_str())),
            Failure::NoSpace => io::Error::new(
                io::ErrorKind::StorageFull,
                format!("no space left on device (injected at `{}`)", step.as_str()),
            ),
        }),
        _ => Ok(()),
    }
}

/// Always succeeds: this build has no failpoints.
#[cfg(not(feature = "failpoints"))]
#[inline(always)]
pub(crate) fn check(_failpoint: Option<Failpoint>, _step: Step) -> io::Result<()> {
    Ok(())
}
