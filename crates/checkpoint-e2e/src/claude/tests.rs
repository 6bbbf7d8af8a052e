//! Tests of how the runner finds the `claude` executable.

use std::path::{Path, PathBuf};

use crate::claude::{parse_version, resolve_claude_bin};

#[test]
fn missing_client_is_an_error_that_says_how_to_install_it() {
    let fallback = PathBuf::from("/nonexistent/target/claude-code/node_modules/.bin/claude");
    let message = resolve_claude_bin(None, fallback.clone()).unwrap_err();
    assert!(
        message.contains("CHECKPOINT_CLAUDE_BIN is unset"),
        "{message}"
    );
    assert!(message.contains("run `cargo xtask test`"), "{message}");
    // An empty variable counts as unset.
    let message = resolve_claude_bin(Some("".into()), fallback).unwrap_err();
    assert!(message.contains("cargo xtask test"), "{message}");
}

#[test]
fn variable_wins_over_fallback_and_must_name_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("claude");
    std::fs::write(&bin, "").unwrap();
    let fallback = dir.path().join("fallback");
    std::fs::write(&fallback, "").unwrap();
    assert_eq!(
        resolve_claude_bin(Some(bin.clone().into()), fallback.clone()).unwrap(),
        bin
    );
    assert_eq!(
        resolve_claude_bin(None, fallback.clone()).unwrap(),
        fallback
    );
    let wrong = Path::new("/nonexistent/claude");
    let message = resolve_claude_bin(Some(wrong.into()), fallback).unwrap_err();
    assert!(
        message.contains("is set to `/nonexistent/claude`, which is not a file"),
        "{message}"
    );
}

#[test]
fn client_version_is_read_from_the_version_line() {
    assert_eq!(parse_version("2.1.197 (Claude Code)\n"), Some((2, 1, 197)));
    assert_eq!(parse_version("2.1.330 (Claude Code)"), Some((2, 1, 330)));
    assert_eq!(parse_version("Claude Code 2.1.330"), None);
    assert_eq!(parse_version("2.1"), None);
    assert_eq!(parse_version(""), None);
}
