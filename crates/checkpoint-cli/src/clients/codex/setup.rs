//! `checkpoint setup codex`: Codex CLI's hooks in `hooks.json` and the MCP server in
//! `config.toml` (`[mcp_servers.checkpoint]`), in the project's `.codex/` or in `$CODEX_HOME`
//! (default `~/.codex`).

use std::path::{Path, PathBuf};

use miette::Result;
use serde_json::Value;

use crate::clients::setup::{
    FileEdit, Plan, Scope, Target,
    hooks_json::{self, HookSpec},
    toml_file,
};
use crate::{clients::Client, env};

/// `$CODEX_HOME`, else `~/.codex`.
fn codex_home(target: &Target) -> Result<PathBuf> {
    match target.env(env::CODEX_HOME) {
        Some(home) => Ok(home),
        None => Ok(target.home()?.join(".codex")),
    }
}

pub(crate) fn plan(target: &Target) -> Result<Plan<'_>> {
    let user = codex_home(target);
    let dir = match target.scope {
        Scope::Project => target.project_root.join(".codex"),
        Scope::User => user
            .as_ref()
            .map_err(|err| miette::miette!("{err}"))?
            .clone(),
    };
    let specs = HookSpec::of(target, Client::Codex, &checkpoint_contract::hooks::CODEX);
    let hooks_file = dir.join("hooks.json");
    let needs = needs(target, user.ok().as_deref(), &hooks_file);
    let remove = target.remove;
    let binary = target.binary.clone();
    Ok(Plan {
        edits: vec![
            hooks_json::hooks_file(hooks_file, Client::Codex, specs, remove),
            FileEdit {
                path: dir.join("config.toml"),
                edit: Box::new(move |text| {
                    toml_file::edit_server(text, "mcp_servers", &binary, remove)
                }),
            },
        ],
        needs,
    })
}

/// What Codex needs before it runs the hooks: a trusted project (for the project's files) and
/// reviewed hooks.
fn needs(target: &Target, user: Option<&Path>, hooks_file: &Path) -> Vec<String> {
    let user_config = user.map_or_else(
        || "$CODEX_HOME/config.toml".to_owned(),
        |home| home.join("config.toml").display().to_string(),
    );
    let mut needs = Vec::new();
    if target.scope == Scope::Project {
        let root = target.project_root.display().to_string();
        let trusted = user
            .and_then(|home| {
                checkpoint_core::read_foreign(
                    &home.join("config.toml"),
                    crate::clients::setup::MAX_CONFIG_BYTES,
                )
                .ok()
                .flatten()
            })
            .and_then(|bytes| String::from_utf8(bytes).ok())
            .and_then(|text| text.parse::<toml_edit::DocumentMut>().ok())
            .is_some_and(|document| {
                document
                    .get("projects")
                    .and_then(|projects| projects.get(&root))
                    .and_then(|project| project.get("trust_level"))
                    .and_then(|level| level.as_str())
                    == Some("trusted")
            });
        if !trusted {
            needs.push(format!(
                "Codex reads `.codex/` only in a trusted project: start `codex` here once and trust the folder, or add to `{user_config}`:\n  [projects.{}]\n  trust_level = \"trusted\"",
                Value::String(root)
            ));
        }
    }
    needs.push(format!(
        "Codex runs a hook only once it is reviewed: open `/hooks` in `codex` and approve the hooks of `{}`, or run `codex exec --dangerously-bypass-hook-trust` (which `checkpoint run --client codex` passes).",
        hooks_file.display()
    ));
    needs.push("A `git commit` is recorded only when it can run: Codex's default sandboxes keep `.git` read-only (`sandbox_mode = \"danger-full-access\"` lets it).".to_owned());
    needs
}
