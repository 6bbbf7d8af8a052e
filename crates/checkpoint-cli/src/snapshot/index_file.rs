//! The private index read in-process: its entries' paths, modes and object ids, for the
//! snapshot's fast path, and entries changed in place when no path comes or goes. Versions 2, 3
//! and 4 (prefix-compressed paths); anything else it does not know for sure (a split index, a
//! sparse index, an unknown required extension, a conflict stage, an intent-to-add or
//! skip-worktree entry; for a change, any extension but the cache tree and the untracked cache)
//! is refused, and the snapshot takes the process path.

use std::collections::HashMap;

use crate::snapshot::{cache_tree, objects::Made};

/// One entry of the index: a file, a symbolic link or a submodule's commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    /// The path, relative to the top directory, as bytes.
    pub(crate) path: Vec<u8>,
    /// The mode: `0o100644`, `0o100755`, `0o120000` or `0o160000`.
    pub(crate) mode: u32,
    /// The object id (SHA-1).
    pub(crate) oid: [u8; 20],
    /// Where the entry starts in the file (its stat data).
    pub(crate) at: usize,
}

/// An index file read: its entries, and where the extensions after them start.
#[derive(Debug)]
pub(crate) struct Index {
    pub(crate) entries: Vec<Entry>,
    /// The end of the entries: the first extension, or the trailing checksum.
    pub(crate) entries_end: usize,
}

/// The size of an entry's fixed part before its flags: ten 32-bit stat fields and the id.
const STAT_AND_ID: usize = 40 + 20;

/// The entries of the index file `bytes`, in its order; an error says why it is not read.
pub(crate) fn parse(bytes: &[u8]) -> Result<Index, String> {
    let header = bytes.get(..12).ok_or("shorter than its header")?;
    if &header[..4] != b"DIRC" {
        return Err("not an index file".to_owned());
    }
    let version = be32(&header[4..8]);
    if !(2..=4).contains(&version) {
        return Err(format!("index version {version}"));
    }
    let count = be32(&header[8..12]) as usize;
    let mut entries = Vec::with_capacity(count);
    let mut at = 12;
    let mut previous: Vec<u8> = Vec::new();
    for _ in 0..count {
        let start = at;
        let fixed = bytes
            .get(at..at + STAT_AND_ID + 2)
            .ok_or("an entry runs past the end")?;
        let mode = be32(&fixed[24..28]);
        let oid: [u8; 20] = fixed[40..60].try_into().expect("twenty bytes");
        let flags = u16::from_be_bytes([fixed[60], fixed[61]]);
        at += STAT_AND_ID + 2;
        if flags & 0x3000 != 0 {
            return Err("an entry with a conflict stage".to_owned());
        }
        if flags & 0x4000 != 0 {
            if version < 3 {
                return Err("extended flags in a version 2 index".to_owned());
            }
            let extended = bytes.get(at..at + 2).ok_or("an entry runs past the end")?;
            if u16::from_be_bytes([extended[0], extended[1]]) != 0 {
                return Err("an intent-to-add or skip-worktree entry".to_owned());
            }
            at += 2;
        }
        let path = if version == 4 {
            let (strip, used) = varint(&bytes[at..]).ok_or("a bad path prefix")?;
            at += used;
            let keep = previous
                .len()
                .checked_sub(strip)
                .ok_or("a path prefix longer than the previous path")?;
            let end = nul(bytes, at)?;
            let mut path = previous[..keep].to_vec();
            path.extend_from_slice(&bytes[at..end]);
            at = end + 1;
            path
        } else {
            let end = nul(bytes, at)?;
            let path = bytes[at..end].to_vec();
            // Padded with one to eight NULs to a multiple of eight from the entry's start.
            at = start + ((at - start + path.len() + 8) & !7);
            path
        };
        if !matches!(mode, 0o100644 | 0o100755 | 0o120000 | 0o160000) {
            return Err(format!("an entry of mode {mode:o}"));
        }
        if path.is_empty() {
            // Only a split index writes one: an entry replaced in its shared index, which the
            // `link` extension after the entries names.
            return Err("an entry with no path (a split index, `link`)".to_owned());
        }
        previous.clone_from(&path);
        entries.push(Entry {
            path,
            mode,
            oid,
            at: start,
        });
    }
    extensions(bytes, at)?;
    Ok(Index {
        entries,
        entries_end: at,
    })
}

/// Checks the extensions after the entries: an optional one (its name starts with a capital) is
/// skipped; a required one (a split index's `link`, a sparse index's `sdir`, any other) refused.
fn extensions(bytes: &[u8], mut at: usize) -> Result<(), String> {
    // The trailing checksum (zeros with `index.skipHash`).
    let end = bytes
        .len()
        .checked_sub(20)
        .ok_or("shorter than its checksum")?;
    while at < end {
        let head = bytes
            .get(at..at + 8)
            .ok_or("an extension runs past the end")?;
        let size = be32(&head[4..8]) as usize;
        if !head[0].is_ascii_uppercase() {
            return Err(format!(
                "the required extension `{}`",
                String::from_utf8_lossy(&head[..4])
            ));
        }
        at += 8 + size;
    }
    if at != end {
        return Err("extensions run past the end".to_owned());
    }
    Ok(())
}

/// The body of the cache tree extension (`TREE`) of the index file `bytes`, if it has one.
pub(crate) fn cache_tree_body<'a>(bytes: &'a [u8], index: &Index) -> Option<&'a [u8]> {
    let end = bytes.len().checked_sub(20)?;
    let mut at = index.entries_end;
    while at < end {
        let head = bytes.get(at..at + 8)?;
        let size = be32(&head[4..8]) as usize;
        if &head[..4] == b"TREE" {
            return bytes.get(at + 8..at + 8 + size);
        }
        at += 8 + size;
    }
    None
}

/// One entry to change in place: where it starts (its [`Entry::at`]), its path, its new mode
/// and id, and its file's stat data (none: zeroed, so that git hashes the file once).
pub(crate) struct Change<'a> {
    pub(crate) at: usize,
    pub(crate) path: &'a [u8],
    pub(crate) mode: u32,
    pub(crate) oid: [u8; 20],
    pub(crate) stat: Option<Stat>,
}

/// An entry's stat data as the index keeps it: the change and modification times (seconds and
/// nanoseconds), device, inode, mode, owner, group and size, each a big-endian 32-bit number
/// (cut to its low 32 bits, as git cuts them).
pub(crate) type Stat = [u8; 40];

/// The stat data of a file `before` its read, when `after` it shows the same file unchanged
/// (same inode, size and times); none when it changed meanwhile.
pub(crate) fn stat_if_same(before: &std::fs::Metadata, after: &std::fs::Metadata) -> Option<Stat> {
    use std::os::unix::fs::MetadataExt;
    let key = |m: &std::fs::Metadata| {
        (
            m.dev(),
            m.ino(),
            m.size(),
            m.mtime(),
            m.mtime_nsec(),
            m.ctime(),
            m.ctime_nsec(),
        )
    };
    if key(before) != key(after) {
        return None;
    }
    let fields = [
        before.ctime() as u32,
        before.ctime_nsec() as u32,
        before.mtime() as u32,
        before.mtime_nsec() as u32,
        before.dev() as u32,
        before.ino() as u32,
        0,
        before.uid(),
        before.gid(),
        before.size() as u32,
    ];
    let mut stat = [0; 40];
    for (at, field) in fields.into_iter().enumerate() {
        stat[at * 4..at * 4 + 4].copy_from_slice(&field.to_be_bytes());
    }
    Some(stat)
}

/// The index file `bytes` (read as `index`) with `changes` made in place, as `git update-index
/// --index-info` leaves them: the stat data zeroed (the next `git status` hashes those files
/// once and refreshes it), the cache tree of their directories given the trees `made` for them
/// (see [`cache_tree::rewrite`]; invalidated where none was), the untracked cache kept (no path
/// comes or goes, so no directory's untracked files change), and the checksum computed again
/// unless it is zeros (`index.skipHash`). An error when another extension is there: git must
/// decide.
pub(crate) fn rewrite(
    bytes: &[u8],
    index: &Index,
    changes: &[Change<'_>],
    made: &HashMap<Vec<u8>, Made>,
) -> Result<Vec<u8>, String> {
    let end = bytes
        .len()
        .checked_sub(20)
        .filter(|end| *end >= index.entries_end)
        .ok_or("shorter than its checksum")?;
    let mut out = Vec::with_capacity(bytes.len());
    out.extend_from_slice(&bytes[..index.entries_end]);
    for change in changes {
        let entry = out
            .get_mut(change.at..change.at + STAT_AND_ID)
            .ok_or("an entry runs past the end")?;
        entry[..40].copy_from_slice(&change.stat.unwrap_or([0; 40]));
        entry[24..28].copy_from_slice(&change.mode.to_be_bytes());
        entry[40..60].copy_from_slice(&change.oid);
    }
    let paths: Vec<&[u8]> = changes.iter().map(|change| change.path).collect();
    let mut at = index.entries_end;
    while at < end {
        let head = bytes
            .get(at..at + 8)
            .ok_or("an extension runs past the end")?;
        let size = be32(&head[4..8]) as usize;
        let body = bytes
            .get(at + 8..at + 8 + size)
            .ok_or("an extension runs past the end")?;
        match &head[..4] {
            b"TREE" => {
                let nodes = cache_tree::nodes(body)?;
                let tree = cache_tree::rewrite(&nodes, &paths, made);
                out.extend_from_slice(b"TREE");
                out.extend_from_slice(
                    &u32::try_from(tree.len())
                        .map_err(|_| "a huge cache tree")?
                        .to_be_bytes(),
                );
                out.extend_from_slice(&tree);
            }
            b"UNTR" => out.extend_from_slice(&bytes[at..at + 8 + size]),
            other => {
                return Err(format!(
                    "the extension `{}`",
                    String::from_utf8_lossy(other)
                ));
            }
        }
        at += 8 + size;
    }
    if bytes[end..].iter().all(|byte| *byte == 0) {
        out.extend_from_slice(&[0; 20]);
    } else {
        use sha1::Digest;
        let digest = sha1::Sha1::digest(&out);
        out.extend_from_slice(&digest);
    }
    Ok(out)
}

fn be32(bytes: &[u8]) -> u32 {
    u32::from_be_bytes(bytes[..4].try_into().expect("four bytes"))
}

/// The position of the NUL ending the path from `at`.
fn nul(bytes: &[u8], at: usize) -> Result<usize, String> {
    bytes
        .get(at..)
        .and_then(|rest| rest.iter().position(|byte| *byte == 0))
        .map(|position| at + position)
        .ok_or_else(|| "a path runs past the end".to_owned())
}

/// Git's offset varint (each continuation adds one before shifting), and the bytes it took.
fn varint(bytes: &[u8]) -> Option<(usize, usize)> {
    let mut used = 0;
    let mut byte = *bytes.first()?;
    used += 1;
    let mut value = usize::from(byte & 0x7f);
    while byte & 0x80 != 0 {
        byte = *bytes.get(used)?;
        used += 1;
        value = value.checked_add(1)?.checked_mul(128)? | usize::from(byte & 0x7f);
    }
    Some((value, used))
}

#[cfg(test)]
mod tests {
    use super::*;

    use std::process::Command;

    fn git(dir: &std::path::Path, args: &[&str]) -> String {
        let output = Command::new("git")
            .current_dir(dir)
            .args(args)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .output()
            .unwrap();
        assert!(output.status.success(), "git {args:?}: {output:?}");
        String::from_utf8(output.stdout).unwrap()
    }

    /// `git ls-files -s` as the parser's entries.
    fn listed(dir: &std::path::Path) -> Vec<(String, String, String)> {
        git(dir, &["ls-files", "-s", "-z"])
            .split('\0')
            .filter(|record| !record.is_empty())
            .map(|record| {
                let (meta, path) = record.split_once('\t').unwrap();
                let fields: Vec<&str> = meta.split(' ').collect();
                (path.to_owned(), fields[0].to_owned(), fields[1].to_owned())
            })
            .collect()
    }

    #[test]
    fn every_index_version_reads_as_git_lists_it_and_unknown_layouts_are_refused() {
        let dir = assert_fs::TempDir::new().unwrap();
        let root = dir.path();
        git(root, &["init", "-q"]);
        for path in [
            "a-b",
            "a.b",
            "a/x",
            "a0",
            "deep/er/and/deeper/file with spaces",
            "deep/er/and/deeper/filf",
            "deep/er/z",
            "ünïcode",
            "line\nbreak",
        ] {
            let file = root.join(path);
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(&file, path).unwrap();
        }
        std::os::unix::fs::symlink("a/x", root.join("link")).unwrap();
        std::fs::write(root.join("run.sh"), "#!/bin/sh\n").unwrap();
        git(root, &["add", "-A"]);
        git(root, &["update-index", "--chmod=+x", "run.sh"]);
        // A path longer than the 12 bits of an entry's name length (no file: too long for one).
        let long = vec!["long".repeat(60); 18].join("/");
        let blob = git(root, &["rev-parse", ":a0"]);
        git(
            root,
            &[
                "update-index",
                "--add",
                "--cacheinfo",
                &format!("100644,{},{long}", blob.trim()),
            ],
        );
        let gitlink = "1".repeat(40);
        git(
            root,
            &[
                "update-index",
                "--add",
                "--cacheinfo",
                &format!("160000,{gitlink},sub"),
            ],
        );
        git(root, &["write-tree"]);
        for version in ["2", "3", "4", "2"] {
            git(root, &["update-index", "--index-version", version]);
            let bytes = std::fs::read(root.join(".git/index")).unwrap();
            let parsed: Vec<(String, String, String)> = parse(&bytes)
                .unwrap()
                .entries
                .iter()
                .map(|entry| {
                    (
                        String::from_utf8(entry.path.clone()).unwrap(),
                        format!("{:06o}", entry.mode),
                        entry.oid.iter().map(|byte| format!("{byte:02x}")).collect(),
                    )
                })
                .collect();
            assert_eq!(parsed, listed(root), "index version {version}");
        }
        // An intent-to-add entry (version 3's extended flags): refused.
        std::fs::write(root.join("later"), "x").unwrap();
        git(root, &["add", "-N", "later"]);
        let bytes = std::fs::read(root.join(".git/index")).unwrap();
        assert!(parse(&bytes).unwrap_err().contains("intent-to-add"));
        git(root, &["rm", "-q", "--cached", "later"]);
        // A split index: its required `link` extension refused.
        git(root, &["update-index", "--split-index"]);
        let bytes = std::fs::read(root.join(".git/index")).unwrap();
        assert!(parse(&bytes).unwrap_err().contains("`link`"));
        git(root, &["update-index", "--no-split-index"]);
        assert!(parse(&std::fs::read(root.join(".git/index")).unwrap()).is_ok());
        // Torn or foreign bytes: refused, never a panic.
        let bytes = std::fs::read(root.join(".git/index")).unwrap();
        for cut in (0..bytes.len()).step_by(7) {
            let _ = parse(&bytes[..cut]);
        }
        assert!(parse(b"DIRC\0\0\0\x05\0\0\0\0").is_err());
        assert!(parse(b"not an index").is_err());
    }

    #[test]
    fn entries_changed_in_place_read_as_git_update_index_writes_them() {
        let dir = assert_fs::TempDir::new().unwrap();
        let root = dir.path();
        git(root, &["init", "-q"]);
        for path in ["a/x", "a/y", "b/deep/z", "c", "line\nbreak"] {
            let file = root.join(path);
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(&file, path).unwrap();
        }
        std::fs::write(root.join("untracked"), "u").unwrap();
        git(root, &["add", "a", "b", "c", "line\nbreak"]);
        let blob = git(root, &["hash-object", "-w", "--stdin"]);
        let blob: [u8; 20] = (0..20)
            .map(|i| u8::from_str_radix(&blob.trim()[i * 2..i * 2 + 2], 16).unwrap())
            .collect::<Vec<u8>>()
            .try_into()
            .unwrap();
        let index = root.join(".git/index");
        let reference = root.join(".git/reference");
        for (version, skip_hash) in [("2", "true"), ("3", "false"), ("4", "true"), ("2", "false")] {
            // The cache tree and the untracked cache both in the file, and the checksum asked.
            let skip = format!("index.skipHash={skip_hash}");
            git(
                root,
                &["-c", &skip, "update-index", "--index-version", version],
            );
            git(root, &["-c", &skip, "write-tree"]);
            git(
                root,
                &[
                    "-c",
                    "core.untrackedCache=true",
                    "-c",
                    &skip,
                    "status",
                    "--porcelain",
                ],
            );
            let bytes = std::fs::read(&index).unwrap();
            assert_eq!(
                bytes[bytes.len() - 20..].iter().all(|b| *b == 0),
                skip_hash == "true"
            );
            let parsed = parse(&bytes).unwrap();
            std::fs::write(&reference, &bytes).unwrap();
            // A file's content and a mode, in two directories and at the top.
            let mut changes = Vec::new();
            let mut info = String::new();
            for entry in &parsed.entries {
                let (mode, oid) = match entry.path.as_slice() {
                    b"a/y" | b"c" => (0o100644, blob),
                    b"b/deep/z" => (0o100755, entry.oid),
                    _ => continue,
                };
                info.push_str(&format!(
                    "{mode:o} {}\t{}\n",
                    oid.iter().map(|b| format!("{b:02x}")).collect::<String>(),
                    String::from_utf8_lossy(&entry.path)
                ));
                changes.push(Change {
                    at: entry.at,
                    path: entry.path.as_slice(),
                    mode,
                    oid,
                    stat: None,
                });
            }
            let written = rewrite(&bytes, &parsed, &changes, &HashMap::new()).unwrap();
            std::fs::write(&index, &written).unwrap();
            let ours = (
                git(root, &["ls-files", "-s", "--debug"]),
                git(root, &["write-tree"]),
            );
            // The same change by git, in the reference copy.
            let output = Command::new("git")
                .current_dir(root)
                .args(["update-index", "--index-info"])
                .env("GIT_INDEX_FILE", &reference)
                .env("GIT_CONFIG_GLOBAL", "/dev/null")
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .spawn()
                .and_then(|mut child| {
                    use std::io::Write;
                    child.stdin.take().unwrap().write_all(info.as_bytes())?;
                    child.wait_with_output()
                })
                .unwrap();
            assert!(output.status.success());
            std::fs::copy(&reference, &index).unwrap();
            let theirs = (
                git(root, &["ls-files", "-s", "--debug"]),
                git(root, &["write-tree"]),
            );
            assert_eq!(ours, theirs, "index version {version}");
            // Given the trees made for the new entries, the cache tree is git's own after its
            // `write-tree`, byte for byte, and git trusts it.
            let gits = std::fs::read(&index).unwrap();
            let gits_tree = cache_tree_body(&gits, &parse(&gits).unwrap()).unwrap();
            let entries: Vec<_> = parse(&written)
                .unwrap()
                .entries
                .iter()
                .map(|entry| (entry.path.clone(), entry.mode, entry.oid))
                .collect();
            let borrowed: Vec<_> = entries
                .iter()
                .map(|(path, mode, oid)| (path.as_slice(), *mode, *oid))
                .collect();
            let made = crate::snapshot::objects::trees(&borrowed, None)
                .unwrap()
                .dirs;
            let with_trees = rewrite(&bytes, &parsed, &changes, &made).unwrap();
            let ours_tree = cache_tree_body(&with_trees, &parse(&with_trees).unwrap()).unwrap();
            assert_eq!(ours_tree, gits_tree, "index version {version}");
            std::fs::write(&index, &with_trees).unwrap();
            assert_eq!(git(root, &["write-tree"]), theirs.1);
            assert_eq!(git(root, &["ls-files", "-s", "--debug"]), theirs.0);
            // Git reads what was written, untracked cache and all.
            std::fs::write(&index, &written).unwrap();
            assert!(git(root, &["status", "--porcelain", "-uall"]).contains("?? untracked"));
            std::fs::write(&index, &bytes).unwrap();
        }
        // Another extension: git decides.
        git(
            root,
            &[
                "-c",
                "index.recordEndOfIndexEntries=true",
                "update-index",
                "--index-version",
                "3",
            ],
        );
        let bytes = std::fs::read(&index).unwrap();
        let parsed = parse(&bytes).unwrap();
        assert!(
            rewrite(&bytes, &parsed, &[], &HashMap::new())
                .unwrap_err()
                .contains("EOIE")
        );
    }

    #[test]
    fn an_entry_given_its_files_stat_data_is_clean_to_git_without_a_refresh() {
        let dir = assert_fs::TempDir::new().unwrap();
        let root = dir.path();
        git(root, &["init", "-q"]);
        std::fs::write(root.join("x"), "one\n").unwrap();
        std::fs::write(root.join("y"), "kept\n").unwrap();
        git(root, &["add", "x", "y"]);
        let index = root.join(".git/index");
        // Older than the index write to come, as a file edited during a turn is.
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::write(root.join("x"), "two, longer\n").unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        let before = std::fs::symlink_metadata(root.join("x")).unwrap();
        let content = std::fs::read(root.join("x")).unwrap();
        let after = std::fs::symlink_metadata(root.join("x")).unwrap();
        let stat = stat_if_same(&before, &after);
        assert!(stat.is_some());
        let oid = crate::snapshot::objects::oid_of("blob", &content);
        crate::snapshot::objects::write_loose(
            &root.join(".git/objects"),
            &[crate::snapshot::objects::Object::new("blob", content)],
        )
        .unwrap();
        let bytes = std::fs::read(&index).unwrap();
        let parsed = parse(&bytes).unwrap();
        let entry = parsed.entries.iter().find(|e| e.path == b"x").unwrap();
        let change = Change {
            at: entry.at,
            path: b"x",
            mode: 0o100644,
            oid,
            stat,
        };
        let written = rewrite(&bytes, &parsed, &[change], &HashMap::new()).unwrap();
        std::fs::write(&index, &written).unwrap();
        // Clean by its stat data alone (`diff-files` hashes nothing), and `status` leaves the
        // index as it is: there is nothing to refresh.
        assert_eq!(git(root, &["diff-files", "--name-only"]).trim(), "");
        // Added (there is no commit yet), and the same in the working tree.
        assert_eq!(
            git(root, &["status", "--porcelain", "--", "x"]).trim(),
            "A  x"
        );
        assert_eq!(std::fs::read(&index).unwrap(), written);
        // A later edit is seen.
        std::fs::write(root.join("x"), "three, longer again\n").unwrap();
        assert_eq!(git(root, &["diff-files", "--name-only"]).trim(), "x");
        // A file that changed while it was read keeps no stat data.
        let kept = std::fs::symlink_metadata(root.join("y")).unwrap();
        std::fs::write(root.join("y"), "changed\n").unwrap();
        let changed = std::fs::symlink_metadata(root.join("y")).unwrap();
        assert_eq!(stat_if_same(&kept, &changed), None);
    }

    #[test]
    fn the_offset_varint_reads_as_git_writes_it() {
        assert_eq!(varint(&[0]), Some((0, 1)));
        assert_eq!(varint(&[0x7f]), Some((127, 1)));
        // 128 is written as 0x80 0x00 (the continuation adds one).
        assert_eq!(varint(&[0x80, 0x00]), Some((128, 2)));
        assert_eq!(varint(&[0x81, 0x7f]), Some((383, 2)));
        assert_eq!(varint(&[0x80]), None);
    }
}
