//! The context every command runs in: where the store is, the time, the output settings, and
//! which workflow the command means.

use std::{
    env,
    io::IsTerminal,
    path::{Path, PathBuf},
    time::Duration,
};

use checkpoint_core::{
    CONFIG_FILE, Config, Workflow, WorkflowId,
    choice::{self, Candidate, Choice},
    failpoint::{self, Failpoint, Step},
    resume::{Briefing, Probe},
    store::{Loaded, Recovery, Store, StoreOptions},
};
use chrono::{DateTime, Utc};
use miette::{Diagnostic, IntoDiagnostic, Result, WrapErr};

use crate::{
    env as vars,
    failure::Failure,
    inside, locate,
    output::{self, ColorChoice, Format},
};

/// The default lock timeout, in seconds.
const DEFAULT_LOCK_TIMEOUT_SECS: f64 = 10.0;

/// Everything a command needs besides its own arguments.
pub(crate) struct Ctx {
    pub store: Store,
    pub now: DateTime<Utc>,
    pub format: Format,
    pub color: bool,
    pub cwd: PathBuf,
    /// The git top level (or the current directory outside git).
    pub project_root: PathBuf,
    pub workflow: Option<String>,
    pub config: Config,
}

/// The command needs one workflow, and there is none, or several match and none was chosen.
///
/// Both exit with 4 (not found), but each has its own stable code, so that a script can tell
/// "create one" from "pick one".
#[derive(Debug, thiserror::Error, Diagnostic)]
pub(crate) enum WorkflowChoiceError {
    /// The store holds no workflow.
    #[error("{message}")]
    #[diagnostic(code(checkpoint::no_workflow), help("{help}"))]
    None { message: String, help: String },
    /// Several workflows match.
    #[error("{message}")]
    #[diagnostic(code(checkpoint::ambiguous_workflow), help("{help}"))]
    Several { message: String, help: String },
}

/// Where a command runs: its directory, the project (the git top level) and the store.
pub(crate) struct Location {
    pub cwd: PathBuf,
    pub project_root: PathBuf,
    /// The checkpoint directory.
    pub root: PathBuf,
}

impl Location {
    /// The project around `cwd`, and the store: `dir` (relative to `cwd`) when given, else
    /// `.claude/checkpoints` under the project root: the nearest around `cwd` that has a store,
    /// past a nested repository and from a worktree to its main one (see
    /// `locate::project_with_store`).
    pub(crate) fn find(cwd: PathBuf, dir: Option<&Path>) -> Self {
        let project_root = match dir {
            Some(_) => locate::project_root(&cwd),
            None => locate::project_with_store(&cwd),
        };
        let root = match dir {
            Some(dir) if dir.is_absolute() => dir.to_owned(),
            Some(dir) => cwd.join(dir),
            None => locate::default_store(&project_root),
        };
        Self {
            cwd,
            project_root,
            root,
        }
    }
}

/// How a command runs, as plain values: from the command line and the environment for a
/// command, fixed for a hook.
pub(crate) struct Settings {
    pub workflow: Option<String>,
    pub format: Format,
    pub color: bool,
    pub now: DateTime<Utc>,
    pub lock_timeout: Duration,
    pub on_lock_wait: Option<fn(&Path, Option<&str>)>,
}

impl Settings {
    /// The settings of a command: the real (or test) clock, `CHECKPOINT_LOCK_TIMEOUT`, and a
    /// message while waiting for a lock.
    pub(crate) fn from_env(
        workflow: Option<&str>,
        format: Format,
        color: ColorChoice,
    ) -> Result<Self> {
        Ok(Self {
            workflow: workflow.map(str::to_owned),
            format,
            color: use_color(color),
            now: now()?,
            lock_timeout: lock_timeout()?,
            on_lock_wait: Some(warn_lock_wait),
        })
    }
}

impl Ctx {
    /// The context at `location`, reading its `config.toml`.
    pub(crate) fn new(location: Location, settings: Settings) -> Result<Self> {
        let Location {
            cwd,
            project_root,
            root,
        } = location;
        let config = load_config(&root)?;
        let store = Store::new(
            &root,
            StoreOptions {
                lock_timeout: settings.lock_timeout,
                on_lock_wait: settings.on_lock_wait,
                failpoint: test_failpoint()?,
            },
        )
        .held_by(holder_line(settings.now));
        if store.failed_dir_is_a_workflow() {
            output::warn(
                "the workflow `failed` has the name of the store's directory of failed archives: it stays readable, and failed workflows are archived to `.archive/` while it is there; rename it with `checkpoint fork failed --as <new-id>`, then archive it",
            );
        }
        Ok(Self {
            config,
            store,
            now: settings.now,
            format: settings.format,
            color: settings.color,
            cwd,
            project_root,
            workflow: settings.workflow,
        })
    }

    /// The help for a name that matches no workflow: the workflows there are, and how to `verb`
    /// one (`resume`, `watch`).
    pub(crate) fn known_workflows_help(&self, verb: &str) -> Result<String> {
        let known = self.store.list()?;
        Ok(if known.is_empty() {
            "the store holds no workflow: start one with `checkpoint init <id> --phase <id>`".into()
        } else {
            format!(
                "the workflows are: {}; {verb} one with `checkpoint {verb} <id>`",
                known
                    .iter()
                    .map(|id| format!("`{id}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })
    }

    /// The workflow the command means: `--workflow`, else the one `checkpoint use` chose, else
    /// core's rule ([`choice::choose`]): the only unfinished one, or the most recent when none
    /// is unfinished.
    pub(crate) fn workflow_id(&self) -> Result<WorkflowId> {
        if let Some(id) = &self.workflow {
            return Ok(WorkflowId::new(id)?);
        }
        if let Some(id) = self.used()? {
            return Ok(id);
        }
        let ids = self.store.list()?;
        if let [id] = ids.as_slice() {
            return Ok(id.clone());
        }
        let candidates = ids
            .into_iter()
            .map(|id| match self.store.load(&id) {
                Ok(loaded) => Candidate::of(&loaded.workflow),
                Err(_) => Candidate {
                    id,
                    finished: false,
                    active_at: None,
                },
            })
            .collect();
        match choice::choose(candidates) {
            Choice::Unfinished(id) => Ok(id),
            Choice::Finished(id) => {
                if self.format == Format::Human {
                    output::note(&format!(
                        "no workflow is unfinished: `{id}`, the most recently active, is shown"
                    ));
                }
                Ok(id)
            }
            Choice::None => Err(WorkflowChoiceError::None {
                message: format!("no workflow in `{}`", self.store.root().display()),
                help: "create one with `checkpoint init <id> --phase <id>` (can be repeated)"
                    .into(),
            }
            .into()),
            Choice::Several(unfinished) => Err(WorkflowChoiceError::Several {
                message: format!(
                    "{} workflows are unfinished, and none was chosen",
                    unfinished.len()
                ),
                help: format!(
                    "choose one for this worktree with `checkpoint use <id>` (or once with `--workflow <id>`): {}",
                    unfinished
                        .iter()
                        .map(|id| format!("`{id}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            }
            .into()),
        }
    }

    /// The workflow `checkpoint use` chose for this worktree, when it is still in the store;
    /// one that is gone is an error that says how to choose again.
    pub(crate) fn used(&self) -> Result<Option<WorkflowId>> {
        let Some(id) = self.store.used()? else {
            return Ok(None);
        };
        if self.store.workflow_dir(&id).is_dir() {
            return Ok(Some(id));
        }
        Err(Failure::new(
            "checkpoint::store::not_found",
            format!(
                "`checkpoint use` chose `{id}`, which is no longer in `{}`",
                self.store.root().display()
            ),
        )
        .with_help(
            "choose another with `checkpoint use <id>`, or none with `checkpoint use --none`",
        )
        .into())
    }

    /// Loads the workflow the command means.
    pub(crate) fn load(&self) -> Result<Loaded> {
        let id = self.workflow_id()?;
        Ok(self.store.load(&id)?)
    }

    /// Like [`Ctx::load`], with a bad line anywhere in the journal among the recoveries (see
    /// [`Ctx::journal_damage`]): for the commands that sum a workflow up.
    pub(crate) fn load_checked(&self) -> Result<Loaded> {
        let id = self.workflow_id()?;
        let mut loaded = self.store.load(&id)?;
        let damage = self.journal_damage(&id, &loaded.recoveries);
        loaded.recoveries.extend(damage);
        Ok(loaded)
    }

    /// The first line of the workflow's journal that is not its next entry, wherever it is
    /// (`Store::check_journal`, which reads only what it has not checked before), unless
    /// loading already reported the journal's end (`recoveries`); a journal that cannot be
    /// checked is a warning.
    pub(crate) fn journal_damage(
        &self,
        id: &WorkflowId,
        recoveries: &[Recovery],
    ) -> Option<Recovery> {
        if recoveries
            .iter()
            .any(|recovery| matches!(recovery, Recovery::ForeignJournalLines { .. }))
        {
            return None;
        }
        match self.store.check_journal(id) {
            Ok(damage) => damage,
            Err(err) => {
                output::warn(&format!("the journal of `{id}` cannot be checked: {err}"));
                None
            }
        }
    }

    /// The briefing on `workflow` (loaded with `recoveries`) now, with files and git seen through
    /// `probe`.
    pub(crate) fn brief(
        &self,
        workflow: &Workflow,
        recoveries: &[Recovery],
        probe: &dyn Probe,
    ) -> Briefing {
        let briefing = Briefing::new(workflow, recoveries, probe, &self.config, self.now);
        // The effects come from the journal; a workflow of another system's file has none.
        match self.store.ledger(&workflow.id) {
            Ok(ledger) => briefing.with_effects(workflow, &ledger),
            Err(checkpoint_core::Error::NotFound { .. }) => briefing,
            Err(err) => {
                output::warn(&format!(
                    "the effects of workflow `{}` cannot be read, so the briefing does not list them: {err}",
                    workflow.id
                ));
                briefing
            }
        }
    }

    /// A path relative to the project root where it is inside it, for storing in the state.
    pub(crate) fn project_path(&self, path: &str) -> String {
        let absolute = self.cwd.join(path);
        match absolute.strip_prefix(&self.project_root) {
            Ok(relative) => relative.to_string_lossy().into_owned(),
            Err(_) => path.to_owned(),
        }
    }

    /// A path given on the command line (relative to the current directory) as the workflow
    /// keeps it, relative to the project root, once [`inside::check`] found it inside the
    /// project; `what` names it in the error.
    pub(crate) fn inside_path(&self, path: &str, what: &str) -> Result<String, Failure> {
        inside::check(&self.project_root, &self.cwd, path, what)?;
        Ok(self.project_path(path))
    }

    /// A path as shown to people: relative to the current directory where it is inside it.
    pub(crate) fn display_path(&self, path: &Path) -> PathBuf {
        path.strip_prefix(&self.cwd).unwrap_or(path).to_owned()
    }
}

/// The directory the process runs in.
pub(crate) fn current_dir() -> Result<PathBuf> {
    env::current_dir()
        .into_diagnostic()
        .wrap_err("failed to read the current directory")
}

/// Reads `config.toml` in the store root; every setting is optional.
pub(crate) fn load_config(root: &Path) -> Result<Config> {
    let path = root.join(CONFIG_FILE);
    if path.is_dir() {
        // A workflow named `config.toml`, from before such ids were refused: its directory
        // stays readable, and the settings are the defaults.
        output::warn(&format!(
            "`{}` is a directory (a workflow of that name?), not a settings file: using the default settings; rename it with `checkpoint fork {CONFIG_FILE} --as <new-id>`, then archive it",
            path.display()
        ));
        return Ok(Config::default());
    }
    match read_text(&path) {
        Ok(text) => {
            let (config, unknown) = Config::parse_lenient(&path, &text)?;
            for key in unknown {
                let line = key
                    .line
                    .map(|line| format!(" line {line}"))
                    .unwrap_or_default();
                let closest = key
                    .closest
                    .map(|closest| format!(" (did you mean `{closest}`?)"))
                    .unwrap_or_default();
                output::warn(&format!(
                    "unknown key `{}` in `{}`{line}{closest}: it is ignored",
                    output::escape(&key.key),
                    path.display()
                ));
            }
            Ok(config)
        }
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(Config::default()),
        Err(err) => Err(err)
            .into_diagnostic()
            .wrap_err_with(|| format!("failed to read `{}`", path.display())),
    }
}

/// The largest settings file read, in bytes.
const MAX_CONFIG_BYTES: u64 = 1024 * 1024;

/// The text of a settings file, read as any file of the user's (never blocking on a FIFO,
/// bounded in size); a missing file is `NotFound`.
fn read_text(path: &Path) -> std::io::Result<String> {
    match checkpoint_core::read_foreign(path, MAX_CONFIG_BYTES) {
        Ok(Some(bytes)) => String::from_utf8(bytes)
            .map_err(|err| std::io::Error::new(std::io::ErrorKind::InvalidData, err)),
        Ok(None) => Err(std::io::ErrorKind::NotFound.into()),
        Err(checkpoint_core::Error::Unreadable { reason, .. }) => {
            Err(std::io::Error::other(reason))
        }
        Err(err) => Err(std::io::Error::other(err.to_string())),
    }
}

pub(crate) fn now() -> Result<DateTime<Utc>> {
    match env::var(vars::CHECKPOINT_TEST_NOW) {
        Ok(value) if !value.is_empty() => DateTime::parse_from_rfc3339(&value)
            .map(|time| time.with_timezone(&Utc))
            .into_diagnostic()
            .wrap_err_with(|| {
                format!(
                    "failed to parse `{}={value}` as an RFC 3339 time",
                    vars::CHECKPOINT_TEST_NOW
                )
            }),
        _ => Ok(Utc::now()),
    }
}

fn lock_timeout() -> Result<Duration> {
    env_seconds(
        vars::CHECKPOINT_LOCK_TIMEOUT,
        Duration::from_secs_f64(DEFAULT_LOCK_TIMEOUT_SECS),
    )
}

/// A number of seconds from the environment variable `name`, at most a day; `default` when it
/// is unset or empty, a usage error when it is not such a number.
pub(crate) fn env_seconds(name: &str, default: Duration) -> Result<Duration> {
    match env::var(name) {
        Ok(value) if !value.is_empty() => value
            .parse::<f64>()
            .ok()
            .filter(|secs| (0.0..=86_400.0).contains(secs))
            .and_then(|secs| Duration::try_from_secs_f64(secs).ok())
            .ok_or_else(|| {
                Failure::new(
                    "checkpoint::invalid_env",
                    format!("invalid `{name}={value}`"),
                )
                .with_help(format!(
                    "give a number of seconds up to 86400, for example `{name}=30`"
                ))
                .into()
            }),
        _ => Ok(default),
    }
}

/// The hidden `CHECKPOINT_TEST_FAILPOINT`, refused by a build without failpoints so that a test
/// never believes it injected an error that was not.
pub(crate) fn test_failpoint() -> Result<Option<Failpoint>> {
    let spec = match env::var(vars::CHECKPOINT_TEST_FAILPOINT) {
        Ok(spec) if !spec.is_empty() => spec,
        _ => return Ok(None),
    };
    if !failpoint::ENABLED {
        miette::bail!(
            "`{}` is set, but this build of `checkpoint` has no failpoints",
            vars::CHECKPOINT_TEST_FAILPOINT
        );
    }
    Failpoint::parse(&spec).map(Some).ok_or_else(|| {
        let steps: Vec<&str> = Step::ALL.iter().map(|step| step.as_str()).collect();
        miette::miette!(
            help = format!(
                "use `<step>` or `<step>:enospc`, where step is one of {}",
                steps.join(", ")
            ),
            "invalid `{}={spec}`",
            vars::CHECKPOINT_TEST_FAILPOINT
        )
    })
}

fn warn_lock_wait(path: &Path, holder: Option<&str>) {
    match holder {
        Some(holder) => output::warn(&format!(
            "waiting for the lock on `{}`, held by {holder}; if that process is gone and the wait goes on, a process it started holds the lock (`fuser {}` names it)",
            path.display(),
            path.display()
        )),
        None => output::warn(&format!("waiting for the lock on `{}`", path.display())),
    }
}

/// This process as a lock holder names it: its pid, its command (the program and its
/// subcommand words, never an argument's value, which may hold a secret) and since when.
fn holder_line(now: DateTime<Utc>) -> String {
    let mut words = vec!["checkpoint".to_owned()];
    let mut args = env::args().skip(1);
    while let Some(arg) = args.next() {
        if matches!(
            arg.as_str(),
            "--format" | "--color" | "--dir" | "--workflow" | "-w"
        ) {
            args.next();
        } else if arg.starts_with('-') {
            continue;
        } else if !arg.is_empty()
            && arg
                .bytes()
                .all(|byte| byte.is_ascii_lowercase() || byte == b'-')
        {
            // A verb of a group (`task start`) names the command; any other word is a value.
            let group = matches!(arg.as_str(), "task" | "effects" | "setup" | "hook");
            words.push(arg);
            if !group || words.len() == 3 {
                break;
            }
        } else {
            break;
        }
    }
    format!(
        "pid {} (`{}`) since {}",
        std::process::id(),
        words.join(" "),
        now.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
    )
}

/// Resolves the colour choice: the flag, then `NO_COLOR`, then `CLICOLOR_FORCE`/`FORCE_COLOR`, then the terminal.
pub(crate) fn use_color(choice: ColorChoice) -> bool {
    let set = |name: &str| env::var_os(name).is_some_and(|value| !value.is_empty());
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto if set(vars::NO_COLOR) => false,
        ColorChoice::Auto if set(vars::CLICOLOR_FORCE) || set(vars::FORCE_COLOR) => true,
        ColorChoice::Auto => std::io::stdout().is_terminal(),
    }
}
