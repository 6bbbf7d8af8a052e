//! Git plumbing for sync: a workflow's journal and state as the commit `refs/checkpoints/<id>`
//! on a remote, through the `git` the user has (its remotes, transports and credentials).
//!
//! Where the last pull or push saw the remote is kept locally in
//! `refs/checkpoint-sync/<remote>/<id>`; a push is a compare-and-swap from there.

use std::{
    io::Write,
    path::{Path, PathBuf},
    process::{Command, Output, Stdio},
};

use checkpoint_core::WorkflowId;
use chrono::{DateTime, Utc};
use miette::{Diagnostic, Result};

/// The namespace of the workflow refs on a remote.
pub(crate) const REMOTE_PREFIX: &str = "refs/checkpoints/";
/// The namespace where the local repository remembers where each remote was last seen.
const TRACKING_PREFIX: &str = "refs/checkpoint-sync/";
/// The file names in a workflow commit's tree.
pub(crate) const JOURNAL_BLOB: &str = "journal.jsonl";
pub(crate) const STATE_BLOB: &str = "state.json";

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
            remote,
        ];
        args.extend(refspecs.iter().map(String::as_str));
        let output = self.run("fetch", &args, None)?;
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

    /// The commit where the last pull or push saw the remote's ref of `id`.
    pub(crate) fn tracked(&self, remote: &str, id: &WorkflowId) -> Result<Option<String>> {
        let name = format!("{}{id}^{{commit}}", tracking_prefix(remote));
        let output = self.run("read a ref", &["rev-parse", "-q", "--verify", &name], None)?;
        Ok(output
            .status
            .success()
            .then(|| String::from_utf8_lossy(&output.stdout).trim().to_owned()))
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

    /// The bytes of `file` in the tree of `commit`.
    pub(crate) fn read_blob(&self, commit: &str, file: &str) -> Result<Vec<u8>> {
        self.ok(
            "read the synced journal",
            &["cat-file", "blob", &format!("{commit}:{file}")],
            None,
        )
    }

    /// Writes a commit holding `files`, on `parent` when given; returns its id.
    pub(crate) fn commit(
        &self,
        files: &[(&str, &[u8])],
        parent: Option<&str>,
        message: &str,
        now: DateTime<Utc>,
    ) -> Result<String> {
        let mut tree = String::new();
        for (name, bytes) in files {
            let blob = self.ok(
                "store a blob",
                &["hash-object", "-w", "--stdin"],
                Some(bytes),
            )?;
            tree.push_str(&format!(
                "100644 blob {}\t{name}\n",
                String::from_utf8_lossy(&blob).trim()
            ));
        }
        let tree = self.ok("store a tree", &["mktree"], Some(tree.as_bytes()))?;
        let tree = String::from_utf8_lossy(&tree).trim().to_owned();
        let mut args = vec!["commit-tree", tree.as_str(), "-m", message];
        if let Some(parent) = parent {
            args.extend(["-p", parent]);
        }
        let date = format!("@{} +0000", now.timestamp());
        let mut command = self.command();
        command
            .args(&args)
            .env("GIT_AUTHOR_DATE", &date)
            .env("GIT_COMMITTER_DATE", &date)
            .stdin(Stdio::null());
        let mut output = command.output().map_err(|err| GitError {
            action: "store a commit".into(),
            detail: err.to_string(),
            help: "install git and make sure it is on `PATH`".into(),
        })?;
        if !output.status.success()
            && String::from_utf8_lossy(&output.stderr).contains("who you are")
        {
            // A machine with no git identity (a CI runner) still syncs, under a neutral name.
            output = command
                .env("GIT_AUTHOR_NAME", "checkpoint")
                .env("GIT_AUTHOR_EMAIL", "checkpoint@localhost")
                .env("GIT_COMMITTER_NAME", "checkpoint")
                .env("GIT_COMMITTER_EMAIL", "checkpoint@localhost")
                .output()
                .map_err(|err| GitError {
                    action: "store a commit".into(),
                    detail: err.to_string(),
                    help: "install git and make sure it is on `PATH`".into(),
                })?;
        }
        if !output.status.success() {
            return Err(failed("store a commit", &output, "check `git config user.name`").into());
        }
        Ok(String::from_utf8_lossy(&output.stdout).trim().to_owned())
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
        args.push(remote.into());
        for (id, commit, _) in updates {
            args.push(format!("{commit}:{REMOTE_PREFIX}{id}"));
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let output = self.run("push", &args, None)?;
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

fn tracking_prefix(remote: &str) -> String {
    format!("{TRACKING_PREFIX}{remote}/")
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
