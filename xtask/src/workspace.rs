//! The workspace every task works in: its directories, a task's result, and running cargo and
//! other programs in it, echoed as a shell would take them.

#[cfg(test)]
mod tests;

use std::{
    env,
    path::{Path, PathBuf},
    process::Command,
};

/// A failure of a task, as a message.
pub(crate) type Result<T = ()> = std::result::Result<T, String>;

/// The workspace root: the parent of this crate's directory.
pub(crate) fn project_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives inside the workspace")
        .to_owned()
}

/// The cargo target directory: `CARGO_TARGET_DIR`, else `target/` in the workspace.
pub(crate) fn target_dir(root: &Path) -> PathBuf {
    match env::var_os("CARGO_TARGET_DIR") {
        Some(dir) if !dir.is_empty() => root.join(PathBuf::from(dir)),
        _ => root.join("target"),
    }
}

/// `cargo`, as the one that runs us.
pub(crate) fn cargo() -> Command {
    Command::new(env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
}

/// Runs a command, failing with its description when it does not succeed.
pub(crate) fn run_checked(command: &mut Command) -> Result {
    eprintln!("$ {}", describe(command));
    let status = command
        .status()
        .map_err(|err| format!("failed to run `{}`: {err}", describe(command)))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("`{}` failed with {status}", describe(command)))
    }
}

/// A command as it can be pasted into a shell: arguments quoted where needed, paths inside the
/// workspace relative to it (tasks run from its root), and cargo as `cargo`.
pub(crate) fn describe(command: &Command) -> String {
    let root = project_root();
    let word = |text: &std::ffi::OsStr| {
        let path = Path::new(text);
        let text = path.strip_prefix(&root).unwrap_or(path).to_string_lossy();
        shell_quote(&text)
    };
    let program = command.get_program();
    // `$CARGO` is an absolute path into the toolchain; `cargo` is what a reader types.
    let mut text = if env::var_os("CARGO").is_some_and(|cargo| cargo == program) {
        "cargo".to_owned()
    } else {
        word(program)
    };
    for arg in command.get_args() {
        text.push(' ');
        text.push_str(&word(arg));
    }
    text
}

/// `text` as one shell word: as is when it holds only characters no shell treats specially,
/// else in single quotes.
pub(crate) fn shell_quote(text: &str) -> String {
    let plain = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=@%+,".contains(c));
    if plain {
        text.to_owned()
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}
