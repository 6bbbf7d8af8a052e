//! A static file server on 127.0.0.1, standing in for a GitHub release's downloads: `GET /<name>`
//! answers the file `<dir>/<name>` (404 when there is none), and every request is recorded.

use std::collections::BTreeMap;
use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread;
use std::time::Duration;

/// A running file server; stopped when dropped.
#[derive(Debug)]
pub struct FileServer {
    port: u16,
    shared: Arc<Shared>,
    accept: Option<thread::JoinHandle<()>>,
}

#[derive(Debug)]
struct Shared {
    dir: PathBuf,
    requests: Mutex<Vec<String>>,
    stop: AtomicBool,
}

impl FileServer {
    /// Serves the files of `dir` on an ephemeral port of 127.0.0.1.
    pub fn start(dir: &Path) -> FileServer {
        let listener =
            TcpListener::bind("127.0.0.1:0").expect("binding an ephemeral loopback port succeeds");
        let port = listener
            .local_addr()
            .expect("a bound listener has an address")
            .port();
        let shared = Arc::new(Shared {
            dir: dir.to_owned(),
            requests: Mutex::new(Vec::new()),
            stop: AtomicBool::new(false),
        });
        let accept = {
            let shared = Arc::clone(&shared);
            thread::spawn(move || {
                for stream in listener.incoming() {
                    if shared.stop.load(Ordering::SeqCst) {
                        break;
                    }
                    if let Ok(stream) = stream {
                        let shared = Arc::clone(&shared);
                        thread::spawn(move || serve(stream, &shared));
                    }
                }
            })
        };
        FileServer {
            port,
            shared,
            accept: Some(accept),
        }
    }

    /// `http://127.0.0.1:<port>`, the base of every file's URL.
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The paths requested so far, in order.
    pub fn requests(&self) -> Vec<String> {
        self.shared
            .requests
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// How many times each path was requested.
    pub fn counts(&self) -> BTreeMap<String, usize> {
        let mut counts = BTreeMap::new();
        for path in self.requests() {
            *counts.entry(path).or_insert(0) += 1;
        }
        counts
    }
}

impl Drop for FileServer {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop so that it sees the flag.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
        if let Some(accept) = self.accept.take() {
            let _ = accept.join();
        }
    }
}

/// Copies the directory `from` to `to`, recursively (a clone's plugin directory, a set of assets).
///
/// Panics on any error: it prepares a test.
#[track_caller]
pub fn copy_tree(from: &Path, to: &Path) {
    fs::create_dir_all(to)
        .unwrap_or_else(|err| panic!("failed to create `{}`: {err}", to.display()));
    let entries = fs::read_dir(from)
        .unwrap_or_else(|err| panic!("failed to list `{}`: {err}", from.display()));
    for entry in entries {
        let entry =
            entry.unwrap_or_else(|err| panic!("failed to list `{}`: {err}", from.display()));
        let target = to.join(entry.file_name());
        if entry.file_type().is_ok_and(|kind| kind.is_dir()) {
            copy_tree(&entry.path(), &target);
        } else {
            fs::copy(entry.path(), &target)
                .unwrap_or_else(|err| panic!("failed to copy `{}`: {err}", entry.path().display()));
        }
    }
}

fn serve(stream: TcpStream, shared: &Shared) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
    let mut reader = BufReader::new(&stream);
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).is_err() || request_line.is_empty() {
        return;
    }
    // The headers: read up to the blank line, ignored.
    loop {
        let mut line = String::new();
        match reader.read_line(&mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) if line == "\r\n" || line == "\n" => break,
            Ok(_) => {}
        }
    }
    let mut words = request_line.split_whitespace();
    let method = words.next().unwrap_or_default();
    let path = words.next().unwrap_or_default().to_owned();
    shared
        .requests
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push(path.clone());
    let name = path.trim_start_matches('/');
    let file = (!name.is_empty() && !name.contains("..") && !name.contains('/'))
        .then(|| fs::read(shared.dir.join(name)).ok())
        .flatten();
    let mut stream = &stream;
    let (status, body) = match file {
        Some(body) if method == "GET" || method == "HEAD" => ("200 OK", body),
        _ => ("404 Not Found", b"not found\n".to_vec()),
    };
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Length: {}\r\nContent-Type: application/octet-stream\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let _ = stream.write_all(head.as_bytes());
    if method != "HEAD" {
        let _ = stream.write_all(&body);
    }
    let _ = stream.flush();
    let _ = stream.shutdown(Shutdown::Both);
}
