//! `cargo xtask demo`: bundle the plugin, then drive its binary through an example workflow in
//! `target/demo/`, a git repository of its own, showing each command as it could be typed there.

use std::{fs, path::Path, process::Command};

use crate::{Result, dist, shell_quote};

pub(crate) fn run(root: &Path) -> Result {
    eprintln!(
        "building `checkpoint` (the tests' unoptimised build) and the Claude Code plugin bundle \
         in `target/dist/`…"
    );
    let plugin = dist::run(root, dist::Build::Dev)?;
    let binary = plugin.join("bin").join("checkpoint");
    let project = crate::target_dir(root).join("demo");
    if project.exists() {
        fs::remove_dir_all(&project)
            .map_err(|err| format!("failed to clean `{}`: {err}", project.display()))?;
    }
    fs::create_dir_all(&project)
        .map_err(|err| format!("failed to create `{}`: {err}", project.display()))?;
    // Its own repository, so that the store is `target/demo/.claude/checkpoints` and paths in the
    // state are relative to `target/demo`, for this demo and for `checkpoint status` run there.
    let git = Command::new("git")
        .args(["init", "--quiet"])
        .current_dir(&project)
        .status()
        .map_err(|err| format!("the demo needs git: failed to run `git init`: {err}"))?;
    if !git.success() {
        return Err(format!(
            "`git init` failed in `{}` with {git}",
            project.display()
        ));
    }
    let shown = project.strip_prefix(root).unwrap_or(&project);
    eprintln!(
        "\nan example workflow in `{}` (`checkpoint` is `{}`):\n",
        shown.display(),
        binary.strip_prefix(root).unwrap_or(&binary).display()
    );
    let step = |args: &[&str]| -> Result {
        let words: Vec<String> = args.iter().map(|arg| shell_quote(arg)).collect();
        eprintln!("$ checkpoint {}", words.join(" "));
        let status = Command::new(&binary)
            .args(args)
            .current_dir(&project)
            .env_remove("CHECKPOINT_DIR")
            .env_remove("CHECKPOINT_WORKFLOW")
            .status()
            .map_err(|err| format!("failed to run `{}`: {err}", binary.display()))?;
        if status.success() {
            eprintln!();
            Ok(())
        } else {
            Err(format!(
                "`checkpoint {}` failed with {status}",
                words.join(" ")
            ))
        }
    };
    step(&[
        "init",
        "payments",
        "--title",
        "Payments refactor",
        "--phase",
        "design",
        "--phase",
        "build:design",
        "--phase",
        "docs:design",
    ])?;
    step(&["start", "design"])?;
    step(&["progress", "design", "API sketched, data model next"])?;
    eprintln!("$ mkdir -p docs && echo '# Design' > docs/design.md\n");
    fs::create_dir_all(project.join("docs"))
        .and_then(|()| fs::write(project.join("docs/design.md"), "# Design\n"))
        .map_err(|err| format!("failed to write the demo artifact: {err}"))?;
    step(&["complete", "design", "--artifact", "docs/design.md"])?;
    step(&["decide", "REST over GraphQL for the public API"])?;
    step(&["start", "build"])?;
    step(&["progress", "build", "auth module done, starting billing"])?;
    step(&["status"])?;
    step(&["resume", "--dry-run", "--format", "prompt"])?;
    let store = project.join(".claude").join("checkpoints").join("payments");
    eprintln!(
        "the state is on disk in `{}`:",
        store.strip_prefix(root).unwrap_or(&store).display()
    );
    let mut files: Vec<String> = fs::read_dir(&store)
        .map_err(|err| format!("failed to list the demo store: {err}"))?
        .flatten()
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    for file in files {
        eprintln!("  {file}");
    }
    eprintln!(
        "\nnext:\n\
         - install `checkpoint` (binary, man page, completions in `~/.local`): `cargo xtask install`\n\
         - look at the demo: `cd {demo} && checkpoint status` (or `checkpoint log`)\n\
         - use it in Claude Code (`npm install -g @anthropic-ai/claude-code` if you have no `claude`):\n\
         \x20   claude plugin marketplace add ./target/dist\n\
         \x20   claude plugin install checkpoint@checkpoint-local\n\
         \x20 then, in a session, `/checkpoint:start <task>`, and `/checkpoint-resume` after an interruption",
        demo = shown.display()
    );
    Ok(())
}
