//! The repository's plugin directory (`plugin/`) and its marketplace
//! (`.claude-plugin/marketplace.json`): what `cargo xtask codegen` derives from the crate's version
//! (the manifest's version, the launcher's, the hook commands), so that a plain clone installs.

use std::{fs, path::Path};

use crate::Result;

/// The plugin's name, as users install it (`checkpoint@checkpoint`).
pub(crate) const PLUGIN_NAME: &str = "checkpoint";
/// The repository's marketplace (`claude plugin marketplace add <owner>/<repo>`).
pub(crate) const MARKETPLACE_NAME: &str = "checkpoint";

/// The version of the crate, which the plugin, its launcher and its release assets share.
pub(crate) fn version() -> String {
    checkpoint_cli::command()
        .get_version()
        .unwrap_or("0.0.0")
        .to_owned()
}

/// The generated files of the plugin directory and the marketplace, as (path, contents).
pub(crate) fn generated_files(root: &Path) -> Result<Vec<(&'static str, String)>> {
    let version = version();
    Ok(vec![
        ("plugin/hooks/hooks.json", hooks_json(&version)),
        (
            "plugin/.claude-plugin/plugin.json",
            manifest(root, &version)?,
        ),
        (
            ".claude-plugin/marketplace.json",
            marketplace_json(&version),
        ),
        ("plugin/bin/checkpoint", launcher(root, &version)?),
    ])
}

/// The shell command of one hook: `CHECKPOINT_BIN` or the installed binary of this version in
/// `CLAUDE_PLUGIN_DATA` when it is an executable regular file at an absolute path (no shell
/// script on the hot path), else the launcher, which applies the whole rule (a relative
/// `XDG_DATA_HOME` ignored), installs the binary or says what to do.
pub(crate) fn hook_command(version: &str, event: &str) -> String {
    format!(
        "c=\"${{CHECKPOINT_BIN:-${{CLAUDE_PLUGIN_DATA:+$CLAUDE_PLUGIN_DATA/bin/checkpoint-{version}/checkpoint}}}}\"; \
         case $c in /*) ;; *) c= ;; esac; [ -f \"$c\" ] && [ -x \"$c\" ] || c=\"${{CLAUDE_PLUGIN_ROOT}}/bin/checkpoint\"; exec \"$c\" hook {event}"
    )
}

fn hooks_json(version: &str) -> String {
    let mut hooks = serde_json::Map::new();
    // The one table `checkpoint setup claude` writes from too.
    for hook in checkpoint_contract::hooks::CLAUDE_CODE {
        let mut entry = serde_json::Map::new();
        if let Some(matcher) = hook.matcher {
            entry.insert("matcher".into(), matcher.into());
        }
        entry.insert(
            "hooks".into(),
            serde_json::json!([{
                "type": "command",
                "command": hook_command(version, hook.event),
                "timeout": hook.timeout,
            }]),
        );
        hooks.insert(
            hook.event.into(),
            serde_json::Value::Array(vec![entry.into()]),
        );
    }
    let file = serde_json::json!({
        "description": "checkpoint: keep workflow state current without hand-written JSON, and re-inject where the work stands after a restart or a compaction",
        "hooks": hooks,
    });
    pretty(&file)
}

fn manifest(root: &Path, version: &str) -> Result<String> {
    let path = root.join("plugin/.claude-plugin/plugin.json");
    let text = fs::read_to_string(&path)
        .map_err(|err| format!("failed to read `{}`: {err}", path.display()))?;
    let mut manifest: serde_json::Value = serde_json::from_str(&text)
        .map_err(|err| format!("failed to parse `{}`: {err}", path.display()))?;
    manifest["version"] = version.into();
    Ok(pretty(&manifest))
}

fn marketplace_json(version: &str) -> String {
    pretty(&serde_json::json!({
        "name": MARKETPLACE_NAME,
        "owner": { "name": "The checkpoint developers" },
        "metadata": {
            "description": "checkpoint: durable, resumable multi-phase workflows for Claude Code (2.1.197 and later)",
            "version": version,
        },
        "plugins": [{
            "name": PLUGIN_NAME,
            "source": "./plugin",
            "description": "Durable checkpoints and resume for long, multi-phase Claude Code workflows (Claude Code 2.1.197 and later); fetches its binary on first use",
            "version": version,
        }],
    }))
}

/// The launcher with its `version=` line set.
fn launcher(root: &Path, version: &str) -> Result<String> {
    let path = root.join("plugin/bin/checkpoint");
    let text = fs::read_to_string(&path)
        .map_err(|err| format!("failed to read `{}`: {err}", path.display()))?;
    let mut found = false;
    let lines: Vec<String> = text
        .split_inclusive('\n')
        .map(|line| {
            if !found && line.starts_with("version=") {
                found = true;
                format!("version={version}\n")
            } else {
                line.to_owned()
            }
        })
        .collect();
    if !found {
        return Err(format!("`{}` has no `version=` line", path.display()));
    }
    Ok(lines.concat())
}

fn pretty(value: &serde_json::Value) -> String {
    format!(
        "{}\n",
        serde_json::to_string_pretty(value).expect("JSON serializes")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hook_command_prefers_the_installed_binary_and_falls_back_to_the_launcher() {
        let command = hook_command("1.2.3", "Stop");
        assert!(
            command.contains("/bin/checkpoint-1.2.3/checkpoint"),
            "{command}"
        );
        assert!(
            command.contains("c=\"${CLAUDE_PLUGIN_ROOT}/bin/checkpoint\""),
            "{command}"
        );
        assert!(command.ends_with("exec \"$c\" hook Stop"), "{command}");
    }
}
