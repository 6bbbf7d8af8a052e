//! Installing the bundle from the local marketplace `cargo xtask dist` writes, offline (facts §g).

use checkpoint_e2e::Turn;
use checkpoint_e2e::plugin::{MARKETPLACE_NAME, PLUGIN_NAME};

use crate::support::{
    NOTE, Project, SESSION_START_CONTEXT, WORKFLOW, assert_contains_all, path_str, phase,
};

#[test]
fn installed_from_the_local_marketplace_the_plugin_works_without_plugin_dir() {
    let project = Project::interrupted(vec![Turn::text("FIRST"), Turn::text("RESUMED")]);
    let marketplace = path_str(project.plugin.marketplace_dir());
    let spec = format!("{PLUGIN_NAME}@{MARKETPLACE_NAME}");

    let added = project
        .env
        .run(&["plugin", "marketplace", "add", marketplace], &[]);
    assert_eq!(added.code(), Some(0), "{added}");
    assert!(added.stdout.contains(MARKETPLACE_NAME), "{added}");
    let installed = project.env.run(&["plugin", "install", &spec], &[]);
    assert_eq!(installed.code(), Some(0), "{installed}");
    assert!(
        installed.stdout.contains("Successfully installed"),
        "{installed}"
    );
    let listed = project.env.run(&["plugin", "list"], &[]);
    assert!(listed.stdout.contains(&spec), "{listed}");

    // No `--plugin-dir` from here on: the hooks come from the installed plugin.
    let first = project.env.run(&["-p", "hi"], &[]);
    assert_eq!(first.code(), Some(0), "{first}");
    assert_contains_all(
        "the first request's system messages",
        &project.mock.main_requests()[0].role_text("system"),
        &[
            SESSION_START_CONTEXT,
            &format!("workflow `{WORKFLOW}`"),
            NOTE,
            "**Next:**",
        ],
    );

    let resumed = project.env.run(&["-p", "/checkpoint-resume"], &[]);
    assert_eq!(resumed.code(), Some(0), "{resumed}");
    project.assert_requests(2, &resumed);
    assert!(resumed.stdout.contains("RESUMED"), "{resumed}");
    assert_contains_all(
        "the expanded /checkpoint-resume",
        &project.mock.main_requests()[1].role_text("user"),
        &[
            "<command-name>/checkpoint:checkpoint-resume</command-name>",
            &format!("workflow `{WORKFLOW}`"),
            "**Next:**",
        ],
    );
    // The first session's Stop heartbeat is recent, so the plan continues the phase in place
    // rather than resetting it.
    assert_contains_all(
        "the expanded /checkpoint-resume",
        &project.mock.main_requests()[1].role_text("user"),
        &["was active recently"],
    );
    assert_eq!(
        phase(&project.state(WORKFLOW), "design")["status"],
        "in_progress"
    );
}
