//! What a snapshot left out and why, kept beside the private index by path, size, modification
//! time and inode: a file left out stays listed as untracked at every snapshot, and is not read
//! again (for secrets) while it has not changed.

use std::{collections::HashMap, fs, os::unix::fs::MetadataExt, path::PathBuf};

use crate::snapshot::plumbing::records;

/// The first record of the file: its format, then the size bound the reasons were found with.
const FORMAT: &str = "checkpoint-left-out-1";

/// A file's identity as its metadata gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stamp {
    size: u64,
    mtime_ns: i128,
    ino: u64,
}

impl Stamp {
    pub(crate) fn of(metadata: &fs::Metadata) -> Self {
        Self {
            size: metadata.len(),
            mtime_ns: i128::from(metadata.mtime()) * 1_000_000_000
                + i128::from(metadata.mtime_nsec()),
            ino: metadata.ino(),
        }
    }
}

/// The files left out by the last snapshot, and the ones this one leaves out.
pub(crate) struct ScanCache {
    path: PathBuf,
    bound: u64,
    before: HashMap<Vec<u8>, (Stamp, String)>,
    now: HashMap<Vec<u8>, (Stamp, String)>,
}

impl ScanCache {
    /// The cache at `path`, for files over `bound` bytes left out; empty when it is missing,
    /// unreadable or made with another bound.
    pub(crate) fn load(path: PathBuf, bound: u64) -> Self {
        let mut before = HashMap::new();
        if let Ok(bytes) = fs::read(&path) {
            let mut fields = records(&bytes);
            if fields.next() == Some(format!("{FORMAT} {bound}").as_bytes()) {
                while let (Some(name), Some(size), Some(mtime), Some(ino), Some(why)) = (
                    fields.next(),
                    fields.next(),
                    fields.next(),
                    fields.next(),
                    fields.next(),
                ) {
                    let number = |bytes: &[u8]| std::str::from_utf8(bytes).ok()?.parse().ok();
                    let (Some(size), Some(mtime_ns), Some(ino)) =
                        (number(size), number(mtime), number(ino))
                    else {
                        break;
                    };
                    let stamp = Stamp {
                        size: size as u64,
                        mtime_ns,
                        ino: ino as u64,
                    };
                    before.insert(
                        name.to_vec(),
                        (stamp, String::from_utf8_lossy(why).into_owned()),
                    );
                }
            }
        }
        Self {
            path,
            bound,
            before,
            now: HashMap::new(),
        }
    }

    /// Why `path` was left out, if it was and has not changed since.
    pub(crate) fn get(&self, path: &[u8], stamp: Stamp) -> Option<String> {
        self.before
            .get(path)
            .filter(|(known, _)| *known == stamp)
            .map(|(_, why)| why.clone())
    }

    /// Notes that this snapshot left `path` out.
    pub(crate) fn put(&mut self, path: &[u8], stamp: Stamp, why: &str) {
        self.now.insert(path.to_vec(), (stamp, why.to_owned()));
    }

    /// Writes what this snapshot left out, when it differs from what the last one did; an error
    /// only costs the next snapshot a read.
    pub(crate) fn save(self) {
        if self.now == self.before {
            return;
        }
        if self.now.is_empty() {
            let _ = fs::remove_file(&self.path);
            return;
        }
        let mut bytes = format!("{FORMAT} {}\0", self.bound).into_bytes();
        for (name, (stamp, why)) in &self.now {
            bytes.extend_from_slice(name);
            bytes.push(0);
            let why = if why.is_empty() { "left out" } else { why };
            bytes.extend_from_slice(
                format!(
                    "{}\0{}\0{}\0{}\0",
                    stamp.size, stamp.mtime_ns, stamp.ino, why
                )
                .as_bytes(),
            );
        }
        let temp = self.path.with_extension("leftout.new");
        if fs::write(&temp, &bytes).is_ok() {
            let _ = fs::rename(&temp, &self.path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_left_out_file_is_known_until_it_changes_or_the_bound_does() {
        let dir = assert_fs::TempDir::new().unwrap();
        let file = dir.path().join("big.bin");
        fs::write(&file, b"secret-ish").unwrap();
        let stamp = Stamp::of(&fs::symlink_metadata(&file).unwrap());
        let cache_path = dir.path().join("wf.leftout");
        let mut cache = ScanCache::load(cache_path.clone(), 10);
        assert_eq!(cache.get(b"big.bin", stamp), None);
        cache.put(b"big.bin", stamp, "it looks like a secret");
        cache.put(b"odd\nname \xff", stamp, "it is larger than the bound");
        cache.save();
        let cache = ScanCache::load(cache_path.clone(), 10);
        assert_eq!(
            cache.get(b"big.bin", stamp).as_deref(),
            Some("it looks like a secret")
        );
        assert_eq!(
            cache.get(b"odd\nname \xff", stamp).as_deref(),
            Some("it is larger than the bound")
        );
        // Changed since: read again.
        let changed = Stamp {
            size: stamp.size + 1,
            ..stamp
        };
        assert_eq!(cache.get(b"big.bin", changed), None);
        let touched = Stamp {
            mtime_ns: stamp.mtime_ns + 1,
            ..stamp
        };
        assert_eq!(cache.get(b"big.bin", touched), None);
        // Another bound: every reason is found again.
        assert_eq!(
            ScanCache::load(cache_path.clone(), 11).get(b"big.bin", stamp),
            None
        );
        // Nothing left out any more: the file goes.
        ScanCache::load(cache_path.clone(), 10).save();
        assert!(!cache_path.exists());
    }
}
