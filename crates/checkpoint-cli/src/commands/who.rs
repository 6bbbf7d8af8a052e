//! `checkpoint who <path>…`: a file's writers, most recent first (session, agent, phase, time,
//! tool or command, lines added and removed); `checkpoint claim <phase> <glob>…`: the paths a
//! session or sub-agent holds while it works on a phase, which other writers are refused.

use std::path::PathBuf;

use checkpoint_core::writes::{CLAIM_HELP, Write, Writer, claim_glob};
use clap::Args;
use miette::{IntoDiagnostic, Result, miette};
use serde::Serialize;

use crate::{
    ctx::Ctx,
    output::{self, Format},
    services::writes::{absolute, hold, running_session, shown},
};

/// Arguments of `checkpoint who`.
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  checkpoint who src/lib.rs
  checkpoint who docs/*.md --format json")]
pub(crate) struct WhoArgs {
    /// The files, relative to the current directory
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
}

/// Arguments of `checkpoint claim`.
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  checkpoint claim build 'src/parser/*'   # this session holds them while it works on `build`
  checkpoint claim build                  # holds the phase's `claims` from the plan
  checkpoint claim build --release        # hands them back")]
pub(crate) struct ClaimArgs {
    /// The phase the paths are held for
    pub phase: String,
    /// Globs over paths from the checkout's top (`*` matches `/` too, `**/` no directory or
    /// several, a directory everything under it); none: the phase's `claims` from the plan
    #[arg(value_name = "GLOB")]
    pub globs: Vec<String>,
    /// Hand back this holder's claims of the phase
    #[arg(long)]
    pub release: bool,
    /// The holding session (default: the session whose shell runs the command,
    /// `CLAUDE_CODE_SESSION_ID`)
    #[arg(long)]
    pub session: Option<String>,
    /// The holding sub-agent of that session
    #[arg(long)]
    pub agent: Option<String>,
}

/// The document of `checkpoint who --format json`.
#[derive(Serialize)]
struct WhoReport {
    files: Vec<FileWrites>,
}

#[derive(Serialize)]
struct FileWrites {
    path: String,
    writes: Vec<WriteRow>,
}

#[derive(Serialize)]
struct WriteRow {
    at: String,
    session: String,
    agent: Option<String>,
    phase: Option<String>,
    tool: String,
    added: Option<u64>,
    removed: Option<u64>,
}

impl From<&Write> for WriteRow {
    fn from(write: &Write) -> Self {
        Self {
            at: write.at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            session: write.session.clone(),
            agent: write.agent.clone(),
            phase: write.phase.clone(),
            tool: write.tool.clone(),
            added: write.added,
            removed: write.removed,
        }
    }
}

/// Prints each file's writers, most recent first.
pub(crate) fn who(ctx: &Ctx, args: &WhoArgs) -> Result<()> {
    let mut files = Vec::new();
    for path in &args.paths {
        let path = absolute(&ctx.cwd, &path.to_string_lossy());
        let record = ctx
            .store
            .path_record(&path.display().to_string())
            .into_diagnostic()?;
        files.push(FileWrites {
            path: shown(&ctx.project_root, &path),
            writes: record
                .map(|record| record.writes.iter().rev().map(WriteRow::from).collect())
                .unwrap_or_default(),
        });
    }
    if ctx.format == Format::Json {
        return output::emit_json(&WhoReport { files }).into_diagnostic();
    }
    let mut text = String::new();
    for file in &files {
        text.push_str(&format!("{}\n", output::escape(&file.path)));
        if file.writes.is_empty() {
            text.push_str("  no write recorded\n");
        }
        for write in &file.writes {
            let who = Writer::new(&write.session, write.agent.as_deref()).describe(None);
            let lines = match (write.added, write.removed) {
                (Some(added), Some(removed)) => format!(" +{added} -{removed}"),
                _ => String::new(),
            };
            let phase = write
                .phase
                .as_deref()
                .map_or_else(String::new, |phase| format!(" phase `{phase}`"));
            text.push_str(&format!(
                "  {}  {who}{phase}  {}{lines}\n",
                write.at,
                output::escape(&write.tool)
            ));
        }
    }
    output::emit(&text).into_diagnostic()
}

/// Claims (or hands back) paths for a phase.
pub(crate) fn claim(ctx: &Ctx, args: &ClaimArgs) -> Result<()> {
    let session = match &args.session {
        Some(session) => session.clone(),
        None => running_session().ok_or_else(|| {
            miette!(
                help = "run it from the session's own shell, or name the session with `--session <id>`",
                "no session to hold the claim: `CLAUDE_CODE_SESSION_ID` is not set"
            )
        })?,
    };
    let holder = Writer::new(&session, args.agent.as_deref());
    let workflow = ctx.load()?.workflow;
    let id = checkpoint_core::PhaseId::new(&args.phase)?;
    let Some(declared) = workflow.phase(&id) else {
        return Err(checkpoint_core::unknown_phase(&workflow, &id).into());
    };
    let phase = id.to_string();
    let globs = if args.release {
        Vec::new()
    } else if args.globs.is_empty() {
        if declared.claims.is_empty() {
            return Err(miette!(
                help = "name the paths: `checkpoint claim {phase} 'src/parser/*'`, or declare `claims` for the phase in the plan",
                "phase `{phase}` declares no claims in its plan"
            ));
        }
        declared.claims.clone()
    } else {
        args.globs
            .iter()
            .map(|glob| {
                claim_glob(glob)
                    .map_err(|why| miette!(help = CLAIM_HELP, "cannot claim `{glob}`: {why}"))
            })
            .collect::<Result<Vec<_>>>()?
    };
    hold(&ctx.store, &workflow, &phase, &holder, &globs, ctx.now).into_diagnostic()?;
    let text = if args.release {
        format!(
            "{} handed back its claims for phase `{phase}`.\n",
            holder.describe(None)
        )
    } else {
        format!(
            "{} holds {} for phase `{phase}`: other writers' writes there are refused until the phase ends or the claim is handed back.\n",
            holder.describe(None),
            globs.join(", ")
        )
    };
    output::emit(&text).into_diagnostic()
}
