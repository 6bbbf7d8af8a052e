//! Settings from `.claude/checkpoints/config.toml`, all optional, with documented defaults.

use std::path::Path;

use miette::NamedSource;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::{
    effects::EffectsConfig,
    error::{Error, Result},
    retention::Retention,
    window::Window,
    writes::WritesConfig,
};

/// The name of the config file in the store root.
pub const CONFIG_FILE: &str = "config.toml";

/// Every setting, with its default filled in.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// A state not updated for this many days is stale (default 7).
    pub stale_after_days: u32,
    /// Failed attempts of a phase before a person must decide (default 3; a phase's own
    /// `max_attempts` wins).
    pub max_attempts: u32,
    /// Replans of a phase before a person must decide (default 2).
    pub max_replans: u32,
    /// Phases allowed in progress at once; 0 means no limit (default 0).
    pub max_in_progress: u32,
    /// Minutes without activity (a transition or a heartbeat) after which an in-progress
    /// workflow counts as interrupted (default 10).
    pub interrupted_after_minutes: u32,
    /// The size budget of `resume --format prompt`, in bytes (default 6000).
    pub prompt_budget: usize,
    /// Block a Stop while a phase is in progress without a recent progress note (default false).
    pub strict_stop: bool,
    /// Minutes after which a progress note no longer counts as recent for `strict_stop`
    /// (default 20).
    pub progress_fresh_minutes: u32,
    /// Commit the work after every N completed phases (the changed files but those that look
    /// like secrets, as `checkpoint: phases N-M complete`); 0 turns it off (default 0).
    pub commit_every: u32,
    /// Retention of archives for `checkpoint gc`.
    pub gc: Retention,
    /// Sync with a git remote (`checkpoint push`).
    pub sync: Sync,
    /// Settings of the unattended runner, `checkpoint run`.
    pub run: RunConfig,
    /// What counts as an effect, a call that a resumed workflow must not repeat.
    pub effects: EffectsConfig,
    /// Snapshots of the working tree (`checkpoint snapshots`, `undo`).
    pub files: FilesConfig,
    /// Several sessions and sub-agents in one checkout: the write guard, claims.
    pub writes: WritesConfig,
}

/// The `[files]` table: snapshots of the working tree.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct FilesConfig {
    /// Take snapshots at turn ends, sub-agent stops, compactions, session starts and phase
    /// completions (default true); `checkpoint snapshot` and `undo` work either way.
    pub snapshots: bool,
    /// Files larger than this many bytes are left out of snapshots, and said so (default
    /// 10485760, 10 MiB).
    pub max_file_bytes: u64,
}

impl Default for FilesConfig {
    fn default() -> Self {
        Self {
            snapshots: true,
            max_file_bytes: 10 << 20,
        }
    }
}

/// The `[sync]` table.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Sync {
    /// Push the workflow in the background whenever a phase completes (`checkpoint complete`,
    /// or the hook when its last output is written); a failed push is reported by the next
    /// command (default false).
    pub on_complete: bool,
    /// Send the workflow's last session (its uncommitted work and redacted transcript) with
    /// every push, as `checkpoint push --session` does (default false: a transcript leaves the
    /// machine only when asked).
    pub session: bool,
    /// The largest session transcript a push sends or a pull reads, in bytes (default
    /// 67108864, 64 MiB).
    pub session_max_bytes: u64,
}

impl Default for Sync {
    fn default() -> Self {
        Self {
            on_complete: false,
            session: false,
            session_max_bytes: 64 << 20,
        }
    }
}

/// The `[run]` table: settings of `checkpoint run`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct RunConfig {
    /// A shell command run when the runner stops for a person; it gets `CHECKPOINT_WORKFLOW`,
    /// `CHECKPOINT_PHASE` and `CHECKPOINT_REASON` in its environment (default: none).
    pub notify: Option<String>,
    /// The `claude` program to run (default: `claude` on `PATH`).
    pub claude: Option<String>,
    /// The agent client whose sessions `checkpoint run` drives, like `--client` (default
    /// `claude`).
    pub client: Option<Client>,
    /// The `codex` program to run with `client = "codex"` (default: `codex` on `PATH`).
    pub codex: Option<String>,
    /// The `gemini` program to run with `client = "gemini"`, like `--gemini` (default: `gemini`
    /// on `PATH`).
    pub gemini: Option<String>,
    /// Like `--max-usage`: no session starts while the client's last reported usage of a
    /// rate-limit window is at or above this percentage (default: none).
    pub max_usage: Option<f64>,
    /// Like `--max-cost`: the most dollars a run's sessions may cost (default: none).
    pub max_cost: Option<f64>,
    /// Like `--max-tokens`: the most tokens a run's sessions may use (default: none).
    pub max_tokens: Option<u64>,
    /// Like `--window`: the local times (`"22:00-07:00"`, one or a list) at which sessions may
    /// start (default: any time).
    #[serde(deserialize_with = "one_or_many")]
    #[schemars(with = "Vec<String>")]
    pub window: Vec<Window>,
    /// Like `--window-strict`: a session still running when its window closes is interrupted
    /// (default false).
    pub window_strict: bool,
}

/// An agent client `checkpoint` works with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Client {
    /// Claude Code.
    Claude,
    /// OpenAI's Codex CLI.
    Codex,
    /// Google's Gemini CLI.
    Gemini,
}

impl Client {
    /// Every client.
    pub const ALL: [Client; 3] = [Self::Claude, Self::Codex, Self::Gemini];

    /// The client named `name` (as `name` says it).
    pub fn named(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|client| client.name() == name)
    }

    /// The client's name on the command line and in `config.toml`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Claude => "claude",
            Self::Codex => "codex",
            Self::Gemini => "gemini",
        }
    }
}

/// One window or a list of them, each checked as `--window` checks it.
fn one_or_many<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> std::result::Result<Vec<Window>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum OneOrMany {
        One(String),
        Many(Vec<String>),
    }
    let texts = match OneOrMany::deserialize(deserializer)? {
        OneOrMany::One(text) => vec![text],
        OneOrMany::Many(texts) => texts,
    };
    texts
        .iter()
        .map(|text| text.parse().map_err(serde::de::Error::custom))
        .collect()
}

impl Default for Config {
    fn default() -> Self {
        Self {
            stale_after_days: 7,
            max_attempts: 3,
            max_replans: 2,
            max_in_progress: 0,
            interrupted_after_minutes: 10,
            prompt_budget: 6000,
            strict_stop: false,
            progress_fresh_minutes: 20,
            commit_every: 0,
            gc: Retention::default(),
            sync: Sync::default(),
            run: RunConfig::default(),
            effects: EffectsConfig::default(),
            files: FilesConfig::default(),
            writes: WritesConfig::default(),
        }
    }
}

/// A key of `config.toml` that no setting has: it is ignored, with a warning.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownKey {
    /// The key, with its table (`gc.keep_days`).
    pub key: String,
    /// Its line in the file, from 1, where it could be found.
    pub line: Option<usize>,
    /// The known key closest to it, if one is close.
    pub closest: Option<String>,
}

impl Config {
    /// Parses a config file's text, ignoring the keys no setting has (they are returned, for a
    /// warning), so that a typo or a key of a newer version never stops a command or a hook.
    pub fn parse_lenient(path: &Path, text: &str) -> Result<(Self, Vec<UnknownKey>)> {
        let parse_error = |err: toml::de::Error| Error::ConfigParse {
            path: path.to_owned(),
            message: err.message().to_owned(),
            source_code: NamedSource::new(path.display().to_string(), text.to_owned()),
            span: err.span().map(Into::into),
        };
        // The common case, a file of known keys only, takes one parse.
        if let Ok(config) = toml::from_str::<Config>(text) {
            return Ok((config, Vec::new()));
        }
        let mut table: toml::Table = toml::from_str(text).map_err(parse_error)?;
        let schema = schemars::schema_for!(Config);
        let schema = schema.as_value();
        let mut unknown = Vec::new();
        prune_unknown(
            &mut table,
            &schema["properties"],
            schema,
            None,
            text,
            &mut unknown,
        );
        unknown.sort_by_key(|key| (key.line.unwrap_or(usize::MAX), key.key.clone()));
        // The text is parsed again once its unknown keys are gone, so that an error in a known
        // setting still points at its place in the file.
        let config = if unknown.is_empty() {
            toml::from_str(text).map_err(parse_error)?
        } else {
            Config::deserialize(toml::Value::Table(table)).map_err(parse_error)?
        };
        Ok((config, unknown))
    }

    /// Parses a config file's text.
    pub fn parse(path: &Path, text: &str) -> Result<Self> {
        toml::from_str(text).map_err(|err| Error::ConfigParse {
            path: path.to_owned(),
            message: err.message().to_owned(),
            source_code: NamedSource::new(path.display().to_string(), text.to_owned()),
            span: err.span().map(Into::into),
        })
    }
}

/// Drops from `table` (the table `path`, `None` at the top level) every key its schema's
/// `properties` lack, noting each in `unknown`, and does the same in every table below it: one
/// rule for every table of the file, those a newer version adds included.
fn prune_unknown(
    table: &mut toml::Table,
    properties: &serde_json::Value,
    root: &serde_json::Value,
    path: Option<&str>,
    text: &str,
    unknown: &mut Vec<UnknownKey>,
) {
    let known: Vec<String> = properties
        .as_object()
        .map(|properties| properties.keys().cloned().collect())
        .unwrap_or_default();
    table.retain(|key, _| {
        let is_known = known.iter().any(|name| name == key);
        if !is_known {
            unknown.push(unknown_key(text, path, key, &known));
        }
        is_known
    });
    for (key, value) in table.iter_mut() {
        let toml::Value::Table(inner) = value else {
            continue;
        };
        let Some(inner_properties) = table_properties(&properties[key.as_str()], root) else {
            continue;
        };
        let inner_path = path.map_or_else(|| key.clone(), |path| format!("{path}.{key}"));
        prune_unknown(
            inner,
            inner_properties,
            root,
            Some(&inner_path),
            text,
            unknown,
        );
    }
}

/// The `properties` of a setting's schema when it is a table (directly, or through a `$ref`).
fn table_properties<'a>(
    schema: &'a serde_json::Value,
    root: &'a serde_json::Value,
) -> Option<&'a serde_json::Value> {
    if schema["properties"].is_object() {
        return Some(&schema["properties"]);
    }
    let reference = schema["$ref"]
        .as_str()
        .or_else(|| schema["allOf"][0]["$ref"].as_str())?;
    let name = reference.strip_prefix("#/$defs/")?;
    let properties = &root["$defs"][name]["properties"];
    properties.is_object().then_some(properties)
}

/// An unknown key: where it is (after its table's header), and the known key closest to it.
fn unknown_key(text: &str, table: Option<&str>, key: &str, known: &[String]) -> UnknownKey {
    let is_header = |line: &str, name: &str| {
        let line = line.trim();
        line.starts_with('[') && line.trim_matches(['[', ']', ' ']) == name
    };
    let lines: Vec<&str> = text.lines().collect();
    // A key of a table is looked for after that table's header (a top-level one before any).
    let (from, to) = match table {
        Some(table) => {
            let from = lines
                .iter()
                .position(|line| is_header(line, table))
                .map_or(0, |index| index + 1);
            (from, lines.len())
        }
        None => {
            let to = lines
                .iter()
                .position(|line| line.trim_start().starts_with('['))
                .unwrap_or(lines.len());
            (0, to)
        }
    };
    let line = lines[from..to]
        .iter()
        .position(|line| {
            let line = line.trim_start().trim_start_matches(['"', '\'']);
            line.strip_prefix(key).is_some_and(|rest| {
                rest.trim_start_matches(['"', '\''])
                    .trim_start()
                    .starts_with('=')
            })
        })
        .map(|index| from + index + 1)
        .or_else(|| {
            // A table of its own: its header.
            let name = table.map_or_else(|| key.to_owned(), |table| format!("{table}.{key}"));
            lines
                .iter()
                .position(|line| is_header(line, &name))
                .map(|index| index + 1)
        });
    let closest = crate::suggest::closest(key, known.iter().map(String::as_str)).map(str::to_owned);
    UnknownKey {
        key: table.map_or_else(|| key.to_owned(), |table| format!("{table}.{key}")),
        line,
        closest: closest.map(|closest| match table {
            Some(table) => format!("{table}.{closest}"),
            None => closest,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_keys_are_ignored_with_their_line_and_closest_key() {
        let text = "max_in_progres = 1\ncommit_every = 2\n\n[gc]\nkeep = 3\nretention_dayz = 9\n[telemetry]\non = true\n";
        let (config, unknown) = Config::parse_lenient(Path::new("config.toml"), text).unwrap();
        assert_eq!(config.commit_every, 2);
        assert_eq!(config.gc.keep, 3);
        assert_eq!(config.max_in_progress, 0, "an unknown key sets nothing");
        assert_eq!(
            unknown,
            [
                UnknownKey {
                    key: "max_in_progres".into(),
                    line: Some(1),
                    closest: Some("max_in_progress".into()),
                },
                UnknownKey {
                    key: "gc.retention_dayz".into(),
                    line: Some(6),
                    closest: Some("gc.retention_days".into()),
                },
                UnknownKey {
                    key: "telemetry".into(),
                    line: Some(7),
                    closest: None,
                },
            ]
        );
        // A wrong type in a known key is still an error.
        assert!(Config::parse_lenient(Path::new("config.toml"), "commit_every = \"x\"").is_err());
    }

    #[test]
    fn the_runs_client_is_one_of_the_known_ones() {
        let parse = |text: &str| Config::parse_lenient(Path::new("config.toml"), text);
        for client in Client::ALL {
            let text = format!(
                "[run]\nclient = \"{}\"\ncodex = \"my-codex\"\n",
                client.name()
            );
            let (config, unknown) = parse(&text).unwrap();
            assert_eq!(config.run.client, Some(client));
            assert_eq!(config.run.codex.as_deref(), Some("my-codex"));
            assert!(unknown.is_empty());
        }
        for bad in ["\"Codex\"", "\"vim\"", "\"\"", "1", "[\"codex\"]"] {
            assert!(parse(&format!("[run]\nclient = {bad}\n")).is_err(), "{bad}");
        }
        assert_eq!(parse("").unwrap().0.run.client, None);
    }

    #[test]
    fn every_table_follows_the_same_rule_for_unknown_keys() {
        let text = "stale_after_days = 3\n\n[run]\nnotfy = \"echo hi\"\nclaude = \"my-claude\"\n\n[sync]\non_complet = true\nsomething_new = 1\n\n[gc]\nkeep = 2\n\n[run.future]\nx = 1\n";
        let (config, unknown) = Config::parse_lenient(Path::new("config.toml"), text).unwrap();
        assert_eq!(config.stale_after_days, 3);
        assert_eq!(config.run.claude.as_deref(), Some("my-claude"));
        assert_eq!(config.run.client, None);
        assert_eq!(config.run.notify, None, "an unknown key sets nothing");
        assert!(!config.sync.on_complete);
        assert_eq!(config.gc.keep, 2);
        let shown: Vec<(String, Option<usize>, Option<String>)> = unknown
            .into_iter()
            .map(|key| (key.key, key.line, key.closest))
            .collect();
        assert_eq!(
            shown,
            [
                ("run.notfy".into(), Some(4), Some("run.notify".into())),
                (
                    "sync.on_complet".into(),
                    Some(8),
                    Some("sync.on_complete".into())
                ),
                ("sync.something_new".into(), Some(9), None),
                ("run.future".into(), Some(14), None),
            ]
        );
        // An inline table and a key that shares its name with a key of another table.
        let text = "run = { notify = \"n\", keep = 1 }\n[gc]\nnotify = 2\n";
        let (config, unknown) = Config::parse_lenient(Path::new("config.toml"), text).unwrap();
        assert_eq!(config.run.notify.as_deref(), Some("n"));
        let keys: Vec<(&str, Option<usize>)> = unknown
            .iter()
            .map(|key| (key.key.as_str(), key.line))
            .collect();
        assert_eq!(keys, [("gc.notify", Some(3)), ("run.keep", None)]);
        // A wrong type in a known key of any table is still an error.
        assert!(
            Config::parse_lenient(Path::new("config.toml"), "[run]\nnotify = 3\nx = 1\n").is_err()
        );
        assert!(
            Config::parse_lenient(Path::new("config.toml"), "[sync]\non_complete = \"yes\"\n")
                .is_err()
        );
    }
}
