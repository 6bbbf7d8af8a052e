//! Git plumbing for sync: a workflow's journal and state as the commit `refs/checkpoints/<id>`
//! on a remote, through the `git` the user has (its remotes, transports and credentials).
//!
//! Where the last pull or push saw the remote is kept locally in
//! `refs/checkpoint-sync/<remote>/<id>`; a push is a compare-and-swap from there.
//!
//! The remote is a name from the user or git's config: one starting with `-` is refused, and
//! every git command gets it after `--`. A URL or a path works as a remote too; its tracking refs
//! are under a name made from it. Every command that talks to the remote is bounded in time
//! (`CHECKPOINT_SYNC_TIMEOUT`).

use std::{
    io::{Read, Write},
    path::{Path, PathBuf},
    process::{Command, Output, Stdio},
    sync::mpsc,
    thread,
    time::{Duration, Instant},
};

use checkpoint_core::{WorkflowId, journal::MAX_JOURNAL_BYTES};
use chrono::{DateTime, Utc};
use miette::{Diagnostic, Result};

use crate::{env, failure::Failure, process_tree};

pub(crate) mod session;

/// How long a git command that talks to a remote may take, unless `CHECKPOINT_SYNC_TIMEOUT`
/// says otherwise.
const NETWORK_TIMEOUT: Duration = Duration::from_secs(60);

/// The namespace of the workflow refs on a remote.
pub(crate) const REMOTE_PREFIX: &str = "refs/checkpoints/";
/// The namespace where the local repository remembers where each remote was last seen.
const TRACKING_PREFIX: &str = "refs/checkpoint-sync/";
/// Where a commit waits to be pushed.
const PENDING_PREFIX: &str = "refs/checkpoint-pending/";
/// The file names in a workflow commit's tree: the store's own.
pub(crate) const JOURNAL_BLOB: &str = checkpoint_core::store::JOURNAL_FILE;
pub(crate) const STATE_BLOB: &str = checkpoint_core::store::STATE_FILE;

/// A git command that failed.
#[derive(Debug, thiserror::Error, Diagnostic)]
#[error("failed to {action}: {detail}")]
#[diagnostic(code(checkpoint::sync::git), help("{help}"))]
pub(crate) struct GitError {
    pub action: String,
    pub detail: String,
    pub help: String,
}

/// The git repository holding the project.
pub(crate) struct Repo {
    dir: PathBuf,
}

/// Refuses a remote name git would take for an option (`-…`), or one that is empty or holds
/// control characters; any other name, URL or path is passed to git after `--`.
pub(crate) fn check_remote(remote: &str, from: &str) -> Result<()> {
    let problem = if remote.is_empty() {
        Some("is empty")
    } else if remote.starts_with('-') {
        Some("starts with `-`, as an option does")
    } else if remote.chars().any(char::is_control) {
        Some("holds control characters")
    } else {
        None
    };
    match problem {
        None => Ok(()),
        Some(problem) => Err(Failure::new(
            "checkpoint::sync::remote",
            format!(
                "the remote `{}` ({from}) {problem}: it is not a remote",
                remote.escape_debug()
            ),
        )
        .with_help("name a remote of `git remote -v`, a URL or a path")
        .into()),
    }
}

/// Where the last pull or push saw a workflow on the remote.
pub(crate) struct Tracked {
    /// The commit of its ref.
    pub commit: String,
    /// The journal that commit holds.
    pub journal: Vec<u8>,
}

/// A commit to write: a workflow's files on the commit last seen on the remote.
pub(crate) struct NewCommit<'a> {
    pub id: &'a WorkflowId,
    pub files: &'a [(&'a str, &'a [u8])],
    pub parent: Option<&'a str>,
    pub message: &'a str,
}

/// What a push did to one ref.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PushResult {
    /// The remote ref now holds the commit.
    Updated,
    /// The remote moved since the last pull (or a ref appeared): nothing was changed.
    Rejected(String),
}

impl Repo {
    pub(crate) fn new(dir: &Path) -> Self {
        Self {
            dir: dir.to_owned(),
        }
    }

    fn command(&self) -> Command {
        let mut command = Command::new("git");
        command.arg("-C").arg(&self.dir);
        command
    }

    fn run(&self, action: &str, args: &[&str], stdin: Option<&[u8]>) -> Result<Output> {
        let mut command = self.command();
        command
            .args(args)
            .stdin(if stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = command.spawn().map_err(|err| GitError {
            action: action.to_owned(),
            detail: format!("`git` could not be run: {err}"),
            help: "install git and make sure it is on `PATH`".into(),
        })?;
        if let Some(bytes) = stdin {
            let mut pipe = child.stdin.take().expect("stdin is piped");
            // A git that exits early reports it through its status, read below.
            let _ = pipe.write_all(bytes);
        }
        child.wait_with_output().map_err(|err| {
            GitError {
                action: action.to_owned(),
                detail: err.to_string(),
                help: "run the command again".into(),
            }
            .into()
        })
    }

    /// Runs a git command that talks to `remote`, for at most the network timeout: an
    /// unresponsive remote is an error, and the command (with what it started) is killed.
    fn run_network(&self, action: &str, remote: &str, args: &[&str]) -> Result<Output> {
        let timeout = network_timeout()?;
        let mut child = self
            .command()
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|err| GitError {
                action: action.to_owned(),
                detail: format!("`git` could not be run: {err}"),
                help: "install git and make sure it is on `PATH`".into(),
            })?;
        // Read in threads, so that a full pipe never blocks git; a process git started may
        // hold them open, so they are never joined.
        let (sender, outputs) = mpsc::channel();
        for (n, pipe) in [
            child
                .stdout
                .take()
                .map(|pipe| Box::new(pipe) as Box<dyn Read + Send>),
            child
                .stderr
                .take()
                .map(|pipe| Box::new(pipe) as Box<dyn Read + Send>),
        ]
        .into_iter()
        .enumerate()
        {
            let sender = sender.clone();
            thread::spawn(move || {
                let mut bytes = Vec::new();
                if let Some(mut pipe) = pipe {
                    let _ = pipe.read_to_end(&mut bytes);
                }
                let _ = sender.send((n, bytes));
            });
        }
        drop(sender);
        let deadline = Instant::now() + timeout;
        let mut stdout = Vec::new();
        let mut stderr = Vec::new();
        // Both pipes end when git exits: wait on them rather than poll the process. Something
        // git started may hold them open after it exits: then a second more, no longer.
        let mut open = 2;
        let mut read_until = deadline;
        let mut exited = false;
        while open > 0 {
            let left = read_until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            match outputs.recv_timeout(left.min(Duration::from_millis(50))) {
                Ok((0, bytes)) => (stdout, open) = (bytes, open - 1),
                Ok((_, bytes)) => (stderr, open) = (bytes, open - 1),
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
            if !exited && matches!(child.try_wait(), Ok(Some(_))) {
                exited = true;
                read_until = read_until.min(Instant::now() + Duration::from_secs(1));
            }
        }
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) if Instant::now() < deadline => thread::sleep(Duration::from_millis(10)),
                _ => {
                    process_tree::kill(child.id());
                    let _ = child.wait();
                    let command = args.first().copied().unwrap_or_default();
                    return Err(GitError {
                        action: action.to_owned(),
                        detail: format!(
                            "`{remote}` did not answer within {} (the `git {command}` was stopped)",
                            checkpoint_core::run::human_duration(
                                chrono::Duration::from_std(timeout).unwrap_or_default()
                            ),
                        ),
                        help: format!(
                            "check the remote with `git {command} -- {remote}` and `git remote -v`; `{}` sets the limit in seconds",
                            env::CHECKPOINT_SYNC_TIMEOUT
                        ),
                    }
                    .into());
                }
            }
        };
        Ok(Output {
            status,
            stdout,
            stderr,
        })
    }

    /// Runs git and returns its stdout, or an error with its stderr.
    fn ok(&self, action: &str, args: &[&str], stdin: Option<&[u8]>) -> Result<Vec<u8>> {
        let output = self.run(action, args, stdin)?;
        if !output.status.success() {
            return Err(failed(
                action,
                &output,
                "check the remote and the repository with `git` itself",
            )
            .into());
        }
        Ok(output.stdout)
    }

    /// The remote sync uses by default: the current branch's upstream remote, else `origin`.
    pub(crate) fn default_remote(&self) -> Result<String> {
        let output = self.run(
            "read the upstream",
            &[
                "rev-parse",
                "--abbrev-ref",
                "--symbolic-full-name",
                "@{upstream}",
            ],
            None,
        )?;
        let upstream = String::from_utf8_lossy(&output.stdout).trim().to_owned();
        if output.status.success() && !upstream.is_empty() {
            let branch = String::from_utf8_lossy(&self.ok(
                "read the branch",
                &["symbolic-ref", "-q", "HEAD"],
                None,
            )?)
            .trim()
            .trim_start_matches("refs/heads/")
            .to_owned();
            let remote = self.ok(
                "read the upstream remote",
                &["config", "--get", &format!("branch.{branch}.remote")],
                None,
            )?;
            let remote = String::from_utf8_lossy(&remote).trim().to_owned();
            if !remote.is_empty() && remote != "." {
                check_remote(
                    &remote,
                    &format!("`branch.{branch}.remote` in git's config"),
                )?;
                return Ok(remote);
            }
        }
        Ok("origin".into())
    }

    /// Fetches the refs of `ids` (every workflow ref when `None`) from `remote` into the
    /// tracking refs; a workflow the remote does not have is simply not there afterwards.
    pub(crate) fn fetch(&self, remote: &str, ids: Option<&[WorkflowId]>) -> Result<()> {
        let tracking = tracking_prefix(remote);
        let refspecs: Vec<String> = match ids {
            None => vec![format!("+{REMOTE_PREFIX}*:{tracking}*")],
            Some(ids) => ids
                .iter()
                .map(|id| format!("+{REMOTE_PREFIX}{id}:{tracking}{id}"))
                .collect(),
        };
        let mut args = vec![
            "fetch",
            "--quiet",
            "--no-tags",
            "--no-write-fetch-head",
            "--no-auto-gc",
            "--prune",
            "--",
            remote,
        ];
        args.extend(refspecs.iter().map(String::as_str));
        let output = self.run_network(&format!("fetch from `{remote}`"), remote, &args)?;
        if output.status.success() {
            return Ok(());
        }
        let stderr = String::from_utf8_lossy(&output.stderr);
        if stderr.contains("couldn't find remote ref") {
            // One of the workflows is not on the remote: fetch the others one by one.
            if let Some(ids) = ids.filter(|ids| ids.len() > 1) {
                for id in ids {
                    self.fetch(remote, Some(std::slice::from_ref(id)))?;
                }
            } else if let Some([id]) = ids {
                let _ = self.run(
                    "forget a removed ref",
                    &["update-ref", "-d", &format!("{tracking}{id}")],
                    None,
                );
            }
            return Ok(());
        }
        Err(failed(
            &format!("fetch from `{remote}`"),
            &output,
            "check the remote with `git fetch` and `git remote -v`",
        )
        .into())
    }

    /// The ids of every workflow whose remote ref was seen.
    pub(crate) fn tracked_ids(&self, remote: &str) -> Result<Vec<String>> {
        let prefix = tracking_prefix(remote);
        let out = self.ok(
            "list refs",
            &["for-each-ref", "--format=%(refname)", &prefix],
            None,
        )?;
        Ok(String::from_utf8_lossy(&out)
            .lines()
            .filter_map(|line| line.strip_prefix(&prefix).map(str::to_owned))
            .collect())
    }

    /// For each of `ids`, the commit where the last pull or push saw the remote's ref and the
    /// journal it holds, or `None` when it was not seen; in one `git cat-file --batch`.
    /// A ref that is not a workflow's commit (a blob, a commit without a journal) is an error
    /// that says so, not a workflow missing from the remote.
    pub(crate) fn read_tracked(
        &self,
        remote: &str,
        ids: &[WorkflowId],
    ) -> Result<Vec<Option<Tracked>>> {
        self.refuse_oversized_journals(remote, ids)?;
        let prefix = tracking_prefix(remote);
        let mut input = String::new();
        for id in ids {
            input.push_str(&format!(
                "{prefix}{id}\n{prefix}{id}^{{commit}}\n{prefix}{id}:{JOURNAL_BLOB}\n"
            ));
        }
        let out = self.ok(
            "read the synced journals",
            &["cat-file", "--batch"],
            Some(input.as_bytes()),
        )?;
        let mut objects = BatchReader { out: &out, at: 0 };
        let mut tracked = Vec::with_capacity(ids.len());
        for id in ids {
            let object = objects.next()?;
            let commit = objects.next()?;
            let journal = objects.next()?;
            tracked.push(match (object, commit, journal) {
                (None, _, _) => None,
                (Some(object), _, _) if object.kind != "commit" => {
                    return Err(remote_damaged(
                        remote,
                        id,
                        &format!(
                            "`{REMOTE_PREFIX}{id}` points at a {}, not a commit",
                            object.kind
                        ),
                    ));
                }
                (Some(_), Some(commit), Some(journal)) if journal.kind == "blob" => Some(Tracked {
                    commit: commit.sha,
                    journal: journal.bytes.to_vec(),
                }),
                (Some(_), _, _) => {
                    return Err(remote_damaged(
                        remote,
                        id,
                        &format!(
                            "the commit of `{REMOTE_PREFIX}{id}` holds no `{JOURNAL_BLOB}` file"
                        ),
                    ));
                }
            });
        }
        Ok(tracked)
    }

    /// Refuses, by their sizes alone and before any is read, the synced journals of `ids` that
    /// are larger than a writer ever makes one ([`MAX_JOURNAL_BYTES`]): a forged or damaged
    /// remote ref is never read into memory.
    fn refuse_oversized_journals(&self, remote: &str, ids: &[WorkflowId]) -> Result<()> {
        let prefix = tracking_prefix(remote);
        let input: String = ids
            .iter()
            .map(|id| format!("{prefix}{id}:{JOURNAL_BLOB}\n"))
            .collect();
        let out = self.ok(
            "check the sizes of the synced journals",
            &["cat-file", "--batch-check=%(objectsize)"],
            Some(input.as_bytes()),
        )?;
        // A missing name prints `<name> missing`, which is no size: `read_tracked` says why.
        let sizes = String::from_utf8_lossy(&out);
        for (id, line) in ids.iter().zip(sizes.lines()) {
            if let Ok(size) = line.trim().parse::<u64>()
                && size > MAX_JOURNAL_BYTES
            {
                return Err(Failure::new(
                    "checkpoint::sync::journal_too_large",
                    format!(
                        "refusing to read `{REMOTE_PREFIX}{id}` from `{remote}`: its journal is {size} bytes, over the limit of {MAX_JOURNAL_BYTES} bytes"
                    ),
                )
                .with_help(format!(
                    "`checkpoint` never writes a journal that large, so the remote's copy was made some other way; nothing was read or changed here: remove it with `git push {remote} --delete {REMOTE_PREFIX}{id}`, then `checkpoint push` this copy"
                ))
                .into());
            }
        }
        Ok(())
    }

    /// Writes one commit per workflow, each holding its files and on its parent when given, in
    /// one `git fast-import`; returns their ids.
    pub(crate) fn commit_all(
        &self,
        commits: &[NewCommit<'_>],
        now: DateTime<Utc>,
    ) -> Result<Vec<String>> {
        let output = self.run(
            "read the git identity",
            &["var", "GIT_COMMITTER_IDENT"],
            None,
        )?;
        let ident = String::from_utf8_lossy(&output.stdout);
        // `Name <email> <time> <zone>`: the name and email, and our own time.
        let who = match ident.rfind('>') {
            Some(end) if output.status.success() => ident[..=end].to_owned(),
            // A machine with no git identity (a CI runner) still syncs, under a neutral name.
            _ => "checkpoint <checkpoint@localhost>".to_owned(),
        };
        let when = format!("{} +0000", now.timestamp());
        let mut stream: Vec<u8> = b"feature get-mark\nfeature done\n".to_vec();
        for (n, commit) in commits.iter().enumerate() {
            let name = format!("{PENDING_PREFIX}{}", commit.id);
            stream.extend(
                format!(
                    "reset {name}\n\ncommit {name}\nmark :{}\ncommitter {who} {when}\n",
                    n + 1
                )
                .bytes(),
            );
            stream.extend(format!("data {}\n{}\n", commit.message.len(), commit.message).bytes());
            if let Some(parent) = commit.parent {
                stream.extend(format!("from {parent}\n").bytes());
            }
            for (file, bytes) in commit.files {
                stream.extend(format!("M 100644 inline {file}\ndata {}\n", bytes.len()).bytes());
                stream.extend_from_slice(bytes);
                stream.push(b'\n');
            }
            stream.push(b'\n');
        }
        for n in 0..commits.len() {
            stream.extend(format!("get-mark :{}\n", n + 1).bytes());
        }
        stream.extend(b"done\n");
        let out = self.ok(
            "store the commits",
            &["fast-import", "--quiet", "--done", "--force"],
            Some(&stream),
        )?;
        let shas: Vec<String> = String::from_utf8_lossy(&out)
            .lines()
            .map(str::to_owned)
            .collect();
        if shas.len() != commits.len() {
            return Err(GitError {
                action: "store the commits".into(),
                detail: format!(
                    "`git fast-import` named {} commits, not {}",
                    shas.len(),
                    commits.len()
                ),
                help: "check the repository with `git fsck`".into(),
            }
            .into());
        }
        Ok(shas)
    }

    /// Pushes each `(id, commit, expected)`: the remote ref moves to `commit` only while it is
    /// still at `expected` (absent when `None`), and the tracking ref follows a push that landed.
    pub(crate) fn push(
        &self,
        remote: &str,
        updates: &[(WorkflowId, String, Option<String>)],
    ) -> Result<Vec<PushResult>> {
        let mut args: Vec<String> = vec!["push".into(), "--porcelain".into(), "--no-verify".into()];
        for (id, _, expected) in updates {
            args.push(format!(
                "--force-with-lease={REMOTE_PREFIX}{id}:{}",
                expected.as_deref().unwrap_or("")
            ));
        }
        args.push("--".into());
        args.push(remote.into());
        for (id, commit, _) in updates {
            args.push(format!("{commit}:{REMOTE_PREFIX}{id}"));
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let output = self.run_network(&format!("push to `{remote}`"), remote, &args)?;
        let stdout = String::from_utf8_lossy(&output.stdout);
        let mut results = Vec::with_capacity(updates.len());
        for (id, commit, _) in updates {
            let dst = format!(":{REMOTE_PREFIX}{id}\t");
            let line = stdout.lines().find(|line| line.contains(&dst));
            let result = match line.and_then(|line| line.chars().next()) {
                Some(' ' | '*' | '+' | '=') => {
                    self.ok(
                        "remember the pushed commit",
                        &[
                            "update-ref",
                            &format!("{}{id}", tracking_prefix(remote)),
                            commit,
                        ],
                        None,
                    )?;
                    PushResult::Updated
                }
                Some(_) => PushResult::Rejected(
                    line.and_then(|line| line.split('\t').nth(2))
                        .unwrap_or("rejected")
                        .to_owned(),
                ),
                None => {
                    return Err(failed(
                        &format!("push to `{remote}`"),
                        &output,
                        "check the remote with `git push` and `git remote -v`",
                    )
                    .into());
                }
            };
            results.push(result);
        }
        Ok(results)
    }
}

/// The objects `git cat-file --batch` printed, one by one.
struct BatchReader<'a> {
    out: &'a [u8],
    at: usize,
}

/// One object `git cat-file --batch` printed.
struct Object<'a> {
    sha: String,
    kind: String,
    bytes: &'a [u8],
}

impl<'a> BatchReader<'a> {
    /// The next object, or `None` for a name that is missing.
    fn next(&mut self) -> Result<Option<Object<'a>>> {
        let bad = || GitError {
            action: "read the synced journals".into(),
            detail: "`git cat-file --batch` printed something unexpected".into(),
            help: "check the repository with `git fsck`".into(),
        };
        let rest = &self.out[self.at..];
        let end = rest.iter().position(|&b| b == b'\n').ok_or_else(bad)?;
        let header = String::from_utf8_lossy(&rest[..end]).into_owned();
        self.at += end + 1;
        let fields: Vec<&str> = header.split(' ').collect();
        match fields.as_slice() {
            [.., "missing"] | [.., "ambiguous"] => Ok(None),
            [sha, kind, size] => {
                let size: usize = size.parse().map_err(|_| bad())?;
                let end = self.at.checked_add(size).ok_or_else(bad)?;
                let bytes = self.out.get(self.at..end).ok_or_else(bad)?;
                self.at = end + 1;
                Ok(Some(Object {
                    sha: (*sha).to_owned(),
                    kind: (*kind).to_owned(),
                    bytes,
                }))
            }
            _ => Err(bad().into()),
        }
    }
}

/// The error of a workflow ref on `remote` that is not what `checkpoint push` writes: the
/// remote's copy is damaged, this one is untouched.
pub(crate) fn remote_damaged(remote: &str, id: &WorkflowId, what: &str) -> miette::Report {
    Failure::new(
        "checkpoint::sync::remote_damaged",
        format!("the copy of `{id}` on `{remote}` is damaged: {what}"),
    )
    .with_help(format!(
        "nothing here was changed; push a good copy from the machine that wrote it, or replace the remote's copy with this one: `git push {remote} --delete {REMOTE_PREFIX}{id}`, then `checkpoint --workflow {id} sync {remote}`"
    ))
    .into()
}

/// Where the refs last seen on `remote` are kept: under its name, or for a URL, a path or a
/// name that is not a plain ref component, under `url-<hash of it>`.
fn tracking_prefix(remote: &str) -> String {
    let plain = !remote.is_empty()
        && !remote.starts_with('.')
        && !remote.ends_with(".lock")
        && !remote.contains("..")
        && remote
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c));
    if plain {
        format!("{TRACKING_PREFIX}{remote}/")
    } else {
        // FNV-1a: stable across versions and machines, unlike std's hasher.
        let hash = remote
            .bytes()
            .fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| {
                (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
            });
        format!("{TRACKING_PREFIX}url-{hash:016x}/")
    }
}

/// The network timeout: `CHECKPOINT_SYNC_TIMEOUT` seconds, else [`NETWORK_TIMEOUT`]; zero is
/// refused (no git command could run).
fn network_timeout() -> Result<Duration> {
    let timeout = crate::ctx::env_seconds(env::CHECKPOINT_SYNC_TIMEOUT, NETWORK_TIMEOUT)?;
    if timeout.is_zero() {
        return Err(Failure::new(
            "checkpoint::invalid_env",
            format!("invalid `{}=0`", env::CHECKPOINT_SYNC_TIMEOUT),
        )
        .with_help("give a number of seconds above zero, for example `CHECKPOINT_SYNC_TIMEOUT=120`")
        .into());
    }
    Ok(timeout)
}

fn failed(action: &str, output: &Output, help: &str) -> GitError {
    let stderr = String::from_utf8_lossy(&output.stderr);
    let detail = stderr
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .collect::<Vec<_>>()
        .join("; ");
    GitError {
        action: action.to_owned(),
        detail: if detail.is_empty() {
            format!("`git` exited with {}", output.status)
        } else {
            detail
        },
        help: help.to_owned(),
    }
}
