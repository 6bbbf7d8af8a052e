//! Tests of how the harness finds the plugin bundle.

use std::fs;
use std::path::{Path, PathBuf};

use crate::plugin::resolve_plugin_dir;

fn fake_bundle(dir: &Path) {
    for part in [
        ".claude-plugin/plugin.json",
        "hooks/hooks.json",
        "bin/checkpoint",
        "bin/checkpoint-mcp",
        ".mcp.json",
    ] {
        let path = dir.join(part);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, "").unwrap();
    }
}

#[test]
fn missing_bundle_is_an_error_that_says_how_to_build_it() {
    let fallback = PathBuf::from("/nonexistent/target/dist/checkpoint-plugin");
    let message = resolve_plugin_dir(None, fallback.clone()).unwrap_err();
    assert!(
        message.contains("CHECKPOINT_PLUGIN_DIR is unset"),
        "{message}"
    );
    assert!(message.contains("run `cargo xtask test`"), "{message}");
    // An empty variable counts as unset.
    let message = resolve_plugin_dir(Some("".into()), fallback).unwrap_err();
    assert!(message.contains("cargo xtask test"), "{message}");
}

#[test]
fn variable_wins_over_fallback_and_must_name_a_whole_bundle() {
    let dir = tempfile::tempdir().unwrap();
    let bundle = dir.path().join("bundle");
    fake_bundle(&bundle);
    let fallback = dir.path().join("fallback");
    fake_bundle(&fallback);
    assert_eq!(
        resolve_plugin_dir(Some(bundle.clone().into()), fallback.clone()).unwrap(),
        bundle
    );
    assert_eq!(
        resolve_plugin_dir(None, fallback.clone()).unwrap(),
        fallback
    );
    // A bundle without its binary is not a bundle: `dist` did not finish.
    fs::remove_file(bundle.join("bin/checkpoint")).unwrap();
    let message = resolve_plugin_dir(Some(bundle.clone().into()), fallback).unwrap_err();
    assert!(message.contains("no `bin/checkpoint`"), "{message}");
    assert!(message.contains("cargo xtask test"), "{message}");
}
