//! Taking a snapshot: the working tree as `git add -A` sees it, minus the store, secret-looking
//! files and files over the size bound, written with a private index into the object database
//! and chained on the workflow's private ref; HEAD, the index, branches, the stash, tags and the
//! working tree are never touched.
//!
//! The private index is kept between snapshots, so git's stat cache makes an unchanged tree
//! cheap: a snapshot with nothing changed runs `git rev-parse` and `git ls-files` only.

use std::{
    fs,
    os::unix::ffi::OsStrExt,
    path::{Path, PathBuf},
    time::{Duration, Instant},
};

use checkpoint_core::WorkflowId;

use crate::snapshot::{
    plumbing::{Repo, display, path_of, records},
    scan_cache::{ScanCache, Stamp},
};

/// The paths given to one `git update-index`: a snapshot cut short by its deadline keeps the
/// chunks already added, and the next one goes on from there.
const CHUNK: usize = 2000;
/// The SHA-1 of the empty tree, the base of a repository's first snapshot when it has no commit.
const EMPTY_TREE: &str = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";
/// The longest a snapshot waits for another one of the same workflow.
const LOCK_WAIT: Duration = Duration::from_secs(10);

/// A changed file left out of a snapshot, and why.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LeftOut {
    /// The path, relative to the top directory, as bytes.
    pub(crate) path: Vec<u8>,
    /// Why, in words.
    pub(crate) why: String,
}

/// One file's change between two trees.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Changed {
    /// The path, relative to the top directory, as bytes.
    pub(crate) path: Vec<u8>,
    /// Lines added and removed; none for a binary file.
    pub(crate) lines: Option<(u64, u64)>,
}

/// What a snapshot took.
#[derive(Debug, Clone)]
pub(crate) struct Taken {
    /// The snapshot's commit (the last one when nothing changed).
    pub(crate) commit: String,
    /// Whether it is a new commit.
    pub(crate) created: bool,
    /// The files changed since the previous snapshot (since HEAD for the first).
    pub(crate) changed: Vec<Changed>,
    /// Changed files left out.
    pub(crate) left_out: Vec<LeftOut>,
    /// The deadline cut it short: nothing was committed, and the next snapshot goes on.
    pub(crate) unfinished: bool,
}

/// How to take a snapshot.
pub(crate) struct SnapshotOptions<'a> {
    /// The store's directory (never snapshotted).
    pub(crate) store: &'a Path,
    /// The project root (where secret-looking symbolic links must point).
    pub(crate) project_root: &'a Path,
    /// Files larger than this are left out.
    pub(crate) max_file_bytes: u64,
    /// The commit message.
    pub(crate) message: &'a str,
    /// When to stop adding files (a hook's budget); none for no limit.
    pub(crate) deadline: Option<Instant>,
    /// Commit and move the ref; false only writes the tree (`undo --dry-run`).
    pub(crate) commit: bool,
    /// The commit's date, in seconds since the epoch: the journal entry's time.
    pub(crate) date: Option<i64>,
}

/// The snapshots of one workflow in one working tree: its private index and ref.
pub(crate) struct Snapshots {
    pub(crate) repo: Repo,
    /// The private index.
    pub(crate) index: PathBuf,
    /// The private ref.
    pub(crate) refname: String,
}

impl Snapshots {
    /// The snapshots of `workflow` in the working tree around `dir`; none outside git.
    pub(crate) fn open(dir: &Path, workflow: &WorkflowId) -> Result<Option<Self>, String> {
        Ok(Repo::find(dir)?.map(|repo| Self::of(repo, workflow)))
    }

    /// The snapshots of `workflow` in `repo`.
    pub(crate) fn of(repo: Repo, workflow: &WorkflowId) -> Self {
        let index = repo
            .git_dir
            .join("checkpoint")
            .join("snapshots")
            .join(format!("{workflow}.index"));
        let refname = refname(&repo, workflow);
        Self {
            repo,
            index,
            refname,
        }
    }

    /// Takes a snapshot of the working tree.
    pub(crate) fn take(&self, options: &SnapshotOptions<'_>) -> Result<Taken, String> {
        let dir = self.index.parent().expect("the index has a directory");
        fs::create_dir_all(dir)
            .map_err(|err| format!("failed to create `{}`: {err}", dir.display()))?;
        let _lock = self.lock()?;
        // A git killed while it held the private index, or a snapshot killed while it moved the
        // private ref, left its lock: nobody else writes either.
        let _ = fs::remove_file(self.index.with_extension("index.lock"));
        let _ = fs::remove_file(self.repo.common_dir.join(format!("{}.lock", self.refname)));
        let last = self.last()?;
        let mut first = !self.index.exists();
        if first {
            self.seed(options)?;
        }
        let pending = self.index.with_extension("pending");
        let settings = self.fast_settings(first, last.as_ref(), &pending, options);
        let listed = match self.changed_now() {
            Ok(listed) => listed,
            // The private index is a cache of the last snapshot's tree: one that git cannot read
            // (torn by a git that outlived a killed snapshot and raced the next one) is seeded
            // again from the real index, as for a first snapshot, which lists every change.
            Err(err) if !first => {
                fs::remove_file(&self.index)
                    .map_err(|rm| format!("{err}; and failed to remove the index: {rm}"))?;
                first = true;
                self.seed(options)?;
                self.changed_now()
                    .map_err(|again| format!("{err}; and after seeding it again: {again}"))?
            }
            Err(err) => return Err(err),
        };
        let (paths, left_out, mut cut) = self.candidates(&listed, options);
        if paths.is_empty()
            && !cut
            && !first
            && !pending.exists()
            && options.commit
            && let Some((commit, _)) = last
        {
            return Ok(Taken {
                commit,
                created: false,
                changed: Vec::new(),
                left_out,
                unfinished: false,
            });
        }
        // The fast path moves the ref before it writes the index: killed between them, it leaves
        // the index behind the ref, which the next snapshot sees (its tree is not the last one).
        let fast = self.take_fast(settings, last.as_ref(), &paths, cut, options, &left_out)?;
        if let Some(taken) = fast {
            return Ok(taken);
        }
        // Here the index is ahead of the ref until a commit holds it (or a cut-short snapshot,
        // or a tree-only one, left it so): the marker makes the next snapshot look.
        if !paths.is_empty() {
            fs::write(&pending, b"")
                .map_err(|err| format!("failed to write `{}`: {err}", pending.display()))?;
        }
        cut |= self.add(&paths, options.deadline)?;
        if cut {
            fs::write(&pending, b"")
                .map_err(|err| format!("failed to write `{}`: {err}", pending.display()))?;
            return Ok(Taken {
                commit: last.map(|(commit, _)| commit).unwrap_or_default(),
                created: false,
                changed: Vec::new(),
                left_out,
                unfinished: true,
            });
        }
        let tree = self
            .repo
            .git()
            .index(&self.index)
            .args(["write-tree"])
            .text()?;
        let same = last
            .as_ref()
            .is_some_and(|(_, last_tree)| *last_tree == tree);
        if same {
            let _ = fs::remove_file(&pending);
        }
        if !options.commit {
            return Ok(Taken {
                commit: tree,
                created: false,
                changed: Vec::new(),
                left_out,
                unfinished: false,
            });
        }
        if let Some((commit, _)) = last.as_ref().filter(|_| same) {
            return Ok(Taken {
                commit: commit.clone(),
                created: false,
                changed: Vec::new(),
                left_out,
                unfinished: false,
            });
        }
        let mut args = vec!["commit-tree".to_owned(), tree.clone()];
        if let Some((parent, _)) = &last {
            args.extend(["-p".to_owned(), parent.clone()]);
        }
        args.extend(["-m".to_owned(), options.message.to_owned()]);
        let base = match &last {
            Some((_, last_tree)) => last_tree.clone(),
            None => self.head_tree(),
        };
        // The commit and the changes both need only the tree: two processes at once.
        let (commit, changed) = std::thread::scope(|scope| {
            let changed = scope.spawn(|| self.changes(&base, &tree));
            let commit = self
                .repo
                .git()
                .identity()
                .date(options.date)
                .args(&args)
                .text();
            let changed = changed
                .join()
                .unwrap_or_else(|_| Err("the diff of the snapshot panicked".to_owned()));
            (commit, changed)
        });
        let (commit, changed) = (commit?, changed?);
        let old = last.as_ref().map_or("", |(parent, _)| parent.as_str());
        self.repo.update_ref(&self.refname, &commit, old)?;
        let _ = fs::remove_file(&pending);
        self.note_last(&commit, &tree);
        Ok(Taken {
            commit,
            created: true,
            changed,
            left_out,
            unfinished: false,
        })
    }

    /// The paths whose file differs from the private index (changed, deleted, a new type or
    /// mode) and the untracked ones not ignored, from one `git status` with the private index.
    /// It refreshes the index's stat cache and writes it back, so that an unchanged file is
    /// never read twice, and keeps git's untracked cache in it, so that an unchanged directory
    /// is not read again either.
    fn changed_now(&self) -> Result<Vec<u8>, String> {
        let output = self
            .repo
            .git()
            .index(&self.index)
            .writes_index()
            .args([
                "status",
                "--porcelain",
                "-z",
                "--no-renames",
                "--ignore-submodules=all",
                "--untracked-files=all",
            ])
            .output()?;
        Ok(status_paths(&output))
    }

    /// Adds `paths` to the private index in chunks; whether the deadline cut it short. Each chunk
    /// added is kept: the next snapshot goes on from there.
    fn add(&self, paths: &[Vec<u8>], deadline: Option<Instant>) -> Result<bool, String> {
        for chunk in paths.chunks(CHUNK) {
            let mut input = Vec::new();
            for path in chunk {
                input.extend_from_slice(path);
                input.push(0);
            }
            self.repo
                .git()
                .index(&self.index)
                .args([
                    "update-index",
                    "--add",
                    "--remove",
                    "--replace",
                    "-z",
                    "--stdin",
                ])
                .input(input)
                .output()?;
            if past(deadline) {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// The files changed from `from` to `to` (commits or trees).
    pub(crate) fn changes(&self, from: &str, to: &str) -> Result<Vec<Changed>, String> {
        Ok(numstat_records(&self.repo.numstat(from, to)?))
    }

    /// Removes the private ref and index, so that git can prune what only they held.
    pub(crate) fn forget(&self) -> Result<(), String> {
        if self.last()?.is_some() {
            self.repo
                .git()
                .args(["update-ref", "-d", &self.refname])
                .output()?;
        }
        for extension in [
            "index", "pending", "lock", "last", "leftout", "path", "settings",
        ] {
            let _ = fs::remove_file(self.index.with_extension(extension));
        }
        Ok(())
    }

    /// How each file changed from `from` to `to`: `added`, `deleted`, `type_changed`,
    /// `mode_changed` or `modified`.
    pub(crate) fn kinds(
        &self,
        from: &str,
        to: &str,
    ) -> Result<std::collections::HashMap<Vec<u8>, &'static str>, String> {
        Ok(self
            .raw_changes(from, to, &[])?
            .into_iter()
            .map(|change| {
                let kind = change.kind();
                (change.path, kind)
            })
            .collect())
    }

    /// Each file's change from `from` to `to` (commits or trees), limited to `paths` (relative
    /// to the top directory, taken literally; all when empty): `git diff-tree --raw`.
    pub(crate) fn raw_changes(
        &self,
        from: &str,
        to: &str,
        paths: &[PathBuf],
    ) -> Result<Vec<RawChange>, String> {
        let mut args: Vec<String> = [
            "diff-tree",
            "-r",
            "-z",
            "--raw",
            "--no-renames",
            "--no-abbrev",
            from,
            to,
            "--",
        ]
        .map(str::to_owned)
        .to_vec();
        for path in paths {
            args.push(format!(":(literal){}", path.display()));
        }
        let output = self.repo.git().args(&args).output()?;
        Ok(raw(&output))
    }

    /// The stat then the patch from `from` to `to`, as git prints them.
    pub(crate) fn patch(&self, from: &str, to: &str, stat_only: bool) -> Result<Vec<u8>, String> {
        let mut args = vec!["-c", "color.ui=never", "diff", "--no-ext-diff", "--stat"];
        if !stat_only {
            args.push("--patch");
        }
        args.extend([from, to]);
        self.repo.git().args(args).output()
    }

    /// The last snapshot's commit and tree, if any: the loose ref and the tree noted beside
    /// the private index when they agree, else `git for-each-ref`.
    pub(crate) fn last(&self) -> Result<Option<(String, String)>, String> {
        let loose = fs::read_to_string(self.repo.common_dir.join(&self.refname)).ok();
        let noted = fs::read_to_string(self.index.with_extension("last")).ok();
        if loose.is_none() && !self.may_be_packed() {
            return Ok(None);
        }
        if let (Some(loose), Some(noted)) = (loose, noted)
            && let Some((commit, tree)) = noted.trim().split_once(' ')
            && loose.trim() == commit
        {
            return Ok(Some((commit.to_owned(), tree.to_owned())));
        }
        let text = self
            .repo
            .git()
            .args([
                "for-each-ref",
                "--format=%(objectname) %(tree)",
                &self.refname,
            ])
            .text()?;
        Ok(text
            .lines()
            .next()
            .and_then(|line| line.split_once(' '))
            .filter(|(_, tree)| !tree.is_empty())
            .map(|(commit, tree)| (commit.to_owned(), tree.to_owned())))
    }

    /// The last snapshot taken before `at` (by its commit's time, in whole seconds: one taken in
    /// the same second may have followed it, so it does not count), if any.
    pub(crate) fn before(&self, at: chrono::DateTime<chrono::Utc>) -> Option<String> {
        let text = self
            .repo
            .git()
            .args([
                "rev-list".to_owned(),
                "-1".to_owned(),
                format!("--before={}", at.timestamp() - 1),
                self.refname.clone(),
                "--".to_owned(),
            ])
            .text()
            .ok()?;
        Some(text).filter(|commit| !commit.is_empty())
    }

    /// Whether the ref may exist without its loose file: in `packed-refs` (after `git gc` or
    /// `git pack-refs`) or in a reftable. Spares a process when a workflow has no snapshot.
    fn may_be_packed(&self) -> bool {
        if self.repo.common_dir.join("reftable").exists() {
            return true;
        }
        let Ok(packed) = fs::read(self.repo.common_dir.join("packed-refs")) else {
            return false;
        };
        let needle = format!(" {}\n", self.refname);
        packed
            .windows(needle.len())
            .any(|window| window == needle.as_bytes())
    }

    /// HEAD's tree, or the empty tree in a repository with no commit yet.
    pub(crate) fn head_tree(&self) -> String {
        self.repo
            .git()
            .args(["rev-parse", "-q", "--verify", "HEAD^{tree}"])
            .text()
            .ok()
            .filter(|tree| !tree.is_empty())
            .unwrap_or_else(|| EMPTY_TREE.to_owned())
    }

    /// The first private index: a copy of the repository's (its stat cache spares hashing the
    /// unchanged files), minus the entries a snapshot never holds.
    fn seed(&self, options: &SnapshotOptions<'_>) -> Result<(), String> {
        let real = self.repo.git_dir.join("index");
        if !real.exists() {
            return Ok(());
        }
        let copy = self.index.with_extension("index.new");
        fs::copy(&real, &copy)
            .map_err(|err| format!("failed to copy `{}`: {err}", real.display()))?;
        // The copy keeps the index's time: git trusts an entry's stat data only when the file
        // is older than the index, so a copy dated now would hide a same-size edit made in the
        // second of the last commit or checkout ("racily clean" entries).
        keep_modified(&real, &copy)?;
        fs::rename(&copy, &self.index)
            .map_err(|err| format!("failed to write `{}`: {err}", self.index.display()))?;
        let cached = self
            .repo
            .git()
            .index(&self.index)
            .args(["ls-files", "-z", "--cached"])
            .output()?;
        let store = self.store_prefix(options.store);
        let mut input = Vec::new();
        for path in records(&cached) {
            if self.excluded_by_name(&store, path) {
                input.extend_from_slice(path);
                input.push(0);
            }
        }
        if !input.is_empty() {
            self.repo
                .git()
                .index(&self.index)
                .args(["update-index", "--force-remove", "-z", "--stdin"])
                .input(input)
                .output()?;
        }
        Ok(())
    }

    /// The listed paths to add or remove, and the changed files left out.
    fn candidates(
        &self,
        listed: &[u8],
        options: &SnapshotOptions<'_>,
    ) -> (Vec<Vec<u8>>, Vec<LeftOut>, bool) {
        let store = self.store_prefix(options.store);
        let mut cache =
            ScanCache::load(self.index.with_extension("leftout"), options.max_file_bytes);
        let mut paths: Vec<&[u8]> = records(listed)
            // A directory with a repository of its own, listed with a slash: left alone.
            .filter(|path| !path.ends_with(b"/"))
            .collect();
        paths.sort_unstable();
        paths.dedup();
        let mut kept = Vec::new();
        let mut left_out = Vec::new();
        for (scanned, path) in paths.into_iter().enumerate() {
            // Reading files for secrets is the slow part of a large change: bounded too.
            if scanned % 64 == 63 && past(options.deadline) {
                return (kept, left_out, true);
            }
            if path_of(path).starts_with(&store) && !store.as_os_str().is_empty() {
                continue;
            }
            let metadata = fs::symlink_metadata(self.repo.top.join(path_of(path))).ok();
            let stamp = metadata.as_ref().map(Stamp::of);
            let why = match stamp {
                Some(stamp) => cache
                    .get(path, stamp)
                    .or_else(|| self.left_out(path, metadata.as_ref(), options)),
                None => None,
            };
            if let Some(why) = why {
                if let Some(stamp) = stamp {
                    cache.put(path, stamp, &why);
                }
                left_out.push(LeftOut {
                    path: path.to_vec(),
                    why,
                });
                continue;
            }
            kept.push(path.to_vec());
        }
        cache.save();
        (kept, left_out, false)
    }

    /// Why a changed file stays out of snapshots, if it does (`metadata` is its own, not its
    /// link's target's; none when it is gone).
    fn left_out(
        &self,
        path: &[u8],
        metadata: Option<&fs::Metadata>,
        options: &SnapshotOptions<'_>,
    ) -> Option<String> {
        let metadata = metadata?;
        if metadata.is_file() && metadata.len() > options.max_file_bytes {
            return Some(format!(
                "it is larger than the bound of {} bytes (`[files] max_file_bytes`)",
                options.max_file_bytes
            ));
        }
        use crate::git::LeftOutReason;
        match crate::git::left_out(&self.repo.top, options.project_root, &display(path)) {
            // A link is stored as its target's name: nothing outside is read.
            None | Some(LeftOutReason::SymlinkOutside { .. }) => None,
            Some(reason) => Some(reason.to_string()),
        }
    }

    /// Whether a path is the store's or has a secret-looking name.
    pub(crate) fn excluded_by_name(&self, store: &Path, path: &[u8]) -> bool {
        let path = path_of(path);
        (!store.as_os_str().is_empty() && path.starts_with(store))
            || path
                .file_name()
                .is_some_and(|name| crate::git::has_secret_name(&name.to_string_lossy()))
    }

    /// The store's directory relative to the top directory (empty when outside it).
    pub(crate) fn store_prefix(&self, store: &Path) -> PathBuf {
        let store = fs::canonicalize(store).unwrap_or_else(|_| store.to_path_buf());
        let top = fs::canonicalize(&self.repo.top).unwrap_or_else(|_| self.repo.top.clone());
        store
            .strip_prefix(&top)
            .map(Path::to_path_buf)
            .unwrap_or_default()
    }

    /// Holds the workflow's snapshot lock, waiting for another snapshot a bounded time.
    fn lock(&self) -> Result<fs::File, String> {
        let path = self.index.with_extension("lock");
        let file = fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|err| format!("failed to open `{}`: {err}", path.display()))?;
        let start = Instant::now();
        loop {
            match file.try_lock() {
                Ok(()) => return Ok(file),
                Err(fs::TryLockError::WouldBlock) if start.elapsed() < LOCK_WAIT => {
                    std::thread::sleep(Duration::from_millis(20));
                }
                Err(err) => {
                    return Err(format!(
                        "failed to lock `{}`: {err} (another snapshot is running)",
                        path.display()
                    ));
                }
            }
        }
    }
}

/// Whether `deadline` has passed.
fn past(deadline: Option<Instant>) -> bool {
    deadline.is_some_and(|deadline| Instant::now() >= deadline)
}

/// The private ref of a workflow's snapshots: a linked worktree's under its own name.
fn refname(repo: &Repo, workflow: &WorkflowId) -> String {
    match repo.git_dir.file_name() {
        Some(name) if repo.is_linked() => format!(
            "refs/checkpoint/worktrees/{}/snapshots/{workflow}",
            String::from_utf8_lossy(name.as_bytes())
        ),
        _ => format!("refs/checkpoint/snapshots/{workflow}"),
    }
}

/// One file's change between two trees, as `git diff-tree --raw` gives it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RawChange {
    pub(crate) old_mode: String,
    pub(crate) new_mode: String,
    pub(crate) old_blob: String,
    pub(crate) new_blob: String,
    /// `A`, `D`, `M` or `T`.
    pub(crate) status: String,
    /// The path, relative to the top directory, as bytes.
    pub(crate) path: Vec<u8>,
}

impl RawChange {
    /// The change in a word: `added`, `deleted`, `type_changed`, `mode_changed` or `modified`.
    pub(crate) fn kind(&self) -> &'static str {
        match self.status.as_str() {
            "A" => "added",
            "D" => "deleted",
            "T" => "type_changed",
            _ if self.old_blob == self.new_blob && self.old_mode != self.new_mode => "mode_changed",
            _ => "modified",
        }
    }
}

/// `git diff-tree -r -z --raw --no-abbrev` records: `:<old mode> <new mode> <old blob> <new
/// blob> <status>`, then the path.
pub(crate) fn raw(output: &[u8]) -> Vec<RawChange> {
    let mut changes = Vec::new();
    let mut fields = records(output);
    while let (Some(meta), Some(path)) = (fields.next(), fields.next()) {
        let meta = String::from_utf8_lossy(meta);
        let parts: Vec<&str> = meta.trim_start_matches(':').split(' ').collect();
        let [old_mode, new_mode, old_blob, new_blob, status] = parts[..] else {
            continue;
        };
        changes.push(RawChange {
            old_mode: old_mode.to_owned(),
            new_mode: new_mode.to_owned(),
            old_blob: old_blob.to_owned(),
            new_blob: new_blob.to_owned(),
            status: status.to_owned(),
            path: path.to_vec(),
        });
    }
    changes
}

/// The paths of `git status --porcelain -z --no-renames` records (`XY path`) whose file differs
/// from the index or is untracked (Y is not a space: X, HEAD against the index, does not matter
/// here), NUL-separated.
fn status_paths(output: &[u8]) -> Vec<u8> {
    let mut paths = Vec::new();
    for record in records(output) {
        if let [_, y, b' ', path @ ..] = record
            && *y != b' '
            && !path.is_empty()
        {
            paths.extend_from_slice(path);
            paths.push(0);
        }
    }
    paths
}

/// `git diff-tree --numstat -z` records.
pub(crate) fn numstat_records(output: &[u8]) -> Vec<Changed> {
    records(output)
        .filter_map(|record| {
            let mut fields = record.splitn(3, |byte| *byte == b'\t');
            let added = fields.next()?;
            let removed = fields.next()?;
            let path = fields.next()?;
            let number = |bytes: &[u8]| std::str::from_utf8(bytes).ok()?.parse::<u64>().ok();
            Some(Changed {
                path: path.to_vec(),
                lines: number(added).zip(number(removed)),
            })
        })
        .collect()
}

/// Gives `copy` the modification time of `original`.
fn keep_modified(original: &Path, copy: &Path) -> Result<(), String> {
    let modified = fs::metadata(original)
        .and_then(|metadata| metadata.modified())
        .map_err(|err| format!("failed to read the time of `{}`: {err}", original.display()))?;
    fs::File::options()
        .write(true)
        .open(copy)
        .and_then(|file| file.set_modified(modified))
        .map_err(|err| format!("failed to set the time of `{}`: {err}", copy.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_records_give_the_paths_that_differ_from_the_private_index() {
        let output = b"M  staged only\0 M changed\0 D gone\0 T now a link\0?? new file\nwith a newline\0MM both\0?? \xff\xfe\0";
        let listed = status_paths(output);
        let paths: Vec<&[u8]> = records(&listed).collect();
        assert_eq!(
            paths,
            [
                &b"changed"[..],
                b"gone",
                b"now a link",
                b"new file\nwith a newline",
                b"both",
                b"\xff\xfe"
            ]
        );
        assert!(status_paths(b"").is_empty());
    }

    #[test]
    fn raw_records_give_each_change_and_its_kind() {
        let zero = "0".repeat(40);
        let (a, b) = ("a".repeat(40), "b".repeat(40));
        let output = format!(
            ":000000 100644 {zero} {a} A\0new\0:100644 000000 {a} {zero} D\0old\0\
             :100644 100755 {a} {a} M\0run.sh\0:100644 100644 {a} {b} M\0text\0\
             :100644 120000 {a} {b} T\0link\0"
        );
        let kinds: Vec<(String, &str)> = raw(output.as_bytes())
            .iter()
            .map(|change| (display(&change.path), change.kind()))
            .collect();
        assert_eq!(
            kinds,
            [
                ("new".to_owned(), "added"),
                ("old".to_owned(), "deleted"),
                ("run.sh".to_owned(), "mode_changed"),
                ("text".to_owned(), "modified"),
                ("link".to_owned(), "type_changed"),
            ]
        );
        let link = &raw(output.as_bytes())[4];
        assert_eq!(
            (link.new_mode.as_str(), link.new_blob.as_str()),
            ("120000", b.as_str())
        );
    }
}
