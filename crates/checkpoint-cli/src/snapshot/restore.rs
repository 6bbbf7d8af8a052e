//! Putting files back as a snapshot kept them: each file's content and mode, created files
//! removed, deleted files back, symbolic links as links; each file replaced by a rename, so that
//! a kill leaves every file old or new, never torn. Paths a snapshot never holds (the store,
//! secret-looking names, files left out, submodules) are never touched.

use std::{
    collections::{BTreeSet, HashMap},
    fs,
    io::{BufRead, BufReader, Read, Write},
    os::unix::fs::{PermissionsExt, symlink},
    path::{Path, PathBuf},
    process::{Command, Stdio},
};

use crate::snapshot::{
    engine::Snapshots,
    plumbing::{display, path_of},
};

/// A submodule's mode in a tree: a snapshot never changes one.
const GITLINK: &str = "160000";

/// What a restore does to one path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Action {
    /// The file comes back.
    Create,
    /// Its content or mode changes.
    Modify,
    /// It is removed.
    Delete,
}

impl Action {
    /// Its word in human and JSON output.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Create => "create",
            Self::Modify => "modify",
            Self::Delete => "delete",
        }
    }
}

/// One path a restore changes.
#[derive(Debug, Clone)]
pub(crate) struct Step {
    /// The path, relative to the top directory, as bytes.
    pub(crate) path: Vec<u8>,
    pub(crate) action: Action,
    /// The mode and blob it gets (none for a removal).
    new: Option<(String, String)>,
}

impl Snapshots {
    /// What putting back `to` changes in a tree that is `from` (commits or trees), limited to
    /// `paths` (relative to the top directory; all when empty), leaving out `skip`.
    pub(crate) fn restore_plan(
        &self,
        from: &str,
        to: &str,
        paths: &[PathBuf],
        store: &Path,
        skip: &BTreeSet<Vec<u8>>,
    ) -> Result<Vec<Step>, String> {
        let store = self.store_prefix(store);
        let mut steps = Vec::new();
        for change in self.raw_changes(from, to, paths)? {
            if change.old_mode == GITLINK
                || change.new_mode == GITLINK
                || skip.contains(&change.path)
                || self.excluded_by_name(&store, &change.path)
            {
                continue;
            }
            let action = match change.status.as_str() {
                "A" => Action::Create,
                "D" => Action::Delete,
                _ => Action::Modify,
            };
            steps.push(Step {
                path: change.path,
                action,
                new: (action != Action::Delete).then_some((change.new_mode, change.new_blob)),
            });
        }
        Ok(steps)
    }

    /// Applies `steps`: removals first (deepest first, then the directories they emptied), then
    /// every file written beside its place and renamed over it. Returns the paths it could not
    /// change, with why.
    pub(crate) fn restore(&self, steps: &[Step]) -> Result<Vec<(String, String)>, String> {
        let top = &self.repo.top;
        let mut failed = Vec::new();
        let mut removed_dirs = BTreeSet::new();
        // A path that changes kind (a file becoming a link, or a mode) is rewritten in place;
        // one that stops existing goes first, so a directory can become a file.
        let mut removals: Vec<&Step> = steps
            .iter()
            .filter(|step| step.action == Action::Delete)
            .collect();
        removals.sort_by(|a, b| b.path.cmp(&a.path));
        for step in removals {
            let full = top.join(path_of(&step.path));
            match fs::remove_file(&full) {
                Ok(()) => {}
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
                Err(err) => failed.push((display(&step.path), err.to_string())),
            }
            let mut dir = full.parent();
            while let Some(parent) = dir.filter(|parent| *parent != top.as_path()) {
                if fs::remove_dir(parent).is_err() {
                    break;
                }
                removed_dirs.insert(parent.to_path_buf());
                dir = parent.parent();
            }
        }
        let writes: Vec<&Step> = steps
            .iter()
            .filter(|step| step.action != Action::Delete)
            .collect();
        let blobs = self.blobs(writes.iter().filter_map(|step| step.new.as_ref()))?;
        for step in writes {
            let Some((mode, blob)) = &step.new else {
                continue;
            };
            let content = blobs.get(blob).map_or(&[][..], Vec::as_slice);
            if let Err(err) = write_one(&top.join(path_of(&step.path)), mode, content) {
                failed.push((display(&step.path), err));
            }
        }
        Ok(failed)
    }

    /// The contents of `blobs`, from one `git cat-file --batch`.
    fn blobs<'a>(
        &self,
        blobs: impl Iterator<Item = &'a (String, String)>,
    ) -> Result<HashMap<String, Vec<u8>>, String> {
        let wanted: BTreeSet<&str> = blobs.map(|(_, blob)| blob.as_str()).collect();
        let mut contents = HashMap::new();
        if wanted.is_empty() {
            return Ok(contents);
        }
        let failed = |err: std::io::Error| format!("failed to run `git cat-file`: {err}");
        let mut child = Command::new("git")
            .args(["cat-file", "--batch"])
            .current_dir(&self.repo.top)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(failed)?;
        let mut input = String::new();
        for blob in &wanted {
            input.push_str(blob);
            input.push('\n');
        }
        let mut stdin = child.stdin.take().expect("stdin is piped");
        let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
        let mut reader = BufReader::new(child.stdout.take().expect("stdout is piped"));
        for _ in 0..wanted.len() {
            let mut header = String::new();
            reader.read_line(&mut header).map_err(failed)?;
            let parts: Vec<&str> = header.split_whitespace().collect();
            let [sha, _, size] = parts[..] else {
                return Err(format!("a snapshot's file is missing: `{}`", header.trim()));
            };
            let size: usize = size.parse().map_err(|_| "bad `git cat-file` output")?;
            let mut content = vec![0; size + 1];
            reader.read_exact(&mut content).map_err(failed)?;
            content.pop();
            contents.insert(sha.to_owned(), content);
        }
        let _ = writer.join();
        let _ = child.wait();
        Ok(contents)
    }
}

/// Writes one file (or link) beside `full`, then renames it over `full`.
fn write_one(full: &Path, mode: &str, content: &[u8]) -> Result<(), String> {
    let parent = full.parent().ok_or("no parent directory")?;
    fs::create_dir_all(parent).map_err(|err| err.to_string())?;
    if fs::symlink_metadata(full).is_ok_and(|metadata| metadata.is_dir()) {
        // A directory the removals could not empty (it holds ignored or left-out files).
        fs::remove_dir(full).map_err(|_| {
            "a directory with files no snapshot holds is in its place; move them, then undo again"
                .to_owned()
        })?;
    }
    let name = full
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temp = parent.join(format!(".{name}.checkpoint-{}", std::process::id()));
    let _ = fs::remove_file(&temp);
    if mode == "120000" {
        symlink(path_of(content), &temp).map_err(|err| err.to_string())?;
    } else {
        let mut file = fs::File::create(&temp).map_err(|err| err.to_string())?;
        file.write_all(content).map_err(|err| {
            let _ = fs::remove_file(&temp);
            err.to_string()
        })?;
        let bits = if mode == "100755" { 0o755 } else { 0o644 };
        file.set_permissions(fs::Permissions::from_mode(bits))
            .map_err(|err| err.to_string())?;
    }
    fs::rename(&temp, full).map_err(|err| {
        let _ = fs::remove_file(&temp);
        err.to_string()
    })
}
