//! The real world as validation sees it: files under the project root, and git.

use std::{
    collections::HashMap,
    fs,
    path::{Path, PathBuf},
    process::{Command, Stdio},
    sync::Mutex,
};

use checkpoint_core::resume::Probe;

/// Answers validation's questions from the filesystem and git.
pub(crate) struct FsProbe {
    root: PathBuf,
    commits: Mutex<HashMap<String, Option<bool>>>,
}

impl FsProbe {
    pub(crate) fn new(project_root: &Path) -> Self {
        Self {
            root: project_root.to_owned(),
            commits: Mutex::new(HashMap::new()),
        }
    }
}

impl Probe for FsProbe {
    fn file_size(&self, path: &str) -> Option<u64> {
        let meta = fs::metadata(self.root.join(path)).ok()?;
        Some(if meta.is_dir() { u64::MAX } else { meta.len() })
    }

    fn git_branch(&self) -> Option<String> {
        let head = fs::read_to_string(git_dir(&self.root)?.join("HEAD")).ok()?;
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
        match shas {
            [] => Vec::new(),
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

/// The git directory of a worktree: `.git` itself, or where a `.git` file points.
pub(crate) fn git_dir(root: &Path) -> Option<PathBuf> {
    let dot_git = root.join(".git");
    if dot_git.is_dir() {
        return Some(dot_git);
    }
    let text = fs::read_to_string(&dot_git).ok()?;
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
    let Some(git_dir) = git_dir(root) else {
        return roots;
    };
    let common = match fs::read_to_string(git_dir.join("commondir")) {
        Ok(text) => {
            let path = PathBuf::from(text.trim());
            if path.is_absolute() {
                path
            } else {
                git_dir.join(path)
            }
        }
        Err(_) => git_dir,
    };
    let common = fs::canonicalize(&common).unwrap_or(common);
    if common.file_name().is_some_and(|name| name == ".git")
        && let Some(main) = common.parent()
    {
        roots.push(main.to_owned());
    }
    if let Ok(entries) = fs::read_dir(common.join("worktrees")) {
        for entry in entries.flatten() {
            if let Ok(text) = fs::read_to_string(entry.path().join("gitdir"))
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
