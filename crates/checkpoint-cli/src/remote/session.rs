//! Git plumbing for a session's hand-off: the commit `refs/checkpoint-sessions/<workflow>/<id>`
//! (the redacted transcript, its sub-agents, a `handoff.json` and the snapshot of the
//! uncommitted work as the tree `work`, on the commit the work sits on, so that pushing it
//! pushes that commit too), written, pushed, fetched and read with sizes checked first.

use checkpoint_core::WorkflowId;
use miette::Result;

use crate::{
    failure::Failure,
    remote::{Repo, failed, tracking_prefix},
};

/// The namespace of the hand-off refs on a remote (and here, for the ones sent from here).
pub(crate) const SESSION_PREFIX: &str = "refs/checkpoint-sessions/";
/// The file names in a hand-off commit's tree.
pub(crate) const HANDOFF_BLOB: &str = "handoff.json";
pub(crate) const TRANSCRIPT_BLOB: &str = "transcript.jsonl";
pub(crate) const SUBAGENTS_TREE: &str = "subagents";
pub(crate) const WORK_TREE: &str = "work";
/// The tree of nothing, for a repository with no commit yet.
pub(crate) const EMPTY_TREE: &str = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

/// One entry of a tree: its mode, object, and path relative to the tree.
pub(crate) struct TreeEntry {
    pub mode: String,
    pub object: String,
    pub path: Vec<u8>,
}

/// One path that differs between two trees.
pub(crate) struct Difference {
    pub new_mode: String,
    pub new_object: String,
    /// `A`, `M`, `D` or `T`.
    pub status: char,
    pub path: Vec<u8>,
}

/// The ref of session `session` of `workflow`.
pub(crate) fn session_ref(workflow: &WorkflowId, session: &str) -> String {
    format!("{SESSION_PREFIX}{workflow}/{session}")
}

/// Where the hand-off refs last fetched from `remote` are kept here.
pub(crate) fn tracking_session_prefix(remote: &str) -> String {
    tracking_prefix(remote).replacen("refs/checkpoint-sync/", "refs/checkpoint-sync-sessions/", 1)
}

impl Repo {
    /// The commit HEAD is on, or `None` in a repository with no commit yet.
    pub(crate) fn head(&self) -> Result<Option<String>> {
        let output = self.run(
            "read HEAD",
            &["rev-parse", "--verify", "--quiet", "HEAD^{commit}"],
            None,
        )?;
        let head = String::from_utf8_lossy(&output.stdout).trim().to_owned();
        Ok((output.status.success() && !head.is_empty()).then_some(head))
    }

    /// Writes the hand-off commit of `session` and points the local ref at it: `files` at the
    /// top, `subagents` under `subagents/`, the tree `work` as `work`, on `parent`.
    pub(crate) fn write_handoff(
        &self,
        refname: &str,
        files: &[(&str, &[u8])],
        subagents: &[(String, Vec<u8>)],
        work: &str,
        parent: Option<&str>,
        message: &str,
    ) -> Result<String> {
        let mut stream: Vec<u8> = b"feature get-mark\nfeature done\n".to_vec();
        stream.extend(
            format!(
                "reset {refname}\ncommit {refname}\nmark :1\ncommitter checkpoint <checkpoint@localhost> 0 +0000\ndata {}\n{message}\n",
                message.len()
            )
            .bytes(),
        );
        if let Some(parent) = parent {
            stream.extend(format!("from {parent}\n").bytes());
        }
        stream.extend(b"deleteall\n");
        let mut inline = |name: &str, bytes: &[u8]| {
            stream.extend(format!("M 100644 inline {name}\ndata {}\n", bytes.len()).bytes());
            stream.extend_from_slice(bytes);
            stream.push(b'\n');
        };
        for (name, bytes) in files {
            inline(name, bytes);
        }
        for (name, bytes) in subagents {
            inline(&format!("{SUBAGENTS_TREE}/{name}"), bytes);
        }
        if work != EMPTY_TREE {
            stream.extend(format!("M 040000 {work} {WORK_TREE}\n").bytes());
        }
        stream.extend(b"\nget-mark :1\ndone\n");
        let out = self.ok(
            "store the session's hand-off",
            &["fast-import", "--quiet", "--done", "--force"],
            Some(&stream),
        )?;
        Ok(String::from_utf8_lossy(&out).trim().to_owned())
    }

    /// Pushes the local hand-off ref `refname` to `remote` (the last hand-off of a session
    /// replaces the one before).
    pub(crate) fn push_handoff(&self, remote: &str, refname: &str) -> Result<()> {
        let spec = format!("+{refname}:{refname}");
        let output = self.run_network(
            &format!("push to `{remote}`"),
            remote,
            &["push", "--quiet", "--no-verify", "--", remote, &spec],
        )?;
        if output.status.success() {
            return Ok(());
        }
        Err(failed(
            &format!("push the session to `{remote}`"),
            &output,
            "check the remote with `git push` and `git remote -v`",
        )
        .into())
    }

    /// Fetches the hand-off refs `pattern` names under `refs/checkpoint-sessions/` (a
    /// `<workflow>/<id>`, or `*`) from `remote`; whether the remote had it.
    pub(crate) fn fetch_handoff(&self, remote: &str, pattern: &str) -> Result<bool> {
        let spec = format!(
            "+{SESSION_PREFIX}{pattern}:{}{pattern}",
            tracking_session_prefix(remote)
        );
        let output = self.run_network(
            &format!("fetch from `{remote}`"),
            remote,
            &[
                "fetch",
                "--quiet",
                "--no-tags",
                "--no-write-fetch-head",
                "--no-auto-gc",
                "--",
                remote,
                &spec,
            ],
        )?;
        if output.status.success() {
            return Ok(true);
        }
        if String::from_utf8_lossy(&output.stderr).contains("couldn't find remote ref") {
            return Ok(false);
        }
        Err(failed(
            &format!("fetch from `{remote}`"),
            &output,
            "check the remote with `git fetch` and `git remote -v`",
        )
        .into())
    }

    /// A value of git's config, if set.
    pub(crate) fn config_value(&self, key: &str) -> Option<String> {
        self.ok("read git's config", &["config", "--get", key], None)
            .ok()
            .map(|out| String::from_utf8_lossy(&out).trim().to_owned())
    }

    /// The refs under `prefix`, without it.
    pub(crate) fn refs_under(&self, prefix: &str) -> Result<Vec<String>> {
        let out = self.ok(
            "list refs",
            &["for-each-ref", "--format=%(refname)", prefix],
            None,
        )?;
        Ok(String::from_utf8_lossy(&out)
            .lines()
            .filter_map(|line| line.strip_prefix(prefix).map(str::to_owned))
            .collect())
    }

    /// The type and size of `object` (`<rev>:<path>` or a name), or `None` when missing; read
    /// without reading the object.
    pub(crate) fn object_info(&self, object: &str) -> Result<Option<(String, u64)>> {
        let out = self.ok(
            "check an object's size",
            &["cat-file", "--batch-check=%(objecttype) %(objectsize)"],
            Some(format!("{object}\n").as_bytes()),
        )?;
        let line = String::from_utf8_lossy(&out);
        let mut fields = line.split_whitespace();
        match (
            fields.next(),
            fields.next().and_then(|size| size.parse().ok()),
        ) {
            (Some(kind), Some(size)) => Ok(Some((kind.to_owned(), size))),
            _ => Ok(None),
        }
    }

    /// The content of the blob `object`.
    pub(crate) fn blob(&self, object: &str) -> Result<Vec<u8>> {
        self.ok(
            "read a hand-off's file",
            &["cat-file", "blob", object],
            None,
        )
    }

    /// The object id `rev` names.
    pub(crate) fn resolve(&self, rev: &str) -> Result<String> {
        let out = self.ok(
            "read a hand-off",
            &["rev-parse", "--verify", "--quiet", rev],
            None,
        )?;
        Ok(String::from_utf8_lossy(&out).trim().to_owned())
    }

    /// The entries of the tree `tree`, recursively.
    pub(crate) fn tree_entries(&self, tree: &str) -> Result<Vec<TreeEntry>> {
        let out = self.ok(
            "list a hand-off's files",
            &["ls-tree", "-r", "-z", "--full-tree", tree],
            None,
        )?;
        let mut entries = Vec::new();
        for record in out.split(|&b| b == 0).filter(|record| !record.is_empty()) {
            let Some(tab) = record.iter().position(|&b| b == b'\t') else {
                continue;
            };
            let meta = String::from_utf8_lossy(&record[..tab]);
            let parts: Vec<&str> = meta.split(' ').collect();
            if let [mode, _, object] = parts[..] {
                entries.push(TreeEntry {
                    mode: mode.to_owned(),
                    object: object.to_owned(),
                    path: record[tab + 1..].to_vec(),
                });
            }
        }
        Ok(entries)
    }

    /// What differs from the tree `from` to the tree `to`, every path.
    pub(crate) fn differences(&self, from: &str, to: &str) -> Result<Vec<Difference>> {
        let out = self.ok(
            "compare a hand-off's files",
            &[
                "diff-tree",
                "-r",
                "-z",
                "--raw",
                "--no-renames",
                "--no-abbrev",
                from,
                to,
            ],
            None,
        )?;
        Ok(crate::snapshot::raw_diff(&out)
            .into_iter()
            .map(|change| Difference {
                new_mode: change.new_mode,
                new_object: change.new_blob,
                status: change.status.chars().next().unwrap_or('M'),
                path: change.path,
            })
            .collect())
    }
}

/// The error of a hand-off ref that is not what `push --session` writes (exit 6).
pub(crate) fn handoff_damaged(remote: &str, refname: &str, what: &str) -> miette::Report {
    Failure::new(
        "checkpoint::session::damaged",
        format!(
            "the session `{refname}` on `{remote}` is not what `checkpoint push --session` writes: {what}"
        ),
    )
    .with_help(format!(
        "nothing here was changed; send it again from the machine that has it (`checkpoint push --session`), or remove it: `git push {remote} --delete {refname}`"
    ))
    .into()
}
