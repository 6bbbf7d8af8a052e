//! A git remote for the sync and runner tests: a bare repository, reached by its path or
//! through `git daemon` on 127.0.0.1, and one that never answers.

use std::{
    net::{TcpListener, TcpStream},
    path::PathBuf,
    process::{Child, Command, Stdio},
    thread,
    time::{Duration, Instant},
};

use assert_fs::TempDir;

use crate::support::{TestEnv, git};

/// A remote: a bare repository, reached by its path or through `git daemon`.
pub struct Remote {
    dir: TempDir,
    pub url: String,
    daemon: Option<Child>,
}

impl Remote {
    /// A bare repository reached by its path.
    pub fn bare() -> Self {
        let dir = TempDir::new().unwrap();
        git(dir.path(), &["init", "--quiet", "--bare", "remote.git"]);
        let url = dir.path().join("remote.git").display().to_string();
        Self {
            dir,
            url,
            daemon: None,
        }
    }

    /// The same, served by `git daemon` on a free port of 127.0.0.1, pushes allowed.
    pub fn daemon() -> Self {
        let mut remote = Self::bare();
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let base = remote.dir.path().display().to_string();
        let child = Command::new("git")
            .args([
                "daemon",
                "--reuseaddr",
                "--export-all",
                "--enable=receive-pack",
                "--listen=127.0.0.1",
                &format!("--port={port}"),
                &format!("--base-path={base}"),
                &base,
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        remote.daemon = Some(child);
        let started = Instant::now();
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "git daemon did not start"
            );
            thread::sleep(Duration::from_millis(20));
        }
        remote.url = format!("git://127.0.0.1:{port}/remote.git");
        remote
    }

    pub fn git_dir(&self) -> PathBuf {
        self.dir.path().join("remote.git")
    }

    /// A new clone of the project: a git repository whose `origin` is this remote.
    pub fn clone(&self) -> TestEnv {
        let env = TestEnv::new();
        git(&env.project(), &["init", "--quiet"]);
        git(&env.project(), &["remote", "add", "origin", &self.url]);
        env
    }

    /// The commits of `refs/checkpoints/<id>`, newest first.
    pub fn history(&self, id: &str) -> Vec<String> {
        let out = git(
            &self.git_dir(),
            &["log", "--format=%s", &format!("refs/checkpoints/{id}")],
        );
        out.lines().map(str::to_owned).collect()
    }

    /// A file of the remote ref's tree.
    pub fn file(&self, id: &str, file: &str) -> String {
        git(
            &self.git_dir(),
            &["cat-file", "blob", &format!("refs/checkpoints/{id}:{file}")],
        )
    }
}

impl Drop for Remote {
    fn drop(&mut self) {
        if let Some(mut child) = self.daemon.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// A remote that never answers: a socket on 127.0.0.1 that accepts and says nothing.
pub fn silent_remote() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming() {
            held.push(stream);
        }
    });
    format!("git://127.0.0.1:{port}/remote.git")
}
