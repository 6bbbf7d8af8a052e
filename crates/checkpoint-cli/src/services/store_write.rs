//! The one door into the store: a command's write of its workflow ([`Write`]: the transitions
//! decided under the lock, the human line, the warnings, the follow-up such as a checkpoint
//! commit, then the one document of the final state), and under it [`update`], through which
//! every other write of a command goes, so that each says the same of a pause its work lifted,
//! of the repairs made on loading and of the secrets redacted.
//!
//! The pause itself is the store's rule (`Store::update` journals an `Unpause` before work on a
//! paused workflow, on every path, the hooks' included, and reports it as `Loaded::unpaused`);
//! this module only says so. The hooks write through the store directly and say nothing: a
//! hook's output is its client's protocol.

use checkpoint_core::{Transition, Workflow, WorkflowId, store::Loaded};
use chrono::{DateTime, Utc};
use miette::{IntoDiagnostic, Result};

use crate::{
    ctx::Ctx,
    json::{CommitReport, WorkflowReport},
    output::{self, Format},
};

/// The transitions a write decides from the current state, under the lock: it may refuse (for
/// rules of the configuration, which the core does not know) or write several.
type Decide<'a> = Box<dyn FnOnce(&Workflow) -> checkpoint_core::Result<Vec<Transition>> + 'a>;

/// What runs after the write, before the document: a checkpoint commit, a snapshot.
type Then<'a> = Box<dyn FnOnce(&Loaded) -> Result<FollowUp> + 'a>;

/// One command's write of the workflow it means, and what it reports: build it with
/// [`Write::one`] or [`Write::decided`], then [`Write::apply`].
pub(crate) struct Write<'a> {
    decide: Decide<'a>,
    summary: Box<dyn FnOnce(&Workflow) -> String + 'a>,
    warnings: Vec<String>,
    then: Option<Then<'a>>,
}

/// What a write's follow-up did: the commit it made, for the document, and the state after its
/// own writes (as the store returned it), which the document then describes.
#[derive(Default)]
pub(crate) struct FollowUp {
    pub commit: Option<CommitReport>,
    pub after: Option<Loaded>,
}

impl<'a> Write<'a> {
    /// One transition; `summary` gives the human line from the state after it.
    pub(crate) fn one(
        transition: Transition,
        summary: impl FnOnce(&Workflow) -> String + 'a,
    ) -> Self {
        Self::decided(|_| Ok(vec![transition]), summary)
    }

    /// The transitions `decide` returns for the current state, under the lock.
    pub(crate) fn decided(
        decide: impl FnOnce(&Workflow) -> checkpoint_core::Result<Vec<Transition>> + 'a,
        summary: impl FnOnce(&Workflow) -> String + 'a,
    ) -> Self {
        Self {
            decide: Box::new(decide),
            summary: Box::new(summary),
            warnings: Vec::new(),
            then: None,
        }
    }

    /// Warnings about the request: printed on stderr and listed in the JSON document.
    pub(crate) fn warnings(self, warnings: Vec<String>) -> Self {
        Self { warnings, ..self }
    }

    /// Runs `then` (a checkpoint commit) after the write and before the document, which then
    /// holds what it did; when `then` fails, the write is still reported, then the error.
    pub(crate) fn then(self, then: impl FnOnce(&Loaded) -> Result<FollowUp> + 'a) -> Self {
        Self {
            then: Some(Box::new(then)),
            ..self
        }
    }

    /// Applies the write to the workflow `ctx` means through [`update`], runs the follow-up,
    /// and emits the document of the state after both (or the human line); returns that state.
    pub(crate) fn apply(self, ctx: &Ctx) -> Result<Loaded> {
        let id = ctx.workflow_id()?;
        let loaded = update(ctx, &id, self.decide)?;
        for warning in &self.warnings {
            output::warn(warning);
        }
        let (follow_up, result) = match self
            .then
            .map_or(Ok(FollowUp::default()), |then| then(&loaded))
        {
            Ok(follow_up) => (follow_up, Ok(())),
            Err(err) => (FollowUp::default(), Err(err)),
        };
        // The document describes the state after every write, the follow-up's included.
        let loaded = follow_up.after.unwrap_or(loaded);
        match ctx.format {
            Format::Json => {
                let report = WorkflowReport::new(&loaded).with_warnings(self.warnings);
                match follow_up.commit {
                    Some(commit) => report.with_commit(commit).emit()?,
                    None => report.emit()?,
                }
            }
            _ => {
                let mut line = (self.summary)(&loaded.workflow);
                line.push('\n');
                output::emit_human(ctx.color, &line).into_diagnostic()?;
            }
        }
        result.map(|()| loaded)
    }
}

/// Applies the transitions `decide` returns for workflow `id`'s current state, under its lock
/// (the store's `update`, at the command's time), and says what a person must know of it.
pub(crate) fn update(
    ctx: &Ctx,
    id: &WorkflowId,
    decide: impl FnOnce(&Workflow) -> checkpoint_core::Result<Vec<Transition>>,
) -> Result<Loaded> {
    let loaded = ctx.store.update(id, ctx.now, decide)?;
    say(&loaded, ctx.now);
    Ok(loaded)
}

/// Journals one `transition` at the time `now` (the runner's clock, which moves on while it
/// runs), as [`update`] does.
pub(crate) fn journal(
    ctx: &Ctx,
    id: &WorkflowId,
    now: DateTime<Utc>,
    transition: Transition,
) -> Result<Loaded> {
    let loaded = ctx.store.apply(id, now, transition)?;
    say(&loaded, now);
    Ok(loaded)
}

/// What a person must know of a write, on stderr: a pause its work lifted (and that the pause
/// was meant to last longer), the repairs made on loading, the secrets redacted.
fn say(loaded: &Loaded, now: DateTime<Utc>) {
    if let Some(pause) = &loaded.unpaused {
        output::note(&format!(
            "unpaused: the workflow was paused ({}) since {}",
            output::escape(&pause.reason),
            pause.at.to_rfc3339()
        ));
        if let Some(until) = pause.until.filter(|until| *until > now) {
            output::warn(&format!(
                "the pause was until {}, still in the future; `checkpoint pause --reason {} --until {}` pauses again",
                until.to_rfc3339(),
                output::escape(&pause.reason),
                until.to_rfc3339()
            ));
        }
    }
    output::warn_recoveries(&loaded.recoveries);
    output::warn_redacted(loaded.redacted);
}
