//! The tools of the effect ledger: `effect` (one no hook saw), `effects` (the list) and
//! `resolve` (an answer proposed for an unknown outcome, which a person settles).

use std::ffi::OsString;

use schemars::JsonSchema;
use serde::Deserialize;

use super::{Invocation, ToolDef, tool};

/// The tools of the effect ledger. Letting a repeat through (`effects allow`) is a person's
/// decision: no tool does it. Nor does one settle an unknown outcome: `resolve` only proposes
/// the answer (a note for the person, the effect left unknown and guarded), since the model
/// that would settle it is the one whose repeat the guard holds back.
pub(super) fn effect_tools() -> Vec<ToolDef> {
    vec![
        tool::<EffectArgs>(
            "effect",
            "Record an effect that no hook saw: something you did that changed the world outside \
             the project (an email sent, a ticket filed through a web page, a deploy by a script \
             the hooks do not know), with its result (a URL, an id, a version). A later session \
             is told it is done and must not repeat it; a Bash command recorded here is refused \
             if run again. Pushes, pull requests, publishes and POSTs through Bash are recorded \
             by the hooks already.",
            false,
            |args| {
                let mut argv = vec![OsString::from("effect"), "--source=mcp".into()];
                if let Some(output) = &args.output {
                    argv.push(format!("--output={output}").into());
                }
                argv.extend([
                    "--".into(),
                    OsString::from(&args.phase),
                    args.what.clone().into(),
                ]);
                Ok(Invocation::raw(
                    args.workflow,
                    argv,
                    format!("recorded the effect on phase `{}`", args.phase),
                ))
            },
        ),
        tool::<EffectsArgs>(
            "effects",
            "List the effects recorded on the workflow (pushes, pull requests, publishes, POSTs, \
             and those recorded by hand), each with its number, phase, command, output excerpt, \
             whether it succeeded, its time and session. Read-only. By default the effects of \
             the phases not done; `phase` for one phase, `all` for every one. Never repeat a \
             done effect: use its output instead.",
            true,
            |args| {
                let mut argv = vec![OsString::from("effects")];
                if let Some(phase) = &args.phase {
                    argv.push(format!("--phase={phase}").into());
                }
                if args.all.unwrap_or(false) {
                    argv.push("--all".into());
                }
                Ok(Invocation::raw(args.workflow, argv, "effects".into()))
            },
        )
        .showing_document(),
        tool::<ResolveArgs>(
            "resolve",
            "Propose what became of an effect whose outcome is unknown (let through, and its \
             session cut off before the outcome came): run the check the refusal or the resume \
             plan names (for a push, `git ls-remote <remote> <ref>`), then give `done` and the \
             check's output as `evidence`. This does not settle it: the effect stays unknown \
             and a repeat stays refused until a person runs the `checkpoint effects resolve` \
             command the answer names; tell the person that command.",
            false,
            |args| {
                let said = if args.done { "--done" } else { "--not-done" };
                let argv = vec![
                    OsString::from("effects"),
                    "resolve".into(),
                    format!("--propose={}", args.evidence).into(),
                    said.into(),
                    "--".into(),
                    args.number.to_string().into(),
                ];
                Ok(Invocation::raw(
                    args.workflow,
                    argv,
                    format!(
                        "proposed; effect {} stays unknown until a person runs `checkpoint effects resolve {} {said}`",
                        args.number, args.number
                    ),
                ))
            },
        ),
    ]
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct EffectArgs {
    /// The workflow id; omit it when the project has one active workflow.
    workflow: Option<String>,
    /// The phase it belongs to.
    phase: String,
    /// What was done: the command, or in words ("emailed the customer the invoice").
    what: String,
    /// Its result: a URL, an id, a version (at most 1,000 characters are kept).
    output: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct EffectsArgs {
    /// The workflow id; omit it when the project has one active workflow.
    workflow: Option<String>,
    /// Only this phase's effects.
    phase: Option<String>,
    /// Every effect of the workflow (default false: those of the phases not done).
    all: Option<bool>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ResolveArgs {
    /// The workflow id; omit it when the project has one active workflow.
    workflow: Option<String>,
    /// The effect's number (`effects` lists it, `unknown: true`).
    number: u64,
    /// Whether the check shows it happened.
    done: bool,
    /// What shows it: the check's command and output.
    evidence: String,
}
