//! `pause`, `unpause` and `abandon`.

use checkpoint_core::Transition;
use chrono::{DateTime, Utc};
use clap::Args;
use miette::Result;

use crate::{ctx::Ctx, failure::Failure, output, services::store_write::Write};

/// Arguments of `checkpoint pause`.
#[derive(Debug, Args)]
pub(crate) struct PauseArgs {
    /// Why, for example `rate_limit`
    #[arg(long, short = 'r')]
    pub reason: String,
    /// When work may continue (RFC 3339, for example `2026-01-01T12:00:00Z`)
    #[arg(long, value_name = "TIME")]
    pub until: Option<String>,
}

/// Arguments of `checkpoint abandon`.
#[derive(Debug, Args)]
pub(crate) struct AbandonArgs {
    /// Why
    #[arg(long, short = 'r')]
    pub reason: Option<String>,
}

pub(crate) fn pause(ctx: &Ctx, args: &PauseArgs) -> Result<()> {
    let until = match &args.until {
        Some(text) => Some(
            DateTime::parse_from_rfc3339(text)
                .map(|time| time.with_timezone(&Utc))
                .map_err(|err| {
                    Failure::new(
                        "checkpoint::invalid_time",
                        format!("failed to parse `--until {text}` as an RFC 3339 time"),
                    )
                    .with_help("give a time such as `2030-01-01T09:00:00Z`")
                    .with_source(err)
                })?,
        ),
        None => None,
    };
    Write::one(
        Transition::Pause {
            reason: args.reason.clone(),
            until,
        },
        |_| match until {
            Some(until) => format!(
                "paused until {} ({})",
                until.to_rfc3339(),
                output::ago(until, ctx.now)
            ),
            None => "paused".into(),
        },
    )
    .apply(ctx)?;
    Ok(())
}

pub(crate) fn unpause(ctx: &Ctx) -> Result<()> {
    Write::one(Transition::Unpause, |_| "no longer paused".into()).apply(ctx)?;
    Ok(())
}

pub(crate) fn abandon(ctx: &Ctx, args: &AbandonArgs) -> Result<()> {
    Write::one(
        Transition::Abandon {
            reason: args.reason.clone(),
        },
        |workflow| {
            format!(
                "abandoned workflow `{}`; its files are kept in `{}`",
                workflow.id,
                ctx.store.workflow_dir(&workflow.id).display()
            )
        },
    )
    .apply(ctx)?;
    Ok(())
}
