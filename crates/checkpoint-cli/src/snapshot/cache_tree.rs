//! The index's cache tree (its `TREE` extension) for the snapshot's fast path: the tree id git
//! (or the last fast snapshot) recorded for each directory, read so that a snapshot rebuilds only
//! the trees of the directories its changes are under, and written back with those trees, so
//! that the next snapshot finds them valid too.
//!
//! The extension lists its nodes depth first: a directory's name (the root's is empty), NUL,
//! `<entries> <subtrees>\n`, then its tree id when `<entries>` is not `-1` (invalid), then its
//! subtrees.

use std::collections::HashMap;

use crate::snapshot::objects::{Made, Oid};

/// One node of a cache tree: its directory (its path from the top with a slash after it; the
/// root's is empty), how many index entries it covers (`-1`: invalid), how many subtrees it
/// lists, and its tree id when valid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Node<'a> {
    pub(crate) dir: Vec<u8>,
    pub(crate) name: &'a [u8],
    pub(crate) entries: i64,
    pub(crate) subtrees: usize,
    pub(crate) oid: Option<Oid>,
}

/// The nodes of the cache tree `body`, depth first; an error when it is not one whole tree.
pub(crate) fn nodes(body: &[u8]) -> Result<Vec<Node<'_>>, String> {
    let mut nodes = Vec::new();
    // The directories whose subtrees are still to come, and how many.
    let mut open: Vec<(Vec<u8>, usize)> = Vec::new();
    let mut read = 0;
    while read < body.len() {
        let name_end = read
            + body[read..]
                .iter()
                .position(|byte| *byte == 0)
                .ok_or("a cache tree entry runs past the end")?;
        let name = &body[read..name_end];
        let line_end = name_end
            + 1
            + body
                .get(name_end + 1..)
                .and_then(|rest| rest.iter().position(|byte| *byte == b'\n'))
                .ok_or("a cache tree entry runs past the end")?;
        let counts = std::str::from_utf8(&body[name_end + 1..line_end]).unwrap_or_default();
        let (entries, subtrees) = counts
            .split_once(' ')
            .and_then(|(entries, subtrees)| {
                Some((
                    entries.parse::<i64>().ok()?,
                    subtrees.parse::<usize>().ok()?,
                ))
            })
            .ok_or("a cache tree entry with bad counts")?;
        read = line_end + 1;
        let oid = if entries >= 0 {
            let oid: Oid = body
                .get(read..read + 20)
                .ok_or("a cache tree entry runs past the end")?
                .try_into()
                .expect("twenty bytes");
            read += 20;
            Some(oid)
        } else {
            None
        };
        let dir = match open.last_mut() {
            None if nodes.is_empty() => Vec::new(),
            None => return Err("a cache tree longer than its entries".to_owned()),
            Some((parent, left)) => {
                *left -= 1;
                [parent.as_slice(), name, b"/"].concat()
            }
        };
        open.push((dir.clone(), subtrees));
        while open.last().is_some_and(|(_, left)| *left == 0) {
            open.pop();
        }
        nodes.push(Node {
            dir,
            name,
            entries,
            subtrees,
            oid,
        });
    }
    if !open.is_empty() {
        return Err("a cache tree shorter than its subtrees".to_owned());
    }
    Ok(nodes)
}

/// The valid trees of `nodes`: each directory's tree id.
pub(crate) fn valid(nodes: &[Node<'_>]) -> HashMap<Vec<u8>, Oid> {
    nodes
        .iter()
        .filter_map(|node| Some((node.dir.clone(), node.oid?)))
        .collect()
}

/// The cache tree of `nodes` after the entries at `changed` took new ids, no path coming or
/// going: a directory whose tree was `made` takes it (when it lists as many subtrees), another
/// that a changed path is under is invalid, and the others are kept.
pub(crate) fn rewrite(
    nodes: &[Node<'_>],
    changed: &[&[u8]],
    made: &HashMap<Vec<u8>, Made>,
) -> Vec<u8> {
    let mut out = Vec::new();
    for node in nodes {
        out.extend_from_slice(node.name);
        out.push(0);
        let made = made
            .get(&node.dir)
            .filter(|made| made.subtrees == node.subtrees);
        let oid = match made {
            Some(made) => Some((made.entries as i64, made.oid)),
            None if changed.iter().any(|path| path.starts_with(&node.dir)) => None,
            None => node.oid.map(|oid| (node.entries, oid)),
        };
        match oid {
            Some((entries, oid)) => {
                out.extend_from_slice(format!("{entries} {}\n", node.subtrees).as_bytes());
                out.extend_from_slice(&oid);
            }
            None => out.extend_from_slice(format!("-1 {}\n", node.subtrees).as_bytes()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(name: &str, entries: i64, subtrees: usize, oid: Option<u8>) -> Vec<u8> {
        let mut out = format!("{name}\0{entries} {subtrees}\n").into_bytes();
        if let Some(byte) = oid {
            out.extend_from_slice(&[byte; 20]);
        }
        out
    }

    #[test]
    fn nodes_read_depth_first_with_their_directories() {
        // root (2 subtrees: a, b), a (1 subtree: c), a/c, b: invalid.
        let body = [
            node("", 5, 2, Some(1)),
            node("a", 3, 1, Some(2)),
            node("c", 1, 0, Some(3)),
            node("b", -1, 0, None),
        ]
        .concat();
        let read = nodes(&body).unwrap();
        let dirs: Vec<&[u8]> = read.iter().map(|node| node.dir.as_slice()).collect();
        assert_eq!(dirs, [&b""[..], b"a/", b"a/c/", b"b/"]);
        assert_eq!(read[3].oid, None);
        let valid = valid(&read);
        assert_eq!(valid.len(), 3);
        assert_eq!(valid[&b"a/c/"[..]], [3; 20]);
        // Kept as it was when nothing changed.
        assert_eq!(rewrite(&read, &[], &HashMap::new()), body);
        // Cut, or longer than its subtrees: refused.
        assert!(nodes(&body[..body.len() - 3]).is_err());
        assert!(nodes(&[body.clone(), node("x", 1, 0, Some(4))].concat()).is_err());
        assert!(nodes(&node("", 1, 1, Some(1))).is_err());
        assert!(nodes(&b"\0x y\n"[..]).is_err());
    }

    #[test]
    fn a_rewrite_takes_the_trees_made_and_invalidates_the_others_a_change_is_under() {
        let body = [
            node("", 5, 2, Some(1)),
            node("a", 3, 1, Some(2)),
            node("c", 1, 0, Some(3)),
            node("b", 2, 0, Some(4)),
        ]
        .concat();
        let read = nodes(&body).unwrap();
        let made: HashMap<Vec<u8>, Made> = [
            (
                Vec::new(),
                Made {
                    oid: [9; 20],
                    entries: 5,
                    subtrees: 2,
                },
            ),
            // Listed with another number of subtrees: not taken.
            (
                b"a/".to_vec(),
                Made {
                    oid: [8; 20],
                    entries: 3,
                    subtrees: 2,
                },
            ),
        ]
        .into();
        let written = rewrite(&read, &[b"a/c/f", b"a/g"], &made);
        assert_eq!(
            written,
            [
                node("", 5, 2, Some(9)),
                node("a", -1, 1, None),
                node("c", -1, 0, None),
                node("b", 2, 0, Some(4)),
            ]
            .concat()
        );
        // What it writes reads back.
        assert_eq!(nodes(&written).unwrap().len(), 4);
    }
}
