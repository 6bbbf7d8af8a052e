//! `cargo xtask dist`: the release binaries bundled with `plugin/` (manifest, hooks, MCP entry,
//! commands, skills) into a Claude Code plugin directory whose `bin/` holds the binaries in place
//! of the launcher, plus a local marketplace listing it.

use std::{
    fs,
    path::{Path, PathBuf},
};

use clap_complete::Shell;

use crate::{Result, cargo, run_checked};

/// The local marketplace's name (`checkpoint@checkpoint-local`).
pub(crate) const MARKETPLACE_NAME: &str = "checkpoint-local";
/// The binaries in the bundle's `bin/`: the command line, and the MCP server it runs.
const BINARIES: [&str; 2] = ["checkpoint", "checkpoint-mcp"];

/// Which build of the binaries a bundle or an asset holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Build {
    /// What users get (`cargo xtask dist`, `install`, `release-assets`, `bench`): the `release`
    /// profile, fat LTO, statically linked where the toolchain allows.
    Shipped,
    /// The `dev` profile that `cargo test` builds anyway, for `cargo xtask demo` and the
    /// end-to-end tests' bundle: the same code unoptimised, without the release build's minutes
    /// (five of a clean clone's seven on a 2-core machine, and as many of every CI run).
    Dev,
}

/// Builds the bundle; returns the plugin directory.
pub(crate) fn run(root: &Path, build: Build) -> Result<PathBuf> {
    let dist = crate::target_dir(root).join("dist");
    if dist.exists() {
        fs::remove_dir_all(&dist)
            .map_err(|err| format!("failed to clean `{}`: {err}", dist.display()))?;
    }
    let binary = build_binaries(root, build)?;
    let plugin = dist.join("checkpoint-plugin");
    let version = crate::plugin::version();

    // The repository's plugin directory is the bundle's source: its manifest, hooks, skills and
    // commands are those a marketplace install gets (`cargo xtask codegen` keeps them current).
    copy_tree(&root.join("plugin"), &plugin)?;

    let bin_dir = plugin.join("bin");
    mkdir(&bin_dir)?;
    // The binaries replace the launcher; `checkpoint mcp` runs the MCP server binary beside it
    // (`.mcp.json` starts it that way).
    copy_binaries(&binary, &bin_dir)?;

    let man_dir = plugin.join("man");
    mkdir(&man_dir)?;
    man_pages(&man_dir)?;

    let completions = plugin.join("completions");
    mkdir(&completions)?;
    for shell in [Shell::Bash, Shell::Zsh, Shell::Fish] {
        let script = checkpoint_cli::completion_script(shell);
        let name = match shell {
            Shell::Bash => "checkpoint.bash",
            Shell::Zsh => "_checkpoint",
            _ => "checkpoint.fish",
        };
        write(&completions.join(name), script.as_bytes())?;
    }

    let marketplace = serde_json::json!({
        "name": MARKETPLACE_NAME,
        "owner": { "name": "The checkpoint developers" },
        "metadata": { "description": "The checkpoint plugin, built locally", "version": version },
        "plugins": [{
            "name": crate::plugin::PLUGIN_NAME,
            "source": "./checkpoint-plugin",
            "description": "Durable checkpoints and resume for long, multi-phase Claude Code workflows",
            "version": version,
        }],
    });
    let market_dir = dist.join(".claude-plugin");
    mkdir(&market_dir)?;
    write(
        &market_dir.join("marketplace.json"),
        format!(
            "{}\n",
            serde_json::to_string_pretty(&marketplace).expect("JSON serializes")
        )
        .as_bytes(),
    )?;
    eprintln!("bundled the plugin in {}", plugin.display());
    let extension = gemini_extension(root, &dist, &binary, &version)?;
    eprintln!(
        "bundled the Gemini CLI extension in {}",
        extension.display()
    );
    Ok(plugin)
}

/// The Gemini CLI extension beside the plugin, `dist/checkpoint-gemini-extension/`: its manifest
/// (this version, the MCP server, trusted), the repository's `gemini-extension/hooks/hooks.json`
/// and the binaries in `bin/`. `gemini extensions install <dir> --consent` installs it offline.
fn gemini_extension(root: &Path, dist: &Path, binary: &Path, version: &str) -> Result<PathBuf> {
    let extension = dist.join("checkpoint-gemini-extension");
    copy_tree(&root.join("gemini-extension"), &extension)?;
    let manifest = serde_json::json!({
        "name": crate::plugin::PLUGIN_NAME,
        "version": version,
        "description": "Durable checkpoints and resume for long, multi-phase agent workflows",
        "mcpServers": {
            "checkpoint": {
                "command": "${extensionPath}${/}bin${/}checkpoint",
                "args": ["mcp"],
                "trust": true,
            },
        },
    });
    write(
        &extension.join("gemini-extension.json"),
        format!(
            "{}\n",
            serde_json::to_string_pretty(&manifest).expect("JSON serializes")
        )
        .as_bytes(),
    )?;
    let bin_dir = extension.join("bin");
    mkdir(&bin_dir)?;
    copy_binaries(binary, &bin_dir)?;
    Ok(extension)
}

/// The release binaries beside `binary` copied into `bin_dir`, executable.
fn copy_binaries(binary: &Path, bin_dir: &Path) -> Result {
    for name in BINARIES {
        let from = binary.with_file_name(format!("{name}{}", std::env::consts::EXE_SUFFIX));
        let to = bin_dir.join(from.file_name().expect("a binary path has a file name"));
        copy(&from, &to)?;
        set_executable(&to)?;
    }
    Ok(())
}

/// Builds the binaries of `build`; returns the path of `checkpoint` (the others are beside it).
pub(crate) fn build_binaries(root: &Path, build: Build) -> Result<PathBuf> {
    match build {
        Build::Shipped => build_release(root),
        Build::Dev => {
            let mut command = cargo();
            // With the failpoints `cargo test` builds the binaries with (refused unless asked
            // for by a hidden variable): the very build the tests made, not a second one.
            command.args([
                "build",
                "--package",
                "checkpoint-cli",
                "--features",
                "checkpoint-core/failpoints",
            ]);
            for name in BINARIES {
                command.args(["--bin", name]);
            }
            run_checked(&mut command)?;
            Ok(crate::target_dir(root).join("debug").join("checkpoint"))
        }
    }
}

/// Builds the release binaries, statically linked where the toolchain allows; returns the path
/// of `checkpoint` (the others are beside it).
fn build_release(root: &Path) -> Result<PathBuf> {
    let target = host_target();
    let static_ok = static_crt();
    let mut command = cargo();
    command.args([
        "build",
        "--release",
        "--package",
        "checkpoint-cli",
        "--bin",
        BINARIES[0],
        "--bin",
        BINARIES[1],
        "--target",
        &target,
    ]);
    if static_ok {
        // The binary does no name lookups, so glibc's static-linking caveats (NSS) do not apply.
        command.env("RUSTFLAGS", "-C target-feature=+crt-static");
    } else {
        eprintln!(
            "note: building a dynamically linked binary (no static C library for `{target}`)"
        );
    }
    run_checked(&mut command)?;
    Ok(crate::target_dir(root)
        .join(target)
        .join("release")
        .join("checkpoint"))
}

/// Whether release binaries link the C library statically: on GNU/Linux, when its static
/// library is installed.
pub(crate) fn static_crt() -> bool {
    host_target().ends_with("-linux-gnu") && static_glibc_available()
}

/// The host target triple, from `rustc -vV`.
pub(crate) fn host_target() -> String {
    let output = std::process::Command::new("rustc").arg("-vV").output().ok();
    output
        .and_then(|output| String::from_utf8(output.stdout).ok())
        .and_then(|text| {
            text.lines()
                .find_map(|line| line.strip_prefix("host: ").map(str::to_owned))
        })
        .unwrap_or_else(|| "x86_64-unknown-linux-gnu".into())
}

fn static_glibc_available() -> bool {
    [
        "/usr/lib/x86_64-linux-gnu/libc.a",
        "/usr/lib/aarch64-linux-gnu/libc.a",
        "/usr/lib64/libc.a",
        "/usr/lib/libc.a",
    ]
    .iter()
    .any(|path| Path::new(path).exists())
}

pub(crate) fn copy_tree(from: &Path, to: &Path) -> Result {
    mkdir(to)?;
    let entries =
        fs::read_dir(from).map_err(|err| format!("failed to list `{}`: {err}", from.display()))?;
    for entry in entries {
        let entry = entry.map_err(|err| format!("failed to list `{}`: {err}", from.display()))?;
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_tree(&entry.path(), &target)?;
        } else {
            copy(&entry.path(), &target)?;
        }
    }
    Ok(())
}

fn mkdir(path: &Path) -> Result {
    fs::create_dir_all(path).map_err(|err| format!("failed to create `{}`: {err}", path.display()))
}

fn copy(from: &Path, to: &Path) -> Result {
    fs::copy(from, to).map(|_| ()).map_err(|err| {
        format!(
            "failed to copy `{}` to `{}`: {err}",
            from.display(),
            to.display()
        )
    })
}

fn write(path: &Path, bytes: &[u8]) -> Result {
    fs::write(path, bytes).map_err(|err| format!("failed to write `{}`: {err}", path.display()))
}

#[cfg(unix)]
fn set_executable(path: &Path) -> Result {
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(path, fs::Permissions::from_mode(0o755))
        .map_err(|err| format!("failed to make `{}` executable: {err}", path.display()))
}

#[cfg(not(unix))]
fn set_executable(_: &Path) -> Result {
    Ok(())
}

/// Writes the man pages into `dir`: `checkpoint.1`, and one per subcommand the main page lists
/// (`checkpoint-status.1`, `checkpoint-task-add.1`, …), generated from the command line's
/// definition.
pub(crate) fn man_pages(dir: &Path) -> Result {
    clap_mangen::generate_to(checkpoint_cli::command(), dir).map_err(|err| {
        format!(
            "failed to write the man pages in `{}`: {err}",
            dir.display()
        )
    })
}
