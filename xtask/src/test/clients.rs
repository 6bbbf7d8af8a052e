//! The other agent clients the end-to-end tests drive, installed from npm like Claude Code:
//! Codex CLI and Gemini CLI, each at a pinned version or the latest release tested.

use std::{
    env,
    path::{Path, PathBuf},
    process::Command,
};

use crate::{Result, run_checked};

/// An agent client published on npm.
pub(crate) struct NpmClient {
    /// The npm package.
    pub(crate) package: &'static str,
    /// Its command in `node_modules/.bin`.
    pub(crate) bin: &'static str,
    /// The version the end-to-end tests run against by default (the one the client facts
    /// were measured on).
    pub(crate) pinned: &'static str,
    /// The newest release tested (`<env>=latest`).
    pub(crate) latest: &'static str,
    /// The variable that chooses the version: `pinned` (the default), `latest`, or a version.
    pub(crate) choice_env: &'static str,
    /// The variable that tells the end-to-end tests where the binary is.
    pub(crate) bin_env: &'static str,
}

/// Codex CLI.
pub(crate) const CODEX: NpmClient = NpmClient {
    package: "@openai/codex",
    bin: "codex",
    pinned: "0.169.0",
    latest: "0.171.0",
    choice_env: "CHECKPOINT_CODEX",
    bin_env: "CHECKPOINT_CODEX_BIN",
};

/// Gemini CLI.
pub(crate) const GEMINI: NpmClient = NpmClient {
    package: "@google/gemini-cli",
    bin: "gemini",
    pinned: "0.61.0",
    latest: "0.61.0",
    choice_env: "CHECKPOINT_GEMINI_CLI",
    bin_env: "CHECKPOINT_GEMINI_BIN",
};

impl NpmClient {
    /// The version `choice` (the value of `choice_env`) names.
    pub(crate) fn version(&self, choice: Option<&str>) -> Result<String> {
        match choice.map(str::trim) {
            None | Some("" | "pinned" | "oldest") => Ok(self.pinned.to_owned()),
            Some("latest") => Ok(self.latest.to_owned()),
            Some(version) if is_version(version) => Ok(version.to_owned()),
            Some(other) => Err(format!(
                "invalid `{}={other}`: use `pinned` ({}), `latest` ({}) or a version such as `{}`",
                self.choice_env, self.pinned, self.latest, self.pinned
            )),
        }
    }

    /// Installs the version `choice_env` names unless it is there, into
    /// `target/<bin>-<version>`; returns its binary.
    pub(crate) fn ensure(&self, root: &Path) -> Result<PathBuf> {
        let version = self.version(env::var(self.choice_env).ok().as_deref())?;
        let prefix = crate::target_dir(root).join(format!("{}-{version}", self.bin));
        let bin = prefix.join("node_modules").join(".bin").join(self.bin);
        ensure_npm(&prefix, &bin, self.package, &version)?;
        eprintln!("end-to-end tests with {} {version}", self.package);
        Ok(bin)
    }
}

/// `x.y.z`, digits only.
pub(crate) fn is_version(version: &str) -> bool {
    version.split('.').count() == 3
        && version
            .split('.')
            .all(|part| !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()))
}

/// Installs `package@version` into `prefix` with npm unless `bin --version` names that version
/// already.
pub(crate) fn ensure_npm(prefix: &Path, bin: &Path, package: &str, version: &str) -> Result {
    let installed = Command::new(bin)
        .arg("--version")
        .output()
        .ok()
        .and_then(|output| String::from_utf8(output.stdout).ok());
    if installed
        .as_deref()
        .is_some_and(|installed| installed.split_whitespace().any(|word| word == version))
    {
        return Ok(());
    }
    std::fs::create_dir_all(prefix)
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
            .arg(prefix)
            .arg(format!("{package}@{version}")),
    )
}
