//! Where the seeds keep their state files: finding them in a project, reading them with the files
//! beside them, and writing exports. The only part of `seeds` that touches the filesystem.

use std::{
    fs, io,
    path::{Component, Path, PathBuf},
};

use crate::{
    error::{Error, Result},
    fsx,
    seeds::{
        common::{Exported, SeedFile, SeedSource},
        format::{NINE_STEP_STATE_FILE, SeedFormat, detect},
    },
};

/// The most entries of `memory/reports/` an import lists.
const MAX_REPORTS: usize = 200;

/// A seed state file found in a project.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Discovered {
    /// Its format.
    pub format: SeedFormat,
    /// Its path.
    pub path: PathBuf,
}

/// Finds the seed state files where the seeds put them: fixed paths under `project_root`, one
/// listing of each checkpoint directory, and the nine-step file at the root of each worktree.
///
/// Unreadable directories are passed over; the files are not read.
pub fn discover(project_root: &Path, worktrees: &[PathBuf]) -> Vec<Discovered> {
    let mut found = Vec::new();
    let mut push = |format: SeedFormat, path: PathBuf| {
        if is_file(&path) && !found.iter().any(|seen: &Discovered| seen.path == path) {
            found.push(Discovered { format, path });
        }
    };
    push(
        SeedFormat::Dotagent,
        project_root.join("memory").join("state").join("phase.json"),
    );
    push(
        SeedFormat::Orchestkit,
        project_root.join(".claude").join("pipeline-state.json"),
    );
    let recovery = project_root
        .join(".claude")
        .join("data")
        .join("checkpoints");
    for path in json_files(&recovery) {
        push(SeedFormat::CheckpointRecovery, path);
    }
    let checkpoints = project_root.join(".claude").join("checkpoints");
    let failed = checkpoints.join("failed");
    // A `failed/` holding a journal is one of our workflows (named `failed` before such ids
    // were refused), not another tool's failed checkpoints.
    let ours = failed.join(crate::store::JOURNAL_FILE).exists();
    for dir in [checkpoints.clone(), failed]
        .into_iter()
        .take(if ours { 1 } else { 2 })
    {
        for path in json_files(&dir) {
            push(SeedFormat::CheckpointsDir, path);
        }
    }
    push(
        SeedFormat::NineStep,
        project_root.join(NINE_STEP_STATE_FILE),
    );
    for worktree in worktrees {
        push(SeedFormat::NineStep, worktree.join(NINE_STEP_STATE_FILE));
    }
    found
}

/// Resolves what to import: a file (of `format`, or of the format it is recognised as), or a
/// project directory holding exactly one seed state file.
pub fn locate(path: &Path, format: Option<SeedFormat>) -> Result<Discovered> {
    let meta = fs::metadata(path).map_err(|err| Error::io("read", path, err))?;
    if !meta.is_dir() {
        let bytes = fsx::read_limited(path)?.ok_or_else(|| not_found(path))?;
        let format = format
            .or_else(|| detect(path, &bytes))
            .ok_or_else(|| Error::UnknownSeed {
                path: path.to_owned(),
                formats: SeedFormat::names(),
            })?;
        return Ok(Discovered {
            format,
            path: path.to_owned(),
        });
    }
    let mut found: Vec<Discovered> = discover(path, &[])
        .into_iter()
        .filter(|found| format.is_none_or(|format| found.format == format))
        .collect();
    let state_dir_file = path.join("phase.json");
    if found.is_empty()
        && format.is_none_or(|format| format == SeedFormat::Dotagent)
        && is_file(&state_dir_file)
    {
        found.push(Discovered {
            format: SeedFormat::Dotagent,
            path: state_dir_file,
        });
    }
    match found.len() {
        1 => Ok(found.remove(0)),
        0 => Err(Error::SeedLocate {
            path: path.to_owned(),
            message: format!(
                "found no state file of another checkpoint system in `{}`",
                path.display()
            ),
            help: format!(
                "looked for `memory/state/phase.json`, `.claude/pipeline-state.json`, `.claude/data/checkpoints/*.json`, `.claude/checkpoints/*.json` and `{NINE_STEP_STATE_FILE}`; pass the file itself, with `--from <format>` if its name is unusual"
            ),
        }),
        _ => Err(Error::SeedLocate {
            path: path.to_owned(),
            message: format!(
                "found {} state files of other checkpoint systems in `{}`",
                found.len(),
                path.display()
            ),
            help: format!(
                "import one at a time by passing its path: {}",
                found
                    .iter()
                    .map(|found| format!("`{}` ({})", found.path.display(), found.format))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }),
    }
}

/// Reads a seed state file and the files its format keeps beside it.
pub fn read_source(format: SeedFormat, path: &Path) -> Result<SeedSource> {
    let state_dir = path.parent().unwrap_or(Path::new("."));
    // dotagent's state is two files: whichever is named, `phase.json` is the state and
    // `execution.json` beside it holds the tasks.
    let path = if format == SeedFormat::Dotagent
        && path
            .file_name()
            .is_some_and(|name| name == "execution.json")
        && state_dir.join("phase.json").is_file()
    {
        state_dir.join("phase.json")
    } else {
        path.to_owned()
    };
    let path = path.as_path();
    let bytes = fsx::read_limited(path)?.ok_or_else(|| not_found(path))?;
    let mut source = SeedSource::new(path, bytes);
    match format {
        SeedFormat::Dotagent => {
            source.execution = read_optional(&state_dir.join("execution.json"))?;
            if let Some(root) = dotagent_root(path) {
                source.reports = reports(&root);
            }
        }
        SeedFormat::CheckpointRecovery => {
            let plan_path = serde_json::from_slice::<serde_json::Value>(&source.main.bytes)
                .ok()
                .and_then(|value| value.get("plan_path")?.as_str().map(str::to_owned));
            let root = path.ancestors().nth(4);
            if let (Some(plan_path), Some(root)) = (plan_path, root)
                && let Some(relative) = inside(&plan_path)
            {
                source.plan = read_optional(&root.join(relative))?;
            }
        }
        SeedFormat::Orchestkit | SeedFormat::CheckpointsDir | SeedFormat::NineStep => {}
    }
    Ok(source)
}

/// Writes an export to `path`, and its companions beside it, each atomically.
///
/// Unless `overwrite` is set, nothing is written when any of the files exists.
pub fn write_export(path: &Path, exported: &Exported, overwrite: bool) -> Result<Vec<PathBuf>> {
    let dir = path.parent().unwrap_or(Path::new(""));
    let mut files = vec![(path.to_owned(), exported.bytes.as_slice())];
    for (name, bytes) in &exported.companions {
        files.push((dir.join(name), bytes.as_slice()));
    }
    if !overwrite && let Some((existing, _)) = files.iter().find(|(path, _)| path.exists()) {
        return Err(Error::OutputExists {
            path: existing.clone(),
        });
    }
    for (path, bytes) in &files {
        fsx::write_atomic(path, bytes, overwrite)?;
    }
    Ok(files.into_iter().map(|(path, _)| path).collect())
}

fn not_found(path: &Path) -> Error {
    Error::io("read", path, io::Error::from(io::ErrorKind::NotFound))
}

fn is_file(path: &Path) -> bool {
    fs::symlink_metadata(path).is_ok_and(|meta| meta.is_file())
}

fn read_optional(path: &Path) -> Result<Option<SeedFile>> {
    Ok(fsx::read_limited(path)?.map(|bytes| SeedFile {
        path: path.to_owned(),
        bytes,
    }))
}

/// The `*.json` files directly in `dir`, sorted.
fn json_files(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut paths: Vec<PathBuf> = entries
        .flatten()
        .filter(|entry| entry.file_type().is_ok_and(|kind| kind.is_file()))
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .collect();
    paths.sort();
    paths
}

/// The project root of a dotagent `memory/state/phase.json`.
fn dotagent_root(path: &Path) -> Option<PathBuf> {
    let state = path.parent()?;
    let memory = state.parent()?;
    (state.file_name()? == "state" && memory.file_name()? == "memory")
        .then(|| memory.parent().unwrap_or(Path::new("")).to_owned())
}

/// The files in `memory/reports/` and its subdirectories, relative to the project root, sorted.
fn reports(root: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut dirs = vec![PathBuf::from("memory").join("reports")];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = fs::read_dir(root.join(&dir)) else {
            continue;
        };
        for entry in entries.flatten() {
            let relative = dir.join(entry.file_name());
            match entry.file_type() {
                Ok(kind) if kind.is_dir() && relative.components().count() < 4 => {
                    dirs.push(relative);
                }
                Ok(kind) if kind.is_file() => {
                    found.push(relative.to_string_lossy().replace('\\', "/"));
                }
                _ => {}
            }
        }
    }
    found.sort();
    found.truncate(MAX_REPORTS);
    found
}

/// A relative path that stays inside the directory it is joined to.
fn inside(path: &str) -> Option<&Path> {
    let path = Path::new(path);
    path.components()
        .all(|component| matches!(component, Component::Normal(_) | Component::CurDir))
        .then_some(path)
}
