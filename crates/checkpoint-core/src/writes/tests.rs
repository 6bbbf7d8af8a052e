//! The write guard's rule, claims and liveness, over every kind of writer and file state.

use chrono::{DateTime, Duration, TimeZone, Utc};

use super::*;

fn at(minute: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 11, 27, 10, minute, 0).unwrap()
}

fn write(writer: &Writer, hash: &str, minute: u32, tool: &str) -> Write {
    Write {
        at: at(minute),
        path: "/repo/shared.txt".into(),
        session: writer.session.clone(),
        agent: writer.agent.clone(),
        agent_type: writer.agent.as_ref().map(|_| "worker".into()),
        phase: Some("build".into()),
        tool: tool.into(),
        hash: hash.into(),
        size: 3,
        mtime_ns: 0,
        added: Some(1),
        removed: Some(0),
        also: Vec::new(),
    }
}

const RECENT: Duration = Duration::hours(4);

fn alive(_: &Writer) -> bool {
    true
}

fn dead(_: &Writer) -> bool {
    false
}

/// The facts' scenario: session 2 wrote the file, session 1 appended through Bash; session 2's
/// next write is refused naming session 1's command, and after a read it goes through.
#[test]
fn a_change_since_the_writer_last_saw_the_file_is_refused_until_it_reads_again() {
    let one = Writer::new("s1", None);
    let two = Writer::new("s2", None);
    let mut record = PathRecord::new("/repo/shared.txt");
    record.wrote(write(&two, "h-two", 1, "Write"));
    record.wrote(write(&one, "h-both", 2, "Bash: echo more >> shared.txt"));
    let conflict = check(Some(&record), &two, "h-both", at(3), RECENT, &alive).unwrap();
    let Conflict::Changed { by: Some(by) } = &conflict else {
        panic!("{conflict:?}")
    };
    assert_eq!(by.writer(), one);
    let text = reason("shared.txt", &conflict, Some(4));
    assert!(text.contains("session s1 changed it with the command `echo more >> shared.txt`"));
    assert!(text.contains("at 2026-11-27 10:02 UTC (+1 -0 lines), phase `build`"));
    assert!(text.contains("read it again, then make your change"));
    assert!(text.contains("snapshot @4 (`checkpoint undo --to @4 -- shared.txt`"));
    // A dead writer's change is still a change: refused the same way.
    assert!(check(Some(&record), &two, "h-both", at(3), RECENT, &dead).is_some());
    record.saw(&two, "h-both", at(4));
    assert_eq!(
        check(Some(&record), &two, "h-both", at(5), RECENT, &alive),
        None
    );
    // Session 1 saw its own write: never refused.
    assert_eq!(
        check(Some(&record), &one, "h-both", at(5), RECENT, &alive),
        None
    );
}

/// A change nobody recorded (a person's editor) is a change too, named as such.
#[test]
fn an_unrecorded_change_is_refused_as_a_persons() {
    let one = Writer::new("s1", None);
    let mut record = PathRecord::new("/repo/a");
    record.wrote(write(&one, "h1", 1, "Edit"));
    let conflict = check(Some(&record), &one, "h-person", at(2), RECENT, &alive).unwrap();
    assert_eq!(conflict, Conflict::Changed { by: None });
    assert!(reason("a", &conflict, None).contains("by a person or a process outside"));
    // Deleted by a person after the writer saw it: refused too (a recreation would hide it).
    assert!(check(Some(&record), &one, ABSENT, at(2), RECENT, &alive).is_some());
}

/// A writer that never saw a file: refused only while another live writer's write is recent,
/// and whatever the clocks say (a write "in the future" is recent).
#[test]
fn a_never_seen_file_is_refused_only_for_a_recent_write_of_a_live_writer() {
    let one = Writer::new("s1", None);
    let two = Writer::new("s2", None);
    let mut record = PathRecord::new("/repo/a");
    record.wrote(write(&one, "h1", 10, "Write"));
    for now in [at(11), at(0), at(10) + Duration::hours(3)] {
        assert!(matches!(
            check(Some(&record), &two, "h1", now, RECENT, &alive),
            Some(Conflict::NeverSeen { .. })
        ));
    }
    assert_eq!(
        check(
            Some(&record),
            &two,
            "h1",
            at(10) + Duration::hours(5),
            RECENT,
            &alive
        ),
        None,
        "an old write"
    );
    assert_eq!(
        check(Some(&record), &two, "h1", at(11), RECENT, &dead),
        None,
        "a dead writer"
    );
    assert_eq!(
        check(Some(&record), &two, ABSENT, at(11), RECENT, &alive),
        None,
        "a deleted file is created anew"
    );
    assert_eq!(
        check(Some(&record), &two, "h-other", at(11), RECENT, &alive),
        None,
        "content no writer left"
    );
    // A file nobody recorded costs nothing and is never refused.
    assert_eq!(check(None, &two, "h1", at(11), RECENT, &alive), None);
}

/// Sub-agents of one session are separate writers, from each other and from their lead.
#[test]
fn sub_agents_are_separate_writers() {
    let lead = Writer::new("s1", None);
    let first = Writer::new("s1", Some("a1"));
    let second = Writer::new("s1", Some("a2"));
    assert_eq!(Writer::new("s1", Some("")), lead);
    assert_ne!(first.key(), lead.key());
    let mut record = PathRecord::new("/repo/out.md");
    record.wrote(write(&first, "h1", 1, "Write"));
    for other in [&lead, &second] {
        let conflict = check(Some(&record), other, "h1", at(2), RECENT, &alive).unwrap();
        assert!(reason("out.md", &conflict, None).contains("sub-agent a1 (worker) of session s1"));
    }
    assert_eq!(
        check(Some(&record), &first, "h1", at(2), RECENT, &alive),
        None
    );
}

/// A deleted then recreated file: by content, so the same bytes again change nothing and
/// other bytes are a change.
#[test]
fn a_deleted_and_recreated_file_is_judged_by_its_content() {
    let one = Writer::new("s1", None);
    let two = Writer::new("s2", None);
    let mut record = PathRecord::new("/repo/a");
    record.wrote(write(&one, "h1", 1, "Write"));
    record.saw(&two, "h1", at(2));
    record.wrote(write(&one, ABSENT, 3, "Bash: rm a"));
    let conflict = check(Some(&record), &two, ABSENT, at(4), RECENT, &alive).unwrap();
    assert!(reason("a", &conflict, None).contains("session s1 deleted it with the command `rm a`"));
    record.wrote(write(&one, "h1", 5, "Write"));
    assert_eq!(
        check(Some(&record), &two, "h1", at(6), RECENT, &alive),
        None
    );
    record.wrote(write(&one, "h2", 7, "Write"));
    assert!(check(Some(&record), &two, "h2", at(8), RECENT, &alive).is_some());
}

/// A record keeps its last writes only, and what every writer saw.
#[test]
fn a_record_keeps_its_last_writes() {
    let one = Writer::new("s1", None);
    let mut record = PathRecord::new("/repo/a");
    for n in 0..(KEPT_WRITES as u32 + 5) {
        record.wrote(write(&one, &format!("h{n}"), n % 60, "Edit"));
    }
    assert_eq!(record.writes.len(), KEPT_WRITES);
    assert_eq!(record.last().unwrap().hash, format!("h{}", KEPT_WRITES + 4));
    assert_eq!(record.seen.len(), 1);
}

/// Claims: another live writer's glob holds a path; its holder, a dead holder and other
/// paths are free.
#[test]
fn a_claim_holds_its_paths_for_its_live_holder_only() {
    let holder = Writer::new("s1", Some("a1"));
    let claims = vec![Claim {
        glob: "docs/*.md".into(),
        phase: "write-docs".into(),
        workflow: None,
        holder: holder.clone(),
        agent_type: Some("writer".into()),
        since: at(1),
    }];
    let other = Writer::new("s2", None);
    let claim = claimed_by_other(&claims, "docs/a/b.md", &other, &alive).unwrap();
    let text = reason(
        "docs/a/b.md",
        &Conflict::Claimed {
            claim: claim.clone(),
        },
        None,
    );
    assert!(text.contains("held by sub-agent a1 (writer) of session s1 for phase `write-docs`"));
    assert_eq!(
        claimed_by_other(&claims, "docs/a/b.md", &holder, &alive),
        None
    );
    assert_eq!(claimed_by_other(&claims, "src/a.rs", &other, &alive), None);
    assert_eq!(
        claimed_by_other(&claims, "docs/a/b.md", &other, &dead),
        None
    );
}

/// Liveness: ended, idle, or gone from the client's list.
#[test]
fn a_writer_is_live_until_it_ends_idles_or_is_gone() {
    let state = WriterState {
        writer: Writer::new("s1", None),
        agent_type: None,
        last: at(10),
        ended: false,
        checkout: "/repo".into(),
        client: "claude".into(),
    };
    let idle = Duration::minutes(60);
    assert!(is_live(&state, at(20), idle, false));
    assert!(is_live(&state, at(0), idle, false), "a clock behind");
    // A last hook from far in the future (a clock a day ahead) is not believed.
    assert!(!is_live(
        &state,
        at(10) - Duration::minutes(61),
        idle,
        false
    ));
    assert!(!is_live(
        &state,
        at(10) + Duration::minutes(61),
        idle,
        false
    ));
    assert!(!is_live(&state, at(20), idle, true));
    let ended = WriterState {
        ended: true,
        ..state
    };
    assert!(!is_live(&ended, at(20), idle, false));
}

/// The message after a Bash command that overwrote another writer's change.
#[test]
fn an_overwrite_names_whose_change_and_the_command_that_brings_it_back() {
    let two = Writer::new("s2", None);
    let text = overwritten(
        "shared.txt",
        &write(&two, "h", 1, "Write"),
        "cp x shared.txt",
        Some(7),
    );
    assert!(text.contains("your command `cp x shared.txt` changed `shared.txt`, which session s2 had changed with `Write`"));
    assert!(text.contains("`checkpoint undo --to @7 -- shared.txt`"));
}

/// `[writes]`'s defaults: refuse for sessions, claims and the checkout, warn for Bash.
#[test]
fn the_defaults_refuse_writes_and_claims_and_warn_for_bash() {
    let config = WritesConfig::default();
    assert_eq!(
        (config.sessions, config.claims, config.bash, config.checkout),
        (Mode::Refuse, Mode::Refuse, Mode::Warn, Mode::Refuse)
    );
    let parsed: crate::Config =
        toml::from_str("[writes]\nsessions = \"warn\"\nbash = \"off\"\n").unwrap();
    assert_eq!(parsed.writes.sessions, Mode::Warn);
    assert_eq!(parsed.writes.bash, Mode::Off);
    assert_eq!(parsed.writes.claims, Mode::Refuse);
}

/// The whole-checkout commands, through wrappers and lists, and the file-level forms let by.
#[test]
fn whole_checkout_commands_are_recognised() {
    for line in [
        "git switch main",
        "git checkout feature",
        "git checkout -b new",
        "git checkout .",
        "cd sub && git reset --hard HEAD~1",
        "git stash",
        "git stash pop",
        "git clean -fd",
        "git clean --force",
        "git -C other rebase main",
        "sudo git switch -",
        "bash -c 'git stash push -m x'",
    ] {
        assert!(whole_checkout(line).is_some(), "{line}");
    }
    for line in [
        "git checkout -- src/a.rs",
        "git checkout HEAD -- a b",
        "git reset HEAD a.txt",
        "git stash list",
        "git clean -n",
        "git status",
        "echo git switch main",
        "gitx switch",
    ] {
        assert_eq!(whole_checkout(line), None, "{line}");
    }
    let text = checkout_reason("git switch main", &["session s2".into()]);
    assert!(text.contains("other sessions are at work in it: session s2"));
}

/// A change found while other writers' commands ran is nobody's own: even the writer whose
/// hook found it is refused until it reads, and the reason names every candidate.
#[test]
fn a_change_several_running_commands_may_have_made_is_nobodys_own() {
    let one = Writer::new("s1", None);
    let two = Writer::new("s2", None);
    let mut record = PathRecord::new("/repo/shared.txt");
    record.wrote(write(&two, "h-two", 1, "Write"));
    let mut found = write(&two, "h-both", 2, "Bash: grep -q x shared.txt");
    found.also = vec![one.clone()];
    record.wrote(found);
    assert_eq!(record.seen["s2"].hash, "h-two");
    let conflict = check(Some(&record), &two, "h-both", at(3), RECENT, &alive).unwrap();
    let text = reason("shared.txt", &conflict, None);
    assert!(text.contains("session s2 or session s1 changed it with a command running at the time (`grep -q x shared.txt`)"), "{text}");
    assert!(check(Some(&record), &one, "h-both", at(3), RECENT, &alive).is_some());
}

#[test]
fn a_lone_cat_or_nl_of_files_is_a_read_and_nothing_that_cuts_or_diverts_it_is() {
    for (command, files) in [
        ("cat shared.txt", &["shared.txt"][..]),
        ("cat -n a.txt 'b c.txt'", &["a.txt", "b c.txt"]),
        ("nl -ba /repo/src/main.rs", &["/repo/src/main.rs"]),
    ] {
        assert_eq!(shell_reads(command), files, "{command}");
    }
    for command in [
        "cat shared.txt | head -5",
        "cat a.txt > b.txt",
        "cat < a.txt",
        "cat a.txt; rm a.txt",
        "cat a.txt && echo ok",
        "cat $FILE",
        "cat `ls`",
        "head shared.txt",
        "sed -n '1,20p' shared.txt",
        "echo cat shared.txt",
        "",
    ] {
        assert!(shell_reads(command).is_empty(), "{command}");
    }
}

/// A claim's glob: `**` spans no directory or several, a directory holds everything under it,
/// a file holds itself only; `./` and a trailing `/` are the same claim.
#[test]
fn a_claim_glob_holds_what_it_names_and_no_more() {
    for (glob, held, free) in [
        (
            "src/**/*.rs",
            &["src/a.rs", "src/x/y/z.rs"][..],
            &["src/a.md", "tests/a.rs", "srca.rs"][..],
        ),
        (
            "**/Cargo.toml",
            &["Cargo.toml", "crates/x/Cargo.toml"],
            &["Cargo.lock"],
        ),
        (
            "docs",
            &["docs", "docs/a.md", "docs/x/y.md"],
            &["docsy.md", "src/docs"],
        ),
        (
            "src/*",
            &["src/a.rs", "src/deep/b.rs"],
            &["src", "lib/a.rs"],
        ),
        (
            "report.md",
            &["report.md"],
            &["report.md.bak", "x/report.md"],
        ),
    ] {
        let glob = claim_glob(glob).unwrap();
        for path in held {
            assert!(claim_matches(&glob, path), "{glob} holds {path}");
        }
        for path in free {
            assert!(!claim_matches(&glob, path), "{glob} does not hold {path}");
        }
    }
    assert_eq!(claim_glob("./docs/").unwrap(), "docs");
    assert_eq!(claim_glob(" src//parser/* ").unwrap(), "src/parser/*");
}

/// A claim that is empty, absolute, leaves the project or holds the whole checkout is refused,
/// saying which.
#[test]
fn a_claim_outside_the_project_or_of_everything_is_refused() {
    for (glob, why) in [
        ("", "empty"),
        ("  ", "empty"),
        ("/etc/passwd", "absolute"),
        ("~/notes", "absolute"),
        ("../other/*", "outside the project"),
        ("src/../../x", "outside the project"),
        ("*", "whole checkout"),
        ("**", "whole checkout"),
        ("**/*", "whole checkout"),
        (".", "whole checkout"),
        ("./", "whole checkout"),
    ] {
        let err = claim_glob(glob).unwrap_err();
        assert!(err.contains(why), "{glob:?}: {err}");
    }
}
