//! The options of `checkpoint run` and their values: durations, budgets, windows and `--since`, each
//! refused with a sentence that says how to write it.

use std::ffi::OsString;

use checkpoint_core::window::Window;
use chrono::{DateTime, Duration, Utc};
use clap::Args;

/// Arguments of `checkpoint run`.
#[derive(Debug, Clone, Args)]
pub(crate) struct RunArgs {
    /// The workflow to run (like `--workflow`)
    // An id of its own: sharing the global `--workflow`'s would make clap refuse that option
    // after the subcommand.
    #[arg(id = "run_workflow", value_name = "WORKFLOW")]
    pub workflow: Option<String>,
    /// Start at most N agent sessions [default: no bound]
    #[arg(long, value_name = "N")]
    pub max_sessions: Option<u32>,
    /// The longest single wait for a rate limit or a backoff, like `90s`, `30m` or `5h`; a
    /// limit that resets later stops the run [default: 6h]
    #[arg(long, value_name = "DURATION", default_value = "6h", value_parser = parse_duration)]
    pub max_wait: Duration,
    /// Stop once this phase is done
    #[arg(long, value_name = "PHASE")]
    pub until: Option<String>,
    /// Start no session while the usage the client last reported for a rate-limit window is at
    /// or above this percentage: wait for the window's reset (past `--max-wait`, stop) [default:
    /// `[run] max_usage`, else none]
    #[arg(long, value_name = "PERCENT", value_parser = parse_percent)]
    pub max_usage: Option<f64>,
    /// Start no session once the sessions cost this many dollars in total (their
    /// `total_cost_usd`) [default: `[run] max_cost`, else none]
    #[arg(long, value_name = "DOLLARS", value_parser = parse_dollars)]
    pub max_cost: Option<f64>,
    /// Start no session once the sessions used this many tokens in total (input, output, cache
    /// reads and writes) [default: `[run] max_tokens`, else none]
    #[arg(long, value_name = "N")]
    pub max_tokens: Option<u64>,
    /// Count what earlier runs spent since this time too (RFC 3339, or a duration back such as
    /// `24h`) [default: this run only]
    #[arg(long, value_name = "TIME", value_parser = parse_since)]
    pub(crate) since: Option<Since>,
    /// Start sessions only within this window of local time, like `22:00-07:00` (may cross
    /// midnight; repeatable) [default: `[run] window`, else any time]
    #[arg(long = "window", value_name = "HH:MM-HH:MM", value_parser = parse_window)]
    pub windows: Vec<Window>,
    /// Interrupt a session still running when its window closes, as Ctrl-C does (nothing is
    /// lost; the next session resumes) [default: `[run] window_strict`]
    #[arg(long)]
    pub window_strict: bool,
    /// Carry every unfinished workflow of the project, one after another, in `list` order or by
    /// their plans' `priority`
    #[arg(long, conflicts_with = "run_workflow")]
    pub all: bool,
    /// Print the plan and the exact `claude` command line, and run nothing
    #[arg(long)]
    pub dry_run: bool,
    /// The `claude` program [default: `[run] claude` in `config.toml`, else `claude` on `PATH`]
    #[arg(long, value_name = "PROGRAM")]
    pub claude: Option<OsString>,
    /// The agent client whose sessions to drive: `claude`, `codex` or `gemini` [default:
    /// `[run] client` in `config.toml`, else `claude`]
    #[arg(long, value_name = "CLIENT", value_parser = crate::clients::client_parser())]
    pub client: Option<crate::clients::Client>,
    /// The `codex` program [default: `[run] codex` in `config.toml`, else `codex` on `PATH`]
    #[arg(long, value_name = "PROGRAM")]
    pub codex: Option<OsString>,
    /// The `gemini` program of `--client gemini` [default: `[run] gemini` in `config.toml`,
    /// else `gemini` on `PATH`]
    #[arg(long, value_name = "PROGRAM")]
    pub gemini: Option<OsString>,
    /// No live line on a terminal (also `CHECKPOINT_NO_PROGRESS`)
    #[arg(long)]
    pub no_progress: bool,
    /// Pull the workflow from its git remote before each session and push it after each (like
    /// `checkpoint pull` and `push`); a divergence stops the run for a person
    #[arg(long)]
    pub sync: bool,
    /// The git remote of `--sync` [default: the current branch's upstream remote, else `origin`]
    #[arg(long, value_name = "REMOTE", requires = "sync")]
    pub remote: Option<String>,
    /// Arguments passed to every session, after `--`: for `claude` the permission mode, allowed
    /// tools, model, plugin directory (for example `-- --allowedTools "Bash Write Edit"`); for
    /// `codex exec` the sandbox, model or configuration (for example `-- -s danger-full-access`);
    /// for `gemini` the model or approval mode (for example `-- --model gemini-3.8-flash`)
    #[arg(last = true, value_name = "CLAUDE ARGS")]
    pub extra: Vec<String>,
}

/// Parses `90s`, `30m`, `5h`, `1h30m`, `2d` or a number of seconds; `0` is no wait.
pub(crate) fn parse_duration(text: &str) -> Result<Duration, String> {
    let error =
        || format!("`{text}` is not a duration: write it like `90s`, `30m`, `5h` or `1h30m`");
    let too_long = || format!("`{text}` is too long a duration: write at most `10000d`");
    let mut total = Duration::zero();
    let mut number = String::new();
    let add = |total: &mut Duration, number: &mut String, unit: char| {
        let value: i64 = number.parse().map_err(|_| {
            if number.is_empty() {
                error()
            } else {
                too_long()
            }
        })?;
        number.clear();
        let part = match unit {
            's' => Duration::try_seconds(value),
            'm' => Duration::try_minutes(value),
            'h' => Duration::try_hours(value),
            'd' => Duration::try_days(value),
            _ => return Err(error()),
        }
        .ok_or_else(too_long)?;
        *total = total
            .checked_add(&part)
            .filter(|total| *total <= Duration::days(10_000))
            .ok_or_else(too_long)?;
        Ok(())
    };
    for c in text.trim().chars() {
        if c.is_ascii_digit() {
            number.push(c);
        } else {
            add(&mut total, &mut number, c)?;
        }
    }
    if !number.is_empty() {
        add(&mut total, &mut number, 's')?;
    }
    if total <= Duration::zero() && text.trim() != "0" {
        return Err(error());
    }
    Ok(total)
}

/// A percentage of a rate-limit window (`--max-usage`): a number from 0 up, `%` allowed.
pub(crate) fn parse_percent(text: &str) -> Result<f64, String> {
    let number = text.trim().trim_end_matches('%').trim();
    match number.parse::<f64>() {
        Ok(value) if (0.0..=1000.0).contains(&value) => Ok(value),
        _ => Err(format!(
            "`{text}` is not a percentage: write a number from 0 to 1000, like `80`"
        )),
    }
}

/// An amount of dollars (`--max-cost`): a number from 0 up, `$` allowed.
pub(crate) fn parse_dollars(text: &str) -> Result<f64, String> {
    let number = text.trim().trim_start_matches('$').trim();
    match number.parse::<f64>() {
        Ok(value) if (0.0..=1e9).contains(&value) => Ok(value),
        _ => Err(format!(
            "`{text}` is not an amount of dollars: write a number from 0, like `20` or `7.50`"
        )),
    }
}

/// A window of local time (`--window 22:00-07:00`).
pub(crate) fn parse_window(text: &str) -> Result<Window, String> {
    text.parse()
}

/// `--since`: a time, or a duration back from now.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Since {
    At(DateTime<Utc>),
    Ago(Duration),
}

impl Since {
    /// The time it names, at `now`.
    pub(crate) fn at(self, now: DateTime<Utc>) -> DateTime<Utc> {
        match self {
            Since::At(at) => at,
            Since::Ago(ago) => now
                .checked_sub_signed(ago)
                .unwrap_or(DateTime::<Utc>::MIN_UTC),
        }
    }
}

/// An RFC 3339 time (`2026-03-01T22:00:00+01:00`) or a duration back from now (`24h`).
pub(crate) fn parse_since(text: &str) -> Result<Since, String> {
    if let Ok(at) = DateTime::parse_from_rfc3339(text.trim()) {
        return Ok(Since::At(at.with_timezone(&Utc)));
    }
    parse_duration(text).map(Since::Ago).map_err(|_| {
        format!(
            "`{text}` is not a time: write an RFC 3339 time like `2026-03-01T22:00:00+01:00`, or a duration back from now like `24h`"
        )
    })
}
