//! `cargo xtask demo`: bundle the plugin, then drive its binary through an example workflow in
//! `target/demo/`, showing the state on disk.

use std::{fs, path::Path, process::Command};

use crate::{Result, dist, run_checked};

pub(crate) fn run(root: &Path) -> Result {
    let plugin = dist::run(root)?;
    let binary = plugin.join("bin").join("checkpoint");
    let project = crate::target_dir(root).join("demo");
    if project.exists() {
        fs::remove_dir_all(&project)
            .map_err(|err| format!("failed to clean `{}`: {err}", project.display()))?;
    }
    fs::create_dir_all(project.join("docs"))
        .map_err(|err| format!("failed to create `{}`: {err}", project.display()))?;
    let store = project.join(".claude").join("checkpoints");
    let step = |args: &[&str]| -> Result {
        run_checked(
            Command::new(&binary)
                .args(args)
                .current_dir(&project)
                .env("CHECKPOINT_DIR", &store),
        )
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
    fs::write(project.join("docs/design.md"), "# Design\n")
        .map_err(|err| format!("failed to write the demo artifact: {err}"))?;
    step(&["complete", "design", "--artifact", "docs/design.md"])?;
    step(&["decide", "REST over GraphQL for the public API"])?;
    step(&["start", "build"])?;
    step(&["progress", "build", "auth module done, starting billing"])?;
    step(&["status"])?;
    step(&["resume", "--dry-run", "--format", "prompt"])?;
    eprintln!(
        "\nthe state is on disk in {}:",
        store.join("payments").display()
    );
    for entry in fs::read_dir(store.join("payments"))
        .map_err(|err| format!("failed to list the demo store: {err}"))?
        .flatten()
    {
        eprintln!("  {}", entry.file_name().to_string_lossy());
    }
    eprintln!("\nthe plugin bundle is in {}", plugin.display());
    Ok(())
}
