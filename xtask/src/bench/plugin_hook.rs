//! The cost of a hook as an installed plugin runs it: Claude Code runs a hook's command through
//! `sh -c`, so the floor is `sh -c true`; the plugin's command (`plugin/hooks/hooks.json`) runs
//! the binary installed under the plugin's data directory, and reaches the launcher
//! (`plugin/bin/checkpoint`) only when it is missing. Also measured: the same hook through the
//! launcher, the arrangement the direct command replaced, and the binary's path alone as the
//! command (the bundle's hook command before the launcher), the floor of any arrangement.

use std::{
    ffi::OsString,
    fs,
    path::{Path, PathBuf},
};

use crate::{
    Result,
    bench::{
        fixtures,
        harness::{Case, Expect},
        report::Target,
        targets::Lookup,
    },
    plugin,
};

/// `sh -c true`: the floor of every hook.
pub(crate) const SH_TRUE_KEY: &str = "plugin-hook/sh-true";
/// The plugin's hook command, the binary installed.
pub(crate) const HOOK_KEY: &str = "plugin-hook/command";
/// The same hook through the launcher.
const LAUNCHER_KEY: &str = "plugin-hook/launcher";
/// The binary's path as the whole command, the bundle's hook command before the launcher: what
/// no arrangement can beat.
const DIRECT_KEY: &str = "plugin-hook/direct";
/// The goal of the plugin's hook command against `sh -c true`.
const GOAL: f64 = 1.15;

/// The four cases, in a project without a workflow: a copy of the repository's plugin directory
/// and a data directory holding `binary` where the launcher installs it.
pub(crate) fn cases(root: &Path, dir: &Path, binary: &Path) -> Result<Vec<Case>> {
    let base = dir.join("plugin");
    fixtures::fresh_dir(&base)?;
    let plugin_dir = base.join("plugin");
    crate::dist::copy_tree(&root.join("plugin"), &plugin_dir)?;
    let version = plugin::version();
    let installed = base
        .join("data")
        .join("bin")
        .join(format!("checkpoint-{version}"));
    fs::create_dir_all(&installed)
        .map_err(|err| format!("failed to create `{}`: {err}", installed.display()))?;
    for name in ["checkpoint", "checkpoint-mcp"] {
        let from = binary.with_file_name(name);
        let from = if from.exists() {
            from
        } else {
            binary.to_owned()
        };
        fs::copy(&from, installed.join(name))
            .map_err(|err| format!("failed to copy `{}`: {err}", from.display()))?;
    }
    let project = base.join("project");
    fixtures::fresh_dir(&project)?;
    fixtures::git(&project, &["init", "--quiet"])?;
    let payload = base.join("payload.json");
    fixtures::write_file(&payload, &fixtures::session_start_payload(&project))?;

    // The client sets these variables in the hook's environment; `export` is a builtin.
    let vars = format!(
        "export CLAUDE_PLUGIN_ROOT={} CLAUDE_PLUGIN_DATA={}; ",
        crate::shell_quote(&plugin_dir.to_string_lossy()),
        crate::shell_quote(&base.join("data").to_string_lossy()),
    );
    let sh = |key: &str, label: &str, script: String, expect: Expect| Case {
        key: key.into(),
        label: label.into(),
        program: PathBuf::from("/bin/sh"),
        args: vec![OsString::from("-c"), OsString::from(script)],
        cwd: project.clone(),
        stdin: Some(payload.clone()),
        setup: None,
        expect,
    };
    Ok(vec![
        sh(SH_TRUE_KEY, "`sh -c true`", "true".into(), Expect::Nothing),
        sh(
            HOOK_KEY,
            "the plugin's `SessionStart` hook command (`sh -c`), binary installed, no workflow",
            format!("{vars}{}", plugin::hook_command(&version, "SessionStart")),
            Expect::Nothing,
        ),
        sh(
            DIRECT_KEY,
            "the installed binary's path as the command (`sh -c`), no workflow",
            format!(
                "{vars}{} hook SessionStart",
                crate::shell_quote(&installed.join("checkpoint").to_string_lossy())
            ),
            Expect::Nothing,
        ),
        sh(
            LAUNCHER_KEY,
            "the same hook through the launcher (`sh -c`), binary installed, no workflow",
            format!("{vars}\"$CLAUDE_PLUGIN_ROOT/bin/checkpoint\" hook SessionStart"),
            Expect::Nothing,
        ),
    ])
}

/// The goals: the plugin's hook command within 1.15× of `sh -c true` (the issue's), and within
/// 1.15× of the binary's path alone as the command (what the arrangement adds); the launcher's
/// ratio beside them.
pub(crate) fn targets(lookup: &Lookup<'_>) -> [Target; 2] {
    let launcher = lookup.ratio(LAUNCHER_KEY, SH_TRUE_KEY);
    let against = |floor_key: &str, floor: &str| {
        let hook = lookup.ratio(HOOK_KEY, floor_key);
        Target {
            text: format!(
                "a hook through the installed plugin's command line within {GOAL}× of {floor}"
            ),
            measured: match (hook, launcher) {
                (Some(hook), Some(launcher)) if floor_key == SH_TRUE_KEY => {
                    format!("{hook:.2}× (through the launcher: {launcher:.2}×)")
                }
                (Some(hook), _) => format!("{hook:.2}×"),
                _ => "–".into(),
            },
            met: hook.map(|ratio| ratio <= GOAL),
            // What the arrangement adds is guarded; `sh -c true` leaves out the hook's own work.
            guard: floor_key == DIRECT_KEY,
        }
    };
    [
        against(SH_TRUE_KEY, "`sh -c true`"),
        against(
            DIRECT_KEY,
            "the binary's path alone as the command (`sh -c '<bin> hook SessionStart'`)",
        ),
    ]
}
