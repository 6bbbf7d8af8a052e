//! The settings the snapshot's fast path reads (`git config`), kept beside the private index
//! with a key made of every file git reads them from (their whole content, or their absence)
//! and the environment that names or adds to them (`GIT_*`, `HOME`, `XDG_CONFIG_HOME`): while
//! the key is the same, no `git config` runs. A file that includes others (`[include]`,
//! `[includeIf]`) is never cached: git decides each time.

use std::{
    ffi::OsString,
    fs,
    os::unix::ffi::OsStrExt,
    path::{Path, PathBuf},
};

use sha1::{Digest, Sha1};

use crate::snapshot::plumbing::Repo;

/// The first line of the file, before the key.
const FORMAT: &str = "checkpoint-settings-1";

/// The key of the settings as they are now; none when they cannot be cached (a file that
/// includes others, or one that cannot be read).
pub(crate) fn key(repo: &Repo) -> Option<String> {
    let mut hasher = Sha1::new();
    let mut environment: Vec<(OsString, OsString)> = std::env::vars_os()
        .filter(|(name, _)| {
            let name = name.as_bytes();
            name.starts_with(b"GIT_") || name == b"HOME" || name == b"XDG_CONFIG_HOME"
        })
        .collect();
    environment.sort();
    for (name, value) in &environment {
        hasher.update(name.as_bytes());
        hasher.update(b"=");
        hasher.update(value.as_bytes());
        hasher.update(b"\0");
    }
    for file in files(repo) {
        hasher.update(file.as_os_str().as_bytes());
        hasher.update(b"\0");
        match fs::read(&file) {
            Ok(content) => {
                if includes(&content) {
                    return None;
                }
                hasher.update(content.len().to_string().as_bytes());
                hasher.update(b"\0");
                hasher.update(&content);
            }
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => hasher.update(b"absent\0"),
            Err(_) => return None,
        }
    }
    Some(
        hasher
            .finalize()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect(),
    )
}

/// The `git config` output kept at `path` for `key`, if it is that key's.
pub(crate) fn load(path: &Path, key: &str) -> Option<Vec<u8>> {
    let bytes = fs::read(path).ok()?;
    let rest = bytes.strip_prefix(format!("{FORMAT} {key}\n").as_bytes())?;
    Some(rest.to_vec())
}

/// Keeps `output` for `key` at `path`; an error only costs the next snapshot a `git config`.
pub(crate) fn save(path: &Path, key: &str, output: &[u8]) {
    let mut bytes = format!("{FORMAT} {key}\n").into_bytes();
    bytes.extend_from_slice(output);
    let temp = path.with_extension("settings.new");
    if fs::write(&temp, &bytes).is_ok() {
        let _ = fs::rename(&temp, path);
    }
}

/// Whether a configuration file may include another (git reads an `[include]` or `[includeIf
/// …]` section's `path` too, which this does not follow): the word anywhere, whatever its case.
fn includes(content: &[u8]) -> bool {
    content
        .to_ascii_lowercase()
        .windows(7)
        .any(|w| w == b"include")
}

/// Every file git may read settings from for `repo`: the system's (`GIT_CONFIG_SYSTEM`, or
/// `/etc/gitconfig` and `etc/gitconfig` beside the `bin` of the `git` on `PATH`, unless
/// `GIT_CONFIG_NOSYSTEM`), the person's (`GIT_CONFIG_GLOBAL`, or the XDG one and
/// `~/.gitconfig`), the repository's and the worktree's.
fn files(repo: &Repo) -> Vec<PathBuf> {
    let var = |name: &str| std::env::var_os(name).filter(|value| !value.is_empty());
    let mut files = Vec::new();
    if var("GIT_CONFIG_NOSYSTEM").is_none() {
        match var("GIT_CONFIG_SYSTEM") {
            Some(file) => files.push(PathBuf::from(file)),
            None => {
                files.push(PathBuf::from("/etc/gitconfig"));
                if let Some(git) = git_on_path() {
                    for binary in [git.clone(), fs::canonicalize(&git).unwrap_or(git)] {
                        if let Some(prefix) = binary.parent().and_then(Path::parent) {
                            files.push(prefix.join("etc/gitconfig"));
                        }
                    }
                }
            }
        }
    }
    match var("GIT_CONFIG_GLOBAL") {
        Some(file) => files.push(PathBuf::from(file)),
        None => {
            let home = var("HOME").map(PathBuf::from);
            match var("XDG_CONFIG_HOME") {
                Some(dir) => files.push(Path::new(&dir).join("git/config")),
                None => files.extend(home.as_ref().map(|home| home.join(".config/git/config"))),
            }
            files.extend(home.map(|home| home.join(".gitconfig")));
        }
    }
    files.push(repo.common_dir.join("config"));
    files.push(repo.git_dir.join("config.worktree"));
    files
}

/// The `git` that `PATH` gives.
fn git_on_path() -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join("git"))
        .find(|candidate| {
            use std::os::unix::fs::PermissionsExt;
            fs::metadata(candidate)
                .is_ok_and(|found| found.is_file() && found.permissions().mode() & 0o111 != 0)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_include_of_any_kind_is_never_cached() {
        assert!(includes(b"[core]\n\t[Include]\n\tpath = x\n"));
        assert!(includes(b"[ INCLUDE ]\n\tpath = x\n"));
        assert!(includes(b"[includeIf \"gitdir:~/w/\"]\n\tpath = y\n"));
        assert!(!includes(b"[core]\n\tautocrlf = false\n"));
    }
}
