//! `cargo xtask tidy`: the rules of ARCHITECTURE.md and CONTRIBUTING.md checked by machine, on
//! the sources only (no build): every file opens with a `//!` line, every module is named in the
//! code map, no import circle between modules, no long file or function, no `mod.rs` outside
//! the tests, no test file left out of its harness. (rust-analyzer's `xtask/src/tidy.rs` is the model.)

mod imports;
mod layers;
mod rust;
#[cfg(test)]
mod tests;

use std::{
    fmt, fs,
    path::{Path, PathBuf},
};

use crate::{
    Result,
    tidy::{imports::Graph, rust::Code},
};

/// The most lines a non-test source file may have.
const MAX_FILE_LINES: usize = 800;
/// The most lines a function of a non-test source file may have.
const MAX_FUNCTION_LINES: usize = 150;
/// A function this close to `MAX_FUNCTION_LINES` says why it is long, in a `LONG_BECAUSE`
/// comment right above it (among its doc comment and attributes).
const NEAR_FUNCTION_LINES: usize = 10;
const LONG_BECAUSE: &str = "// tidy: long because ";

/// One rule broken: where, what, and how to fix it.
#[derive(Debug)]
pub(crate) struct Problem {
    /// The file (relative to the workspace root), with a line when there is one.
    pub(crate) place: String,
    pub(crate) message: String,
    pub(crate) fix: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}\n  fix: {}", self.place, self.message, self.fix)
    }
}

pub(crate) fn run(root: &Path) -> Result {
    let problems = check(root)?;
    if problems.is_empty() {
        eprintln!("tidy: every rule holds");
        return Ok(());
    }
    for problem in &problems {
        eprintln!("{problem}\n");
    }
    Err(format!(
        "tidy found {} problem(s); the rules are in CONTRIBUTING.md (\"Rules tidy checks\")",
        problems.len()
    ))
}

/// Every problem of the workspace at `root`, in a stable order.
pub(crate) fn check(root: &Path) -> Result<Vec<Problem>> {
    let architecture_path = root.join("ARCHITECTURE.md");
    let architecture = fs::read_to_string(&architecture_path)
        .map_err(|err| format!("failed to read `{}`: {err}", architecture_path.display()))?;
    let mut problems = Vec::new();
    check_repository_paths(root, &architecture, &mut problems);
    for package in packages(root)? {
        let mut sources = Vec::new();
        for file in rust_files(&package.dir)? {
            let text = fs::read_to_string(&file)
                .map_err(|err| format!("failed to read `{}`: {err}", file.display()))?;
            let source = Source {
                place: relative(root, &file),
                in_package: relative(&package.dir, &file),
                text,
            };
            check_doc(&source, &mut problems);
            if !source.is_test() {
                check_lengths(&source, &mut problems);
                check_layout(&source, &mut problems);
            }
            sources.push(source);
        }
        check_map(&package, &architecture, &sources, &mut problems);
        check_circles(&package, &sources, &mut problems);
        check_harnesses(&sources, &mut problems);
    }
    Ok(problems)
}

/// A crate of the workspace: `crates/<name>` or `xtask`.
struct Package {
    /// As the code map's heading names it: `crates/checkpoint-core`, `xtask`.
    name: String,
    dir: PathBuf,
}

fn packages(root: &Path) -> Result<Vec<Package>> {
    let mut packages = Vec::new();
    let crates = root.join("crates");
    if crates.is_dir() {
        for dir in sorted_entries(&crates)? {
            if dir.join("Cargo.toml").is_file() {
                packages.push(Package {
                    name: relative(root, &dir),
                    dir,
                });
            }
        }
    }
    let xtask = root.join("xtask");
    if xtask.join("Cargo.toml").is_file() {
        packages.push(Package {
            name: "xtask".to_owned(),
            dir: xtask,
        });
    }
    Ok(packages)
}

/// The `.rs` files of a package's `src/`, `tests/`, `benches/` and `examples/`, sorted.
fn rust_files(package: &Path) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    let mut dirs: Vec<PathBuf> = ["src", "tests", "benches", "examples"]
        .iter()
        .map(|dir| package.join(dir))
        .filter(|dir| dir.is_dir())
        .collect();
    while let Some(dir) = dirs.pop() {
        for path in sorted_entries(&dir)? {
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|ext| ext == "rs") {
                files.push(path);
            }
        }
    }
    files.sort();
    Ok(files)
}

fn sorted_entries(dir: &Path) -> Result<Vec<PathBuf>> {
    let entries = fs::read_dir(dir)
        .map_err(|err| format!("failed to read the directory `{}`: {err}", dir.display()))?;
    let mut paths = entries
        .map(|entry| entry.map(|entry| entry.path()))
        .collect::<std::io::Result<Vec<_>>>()
        .map_err(|err| format!("failed to read the directory `{}`: {err}", dir.display()))?;
    paths.sort();
    Ok(paths)
}

/// `path` relative to `base`, with `/` separators.
fn relative(base: &Path, path: &Path) -> String {
    let relative = path.strip_prefix(base).unwrap_or(path);
    relative
        .components()
        .map(|component| component.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

/// One source file.
struct Source {
    /// Relative to the workspace root.
    place: String,
    /// Relative to its package: `src/store/load.rs`, `tests/it/main.rs`.
    in_package: String,
    text: String,
}

impl Source {
    /// Integration tests, unit-test modules (`tests.rs`, anything under a `tests/` directory)
    /// and the test fakes (`testing.rs`).
    fn is_test(&self) -> bool {
        self.in_package
            .split('/')
            .any(|part| matches!(part, "tests" | "tests.rs" | "testing.rs"))
    }

    /// The module path of a file of `src/` (`src/resume/mod.rs` is `resume`; a crate root and
    /// the files of `src/bin/` are roots of their own, `None`).
    fn module(&self) -> Option<Vec<String>> {
        let path = self.in_package.strip_prefix("src/")?;
        if matches!(path, "lib.rs" | "main.rs") || path.starts_with("bin/") {
            return None;
        }
        let path = path.strip_suffix(".rs")?;
        let mut module: Vec<String> = path.split('/').map(str::to_owned).collect();
        if module.last().is_some_and(|last| last == "mod") {
            module.pop();
        }
        Some(module)
    }
}

fn check_doc(source: &Source, problems: &mut Vec<Problem>) {
    let first = source.text.lines().find(|line| !line.trim().is_empty());
    if !first.is_some_and(|line| line.trim_start().starts_with("//!")) {
        problems.push(Problem {
            place: source.place.clone(),
            message: "the file does not open with a `//!` line".to_owned(),
            fix: "start it with `//! <what this file is for>.`".to_owned(),
        });
    }
}

/// One module layout: `foo.rs` beside `foo/`, never `foo/mod.rs` (test harnesses aside).
fn check_layout(source: &Source, problems: &mut Vec<Problem>) {
    let Some(dir) = source
        .in_package
        .strip_suffix("mod.rs")
        .filter(|dir| dir.is_empty() || dir.ends_with('/'))
    else {
        return;
    };
    let dir = dir.trim_end_matches('/');
    problems.push(Problem {
        place: source.place.clone(),
        message: "a `mod.rs`: modules are laid out as `foo.rs` beside `foo/` in this workspace"
            .to_owned(),
        fix: format!("`git mv {dir}/mod.rs {dir}.rs` (its `mod` lines stay as they are)"),
    });
}

fn check_lengths(source: &Source, problems: &mut Vec<Problem>) {
    let n_lines = source.text.lines().count();
    if n_lines > MAX_FILE_LINES {
        problems.push(Problem {
            place: source.place.clone(),
            message: format!(
                "{n_lines} lines, more than the {MAX_FILE_LINES} a source file may have"
            ),
            fix: "split it into modules named after what each part is for".to_owned(),
        });
    }
    let code = Code::new(&source.text);
    for function in code.functions(&code.test_modules()) {
        if function.n_lines > MAX_FUNCTION_LINES {
            problems.push(Problem {
                place: format!("{}:{}", source.place, function.line),
                message: format!(
                    "`fn {}` has {} lines, more than the {MAX_FUNCTION_LINES} a function may have",
                    function.name, function.n_lines
                ),
                fix: "split it into functions named after their steps".to_owned(),
            });
        } else if function.n_lines > MAX_FUNCTION_LINES - NEAR_FUNCTION_LINES
            && !says_why_long(&source.text, function.line)
        {
            problems.push(Problem {
                place: format!("{}:{}", source.place, function.line),
                message: format!(
                    "`fn {}` has {} lines, within {NEAR_FUNCTION_LINES} of the \
                     {MAX_FUNCTION_LINES} a function may have, and says not why",
                    function.name, function.n_lines
                ),
                fix: format!(
                    "split it into functions named after their steps, or say why it is whole \
                     (an exhaustive match) in a `{LONG_BECAUSE}…` line right above it"
                ),
            });
        }
    }
}

/// Whether the comments and attributes right above line `fn_line` (from 1) hold a
/// `LONG_BECAUSE` line with a reason.
fn says_why_long(text: &str, fn_line: usize) -> bool {
    let lines: Vec<&str> = text.lines().take(fn_line.saturating_sub(1)).collect();
    lines
        .iter()
        .rev()
        .map(|line| line.trim())
        .take_while(|line| line.starts_with("//") || line.starts_with("#["))
        .any(|line| {
            line.strip_prefix(LONG_BECAUSE)
                .is_some_and(|reason| !reason.trim().is_empty())
        })
}

/// Every module of `src/` is named by its path in the package's section of ARCHITECTURE.md, and
/// every source path the section names exists (see CONTRIBUTING.md for the rule).
fn check_map(
    package: &Package,
    architecture: &str,
    sources: &[Source],
    problems: &mut Vec<Problem>,
) {
    let Some(section) = map_section(architecture, &package.name) else {
        problems.push(Problem {
            place: "ARCHITECTURE.md".to_owned(),
            message: format!("the code map has no section for `{}`", package.name),
            fix: format!(
                "add a heading ``### `{}` `` with a bullet per module",
                package.name
            ),
        });
        return;
    };
    let paragraphs = paragraphs(section);
    for source in sources {
        let Some(path) = source.in_package.strip_prefix("src/") else {
            continue;
        };
        if source.is_test() || source.module().is_none() || is_named(path, &paragraphs) {
            continue;
        }
        problems.push(Problem {
            place: source.place.clone(),
            message: format!(
                "the module is not named by its path in ARCHITECTURE.md's section `{}`",
                package.name
            ),
            fix: format!(
                "name `{path}` in that section (or its directory, as `dir/`, and the rest of its \
                 path in the same paragraph)"
            ),
        });
    }
    let in_package = |span: &str, dir: &str| {
        ["src/", ""]
            .iter()
            .any(|base| package.dir.join(format!("{base}{dir}{span}")).is_file())
    };
    for paragraph in &paragraphs {
        for span in paragraph.iter().filter(|span| is_source_path(span)) {
            let found = in_package(span, "")
                || package.dir.join("..").join("..").join(span).is_file()
                || directories(paragraph).any(|dir| in_package(span, dir));
            if !found {
                problems.push(Problem {
                    place: "ARCHITECTURE.md".to_owned(),
                    message: format!(
                        "the section `{}` names `{span}`, which is no file of the crate",
                        package.name
                    ),
                    fix: "write the path of a file that exists (relative to the crate's `src/`, \
                          or after its directory in the same paragraph), or remove it"
                        .to_owned(),
                });
            }
        }
    }
}

/// Every path of the repository that ARCHITECTURE.md names outside the crates' sections exists:
/// a span that starts with a top-level directory (`docs/…`, `crates/…`, `plugin/…`).
fn check_repository_paths(root: &Path, architecture: &str, problems: &mut Vec<Problem>) {
    const TOP: [&str; 6] = ["crates/", "docs/", "plugin/", "xtask/", "fuzz/", "skills/"];
    for span in backticked(architecture) {
        let plain = !span.contains(|c: char| c.is_whitespace() || "<>*{}…".contains(c));
        if plain && TOP.iter().any(|top| span.starts_with(top)) && !root.join(span).exists() {
            problems.push(Problem {
                place: "ARCHITECTURE.md".to_owned(),
                message: format!("names `{span}`, which does not exist"),
                fix: "write the path as it is now, or remove it".to_owned(),
            });
        }
    }
}

/// The text of the code map's section whose `###` heading names the package.
fn map_section<'a>(architecture: &'a str, package: &str) -> Option<&'a str> {
    let heading = format!("### `{package}`");
    let start = architecture.find(&heading)? + heading.len();
    let rest = &architecture[start..];
    let end = rest
        .match_indices("\n#")
        .map(|(idx, _)| idx)
        .next()
        .unwrap_or(rest.len());
    Some(&rest[..end])
}

/// The spans written between backticks.
fn backticked(text: &str) -> Vec<&str> {
    text.split('`').skip(1).step_by(2).collect()
}

/// The backticked spans of each paragraph of `section`: a bullet with its indented lines, or
/// lines between blank ones.
fn paragraphs(section: &str) -> Vec<Vec<&str>> {
    let mut paragraphs = Vec::new();
    let mut start = 0;
    let mut offset = 0;
    for line in section.split_inclusive('\n') {
        let new = line.trim().is_empty() || line.starts_with("- ") || line.starts_with('#');
        if new && offset > start {
            paragraphs.push(backticked(&section[start..offset]));
            start = offset;
        }
        offset += line.len();
    }
    paragraphs.push(backticked(&section[start..]));
    paragraphs
}

/// A span that is the path of a Rust source file (`store/load.rs`), not a pattern.
fn is_source_path(span: &str) -> bool {
    span.ends_with(".rs") && !span.contains(|c: char| c.is_whitespace() || "<>*{}…".contains(c))
}

/// The directories a paragraph names (`store/`), which the files it names are under.
fn directories<'a>(paragraph: &'a [&'a str]) -> impl Iterator<Item = &'a str> {
    paragraph.iter().copied().filter(|span| {
        span.ends_with('/') && !span.contains(|c: char| c.is_whitespace() || "<>*".contains(c))
    })
}

/// Whether `path` (relative to `src/`, as `store/load.rs`) is named by its path: a span ends
/// with it (`store/load.rs`, `crates/x/src/store/load.rs`), or a paragraph names one of its
/// directories (`store/`) and the rest of its path (`load.rs`); a directory's `mod.rs` needs
/// only the directory.
fn is_named(path: &str, paragraphs: &[Vec<&str>]) -> bool {
    let ends_with =
        |span: &str, suffix: &str| span == suffix || span.ends_with(&format!("/{suffix}"));
    let spans = || paragraphs.iter().flatten();
    if spans().any(|span| ends_with(span, path)) {
        return true;
    }
    if let Some(dir) = path
        .strip_suffix("mod.rs")
        .filter(|dir| dir.is_empty() || dir.ends_with('/'))
    {
        return spans().any(|span| ends_with(span, dir));
    }
    path.match_indices('/').any(|(idx, _)| {
        let (dir, rest) = path.split_at(idx + 1);
        paragraphs.iter().any(|paragraph| {
            directories(paragraph).any(|named| ends_with(named, dir)) && paragraph.contains(&rest)
        })
    })
}

fn check_circles(package: &Package, sources: &[Source], problems: &mut Vec<Problem>) {
    let mut graph = Graph::default();
    let modules: Vec<_> = sources
        .iter()
        .filter(|source| !source.is_test())
        .filter_map(|source| Some((source, source.module()?)))
        .collect();
    for (_, module) in &modules {
        graph.add_module(module.clone());
    }
    let top_level: Vec<String> = modules
        .iter()
        .filter(|(_, module)| module.len() == 1)
        .map(|(_, module)| module[0].clone())
        .collect();
    for root in ["src/lib.rs", "src/main.rs"] {
        if let Some(source) = sources.iter().find(|source| source.in_package == root) {
            let code = Code::new(&source.text);
            let paths = code.paths(&code.test_modules(), &top_level);
            let file_name = root.trim_start_matches("src/");
            graph.add_root(file_name, &source.place, &paths);
            break;
        }
    }
    for (source, module) in &modules {
        let code = Code::new(&source.text);
        let paths = code.paths(&code.test_modules(), &[]);
        graph.add_paths(module, &source.place, &paths);
    }
    layers::check(&package.name, &graph, problems);
    for circle in graph.circles() {
        let mut names: Vec<String> = circle.iter().map(|(module, _)| module.join("::")).collect();
        names.push(names[0].clone());
        let steps: Vec<String> = circle
            .iter()
            .map(|(_, evidence)| {
                format!(
                    "`{}:{}` names `{}`",
                    evidence.file, evidence.line, evidence.path
                )
            })
            .collect();
        problems.push(Problem {
            place: circle[0].1.file.clone(),
            message: format!(
                "import circle in `{}`: {} ({})",
                package.name,
                names.join(" → "),
                steps.join("; ")
            ),
            fix: "move what both sides need into a module below them both, so that imports go \
                  one way"
                .to_owned(),
        });
    }
}

/// Every file of a test harness directory (`tests/<harness>/`) is declared as a module: in
/// `tests/<harness>/main.rs` (`mod name;`) or `tests/<harness>.rs` (`#[path = "<harness>/name.rs"]`),
/// or, for a file in a subdirectory, in its parent module.
fn check_harnesses(sources: &[Source], problems: &mut Vec<Problem>) {
    let find = |path: &str| sources.iter().find(|source| source.in_package == path);
    for source in sources {
        let Some(path) = source.in_package.strip_prefix("tests/") else {
            continue;
        };
        let Some((dir, file)) = path.rsplit_once('/') else {
            continue;
        };
        if file == "main.rs" && !dir.contains('/') {
            continue;
        }
        let name = file.strip_suffix(".rs").unwrap_or(file);
        let declared = if dir.contains('/') || file == "mod.rs" {
            // A file of a module directory: `a/b.rs` is declared in `a.rs` or `a/mod.rs`.
            let (parent_dir, module) = if file == "mod.rs" {
                dir.rsplit_once('/').unwrap_or(("", dir))
            } else {
                (dir, name)
            };
            let candidates = [
                format!("tests/{parent_dir}.rs"),
                format!("tests/{parent_dir}/mod.rs"),
                format!("tests/{parent_dir}/main.rs"),
            ];
            candidates
                .iter()
                .filter_map(|candidate| find(candidate))
                .any(|parent| declares(parent, module, &format!("{module}.rs")))
        } else {
            let main = find(&format!("tests/{dir}/main.rs"));
            let root = find(&format!("tests/{dir}.rs"));
            main.into_iter()
                .chain(root)
                .any(|harness| declares(harness, name, &format!("{dir}/{file}")))
        };
        if !declared {
            problems.push(Problem {
                place: source.place.clone(),
                message: "the test file is declared in no harness, so its tests never run"
                    .to_owned(),
                fix: format!("declare `mod {name};` in the harness of `tests/{dir}/`"),
            });
        }
    }
}

/// Whether `parent` declares the module `name` (`mod name;`, any visibility or attributes) or
/// points a `#[path]` at `path`.
fn declares(parent: &Source, name: &str, path: &str) -> bool {
    let by_path = parent.text.contains(&format!("#[path = \"{path}\"]"));
    by_path
        || parent.text.lines().any(|line| {
            let line = line.trim();
            let line = line.strip_prefix("pub(crate) ").unwrap_or(line);
            let line = line.strip_prefix("pub ").unwrap_or(line);
            line == format!("mod {name};") || line == format!("mod r#{name};")
        })
}
