//! A Claude Code session's transcript as a hand-off moves it: where the client keeps it
//! (`<config dir>/projects/<munged checkout path>/<id>.jsonl`), a session id checked before it
//! names any file, and the text redacted line by line with the journal's rules.

use std::{
    fs,
    io::Write,
    path::{Path, PathBuf},
};

use miette::Result;

use crate::{env, failure::Failure};

/// The longest session id taken (a Claude Code id is a 36-character UUID).
const MAX_ID_LEN: usize = 128;

/// Checks a session id before it names a file or a ref: letters, digits, `-` and `_` only, so
/// that no id can climb out of a directory (`..`, `/`) or be read as an option.
pub(crate) fn check_id(id: &str, from: &str) -> Result<()> {
    let fine = !id.is_empty()
        && id.len() <= MAX_ID_LEN
        && !id.starts_with('-')
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if fine {
        return Ok(());
    }
    Err(Failure::new(
        "checkpoint::session::bad_id",
        format!(
            "the session id `{}` ({from}) is not a session id: only letters, digits, `-` and `_`, at most {MAX_ID_LEN}",
            id.escape_debug()
        ),
    )
    .with_help("name the session as the client does (`claude --resume` lists them)")
    .into())
}

/// The client's configuration directory: `$CLAUDE_CONFIG_DIR`, else `~/.claude`.
pub(crate) fn claude_dir() -> Result<PathBuf> {
    if let Some(dir) = std::env::var_os(env::CLAUDE_CONFIG_DIR).filter(|dir| !dir.is_empty()) {
        return Ok(PathBuf::from(dir));
    }
    match std::env::var_os(env::HOME).filter(|home| !home.is_empty()) {
        Some(home) => Ok(PathBuf::from(home).join(".claude")),
        None => Err(Failure::new(
            "checkpoint::session::no_home",
            "`HOME` is not set, so the client's session files cannot be found".into(),
        )
        .with_help("set `HOME` (or `CLAUDE_CONFIG_DIR`)")
        .into()),
    }
}

/// The directory name the client gives a checkout: every character that is not an ASCII letter
/// or digit becomes `-` (`/home/me/b/clone_x.y` → `-home-me-b-clone-x-y`).
pub(crate) fn munged(path: &Path) -> String {
    path.to_string_lossy()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

/// The client's project directory of the checkout at `root`: one directory under
/// `<config dir>/projects/`, whatever the path holds.
pub(crate) fn project_dir(root: &Path) -> Result<PathBuf> {
    let root = fs::canonicalize(root).unwrap_or_else(|_| root.to_owned());
    Ok(claude_dir()?.join("projects").join(munged(&root)))
}

/// Where the transcript of session `id` is on this machine: in the checkout's project
/// directory, else the only project directory holding it (a session started in a
/// subdirectory).
pub(crate) fn find(root: &Path, id: &str) -> Result<PathBuf> {
    check_id(id, "the session to send")?;
    let name = format!("{id}.jsonl");
    let own = project_dir(root)?.join(&name);
    if own.is_file() {
        return Ok(own);
    }
    let projects = claude_dir()?.join("projects");
    let found: Vec<PathBuf> = fs::read_dir(&projects)
        .map(|dirs| {
            dirs.flatten()
                .map(|dir| dir.path().join(&name))
                .filter(|path| path.is_file())
                .collect()
        })
        .unwrap_or_default();
    match found.as_slice() {
        [one] => Ok(one.clone()),
        _ => Err(Failure::new(
            "checkpoint::session::not_found",
            format!(
                "no transcript of the session `{id}` at `{}`",
                own.display()
            ),
        )
        .with_help("name a session of this checkout: `checkpoint push --session <id>` (the ids are the `.jsonl` names in that directory)")
        .into()),
    }
}

/// Reads a transcript of at most `limit` bytes, refused by its size before it is read.
pub(crate) fn read_bounded(path: &Path, limit: u64) -> Result<Vec<u8>> {
    let size = fs::metadata(path)
        .map_err(|err| {
            Failure::new(
                "checkpoint::session::unreadable",
                format!("failed to read `{}`: {err}", path.display()),
            )
        })?
        .len();
    refuse_oversized(size, limit, &path.display().to_string())?;
    fs::read(path).map_err(|err| {
        Failure::new(
            "checkpoint::session::unreadable",
            format!("failed to read `{}`: {err}", path.display()),
        )
        .into()
    })
}

/// The error of a transcript over `[sync] session_max_bytes`.
pub(crate) fn refuse_oversized(size: u64, limit: u64, what: &str) -> Result<()> {
    if size <= limit {
        return Ok(());
    }
    Err(Failure::new(
        "checkpoint::session::too_large",
        format!("the session transcript `{what}` is {size} bytes, over the limit of {limit} bytes"),
    )
    .with_help("nothing was sent or written; raise `[sync] session_max_bytes` in `config.toml` if it is meant to move")
    .into())
}

/// `bytes` (JSON lines) with every secret the journal's rules find replaced by a marker: each
/// line that holds one is parsed and its strings redacted (so the line stays JSON), a line that
/// is not JSON is redacted as text. Returns the text and how many secrets it replaced.
pub(crate) fn redacted(bytes: &[u8]) -> (Vec<u8>, usize) {
    let mut out = Vec::with_capacity(bytes.len());
    let mut n = 0;
    for line in bytes.split_inclusive(|&b| b == b'\n') {
        let (body, end) = match line.strip_suffix(b"\n") {
            Some(body) => (body, &b"\n"[..]),
            None => (line, &b""[..]),
        };
        let text = String::from_utf8_lossy(body);
        if checkpoint_core::redact::kinds(&text).is_empty() {
            out.extend_from_slice(line);
            continue;
        }
        match serde_json::from_str::<serde_json::Value>(&text) {
            Ok(mut value) => {
                n += redact_json(&mut value);
                let _ = serde_json::to_writer(&mut out, &value);
            }
            Err(_) => {
                let mut text = text.into_owned();
                n += checkpoint_core::redact::text(&mut text);
                out.extend_from_slice(text.as_bytes());
            }
        }
        out.extend_from_slice(end);
    }
    (out, n)
}

/// Redacts every string (and key) of a JSON value.
fn redact_json(value: &mut serde_json::Value) -> usize {
    match value {
        serde_json::Value::String(text) => checkpoint_core::redact::text(text),
        serde_json::Value::Array(items) => items.iter_mut().map(redact_json).sum(),
        serde_json::Value::Object(map) => {
            let mut n = 0;
            let old = std::mem::take(map);
            for (mut key, mut item) in old {
                n += checkpoint_core::redact::text(&mut key);
                n += redact_json(&mut item);
                map.insert(key, item);
            }
            n
        }
        _ => 0,
    }
}

/// Writes `bytes` as `path`, beside it then renamed over it, so that a kill leaves the old file
/// or the new one.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let parent = path.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(parent)?;
    let name = path
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temp = parent.join(format!(".{name}.checkpoint-{}", std::process::id()));
    let mut file = fs::File::create(&temp)?;
    file.write_all(bytes)?;
    file.sync_all()?;
    fs::rename(&temp, path).inspect_err(|_| {
        let _ = fs::remove_file(&temp);
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_that_could_name_another_file_are_refused() {
        for bad in [
            "",
            "..",
            "../x",
            "a/b",
            "-rf",
            "a b",
            "x\n",
            "é",
            &"a".repeat(129),
        ] {
            assert!(check_id(bad, "test").is_err(), "{bad:?}");
        }
        for good in ["0b9c7a54-3f1e-4c39-9d59-8f0e2a1d6c11", "s_1", "A"] {
            assert!(check_id(good, "test").is_ok(), "{good:?}");
        }
    }

    #[test]
    fn paths_are_munged_as_the_client_munges_them() {
        assert_eq!(
            munged(Path::new("/home/me/b/clone_x.y")),
            "-home-me-b-clone-x-y"
        );
        assert_eq!(munged(Path::new("/tmp/é")), "-tmp--");
    }

    #[test]
    fn a_secret_in_a_json_line_is_redacted_and_the_line_stays_json() {
        let token = format!("ghp_{}", "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8");
        let input = format!(
            "{{\"type\":\"user\",\"message\":{{\"content\":\"printed {token}\\n\"}}}}\n{{\"type\":\"x\"}}\nnot json {token}"
        );
        let (out, n) = redacted(input.as_bytes());
        let out = String::from_utf8(out).unwrap();
        assert_eq!(n, 2, "{out}");
        assert!(!out.contains(&token), "{out}");
        let mut lines = out.lines();
        let first: serde_json::Value = serde_json::from_str(lines.next().unwrap()).unwrap();
        assert!(
            first["message"]["content"]
                .as_str()
                .unwrap()
                .contains("[REDACTED")
        );
        assert_eq!(lines.next(), Some("{\"type\":\"x\"}"));
        assert!(lines.next().unwrap().starts_with("not json "));
        // Nothing to redact: the bytes are kept as they are.
        let clean = b"{\"b\": 1, \"a\":2}\n";
        assert_eq!(redacted(clean).0, clean);
    }
}
