//! The plugin's launcher (`plugin/bin/checkpoint`) and its hook commands (`plugin/hooks/hooks.json`),
//! run as the client runs them (`sh -c`), against release assets made from the binaries under
//! test and served on 127.0.0.1: what it runs, what it installs, and what it says when it cannot.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::OnceLock;

use assert_fs::TempDir;
use checkpoint_e2e::files::{FileServer, copy_tree};
use serde_json::Value;

const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The tools the launcher uses besides the shell's builtins.
const TOOLS: &[&str] = &[
    "sh",
    "uname",
    "mkdir",
    "rm",
    "mv",
    "chmod",
    "tar",
    "gzip",
    "sha256sum",
    "tr",
    "sed",
    "cut",
    "sleep",
    "curl",
    "wget",
    "cat",
    "date",
];

/// A clone's plugin directory, a data directory, release assets and a server for them.
struct Setup {
    temp: TempDir,
    server: FileServer,
}

impl Setup {
    /// The repository's plugin directory copied into a temp dir, with the checksum of an asset
    /// built from the binaries under test pinned, and that asset served.
    fn new() -> Setup {
        let temp = TempDir::new().unwrap();
        copy_tree(&repo_root().join("plugin"), &temp.path().join("plugin"));
        let assets = temp.path().join("assets");
        fs::create_dir_all(&assets).unwrap();
        let archive = assets.join(format!("{}.tar.gz", asset_name()));
        fs::copy(shared_asset(), &archive).unwrap();
        let sum = sha256(&archive);
        fs::write(
            temp.path().join("plugin/release/SHA256SUMS"),
            format!("# pinned\n{sum}  {}\n", file_name(&archive)),
        )
        .unwrap();
        let server = FileServer::start(&assets);
        let setup = Setup { temp, server };
        setup.tools_without(&[]);
        setup
    }

    fn plugin(&self) -> PathBuf {
        self.temp.path().join("plugin")
    }

    fn data(&self) -> PathBuf {
        self.temp.path().join("data")
    }

    fn assets(&self) -> PathBuf {
        self.temp.path().join("assets")
    }

    fn installed(&self) -> PathBuf {
        self.data()
            .join("bin")
            .join(format!("checkpoint-{VERSION}"))
            .join("checkpoint")
    }

    /// The number of downloads of the asset so far.
    fn downloads(&self) -> usize {
        let path = format!("/{}.tar.gz", asset_name());
        self.server.counts().get(&path).copied().unwrap_or(0)
    }

    /// A directory of links to the launcher's tools, less `without`; it is the PATH of every run.
    fn tools_without(&self, without: &[&str]) -> PathBuf {
        let dir = self.temp.path().join("tools");
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        for tool in TOOLS.iter().filter(|tool| !without.contains(tool)) {
            if let Some(path) = which(tool) {
                std::os::unix::fs::symlink(path, dir.join(tool)).unwrap();
            }
        }
        dir
    }

    /// `sh -c <command>` with the client's variables and the tools on PATH.
    fn sh(&self, command: &str) -> Command {
        let mut sh = Command::new("/bin/sh");
        sh.arg("-c")
            .arg(command)
            .env_clear()
            .env("PATH", self.temp.path().join("tools"))
            .env("HOME", self.temp.path().join("home"))
            .env("CLAUDE_PLUGIN_ROOT", self.plugin())
            .env("CLAUDE_PLUGIN_DATA", self.data())
            .env("CHECKPOINT_RELEASE_BASE", self.server.base_url())
            .current_dir(self.temp.path())
            .stdin(Stdio::null());
        sh
    }

    /// The launcher with `args`, as a skill's `!` line or the MCP entry runs it.
    fn launch(&self, args: &str) -> Command {
        self.sh(&format!(
            "\"${{CLAUDE_PLUGIN_ROOT}}/bin/checkpoint\" {args}"
        ))
    }

    /// The hook command of `event`, exactly as `hooks.json` has it.
    fn hook(&self, event: &str) -> Command {
        self.sh(&hook_command(&self.plugin(), event))
    }
}

#[test]
fn the_first_run_fetches_verifies_and_installs_the_binary_and_later_runs_use_it() {
    let setup = Setup::new();
    let first = run(&mut setup.launch("--version"));
    assert_success_with(&first, &format!("checkpoint {VERSION}"));
    assert!(stderr(&first).contains("installed"), "{}", stderr(&first));
    assert!(setup.installed().is_file());
    assert!(setup.installed().with_file_name("checkpoint-mcp").is_file());
    assert_eq!(setup.downloads(), 1);

    let second = run(&mut setup.launch("--version"));
    assert_success_with(&second, &format!("checkpoint {VERSION}"));
    assert!(stderr(&second).is_empty(), "{}", stderr(&second));
    assert_eq!(setup.downloads(), 1, "a second run fetches nothing");
    // Nothing but the installed version is left in the data directory: no lock, no scraps.
    let left: Vec<String> = fs::read_dir(setup.data().join("bin"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left, [format!("checkpoint-{VERSION}")]);
}

#[test]
fn the_session_start_hook_installs_the_binary_and_passes_the_payload_through() {
    let setup = Setup::new();
    let project = setup.temp.path().join("project");
    fs::create_dir_all(&project).unwrap();
    let payload = serde_json::json!({
        "session_id": "s1", "cwd": project, "hook_event_name": "SessionStart", "source": "startup",
    });
    let output = run_with_stdin(&mut setup.hook("SessionStart"), &payload.to_string());
    assert!(output.status.success(), "{output:?}");
    assert!(setup.installed().is_file(), "{output:?}");
    assert_eq!(setup.downloads(), 1);
    // The binary read the payload: with no workflow it says nothing and warns of nothing.
    assert!(!stderr(&output).contains("warning"), "{}", stderr(&output));
}

#[test]
fn racing_first_runs_install_once_and_all_succeed() {
    let setup = Setup::new();
    let children: Vec<Child> = (0..4)
        .map(|index| {
            let mut command = if index % 2 == 0 {
                setup.launch("--version")
            } else {
                setup.hook("SessionStart")
            };
            command
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        let output = child.wait_with_output().unwrap();
        assert!(output.status.success(), "{output:?}");
    }
    assert_eq!(setup.downloads(), 1, "{:?}", setup.server.requests());
    assert!(setup.installed().is_file());
}

#[test]
fn a_lock_left_by_a_killed_installer_is_taken_over() {
    let setup = Setup::new();
    let lock = setup
        .data()
        .join("bin")
        .join(format!(".install-{VERSION}.lock"));
    fs::create_dir_all(&lock).unwrap();
    // A process id that cannot be running: above the kernel's largest.
    fs::write(lock.join("pid"), "4194305\n").unwrap();
    fs::create_dir_all(setup.data().join("bin").join(".work-old-1")).unwrap();
    let output = run(&mut setup.launch("--version"));
    assert_success_with(&output, &format!("checkpoint {VERSION}"));
    assert!(!lock.exists());
    assert!(!setup.data().join("bin").join(".work-old-1").exists());
}

#[test]
fn a_download_that_does_not_match_the_pinned_checksum_installs_nothing() {
    let setup = Setup::new();
    let archive = setup.assets().join(format!("{}.tar.gz", asset_name()));
    let mut bytes = fs::read(&archive).unwrap();
    bytes.push(0);
    fs::write(&archive, bytes).unwrap();

    let output = run(&mut setup.launch("--version"));
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    assert!(
        stderr(&output).contains("does not match the checksum pinned in the plugin"),
        "{}",
        stderr(&output)
    );
    assert!(!setup.installed().exists());
    assert_eq!(stdout(&output), "");

    // As the session's start: exit 0, and the user and the model are told why and what to run.
    let output = run(&mut setup.hook("SessionStart"));
    let told = session_start_message(&output);
    assert!(told.contains("does not match"), "{told}");
    assert!(told.contains("cargo install --locked"), "{told}");
    assert!(!setup.installed().exists());
}

#[test]
fn without_a_binary_every_hook_exits_0_and_only_the_session_start_says_what_to_run() {
    // Every way of having nothing to install: no server, no pinned checksum, no curl nor wget,
    // no sha256 tool, an unknown platform, a corrupt archive, an archive without the binaries.
    type Break = Box<dyn Fn(&Setup) -> Vec<(&'static str, String)>>;
    let cases: Vec<(&str, Break, &str, usize)> = vec![
        (
            "no server",
            Box::new(|_: &Setup| vec![("CHECKPOINT_RELEASE_BASE", "http://127.0.0.1:1".into())]),
            "downloading http://127.0.0.1:1/",
            0,
        ),
        (
            "no pinned checksum",
            Box::new(|setup: &Setup| {
                fs::write(setup.plugin().join("release/SHA256SUMS"), "# none yet\n").unwrap();
                vec![]
            }),
            "no checksum for",
            0,
        ),
        (
            "no curl nor wget",
            Box::new(|setup: &Setup| {
                setup.tools_without(&["curl", "wget"]);
                vec![]
            }),
            "neither `curl` nor `wget`",
            0,
        ),
        (
            "no sha256 tool",
            Box::new(|setup: &Setup| {
                setup.tools_without(&["sha256sum"]);
                vec![]
            }),
            "to verify a download with",
            0,
        ),
        (
            "an unknown platform",
            Box::new(|setup: &Setup| {
                let tools = setup.tools_without(&["uname"]);
                write_script(&tools.join("uname"), "echo Plan9 mips");
                vec![]
            }),
            "no release is built for this platform (Plan9 mips)",
            0,
        ),
        (
            "a missing asset",
            Box::new(|setup: &Setup| {
                fs::remove_file(setup.assets().join(format!("{}.tar.gz", asset_name()))).unwrap();
                vec![]
            }),
            "404",
            1,
        ),
        (
            "a corrupt archive",
            Box::new(|setup: &Setup| {
                repin(setup, b"not an archive");
                vec![]
            }),
            "is not a readable .tar.gz archive",
            1,
        ),
        (
            "an archive without the binaries",
            Box::new(|setup: &Setup| {
                let empty = setup.temp.path().join("empty");
                fs::create_dir_all(empty.join(asset_name())).unwrap();
                let tarball = empty.join("a.tar.gz");
                tar(&empty, &asset_name(), &tarball);
                repin(setup, &fs::read(&tarball).unwrap());
                vec![]
            }),
            "holds no",
            1,
        ),
        (
            "a binary of another version",
            Box::new(|setup: &Setup| {
                let other = setup.temp.path().join("other-version");
                let staging = other.join(asset_name());
                fs::create_dir_all(&staging).unwrap();
                write_script(&staging.join("checkpoint"), "echo checkpoint 9.9.9");
                write_script(&staging.join("checkpoint-mcp"), "exit 0");
                let tarball = other.join("a.tar.gz");
                tar(&other, &asset_name(), &tarball);
                repin(setup, &fs::read(&tarball).unwrap());
                vec![]
            }),
            "does not run here as",
            1,
        ),
    ];
    for (case, break_it, reason, downloads) in cases {
        let setup = Setup::new();
        let env = break_it(&setup);
        let start = run(setup
            .hook("SessionStart")
            .envs(env.iter().map(|(k, v)| (k, v))));
        let told = session_start_message(&start);
        assert!(told.contains(reason), "{case}: {told}");
        assert!(
            told.contains(
                "cargo install --locked --git https://github.com/checkpoint-dev/checkpoint checkpoint-cli"
            ) && told.contains(&format!("releases/tag/v{VERSION}")),
            "{case}: {told}"
        );
        for event in ["PreToolUse", "PostToolUse", "Stop", "SubagentStop"] {
            let output = run(setup.hook(event).envs(env.iter().map(|(k, v)| (k, v))));
            assert!(output.status.success(), "{case}, {event}: {output:?}");
            assert_eq!(stdout(&output), "", "{case}, {event}");
            assert!(stderr(&output).contains("warning"), "{case}, {event}");
        }
        assert!(!setup.installed().exists(), "{case}");
        assert_eq!(
            setup.downloads(),
            downloads,
            "{case}: only the session's start downloads, and only what it can verify"
        );
    }
}

#[test]
fn an_explicit_binary_or_one_of_the_plugins_version_on_path_is_run_and_nothing_is_fetched() {
    let setup = Setup::new();
    // CHECKPOINT_BIN first, through the hook command and the launcher alike.
    let output = run(setup
        .launch("--version")
        .env("CHECKPOINT_BIN", env!("CARGO_BIN_EXE_checkpoint")));
    assert_success_with(&output, &format!("checkpoint {VERSION}"));
    let output = run(setup
        .hook("SessionEnd")
        .env("CHECKPOINT_BIN", env!("CARGO_BIN_EXE_checkpoint")));
    assert!(output.status.success(), "{output:?}");
    // A CHECKPOINT_BIN that is not a program is said, not skipped.
    let output = run(setup
        .launch("--version")
        .env("CHECKPOINT_BIN", "/nonexistent"));
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr(&output).contains("CHECKPOINT_BIN"),
        "{}",
        stderr(&output)
    );

    // A `checkpoint` of another version on PATH is passed over; one of this version is run.
    let tools = setup.temp.path().join("tools");
    let other = setup.temp.path().join("other");
    fs::create_dir_all(&other).unwrap();
    write_script(&other.join("checkpoint"), "echo checkpoint 0.0.1");
    let right = Path::new(env!("CARGO_BIN_EXE_checkpoint"))
        .parent()
        .unwrap();
    let path = format!(
        "{}:{}:{}",
        other.display(),
        right.display(),
        tools.display()
    );
    let output = run(setup.launch("--version").env("PATH", &path));
    assert_success_with(&output, &format!("checkpoint {VERSION}"));
    assert_eq!(setup.downloads(), 0);
    assert!(!setup.installed().exists());
    // A relative PATH entry (a project's own directory) is never searched.
    let project_bin = setup.temp.path().join("bin");
    fs::create_dir_all(&project_bin).unwrap();
    write_script(
        &project_bin.join("checkpoint"),
        &format!("echo checkpoint {VERSION}; touch planted-ran"),
    );
    let output = run(setup
        .launch("--version")
        .env("PATH", format!("bin:{}", tools.display())));
    assert!(output.status.success(), "{output:?}");
    assert!(!setup.temp.path().join("planted-ran").exists());
    assert_eq!(setup.downloads(), 1);
}

#[test]
fn the_hook_command_runs_the_installed_binary_without_the_launcher() {
    let setup = Setup::new();
    run(&mut setup.launch("--version"));
    assert!(setup.installed().is_file());
    // With the launcher gone, the hooks still run: they do not go through it.
    fs::remove_file(setup.plugin().join("bin/checkpoint")).unwrap();
    let output = run(&mut setup.hook("SessionStart"));
    assert!(output.status.success(), "{output:?}");
    assert!(
        !stderr(&output).contains("not found"),
        "{}",
        stderr(&output)
    );
    // Without HOME and CLAUDE_PLUGIN_DATA the command runs only an absolute path, else the
    // launcher.
    let command = hook_command(&setup.plugin(), "Stop");
    assert!(command.contains("case $c in /*)"), "{command}");
}

#[test]
fn the_plugin_directory_in_git_is_complete_and_its_launcher_executable() {
    let root = repo_root();
    let listed = Command::new("git")
        .args(["ls-files", "--stage", "plugin/bin/checkpoint"])
        .current_dir(&root)
        .output()
        .unwrap();
    let listed = String::from_utf8_lossy(&listed.stdout);
    assert!(
        listed.starts_with("100755 "),
        "the launcher must be committed executable: {listed:?}"
    );
    for part in [
        ".claude-plugin/plugin.json",
        ".mcp.json",
        "hooks/hooks.json",
        "bin/checkpoint",
        "release/SHA256SUMS",
        "skills/checkpoint/SKILL.md",
        "skills/checkpoint-resume/SKILL.md",
    ] {
        assert!(root.join("plugin").join(part).is_file(), "plugin/{part}");
    }
    let marketplace: Value = serde_json::from_str(
        &fs::read_to_string(root.join(".claude-plugin/marketplace.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(marketplace["name"], "checkpoint");
    assert_eq!(marketplace["plugins"][0]["name"], "checkpoint");
    assert_eq!(marketplace["plugins"][0]["source"], "./plugin");
    assert_eq!(marketplace["plugins"][0]["version"], VERSION);
}

// Helpers.

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn hook_command(plugin: &Path, event: &str) -> String {
    let hooks: Value =
        serde_json::from_str(&fs::read_to_string(plugin.join("hooks/hooks.json")).unwrap())
            .unwrap();
    hooks["hooks"][event][0]["hooks"][0]["command"]
        .as_str()
        .unwrap_or_else(|| panic!("no hook command for {event}"))
        .to_owned()
}

/// `checkpoint-<version>-<target>`, with the launcher's names for this platform.
fn asset_name() -> String {
    let target = match (std::env::consts::OS, std::env::consts::ARCH) {
        ("linux", "x86_64") => "x86_64-unknown-linux-gnu",
        ("linux", "aarch64") => "aarch64-unknown-linux-gnu",
        ("macos", "x86_64") => "x86_64-apple-darwin",
        ("macos", "aarch64") => "aarch64-apple-darwin",
        (os, arch) => panic!("no release target for {os} {arch}"),
    };
    format!("checkpoint-{VERSION}-{target}")
}

/// The asset of the binaries under test, built once for every test (they are large debug builds).
fn shared_asset() -> &'static Path {
    static ASSET: OnceLock<PathBuf> = OnceLock::new();
    ASSET.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("launcher-asset-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        build_asset(&dir, &asset_name())
    })
}

/// `<dir>/<name>.tar.gz` holding `<name>/checkpoint` and `<name>/checkpoint-mcp`, the binaries
/// under test.
fn build_asset(dir: &Path, name: &str) -> PathBuf {
    let staging = dir.join(name);
    fs::create_dir_all(&staging).unwrap();
    fs::copy(env!("CARGO_BIN_EXE_checkpoint"), staging.join("checkpoint")).unwrap();
    fs::copy(
        env!("CARGO_BIN_EXE_checkpoint-mcp"),
        staging.join("checkpoint-mcp"),
    )
    .unwrap();
    let archive = dir.join(format!("{name}.tar.gz"));
    tar(dir, name, &archive);
    fs::remove_dir_all(&staging).unwrap();
    archive
}

/// `tar -cz`, compressing fast: the debug binaries are large.
fn tar(dir: &Path, name: &str, archive: &Path) {
    let status = Command::new("sh")
        .arg("-c")
        .arg("tar -cf - -C \"$1\" \"$2\" | gzip -1 >\"$3\"")
        .arg("sh")
        .arg(dir)
        .arg(name)
        .arg(archive)
        .status()
        .unwrap();
    assert!(status.success());
}

/// Serves `bytes` as the asset, with its checksum pinned.
fn repin(setup: &Setup, bytes: &[u8]) {
    let archive = setup.assets().join(format!("{}.tar.gz", asset_name()));
    fs::write(&archive, bytes).unwrap();
    fs::write(
        setup.plugin().join("release/SHA256SUMS"),
        format!("{}  {}\n", sha256(&archive), file_name(&archive)),
    )
    .unwrap();
}

fn sha256(path: &Path) -> String {
    let output = Command::new("sha256sum").arg(path).output().unwrap();
    String::from_utf8_lossy(&output.stdout)
        .split_whitespace()
        .next()
        .unwrap()
        .to_owned()
}

fn file_name(path: &Path) -> String {
    path.file_name().unwrap().to_string_lossy().into_owned()
}

fn which(tool: &str) -> Option<PathBuf> {
    ["/usr/local/bin", "/usr/bin", "/bin"]
        .iter()
        .map(|dir| Path::new(dir).join(tool))
        .find(|path| path.is_file())
}

fn write_script(path: &Path, body: &str) {
    fs::write(path, format!("#!/bin/sh\n{body}\n")).unwrap();
    fs::set_permissions(path, fs::Permissions::from_mode(0o755)).unwrap();
}

fn run(command: &mut Command) -> Output {
    command.output().unwrap()
}

fn run_with_stdin(command: &mut Command, stdin: &str) -> Output {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), stdin.as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[track_caller]
fn assert_success_with(output: &Output, expected: &str) {
    assert!(output.status.success(), "{output:?}");
    assert_eq!(stdout(output).trim(), expected, "{output:?}");
}

/// The SessionStart hook's output: exit 0, one JSON object whose `systemMessage` (the user's)
/// and `additionalContext` (the model's) say the same; returns that text.
#[track_caller]
fn session_start_message(output: &Output) -> String {
    assert!(output.status.success(), "{output:?}");
    let json: Value = serde_json::from_str(stdout(output).trim())
        .unwrap_or_else(|err| panic!("not JSON ({err}): {output:?}"));
    let message = json["systemMessage"].as_str().unwrap().to_owned();
    assert_eq!(
        json["hookSpecificOutput"]["additionalContext"].as_str(),
        Some(message.as_str())
    );
    assert_eq!(json["hookSpecificOutput"]["hookEventName"], "SessionStart");
    message
}

/// A relative `XDG_DATA_HOME` (without `CLAUDE_PLUGIN_DATA`) names a directory of the project:
/// a binary planted there is never run, by the hook commands nor by the launcher, which installs
/// under the home instead.
#[test]
fn a_relative_data_directory_is_ignored_and_a_planted_binary_never_runs() {
    let setup = Setup::new();
    let planted = setup
        .temp
        .path()
        .join(format!("rel/checkpoint-plugin/bin/checkpoint-{VERSION}"));
    fs::create_dir_all(&planted).unwrap();
    let marker = setup.temp.path().join("planted-ran");
    write_script(
        &planted.join("checkpoint"),
        &format!("touch '{}'; echo planted", marker.display()),
    );
    for relative in ["rel", "./rel"] {
        for mut command in [setup.hook("Stop"), setup.launch("--version")] {
            let output = run(command
                .env_remove("CLAUDE_PLUGIN_DATA")
                .env("XDG_DATA_HOME", relative));
            assert!(!marker.exists(), "{relative}: {output:?}");
            assert!(output.status.success(), "{relative}: {output:?}");
            assert!(!stdout(&output).contains("planted"), "{output:?}");
        }
    }
    let home_install = setup.temp.path().join(format!(
        "home/.local/share/checkpoint-plugin/bin/checkpoint-{VERSION}/checkpoint"
    ));
    assert!(home_install.is_file());
}

/// A backslash in the data directory does not change the checksum compared (a tool escapes
/// such a name in its output); anything but an executable regular file at the install path is
/// not an installation: the hooks go on (exit 0, never 126) and the launcher installs over it.
#[test]
fn an_odd_data_path_or_install_path_is_handled() {
    let setup = Setup::new();
    let data = setup.temp.path().join("da\\ta");
    let output = run(setup.launch("--version").env("CLAUDE_PLUGIN_DATA", &data));
    assert_success_with(&output, &format!("checkpoint {VERSION}"));

    let setup = Setup::new();
    fs::create_dir_all(setup.installed().join("sub")).unwrap();
    for event in ["Stop", "PostToolUse", "PreToolUse"] {
        let output = run(&mut setup.hook(event));
        assert_eq!(output.status.code(), Some(0), "{event}: {output:?}");
    }
    let output = run(&mut setup.launch("--version"));
    assert_success_with(&output, &format!("checkpoint {VERSION}"));
    assert!(setup.installed().is_file());
}

/// An archive holding a symbolic link (here, the binary itself, pointing elsewhere) installs
/// nothing, whatever its sum, and says why.
#[test]
fn an_archive_holding_a_link_installs_nothing() {
    let setup = Setup::new();
    let dir = setup.temp.path().join("linked-asset");
    let name = asset_name();
    let staging = dir.join(&name);
    fs::create_dir_all(&staging).unwrap();
    fs::copy(
        env!("CARGO_BIN_EXE_checkpoint"),
        staging.join("checkpoint-mcp"),
    )
    .unwrap();
    std::os::unix::fs::symlink("/bin/sh", staging.join("checkpoint")).unwrap();
    let archive = dir.join(format!("{name}.tar.gz"));
    tar(&dir, &name, &archive);
    repin(&setup, &fs::read(&archive).unwrap());
    let output = run(&mut setup.launch("--version"));
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    assert!(
        stderr(&output).contains("holds a link"),
        "{}",
        stderr(&output)
    );
    assert!(!setup.installed().exists());
}

/// While another launcher (alive) holds the install lock, the session's start does not wait
/// past its hook's timeout: it returns by itself, exit 0, saying the installation is in
/// progress. The patience below is the hook's 30 s timeout plus a margin for a loaded machine,
/// a guard against the minute it used to wait.
#[test]
fn the_session_start_returns_within_its_timeout_while_another_launcher_installs() {
    let setup = Setup::new();
    let lock = setup
        .data()
        .join("bin")
        .join(format!(".install-{VERSION}.lock"));
    fs::create_dir_all(&lock).unwrap();
    fs::write(lock.join("pid"), format!("{}\n", std::process::id())).unwrap();
    let mut child = setup
        .hook("SessionStart")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let status = crate::support::exits_by_itself(&mut child, std::time::Duration::from_secs(40));
    assert_eq!(status.and_then(|status| status.code()), Some(0));
    let output = child.wait_with_output().unwrap();
    let told = session_start_message(&output);
    assert!(told.contains("in progress"), "{told}");
    assert_eq!(setup.downloads(), 0);
}
