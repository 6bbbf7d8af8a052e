//! Several writers in one checkout, pure: who wrote which file (a session, or a sub-agent of
//! one), what each writer last saw of it (a content hash), the guard's rule at the moment of
//! writing, claims on paths, and the `[writes]` settings.
//!
//! The rule: a writer's write to a file is refused when the file changed since this writer last
//! saw it and the change was not its own (another session, another sub-agent, a Bash command of
//! another session, a person); a writer that never saw a file is refused only when another live
//! writer wrote it recently; a path held by another live writer's claim is refused naming the
//! holder. Content is compared by hash, never by time, so clocks that disagree between hooks
//! change nothing but the times shown. The store keeps these records in `store/writes.rs`.

use std::collections::BTreeMap;

use chrono::{DateTime, Duration, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::effects::fnv1a_128;

/// The hash of a file that does not exist.
pub const ABSENT: &str = "absent";

/// How many writes of one path its record keeps, most recent last.
pub(crate) const KEPT_WRITES: usize = 20;

/// A writer: a session, or one of its sub-agents (a separate writer).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Writer {
    pub session: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
}

impl Writer {
    /// A writer of `session`, `agent` when it is a sub-agent's.
    pub fn new(session: &str, agent: Option<&str>) -> Self {
        Self {
            session: session.to_owned(),
            agent: agent.filter(|agent| !agent.is_empty()).map(str::to_owned),
        }
    }

    /// Its key in the records: the session id, then `/` and the agent id for a sub-agent.
    pub fn key(&self) -> String {
        match &self.agent {
            Some(agent) => format!("{}/{agent}", self.session),
            None => self.session.clone(),
        }
    }

    /// The writer in words: `session <id>` or `sub-agent <id> (<type>) of session <id>`.
    pub fn describe(&self, agent_type: Option<&str>) -> String {
        match (&self.agent, agent_type.filter(|kind| !kind.is_empty())) {
            (Some(agent), Some(kind)) => {
                format!("sub-agent {agent} ({kind}) of session {}", self.session)
            }
            (Some(agent), None) => format!("sub-agent {agent} of session {}", self.session),
            (None, _) => format!("session {}", self.session),
        }
    }
}

/// The hash of a file's content, as the records hold it.
pub fn content_hash(bytes: &[u8]) -> String {
    format!("{:032x}", fnv1a_128(bytes))
}

/// One write to a file: by whom, when, with what, and what the file held after it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Write {
    pub at: DateTime<Utc>,
    /// The file, absolute.
    pub path: String,
    pub session: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_type: Option<String>,
    /// The phase in progress (or held by the agent) when it wrote.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
    /// The tool (`Write`, `Edit`, `apply_patch`), or `Bash: <command>` for a command.
    pub tool: String,
    /// The content's hash after the write ([`ABSENT`]: deleted).
    pub hash: String,
    /// The file's size and modification time after the write (nanoseconds since the epoch),
    /// for the cheap check after a Bash command.
    #[serde(default)]
    pub size: u64,
    #[serde(default)]
    pub mtime_ns: i128,
    /// Lines added and removed, where the client said (none for a Bash command).
    #[serde(default)]
    pub added: Option<u64>,
    #[serde(default)]
    pub removed: Option<u64>,
    /// Other writers whose Bash commands ran when a command's change was found: any of them
    /// may have made it, so it is nobody's own (nobody saw it).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub also: Vec<Writer>,
}

impl Write {
    /// Its writer.
    pub fn writer(&self) -> Writer {
        Writer::new(&self.session, self.agent.as_deref())
    }
}

/// What a writer last saw of a file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Seen {
    pub hash: String,
    pub at: DateTime<Utc>,
}

/// Everything known of one file: its last writes and what each writer last saw of it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PathRecord {
    pub path: String,
    /// The last [`KEPT_WRITES`] writes, oldest first.
    #[serde(default)]
    pub writes: Vec<Write>,
    /// By writer key.
    #[serde(default)]
    pub seen: BTreeMap<String, Seen>,
}

impl PathRecord {
    /// A record of `path` with nothing in it.
    pub fn new(path: &str) -> Self {
        Self {
            path: path.to_owned(),
            ..Self::default()
        }
    }

    /// `writer` saw the file holding `hash` (a whole read, an edit's pre-image).
    pub fn saw(&mut self, writer: &Writer, hash: &str, at: DateTime<Utc>) {
        self.seen.insert(
            writer.key(),
            Seen {
                hash: hash.to_owned(),
                at,
            },
        );
    }

    /// A write, which its writer saw (unless other writers may have made it).
    pub fn wrote(&mut self, write: Write) {
        if write.also.is_empty() {
            self.saw(&write.writer(), &write.hash, write.at);
        }
        self.writes.push(write);
        let excess = self.writes.len().saturating_sub(KEPT_WRITES);
        self.writes.drain(..excess);
    }

    /// The most recent write that left the file holding `hash`.
    pub(crate) fn author_of(&self, hash: &str) -> Option<&Write> {
        self.writes.iter().rev().find(|write| write.hash == hash)
    }

    /// The most recent write.
    pub fn last(&self) -> Option<&Write> {
        self.writes.last()
    }
}

/// Why a write is stopped.
#[derive(Debug, Clone, PartialEq)]
pub enum Conflict {
    /// The file changed since the writer last saw it; `by` the write that left it as it is,
    /// when one was recorded (else a person or a process no hook saw).
    Changed { by: Option<Write> },
    /// The writer never saw the file, which another live writer wrote recently.
    NeverSeen { by: Write },
    /// Another live writer holds the path.
    Claimed { claim: Claim },
}

/// The guard's rule for `writer` about to write a file whose content on disk now hashes to
/// `disk`, given the file's record and claims: `None` lets the write through.
///
/// `live` says whether a writer (by key) is still at work; `recent` is how long ago another
/// writer's write still makes a never-seen file its.
pub fn check(
    record: Option<&PathRecord>,
    writer: &Writer,
    disk: &str,
    now: DateTime<Utc>,
    recent: Duration,
    live: &dyn Fn(&Writer) -> bool,
) -> Option<Conflict> {
    let record = record?;
    match record.seen.get(&writer.key()) {
        Some(seen) if seen.hash == disk => None,
        Some(_) => {
            let by = record.author_of(disk).cloned();
            // Its own write left the file so (seen again later as another's): its own.
            match &by {
                Some(write) if write.writer() == *writer && write.also.is_empty() => None,
                _ => Some(Conflict::Changed { by }),
            }
        }
        None => {
            if disk == ABSENT {
                return None;
            }
            let by = record.author_of(disk)?;
            let other = by.writer() != *writer;
            // Clocks may disagree: a write "in the future" is recent.
            let age = now.signed_duration_since(by.at);
            (other && age < recent && live(&by.writer()))
                .then(|| Conflict::NeverSeen { by: by.clone() })
        }
    }
}

/// A path held by a writer: the outputs of the phase it holds, or a glob it claimed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Claim {
    /// A glob over the path relative to the checkout's top (`*` any characters, `/` too).
    pub glob: String,
    pub phase: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workflow: Option<String>,
    pub holder: Writer,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_type: Option<String>,
    pub since: DateTime<Utc>,
}

/// The claim of another live writer on `relative` (the path from the checkout's top), if any.
pub fn claimed_by_other<'c>(
    claims: &'c [Claim],
    relative: &str,
    writer: &Writer,
    live: &dyn Fn(&Writer) -> bool,
) -> Option<&'c Claim> {
    claims.iter().find(|claim| {
        claim.holder != *writer && claim_matches(&claim.glob, relative) && live(&claim.holder)
    })
}

pub use crate::plan::{CLAIM_HELP, claim_glob};

/// Whether a claim's glob holds `relative` (the path from the checkout's top): `*` matches any
/// characters, `/` too; `**/` also no directory at all; a glob that matches a directory above
/// the path holds the path.
pub(crate) fn claim_matches(glob: &str, relative: &str) -> bool {
    let flat = glob.replace("**/", "");
    let mut path = relative;
    loop {
        if crate::effects::glob_matches(glob, path) || crate::effects::glob_matches(&flat, path) {
            return true;
        }
        match path.rsplit_once('/') {
            Some((parent, _)) => path = parent,
            None => return false,
        }
    }
}

/// A writer as the liveness rule sees it: its last hook, whether it ended, its checkout.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WriterState {
    pub writer: Writer,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_type: Option<String>,
    /// The time of its last hook.
    pub last: DateTime<Utc>,
    /// It ended (`SessionEnd`, `SubagentStop`).
    #[serde(default)]
    pub ended: bool,
    /// The top of the checkout its hooks ran in (a worktree's own).
    #[serde(default)]
    pub checkout: String,
    /// The client that runs it (`claude`, `codex`, `gemini`).
    #[serde(default)]
    pub client: String,
}

/// Whether a writer is still at work: not ended, a hook within `idle`, its session not known
/// to be gone (`gone`: the client lists its live sessions and this one is not among them).
///
/// A last hook more than `idle` in the future (a clock far ahead of this one) is not believed:
/// otherwise a writer that died with such a clock would hold its files and claims until this
/// clock caught up.
pub fn is_live(state: &WriterState, now: DateTime<Utc>, idle: Duration, gone: bool) -> bool {
    let age = now.signed_duration_since(state.last);
    !state.ended && !gone && age < idle && -age < idle
}

/// How a kind of conflict is answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Nothing checked, nothing said.
    Off,
    /// The write goes through; the model is told.
    Warn,
    /// The write is refused (asked where a person sits at the terminal).
    Refuse,
}

/// The `[writes]` table: several sessions and sub-agents in one checkout.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct WritesConfig {
    /// A write through a file tool over another writer's unseen change (default `refuse`).
    pub sessions: Mode,
    /// A write to a path another live writer holds (default `refuse`).
    pub claims: Mode,
    /// A Bash command that changed a file over another writer's unseen change: reported to the
    /// model after it ran (default `warn`; `refuse` acts as `warn`: a command's files are known
    /// only once it ran).
    pub bash: Mode,
    /// `git switch`, `checkout <branch>`, `reset --hard`, `stash`, `clean -f`, `rebase` while
    /// other live sessions work in the same checkout (default `refuse`).
    pub checkout: Mode,
    /// Minutes without a hook after which a writer counts as gone and its claims end
    /// (default 60).
    pub idle_minutes: u32,
    /// Hours during which another live writer's write makes a file its for a writer that never
    /// saw it (default 4).
    pub recent_hours: u32,
}

impl Default for WritesConfig {
    fn default() -> Self {
        Self {
            sessions: Mode::Refuse,
            claims: Mode::Refuse,
            bash: Mode::Warn,
            checkout: Mode::Refuse,
            idle_minutes: 60,
            recent_hours: 4,
        }
    }
}

impl WritesConfig {
    /// How long a writer stays live without a hook.
    pub fn idle(&self) -> Duration {
        Duration::minutes(i64::from(self.idle_minutes))
    }

    /// How long another writer's write stays recent.
    pub fn recent(&self) -> Duration {
        Duration::hours(i64::from(self.recent_hours))
    }
}

/// A time as the reasons show it, to the minute, in UTC.
fn time(at: DateTime<Utc>) -> String {
    at.format("%Y-%m-%d %H:%M UTC").to_string()
}

/// A write in words: who, with what, when, how much, in which phase.
pub(crate) fn describe_write(write: &Write) -> String {
    let who = std::iter::once(write.writer().describe(write.agent_type.as_deref()))
        .chain(write.also.iter().map(|other| other.describe(None)))
        .collect::<Vec<_>>()
        .join(" or ");
    if !write.also.is_empty() {
        return format!(
            "{who} changed it with a command running at the time (`{}`) at {}",
            write.tool.strip_prefix("Bash: ").unwrap_or(&write.tool),
            time(write.at)
        );
    }
    let mut text = format!(
        "{} changed it with {} at {}",
        write.writer().describe(write.agent_type.as_deref()),
        tool_words(&write.tool),
        time(write.at)
    );
    if write.hash == ABSENT {
        text = format!(
            "{} deleted it with {} at {}",
            write.writer().describe(write.agent_type.as_deref()),
            tool_words(&write.tool),
            time(write.at)
        );
    }
    if let (Some(added), Some(removed)) = (write.added, write.removed) {
        text.push_str(&format!(" (+{added} -{removed} lines)"));
    }
    if let Some(phase) = &write.phase {
        text.push_str(&format!(", phase `{phase}`"));
    }
    text
}

fn tool_words(tool: &str) -> String {
    match tool.strip_prefix("Bash: ") {
        Some(command) => format!("the command `{command}`"),
        None => format!("`{tool}`"),
    }
}

/// The reason a write is refused (or warned about), for the model and the person: who changed
/// the file, when, how much, what to do, and where the other version is kept.
pub fn reason(path: &str, conflict: &Conflict, snapshot: Option<u64>) -> String {
    let mut text = match conflict {
        Conflict::Changed { by: Some(write) } => format!(
            "checkpoint: `{path}` changed since you last read it: {}.",
            describe_write(write)
        ),
        Conflict::Changed { by: None } => format!(
            "checkpoint: `{path}` changed since you last read it, by a person or a process outside the sessions `checkpoint` sees."
        ),
        Conflict::NeverSeen { by } => format!(
            "checkpoint: you have not read `{path}`, and {}, which is still at work.",
            describe_write(by)
        ),
        Conflict::Claimed { claim } => {
            return format!(
                "checkpoint: `{path}` is held by {} for phase `{}` (claim `{}` since {}), so it was not written. Leave it to its holder: write elsewhere, or wait until that phase completes (`checkpoint who {path}` shows its writers).",
                claim.holder.describe(claim.agent_type.as_deref()),
                claim.phase,
                claim.glob,
                time(claim.since)
            );
        }
    };
    text.push_str(
        " Your write would replace that change, so it was not made: read it again, then make your change.",
    );
    if let Some(number) = snapshot {
        text.push_str(&format!(
            " The other writer's version is in snapshot @{number} (`checkpoint undo --to @{number} -- {path}` brings it back)."
        ));
    }
    text
}

/// What a Bash command overwrote: the model is told whose change, and how to bring it back.
pub fn overwritten(path: &str, by: &Write, command: &str, snapshot: Option<u64>) -> String {
    let mut text = format!(
        "checkpoint: your command `{command}` changed `{path}`, which {} since you last saw it: that change may be lost. Read the file and check.",
        describe_write(by).replacen(" changed it", " had changed", 1)
    );
    match snapshot {
        Some(number) => text.push_str(&format!(
            " `checkpoint undo --to @{number} -- {path}` brings back the version before your command."
        )),
        None => text.push_str(
            " `checkpoint snapshots` lists the snapshots that may hold the other version.",
        ),
    }
    text
}

/// The git command of a Bash line that changes the whole checkout (`git switch`, `git checkout
/// <branch>` or `.`, `git reset --hard`, `git stash` but `list` and `show`, `git clean -f`, `git
/// rebase`), as written; `None` when the line has none.
pub fn whole_checkout(command: &str) -> Option<String> {
    crate::effects::commands_run(command)
        .into_iter()
        .find(|words| changes_checkout(words))
        .map(|words| words.join(" "))
}

fn changes_checkout(words: &[String]) -> bool {
    let mut rest = words.iter().map(String::as_str);
    if rest.next() != Some("git") {
        return false;
    }
    // Git's own options before the subcommand (`-C <dir>`, `-c <key=value>`).
    let mut sub = None;
    while let Some(word) = rest.next() {
        match word {
            "-C" | "-c" | "--git-dir" | "--work-tree" => {
                rest.next();
            }
            option if option.starts_with('-') => {}
            word => {
                sub = Some(word);
                break;
            }
        }
    }
    let args: Vec<&str> = rest.collect();
    let has = |flag: &str| args.contains(&flag);
    let short = |letter: char| {
        args.iter()
            .any(|arg| arg.starts_with('-') && !arg.starts_with("--") && arg[1..].contains(letter))
    };
    match sub {
        Some("switch" | "rebase") => !has("--help"),
        Some("checkout") => {
            if has("--") {
                return false;
            }
            let positional = args.iter().filter(|arg| !arg.starts_with('-')).count();
            positional == 1 || has("-b") || has("-B") || has("--detach")
        }
        Some("reset") => has("--hard") || has("--keep") || has("--merge"),
        Some("stash") => !matches!(args.first(), Some(&("list" | "show"))),
        Some("clean") => has("--force") || short('f'),
        _ => false,
    }
}

/// The files a command printed whole for the model to read: a lone `cat` or `nl` of files
/// (Codex CLI has no read tool: its model reads with the shell), with no pipe, redirection,
/// list or substitution that could cut or divert what it printed; empty for any other command.
pub fn shell_reads(command: &str) -> Vec<String> {
    if command.contains(['|', '>', '<', ';', '&', '`', '$', '\n']) {
        return Vec::new();
    }
    let commands = crate::effects::commands_run(command);
    let [words] = commands.as_slice() else {
        return Vec::new();
    };
    match words.split_first() {
        Some((program, files)) if matches!(program.as_str(), "cat" | "nl") => files
            .iter()
            .filter(|word| !word.starts_with('-'))
            .cloned()
            .collect(),
        _ => Vec::new(),
    }
}

/// The reason a whole-checkout command is refused: the other live sessions in this checkout.
pub fn checkout_reason(command: &str, others: &[String]) -> String {
    format!(
        "checkpoint: `{command}` changes the whole checkout, and other sessions are at work in it: {}. It would change their files under them, so it was not run. Work in a worktree of your own (`git worktree add`), or ask the person to stop the other sessions first.",
        others.join(", ")
    )
}

#[cfg(test)]
mod tests;
