//! The table's rule on small graphs: down is allowed, up and sideways are not, a sibling of an
//! `Apart` directory names none, an unplaced module is named, an unlisted directory is free.

use super::*;
use crate::tidy::rust::NamedPath;

const TABLE: &[(&str, &str, Rule)] = &[
    (
        "demo",
        "",
        Rule::Layers(&[&["lib.rs"], &["commands"], &["ctx", "json"], &["output"]]),
    ),
    ("demo", "commands", Rule::Apart),
];

/// The problems of a graph of `modules` (`a::b`) where each `(from, to)` names `crate::to`.
fn problems(modules: &[&str], edges: &[(&str, &str)]) -> Vec<String> {
    let mut graph = Graph::default();
    let path = |module: &str| -> Vec<String> { split(module) };
    for module in modules {
        graph.add_module(path(module));
    }
    let named = |to: &str| NamedPath {
        segments: std::iter::once("crate".to_owned())
            .chain(path(to))
            .collect(),
        line: 1,
        reexport: false,
    };
    let root: Vec<NamedPath> = edges
        .iter()
        .filter(|(from, _)| *from == "lib.rs")
        .map(|(_, to)| named(to))
        .collect();
    graph.add_root("lib.rs", "src/lib.rs", &root);
    for (from, to) in edges.iter().filter(|(from, _)| *from != "lib.rs") {
        graph.add_paths(&path(from), &format!("src/{from}.rs"), &[named(to)]);
    }
    let mut found = Vec::new();
    check_with(TABLE, "demo", &graph, &mut found);
    found.into_iter().map(|problem| problem.message).collect()
}

const MODULES: &[&str] = &[
    "commands",
    "commands::status",
    "commands::watch",
    "commands::watch::view",
    "ctx",
    "json",
    "output",
    "output::text",
    "output::paint",
];

#[test]
fn edges_down_the_layers_are_allowed() {
    let edges = [
        ("lib.rs", "commands"),
        ("commands::status", "ctx"),
        ("commands::watch::view", "output::text"),
        ("ctx", "output"),
        // Inside a directory the table does not list, anything but a circle goes.
        ("output::text", "output::paint"),
    ];
    assert_eq!(problems(MODULES, &edges), Vec::<String>::new());
}

#[test]
fn an_edge_up_or_within_a_layer_is_named() {
    assert_eq!(
        problems(MODULES, &[("output", "ctx"), ("ctx", "json")]),
        [
            "`ctx` names `json` (`crate::json`), an edge outside tidy's table of allowed edges",
            "`output` names `ctx` (`crate::ctx`), an edge outside tidy's table of allowed edges",
        ]
    );
    assert_eq!(problems(MODULES, &[("ctx", "lib.rs")]).len(), 1);
}

/// `commands/status.rs → commands/watch/view.rs`, the break the table was made to see.
#[test]
fn a_command_naming_another_command_is_named() {
    assert_eq!(
        problems(MODULES, &[("commands::status", "commands::watch::view")]),
        [
            "`commands::status` names `commands::watch` (`crate::commands::watch::view`), an \
             edge outside tidy's table of allowed edges"
        ]
    );
}

#[test]
fn a_module_in_no_layer_is_named() {
    let mut modules = MODULES.to_vec();
    modules.push("remote");
    assert_eq!(
        problems(&modules, &[]),
        ["the module is in no layer of tidy's table of allowed edges"]
    );
}
