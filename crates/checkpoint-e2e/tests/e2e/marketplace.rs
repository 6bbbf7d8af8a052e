//! Installing from the repository as a marketplace, as a user does (`claude plugin marketplace add`
//! of a clone, then `claude plugin install checkpoint@checkpoint`), with nothing built: the
//! plugin's launcher fetches the release asset from a server on 127.0.0.1, verifies it against
//! the pinned checksum, installs it under the plugin's data directory, and the session goes on
//! (facts: "installing from a repository, the plugin's data directory, what a user sees").

use std::fs;
use std::path::{Path, PathBuf};

use checkpoint_e2e::Turn;
use checkpoint_e2e::claude::workspace_root;
use checkpoint_e2e::files::{FileServer, copy_tree};
use tempfile::TempDir;

use crate::support::{
    NOTE, Project, SESSION_START_CONTEXT, WORKFLOW, assert_contains_all, path_str,
};

/// The variable that names the directory of release assets (`cargo xtask release-assets`).
const ASSETS_ENV: &str = "CHECKPOINT_RELEASE_ASSETS";
/// The marketplace and the plugin, as a user names them.
const SPEC: &str = "checkpoint@checkpoint";

/// A copy of the repository's marketplace (`.claude-plugin/`) and plugin directory, as a clone
/// has them, with the checksums of the assets under test pinned.
struct RepoClone {
    dir: TempDir,
}

impl RepoClone {
    fn new(assets: &Path) -> RepoClone {
        let dir = tempfile::Builder::new()
            .prefix("checkpoint-e2e-clone-")
            .tempdir()
            .expect("creating a temp dir succeeds");
        let root = workspace_root();
        copy_tree(
            &root.join(".claude-plugin"),
            &dir.path().join(".claude-plugin"),
        );
        copy_tree(&root.join("plugin"), &dir.path().join("plugin"));
        let sums = fs::read_to_string(assets.join("SHA256SUMS")).expect("the assets have sums");
        fs::write(dir.path().join("plugin/release/SHA256SUMS"), sums).unwrap();
        RepoClone { dir }
    }

    fn path(&self) -> &str {
        path_str(self.dir.path())
    }
}

/// The release assets under test: `$CHECKPOINT_RELEASE_ASSETS`, else `target/release-assets`.
#[track_caller]
fn release_assets() -> PathBuf {
    let dir = std::env::var_os(ASSETS_ENV)
        .filter(|dir| !dir.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join("target").join("release-assets"));
    assert!(
        dir.join("SHA256SUMS").is_file(),
        "no release assets in `{}`\nhint: run `cargo xtask test`, which builds them with `cargo \
         xtask release-assets --no-pin`, or set {ASSETS_ENV}",
        dir.display()
    );
    dir
}

/// The asset's file name, from the assets' `SHA256SUMS` (one asset: this machine's).
fn asset_file(assets: &Path) -> String {
    let sums = fs::read_to_string(assets.join("SHA256SUMS")).unwrap();
    sums.lines()
        .find_map(|line| line.split_whitespace().nth(1))
        .expect("SHA256SUMS lists the asset")
        .trim_start_matches('*')
        .to_owned()
}

/// PATH without any directory that holds a `checkpoint`: the launcher must not find one.
fn path_without_checkpoint() -> String {
    let path = std::env::var("PATH").unwrap_or_else(|_| "/usr/bin:/bin".into());
    path.split(':')
        .filter(|dir| !dir.is_empty() && !Path::new(dir).join("checkpoint").exists())
        .collect::<Vec<_>>()
        .join(":")
}

/// Adds the clone as a marketplace and installs the plugin from it.
#[track_caller]
fn install(project: &Project, clone: &RepoClone) {
    let added = project
        .env
        .run(&["plugin", "marketplace", "add", clone.path()], &[]);
    assert_eq!(added.code(), Some(0), "{added}");
    let installed = project.env.run(&["plugin", "install", SPEC], &[]);
    assert_eq!(installed.code(), Some(0), "{installed}");
    assert!(
        installed.stdout.contains("Successfully installed"),
        "{installed}"
    );
}

/// Where the launcher installs the binary: the plugin's data directory (facts).
fn installed_binary(project: &Project) -> PathBuf {
    project
        .env
        .home()
        .join(".claude/plugins/data/checkpoint-checkpoint/bin")
        .join(format!("checkpoint-{}", env!("CARGO_PKG_VERSION")))
        .join("checkpoint")
}

#[test]
fn a_plain_clone_installs_and_the_first_session_fetches_verifies_and_uses_the_binary() {
    let assets = release_assets();
    let project = Project::interrupted(vec![Turn::text("FIRST"), Turn::text("SECOND")]);
    let clone = RepoClone::new(&assets);
    let server = FileServer::start(&assets);
    install(&project, &clone);
    let path = path_without_checkpoint();
    let base = server.base_url();
    let env = [("PATH", path.as_str()), ("CHECKPOINT_RELEASE_BASE", &base)];

    let first = project.env.run(&["-p", "hi"], &env);
    assert_eq!(first.code(), Some(0), "{first}");
    assert!(first.stdout.contains("FIRST"), "{first}");
    assert_contains_all(
        "the first request's system messages",
        &project.mock.main_requests()[0].role_text("system"),
        &[
            SESSION_START_CONTEXT,
            &format!("workflow `{WORKFLOW}`"),
            NOTE,
        ],
    );
    let asset = format!("/{}", asset_file(&assets));
    // The SessionStart hook and the MCP server start together (facts): one download all the same.
    assert_eq!(
        server.counts().get(&asset),
        Some(&1),
        "{:?}",
        server.requests()
    );
    assert!(installed_binary(&project).is_file());

    let second = project.env.run(&["-p", "again"], &env);
    assert_eq!(second.code(), Some(0), "{second}");
    assert_contains_all(
        "the second request's system messages",
        &project.mock.main_requests()[1].role_text("system"),
        &[SESSION_START_CONTEXT, &format!("workflow `{WORKFLOW}`")],
    );
    assert_eq!(
        server.counts().get(&asset),
        Some(&1),
        "a second session fetches nothing"
    );
}

#[test]
fn a_tampered_asset_installs_nothing_and_the_user_sees_why() {
    let assets = release_assets();
    let tampered = TempDir::new().unwrap();
    copy_tree(&assets, tampered.path());
    let archive = tampered.path().join(asset_file(&assets));
    let mut bytes = fs::read(&archive).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0xff;
    fs::write(&archive, bytes).unwrap();

    let project = Project::interrupted(vec![Turn::text("WENT ON")]);
    let clone = RepoClone::new(&assets);
    let server = FileServer::start(tampered.path());
    install(&project, &clone);
    let path = path_without_checkpoint();
    let base = server.base_url();
    let output = project.env.run(
        &["-p", "hi", "--output-format", "stream-json", "--verbose"],
        &[("PATH", path.as_str()), ("CHECKPOINT_RELEASE_BASE", &base)],
    );
    assert_eq!(output.code(), Some(0), "{output}");
    assert!(output.stdout.contains("WENT ON"), "{output}");
    // The user's view: the SessionStart hook's response in the stream (facts).
    let hook_response = hook_responses(&output.stdout);
    assert_contains_all(
        "the SessionStart hook's response",
        &hook_response,
        &[
            "does not match the checksum pinned in the plugin",
            "cargo install --locked",
        ],
    );
    // The model is told too, so that it can say it.
    assert_contains_all(
        "the first request's system messages",
        &project.mock.main_requests()[0].role_text("system"),
        &["does not match the checksum pinned in the plugin"],
    );
    assert!(!installed_binary(&project).exists());
}

#[test]
fn with_no_server_and_no_binary_the_session_runs_and_the_user_sees_the_install_command() {
    let assets = release_assets();
    let project = Project::interrupted(vec![Turn::text("STILL HERE")]);
    let clone = RepoClone::new(&assets);
    install(&project, &clone);
    let path = path_without_checkpoint();
    let output = project.env.run(
        &["-p", "hi", "--output-format", "stream-json", "--verbose"],
        &[
            ("PATH", path.as_str()),
            // Nothing listens on port 1.
            ("CHECKPOINT_RELEASE_BASE", "http://127.0.0.1:1"),
        ],
    );
    assert_eq!(output.code(), Some(0), "{output}");
    assert!(output.stdout.contains("STILL HERE"), "{output}");
    assert_contains_all(
        "the SessionStart hook's response",
        &hook_responses(&output.stdout),
        &[
            "cargo install --locked --git https://github.com/checkpoint-dev/checkpoint checkpoint-cli",
            "releases/tag/v",
        ],
    );
    assert!(!installed_binary(&project).exists());
}

#[test]
fn with_the_plugins_version_of_checkpoint_on_path_nothing_is_fetched() {
    let assets = release_assets();
    let project = Project::interrupted(vec![Turn::text("FROM PATH")]);
    let clone = RepoClone::new(&assets);
    let server = FileServer::start(&assets);
    install(&project, &clone);
    let bin_dir = project.plugin.checkpoint_bin();
    let bin_dir = bin_dir.parent().unwrap();
    let path = format!("{}:{}", bin_dir.display(), path_without_checkpoint());
    let base = server.base_url();
    let output = project.env.run(
        &["-p", "hi"],
        &[("PATH", path.as_str()), ("CHECKPOINT_RELEASE_BASE", &base)],
    );
    assert_eq!(output.code(), Some(0), "{output}");
    assert_contains_all(
        "the first request's system messages",
        &project.mock.main_requests()[0].role_text("system"),
        &[
            SESSION_START_CONTEXT,
            &format!("workflow `{WORKFLOW}`"),
            NOTE,
        ],
    );
    assert!(server.requests().is_empty(), "{:?}", server.requests());
    assert!(!installed_binary(&project).exists());
}

/// Client fact: the manifest's `engines` key, which could state the supported range, is an
/// unknown field to 2.1.197 and so fails `claude plugin validate --strict` there, while later
/// clients read it. The plugin states its range in the marketplace's descriptions and the README.
#[test]
fn engines_in_the_manifest_fails_strict_validation_on_the_oldest_client_only() {
    let project = Project::new(vec![]);
    let plugin = TempDir::new().unwrap();
    copy_tree(&workspace_root().join("plugin"), plugin.path());
    let manifest = plugin.path().join(".claude-plugin/plugin.json");
    let mut json: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(&manifest).unwrap()).unwrap();
    json["engines"] = serde_json::json!({ "claude-code": ">=2.1.197" });
    fs::write(&manifest, serde_json::to_string_pretty(&json).unwrap()).unwrap();
    let validated = project.env.run(
        &["plugin", "validate", "--strict", path_str(plugin.path())],
        &[],
    );
    let oldest = project.env.client_version() <= (2, 1, 197);
    if oldest {
        assert_eq!(validated.code(), Some(1), "{validated}");
        assert!(validated.stdout.contains("engines"), "{validated}");
    } else {
        assert_eq!(validated.code(), Some(0), "{validated}");
    }
    // Without it, the plugin directory and the repository root pass on every client.
    for dir in [workspace_root().join("plugin"), workspace_root()] {
        let validated = project
            .env
            .run(&["plugin", "validate", "--strict", path_str(&dir)], &[]);
        assert_eq!(validated.code(), Some(0), "{}: {validated}", dir.display());
    }
}

/// The `hook_response` events of a stream-json run, as one text.
fn hook_responses(stream: &str) -> String {
    stream
        .lines()
        .filter(|line| line.contains("\"hook_response\""))
        .collect::<Vec<_>>()
        .join("\n")
}
