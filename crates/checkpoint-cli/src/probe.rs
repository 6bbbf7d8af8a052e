//! The real world as validation sees it: files under the project root, and git.

use std::{
    collections::HashMap,
    fs,
    path::{Path, PathBuf},
    process::{Command, Stdio},
    sync::Mutex,
};

use checkpoint_core::resume::Probe;

use crate::inside;

/// Answers validation's questions from the filesystem and git.
pub(crate) struct FsProbe {
    root: PathBuf,
    /// The project's files; one outside it does not exist for the workflow.
    files: inside::Files,
    commits: Mutex<HashMap<String, Option<bool>>>,
}

impl FsProbe {
    pub(crate) fn new(project_root: &Path) -> Self {
        Self {
            root: project_root.to_owned(),
            files: inside::Files::new(project_root),
            commits: Mutex::new(HashMap::new()),
        }
    }
}

impl Probe for FsProbe {
    fn file_size(&self, path: &str) -> Option<u64> {
        let meta = self.files.metadata(path)?;
        Some(if meta.is_dir() { u64::MAX } else { meta.len() })
    }

    fn modified(&self, path: &str) -> Option<chrono::DateTime<chrono::Utc>> {
        let modified = self.files.metadata(path)?.modified().ok()?;
        Some(modified.into())
    }

    fn git_branch(&self) -> Option<String> {
        let head = git_text(&git_dir(&self.root)?.join("HEAD"))?;
        head.trim()
            .strip_prefix("ref: refs/heads/")
            .map(str::to_owned)
    }

    fn commit_exists(&self, sha: &str) -> Option<bool> {
        if !self.root.join(".git").exists() || !sha.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        let mut cache = self.commits.lock().ok()?;
        *cache.entry(sha.to_owned()).or_insert_with(|| {
            // `rev-parse --verify --quiet` exits 1 for a missing commit and 128 when git cannot
            // tell (not a repository).
            let status = Command::new("git")
                .args([
                    "rev-parse",
                    "--verify",
                    "--quiet",
                    &format!("{sha}^{{commit}}"),
                ])
                .current_dir(&self.root)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .ok()?;
            match status.code() {
                Some(0) => Some(true),
                Some(1) => Some(false),
                _ => None,
            }
        })
    }

    fn commits_exist(&self, shas: &[&str]) -> Vec<Option<bool>> {
        if shas.is_empty() {
            return Vec::new();
        }
        // Found in the object database: no git process. Anything else git confirms, in one go.
        let found = objects_exist(&self.root, shas);
        if found
            .as_ref()
            .is_some_and(|found| found.iter().all(|&found| found))
        {
            return vec![Some(true); shas.len()];
        }
        match shas {
            [sha] => vec![self.commit_exists(sha)],
            _ => batch_check(&self.root, shas).unwrap_or_else(|| vec![None; shas.len()]),
        }
    }

    fn worktree(&self) -> Option<String> {
        self.root
            .join(".git")
            .exists()
            .then(|| self.root.to_string_lossy().into_owned())
    }
}

/// Asks one `git cat-file --batch-check` whether each name is a commit; `None` where git cannot
/// tell (not a repository, an ambiguous short SHA, a name that is not hexadecimal).
fn batch_check(root: &Path, shas: &[&str]) -> Option<Vec<Option<bool>>> {
    use std::io::{BufRead, BufReader, Write};
    if !root.join(".git").exists() {
        return None;
    }
    let mut child = Command::new("git")
        .args(["cat-file", "--batch-check"])
        .current_dir(root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let input: String = shas
        .iter()
        .filter(|sha| sha.bytes().all(|b| b.is_ascii_hexdigit()))
        .map(|sha| format!("{sha}\n"))
        .collect();
    let mut stdin = child.stdin.take()?;
    // The input is small; git answers line by line, so write it all, then read.
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let lines: Vec<String> = BufReader::new(child.stdout.take()?)
        .lines()
        .map_while(Result::ok)
        .collect();
    let _ = writer.join();
    if !child.wait().ok()?.success() {
        return None;
    }
    let mut answers = lines.into_iter();
    Some(
        shas.iter()
            .map(|sha| {
                if !sha.bytes().all(|b| b.is_ascii_hexdigit()) {
                    return None;
                }
                let line = answers.next()?;
                if line.ends_with(" missing") {
                    Some(false)
                } else if line.ends_with(" ambiguous") {
                    None
                } else {
                    Some(line.split(' ').nth(1) == Some("commit"))
                }
            })
            .collect(),
    )
}

/// The repository's common git directory (shared by all its worktrees), canonicalized.
fn common_dir(root: &Path) -> Option<PathBuf> {
    let git_dir = git_dir(root)?;
    let common = match git_text(&git_dir.join("commondir")) {
        Some(text) => {
            let path = PathBuf::from(text.trim());
            if path.is_absolute() {
                path
            } else {
                git_dir.join(path)
            }
        }
        None => git_dir,
    };
    Some(fs::canonicalize(&common).unwrap_or(common))
}

/// Looks commits up in the object database without running git: loose objects by file name,
/// packed ones by binary search in the pack indexes (version 2, SHA-1). `None` when this
/// repository needs git to answer (alternates, another hash, an unreadable index).
pub(crate) fn objects_exist(root: &Path, shas: &[&str]) -> Option<Vec<bool>> {
    let objects = common_dir(root)?.join("objects");
    if objects.join("info").join("alternates").exists() {
        return None;
    }
    let mut indexes = Vec::new();
    if let Ok(entries) = fs::read_dir(objects.join("pack")) {
        for entry in entries.flatten() {
            if entry.path().extension().is_some_and(|ext| ext == "idx") {
                let bytes = checkpoint_core::read_foreign(&entry.path(), MAX_INDEX_BYTES)
                    .ok()
                    .flatten()?;
                let valid = bytes.len() >= 8 + 256 * 4
                    && bytes[..8] == [0xff, b't', b'O', b'c', 0, 0, 0, 2];
                if !valid {
                    return None;
                }
                indexes.push(bytes);
            }
        }
    }
    shas.iter()
        .map(|sha| {
            let sha = sha.to_ascii_lowercase();
            if sha.len() < 4 || sha.len() > 40 || !sha.bytes().all(|b| b.is_ascii_hexdigit()) {
                return None;
            }
            Some(
                loose_exists(&objects, &sha)
                    || indexes.iter().any(|index| packed_exists(index, &sha)),
            )
        })
        .collect()
}

fn loose_exists(objects: &Path, sha: &str) -> bool {
    let dir = objects.join(&sha[..2]);
    if sha.len() == 40 {
        return dir.join(&sha[2..]).is_file();
    }
    fs::read_dir(dir).is_ok_and(|entries| {
        entries.flatten().any(|entry| {
            entry
                .file_name()
                .to_str()
                .is_some_and(|name| name.starts_with(&sha[2..]))
        })
    })
}

/// Binary search of a version 2 pack index for an object name starting with `sha`.
fn packed_exists(index: &[u8], sha: &str) -> bool {
    let Some(prefix) = (0..sha.len() / 2)
        .map(|i| u8::from_str_radix(&sha[2 * i..2 * i + 2], 16).ok())
        .collect::<Option<Vec<u8>>>()
    else {
        return false;
    };
    let odd = (sha.len() % 2 == 1)
        .then(|| u8::from_str_radix(&sha[sha.len() - 1..], 16).unwrap_or(0) << 4);
    let fanout = |i: usize| -> usize {
        let at = 8 + i * 4;
        index
            .get(at..at + 4)
            .map_or(0, |b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]) as usize)
    };
    let first = usize::from(
        sha.get(..2)
            .and_then(|byte| u8::from_str_radix(byte, 16).ok())
            .unwrap_or(0),
    );
    let (mut lo, mut hi) = (
        if first == 0 { 0 } else { fanout(first - 1) },
        fanout(first),
    );
    let name = |i: usize| index.get(8 + 256 * 4 + i * 20..8 + 256 * 4 + i * 20 + 20);
    // Find the first name not below the prefix (with its odd nibble), then check it matches.
    let key: Vec<u8> = prefix.iter().copied().chain(odd).collect();
    while lo < hi {
        let mid = (lo + hi) / 2;
        match name(mid) {
            Some(candidate) if candidate < key.as_slice() => lo = mid + 1,
            Some(_) => hi = mid,
            None => return false,
        }
    }
    name(lo).is_some_and(|candidate| {
        candidate.starts_with(&prefix)
            && odd.is_none_or(|nibble| {
                candidate
                    .get(prefix.len())
                    .is_some_and(|b| b & 0xf0 == nibble)
            })
    })
}

/// The largest of git's small files (`HEAD`, `commondir`, a `.git` file) read, in bytes.
const MAX_GIT_FILE_BYTES: u64 = 64 * 1024;

/// The largest pack index read; a larger one is left to git.
const MAX_INDEX_BYTES: u64 = 256 * 1024 * 1024;

/// The text of one of git's small files, read without blocking (a FIFO in `.git` never hangs
/// a hook) and bounded; `None` when it is missing or unreadable.
fn git_text(path: &Path) -> Option<String> {
    let bytes = checkpoint_core::read_foreign(path, MAX_GIT_FILE_BYTES).ok()??;
    String::from_utf8(bytes).ok()
}

/// The git directory of a worktree: `.git` itself, or where a `.git` file points.
pub(crate) fn git_dir(root: &Path) -> Option<PathBuf> {
    let dot_git = root.join(".git");
    if dot_git.is_dir() {
        return Some(dot_git);
    }
    let text = git_text(&dot_git)?;
    let target = PathBuf::from(text.trim().strip_prefix("gitdir:")?.trim());
    Some(if target.is_absolute() {
        target
    } else {
        root.join(target)
    })
}

/// The top-level directories of every worktree of the repository `root` belongs to, `root`
/// first, read from git's files without running git.
pub(crate) fn worktree_roots(root: &Path) -> Vec<PathBuf> {
    let mut roots = vec![root.to_owned()];
    let Some(common) = common_dir(root) else {
        return roots;
    };
    if common.file_name().is_some_and(|name| name == ".git")
        && let Some(main) = common.parent()
    {
        roots.push(main.to_owned());
    }
    if let Ok(entries) = fs::read_dir(common.join("worktrees")) {
        for entry in entries.flatten() {
            if let Some(text) = git_text(&entry.path().join("gitdir"))
                && let Some(parent) = Path::new(text.trim()).parent()
            {
                roots.push(parent.to_owned());
            }
        }
    }
    let mut seen = Vec::new();
    roots.retain(|path| {
        let key = fs::canonicalize(path).unwrap_or_else(|_| path.clone());
        if seen.contains(&key) {
            false
        } else {
            seen.push(key);
            true
        }
    });
    roots
}

#[cfg(test)]
mod tests {
    use super::*;

    fn git(root: &Path, args: &[&str]) -> String {
        let output = Command::new("git")
            .args(args)
            .current_dir(root)
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.com")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.com")
            .output()
            .unwrap();
        assert!(output.status.success(), "git {args:?}");
        String::from_utf8(output.stdout).unwrap().trim().to_owned()
    }

    #[test]
    fn objects_are_found_loose_and_packed_without_git() {
        let dir = tempfile_dir();
        let root = dir.as_path();
        git(root, &["init", "-q"]);
        git(root, &["commit", "-q", "--allow-empty", "-m", "one"]);
        let first = git(root, &["rev-parse", "HEAD"]);
        git(root, &["gc", "-q"]);
        git(root, &["commit", "-q", "--allow-empty", "-m", "two"]);
        let second = git(root, &["rev-parse", "HEAD"]);
        assert!(
            !root
                .join(".git/objects")
                .join(&first[..2])
                .join(&first[2..])
                .exists(),
            "the first commit is packed"
        );
        let missing = "0123456789abcdef0123456789abcdef01234567";
        let shas = [
            first.as_str(),
            &first[..7],
            &first[..9],
            second.as_str(),
            &second[..7],
            missing,
            &missing[..7],
        ];
        assert_eq!(
            objects_exist(root, &shas),
            Some(vec![true, true, true, true, true, false, false])
        );
        let probe = FsProbe::new(root);
        assert_eq!(
            probe.commits_exist(&shas),
            vec![
                Some(true),
                Some(true),
                Some(true),
                Some(true),
                Some(true),
                Some(false),
                Some(false)
            ]
        );
        let _ = fs::remove_dir_all(root);
    }

    fn tempfile_dir() -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "checkpoint-probe-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }
}
