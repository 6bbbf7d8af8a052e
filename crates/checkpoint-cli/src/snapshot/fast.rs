//! The snapshot's fast path: after the one `git status` with the private index, the changed
//! files are read and hashed, the new trees built from the private index's entries and the
//! commit made in-process, written as loose objects, and the ref moved in-process; the private
//! index is brought up to date in-process when no path comes or goes (else by `git
//! update-index --index-info`, the ids already known), and the lines changed counted in-process
//! where every diff agrees (else by `git diff-tree --numstat` meanwhile). Whenever anything is unusual (settings that
//! change what git would store, an index it cannot read for sure, a tree that is not the last
//! snapshot's), it says why and the process path does the snapshot.

use std::{
    collections::HashMap,
    fs,
    os::unix::{ffi::OsStrExt, fs::PermissionsExt},
    path::Path,
    thread::JoinHandle,
};

use crate::snapshot::{
    cache_tree,
    engine::{LeftOut, SnapshotOptions, Snapshots, Taken, numstat_records},
    index_file::{self, Stat},
    numstat,
    objects::{self, Kept, Made, Object, Oid, TreeEntry},
    plumbing::{Repo, path_of},
    settings_cache,
};

/// What the fast path needs from the snapshot under way.
pub(crate) struct Job<'a> {
    pub(crate) repo: &'a Repo,
    /// The private index.
    pub(crate) index: &'a Path,
    /// The private ref.
    pub(crate) refname: &'a str,
    /// The last snapshot's commit and tree.
    pub(crate) last: (&'a str, &'a str),
    /// The changed paths to take (the left-out ones already removed).
    pub(crate) paths: &'a [Vec<u8>],
    /// The commit message.
    pub(crate) message: &'a str,
    /// The commit's date, in seconds since the epoch.
    pub(crate) date: i64,
}

/// A changed file as read: its mode and blob, and its stat data as the index keeps it when the
/// file did not change while it was read; or none when it is gone.
type Read = Option<(u32, Object, Option<Stat>)>;

/// One entry of the private index to change: its path, and its new mode and id (none: gone).
type Update = (Vec<u8>, Option<(u32, Oid)>);

/// What the fast path did.
pub(crate) enum FastSnapshot {
    /// A snapshot was taken (or the tree is the last one's): its commit and tree, whether the
    /// commit is new, and the `git diff-tree --numstat` output from the last tree.
    Taken {
        commit: String,
        tree: String,
        created: bool,
        numstat: Vec<u8>,
    },
    /// The process path must take it, for this reason.
    Fallback(String),
}

/// The settings that decide whether the fast path applies, read by one `git config` started
/// now (it runs while `git status` does).
pub(crate) fn read_settings(repo: &Repo) -> JoinHandle<Result<Vec<u8>, String>> {
    let repo = repo.clone();
    std::thread::spawn(move || {
        let output = repo
            .git()
            .args([
                "config",
                "-z",
                "--get-regexp",
                "^(core\\.(autocrlf|filemode|symlinks|attributesfile|fsync|fsyncobjectfiles|\
                 sparsecheckout|ignorecase|precomposeunicode|sharedrepository|bigfilethreshold)|extensions\\..*|\
                 commit\\.gpgsign|i18n\\.commitencoding)$",
            ])
            .run()?;
        // 1: none of them is set.
        match output.status.code() {
            Some(0 | 1) => Ok(output.stdout),
            _ => Err(format!(
                "`git config` failed: {}",
                String::from_utf8_lossy(&output.stderr).trim()
            )),
        }
    })
}

/// Why the settings (`git config -z --get-regexp` records) rule the fast path out, if they do.
pub(crate) fn settings_refuse(output: &[u8]) -> Option<String> {
    for record in output.split(|byte| *byte == 0).filter(|r| !r.is_empty()) {
        let text = String::from_utf8_lossy(record);
        // A key alone is a boolean true.
        let (key, value) = text.split_once('\n').unwrap_or((&text, "true"));
        let value = value.to_ascii_lowercase();
        let truthy = matches!(value.as_str(), "true" | "yes" | "on" | "1" | "");
        let refused = match key {
            "core.autocrlf"
            | "core.sparsecheckout"
            | "core.ignorecase"
            | "core.precomposeunicode"
            | "commit.gpgsign"
            | "core.fsyncobjectfiles" => truthy || value == "input",
            "core.filemode" | "core.symlinks" => !truthy,
            "extensions.objectformat" => value != "sha1",
            "extensions.refstorage"
            | "extensions.worktreeconfig"
            | "extensions.noop"
            | "extensions.preciousobjects"
            | "extensions.partialclone" => false,
            // Another object format beside, attributes, fsync asked, another encoding, another
            // size past which a file is binary to git's diff (the lines counted): git's.
            _ => true,
        };
        if refused {
            return Some(format!("the setting `{key}` is `{value}`"));
        }
    }
    None
}

/// Takes the snapshot in-process, or says why not.
pub(crate) fn take(job: &Job<'_>) -> Result<FastSnapshot, String> {
    if let Some(why) = environment_refuses(job.repo) {
        return Ok(FastSnapshot::Fallback(why));
    }
    let bytes = fs::read(job.index)
        .map_err(|err| format!("failed to read `{}`: {err}", job.index.display()))?;
    let parsed = match index_file::parse(&bytes) {
        Ok(parsed) => parsed,
        Err(why) => {
            return Ok(FastSnapshot::Fallback(format!(
                "the private index has {why}"
            )));
        }
    };
    let mut entries: Vec<TreeEntry<'_>> = parsed
        .entries
        .iter()
        .map(|entry| (entry.path.as_slice(), entry.mode, entry.oid))
        .collect();
    if let Some(why) = refused_entries(&entries) {
        return Ok(FastSnapshot::Fallback(why));
    }
    let nodes = match index_file::cache_tree_body(&bytes, &parsed).map(cache_tree::nodes) {
        Some(Ok(nodes)) => nodes,
        None => Vec::new(),
        Some(Err(why)) => {
            return Ok(FastSnapshot::Fallback(format!(
                "the private index has {why}"
            )));
        }
    };
    // The private index must hold the last snapshot's tree: then every tree not made again
    // here is already in the object database. Its cache tree says so when its root is valid;
    // else every tree is made from the entries, and must give that tree.
    let mut kept = cache_tree::valid(&nodes);
    if kept.get(&b""[..]).map(objects::hex).as_deref() != Some(job.last.1) {
        let old = match objects::trees(&entries, None) {
            Ok(old) => old,
            Err(why) => return Ok(FastSnapshot::Fallback(why)),
        };
        if objects::hex(&old.root) != job.last.1 {
            return Ok(FastSnapshot::Fallback(
                "the private index is not the last snapshot's tree".to_owned(),
            ));
        }
        kept = old
            .dirs
            .into_iter()
            .map(|(dir, made)| (dir, made.oid))
            .collect();
    }
    let mut read = Vec::new();
    for path in job.paths {
        match read_file(&job.repo.top, path)? {
            Ok(change) => read.push((path.as_slice(), change)),
            Err(why) => return Ok(FastSnapshot::Fallback(why)),
        }
    }
    let Changes {
        updates,
        olds,
        stats,
        blobs,
    } = apply(&mut entries, read);
    let changed: Vec<&[u8]> = updates.iter().map(|(path, _)| path.as_slice()).collect();
    let kept = Kept {
        trees: &kept,
        changed: &changed,
    };
    let trees = match objects::trees(&entries, Some(&kept)) {
        Ok(trees) => trees,
        Err(why) => return Ok(FastSnapshot::Fallback(why)),
    };
    let tree = objects::hex(&trees.root);
    if tree == job.last.1 {
        return Ok(FastSnapshot::Taken {
            commit: job.last.0.to_owned(),
            tree,
            created: false,
            numstat: Vec::new(),
        });
    }
    let objects_dir = job.repo.common_dir.join("objects");
    let commit = Object::new(
        "commit",
        objects::commit_body(&tree, Some(job.last.0), job.date, job.message),
    );
    let commit_hex = objects::hex(&commit.oid);
    // The blobs are written while the lines are counted, then the trees and the commit.
    let counted = std::thread::scope(|scope| {
        let written = scope.spawn(|| objects::write_loose(&objects_dir, &blobs));
        let changes: Vec<numstat::Change<'_>> = updates
            .iter()
            .zip(&olds)
            .map(|((path, new), old)| numstat::Change {
                path,
                old: *old,
                new: *new,
            })
            .collect();
        let counted = numstat::count(&objects_dir, &changes, &|oid| {
            blobs
                .iter()
                .find(|blob| blob.oid == *oid)
                .map(|blob| blob.body.clone())
        });
        let trees_written = objects::write_loose(&objects_dir, trees.made.iter().chain([&commit]));
        written
            .join()
            .unwrap_or_else(|_| Err("writing the objects panicked".to_owned()))
            .and(trees_written)
            .map(|()| counted)
    })?;
    // The objects are whole: the diff (when git counts) may start, and the ref move, then the
    // index follow (killed between them, the index is behind the ref, which the next snapshot
    // sees: its tree is not the last one).
    let numstat = std::thread::scope(|scope| {
        let numstat = scope.spawn(|| match counted {
            Some(counted) => Ok(counted),
            None => job.repo.numstat(job.last.1, &tree),
        });
        let moved = job.repo.update_ref(job.refname, &commit_hex, job.last.0);
        if moved.is_ok() {
            // The snapshot is taken: an index left behind (its lock held by a `git` that
            // outlived a killed snapshot) is one the next snapshot brings up to date.
            let _ = update_index(job, &bytes, &parsed, (&updates, &stats), &trees.dirs);
        }
        let numstat = numstat
            .join()
            .unwrap_or_else(|_| Err("the diff of the snapshot panicked".to_owned()));
        moved.and(numstat)
    })?;
    Ok(FastSnapshot::Taken {
        commit: commit_hex,
        tree,
        created: true,
        numstat,
    })
}

/// Why the private index's entries rule the fast path out, if they do: a `.gitattributes`
/// (attributes may change what git stores), or entries out of git's order.
fn refused_entries(entries: &[TreeEntry<'_>]) -> Option<String> {
    if let Some(entry) = entries.iter().find(|entry| is_attributes(entry.0)) {
        return Some(format!(
            "`{}` may change what git stores",
            String::from_utf8_lossy(entry.0)
        ));
    }
    entries
        .windows(2)
        .any(|pair| pair[0].0 >= pair[1].0)
        .then(|| "the private index has entries out of order".to_owned())
}

/// The changes a snapshot makes to the private index's entries.
struct Changes {
    /// Each entry to change, its entry before and its file's stat data (in the same order).
    updates: Vec<Update>,
    olds: Vec<Option<(u32, Oid)>>,
    stats: Vec<Option<Stat>>,
    /// The blobs of the files read.
    blobs: Vec<Object>,
}

/// Makes the changes of the files `read` (a path, and its mode and blob, or none when it is
/// gone) to `entries`, which stay sorted by path.
fn apply<'a>(entries: &mut Vec<TreeEntry<'a>>, read: Vec<(&'a [u8], Read)>) -> Changes {
    let mut changes = Changes {
        updates: Vec::new(),
        olds: Vec::new(),
        stats: Vec::new(),
        blobs: Vec::new(),
    };
    let mut added: Vec<TreeEntry<'a>> = Vec::new();
    let mut gone: Vec<usize> = Vec::new();
    for (path, change) in read {
        let found = entries.binary_search_by(|entry| entry.0.cmp(path));
        match (change, found) {
            (Some((mode, blob, stat)), Ok(at)) => {
                let old = (entries[at].1, entries[at].2);
                if old != (mode, blob.oid) {
                    entries[at] = (path, mode, blob.oid);
                    changes
                        .updates
                        .push((path.to_vec(), Some((mode, blob.oid))));
                    changes.olds.push(Some(old));
                    changes.stats.push(stat);
                }
                changes.blobs.push(blob);
            }
            (Some((mode, blob, stat)), Err(_)) => {
                added.push((path, mode, blob.oid));
                changes
                    .updates
                    .push((path.to_vec(), Some((mode, blob.oid))));
                changes.olds.push(None);
                changes.stats.push(stat);
                changes.blobs.push(blob);
            }
            (None, Ok(at)) => {
                gone.push(at);
                changes.updates.push((path.to_vec(), None));
                changes.olds.push(Some((entries[at].1, entries[at].2)));
                changes.stats.push(None);
            }
            (None, Err(_)) => {}
        }
    }
    if !added.is_empty() || !gone.is_empty() {
        gone.sort_unstable();
        added.sort_unstable_by(|a, b| a.0.cmp(b.0));
        let kept = std::mem::take(entries)
            .into_iter()
            .enumerate()
            .filter(|(at, _)| gone.binary_search(at).is_err())
            .map(|(_, entry)| entry);
        *entries = merge_sorted(kept, added);
    }
    changes
}

/// Two lists of entries sorted by path, as one.
fn merge_sorted<'a>(
    left: impl Iterator<Item = TreeEntry<'a>>,
    right: Vec<TreeEntry<'a>>,
) -> Vec<TreeEntry<'a>> {
    let mut merged = Vec::new();
    let mut right = right.into_iter().peekable();
    for entry in left {
        while let Some(next) = right.next_if(|next| next.0 < entry.0) {
            merged.push(next);
        }
        merged.push(entry);
    }
    merged.extend(right);
    merged
}

/// Brings the private index to the new tree (the file `bytes`, read as `parsed`): in-process
/// when every update changes an entry already there (see [`index_file::rewrite`]), else by git,
/// removals first, then the new entries, by id (git reads no file; their stat data is
/// refreshed by the next `git status`).
fn update_index(
    job: &Job<'_>,
    bytes: &[u8],
    parsed: &index_file::Index,
    (updates, stats): (&[Update], &[Option<Stat>]),
    made: &HashMap<Vec<u8>, Made>,
) -> Result<(), String> {
    if let Some(written) = rewritten(bytes, parsed, (updates, stats), made) {
        return replace_index(job.index, &written);
    }
    let mut input = Vec::new();
    let zero = "0".repeat(40);
    for (path, _) in updates.iter().filter(|(_, value)| value.is_none()) {
        input.extend_from_slice(format!("0 {zero}\t").as_bytes());
        input.extend_from_slice(path);
        input.push(0);
    }
    for (path, value) in updates {
        if let Some((mode, oid)) = value {
            input.extend_from_slice(format!("{mode:o} {}\t", objects::hex(oid)).as_bytes());
            input.extend_from_slice(path);
            input.push(0);
        }
    }
    job.repo
        .git()
        .index(job.index)
        .args(["update-index", "-z", "--index-info"])
        .input(input)
        .output()
        .map(|_| ())
}

/// The private index with `updates` made in-process, when each changes an entry already there
/// and the file holds nothing git must decide; its cache tree given the trees `made`.
fn rewritten(
    bytes: &[u8],
    parsed: &index_file::Index,
    (updates, stats): (&[Update], &[Option<Stat>]),
    made: &HashMap<Vec<u8>, Made>,
) -> Option<Vec<u8>> {
    let changes = updates
        .iter()
        .zip(stats)
        .map(|((path, value), stat)| {
            let (mode, oid) = (*value)?;
            let found = parsed
                .entries
                .binary_search_by(|entry| entry.path.as_slice().cmp(path))
                .ok()?;
            Some(index_file::Change {
                at: parsed.entries[found].at,
                path: path.as_slice(),
                mode,
                oid,
                stat: *stat,
            })
        })
        .collect::<Option<Vec<index_file::Change<'_>>>>()?;
    index_file::rewrite(bytes, parsed, &changes, made).ok()
}

/// Replaces the private index by `bytes` as git does: its lock file written, then renamed into
/// its place (nobody else uses it: a lock left by a killed snapshot was removed under the
/// snapshot's own lock). The old index is removed first: ext4 writes out a file renamed over
/// another at once (a millisecond or two for an index of 10,000 files), and an index missing
/// after a kill between the two is seeded again by the next snapshot, as a first one is.
fn replace_index(index: &Path, bytes: &[u8]) -> Result<(), String> {
    let lock = index.with_extension("index.lock");
    let written = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&lock)
        .and_then(|mut file| std::io::Write::write_all(&mut file, bytes))
        .and_then(|()| match fs::remove_file(index) {
            Err(err) if err.kind() != std::io::ErrorKind::NotFound => Err(err),
            _ => Ok(()),
        })
        .and_then(|()| fs::rename(&lock, index));
    written.map_err(|err| {
        let _ = fs::remove_file(&lock);
        format!("failed to write `{}`: {err}", index.display())
    })
}

/// A changed path as git would add it: its mode and blob, or none when it is gone (or a
/// directory now, whose files are listed on their own); an inner error when git must decide.
fn read_file(top: &Path, path: &[u8]) -> Result<Result<Read, String>, String> {
    let full = top.join(path_of(path));
    if is_attributes(path) {
        return Ok(Err(format!(
            "`{}` may change what git stores",
            String::from_utf8_lossy(path)
        )));
    }
    // Under a symbolic link to a directory, a path is gone to git (it never follows one).
    let mut ancestor = path_of(path).parent();
    while let Some(dir) = ancestor.filter(|dir| !dir.as_os_str().is_empty()) {
        if fs::symlink_metadata(top.join(dir)).is_ok_and(|found| !found.is_dir()) {
            return Ok(Ok(None));
        }
        ancestor = dir.parent();
    }
    let metadata = match fs::symlink_metadata(&full) {
        Ok(metadata) => metadata,
        Err(err)
            if matches!(
                err.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
            ) =>
        {
            return Ok(Ok(None));
        }
        Err(err) => return Err(format!("failed to read `{}`: {err}", full.display())),
    };
    let kind = metadata.file_type();
    if kind.is_symlink() {
        let target = fs::read_link(&full)
            .map_err(|err| format!("failed to read `{}`: {err}", full.display()))?;
        let blob = Object::new("blob", target.as_os_str().as_bytes().to_vec());
        let after = fs::symlink_metadata(&full).ok();
        let stat = after.and_then(|after| index_file::stat_if_same(&metadata, &after));
        return Ok(Ok(Some((0o120000, blob, stat))));
    }
    if kind.is_file() {
        let read = || -> std::io::Result<(Vec<u8>, fs::Metadata)> {
            let mut file = fs::File::open(&full)?;
            let mut content = Vec::with_capacity(metadata.len() as usize);
            std::io::Read::read_to_end(&mut file, &mut content)?;
            Ok((content, file.metadata()?))
        };
        let (content, after) =
            read().map_err(|err| format!("failed to read `{}`: {err}", full.display()))?;
        let mode = if metadata.permissions().mode() & 0o100 != 0 {
            0o100755
        } else {
            0o100644
        };
        // Taken before the read, as `git add` takes it, and kept only when the file did not
        // change meanwhile: git trusts it as long as it is the file's.
        let stat = index_file::stat_if_same(&metadata, &after);
        return Ok(Ok(Some((mode, Object::new("blob", content), stat))));
    }
    if kind.is_dir() && !full.join(".git").exists() {
        // A file replaced by a directory: its files are listed on their own.
        return Ok(Ok(None));
    }
    Ok(Err(format!(
        "`{}` is neither a file, a link nor a plain directory",
        String::from_utf8_lossy(path)
    )))
}

/// Whether `path` is a `.gitattributes` file (attributes may filter or convert content).
fn is_attributes(path: &[u8]) -> bool {
    path == b".gitattributes" || path.ends_with(b"/.gitattributes")
}

/// Why the environment rules the fast path out, if it does: objects kept elsewhere, or
/// attributes from outside the tree.
fn environment_refuses(repo: &Repo) -> Option<String> {
    for variable in ["GIT_OBJECT_DIRECTORY", "GIT_ATTR_SOURCE"] {
        if std::env::var_os(variable).is_some() {
            return Some(format!("`{variable}` is set"));
        }
    }
    let mut attributes = vec![
        repo.common_dir.join("info").join("attributes"),
        Path::new("/etc/gitattributes").to_path_buf(),
    ];
    match std::env::var_os("XDG_CONFIG_HOME").filter(|dir| !dir.is_empty()) {
        Some(dir) => attributes.push(Path::new(&dir).join("git").join("attributes")),
        None => {
            if let Some(home) = std::env::var_os("HOME") {
                attributes.push(Path::new(&home).join(".config/git/attributes"));
            }
        }
    }
    attributes
        .into_iter()
        .find(|file| file.exists())
        .map(|file| format!("`{}` may change what git stores", file.display()))
}

/// The settings being read, or why the fast path does not apply.
pub(crate) type Settings = Result<JoinHandle<Result<Vec<u8>, String>>, &'static str>;

impl Snapshots {
    /// Starts reading the settings when the fast path may apply: not the first snapshot, no
    /// pending index, a commit wanted.
    pub(crate) fn fast_settings(
        &self,
        first: bool,
        last: Option<&(String, String)>,
        pending: &Path,
        options: &SnapshotOptions<'_>,
    ) -> Settings {
        if first || last.is_none() {
            Err("the first snapshot")
        } else if pending.exists() {
            Err("the private index is ahead of the ref")
        } else if !options.commit {
            Err("a tree only")
        } else {
            Ok(self.settings())
        }
    }

    /// The settings: kept from the last `git config` while every file it read and the
    /// environment are the same (see `settings_cache.rs`), else read by git and kept.
    fn settings(&self) -> JoinHandle<Result<Vec<u8>, String>> {
        let path = self.index.with_extension("settings");
        let key = settings_cache::key(&self.repo);
        if let Some(kept) = key
            .as_deref()
            .and_then(|key| settings_cache::load(&path, key))
        {
            return std::thread::spawn(move || Ok(kept));
        }
        let reading = read_settings(&self.repo);
        std::thread::spawn(move || {
            let output = reading
                .join()
                .unwrap_or_else(|_| Err("reading the settings panicked".to_owned()))?;
            if let Some(key) = key {
                settings_cache::save(&path, &key, &output);
            }
            Ok(output)
        })
    }

    /// Notes which path the last snapshot took, and why (`<id>.path`, beside the index), when
    /// it is not what the last one noted.
    fn note_path(&self, how: &str) {
        let path = self.index.with_extension("path");
        let text = format!("{how}\n");
        if fs::read(&path).is_ok_and(|noted| noted == text.as_bytes()) {
            return;
        }
        let _ = fs::write(path, text);
    }

    /// Notes the last snapshot's commit and tree beside the index (`<id>.last`), which spares
    /// the next snapshot a process; checked against the ref before it is trusted, so a torn one
    /// costs that process only. Written over in place, not truncated first: ext4 flushes a file
    /// truncated to nothing (or renamed over another) when it is closed.
    pub(crate) fn note_last(&self, commit: &str, tree: &str) {
        let text = format!("{commit} {tree}\n");
        let _ = fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .open(self.index.with_extension("last"))
            .and_then(|mut file| {
                std::io::Write::write_all(&mut file, text.as_bytes())?;
                if file.metadata()?.len() != text.len() as u64 {
                    file.set_len(text.len() as u64)?;
                }
                Ok(())
            });
    }

    /// The snapshot taken in-process when it applies (`settings` started, something to take,
    /// not cut short); none when the process path must take it.
    pub(crate) fn take_fast(
        &self,
        settings: Settings,
        last: Option<&(String, String)>,
        paths: &[Vec<u8>],
        cut: bool,
        options: &SnapshotOptions<'_>,
        left_out: &[LeftOut],
    ) -> Result<Option<Taken>, String> {
        let refused = match (settings, last) {
            (Err(why), _) => Some(why.to_owned()),
            (Ok(_), _)
                if cut
                    || options
                        .deadline
                        .is_some_and(|deadline| std::time::Instant::now() >= deadline) =>
            {
                Some("cut short by its deadline".to_owned())
            }
            (Ok(settings), Some(_)) => match settings.join() {
                Ok(Ok(output)) => settings_refuse(&output),
                Ok(Err(err)) => Some(err),
                Err(_) => Some("reading the settings panicked".to_owned()),
            },
            (Ok(_), None) => Some("the first snapshot".to_owned()),
        };
        if let Some(why) = refused {
            self.note_path(&format!("git: {why}"));
            return Ok(None);
        }
        let Some((last_commit, last_tree)) = last else {
            return Ok(None);
        };
        let job = Job {
            repo: &self.repo,
            index: &self.index,
            refname: &self.refname,
            last: (last_commit, last_tree),
            paths,
            message: options.message,
            date: options
                .date
                .unwrap_or_else(|| chrono::Utc::now().timestamp()),
        };
        let (commit, tree, created, numstat) = match take(&job)? {
            FastSnapshot::Taken {
                commit,
                tree,
                created,
                numstat,
            } => (commit, tree, created, numstat),
            FastSnapshot::Fallback(why) => {
                self.note_path(&format!("git: {why}"));
                return Ok(None);
            }
        };
        self.note_path("in-process");
        if created {
            self.note_last(&commit, &tree);
        }
        Ok(Some(Taken {
            commit,
            created,
            changed: numstat_records(&numstat),
            left_out: left_out.to_vec(),
            unfinished: false,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_that_change_what_git_stores_rule_the_fast_path_out() {
        assert_eq!(settings_refuse(b""), None);
        assert_eq!(
            settings_refuse(b"core.autocrlf\nfalse\0core.filemode\ntrue\0core.symlinks\0extensions.objectformat\nsha1\0extensions.refstorage\nreftable\0"),
            None
        );
        for refused in [
            &b"core.autocrlf\ntrue\0"[..],
            b"core.autocrlf\ninput\0",
            b"core.filemode\nfalse\0",
            b"core.symlinks\nno\0",
            b"extensions.objectformat\nsha256\0",
            b"extensions.compatobjectformat\nsha256\0",
            b"core.attributesfile\n~/.attributes\0",
            b"core.fsync\nloose-object\0",
            b"commit.gpgsign\0",
            b"i18n.commitencoding\nlatin-1\0",
            b"core.sharedrepository\ngroup\0",
            b"core.bigfilethreshold\n1k\0",
        ] {
            assert!(
                settings_refuse(refused).is_some(),
                "{}",
                String::from_utf8_lossy(refused)
            );
        }
    }
}
