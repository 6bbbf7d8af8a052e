//! The tools: for each, its input (a JSON Schema derived from the type the arguments are read
//! into), a description written for the model, and the `checkpoint` command it runs.
//!
//! Approving or rejecting an approval gate, abandoning a workflow and rewinding history are a
//! person's decisions: they have no tool. Putting files back (`undo`) has one, so that a model
//! can undo its own damage: it is reversible (`checkpoint redo`), and its snapshot keeps the
//! tree it replaces.

mod effect_tools;

use std::ffi::OsString;

use schemars::JsonSchema;
use serde::{Deserialize, de::DeserializeOwned};
use serde_json::{Map, Value};

/// One tool of the server.
pub(crate) struct ToolDef {
    pub name: &'static str,
    pub description: &'static str,
    /// The tool only reads state.
    pub read_only: bool,
    /// The text for the model carries the whole document (a status or a plan), not a summary.
    pub shows_document: bool,
    pub input_schema: Map<String, Value>,
    parse: Parse,
}

type Parse = Box<dyn Fn(Value) -> Result<Invocation, serde_json::Error> + Send + Sync>;

/// The `checkpoint` command a tool call runs.
#[derive(Debug)]
pub(crate) struct Invocation {
    pub workflow: Option<String>,
    pub args: Vec<OsString>,
    /// A plan to write to a temporary file and pass as `--plan` (`init`).
    pub plan: Option<Value>,
    /// A text for the command's stdin (`--file=-`): a note of any length, where one
    /// command-line argument is limited by the kernel (128 KiB on Linux).
    pub stdin: Option<String>,
    /// What succeeded, in one line, for the model.
    pub headline: String,
}

impl ToolDef {
    fn showing_document(mut self) -> Self {
        self.shows_document = true;
        self
    }

    /// Reads the arguments of a call; a missing, unknown or mistyped argument is an error that
    /// names it.
    pub(crate) fn invocation(&self, arguments: Value) -> Result<Invocation, serde_json::Error> {
        (self.parse)(arguments)
    }
}

/// Every tool, in the order clients list them.
pub(crate) fn all() -> Vec<ToolDef> {
    [
        workflow_tools(),
        phase_tools(),
        task_tools(),
        context_tools(),
        effect_tools::effect_tools(),
        file_tools(),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// The tools that read or create a whole workflow.
fn workflow_tools() -> Vec<ToolDef> {
    vec![
        tool::<StatusArgs>(
            "status",
            "Show where the workflow stands: every phase with its status, progress note, \
             artifacts and tasks, and the context summary (notes, decisions, files). \
             Read-only. Call it before acting when you are unsure of the current phase.",
            true,
            |args| Invocation::new(args.workflow, ["status"], "status of the workflow".into()),
        )
        .showing_document(),
        tool::<ResumeArgs>(
            "resume",
            "Plan how to continue after an interruption (a crash, Ctrl-C, a rate limit, a \
             compaction): what is done, what was interrupted, the recoveries it needs and the \
             single next action. Read-only by default; with `apply: true` it also writes the safe \
             recoveries (an interrupted phase back to pending). Call it at the start of a session \
             that continues a workflow. `plan.next.command` names the CLI command of the next \
             step: call the tool of the same name instead. A state rebuilt after corruption \
             needs a person to confirm it (`checkpoint resume --yes`); this tool never does.",
            false,
            |args| {
                let mut argv = vec!["resume"];
                if !args.apply.unwrap_or(false) {
                    argv.push("--dry-run");
                }
                Invocation::new(args.workflow, argv, "resume plan".into())
            },
        )
        .showing_document(),
        tool::<InitArgs>(
            "init",
            "Create a workflow from a plan: its phases in order, each with its dependencies, \
             optional tasks and declared outputs. Call it once, when a long multi-phase piece of \
             work begins, before any other tool. Fails if a workflow with this id exists, unless \
             `fresh` archives it first (nothing is deleted).",
            false,
            |args| {
                let mut argv = vec![OsString::from("init")];
                if args.fresh.unwrap_or(false) {
                    argv.push("--fresh".into());
                }
                argv.push("--".into());
                argv.push(args.id.clone().into());
                Ok(Invocation {
                    workflow: None,
                    args: argv,
                    plan: Some(args.plan),
                    stdin: None,
                    headline: format!("created workflow `{}`", args.id),
                })
            },
        ),
    ]
}

/// The tools of a phase's transitions.
fn phase_tools() -> Vec<ToolDef> {
    vec![
        tool::<StartArgs>(
            "start",
            "Start (or retry) a phase: it becomes in progress and its attempt count grows. Call it \
             when you begin the work of a phase. Refused, changing nothing, when its dependencies \
             are not done, it is done already, or it failed too often, unless `force` is set; \
             never force without a reason the user agreed to.",
            false,
            |args| {
                let mut argv = vec![OsString::from("start")];
                if args.force.unwrap_or(false) {
                    argv.push("--force".into());
                }
                argv.extend(["--".into(), OsString::from(&args.phase)]);
                Ok(Invocation::raw(
                    args.workflow,
                    argv,
                    format!("started phase `{}`", args.phase),
                ))
            },
        ),
        tool::<ProgressArgs>(
            "progress",
            "Record partial progress on the phase in progress: what is done and what comes next, \
             in one or two sentences. Call it after each meaningful step, so that a crash or a \
             compaction loses nothing. The note replaces the phase's previous one.",
            false,
            |args| {
                Ok(Invocation::new(
                    args.workflow,
                    ["progress", "--file=-", "--", &args.phase],
                    format!("recorded progress on phase `{}`", args.phase),
                )?
                .with_stdin(args.note))
            },
        ),
        tool::<CompleteArgs>(
            "complete",
            "Complete a phase when its work is done and verified, with the files it produced \
             (`artifacts`, paths relative to the project) and the commit that holds it \
             (`commit_sha`). The next phases become ready. `commit: true` also commits the work \
             now. Refused, changing nothing, while dependencies or tasks are not done, unless \
             `force` is set. A phase with an approval gate waits for a person to approve it.",
            false,
            |args| {
                let mut argv = vec![OsString::from("complete")];
                for artifact in &args.artifacts {
                    argv.push(format!("--artifact={artifact}").into());
                }
                if let Some(sha) = &args.commit_sha {
                    argv.push(format!("--commit-sha={sha}").into());
                }
                if args.commit.unwrap_or(false) {
                    argv.push("--commit".into());
                }
                if args.force.unwrap_or(false) {
                    argv.push("--force".into());
                }
                argv.extend(["--".into(), OsString::from(&args.phase)]);
                Ok(Invocation::raw(
                    args.workflow,
                    argv,
                    format!("completed phase `{}`", args.phase),
                ))
            },
        ),
        tool::<FailArgs>(
            "fail",
            "Mark a phase failed, with what went wrong. Call it when the phase cannot succeed as \
             planned; `start` retries it later.",
            false,
            |args| {
                Invocation::new(
                    args.workflow,
                    [
                        "fail",
                        &format!("--reason={}", args.reason),
                        "--",
                        &args.phase,
                    ],
                    format!("marked phase `{}` failed", args.phase),
                )
            },
        ),
        tool::<SkipArgs>(
            "skip",
            "Skip a phase that turned out unnecessary; it counts as done for the phases that \
             depend on it. Give the reason.",
            false,
            |args| {
                let reason = args.reason.map(|reason| format!("--reason={reason}"));
                let mut argv = vec!["skip".to_owned()];
                argv.extend(reason);
                argv.extend(["--".to_owned(), args.phase.clone()]);
                Ok(Invocation::raw(
                    args.workflow,
                    argv.into_iter().map(OsString::from).collect(),
                    format!("skipped phase `{}`", args.phase),
                ))
            },
        ),
    ]
}

/// The tools of a phase's tasks.
fn task_tools() -> Vec<ToolDef> {
    vec![
        tool::<TaskAddArgs>(
            "task_add",
            "Add a task to a phase: a unit of work small enough to finish in one go, with an \
             optional title and the file it writes (`output`), whose existence proves it ran.",
            false,
            |args| {
                let flags = [
                    args.title.map(|title| format!("--title={title}")),
                    args.output.map(|output| format!("--output={output}")),
                ];
                Ok(Invocation::raw(
                    args.workflow,
                    task_argv("add", flags.into_iter().flatten(), &args.phase, &args.task),
                    format!("added task `{}` to phase `{}`", args.task, args.phase),
                ))
            },
        ),
        tool::<TaskArgs>(
            "task_start",
            "Start a task (and its phase, if it is pending). Call it when you begin the task.",
            false,
            |args| {
                Invocation::new(
                    args.workflow,
                    ["task", "start", "--", &args.phase, &args.task],
                    format!("started task `{}` of phase `{}`", args.task, args.phase),
                )
            },
        ),
        tool::<TaskDoneArgs>(
            "task_done",
            "Mark a task done, with the file it wrote (`output`) when it has one.",
            false,
            |args| {
                let flags = args.output.map(|output| format!("--output={output}"));
                Ok(Invocation::raw(
                    args.workflow,
                    task_argv("done", flags, &args.phase, &args.task),
                    format!("finished task `{}` of phase `{}`", args.task, args.phase),
                ))
            },
        ),
        tool::<TaskFailArgs>(
            "task_fail",
            "Mark a task failed, with what went wrong.",
            false,
            |args| {
                Invocation::new(
                    args.workflow,
                    [
                        "task",
                        "fail",
                        &format!("--reason={}", args.reason),
                        "--",
                        &args.phase,
                        &args.task,
                    ],
                    format!(
                        "marked task `{}` of phase `{}` failed",
                        args.task, args.phase
                    ),
                )
            },
        ),
    ]
}

/// The tools that record context and pause the workflow.
fn context_tools() -> Vec<ToolDef> {
    vec![
        tool::<TextArgs>(
            "note",
            "Add a note to the workflow's context summary: a fact a later session needs to \
             continue (where something lives, what was tried). The summary is shown on resume.",
            false,
            |args| {
                Ok(
                    Invocation::new(args.workflow, ["note", "--file=-"], "noted".into())?
                        .with_stdin(args.text),
                )
            },
        ),
        tool::<TextArgs>(
            "decide",
            "Record a key decision and why, in the context summary, so that a later session does \
             not reopen it.",
            false,
            |args| {
                Ok(Invocation::new(
                    args.workflow,
                    ["decide", "--file=-"],
                    "recorded the decision".into(),
                )?
                .with_stdin(args.text))
            },
        ),
        tool::<FilesArgs>(
            "files",
            "Add file paths that matter for resuming to the context summary (the files a later \
             session should read first).",
            false,
            |args| {
                let mut argv = vec!["files".to_owned(), "--".to_owned()];
                let n_paths = args.paths.len();
                argv.extend(args.paths);
                Ok(Invocation::raw(
                    args.workflow,
                    argv.into_iter().map(OsString::from).collect(),
                    format!("added {n_paths} file paths"),
                ))
            },
        ),
        tool::<PauseArgs>(
            "pause",
            "Pause the workflow, for example when a rate limit stops the work (`reason: \
             \"rate_limit\"`, `until`: when work may continue). Resuming lifts the pause.",
            false,
            |args| {
                let mut argv = vec!["pause".to_owned(), format!("--reason={}", args.reason)];
                argv.extend(args.until.map(|until| format!("--until={until}")));
                Ok(Invocation::raw(
                    args.workflow,
                    argv.into_iter().map(OsString::from).collect(),
                    "paused the workflow".into(),
                ))
            },
        ),
    ]
}

/// The tools of the working tree's snapshots.
fn file_tools() -> Vec<ToolDef> {
    vec![
        tool::<SnapshotsArgs>(
            "snapshots",
            "List the snapshots of the project's files: one at every turn end, sub-agent stop, \
             compaction, session start and phase completion, each with its number (`@n`), time, \
             reason, phase, session and agent, and the files it changed with +/- lines. \
             Read-only. Use it to find when a file was changed, and by whom, before `diff_files` \
             or `undo`.",
            true,
            |args| {
                let mut argv = vec![OsString::from("snapshots")];
                if let Some(phase) = &args.phase {
                    argv.push(format!("--phase={phase}").into());
                }
                if let Some(session) = &args.session {
                    argv.push(format!("--session={session}").into());
                }
                Ok(Invocation::raw(args.workflow, argv, "snapshots".into()))
            },
        )
        .showing_document(),
        tool::<DiffFilesArgs>(
            "diff_files",
            "Show which files changed between two snapshots, or from one to the files now: \
             each path with its change (added, modified, deleted, type_changed, mode_changed) \
             and +/- lines. Read-only. A target is `@n` (a snapshot), a phase id (its \
             completion), `<phase>^` (its start) or a journal sequence number.",
            true,
            |args| {
                let mut argv = vec![OsString::from("diff"), "--files".into(), "--".into()];
                argv.push(args.from.into());
                if let Some(to) = args.to {
                    argv.push(to.into());
                }
                Ok(Invocation::raw(
                    args.workflow,
                    argv,
                    "files compared".into(),
                ))
            },
        )
        .showing_document(),
        tool::<UndoArgs>(
            "undo",
            "Put the project's files back as a snapshot kept them (default: as they were before \
             the last turn), including what Bash commands changed (`sed -i`, `rm`, generators). \
             Call it with `dry_run` first and read the files it would change: a file marked \
             `unsnapshotted` holds edits made since the last snapshot (perhaps the user's). \
             A snapshot of the files as they are is taken first, so `checkpoint redo` reverses \
             it; ignored and secret-looking files, HEAD, the index and branches are untouched.",
            false,
            |args| {
                let mut argv = vec![OsString::from("undo"), "--yes".into()];
                if let Some(to) = &args.to {
                    argv.push(format!("--to={to}").into());
                }
                if args.dry_run.unwrap_or(false) {
                    argv.push("--dry-run".into());
                }
                if !args.paths.is_empty() {
                    argv.push("--".into());
                    argv.extend(args.paths.iter().map(OsString::from));
                }
                let headline = if args.dry_run.unwrap_or(false) {
                    "what an undo would change (nothing changed)"
                } else {
                    "files put back (`checkpoint redo` reverses it)"
                };
                Ok(Invocation::raw(args.workflow, argv, headline.into()))
            },
        )
        .showing_document(),
    ]
}

/// `checkpoint task <verb> <flags> -- <phase> <task>`: the ids after `--`, so that one
/// starting with `-` is no flag.
fn task_argv(
    verb: &str,
    flags: impl IntoIterator<Item = String>,
    phase: &str,
    task: &str,
) -> Vec<OsString> {
    let mut argv = vec!["task".to_owned(), verb.to_owned()];
    argv.extend(flags);
    argv.extend(["--".to_owned(), phase.to_owned(), task.to_owned()]);
    argv.into_iter().map(OsString::from).collect()
}

impl Invocation {
    fn new<'a>(
        workflow: Option<String>,
        args: impl IntoIterator<Item = &'a str>,
        headline: String,
    ) -> Result<Self, serde_json::Error> {
        Ok(Self::raw(
            workflow,
            args.into_iter().map(OsString::from).collect(),
            headline,
        ))
    }

    fn raw(workflow: Option<String>, args: Vec<OsString>, headline: String) -> Self {
        Self {
            workflow,
            args,
            plan: None,
            stdin: None,
            headline,
        }
    }

    fn with_stdin(self, text: String) -> Self {
        Self {
            stdin: Some(text),
            ..self
        }
    }
}

fn tool<T: DeserializeOwned + JsonSchema + 'static>(
    name: &'static str,
    description: &'static str,
    read_only: bool,
    build: fn(T) -> Result<Invocation, serde_json::Error>,
) -> ToolDef {
    ToolDef {
        name,
        description,
        read_only,
        shows_document: false,
        input_schema: input_schema::<T>(),
        parse: Box::new(move |arguments| build(serde_json::from_value(arguments)?)),
    }
}

/// The JSON Schema of a tool's arguments, as MCP wants it: an object schema without `$schema`.
fn input_schema<T: JsonSchema>() -> Map<String, Value> {
    let schema = schemars::generate::SchemaSettings::draft2020_12()
        .into_generator()
        .into_root_schema_for::<T>();
    let mut schema = match schema.to_value() {
        Value::Object(schema) => schema,
        _ => unreachable!("an arguments struct has an object schema"),
    };
    schema.remove("$schema");
    schema.remove("title");
    schema
}

// The arguments of each tool. Doc comments become the schema's descriptions, so they are written
// for the model.

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct StatusArgs {
    /// The workflow id; omit it when the project has one active workflow.
    workflow: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ResumeArgs {
    /// The workflow id; omit it when the project has one unfinished workflow.
    workflow: Option<String>,
    /// Also write the safe recoveries (default false: only plan).
    apply: Option<bool>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct InitArgs {
    /// The new workflow's id: letters, digits, `.`, `_`, `-`.
    id: String,
    /// The plan: `phases` in order (each with `id`, optional `dependencies`, `tasks`,
    /// `outputs`), and optional `title`, `description`, `kind`.
    #[schemars(with = "checkpoint_core::Plan")]
    plan: Value,
    /// Archive an existing workflow with this id first (default false).
    fresh: Option<bool>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct StartArgs {
    /// The workflow id; omit it when the project has one active workflow.
    workflow: Option<String>,
    /// The phase id.
    phase: String,
    /// Start even if the phase is done, its dependencies are not, or it failed too often
    /// (default false).
    force: Option<bool>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ProgressArgs {
    /// The workflow id; omit it when the project has one active workflow.
    workflow: Option<String>,
    /// The phase id.
    phase: String,
    /// What is done so far and what comes next.
    note: String,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct CompleteArgs {
    /// The workflow id; omit it when the project has one active workflow.
    workflow: Option<String>,
    /// The phase id.
    phase: String,
    /// Files the phase produced, relative to the project.
    #[serde(default)]
    artifacts: Vec<String>,
    /// The commit that holds the phase's work.
    commit_sha: Option<String>,
    /// Commit the work now (`git add -A`), whatever `commit_every` says (default false).
    commit: Option<bool>,
    /// Complete even if dependencies or tasks are not done (default false).
    force: Option<bool>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct FailArgs {
    /// The workflow id; omit it when the project has one active workflow.
    workflow: Option<String>,
    /// The phase id.
    phase: String,
    /// What went wrong.
    reason: String,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SkipArgs {
    /// The workflow id; omit it when the project has one active workflow.
    workflow: Option<String>,
    /// The phase id.
    phase: String,
    /// Why it is skipped.
    reason: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct TaskAddArgs {
    /// The workflow id; omit it when the project has one active workflow.
    workflow: Option<String>,
    /// The phase id.
    phase: String,
    /// The new task's id.
    task: String,
    /// What the task does.
    title: Option<String>,
    /// The file the task writes; its existence proves the task ran.
    output: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct TaskArgs {
    /// The workflow id; omit it when the project has one active workflow.
    workflow: Option<String>,
    /// The phase id.
    phase: String,
    /// The task id.
    task: String,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct TaskDoneArgs {
    /// The workflow id; omit it when the project has one active workflow.
    workflow: Option<String>,
    /// The phase id.
    phase: String,
    /// The task id.
    task: String,
    /// The file the task wrote.
    output: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct TaskFailArgs {
    /// The workflow id; omit it when the project has one active workflow.
    workflow: Option<String>,
    /// The phase id.
    phase: String,
    /// The task id.
    task: String,
    /// What went wrong.
    reason: String,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct TextArgs {
    /// The workflow id; omit it when the project has one active workflow.
    workflow: Option<String>,
    /// The text, one or two sentences.
    text: String,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct FilesArgs {
    /// The workflow id; omit it when the project has one active workflow.
    workflow: Option<String>,
    /// Paths relative to the project.
    #[schemars(length(min = 1))]
    paths: Vec<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct PauseArgs {
    /// The workflow id; omit it when the project has one active workflow.
    workflow: Option<String>,
    /// Why, for example `rate_limit`.
    reason: String,
    /// When work may continue (RFC 3339, for example `2026-01-01T12:00:00Z`).
    until: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SnapshotsArgs {
    /// The workflow id; omit it when the project has one active workflow.
    workflow: Option<String>,
    /// Only this phase's snapshots.
    phase: Option<String>,
    /// Only this session's snapshots.
    session: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct DiffFilesArgs {
    /// The workflow id; omit it when the project has one active workflow.
    workflow: Option<String>,
    /// The earlier point: `@n`, a phase id, `<phase>^` or a journal sequence number.
    from: String,
    /// The later point, as `from`; omit it for the files now.
    to: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct UndoArgs {
    /// The workflow id; omit it when the project has one active workflow.
    workflow: Option<String>,
    /// Where to: `@n`, a phase id, `<phase>^` or a journal sequence number; omit it for before
    /// the last turn.
    to: Option<String>,
    /// Only say what would change (default false).
    dry_run: Option<bool>,
    /// Only these paths, relative to the project (default: every file).
    #[serde(default)]
    paths: Vec<String>,
}
