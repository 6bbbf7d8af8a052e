//! Tests of `cargo xtask tidy`, each on a small fixture workspace written to a temporary
//! directory: one crate, `crates/demo`, and its section of the code map.

use std::{fs, path::Path};

use tempfile::TempDir;

use crate::tidy::check;

/// The code map of the fixtures: every module of `crates/demo` that `CLEAN` has.
const MAP: &str = "# Architecture\n\n## Code map\n\n### `crates/demo`\n\n\
- `a.rs`, `b.rs`: two modules.\n\
- `store.rs` declares `store/`; `load.rs` loads.\n\n\
### `plugin`\n\nNot a crate; `c.rs` here names nothing of `crates/demo`.\n";

/// A crate that breaks no rule, with the lexical traps the checks must not fall into.
const CLEAN: &[(&str, &str)] = &[
    (
        "crates/demo/src/lib.rs",
        "//! The demo crate.\nmod a;\nmod b;\nmod store;\npub use crate::b::Thing;\n\
         pub fn entry() { a::run(); }\n",
    ),
    (
        "crates/demo/src/a.rs",
        "//! Uses `b` and the root's re-export.\n\
         use crate::{b::{self, Thing}, store::load};\n\
         // A comment naming crate::a is not an import: { unbalanced\n\
         pub fn run() -> &'static str { let _ = (b::make(), Thing, '{', load::go()); \"fn x() { crate::a\" }\n\
         fn raw() -> &'static str { r#\"}\"# }\n",
    ),
    (
        "crates/demo/src/b.rs",
        "//! Below `a`.\n#[cfg(test)]\nmod tests;\npub struct Thing;\npub fn make() -> u8 { 1 }\n",
    ),
    (
        "crates/demo/src/b/tests.rs",
        "//! A module's own tests may name anything.\nuse crate::a::run;\n",
    ),
    ("crates/demo/src/store.rs", "//! Declares.\npub mod load;\n"),
    (
        "crates/demo/src/store/load.rs",
        "//! Loads, naming its parent, the crate's `b` and what the root re-exports from `b`.\n\
         use super::super::b;\npub fn go() -> u8 { let _ = crate::Thing; b::make() }\n",
    ),
    (
        "crates/demo/tests/it/main.rs",
        "//! The harness.\nmod area;\nmod support;\n",
    ),
    ("crates/demo/tests/it/area.rs", "//! An area.\n"),
    (
        "crates/demo/tests/it/support.rs",
        "//! Shared helpers.\npub(crate) mod git;\n",
    ),
    ("crates/demo/tests/it/support/git.rs", "//! Git.\n"),
    (
        "crates/demo/tests/e2e.rs",
        "//! A harness with `#[path]`.\n#[cfg(unix)]\n#[path = \"e2e/watch.rs\"]\nmod watch;\n",
    ),
    ("crates/demo/tests/e2e/watch.rs", "//! Watch.\n"),
];

/// The problems of a fixture: `CLEAN` with `changes` applied (an empty text removes a file).
#[track_caller]
fn problems_with(changes: &[(&str, &str)]) -> Vec<String> {
    let dir = TempDir::new().unwrap();
    write(dir.path(), "ARCHITECTURE.md", MAP);
    write(
        dir.path(),
        "crates/demo/Cargo.toml",
        "[package]\nname = \"demo\"\n",
    );
    for (path, text) in CLEAN {
        write(dir.path(), path, text);
    }
    for (path, text) in changes {
        if text.is_empty() {
            fs::remove_file(dir.path().join(path)).unwrap();
        } else {
            write(dir.path(), path, text);
        }
    }
    check(dir.path())
        .unwrap()
        .iter()
        .map(ToString::to_string)
        .collect()
}

fn write(root: &Path, path: &str, text: &str) {
    let path = root.join(path);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

/// `lines` lines of code, with a `//!` line first.
fn long_text(lines: usize) -> String {
    let mut text = "//! Long.\n".to_owned();
    for idx in 1..lines {
        text.push_str(&format!("const C{idx}: u8 = 0;\n"));
    }
    text
}

/// A file with a function of `lines` lines (from `fn` to `}`), inside a test module or not.
fn function_text(lines: usize, in_test_module: bool) -> String {
    let mut body = String::new();
    for _ in 0..lines - 2 {
        body.push_str("    let _ = \"}\";\n");
    }
    let function = format!("fn long() {{\n{body}}}\n");
    if in_test_module {
        format!("//! Long test.\n#[cfg(test)]\n#[expect(dead_code)]\nmod tests {{\n{function}}}\n")
    } else {
        format!("//! Long.\n{function}")
    }
}

/// The workspace itself: `cargo test` fails on every rule tidy checks, as `cargo xtask tidy`.
#[test]
fn the_workspace_is_tidy() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let problems: Vec<String> = check(&root)
        .unwrap()
        .iter()
        .map(ToString::to_string)
        .collect();
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

#[test]
fn a_clean_workspace_has_no_problem() {
    assert_eq!(problems_with(&[]), Vec::<String>::new());
}

#[test]
fn a_file_without_a_doc_line_is_named_with_the_fix() {
    let problems = problems_with(&[
        ("crates/demo/src/a.rs", "use crate::b;\n//! Too late.\n"),
        ("crates/demo/tests/it/area.rs", "\n\n// A plain comment.\n"),
    ]);
    assert_eq!(problems.len(), 2, "{problems:#?}");
    assert!(
        problems[0].starts_with("crates/demo/src/a.rs: the file does not open with a `//!` line")
    );
    assert!(problems[0].contains("fix: start it with `//! <what this file is for>.`"));
    assert!(problems[1].starts_with("crates/demo/tests/it/area.rs:"));
}

#[test]
fn a_module_missing_from_the_code_map_is_named_with_the_fix() {
    let problems = problems_with(&[
        ("crates/demo/src/fresh.rs", "//! New.\n"),
        ("crates/demo/src/store/save.rs", "//! Saves.\n"),
        ("crates/demo/src/deep/inner.rs", "//! Deep.\n"),
    ]);
    assert_eq!(problems.len(), 3, "{problems:#?}");
    assert!(problems[0].starts_with("crates/demo/src/deep/inner.rs: the module is not named by its path in ARCHITECTURE.md's section `crates/demo`"));
    assert!(problems[0].contains("name `deep/inner.rs` in that section"));
    assert!(problems[1].starts_with("crates/demo/src/fresh.rs:"));
    assert!(problems[2].starts_with("crates/demo/src/store/save.rs:"));
    // `c.rs` is named, but in another section.
    let problems = problems_with(&[("crates/demo/src/c.rs", "//! C.\n")]);
    assert_eq!(problems.len(), 1, "{problems:#?}");
}

#[test]
fn a_module_is_named_by_its_path_or_by_its_directory_and_file_name() {
    let map = format!("{MAP}\nMore of the demo crate, in its own section:\n");
    let map = map.replace(
        "- `store.rs`",
        "- `crates/demo/src/deep/inner.rs`; `x/y.rs` declares `x/y/`: `z.rs`.\n- `store.rs`",
    );
    let problems = problems_with(&[
        ("ARCHITECTURE.md", &map),
        ("crates/demo/src/deep/inner.rs", "//! Deep.\n"),
        ("crates/demo/src/x/y/z.rs", "//! Z.\n"),
        ("crates/demo/src/x/y.rs", "//! Y.\n"),
        (
            "crates/demo/src/x/y/tests.rs",
            "//! Tests need no bullet.\n",
        ),
    ]);
    assert_eq!(problems, Vec::<String>::new());
}

/// A file name that appears somewhere, and its directory somewhere else, do not name a module:
/// `output/hook.rs` is not named by `hook.rs` in the `commands/` paragraph.
#[test]
fn a_file_name_elsewhere_does_not_name_a_module() {
    let map = MAP.replace(
        "- `a.rs`, `b.rs`: two modules.",
        "- `a.rs`, `b.rs`: two modules.\n- `output.rs` declares `output/`: prints.\n- `commands/`: `hook.rs`.",
    );
    let problems = problems_with(&[
        ("ARCHITECTURE.md", &map),
        ("crates/demo/src/output.rs", "//! Prints.\n"),
        ("crates/demo/src/output/hook.rs", "//! Unlisted.\n"),
        ("crates/demo/src/commands/hook.rs", "//! Listed.\n"),
    ]);
    assert_eq!(problems.len(), 1, "{problems:#?}");
    assert!(
        problems[0]
            .starts_with("crates/demo/src/output/hook.rs: the module is not named by its path"),
        "{problems:#?}"
    );
}

/// A source path the map names must exist: in the crate (from `src/`, or after a directory of
/// its paragraph), or in the repository for the paths outside the crates' sections.
#[test]
fn a_path_the_map_names_that_does_not_exist_is_named() {
    let map = MAP
        .replace("`load.rs` loads.", "`load.rs` loads, `gone.rs` is gone.")
        .replace(
            "Not a crate;",
            "Not a crate; `docs/missing.md` and `crates/demo/src/a.rs`;",
        );
    let problems = problems_with(&[("ARCHITECTURE.md", &map)]);
    assert_eq!(
        problems,
        [
            "ARCHITECTURE.md: names `docs/missing.md`, which does not exist\n  fix: write the \
             path as it is now, or remove it",
            "ARCHITECTURE.md: the section `crates/demo` names `gone.rs`, which is no file of the \
             crate\n  fix: write the path of a file that exists (relative to the crate's `src/`, \
             or after its directory in the same paragraph), or remove it",
        ]
    );
}

#[test]
fn a_package_without_a_section_is_named() {
    let problems = problems_with(&[("ARCHITECTURE.md", "# Architecture\n")]);
    assert_eq!(problems.len(), 1, "{problems:#?}");
    assert!(problems[0].contains("the code map has no section for `crates/demo`"));
}

#[test]
fn an_import_circle_is_reported_as_a_path_with_where_each_step_is() {
    let problems = problems_with(&[(
        "crates/demo/src/b.rs",
        "//! Names `a` back.\n#[cfg(test)]\nmod tests;\npub struct Thing;\n\
         pub fn make() -> u8 { let _ = super::a::run; 1 }\n",
    )]);
    assert_eq!(problems.len(), 1, "{problems:#?}");
    assert_eq!(
        problems[0],
        "crates/demo/src/a.rs: import circle in `crates/demo`: a → b → a \
         (`crates/demo/src/a.rs:2` names `crate::b`; `crates/demo/src/b.rs:5` names `super::a::run`)\n  \
         fix: move what both sides need into a module below them both, so that imports go one way"
    );
}

#[test]
fn a_circle_through_a_submodule_is_a_circle_of_its_directory() {
    // `store::load` names `a`, and `a` names `store::load`: `a` and `store` are the siblings.
    let problems = problems_with(&[(
        "crates/demo/src/store/load.rs",
        "//! Loads.\npub fn go() -> u8 { crate::a::run().len() as u8 }\n",
    )]);
    assert_eq!(problems.len(), 1, "{problems:#?}");
    assert!(problems[0].contains("a → store → a"), "{problems:#?}");
}

#[test]
fn a_circle_through_the_crate_roots_own_items_is_reported() {
    // `b` names `entry`, defined in `lib.rs`, which names `a`, which names `b`.
    let problems = problems_with(&[(
        "crates/demo/src/b.rs",
        "//! Names the root.\npub struct Thing;\npub fn make() -> u8 { crate::entry(); 1 }\n",
    )]);
    assert_eq!(problems.len(), 1, "{problems:#?}");
    assert!(problems[0].contains("a → b → lib.rs → a"), "{problems:#?}");
}

#[test]
fn a_long_source_file_is_named_and_test_files_are_not() {
    assert_eq!(
        problems_with(&[("crates/demo/src/a.rs", &long_text(800))]),
        Vec::<String>::new()
    );
    let problems = problems_with(&[
        ("crates/demo/src/a.rs", &long_text(801)),
        ("crates/demo/src/b/tests.rs", &long_text(2000)),
        ("crates/demo/tests/it/area.rs", &long_text(2000)),
    ]);
    assert_eq!(
        problems,
        [
            "crates/demo/src/a.rs: 801 lines, more than the 800 a source file may have\n  \
          fix: split it into modules named after what each part is for"
        ]
    );
}

#[test]
fn a_long_function_is_named_with_its_line() {
    assert_eq!(
        problems_with(&[("crates/demo/src/a.rs", &function_text(140, false))]),
        Vec::<String>::new()
    );
    assert_eq!(
        problems_with(&[("crates/demo/src/a.rs", &function_text(500, true))]),
        Vec::<String>::new()
    );
    let problems = problems_with(&[("crates/demo/src/a.rs", &function_text(151, false))]);
    assert_eq!(
        problems,
        [
            "crates/demo/src/a.rs:2: `fn long` has 151 lines, more than the 150 a function may have\n  \
          fix: split it into functions named after their steps"
        ]
    );
}

/// A function of 141 to 150 lines says why it is long in a `// tidy: long because …` line among
/// the comments and attributes right above it; one of 140 needs no reason, and one of 151 is
/// too long whatever it says. Test modules are free of the rule as of the limit.
#[test]
fn a_function_near_the_limit_says_why_it_is_long() {
    let reasoned = |lines: usize, above: &str| {
        function_text(lines, false).replacen("\nfn long", &format!("\n{above}fn long"), 1)
    };
    let because = "// tidy: long because one arm a variant\n";
    for lines in [141, 150] {
        let problems = problems_with(&[("crates/demo/src/a.rs", &function_text(lines, false))]);
        assert_eq!(
            problems,
            [format!(
                "crates/demo/src/a.rs:2: `fn long` has {lines} lines, within 10 of the 150 a \
                 function may have, and says not why\n  fix: split it into functions named \
                 after their steps, or say why it is whole (an exhaustive match) in a \
                 `// tidy: long because …` line right above it"
            )]
        );
        for above in [
            because.to_owned(),
            format!("/// Doc.\n{because}#[inline]\n"),
            format!("{because}/// Doc.\n"),
        ] {
            let text = reasoned(lines, &above);
            assert_eq!(
                problems_with(&[("crates/demo/src/a.rs", &text)]),
                Vec::<String>::new(),
                "{above}"
            );
        }
        // No reason, or one cut off from the function by code, does not count.
        for above in [
            "// tidy: long because \n".to_owned(),
            "// tidy: long\n".to_owned(),
            format!("{because}const C: u8 = 0;\n"),
        ] {
            let text = reasoned(lines, &above);
            assert_eq!(
                problems_with(&[("crates/demo/src/a.rs", &text)]).len(),
                1,
                "{above}"
            );
        }
    }
    assert_eq!(
        problems_with(&[("crates/demo/src/a.rs", &function_text(150, true))]),
        Vec::<String>::new()
    );
    let problems = problems_with(&[("crates/demo/src/a.rs", &reasoned(151, because))]);
    assert_eq!(problems.len(), 1, "{problems:#?}");
    assert!(
        problems[0].contains("151 lines, more than the 150"),
        "{problems:#?}"
    );
}

#[test]
fn a_test_file_left_out_of_its_harness_is_named() {
    let problems = problems_with(&[
        ("crates/demo/tests/it/forgotten.rs", "//! Never runs.\n"),
        ("crates/demo/tests/it/support/lost.rs", "//! Never runs.\n"),
        ("crates/demo/tests/e2e/lost.rs", "//! Never runs.\n"),
    ]);
    assert_eq!(problems.len(), 3, "{problems:#?}");
    assert!(
        problems[0]
            .starts_with("crates/demo/tests/e2e/lost.rs: the test file is declared in no harness")
    );
    assert!(problems[1].starts_with("crates/demo/tests/it/forgotten.rs: the test file is declared in no harness, so its tests never run\n  fix: declare `mod forgotten;` in the harness of `tests/it/`"));
    assert!(problems[2].starts_with("crates/demo/tests/it/support/lost.rs:"));
    // A declaration in a comment is none.
    let problems = problems_with(&[(
        "crates/demo/tests/it/main.rs",
        "//! The harness.\n// mod area;\nmod support;\n",
    )]);
    assert_eq!(problems.len(), 1, "{problems:#?}");
}

/// A byte literal of a brace (`b'{'`, `b'}'`) is a literal, not a brace: a function ends at its
/// own closing brace, whatever byte it compares.
#[test]
fn a_byte_literal_of_a_brace_does_not_move_a_functions_end() {
    for literal in ["b'{'", "b'}'", "b'\\''", "'{'"] {
        let text =
            format!("fn first(x: u8) -> bool {{\n    x == {literal}\n}}\n\nfn second() {{\n}}\n");
        let functions = crate::tidy::rust::Code::new(&text).functions(&[]);
        let lines: Vec<(&str, usize)> = functions
            .iter()
            .map(|function| (function.name.as_str(), function.n_lines))
            .collect();
        assert_eq!(lines, [("first", 3), ("second", 2)], "{literal}");
    }
}

/// A `mod.rs` is named with the `git mv` that fixes it, wherever it is in `src/`; a test
/// harness's (`tests/it/support/mod.rs`) and a file merely ending in `mod.rs` are not.
#[test]
fn a_mod_rs_outside_the_tests_is_named_with_the_fix() {
    let map = MAP.replace(
        "`load.rs` loads.",
        "`load.rs` loads; `testmod.rs`.\n- `other/`: declared by its `mod.rs`.",
    );
    let problems = problems_with(&[
        ("ARCHITECTURE.md", &map),
        ("crates/demo/src/other/mod.rs", "//! Declares.\n"),
        ("crates/demo/src/store/testmod.rs", "//! Not a `mod.rs`.\n"),
        ("crates/demo/tests/it/support/mod.rs", "//! A harness's.\n"),
    ]);
    assert_eq!(problems.len(), 1, "{problems:#?}");
    assert!(
        problems[0].starts_with("crates/demo/src/other/mod.rs: a `mod.rs`"),
        "{problems:#?}"
    );
    assert!(
        problems[0].contains("`git mv src/other/mod.rs src/other.rs`"),
        "{problems:#?}"
    );
}
