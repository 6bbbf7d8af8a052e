//! The allowed edges between modules: per crate, and per directory where the map states one,
//! the modules in layers from the top; a module may name the modules of the layers below its
//! own, never one of its own layer or above. A module of a checked directory that the table does
//! not place is a problem too, so a new module is placed on purpose. Directories not in the table
//! are checked for circles only.

use crate::tidy::{Problem, imports::Graph};

/// How the modules under one parent may name each other.
enum Rule {
    /// Layers from the top: a module names only modules of the layers below its own.
    Layers(&'static [&'static [&'static str]]),
    /// Siblings that name none of each other (what they share lives below their parent).
    Apart,
}

/// The table: the crate (as the code map names it), the parent module (`""` for the crate's
/// top level, whose root file is `lib.rs` or `main.rs`), and its rule.
const TABLE: &[(&str, &str, Rule)] = &[
    (
        "crates/checkpoint-core",
        "",
        Rule::Layers(&[
            &["lib.rs"],
            &["workflow_run"],
            &[
                "observe", "run", "seeds", "subagent", "choice", "commit", "graph", "schema",
            ],
            &["resume"],
            &["store"],
            &["config", "sync"],
            &["writes"],
            &["effects", "history", "retention"],
            &["snapshots"],
            &["journal", "redact", "plan"],
            &["transition"],
            &["model"],
            &["fsx", "id"],
            &[
                "budget",
                "error",
                "failpoint",
                "suggest",
                "timestamp",
                "window",
            ],
        ]),
    ),
    (
        "crates/checkpoint-cli",
        "",
        Rule::Layers(&[
            &["lib.rs"],
            &["cli"],
            &["commands"],
            &["runner", "services"],
            &["remote"],
            &[
                "ctx",
                "clients",
                "probe",
                "args",
                "stdin",
                "unfinished",
                "snapshot",
                "run_activity",
            ],
            &[
                "json",
                "inside",
                "locate",
                "jsonc",
                "process_tree",
                "error_file",
            ],
            &["git", "env", "failure"],
            &["output"],
        ]),
    ),
    ("crates/checkpoint-cli", "commands", Rule::Apart),
    // Each client in its home, naming no other; what they share lies below them.
    (
        "crates/checkpoint-cli",
        "clients",
        Rule::Layers(&[
            &["claude", "codex", "gemini"],
            &["session", "setup"],
            &["event"],
            &["lenient"],
        ]),
    ),
    (
        "crates/checkpoint-contract",
        "",
        Rule::Layers(&[
            &["lib.rs"],
            &["document", "env", "exit_code", "hooks"],
            &["diagnostic"],
        ]),
    ),
    (
        "crates/checkpoint-mcp",
        "",
        Rule::Layers(&[
            &["lib.rs"],
            &["server"],
            &["gate", "invoke", "locate", "summary", "tools"],
        ]),
    ),
    (
        "crates/checkpoint-e2e",
        "",
        Rule::Layers(&[
            &["lib.rs"],
            &["codex", "gemini", "plugin"],
            &["claude"],
            &["files", "mock"],
        ]),
    ),
    (
        "xtask",
        "",
        Rule::Layers(&[
            &["main.rs"],
            &["bench", "codegen", "demo", "fuzz", "test", "tidy"],
            &["install", "release"],
            &["dist"],
            &["plugin"],
            &["workspace"],
        ]),
    ),
];

/// Every edge of `package`'s graph outside the table, and every module of a checked parent that
/// the table does not place.
pub(crate) fn check(package: &str, graph: &Graph, problems: &mut Vec<Problem>) {
    check_with(TABLE, package, graph, problems);
}

fn check_with(
    table: &[(&str, &str, Rule)],
    package: &str,
    graph: &Graph,
    problems: &mut Vec<Problem>,
) {
    let rules: Vec<_> = table
        .iter()
        .filter(|(name, _, _)| *name == package)
        .collect();
    for (_, parent, rule) in &rules {
        let Rule::Layers(layers) = rule else {
            continue;
        };
        let parent = split(parent);
        for module in graph.children(&parent) {
            if !layers.iter().any(|layer| layer.contains(&module.as_str())) {
                problems.push(Problem {
                    place: format!("{package}: `{}`", path(&parent, &module)),
                    message: "the module is in no layer of tidy's table of allowed edges"
                        .to_owned(),
                    fix: "add it to its layer in `xtask/src/tidy/layers.rs` (the layers below \
                          it are what it may name)"
                        .to_owned(),
                });
            }
        }
    }
    for (from, to, evidence) in graph.edges() {
        let (parent, from_name) = from.split_at(from.len() - 1);
        let to_name = &to[to.len() - 1];
        let Some((_, _, rule)) = rules.iter().find(|(_, p, _)| split(p) == parent) else {
            continue;
        };
        let allowed = match rule {
            Rule::Apart => false,
            Rule::Layers(layers) => {
                let layer_of = |name: &str| layers.iter().position(|layer| layer.contains(&name));
                match (layer_of(&from_name[0]), layer_of(to_name)) {
                    (Some(from), Some(to)) => from < to,
                    // Reported above as unplaced.
                    _ => true,
                }
            }
        };
        if !allowed {
            problems.push(Problem {
                place: format!("{}:{}", evidence.file, evidence.line),
                message: format!(
                    "`{}` names `{}` (`{}`), an edge outside tidy's table of allowed edges",
                    from.join("::"),
                    to.join("::"),
                    evidence.path
                ),
                fix: "move what both need to a module below them both (or, if the layering \
                      itself changed, change the table in `xtask/src/tidy/layers.rs` and \
                      ARCHITECTURE.md together)"
                    .to_owned(),
            });
        }
    }
}

fn split(parent: &str) -> Vec<String> {
    parent
        .split("::")
        .filter(|part| !part.is_empty())
        .map(str::to_owned)
        .collect()
}

fn path(parent: &[String], module: &str) -> String {
    let mut parts = parent.to_vec();
    parts.push(module.to_owned());
    parts.join("::")
}

#[cfg(test)]
mod tests;
