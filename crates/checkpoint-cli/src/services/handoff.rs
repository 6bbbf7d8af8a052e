//! `checkpoint push --session`: a session sent to the remote beside its workflow, to go on on
//! another machine or by a teammate. What is sent: a snapshot of the uncommitted work (changed,
//! new and deleted files, against the commit it sits on), the session's transcript redacted with
//! the journal's rules (and its sub-agents' with `--with-subagents`), and who sent it from where.
//! Nothing else of the client's home ever is. The first time for a remote, what will be sent is
//! said, and a terminal is asked.

use std::{
    fs,
    io::IsTerminal,
    path::{Path, PathBuf},
};

use checkpoint_core::{SnapshotReason, Transition, WorkflowId};
use miette::{IntoDiagnostic, Result};
use serde::{Deserialize, Serialize};

use crate::{
    ctx::Ctx,
    env,
    failure::Failure,
    output,
    remote::{
        Repo,
        session::{EMPTY_TREE, HANDOFF_BLOB, TRANSCRIPT_BLOB, session_ref},
    },
    services::store_write,
    services::{snapshots, transcript},
};

/// Where the store remembers the remotes a person agreed to send sessions to.
const CONSENTED: &str = ".session-remotes";

/// The document `handoff.json` in a hand-off commit.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct HandoffDoc {
    pub version: u32,
    pub workflow: String,
    pub session_id: String,
    pub client: String,
    pub machine: String,
    pub user: String,
    pub at: String,
    /// The commit the work sits on (empty in a repository with no commit).
    pub base: String,
    pub files: u64,
    pub transcript_bytes: u64,
}

/// What `push --session` was asked.
pub(crate) struct Send<'a> {
    /// The session; the workflow's last one when `None`.
    pub session: Option<&'a str>,
    pub with_subagents: bool,
    /// `--yes`: no question at a terminal.
    pub yes: bool,
}

/// Sends the session of workflow `id` to `remote` and journals the hand-off; returns what to
/// say. The workflow itself is pushed afterwards, so that the hand-off entry travels with it.
pub(crate) fn send(ctx: &Ctx, remote: &str, id: &WorkflowId, send: &Send<'_>) -> Result<String> {
    let workflow = ctx.store.load(id)?.workflow;
    let session = match send.session {
        Some(session) => session.to_owned(),
        None => workflow
            .last_activity
            .as_ref()
            .and_then(|activity| activity.session_id.clone())
            .ok_or_else(|| {
                Failure::new(
                    "checkpoint::session::none",
                    format!("`{id}` has no session yet, so there is none to send"),
                )
                .with_help("name it: `checkpoint push --session <id>`")
            })?,
    };
    transcript::check_id(&session, "the session to send")?;
    let limit = ctx.config.sync.session_max_bytes;
    let path = transcript::find(&ctx.project_root, &session)?;
    let (text, secrets) = transcript::redacted(&transcript::read_bounded(&path, limit)?);
    let subagents = if send.with_subagents {
        subagent_files(&path, &session, limit)?
    } else {
        Vec::new()
    };
    let total = text.len() as u64 + subagents.iter().map(|(_, b)| b.len() as u64).sum::<u64>();
    transcript::refuse_oversized(total, limit, &path.display().to_string())?;

    let repo = Repo::new(&ctx.project_root);
    let base = repo.head()?;
    let taken = snapshots::take(
        ctx,
        id,
        snapshots::Request {
            reason: SnapshotReason::Manual,
            label: Some("push --session".into()),
            session_id: Some(session.clone()),
            agent_id: None,
            phase: None,
            deadline: None,
        },
    )?
    .taken;
    let work = repo.resolve(&format!("{}^{{tree}}", taken.commit))?;
    let base_tree = match &base {
        Some(base) => repo.resolve(&format!("{base}^{{tree}}"))?,
        None => EMPTY_TREE.to_owned(),
    };
    let files = repo.differences(&base_tree, &work)?;
    let paths: Vec<String> = files
        .iter()
        .map(|file| String::from_utf8_lossy(&file.path).into_owned())
        .collect();

    consent(ctx, remote, &session, &path, total, &paths, send.yes)?;

    let (machine, user) = (machine(), user(&repo));
    let doc = HandoffDoc {
        version: 1,
        workflow: id.to_string(),
        session_id: session.clone(),
        client: "claude".into(),
        machine: machine.clone(),
        user: user.clone(),
        at: ctx.now.to_rfc3339(),
        base: base.clone().unwrap_or_default(),
        files: paths.len() as u64,
        transcript_bytes: total,
    };
    let mut doc_text = serde_json::to_vec_pretty(&doc).into_diagnostic()?;
    doc_text.push(b'\n');
    let refname = session_ref(id, &session);
    repo.write_handoff(
        &refname,
        &[(HANDOFF_BLOB, &doc_text), (TRANSCRIPT_BLOB, &text)],
        &subagents,
        &work,
        base.as_deref(),
        &format!("checkpoint: session {session} of {id}"),
    )?;
    repo.push_handoff(remote, &refname)?;
    store_write::update(ctx, id, |_| {
        Ok(vec![Transition::SessionHandoff {
            session_id: session.clone(),
            client: "claude".into(),
            machine,
            user,
            base: base.unwrap_or_default(),
            files: paths.len() as u64,
            transcript_bytes: total,
        }])
    })?;
    Ok(format!(
        "`{id}`: sent session {session} to `{remote}` as `{refname}` ({}, transcript {}{}); on the other machine: `checkpoint pull --workflow {id} --session`",
        output::count(paths.len(), "changed file"),
        human_bytes(total),
        if secrets > 0 {
            format!(", {} redacted", output::count(secrets, "secret"))
        } else {
            String::new()
        }
    ))
}

/// The sub-agents' transcripts of a session (`<id>/subagents/agent-*.jsonl` and their
/// `.meta.json`), redacted; other files are left.
fn subagent_files(transcript: &Path, session: &str, limit: u64) -> Result<Vec<(String, Vec<u8>)>> {
    let dir = transcript
        .parent()
        .unwrap_or(Path::new("."))
        .join(session)
        .join("subagents");
    let Ok(entries) = fs::read_dir(&dir) else {
        return Ok(Vec::new());
    };
    let mut files = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !subagent_name(&name) || !entry.file_type().is_ok_and(|kind| kind.is_file()) {
            continue;
        }
        let (bytes, _) = transcript::redacted(&transcript::read_bounded(&entry.path(), limit)?);
        files.push((name, bytes));
    }
    files.sort();
    Ok(files)
}

/// Whether `name` is a sub-agent's file as the client names them: `agent-<id>.jsonl` or
/// `agent-<id>.meta.json`, the id letters, digits, `-` and `_`.
pub(crate) fn subagent_name(name: &str) -> bool {
    let stem = name
        .strip_suffix(".jsonl")
        .or_else(|| name.strip_suffix(".meta.json"));
    stem.and_then(|stem| stem.strip_prefix("agent-"))
        .is_some_and(|id| {
            !id.is_empty()
                && id.len() <= 128
                && id
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        })
}

/// The first time a session goes to `remote`: says what will be sent, asks a terminal, and
/// remembers the answer.
fn consent(
    ctx: &Ctx,
    remote: &str,
    session: &str,
    transcript: &Path,
    bytes: u64,
    paths: &[String],
    yes: bool,
) -> Result<()> {
    let file: PathBuf = ctx.store.root().join(CONSENTED);
    let known = fs::read_to_string(&file).unwrap_or_default();
    if known.lines().any(|line| line == remote) {
        return Ok(());
    }
    let mut text = format!(
        "The first session sent to `{}`: the session {session}'s transcript (`{}`, {} after redaction: the conversation, the files it read, the commands' output; secrets the journal's rules find are replaced), and the uncommitted work: {}",
        output::escape(remote),
        transcript.display(),
        human_bytes(bytes),
        output::count(paths.len(), "changed file"),
    );
    for path in paths.iter().take(10) {
        text.push_str(&format!("\n  {}", output::escape(path)));
    }
    if paths.len() > 10 {
        text.push_str(&format!("\n  … and {} more", paths.len() - 10));
    }
    text.push_str("\nNothing else of the client's home is sent.");
    output::note(&text);
    if !yes && std::io::stdin().is_terminal() && std::io::stderr().is_terminal() {
        let answer = output::ask(&format!(
            "Send them to `{}`? [y/N] ",
            output::escape(remote)
        ))?;
        if !matches!(answer.trim(), "y" | "Y" | "yes") {
            return Err(Failure::new(
                "checkpoint::session::declined",
                "nothing was sent: the session stays on this machine".into(),
            )
            .into());
        }
    }
    let mut known = known;
    known.push_str(remote);
    known.push('\n');
    let _ = fs::write(&file, known);
    Ok(())
}

/// This machine's name.
pub(crate) fn machine() -> String {
    fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| fs::read_to_string("/etc/hostname").ok())
        .map(|name| name.trim().to_owned())
        .filter(|name| !name.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "unknown".into())
}

/// Who sends: git's `user.name`, else the login.
fn user(repo: &Repo) -> String {
    repo.config_value("user.name")
        .filter(|name| !name.is_empty())
        .or_else(|| std::env::var(env::USER).ok())
        .unwrap_or_else(|| "unknown".into())
}

/// A size in bytes as a person reads it.
pub(crate) fn human_bytes(bytes: u64) -> String {
    match bytes {
        0..1024 => format!("{bytes} B"),
        1024..1_048_576 => format!("{:.1} KiB", bytes as f64 / 1024.0),
        _ => format!("{:.1} MiB", bytes as f64 / 1_048_576.0),
    }
}
