//! Control characters in user text, bidirectional ones included, are escaped in every human
//! view and in the HTML report; JSON keeps the text whole.

use std::fs;

use crate::support::TestEnv;

#[test]
fn control_characters_in_user_text_are_escaped_in_human_output() {
    let env = TestEnv::new();
    let hostile = "ok\u{1b}]0;pwned\u{7}\u{1b}[2J\rfake line\u{9b}31m";
    env.ok(&["init", "w", "--phase", "a", "--title", hostile]);
    env.ok(&["start", "a"]);
    env.ok(&["note", hostile]);
    env.ok(&["progress", "a", hostile]);
    for args in [
        &["status"][..],
        &["log"],
        &["list"],
        &["resume", "--dry-run"],
        &["fail", "a", "--reason", hostile],
    ] {
        let output = env.run(args);
        for stream in [&output.stdout, &output.stderr] {
            let text = String::from_utf8_lossy(stream);
            assert!(
                !text.contains(['\u{1b}', '\u{7}', '\r', '\u{9b}']),
                "{args:?} printed a raw control character: {text:?}"
            );
        }
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            args == ["list"]
                || stdout.contains(r"ok\u{1b}]0;pwned\u{7}\u{1b}[2J\rfake line\u{9b}31m"),
            "{args:?}: {stdout}"
        );
    }
    // With colour, only the colour sequences `checkpoint` writes stay raw.
    let coloured = env.ok(&["--color", "always", "status"]);
    assert!(
        coloured.contains("\u{1b}[") && coloured.contains("\u{1b}[0m"),
        "{coloured:?}"
    );
    assert!(
        !coloured.contains("\u{1b}]")
            && !coloured.contains("\u{1b}[2J")
            && !coloured.contains('\r'),
        "{coloured:?}"
    );
    // JSON is unaffected: the text comes back as it was written.
    let json = env.json(&["status"]);
    assert_eq!(json["workflow"]["context"]["notes"][0]["text"], hostile);
}

/// Issue 26: the bidirectional controls (embeddings, overrides, isolates, marks) reorder what
/// a terminal or a browser shows; every human view and the HTML report show them as escapes,
/// as the other control characters, and JSON keeps the text whole.
#[test]
fn bidirectional_controls_in_user_text_are_escaped_in_every_view() {
    let controls = [
        '\u{202a}', '\u{202b}', '\u{202c}', '\u{202d}', '\u{202e}', '\u{2066}', '\u{2067}',
        '\u{2068}', '\u{2069}', '\u{200e}', '\u{200f}', '\u{061c}',
    ];
    let hostile: String = controls
        .iter()
        .map(|c| format!("x{c}y"))
        .collect::<Vec<_>>()
        .join(" ");
    let env = TestEnv::new();
    env.ok(&[
        "init", "w", "--phase", "a", "--phase", "b:a", "--title", &hostile,
    ]);
    env.ok(&["start", "a"]);
    env.ok(&["note", &hostile]);
    env.ok(&["progress", "a", &hostile]);
    env.ok(&["complete", "a"]);
    env.ok(&["start", "b"]);
    env.ok(&["fail", "b", "--reason", &hostile]);
    env.ok(&["pause", "--reason", &hostile]);
    let expected = r"x\u{202e}y";
    for args in [
        &["status"][..],
        &["log"],
        &["list"],
        &["report"],
        &["watch", "--once"],
        &["resume", "--dry-run"],
        &["--color", "always", "status"],
        &["--color", "always", "log"],
    ] {
        let output = env.run(args);
        for stream in [&output.stdout, &output.stderr] {
            let text = String::from_utf8_lossy(stream);
            assert!(
                !text.contains(controls),
                "{args:?} printed a raw bidirectional control: {text:?}"
            );
        }
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            args == ["list"] || stdout.contains(expected),
            "{args:?}: {stdout}"
        );
    }
    env.ok(&["report", "--html", "night.html"]);
    let page = fs::read_to_string(env.project().join("night.html")).unwrap();
    assert!(!page.contains(controls), "raw in the HTML report");
    assert!(page.contains(expected), "{page}");
    let json = env.json(&["status"]);
    assert_eq!(
        json["workflow"]["context"]["notes"][0]["text"],
        hostile.as_str()
    );
}

/// Views laid out one line per entry (`log`, the `report` text) show a newline or a tab of a
/// note, a reason or a title as `\n` and `\t`: every entry stays on its line, whatever text it
/// holds, and the text is whole in JSON.
#[test]
fn newlines_and_tabs_in_user_text_keep_log_and_report_one_line_per_entry() {
    let env = TestEnv::new();
    let multiline = "first line\nsecond\tcolumn\n";
    env.ok(&["init", "w", "--phase", "a", "--title", multiline]);
    env.ok(&["start", "a"]);
    env.ok(&["progress", "a", multiline]);
    env.ok(&["fail", "a", "--reason", multiline]);
    let entries = env.json(&["log"])["entries"].as_array().unwrap().len();
    for args in [&["log"][..], &["log", "--full"], &["report"]] {
        let text = env.ok(args);
        assert!(!text.contains('\t'), "{args:?} printed a raw tab: {text:?}");
        assert!(
            text.contains(r"first line\nsecond\tcolumn"),
            "{args:?}: {text}"
        );
        for line in text.lines() {
            assert!(
                !line.starts_with("second"),
                "{args:?}: a note broke the layout: {text}"
            );
        }
        if args[0] == "log" {
            assert_eq!(text.lines().count(), entries, "{args:?}: {text}");
        }
    }
    let json = env.json(&["log"]);
    assert!(json.to_string().contains(r#"first line\nsecond\tcolumn\n"#));
}
