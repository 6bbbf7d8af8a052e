//! The `checkpoint` plugin bundle under test, as `cargo xtask dist` builds it.
//!
//! The bundle is a Claude Code plugin directory (`.claude-plugin/plugin.json`, `.mcp.json`,
//! `hooks/`, `commands/`, `skills/`, `bin/checkpoint`, `bin/checkpoint-mcp`); `dist` also writes
//! a local marketplace listing it in the bundle's parent directory
//! (`.claude-plugin/marketplace.json`).

#[cfg(test)]
mod tests;

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The variable that names the plugin directory to test.
pub const PLUGIN_DIR_ENV: &str = "CHECKPOINT_PLUGIN_DIR";

/// The plugin's name, as users install it (`checkpoint@checkpoint-local`).
pub const PLUGIN_NAME: &str = "checkpoint";

/// The name of the local marketplace `cargo xtask dist` writes.
pub const MARKETPLACE_NAME: &str = "checkpoint-local";

/// A built plugin bundle.
#[derive(Debug, Clone)]
pub struct Plugin {
    dir: PathBuf,
}

impl Plugin {
    /// Finds the bundle: `$CHECKPOINT_PLUGIN_DIR`, else `<workspace>/target/dist/checkpoint-plugin`.
    ///
    /// Panics with a hint to run `cargo xtask test` when neither is a plugin bundle, so that the
    /// end-to-end tests fail rather than pass without the feature they test.
    #[track_caller]
    pub fn find() -> Plugin {
        let fallback = crate::claude::workspace_root()
            .join("target")
            .join("dist")
            .join("checkpoint-plugin");
        match resolve_plugin_dir(std::env::var_os(PLUGIN_DIR_ENV), fallback) {
            Ok(dir) => Plugin { dir },
            Err(message) => panic!("{message}"),
        }
    }

    /// Returns the plugin directory, the value for `--plugin-dir`.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Returns the bundled `checkpoint` binary.
    pub fn checkpoint_bin(&self) -> PathBuf {
        self.dir.join("bin").join("checkpoint")
    }

    /// Returns the directory of the local marketplace that lists this plugin.
    pub fn marketplace_dir(&self) -> &Path {
        self.dir
            .parent()
            .expect("a plugin directory found by `resolve_plugin_dir` has a parent")
    }
}

/// Chooses the plugin directory from the value of [`PLUGIN_DIR_ENV`] and the fallback path.
///
/// A set but wrong variable is an error rather than a reason to use the fallback, so that a typo
/// cannot silently test another build.
fn resolve_plugin_dir(from_env: Option<OsString>, fallback: PathBuf) -> Result<PathBuf, String> {
    if let Some(dir) = from_env.filter(|dir| !dir.is_empty()) {
        let dir = PathBuf::from(dir);
        return match missing_part(&dir) {
            None => Ok(dir),
            Some(part) => Err(format!(
                "{PLUGIN_DIR_ENV} is set to `{}`, which is not a plugin bundle (no `{part}`)\n\
                 hint: run `cargo xtask test`, which builds the bundle with `cargo xtask dist`",
                dir.display()
            )),
        };
    }
    match missing_part(&fallback) {
        None => Ok(fallback),
        Some(part) => Err(format!(
            "the end-to-end tests need the plugin bundle, but {PLUGIN_DIR_ENV} is unset and \
             `{}` is not one (no `{part}`)\nhint: run `cargo xtask test`, which builds it with \
             `cargo xtask dist`, or set {PLUGIN_DIR_ENV} to a bundle",
            fallback.display()
        )),
    }
}

/// The first part of a plugin bundle that `dir` lacks, if any.
fn missing_part(dir: &Path) -> Option<&'static str> {
    [
        ".claude-plugin/plugin.json",
        "hooks/hooks.json",
        "bin/checkpoint",
        "bin/checkpoint-mcp",
        ".mcp.json",
    ]
    .into_iter()
    .find(|part| !dir.join(part).is_file())
}
