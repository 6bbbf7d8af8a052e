//! `cargo xtask install`: the release binary, its man page and its shell completions, copied
//! from the plugin bundle into a prefix (`~/.local` by default) where a shell finds them.

#[cfg(test)]
mod tests;

use std::{
    env, fs,
    path::{Path, PathBuf},
};

use crate::{Result, dist};

/// Where each file of the bundle goes, relative to the bundle and to the prefix: the places
/// `PATH`, `man`, bash-completion, zsh (`site-functions`) and fish look by default.
const LAYOUT: &[(&str, &str)] = &[
    ("bin/checkpoint", "bin/checkpoint"),
    // `checkpoint mcp` runs the MCP server beside it (the plugin's `.mcp.json` does that).
    ("bin/checkpoint-mcp", "bin/checkpoint-mcp"),
    (
        "completions/checkpoint.bash",
        "share/bash-completion/completions/checkpoint",
    ),
    (
        "completions/_checkpoint",
        "share/zsh/site-functions/_checkpoint",
    ),
    (
        "completions/checkpoint.fish",
        "share/fish/vendor_completions.d/checkpoint.fish",
    ),
];

/// Builds the bundle, then installs from it into `prefix` (default `~/.local`).
pub(crate) fn run(root: &Path, prefix: Option<&Path>) -> Result {
    let prefix = match prefix {
        Some(prefix) => env::current_dir()
            .map_err(|err| format!("failed to read the current directory: {err}"))?
            .join(prefix),
        None => default_prefix()?,
    };
    let plugin = dist::run(root, dist::Build::Shipped)?;
    for path in install_into(&plugin, &prefix)? {
        eprintln!("installed {}", path.display());
    }
    let bin = prefix.join("bin");
    let on_path =
        env::var_os("PATH").is_some_and(|path| env::split_paths(&path).any(|dir| dir == bin));
    if !on_path {
        eprintln!(
            "note: `{}` is not on your PATH; add it, for example with `export PATH=\"{}:$PATH\"`",
            bin.display(),
            bin.display()
        );
    }
    eprintln!(
        "\nnext: `checkpoint --help`, or the plugin in Claude Code (it runs this `checkpoint`):\n  claude plugin marketplace add {}\n  claude plugin install checkpoint@checkpoint",
        root.display()
    );
    Ok(())
}

/// Where the man pages go: every page of the bundle's `man/` (the main page and one per
/// subcommand).
const MAN_DIR: (&str, &str) = ("man", "share/man/man1");

/// Copies the bundle's binary, man pages and completions under `prefix`, each through a
/// temporary file and a rename (so a running `checkpoint` is replaced, not overwritten); returns
/// the paths written.
pub(crate) fn install_into(plugin: &Path, prefix: &Path) -> Result<Vec<PathBuf>> {
    let mut files: Vec<(PathBuf, PathBuf)> = LAYOUT
        .iter()
        .map(|(from, to)| (plugin.join(from), prefix.join(to)))
        .collect();
    let man = plugin.join(MAN_DIR.0);
    let mut pages: Vec<PathBuf> = fs::read_dir(&man)
        .into_iter()
        .flatten()
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| path.extension().is_some_and(|extension| extension == "1"))
        .collect();
    // The main page always: a bundle without it fails below, naming it.
    let main = man.join("checkpoint.1");
    if !pages.contains(&main) {
        pages.push(main);
    }
    pages.sort();
    for page in pages {
        let name = page.file_name().expect("a page has a name").to_owned();
        files.push((page, prefix.join(MAN_DIR.1).join(name)));
    }
    let mut installed = Vec::new();
    for (from, to) in files {
        let dir = to
            .parent()
            .expect("every destination is inside a directory");
        fs::create_dir_all(dir)
            .map_err(|err| format!("failed to create `{}`: {err}", dir.display()))?;
        let temp = dir.join(format!(
            ".{}.installing",
            to.file_name()
                .expect("every destination names a file")
                .to_string_lossy()
        ));
        fs::copy(&from, &temp).map_err(|err| {
            format!(
                "failed to copy `{}` to `{}`: {err}",
                from.display(),
                temp.display()
            )
        })?;
        set_mode(
            &temp,
            if to.starts_with(prefix.join("bin")) {
                0o755
            } else {
                0o644
            },
        )?;
        fs::rename(&temp, &to).map_err(|err| {
            format!(
                "failed to move `{}` to `{}`: {err}",
                temp.display(),
                to.display()
            )
        })?;
        installed.push(to);
    }
    Ok(installed)
}

fn default_prefix() -> Result<PathBuf> {
    match env::var_os("HOME") {
        Some(home) if !home.is_empty() => Ok(PathBuf::from(home).join(".local")),
        _ => Err("HOME is not set: choose where to install with `--prefix <dir>`".into()),
    }
}

#[cfg(unix)]
fn set_mode(path: &Path, mode: u32) -> Result {
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(path, fs::Permissions::from_mode(mode))
        .map_err(|err| format!("failed to set the mode of `{}`: {err}", path.display()))
}

#[cfg(not(unix))]
fn set_mode(_: &Path, _: u32) -> Result {
    Ok(())
}
