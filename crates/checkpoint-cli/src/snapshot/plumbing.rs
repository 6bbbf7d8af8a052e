//! The git processes of snapshots: the repository's directories, and `git` run with the
//! snapshot's private index and identity, its output as bytes (paths are not UTF-8 on every
//! system).

use std::{
    ffi::OsStr,
    io::Write,
    os::unix::ffi::OsStrExt,
    path::{Path, PathBuf},
    process::{Command, Output, Stdio},
};

/// The identity of snapshot commits, which no person makes and no branch holds.
const IDENTITY: [(&str, &str); 4] = [
    ("GIT_AUTHOR_NAME", "checkpoint"),
    ("GIT_AUTHOR_EMAIL", "checkpoint@localhost"),
    ("GIT_COMMITTER_NAME", "checkpoint"),
    ("GIT_COMMITTER_EMAIL", "checkpoint@localhost"),
];

/// The settings of git with the private index (see [`Git::index`]).
const PRIVATE_INDEX: [(&str, &str); 3] = [
    ("core.untrackedCache", "true"),
    ("status.showUntrackedFiles", "all"),
    ("index.skipHash", "true"),
];

/// A git repository's working tree, as snapshots need it.
#[derive(Debug, Clone)]
pub(crate) struct Repo {
    /// The top directory of the working tree.
    pub(crate) top: PathBuf,
    /// This working tree's own git directory (a linked worktree's is under the common one).
    pub(crate) git_dir: PathBuf,
    /// The directory shared by every working tree (objects, refs).
    pub(crate) common_dir: PathBuf,
}

impl Repo {
    /// The repository around `dir`; none when `dir` is in no git working tree. Found without a
    /// process where the layout is the usual one (`.git` a directory, or a linked worktree's
    /// `gitdir:` file), else by `git rev-parse`.
    pub(crate) fn find(dir: &Path) -> Result<Option<Self>, String> {
        if std::env::var_os(crate::env::GIT_DIR).is_none()
            && std::env::var_os(crate::env::GIT_WORK_TREE).is_none()
            && let Some(found) = Self::find_in_process(dir)
        {
            return Ok(found);
        }
        let output = Git::new(dir)
            .args([
                "rev-parse",
                "--show-toplevel",
                "--absolute-git-dir",
                "--git-common-dir",
            ])
            .run()?;
        if !output.status.success() {
            return Ok(None);
        }
        let text = String::from_utf8_lossy(&output.stdout);
        let mut lines = text.lines();
        let (Some(top), Some(git_dir), Some(common)) = (lines.next(), lines.next(), lines.next())
        else {
            return Err(format!(
                "`{}` is not in a git working tree: snapshots of the files need git",
                dir.display()
            ));
        };
        let git_dir = PathBuf::from(git_dir);
        let common_dir = if Path::new(common).is_absolute() {
            PathBuf::from(common)
        } else {
            dir.join(common)
        };
        Ok(Some(Self {
            top: PathBuf::from(top),
            common_dir: std::fs::canonicalize(&common_dir).unwrap_or(common_dir),
            git_dir,
        }))
    }

    /// The usual layouts, read without git: `Some(None)` when the nearest `.git` is no
    /// repository (git would refuse it too); `None` when git must decide.
    fn find_in_process(dir: &Path) -> Option<Option<Self>> {
        let dir = std::fs::canonicalize(dir).ok()?;
        let top = dir
            .ancestors()
            .find(|candidate| candidate.join(".git").exists())?;
        let dot_git = top.join(".git");
        let git_dir = if dot_git.is_dir() {
            dot_git
        } else {
            let text = std::fs::read_to_string(&dot_git).ok()?;
            let target = text
                .strip_prefix("gitdir: ")?
                .trim_end_matches(['\n', '\r']);
            std::fs::canonicalize(top.join(target)).ok()?
        };
        if !git_dir.join("HEAD").is_file() {
            return Some(None);
        }
        let common_dir = match std::fs::read_to_string(git_dir.join("commondir")) {
            Ok(text) => {
                std::fs::canonicalize(git_dir.join(text.trim_end_matches(['\n', '\r']))).ok()?
            }
            Err(_) => git_dir.clone(),
        };
        Some(Some(Self {
            top: top.to_path_buf(),
            git_dir,
            common_dir,
        }))
    }

    /// Whether this is a linked worktree (its git directory is not the common one).
    pub(crate) fn is_linked(&self) -> bool {
        let own = std::fs::canonicalize(&self.git_dir).unwrap_or_else(|_| self.git_dir.clone());
        own != self.common_dir
    }

    /// Moves `refname` from `old` (empty: it must not exist) to `new`. A loose ref is written
    /// in-process as git writes it (a lock file renamed over it); git does it when the ref is
    /// packed, the repository keeps its refs in a reftable, or the lock is taken.
    pub(crate) fn update_ref(&self, refname: &str, new: &str, old: &str) -> Result<(), String> {
        let path = self.common_dir.join(refname);
        let current = std::fs::read_to_string(&path).ok();
        let loose_matches = match &current {
            Some(current) => current.trim() == old && !old.is_empty(),
            None => old.is_empty(),
        };
        if loose_matches
            && !self.common_dir.join("reftable").exists()
            && self.write_loose_ref(&path, new).is_ok()
        {
            return Ok(());
        }
        self.git()
            .args(["update-ref", "-m", "checkpoint snapshot", refname, new, old])
            .output()
            .map(|_| ())
    }

    /// Writes a loose ref through its lock file; an error leaves the ref as it was.
    fn write_loose_ref(&self, path: &Path, value: &str) -> std::io::Result<()> {
        let parent = path.parent().ok_or(std::io::ErrorKind::InvalidInput)?;
        std::fs::create_dir_all(parent)?;
        let mut lock_name = path.as_os_str().to_owned();
        lock_name.push(".lock");
        let lock = PathBuf::from(lock_name);
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&lock)?;
        let written = file
            .write_all(format!("{value}\n").as_bytes())
            .and_then(|()| std::fs::rename(&lock, path));
        if written.is_err() {
            let _ = std::fs::remove_file(&lock);
        }
        written
    }

    /// A git command in the top directory.
    pub(crate) fn git(&self) -> Git {
        Git::new(&self.top)
    }

    /// The `git diff-tree -r -z --numstat --no-renames` records from `from` to `to` (commits or
    /// trees): the lines each file gained and lost.
    pub(crate) fn numstat(&self, from: &str, to: &str) -> Result<Vec<u8>, String> {
        self.git()
            .args([
                "diff-tree",
                "-r",
                "-z",
                "--numstat",
                "--no-renames",
                from,
                to,
            ])
            .output()
    }
}

/// One `git` command being built.
pub(crate) struct Git {
    command: Command,
    name: String,
    input: Option<Vec<u8>>,
}

impl Git {
    fn new(dir: &Path) -> Self {
        let mut command = Command::new("git");
        command
            .current_dir(dir)
            // Snapshots never wait for a person, and never paginate.
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("GIT_OPTIONAL_LOCKS", "0")
            .env_remove("GIT_INDEX_FILE");
        Self {
            command,
            name: String::new(),
            input: None,
        }
    }

    pub(crate) fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        for arg in args {
            if self.name.is_empty() {
                self.name = arg.as_ref().to_string_lossy().into_owned();
            }
            self.command.arg(arg);
        }
        self
    }

    /// Runs with `index` as the index file instead of the repository's, with the settings that
    /// make it cheap: git's untracked cache kept in it (for `--untracked-files=all`), and no
    /// checksum over the whole file on each write. Given as `GIT_CONFIG_*` variables, unless
    /// the caller's environment already uses them (then git's defaults: slower, as correct).
    pub(crate) fn index(mut self, index: &Path) -> Self {
        self.command.env("GIT_INDEX_FILE", index);
        if std::env::var_os("GIT_CONFIG_COUNT").is_none() {
            self.command
                .env("GIT_CONFIG_COUNT", PRIVATE_INDEX.len().to_string());
            for (i, (key, value)) in PRIVATE_INDEX.iter().enumerate() {
                self.command
                    .env(format!("GIT_CONFIG_KEY_{i}"), key)
                    .env(format!("GIT_CONFIG_VALUE_{i}"), value);
            }
        }
        self
    }

    /// Lets git write the index when it only refreshed it (its stat cache), which
    /// `GIT_OPTIONAL_LOCKS=0` forbids: for the private index, which nobody else uses.
    pub(crate) fn writes_index(mut self) -> Self {
        self.command.env("GIT_OPTIONAL_LOCKS", "1");
        self
    }

    /// Commits as `checkpoint`.
    pub(crate) fn identity(mut self) -> Self {
        self.command.envs(IDENTITY);
        self
    }

    /// Dates the commit at `seconds` since the epoch (the journal's clock, so that a snapshot
    /// is found by the time of its entry); git's clock when none.
    pub(crate) fn date(mut self, seconds: Option<i64>) -> Self {
        if let Some(seconds) = seconds {
            let date = format!("@{seconds} +0000");
            self.command
                .env("GIT_AUTHOR_DATE", &date)
                .env("GIT_COMMITTER_DATE", &date);
        }
        self
    }

    /// Gives `input` on stdin.
    pub(crate) fn input(mut self, input: Vec<u8>) -> Self {
        self.input = Some(input);
        self
    }

    /// The stdout of the command, which must succeed.
    pub(crate) fn output(self) -> Result<Vec<u8>, String> {
        let name = self.name.clone();
        let output = self.run()?;
        if output.status.success() {
            Ok(output.stdout)
        } else {
            Err(format!(
                "`git {name}` failed: {}",
                String::from_utf8_lossy(&output.stderr).trim()
            ))
        }
    }

    /// The stdout of the command, trimmed, as text.
    pub(crate) fn text(self) -> Result<String, String> {
        self.output()
            .map(|bytes| String::from_utf8_lossy(&bytes).trim().to_owned())
    }

    /// The whole output, whatever the exit status.
    pub(crate) fn run(mut self) -> Result<Output, String> {
        let name = self.name.clone();
        let failed = |err: std::io::Error| format!("failed to run `git {name}`: {err}");
        self.command.stdout(Stdio::piped()).stderr(Stdio::piped());
        let Some(input) = self.input.take() else {
            return self.command.stdin(Stdio::null()).output().map_err(failed);
        };
        let mut child = self.command.stdin(Stdio::piped()).spawn().map_err(failed)?;
        let mut stdin = child.stdin.take().expect("stdin is piped");
        // Written from a thread: git may fill its stdout before it has read all its input.
        let writer = std::thread::spawn(move || stdin.write_all(&input));
        let output = child.wait_with_output().map_err(failed)?;
        let _ = writer.join();
        Ok(output)
    }
}

/// NUL-separated records, the empty ones left out.
pub(crate) fn records(bytes: &[u8]) -> impl Iterator<Item = &[u8]> {
    bytes
        .split(|byte| *byte == 0)
        .filter(|record| !record.is_empty())
}

/// A path as git prints it with `-z`, as a path.
pub(crate) fn path_of(bytes: &[u8]) -> &Path {
    Path::new(OsStr::from_bytes(bytes))
}

/// A path for people and the journal (not UTF-8 bytes shown as `\xNN`).
pub(crate) fn display(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(text) => text.to_owned(),
        Err(_) => bytes.escape_ascii().to_string(),
    }
}
