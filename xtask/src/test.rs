//! `cargo xtask test`: the whole suite, with the real Claude Code CLI installed from npm for the
//! end-to-end tests and the plugin bundle validated by it.

use std::{
    env,
    path::{Path, PathBuf},
    process::Command,
};

use crate::{Result, cargo, dist, install, run_checked};

mod clients;

/// The oldest Claude Code the plugin supports: the version the end-to-end tests run against by
/// default, and the one `../shared/claude-code-facts.md` is about.
pub(crate) const OLDEST_CLAUDE_CODE: &str = "2.1.197";
/// The newest Claude Code release the end-to-end tests have been run against
/// (`CHECKPOINT_CLAUDE_CODE=latest`).
pub(crate) const LATEST_CLAUDE_CODE: &str = "2.1.332";
/// Chooses the Claude Code version of the end-to-end tests: `oldest` (the default), `latest`, or
/// a version number.
pub(crate) const CLAUDE_CODE_ENV: &str = "CHECKPOINT_CLAUDE_CODE";

pub(crate) fn run(root: &Path, e2e_only: bool, cargo_args: &[String]) -> Result {
    let version = claude_code_version(env::var(CLAUDE_CODE_ENV).ok().as_deref())?;
    let claude = ensure_claude(root, &version)?;
    let codex = clients::CODEX.ensure(root)?;
    let gemini = clients::GEMINI.ensure(root)?;
    let plugin = dist::run(root, dist::Build::Dev)?;
    validate_bundle(root, &claude, &plugin)?;
    // This machine's release asset, for the tests that install from a clone of the repository
    // as a marketplace (the checksums are pinned in the tests' copy, not in `plugin/`).
    let assets = crate::target_dir(root).join("release-assets");
    if assets.exists() {
        std::fs::remove_dir_all(&assets)
            .map_err(|err| format!("failed to clean `{}`: {err}", assets.display()))?;
    }
    crate::release::assets(root, &assets, None, dist::Build::Dev)?;
    let mut command = cargo();
    command.arg("test");
    if e2e_only {
        // The end-to-end test binary selected from the whole workspace rather than with
        // `--package checkpoint-e2e`: the features of the dependencies are then those of the
        // full run's, so that its build is reused (alone, that package's smaller feature set
        // rebuilt serde, syn and 30 other units). The harness's own unit tests use no client:
        // the full run runs them.
        command.args(["--workspace", "--test", "e2e"]);
    } else {
        // The README's install step, into a scratch prefix: the README tour test runs its
        // commands with the installed `checkpoint`, as a user who followed the README would.
        let prefix = crate::target_dir(root).join("install-check");
        install::install_into(&plugin, &prefix)?;
        command
            .arg("--workspace")
            .env("CHECKPOINT_TOUR_BIN_DIR", prefix.join("bin"));
    }
    eprintln!("end-to-end tests with Claude Code {version}");
    command
        .args(cargo_args)
        .env("CHECKPOINT_CLAUDE_BIN", &claude)
        .env(clients::CODEX.bin_env, &codex)
        .env(clients::GEMINI.bin_env, &gemini)
        .env("CHECKPOINT_PLUGIN_DIR", &plugin)
        .env("CHECKPOINT_RELEASE_ASSETS", &assets)
        .env("CHECKPOINT_E2E_REQUIRED", "1");
    run_checked(&mut command)
}

/// The version `CHECKPOINT_CLAUDE_CODE` names.
fn claude_code_version(choice: Option<&str>) -> Result<String> {
    match choice.map(str::trim) {
        None | Some("" | "oldest") => Ok(OLDEST_CLAUDE_CODE.to_owned()),
        Some("latest") => Ok(LATEST_CLAUDE_CODE.to_owned()),
        Some(version) if clients::is_version(version) => Ok(version.to_owned()),
        Some(other) => Err(format!(
            "invalid `{CLAUDE_CODE_ENV}={other}`: use `oldest` ({OLDEST_CLAUDE_CODE}), `latest` \
             ({LATEST_CLAUDE_CODE}) or a version such as `2.1.250`"
        )),
    }
}

/// Installs Claude Code `version` with npm unless it is there (the oldest in
/// `target/claude-code`, where the end-to-end tests look by default; any other in
/// `target/claude-code-<version>`); returns the path of its `claude` binary.
pub(crate) fn ensure_claude(root: &Path, version: &str) -> Result<PathBuf> {
    let name = if version == OLDEST_CLAUDE_CODE {
        "claude-code".to_owned()
    } else {
        format!("claude-code-{version}")
    };
    let prefix = crate::target_dir(root).join(name);
    let claude = prefix.join("node_modules").join(".bin").join("claude");
    clients::ensure_npm(&prefix, &claude, "@anthropic-ai/claude-code", version)?;
    Ok(claude)
}

/// `claude plugin validate --strict` on the bundle and its marketplace, and on the repository's
/// plugin directory and root (its marketplace), in a scratch HOME.
fn validate_bundle(root: &Path, claude: &Path, plugin: &Path) -> Result {
    let home = crate::target_dir(root).join("claude-validate-home");
    std::fs::create_dir_all(&home)
        .map_err(|err| format!("failed to create `{}`: {err}", home.display()))?;
    let marketplace = plugin.parent().expect("the plugin sits in target/dist");
    for dir in [plugin, marketplace, &root.join("plugin"), root] {
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

#[cfg(test)]
mod tests;
