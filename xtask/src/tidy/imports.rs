//! The import circles between the modules of a crate: which module each path of a file names,
//! lifted to the two siblings under their common parent, and every circle among siblings.
//! The items of the crate root's own file (`lib.rs`, `main.rs`) are a module of their own beside
//! the top-level ones; what the root re-exports counts as its module's.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use crate::tidy::rust::NamedPath;

/// A module's path from the crate root (`["resume", "planner"]`); the root is empty.
pub(crate) type ModulePath = Vec<String>;

/// Where one module names another: the file, the line and the path as written.
#[derive(Debug, Clone)]
pub(crate) struct Evidence {
    pub(crate) file: String,
    pub(crate) line: usize,
    pub(crate) path: String,
}

/// The modules of one crate and what each names.
#[derive(Default)]
pub(crate) struct Graph {
    modules: BTreeSet<ModulePath>,
    /// The crate root's file name, the node of the items it defines.
    root: Option<String>,
    /// What the crate root re-exports (`pub use store::Store`): the name and its module.
    reexports: BTreeMap<String, ModulePath>,
    /// Between siblings only: `a` names something in `b`'s subtree from `a`'s subtree.
    edges: BTreeMap<ModulePath, BTreeMap<ModulePath, Evidence>>,
}

impl Graph {
    pub(crate) fn add_module(&mut self, module: ModulePath) {
        self.modules.insert(module);
    }

    /// Records the crate root's file (after every `add_module`): its re-exports, then the
    /// paths it names as those of the node named after the file.
    pub(crate) fn add_root(&mut self, file_name: &str, file: &str, paths: &[NamedPath]) {
        self.root = Some(file_name.to_owned());
        for named in paths.iter().filter(|named| named.reexport) {
            let (Some(name), Some(target)) =
                (named.segments.last(), self.resolve(&[], &named.segments))
            else {
                continue;
            };
            if !target.is_empty() && self.modules.contains(&target) {
                self.reexports.insert(name.clone(), target);
            }
        }
        let named: Vec<_> = paths.iter().filter(|named| !named.reexport).collect();
        self.add_edges(&[file_name.to_owned()], &[], file, &named);
    }

    /// Records the paths named by the file of `module` (call after every `add_module`).
    pub(crate) fn add_paths(&mut self, module: &ModulePath, file: &str, paths: &[NamedPath]) {
        let named: Vec<_> = paths.iter().collect();
        self.add_edges(module, module, file, &named);
    }

    /// The edges of the file of the node `module`, whose paths are relative to `base`.
    fn add_edges(&mut self, module: &[String], base: &[String], file: &str, paths: &[&NamedPath]) {
        for named in paths {
            let Some(target) = self.resolve(base, &named.segments) else {
                continue;
            };
            let common = module
                .iter()
                .zip(&target)
                .take_while(|(a, b)| a == b)
                .count();
            // A module and its own submodules (tests included) do not count.
            if common == module.len() || common == target.len() {
                continue;
            }
            if target.is_empty() {
                continue;
            }
            let from = module[..=common].to_vec();
            let to = target[..=common].to_vec();
            self.edges
                .entry(from)
                .or_default()
                .entry(to)
                .or_insert_with(|| Evidence {
                    file: file.to_owned(),
                    line: named.line,
                    path: named.segments.join("::"),
                });
        }
    }

    /// The module a path written in `module` names: the longest known prefix of its absolute
    /// form, what the crate root re-exports under its first name, or else the root's own items;
    /// `None` for a path that leaves the crate.
    fn resolve(&self, module: &[String], segments: &[String]) -> Option<ModulePath> {
        let mut absolute = module.to_vec();
        let mut rest = segments;
        match rest.first().map(String::as_str) {
            Some("crate") => {
                absolute.clear();
                rest = &rest[1..];
            }
            Some("self") => rest = &rest[1..],
            Some("super") => {
                while rest.first().is_some_and(|segment| segment == "super") {
                    absolute.pop()?;
                    rest = &rest[1..];
                }
            }
            Some(first) if self.modules.contains(&vec![first.to_owned()]) => absolute.clear(),
            _ => return None,
        }
        absolute.extend(rest.iter().cloned());
        let first = absolute.first()?;
        if !self.modules.contains(&vec![first.clone()]) {
            if let Some(module) = self.reexports.get(first) {
                return Some(module.clone());
            }
            return Some(self.root.iter().cloned().collect());
        }
        (0..=absolute.len())
            .rev()
            .map(|len| absolute[..len].to_vec())
            .find(|prefix| prefix.is_empty() || self.modules.contains(prefix))
    }

    /// The names of the modules right under `parent` (the crate root's file among the top level).
    pub(crate) fn children(&self, parent: &[String]) -> Vec<String> {
        let mut children: Vec<String> = self
            .modules
            .iter()
            .filter(|module| module.len() == parent.len() + 1 && module.starts_with(parent))
            .map(|module| module[parent.len()].clone())
            .collect();
        if parent.is_empty() {
            children.extend(self.root.clone());
        }
        children
    }

    /// Every edge between siblings, with where it is named.
    pub(crate) fn edges(&self) -> impl Iterator<Item = (&ModulePath, &ModulePath, &Evidence)> {
        self.edges.iter().flat_map(|(from, targets)| {
            targets
                .iter()
                .map(move |(to, evidence)| (from, to, evidence))
        })
    }

    /// Each circle once: for every group of modules that reach each other, the shortest circle
    /// through its first module, with where each step is named.
    pub(crate) fn circles(&self) -> Vec<Vec<(ModulePath, Evidence)>> {
        let mut seen = BTreeSet::new();
        let mut circles = Vec::new();
        for start in self.edges.keys() {
            if seen.contains(start) {
                continue;
            }
            let Some(circle) = self.shortest_circle(start) else {
                continue;
            };
            // Every module that reaches `start` and is reached from it is in the same group.
            let reached = self.reachable(start);
            for module in &reached {
                if self.reachable(module).contains(start) {
                    seen.insert(module.clone());
                }
            }
            circles.push(circle);
        }
        circles
    }

    fn reachable(&self, start: &ModulePath) -> BTreeSet<ModulePath> {
        let mut reached = BTreeSet::new();
        let mut queue = VecDeque::from([start.clone()]);
        while let Some(module) = queue.pop_front() {
            for next in self.edges.get(&module).into_iter().flat_map(BTreeMap::keys) {
                if reached.insert(next.clone()) {
                    queue.push_back(next.clone());
                }
            }
        }
        reached
    }

    /// The shortest path from `start` back to itself (breadth first), as each module with the
    /// evidence of its step to the next.
    fn shortest_circle(&self, start: &ModulePath) -> Option<Vec<(ModulePath, Evidence)>> {
        let mut parent: BTreeMap<ModulePath, ModulePath> = BTreeMap::new();
        let mut queue = VecDeque::from([start.clone()]);
        while let Some(module) = queue.pop_front() {
            for next in self.edges.get(&module).into_iter().flat_map(BTreeMap::keys) {
                if next == start {
                    let mut path = vec![module.clone()];
                    while let Some(prev) = path.last().and_then(|last| parent.get(last)) {
                        path.push(prev.clone());
                    }
                    path.reverse();
                    let steps = path
                        .iter()
                        .enumerate()
                        .map(|(idx, from)| {
                            let to = path.get(idx + 1).unwrap_or(start);
                            (from.clone(), self.edges[from][to].clone())
                        })
                        .collect();
                    return Some(steps);
                }
                if next != start && !parent.contains_key(next) {
                    parent.insert(next.clone(), module.clone());
                    queue.push_back(next.clone());
                }
            }
        }
        None
    }
}
