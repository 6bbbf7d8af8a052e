//! `cargo xtask test`: the whole suite, with the real Claude Code CLI installed from npm for the
//! end-to-end tests and the plugin bundle validated by it.

use std::{
    path::{Path, PathBuf},
    process::Command,
};

use crate::{Result, cargo, dist, run_checked};

/// The Claude Code version the end-to-end tests and `../shared/claude-code-facts.md` are about.
pub(crate) const CLAUDE_CODE_VERSION: &str = "2.1.197";

pub(crate) fn run(root: &Path, cargo_args: &[String]) -> Result {
    let claude = ensure_claude(root)?;
    let plugin = dist::run(root)?;
    validate_bundle(root, &claude, &plugin)?;
    let mut command = cargo();
    command
        .args(["test", "--workspace"])
        .args(cargo_args)
        .env("CHECKPOINT_CLAUDE_BIN", &claude)
        .env("CHECKPOINT_PLUGIN_DIR", &plugin)
        .env("CHECKPOINT_E2E_REQUIRED", "1");
    run_checked(&mut command)
}

/// Installs the pinned Claude Code CLI into `target/claude-code` unless it is there; returns
/// the path of its `claude` binary.
pub(crate) fn ensure_claude(root: &Path) -> Result<PathBuf> {
    let prefix = crate::target_dir(root).join("claude-code");
    let claude = prefix.join("node_modules").join(".bin").join("claude");
    let installed = Command::new(&claude)
        .arg("--version")
        .output()
        .ok()
        .and_then(|output| String::from_utf8(output.stdout).ok());
    if installed
        .as_deref()
        .is_some_and(|version| version.starts_with(CLAUDE_CODE_VERSION))
    {
        return Ok(claude);
    }
    std::fs::create_dir_all(&prefix)
        .map_err(|err| format!("failed to create `{}`: {err}", prefix.display()))?;
    run_checked(
        Command::new("npm")
            .args([
                "install",
                "--no-audit",
                "--no-fund",
                "--loglevel=error",
                "--prefix",
            ])
            .arg(&prefix)
            .arg(format!("@anthropic-ai/claude-code@{CLAUDE_CODE_VERSION}")),
    )?;
    Ok(claude)
}

/// `claude plugin validate --strict` on the plugin and on the marketplace, in a scratch HOME.
fn validate_bundle(root: &Path, claude: &Path, plugin: &Path) -> Result {
    let home = crate::target_dir(root).join("claude-validate-home");
    std::fs::create_dir_all(&home)
        .map_err(|err| format!("failed to create `{}`: {err}", home.display()))?;
    let marketplace = plugin.parent().expect("the plugin sits in target/dist");
    for dir in [plugin, marketplace] {
        run_checked(
            Command::new(claude)
                .args(["plugin", "validate", "--strict"])
                .arg(dir)
                .env("HOME", &home)
                .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
                .env("DISABLE_AUTOUPDATER", "1"),
        )?;
    }
    Ok(())
}
