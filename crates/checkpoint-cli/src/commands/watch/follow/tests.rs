//! Tests of the follower: appends, torn lines, lines that are not the next entry and their
//! removal by the store, and journals replaced, cut back or rewritten by other writers.

use std::{fs, io::Write as _, path::Path};

use checkpoint_core::{Transition, journal::Entry};
use chrono::{TimeZone, Utc};

use super::{Change, Follower};

/// The journal line of entry `seq`, a note `text`.
fn line(seq: u64, text: &str) -> String {
    Entry {
        seq,
        at: Utc.with_ymd_and_hms(2026, 3, 1, 12, 0, 0).unwrap(),
        transition: Transition::Note {
            text: text.to_owned(),
        },
    }
    .to_line()
}

fn append(path: &Path, text: &str) {
    let mut file = fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .unwrap();
    file.write_all(text.as_bytes()).unwrap();
}

/// The journal cut where its `n`-th line starts, as the store moves a last line aside.
fn cut_at_line(path: &Path, n: usize) {
    let bytes = fs::read(path).unwrap();
    let offset: usize = bytes
        .split_inclusive(|&b| b == b'\n')
        .take(n - 1)
        .map(<[u8]>::len)
        .sum();
    let file = fs::OpenOptions::new().write(true).open(path).unwrap();
    file.set_len(offset as u64).unwrap();
}

/// The journal made `text`: rewritten `in_place`, or replaced by another file (as a pull does).
fn rewrite(path: &Path, text: &str, in_place: bool) {
    if in_place {
        fs::write(path, text).unwrap();
    } else {
        let copy = path.with_extension("copy");
        fs::write(&copy, text).unwrap();
        fs::rename(&copy, path).unwrap();
    }
}

/// Reads once; returns the entries' numbers, the change, and how many bad lines were reported.
fn read(follower: &mut Follower) -> (Vec<u64>, Option<Change>, usize) {
    let read = follower.read_new().unwrap();
    let seqs = read.entries.iter().map(|entry| entry.seq).collect();
    (seqs, read.change, read.bad_lines.len())
}

fn journal() -> (assert_fs::TempDir, std::path::PathBuf) {
    let dir = assert_fs::TempDir::new().unwrap();
    let path = dir.path().join("journal.jsonl");
    (dir, path)
}

#[test]
fn appends_are_read_once_and_a_torn_line_once_whole() {
    let (_dir, path) = journal();
    let mut follower = Follower::new(&path);
    assert_eq!(read(&mut follower), (vec![], None, 0), "no journal yet");
    append(&path, &(line(1, "a") + &line(2, "b")));
    assert_eq!(read(&mut follower), (vec![1, 2], None, 0));
    assert_eq!(read(&mut follower), (vec![], None, 0));
    let third = line(3, "c");
    append(&path, &third[..10]);
    assert_eq!(read(&mut follower), (vec![], None, 0), "a torn line waits");
    append(&path, &third[10..]);
    assert_eq!(read(&mut follower), (vec![3], None, 0));
    assert_eq!(follower.last_seq(), Some(3));
}

/// Issue 25: a line numbered 999 after entry 2 is not shown; the store moves it aside and
/// writes entry 3 where it was (a shorter or a longer line), then 4 and 5: all are shown.
#[test]
fn a_foreign_last_line_moved_aside_by_the_store_is_followed_by_the_next_entries() {
    for foreign in [
        line(999, "x"),
        line(999, &"long ".repeat(200)),
        line(2, "a step back"),
        line(1, "the first again"),
        line(3, "a gap to 4").replace("\"seq\":3", "\"seq\":4"),
        "not json at all\n".to_owned(),
        "{\"seq\":3}\n".to_owned(),
        "[]\n".to_owned(),
    ] {
        let (_dir, path) = journal();
        let mut follower = Follower::new(&path);
        append(&path, &(line(1, "a") + &line(2, "b")));
        assert_eq!(read(&mut follower), (vec![1, 2], None, 0));
        append(&path, &foreign);
        assert_eq!(read(&mut follower), (vec![], None, 1), "{foreign}");
        assert!(follower.foreign_tail().is_some());
        assert_eq!(read(&mut follower), (vec![], None, 0), "reported once");
        cut_at_line(&path, 3);
        assert_eq!(read(&mut follower), (vec![], None, 0), "cut: {foreign}");
        append(&path, &line(3, "c"));
        assert_eq!(read(&mut follower), (vec![3], None, 0), "{foreign}");
        assert_eq!(follower.foreign_tail(), None);
        append(&path, &(line(4, "d") + &line(5, "e")));
        assert_eq!(read(&mut follower), (vec![4, 5], None, 0), "{foreign}");
    }
}

/// The same, when the watch reads only after the store cut the line and appended entry 3,
/// or never saw the foreign line at all.
#[test]
fn a_foreign_line_cut_between_two_reads_is_never_shown() {
    let (_dir, path) = journal();
    let mut follower = Follower::new(&path);
    append(&path, &(line(1, "a") + &line(2, "b") + &line(999, "x")));
    assert_eq!(read(&mut follower), (vec![1, 2], None, 1));
    cut_at_line(&path, 3);
    append(&path, &(line(3, &"c".repeat(500)) + &line(4, "d")));
    assert_eq!(read(&mut follower), (vec![3, 4], None, 0));
}

/// A line that is not an entry followed by entries: reported once, and the entries after it
/// that follow the last one are shown.
#[test]
fn a_bad_line_followed_by_entries_is_reported_once() {
    let (_dir, path) = journal();
    let mut follower = Follower::new(&path);
    append(&path, &(line(1, "a") + "garbage\n"));
    assert_eq!(read(&mut follower), (vec![1], None, 1));
    append(&path, &line(2, "b"));
    assert_eq!(read(&mut follower), (vec![2], None, 0));
    append(&path, &line(3, "c"));
    assert_eq!(read(&mut follower), (vec![3], None, 0));
}

#[test]
fn a_replaced_journal_with_the_same_entries_repeats_none() {
    let (_dir, path) = journal();
    let mut follower = Follower::new(&path);
    append(&path, &(line(1, "a") + &line(2, "b")));
    assert_eq!(read(&mut follower), (vec![1, 2], None, 0));
    rewrite(
        &path,
        &(line(1, "a") + &line(2, "b") + &line(3, "c")),
        false,
    );
    assert_eq!(read(&mut follower), (vec![3], Some(Change::Replaced), 0));
    append(&path, &line(4, "d"));
    assert_eq!(read(&mut follower), (vec![4], None, 0));
}

/// A journal whose old entries were dropped (it starts later) continues where it was.
#[test]
fn a_replaced_journal_that_starts_later_repeats_none() {
    let (_dir, path) = journal();
    let mut follower = Follower::new(&path);
    append(&path, &(line(1, "a") + &line(2, "b") + &line(3, "c")));
    assert_eq!(read(&mut follower), (vec![1, 2, 3], None, 0));
    rewrite(&path, &(line(3, "c") + &line(4, "d")), false);
    assert_eq!(read(&mut follower), (vec![4], Some(Change::Replaced), 0));
}

/// Another writer's history from entry 2 on (a pull that kept theirs): shown as it now is.
#[test]
fn a_journal_rewritten_from_an_entry_shows_the_entries_as_they_now_are() {
    for in_place in [false, true] {
        let (_dir, path) = journal();
        let mut follower = Follower::new(&path);
        append(&path, &(line(1, "a") + &line(2, "b") + &line(3, "c")));
        assert_eq!(read(&mut follower), (vec![1, 2, 3], None, 0));
        let theirs = line(1, "a") + &line(2, "theirs b") + &line(3, "theirs c") + &line(4, "d");
        rewrite(&path, &theirs, in_place);
        assert_eq!(
            read(&mut follower),
            (vec![2, 3, 4], Some(Change::Rewritten { from: 2 }), 0),
            "in place: {in_place}"
        );
        append(&path, &line(5, "e"));
        assert_eq!(read(&mut follower), (vec![5], None, 0));
    }
}

/// A journal cut back (shortened in place, emptied, or replaced by a shorter one): the
/// entries written after are shown, even with numbers shown before.
#[test]
fn a_journal_cut_back_is_followed_from_where_it_ends() {
    for (keep, to) in [(1, Some(1)), (0, None)] {
        for in_place in [false, true] {
            let (_dir, path) = journal();
            let mut follower = Follower::new(&path);
            append(&path, &(line(1, "a") + &line(2, "b") + &line(3, "c")));
            assert_eq!(read(&mut follower), (vec![1, 2, 3], None, 0));
            let kept = if keep == 1 {
                line(1, "a")
            } else {
                String::new()
            };
            rewrite(&path, &kept, in_place);
            assert_eq!(
                read(&mut follower),
                (vec![], Some(Change::CutBack { to }), 0),
                "keep {keep}, in place: {in_place}"
            );
            let next = if keep == 1 {
                line(2, "new b")
            } else {
                line(1, "new a")
            };
            append(&path, &next);
            assert_eq!(
                read(&mut follower),
                (vec![keep + 1], None, 0),
                "keep {keep}, in place: {in_place}"
            );
        }
    }
}
