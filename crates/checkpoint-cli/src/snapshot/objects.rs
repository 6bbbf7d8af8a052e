//! Git objects made in-process for the snapshot's fast path: a blob's, a tree's and a commit's
//! bytes and SHA-1 ids exactly as git computes them, the trees of a set of index entries in
//! git's order, and loose objects written as git writes them (zlib, a temporary file in the
//! object's directory, then linked into place; one already there is kept).

use std::{
    collections::BTreeMap,
    fs,
    io::Write,
    path::{Path, PathBuf},
};

use sha1::{Digest, Sha1};

/// A SHA-1 object id.
pub(crate) type Oid = [u8; 20];

/// The mode of a tree in a tree.
const TREE_MODE: u32 = 0o040000;

/// The id of an object of `kind` (`blob`, `tree`, `commit`) holding `body`.
pub(crate) fn oid_of(kind: &str, body: &[u8]) -> Oid {
    let mut hasher = Sha1::new();
    hasher.update(format!("{kind} {}\0", body.len()).as_bytes());
    hasher.update(body);
    hasher.finalize().into()
}

/// An id in hexadecimal.
pub(crate) fn hex(oid: &Oid) -> String {
    oid.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// An object to write: its kind, id and bytes.
#[derive(Debug)]
pub(crate) struct Object {
    pub(crate) kind: &'static str,
    pub(crate) oid: Oid,
    pub(crate) body: Vec<u8>,
}

impl Object {
    pub(crate) fn new(kind: &'static str, body: Vec<u8>) -> Self {
        Self {
            kind,
            oid: oid_of(kind, &body),
            body,
        }
    }
}

/// The trees of `entries` (full paths to mode and id): the root's id, and every tree made, the
/// root first. An error when a path is both a file and a directory, or is not a clean relative
/// path (git would refuse it too).
pub(crate) fn trees(entries: &BTreeMap<Vec<u8>, (u32, Oid)>) -> Result<(Oid, Vec<Object>), String> {
    // Each directory's children: (name, mode, id); directories are filled in depth first.
    let mut made = Vec::new();
    let list: Vec<(&[u8], u32, Oid)> = entries
        .iter()
        .map(|(path, (mode, oid))| (path.as_slice(), *mode, *oid))
        .collect();
    let root = tree_of(&list, &mut made)?;
    made.reverse();
    Ok((root, made))
}

/// The tree of `entries`, paths relative to it, sorted bytewise (a directory's entries are
/// together, as `dir/` sorts them); its subtrees pushed to `made` before it.
fn tree_of(entries: &[(&[u8], u32, Oid)], made: &mut Vec<Object>) -> Result<Oid, String> {
    let mut children: Vec<(&[u8], u32, Oid)> = Vec::new();
    let mut at = 0;
    while at < entries.len() {
        let (path, mode, oid) = entries[at];
        match path.iter().position(|byte| *byte == b'/') {
            None => {
                check_name(path)?;
                children.push((path, mode, oid));
                at += 1;
            }
            Some(slash) => {
                let name = &path[..slash];
                check_name(name)?;
                let mut end = at;
                let mut inner = Vec::new();
                while end < entries.len()
                    && entries[end].0.len() > slash
                    && entries[end].0[..slash] == *name
                    && entries[end].0[slash] == b'/'
                {
                    inner.push((&entries[end].0[slash + 1..], entries[end].1, entries[end].2));
                    end += 1;
                }
                let oid = tree_of(&inner, made)?;
                children.push((name, TREE_MODE, oid));
                at = end;
            }
        }
    }
    // Git's order: a tree sorts as if its name ended with `/`.
    children.sort_by(|a, b| sort_key(a.0, a.1).cmp(sort_key(b.0, b.1)));
    let mut names = std::collections::HashSet::with_capacity(children.len());
    for (name, _, _) in &children {
        if !names.insert(*name) {
            return Err(format!(
                "`{}` is both a file and a directory",
                String::from_utf8_lossy(name)
            ));
        }
    }
    let mut body = Vec::new();
    for (name, mode, oid) in &children {
        body.extend_from_slice(mode_bytes(*mode).as_bytes());
        body.push(b' ');
        body.extend_from_slice(name);
        body.push(0);
        body.extend_from_slice(oid);
    }
    let object = Object::new("tree", body);
    let oid = object.oid;
    made.push(object);
    Ok(oid)
}

/// A mode as a tree writes it (octal, no leading zero).
fn mode_bytes(mode: u32) -> std::borrow::Cow<'static, str> {
    match mode {
        0o100644 => "100644".into(),
        0o100755 => "100755".into(),
        0o120000 => "120000".into(),
        0o160000 => "160000".into(),
        TREE_MODE => "40000".into(),
        other => format!("{other:o}").into(),
    }
}

/// A name as git compares it in a tree: a directory's with a `/` after it.
fn sort_key(name: &[u8], mode: u32) -> impl Iterator<Item = &u8> {
    let slash: &[u8] = if mode == TREE_MODE { b"/" } else { b"" };
    name.iter().chain(slash)
}

/// Refuses a name git would not put in a tree.
fn check_name(name: &[u8]) -> Result<(), String> {
    if name.is_empty() || name == b"." || name == b".." || name.eq_ignore_ascii_case(b".git") {
        return Err(format!(
            "a path with the name `{}`",
            String::from_utf8_lossy(name)
        ));
    }
    Ok(())
}

/// A commit's bytes as `git commit-tree <tree> [-p <parent>] -m <message>` writes them with the
/// snapshots' identity, dated `seconds` in UTC.
pub(crate) fn commit_body(
    tree: &str,
    parent: Option<&str>,
    seconds: i64,
    message: &str,
) -> Vec<u8> {
    let mut body = format!("tree {tree}\n");
    if let Some(parent) = parent {
        body.push_str(&format!("parent {parent}\n"));
    }
    for role in ["author", "committer"] {
        body.push_str(&format!(
            "{role} checkpoint <checkpoint@localhost> {seconds} +0000\n"
        ));
    }
    body.push('\n');
    body.push_str(message);
    if !message.is_empty() && !message.ends_with('\n') {
        body.push('\n');
    }
    body.into_bytes()
}

/// Writes `objects` as loose objects under `objects_dir`, each one not already there: zlib into
/// a temporary file beside its place, then linked (renamed where links fail) into place.
pub(crate) fn write_loose(objects_dir: &Path, objects: &[Object]) -> Result<(), String> {
    for object in objects {
        let hex = hex(&object.oid);
        let dir = objects_dir.join(&hex[..2]);
        let path = dir.join(&hex[2..]);
        if path.exists() {
            continue;
        }
        write_one(&dir, &path, object)
            .map_err(|err| format!("failed to write the object `{}`: {err}", path.display()))?;
    }
    Ok(())
}

fn write_one(dir: &Path, path: &Path, object: &Object) -> std::io::Result<()> {
    fs::create_dir_all(dir)?;
    let temp = temp_name(dir);
    let result = (|| {
        let file = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temp)?;
        let mut encoder = flate2::write::ZlibEncoder::new(file, flate2::Compression::fast());
        encoder.write_all(format!("{} {}\0", object.kind, object.body.len()).as_bytes())?;
        encoder.write_all(&object.body)?;
        encoder.finish()?;
        // Read-only, as git makes them; linked so that an object another writer put there
        // first is never replaced.
        fs::set_permissions(&temp, std::os::unix::fs::PermissionsExt::from_mode(0o444))?;
        match fs::hard_link(&temp, path) {
            Ok(()) => Ok(()),
            Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
            Err(_) => fs::rename(&temp, path),
        }
    })();
    let _ = fs::remove_file(&temp);
    result
}

/// A temporary file's name in `dir`, as git names its own (`tmp_obj_*`, which `git gc` and
/// `git prune` clean up when a kill leaves one).
fn temp_name(dir: &Path) -> PathBuf {
    dir.join(format!(
        "tmp_obj_checkpoint_{}_{:x}",
        std::process::id(),
        fastrand_u64()
    ))
}

/// A number unlikely to repeat, from the clock (no dependency for one temporary name).
fn fastrand_u64() -> u64 {
    use std::time::{SystemTime, UNIX_EPOCH};
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_nanos() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_gits() {
        assert_eq!(
            hex(&oid_of("blob", b"")),
            "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"
        );
        assert_eq!(
            hex(&oid_of("tree", b"")),
            "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
        );
        let oid = oid_of("blob", b"hello\n");
        assert_eq!(hex(&oid), "ce013625030ba8dba906f756967f9e9ca394464a");
    }

    #[test]
    fn a_commit_is_the_one_git_commit_tree_writes() {
        let dir = assert_fs::TempDir::new().unwrap();
        let git = |args: &[&str]| {
            let output = std::process::Command::new("git")
                .current_dir(dir.path())
                .args(args)
                .env("GIT_CONFIG_GLOBAL", "/dev/null")
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .env("GIT_AUTHOR_NAME", "checkpoint")
                .env("GIT_AUTHOR_EMAIL", "checkpoint@localhost")
                .env("GIT_COMMITTER_NAME", "checkpoint")
                .env("GIT_COMMITTER_EMAIL", "checkpoint@localhost")
                .env("GIT_AUTHOR_DATE", "@1700000000 +0000")
                .env("GIT_COMMITTER_DATE", "@1700000000 +0000")
                .output()
                .unwrap();
            assert!(output.status.success(), "{output:?}");
            String::from_utf8(output.stdout).unwrap().trim().to_owned()
        };
        git(&["init", "-q"]);
        let tree = git(&["write-tree"]);
        let first = git(&["commit-tree", &tree, "-m", "turn end"]);
        assert_eq!(
            hex(&oid_of(
                "commit",
                &commit_body(&tree, None, 1_700_000_000, "turn end")
            )),
            first
        );
        for message in ["", "two\nlines\n", "ünï: `x`"] {
            let made = git(&["commit-tree", &tree, "-p", &first, "-m", message]);
            let body = commit_body(&tree, Some(&first), 1_700_000_000, message);
            assert_eq!(hex(&oid_of("commit", &body)), made, "{message:?}");
        }
    }

    #[test]
    fn a_directory_sorts_as_if_its_name_ended_with_a_slash() {
        let blob = oid_of("blob", b"x");
        let mut entries = BTreeMap::new();
        for path in ["a-b", "a.b", "a/x", "a0", "a/b/c"] {
            entries.insert(path.as_bytes().to_vec(), (0o100644, blob));
        }
        let (root, made) = trees(&entries).unwrap();
        assert_eq!(made[0].oid, root);
        let mut names: Vec<&[u8]> = Vec::new();
        let mut rest = &made[0].body[..];
        while let Some(space) = rest.iter().position(|byte| *byte == b' ') {
            let nul = rest.iter().position(|byte| *byte == 0).unwrap();
            names.push(&rest[space + 1..nul]);
            rest = &rest[nul + 21..];
        }
        assert_eq!(names, [&b"a-b"[..], b"a.b", b"a", b"a0"]);
        assert_eq!(made.len(), 3);
        // A name both a file and a directory: refused.
        entries.insert(b"a".to_vec(), (0o100644, blob));
        assert!(
            trees(&entries)
                .unwrap_err()
                .contains("both a file and a directory")
        );
    }
}
