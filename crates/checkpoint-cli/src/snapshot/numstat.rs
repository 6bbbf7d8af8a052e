//! The lines each file of a fast snapshot gained and lost, counted in-process where every diff
//! gives the same count as `git diff-tree --numstat`: a file added or removed (all its lines),
//! a mode change alone (none), a binary file on either side (`-`, a NUL in the first 8,000
//! bytes, as git decides), and a change that is one run of lines replaced by lines none of which
//! it removed (after the lines both versions start and end with: an append, a truncation, a
//! line or a block rewritten). Anything else (lines moved or kept between the changed ones, a
//! link or a submodule, an old version not a loose object) is git's to count: the caller runs
//! `git diff-tree`, whose Myers diff with its heuristics this does not reproduce.

use std::{collections::HashSet, fs, io::Read, path::Path};

use crate::snapshot::objects::{Oid, hex};

/// How far git looks for a NUL to call a file binary (`FIRST_FEW_BYTES`).
const BINARY_PROBE: usize = 8000;
/// Past this size git may call a file binary by its settings (`core.bigFileThreshold`, whose
/// default is 512 MiB): git counts.
const LARGEST: usize = 64 << 20;
/// A regular file's modes; links and submodules are git's to count.
const FILE_MODES: [u32; 2] = [0o100644, 0o100755];

/// One changed path: its mode and id before and after (none: absent).
pub(crate) struct Change<'a> {
    pub(crate) path: &'a [u8],
    pub(crate) old: Option<(u32, Oid)>,
    pub(crate) new: Option<(u32, Oid)>,
}

/// The `git diff-tree -r -z --numstat --no-renames` output for `changes` (sorted by path, as
/// git lists them), the bodies of new blobs given by `new_body` and the old ones read from the
/// loose objects under `objects`; none when git must count.
pub(crate) fn count(
    objects: &Path,
    changes: &[Change<'_>],
    new_body: &dyn Fn(&Oid) -> Option<Vec<u8>>,
) -> Option<Vec<u8>> {
    let mut sorted: Vec<&Change<'_>> = changes.iter().collect();
    sorted.sort_by(|a, b| a.path.cmp(b.path));
    let mut output = Vec::new();
    for change in sorted {
        let body = |side: Option<(u32, Oid)>, old: bool| -> Option<Vec<u8>> {
            match side {
                None => Some(Vec::new()),
                Some((mode, _)) if !FILE_MODES.contains(&mode) => None,
                Some((_, oid)) if old => loose_blob(objects, &oid),
                Some((_, oid)) => new_body(&oid),
            }
        };
        let before = body(change.old, true)?;
        let after = body(change.new, false)?;
        if before.len().max(after.len()) > LARGEST {
            return None;
        }
        let counted = if is_binary(&before) || is_binary(&after) {
            "-\t-".to_owned()
        } else if change.old.map(|(_, oid)| oid) == change.new.map(|(_, oid)| oid) {
            "0\t0".to_owned()
        } else {
            let (added, removed) = lines_changed(&before, &after)?;
            format!("{added}\t{removed}")
        };
        output.extend_from_slice(counted.as_bytes());
        output.push(b'\t');
        output.extend_from_slice(change.path);
        output.push(0);
    }
    Some(output)
}

/// Whether git calls `body` binary: a NUL in its first 8,000 bytes.
fn is_binary(body: &[u8]) -> bool {
    body[..body.len().min(BINARY_PROBE)].contains(&0)
}

/// The lines added and removed from `before` to `after` when every diff agrees on them: past
/// the lines both start and end with, one side's run is empty or shares no line with the
/// other's (no diff can keep a line of it, and git's trims the same ends first). A line ends
/// after its newline; the last one may have none (and then differs from the same text with
/// one, as git says "\ No newline at end of file").
fn lines_changed(before: &[u8], after: &[u8]) -> Option<(usize, usize)> {
    let old: Vec<&[u8]> = before.split_inclusive(|byte| *byte == b'\n').collect();
    let new: Vec<&[u8]> = after.split_inclusive(|byte| *byte == b'\n').collect();
    let shortest = old.len().min(new.len());
    let prefix = old.iter().zip(&new).take_while(|(a, b)| a == b).count();
    let suffix = old
        .iter()
        .rev()
        .zip(new.iter().rev())
        .take(shortest - prefix)
        .take_while(|(a, b)| a == b)
        .count();
    let old_run = &old[prefix..old.len() - suffix];
    let new_run = &new[prefix..new.len() - suffix];
    if !old_run.is_empty() && !new_run.is_empty() {
        let removed: HashSet<&[u8]> = old_run.iter().copied().collect();
        if new_run.iter().any(|line| removed.contains(line)) {
            return None;
        }
    }
    Some((new_run.len(), old_run.len()))
}

/// The body of the blob `oid` when it is a loose object under `objects`; none when it is
/// packed, elsewhere or unreadable (git then counts).
fn loose_blob(objects: &Path, oid: &Oid) -> Option<Vec<u8>> {
    let name = hex(oid);
    let file = fs::File::open(objects.join(&name[..2]).join(&name[2..])).ok()?;
    let mut inflated = Vec::new();
    flate2::read::ZlibDecoder::new(file)
        .take(LARGEST as u64 + 64)
        .read_to_end(&mut inflated)
        .ok()?;
    let nul = inflated.iter().position(|byte| *byte == 0)?;
    let size: usize = std::str::from_utf8(inflated[..nul].strip_prefix(b"blob ")?)
        .ok()?
        .parse()
        .ok()?;
    let body = inflated.split_off(nul + 1);
    (body.len() == size).then_some(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::snapshot::objects;

    fn git(dir: &Path, args: &[&str], input: Option<&[u8]>) -> Vec<u8> {
        use std::{
            io::Write,
            process::{Command, Stdio},
        };
        let mut child = Command::new("git")
            .current_dir(dir)
            .args(args)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(input.unwrap_or_default()).unwrap();
        drop(stdin);
        let output = child.wait_with_output().unwrap();
        assert!(output.status.success(), "git {args:?}");
        output.stdout
    }

    /// A random edit of `lines` (few distinct lines, so that repeats are common).
    fn edit(rng: &mut fastrand::Rng, lines: &mut Vec<String>) {
        let pick = |rng: &mut fastrand::Rng| {
            [
                "a\n",
                "b\n",
                "\n",
                "}\n",
                "fn x() {\n",
                "c",
                "tail",
                "\0bin\n",
            ][rng.usize(..8)]
            .to_owned()
        };
        let at = rng.usize(..=lines.len());
        match rng.u8(..7) {
            0 => lines.push(pick(rng)),
            1 => lines.truncate(at),
            2 if at < lines.len() => lines[at] = pick(rng),
            3 => {
                for _ in 0..rng.usize(1..4) {
                    lines.insert(at, pick(rng));
                }
            }
            4 if at < lines.len() => {
                let end = rng.usize(at..=lines.len());
                lines.drain(at..end);
            }
            5 if lines.len() > 1 => {
                let last = lines.len() - 1;
                lines.swap(0, last);
            }
            _ => {
                for line in lines.iter_mut().skip(at).step_by(3) {
                    *line = pick(rng);
                }
            }
        }
    }

    #[test]
    fn counts_agree_with_git_diff_tree_over_random_edits() {
        let dir = assert_fs::TempDir::new().unwrap();
        let root = dir.path();
        git(root, &["init", "-q"], None);
        let objects = root.join(".git/objects");
        let mut rng = fastrand::Rng::with_seed(41);
        let (mut counted, mut total) = (0, 0);
        let mut changes = Vec::new();
        let mut bodies = std::collections::HashMap::new();
        for round in 0..6 {
            let mut old_tree = String::new();
            let mut new_tree = String::new();
            changes.clear();
            let mut paths = Vec::new();
            for i in 0..40 {
                let mut lines: Vec<String> = (0..rng.usize(0..12))
                    .map(|_| ["a\n", "b\n", "\n", "}\n", "x\n"][rng.usize(..5)].to_owned())
                    .collect();
                let before = lines.concat();
                for _ in 0..rng.usize(1..3) {
                    edit(&mut rng, &mut lines);
                }
                let after = lines.concat();
                // Written as the last snapshot wrote them: loose.
                let hash = |body: &str| {
                    let blob = objects::Object::new("blob", body.as_bytes().to_vec());
                    let oid = blob.oid;
                    objects::write_loose(&objects, &[blob]).unwrap();
                    (hex(&oid), oid)
                };
                let (old_hex, old_oid) = hash(&before);
                let (new_hex, new_oid) = hash(&after);
                bodies.insert(new_oid, after.clone().into_bytes());
                // Some added, some removed, some a mode change.
                let (old_mode, new_mode) = match i % 10 {
                    0 => (None, Some(0o100644)),
                    1 => (Some(0o100644), None),
                    2 => (Some(0o100644), Some(0o100755)),
                    _ => (Some(0o100644), Some(0o100644)),
                };
                paths.push(format!("r{round}/f{i:02}"));
                if let Some(mode) = old_mode {
                    old_tree.push_str(&format!("{mode:o} blob {old_hex}\tf{i:02}\n"));
                }
                if let Some(mode) = new_mode {
                    new_tree.push_str(&format!("{mode:o} blob {new_hex}\tf{i:02}\n"));
                }
                changes.push((
                    i,
                    old_mode.map(|mode| (mode, old_oid)),
                    new_mode.map(|mode| (mode, new_oid)),
                ));
            }
            let tree = |listing: &str| {
                let hex = git(root, &["mktree"], Some(listing.as_bytes()));
                String::from_utf8(hex).unwrap().trim().to_owned()
            };
            let (old_tree, new_tree) = (tree(&old_tree), tree(&new_tree));
            let theirs = git(
                root,
                &[
                    "diff-tree",
                    "-r",
                    "-z",
                    "--numstat",
                    "--no-renames",
                    &old_tree,
                    &new_tree,
                ],
                None,
            );
            let theirs: std::collections::HashMap<Vec<u8>, Vec<u8>> = theirs
                .split(|byte| *byte == 0)
                .filter(|record| !record.is_empty())
                .map(|record| {
                    let split = record.iter().rposition(|byte| *byte == b'\t').unwrap();
                    (record[split + 1..].to_vec(), record[..split].to_vec())
                })
                .collect();
            let names: Vec<String> = (0..40).map(|i| format!("f{i:02}")).collect();
            for (i, old, new) in &changes {
                if old == new {
                    continue;
                }
                total += 1;
                let one = [Change {
                    path: names[*i].as_bytes(),
                    old: *old,
                    new: *new,
                }];
                let Some(ours) = count(&objects, &one, &|oid| bodies.get(oid).cloned()) else {
                    continue;
                };
                counted += 1;
                let ours = ours.strip_suffix(&[0][..]).unwrap();
                let expected = [
                    theirs[names[*i].as_bytes()].as_slice(),
                    b"\t",
                    names[*i].as_bytes(),
                ]
                .concat();
                assert_eq!(
                    String::from_utf8_lossy(ours),
                    String::from_utf8_lossy(&expected),
                    "round {round}, {}: {:?}",
                    paths[*i],
                    (old, new)
                );
            }
        }
        // Most edits are counted here, not by git.
        assert!(counted * 2 > total, "{counted} of {total}");
        // Git's order: by path, bytewise.
        let body = |_: &Oid| Some(b"x\n".to_vec());
        let blob = objects::oid_of("blob", b"x\n");
        let listed = count(
            &objects,
            &[
                Change {
                    path: b"a0",
                    old: None,
                    new: Some((0o100644, blob)),
                },
                Change {
                    path: b"a/b",
                    old: None,
                    new: Some((0o100644, blob)),
                },
                Change {
                    path: b"a.b",
                    old: None,
                    new: Some((0o100644, blob)),
                },
            ],
            &body,
        )
        .unwrap();
        assert_eq!(listed, b"1\t0\ta.b\x001\t0\ta/b\x001\t0\ta0\x00");
        // A link, or an old version git packed: git counts.
        let link = Change {
            path: b"l",
            old: None,
            new: Some((0o120000, blob)),
        };
        assert_eq!(count(&objects, &[link], &body), None);
        git(root, &["gc", "-q", "--prune=now"], None);
        let (_, old, new) = changes
            .iter()
            .find(|(_, old, new)| old.is_some() && new.is_some() && old != new)
            .unwrap();
        let packed = Change {
            path: b"p",
            old: *old,
            new: *new,
        };
        assert_eq!(
            count(&objects, &[packed], &|oid| bodies.get(oid).cloned()),
            None
        );
    }

    #[test]
    fn only_changes_every_diff_counts_alike_are_counted() {
        let counted = |a: &str, b: &str| lines_changed(a.as_bytes(), b.as_bytes());
        // Appended, truncated, a line rewritten, a block for another, at either end.
        assert_eq!(counted("a\nb\n", "a\nb\nc\nd\n"), Some((2, 0)));
        assert_eq!(counted("a\nb\nc\n", "a\n"), Some((0, 2)));
        assert_eq!(counted("a\nb\nc\n", "a\nB\nc\n"), Some((1, 1)));
        assert_eq!(counted("a\nb\nc\nd\n", "a\nX\nY\nZ\nd\n"), Some((3, 2)));
        assert_eq!(counted("a\nb\n", "z\na\nb\n"), Some((1, 0)));
        assert_eq!(counted("", "a\nb"), Some((2, 0)));
        assert_eq!(counted("a\nb\n", ""), Some((0, 2)));
        // The last line's newline is part of it.
        assert_eq!(counted("a\nb", "a\nb\n"), Some((1, 1)));
        assert_eq!(counted("a\nb\n", "a\nb"), Some((1, 1)));
        // A repeated line at the edge of the run: still one run, counted once.
        assert_eq!(counted("a\n", "a\na\n"), Some((1, 0)));
        assert_eq!(counted("x\nx\nx\n", "x\n"), Some((0, 2)));
        // Lines kept between two changes, or moved: git's diff decides.
        assert_eq!(counted("a\nb\nc\n", "A\nb\nC\n"), None);
        assert_eq!(counted("a\nb\n", "b\na\n"), None);
        assert!(is_binary(b"a\0b") && !is_binary(&[b'a'; 9000]));
        let mut late = vec![b'a'; BINARY_PROBE];
        late.push(0);
        assert!(!is_binary(&late));
    }
}
