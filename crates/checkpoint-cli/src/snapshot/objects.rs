//! Git objects made in-process for the snapshot's fast path: a blob's, a tree's and a commit's
//! bytes and SHA-1 ids exactly as git computes them, the trees of a set of index entries in
//! git's order, and loose objects written as git writes them (zlib, a temporary file in the
//! object's directory, then linked into place; one already there is kept).

use std::{
    collections::HashMap,
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

/// A directory's tree as a snapshot computed it: its id, how many index entries it holds and
/// how many subdirectories it has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Made {
    pub(crate) oid: Oid,
    pub(crate) entries: usize,
    pub(crate) subtrees: usize,
}

/// One entry of a tree to make: its path from the top, its mode and its id.
pub(crate) type TreeEntry<'a> = (&'a [u8], u32, Oid);

/// The trees kept from before: each directory's tree id (its path with a slash after it; the
/// root's is empty), and the paths changed since. A directory none of them is under keeps its
/// tree: it is not made again.
pub(crate) struct Kept<'a> {
    pub(crate) trees: &'a HashMap<Vec<u8>, Oid>,
    pub(crate) changed: &'a [&'a [u8]],
}

/// The trees [`trees`] made: the root's id, every tree made (the root first), and each
/// directory's tree made.
pub(crate) struct Trees {
    pub(crate) root: Oid,
    pub(crate) made: Vec<Object>,
    pub(crate) dirs: HashMap<Vec<u8>, Made>,
}

/// The trees of `entries` (sorted by path, bytewise, as an index holds them), made again only
/// where `kept` has no tree. An error when a path is both a file and a directory, or is not a
/// clean relative path (git would refuse it too).
pub(crate) fn trees(entries: &[TreeEntry<'_>], kept: Option<&Kept<'_>>) -> Result<Trees, String> {
    let mut builder = Builder {
        kept,
        made: Vec::new(),
        dirs: HashMap::new(),
    };
    let root = match builder.kept(b"") {
        Some(root) => root,
        None => builder.tree_of(entries, b"")?,
    };
    builder.made.reverse();
    Ok(Trees {
        root,
        made: builder.made,
        dirs: builder.dirs,
    })
}

struct Builder<'a> {
    kept: Option<&'a Kept<'a>>,
    made: Vec<Object>,
    dirs: HashMap<Vec<u8>, Made>,
}

impl Builder<'_> {
    /// The tree kept for `dir`, when no changed path is under it.
    fn kept(&self, dir: &[u8]) -> Option<Oid> {
        let kept = self.kept?;
        if kept.changed.iter().any(|path| path.starts_with(dir)) {
            return None;
        }
        kept.trees.get(dir).copied()
    }

    /// The tree of directory `dir` holding `entries` (paths relative to it, sorted bytewise: a
    /// directory's entries are together, as `dir/` sorts them); the trees made pushed to
    /// `made`, subtrees before it.
    fn tree_of(&mut self, entries: &[TreeEntry<'_>], dir: &[u8]) -> Result<Oid, String> {
        let mut children: Vec<TreeEntry<'_>> = Vec::new();
        let mut subtrees = 0;
        let mut at = 0;
        while at < entries.len() {
            let (path, mode, oid) = entries[at];
            let Some(slash) = path.iter().position(|byte| *byte == b'/') else {
                check_name(path)?;
                children.push((path, mode, oid));
                at += 1;
                continue;
            };
            let name = &path[..slash];
            check_name(name)?;
            let mut end = at + 1;
            while end < entries.len()
                && entries[end].0.len() > slash
                && entries[end].0[..slash] == *name
                && entries[end].0[slash] == b'/'
            {
                end += 1;
            }
            let sub = [dir, name, b"/"].concat();
            let oid = match self.kept(&sub) {
                Some(oid) => oid,
                None => {
                    let inner: Vec<TreeEntry<'_>> = entries[at..end]
                        .iter()
                        .map(|(path, mode, oid)| (&path[slash + 1..], *mode, *oid))
                        .collect();
                    self.tree_of(&inner, &sub)?
                }
            };
            children.push((name, TREE_MODE, oid));
            subtrees += 1;
            at = end;
        }
        // Git's order: a tree sorts as if its name ended with `/`.
        children.sort_by(|a, b| sort_key(a.0, a.1).cmp(sort_key(b.0, b.1)));
        // Names are unique but for a file and a directory of the same name.
        for (name, _, _) in children.iter().filter(|child| child.1 == TREE_MODE) {
            let file = children
                .binary_search_by(|child| sort_key(child.0, child.1).cmp(sort_key(name, 0)));
            if file.is_ok() {
                return Err(format!(
                    "`{}` is both a file and a directory",
                    String::from_utf8_lossy(name)
                ));
            }
        }
        let mut body = Vec::with_capacity(children.len() * 40);
        for (name, mode, oid) in &children {
            body.extend_from_slice(mode_bytes(*mode).as_bytes());
            body.push(b' ');
            body.extend_from_slice(name);
            body.push(0);
            body.extend_from_slice(oid);
        }
        let object = Object::new("tree", body);
        let oid = object.oid;
        self.made.push(object);
        self.dirs.insert(
            dir.to_vec(),
            Made {
                oid,
                entries: entries.len(),
                subtrees,
            },
        );
        Ok(oid)
    }
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
/// a temporary file beside its place, created read-only as git makes them, then renamed into
/// place (as git's `core.createObject = rename`: an object another writer put there meanwhile
/// has the same bytes).
pub(crate) fn write_loose<'a>(
    objects_dir: &Path,
    objects: impl IntoIterator<Item = &'a Object>,
) -> Result<(), String> {
    // One compressor for all: making one allocates and clears some 300 KiB.
    let mut compress = flate2::Compress::new(flate2::Compression::fast(), true);
    let mut deflated = Vec::new();
    for object in objects {
        let hex = hex(&object.oid);
        let dir = objects_dir.join(&hex[..2]);
        let path = dir.join(&hex[2..]);
        if path.exists() {
            continue;
        }
        deflate(&mut compress, object, &mut deflated)
            .and_then(|()| write_one(&dir, &path, &deflated))
            .map_err(|err| format!("failed to write the object `{}`: {err}", path.display()))?;
    }
    Ok(())
}

/// `object` as a loose object holds it: its header and body, zlib-compressed, into `out`.
fn deflate(
    compress: &mut flate2::Compress,
    object: &Object,
    out: &mut Vec<u8>,
) -> std::io::Result<()> {
    compress.reset();
    out.clear();
    let header = format!("{} {}\0", object.kind, object.body.len());
    out.reserve(object.body.len() / 2 + 64);
    for (input, flush) in [
        (header.as_bytes(), flate2::FlushCompress::None),
        (object.body.as_slice(), flate2::FlushCompress::Finish),
    ] {
        let mut input = input;
        loop {
            if out.capacity() - out.len() < 4096 {
                out.reserve(out.capacity().max(4096));
            }
            let before = compress.total_in();
            let status = compress
                .compress_vec(input, out, flush)
                .map_err(std::io::Error::other)?;
            input = &input[(compress.total_in() - before) as usize..];
            match status {
                flate2::Status::StreamEnd => break,
                _ if input.is_empty() && !matches!(flush, flate2::FlushCompress::Finish) => break,
                _ => {}
            }
        }
    }
    Ok(())
}

fn write_one(dir: &Path, path: &Path, deflated: &[u8]) -> std::io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let temp = temp_name(dir);
    let create = || {
        fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o444)
            .open(&temp)
    };
    let mut file = match create() {
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
            fs::create_dir_all(dir)?;
            create()?
        }
        other => other?,
    };
    let result = file
        .write_all(deflated)
        .and_then(|()| fs::rename(&temp, path));
    if result.is_err() {
        let _ = fs::remove_file(&temp);
    }
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
        let mut paths = ["a-b", "a.b", "a/x", "a0", "a/b/c"];
        paths.sort_unstable();
        let entries: Vec<TreeEntry<'_>> = paths
            .iter()
            .map(|path| (path.as_bytes(), 0o100644, blob))
            .collect();
        let made = trees(&entries, None).unwrap();
        assert_eq!(made.made[0].oid, made.root);
        let mut names: Vec<&[u8]> = Vec::new();
        let mut rest = &made.made[0].body[..];
        while let Some(space) = rest.iter().position(|byte| *byte == b' ') {
            let nul = rest.iter().position(|byte| *byte == 0).unwrap();
            names.push(&rest[space + 1..nul]);
            rest = &rest[nul + 21..];
        }
        assert_eq!(names, [&b"a-b"[..], b"a.b", b"a", b"a0"]);
        assert_eq!(made.made.len(), 3);
        assert_eq!(made.dirs[&b"a/"[..]].entries, 2);
        assert_eq!(made.dirs[&b"a/"[..]].subtrees, 1);
        assert_eq!(made.dirs[&b""[..]].entries, 5);
        // A name both a file and a directory: refused, wherever it sorts among its neighbours.
        for clash in [
            &["a", "a-b", "a/x"][..],
            &["a", "a/x"],
            &["a", "a.b", "a/b/c"],
        ] {
            let entries: Vec<TreeEntry<'_>> = clash
                .iter()
                .map(|path| (path.as_bytes(), 0o100644, blob))
                .collect();
            assert!(
                trees(&entries, None)
                    .err()
                    .is_some_and(|err| err.contains("both a file and a directory")),
                "{clash:?}"
            );
        }
    }

    #[test]
    fn only_the_directories_a_change_is_under_are_made_again() {
        let (one, two) = (oid_of("blob", b"1"), oid_of("blob", b"2"));
        let paths = ["a/b/f", "a/g", "c/h", "i"];
        let before: Vec<TreeEntry<'_>> = paths
            .iter()
            .map(|p| (p.as_bytes(), 0o100644, one))
            .collect();
        let old = trees(&before, None).unwrap();
        assert_eq!(old.made.len(), 4, "the root, a/, a/b/ and c/");
        let kept_trees: HashMap<Vec<u8>, Oid> = old
            .dirs
            .iter()
            .map(|(dir, made)| (dir.clone(), made.oid))
            .collect();
        let mut after = before.clone();
        after[1].2 = two;
        let changed: Vec<&[u8]> = vec![b"a/g"];
        let kept = Kept {
            trees: &kept_trees,
            changed: &changed,
        };
        let new = trees(&after, Some(&kept)).unwrap();
        // The same trees as made from nothing; only the root and a/ made.
        assert_eq!(new.root, trees(&after, None).unwrap().root);
        let mut dirs: Vec<&[u8]> = new.dirs.keys().map(Vec::as_slice).collect();
        dirs.sort_unstable();
        assert_eq!(dirs, [&b""[..], b"a/"]);
        // Nothing changed: nothing made.
        let none = trees(
            &before,
            Some(&Kept {
                trees: &kept_trees,
                changed: &[],
            }),
        )
        .unwrap();
        assert_eq!((none.root, none.made.len()), (old.root, 0));
        // A kept tree missing: made from the entries.
        let mut partial = kept_trees.clone();
        partial.remove(&b"c/"[..]);
        let made = trees(
            &after,
            Some(&Kept {
                trees: &partial,
                changed: &changed,
            }),
        )
        .unwrap();
        assert_eq!(made.root, new.root);
        assert!(made.dirs.contains_key(&b"c/"[..]));
    }

    #[test]
    fn loose_objects_are_read_by_git_whatever_their_size() {
        let dir = assert_fs::TempDir::new().unwrap();
        let run = |args: &[&str]| {
            std::process::Command::new("git")
                .current_dir(dir.path())
                .args(args)
                .env("GIT_CONFIG_GLOBAL", "/dev/null")
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .output()
                .unwrap()
        };
        assert!(run(&["init", "-q"]).status.success());
        // Empty, small, and larger than any buffer (and hardly compressible).
        let mut big = Vec::with_capacity(3 << 20);
        let mut x: u32 = 1;
        while big.len() < 3 << 20 {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            big.extend_from_slice(&x.to_le_bytes());
        }
        let objects: Vec<Object> = [Vec::new(), b"hello\n".to_vec(), big]
            .into_iter()
            .map(|body| Object::new("blob", body))
            .collect();
        let objects_dir = dir.path().join(".git/objects");
        write_loose(&objects_dir, &objects).unwrap();
        // Again: each is there already, and kept.
        write_loose(&objects_dir, &objects).unwrap();
        for object in &objects {
            let shown = run(&["cat-file", "blob", &hex(&object.oid)]);
            assert!(shown.status.success(), "{shown:?}");
            assert_eq!(shown.stdout, object.body);
        }
        let fsck = run(&["fsck", "--strict", "--unreachable"]);
        assert!(fsck.status.success(), "{fsck:?}");
        let leftover = fs::read_dir(objects_dir.join(&hex(&objects[1].oid)[..2]))
            .unwrap()
            .filter(|entry| {
                entry
                    .as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .starts_with("tmp_obj")
            })
            .count();
        assert_eq!(leftover, 0);
    }
}
