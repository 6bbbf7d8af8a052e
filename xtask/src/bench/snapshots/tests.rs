//! Tests of the snapshots' cases: the snapshot number read from `snapshot --format json`, the
//! walk of `.git/objects`, the growth note's arithmetic, and which cases a quick run leaves out.

use std::process::Command;

use serde_json::json;

use super::*;

/// What `SNAPSHOT_N` prints for `text` on its stdin.
fn snapshot_n(text: &str) -> String {
    let output = Command::new("sh")
        .args([
            "-c",
            &format!("printf '%s' \"$1\" | {SNAPSHOT_N}"),
            "sh",
            text,
        ])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    String::from_utf8(output.stdout).unwrap()
}

/// A document shaped as `checkpoint snapshot --format json` prints it.
fn document(n: u64, created: bool, label: &str, paths: &[&str]) -> serde_json::Value {
    json!({
        "version": 1,
        "created": created,
        "snapshot": {
            "n": n,
            "commit": "3a92e7e40c4398b4e9476ddefe328b2c5503b007",
            "at": "2026-11-27T19:58:57.417631374Z",
            "reason": "manual",
            "label": label,
            "phase": null,
            "session": null,
            "agent": null,
            "files_changed": paths.len(),
            "paths": paths,
            "added": 12,
            "removed": 3,
            "seq": 40,
        },
        "left_out": [],
    })
}

#[test]
fn the_snapshot_number_is_read_pretty_or_compact_created_or_not() {
    for n in [1, 7, 10, 1234, 100_000] {
        for created in [true, false] {
            let doc = document(n, created, "a label", &["d0/f0.txt", "a b/c\nd.txt"]);
            let pretty = serde_json::to_string_pretty(&doc).unwrap();
            let compact = doc.to_string();
            for text in [pretty, compact] {
                assert_eq!(snapshot_n(&format!("{text}\n")), n.to_string(), "{text}");
            }
        }
    }
}

#[test]
fn the_snapshot_number_is_not_taken_from_a_label_or_a_path() {
    let tricky = r#""snapshot":{"n":99,"#;
    let doc = document(5, true, tricky, &[tricky, "seq"]);
    assert_eq!(
        snapshot_n(&serde_json::to_string_pretty(&doc).unwrap()),
        "5"
    );
}

#[test]
fn no_snapshot_number_prints_nothing() {
    for text in [
        "",
        "error: no workflow\n",
        r#"{"version":1,"created":false,"snapshot":null}"#,
        r#"{"snapshot":{"n":"x"}}"#,
    ] {
        assert_eq!(snapshot_n(text), "", "{text}");
    }
}

#[test]
fn objects_counts_every_file_and_the_loose_ones() {
    let dir = tempfile::tempdir().unwrap();
    let objects = dir.path().join("objects");
    let files = [
        ("ab/cdef01", 3),
        ("ab/cdef02", 4),
        ("0f/aa", 5),
        ("pack/pack-1.pack", 100),
        ("pack/pack-1.idx", 10),
        ("info/commit-graph", 7),
        // Not a fan-out directory: not hex, or three characters, or one level down.
        ("zz/x", 1),
        ("abc/x", 1),
        ("pack/ab/x", 1),
    ];
    for (path, len) in files {
        let path = objects.join(path);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, vec![b'x'; len]).unwrap();
    }
    assert_eq!(
        Objects::of(&objects).unwrap(),
        Objects {
            bytes: 132,
            loose: 3
        }
    );
    fs::create_dir_all(dir.path().join("empty")).unwrap();
    assert_eq!(
        Objects::of(&dir.path().join("empty")).unwrap(),
        Objects { bytes: 0, loose: 0 }
    );
    assert!(Objects::of(&dir.path().join("missing")).is_err());
}

#[test]
fn the_growth_note_gives_the_bytes_and_objects_added_and_per_snapshot() {
    let growth = Growth {
        base: Objects {
            bytes: 1_000_000,
            loose: 0,
        },
        grown: Objects {
            bytes: 1_250_000,
            loose: 2_200,
        },
        packed: Objects {
            bytes: 1_030_000,
            loose: 0,
        },
    };
    let note = growth.note();
    assert!(note.contains("added 250,000 bytes"), "{note}");
    assert!(note.contains("(2,500 a snapshot)"), "{note}");
    assert!(
        note.contains("in 2,200 loose objects (22 a snapshot"),
        "{note}"
    );
    assert!(note.contains("11 trees"), "{note}");
    assert!(note.contains("30,000 bytes over the fixture"), "{note}");
    assert!(note.contains("(300 a snapshot)."), "{note}");
}

#[test]
fn a_growth_below_the_base_counts_as_none() {
    let same = Objects {
        bytes: 500,
        loose: 4,
    };
    let note = Growth {
        base: same,
        grown: Objects {
            bytes: 400,
            loose: 1,
        },
        packed: Objects { bytes: 0, loose: 0 },
    }
    .note();
    assert!(note.contains("added 0 bytes"), "{note}");
    assert!(note.contains("in 0 loose objects (0 a snapshot"), "{note}");
    assert!(note.contains(", 0 bytes over the fixture"), "{note}");
}

#[test]
fn a_quick_run_leaves_out_only_the_slow_cases_unless_filtered() {
    let only = |wanted: &'static str| move |key: &str| key.contains(wanted);
    let everything = |_: &str| true;
    // A quick run without `--filter` still has the fast cases.
    assert!(wanted(&everything, false));
    for key in ["snapshot/100000/first", "snapshot/100000/stop-first"] {
        assert!(is_slow(key), "{key}");
        assert!(!wanted(&only(key), false), "{key}");
        assert!(wanted(&only(key), true), "{key}");
    }
    for key in [
        "snapshot/10000/first",
        "snapshot/10000/undo-1000",
        "snapshot/10000/redo-1000",
        "snapshot/100000/stop-10",
        "snapshot/100000/status",
    ] {
        assert!(!is_slow(key), "{key}");
        assert!(wanted(&only(key), false), "{key}");
    }
    assert!(!wanted(&only("list/"), true));
}
