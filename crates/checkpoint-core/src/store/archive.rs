//! Archives: a finished or failed workflow moved aside under the store root, listed, restored
//! and deleted.

use std::{
    fs, io,
    path::{Path, PathBuf},
};

use chrono::{DateTime, Utc};

use crate::{
    error::{Error, Result},
    fsx,
    id::WorkflowId,
    retention::Archive,
    store::{
        JOURNAL_FILE, STATE_FILE, Store,
        load::{first_difference, for_each_entry, load_dir, parse_state, replay_journal},
        write::{commit, create_private_dir},
    },
};

/// The directory of archived workflows, under the store root.
pub const ARCHIVE_DIR: &str = ".archive";
/// The directory of archived failed workflows, under the store root.
pub const FAILED_DIR: &str = "failed";

impl Store {
    /// Moves a workflow's directory to `.archive/<id>_<YYYYMMDD_HHMMSS>/` (or `failed/` when
    /// `failed` is set) under the store root, under its lock. Nothing is deleted.
    pub fn archive(&self, id: &WorkflowId, now: DateTime<Utc>, failed: bool) -> Result<PathBuf> {
        let dir = self.checked_dir(id)?;
        let _lock = self.lock(&dir)?;
        // An archive is read by its `state.json` alone, so a state left behind the journal on
        // purpose (see `may_defer`) is brought up to date first.
        if let Ok(loaded) = load_dir(id, &self.root, &dir)
            && loaded.recoveries.is_empty()
            && loaded.workflow.seq > loaded.repair.state_seq
        {
            commit(&dir, &[], Some(&loaded.workflow), self.options.failpoint)?;
        }
        // A live workflow named `failed` (from before such ids were refused) keeps its directory:
        // failed archives then go to `.archive/` with the others.
        let failed = failed && !self.failed_dir_is_a_workflow();
        let parent = self
            .root
            .join(if failed { FAILED_DIR } else { ARCHIVE_DIR });
        create_private_dir(&parent)?;
        let stamp = now.format("%Y%m%d_%H%M%S");
        let mut target = parent.join(format!("{id}_{stamp}"));
        let mut n = 1;
        while target.exists() {
            n += 1;
            target = parent.join(format!("{id}_{stamp}_{n}"));
        }
        fsx::rename(&dir, &target)?;
        fsx::sync_dir(&self.root).map_err(|source| Error::MaybeSaved {
            path: target.clone(),
            source,
        })?;
        Ok(target)
    }

    /// The archived workflows in `.archive/` and `failed/`.
    pub fn list_archives(&self) -> Result<Vec<(PathBuf, Archive)>> {
        let mut archives = Vec::new();
        for (sub, failed) in [(ARCHIVE_DIR, false), (FAILED_DIR, true)] {
            if failed && self.failed_dir_is_a_workflow() {
                continue;
            }
            let parent = self.root.join(sub);
            let entries = match fs::read_dir(&parent) {
                Ok(entries) => entries,
                Err(err) if err.kind() == io::ErrorKind::NotFound => continue,
                Err(err) => return Err(Error::io("list", &parent, err)),
            };
            for entry in entries.flatten() {
                let path = entry.path();
                let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
                    continue;
                };
                if !path.is_dir() {
                    continue;
                }
                let state = fsx::read_limited(&path.join(STATE_FILE))
                    .ok()
                    .flatten()
                    .and_then(|bytes| parse_state(&path.join(STATE_FILE), &bytes).ok());
                let archived_at = archive_time(&name)
                    .or_else(|| {
                        entry
                            .metadata()
                            .ok()?
                            .modified()
                            .ok()
                            .map(DateTime::<Utc>::from)
                    })
                    .unwrap_or(DateTime::UNIX_EPOCH);
                let id = name.rsplitn(3, '_').last().unwrap_or(&name).to_owned();
                archives.push((
                    path,
                    Archive {
                        kind: state
                            .as_ref()
                            .and_then(|workflow| workflow.kind.clone())
                            .unwrap_or(id),
                        status: state.map(|workflow| workflow.status),
                        name,
                        archived_at,
                        failed,
                    },
                ));
            }
        }
        archives.sort_by(|a, b| a.1.name.cmp(&b.1.name));
        Ok(archives)
    }

    /// Whether `failed/` holds a live workflow (named `failed` before such ids were refused)
    /// rather than archives.
    pub fn failed_dir_is_a_workflow(&self) -> bool {
        let dir = self.root.join(FAILED_DIR);
        dir.join(STATE_FILE).exists() || dir.join(JOURNAL_FILE).exists()
    }

    /// Brings an archived workflow back under its id, with the store's private permissions;
    /// refuses when that id is taken, and refuses anything that is not an archive: a directory
    /// of regular files whose `state.json` equals the replay of its `journal.jsonl`.
    pub fn restore(&self, archive: &Path) -> Result<WorkflowId> {
        let state_path = archive.join(STATE_FILE);
        let not_an_archive = |reason: String| Error::NotAnArchive {
            path: archive.to_owned(),
            reason,
        };
        check_archive_files(archive).map_err(not_an_archive)?;
        let bytes = fsx::read_limited(&state_path)?.ok_or_else(|| Error::NotFound {
            id: archive.display().to_string(),
            root: self.root.clone(),
            suggestion: String::new(),
        })?;
        let workflow = parse_state(&state_path, &bytes)?;
        let journal_path = archive.join(JOURNAL_FILE);
        // Read once for its lines, then replayed as it is read: a journal of any size that
        // `archive` moved aside is restorable, with one entry in memory at a time.
        for_each_entry(&journal_path, |_, _| Ok(()))
            .map_err(|err| not_an_archive(format!("its journal cannot be read: {err}")))?;
        let replayed = replay_journal(&journal_path, None, 0)
            .map_err(|err| not_an_archive(format!("its journal does not replay: {err}")))?
            .ok_or_else(|| not_an_archive("its journal has no entries".into()))?;
        if let Some(field) = first_difference(&workflow, &replayed) {
            return Err(not_an_archive(format!(
                "its `{STATE_FILE}` (entry {}) differs from its journal's replay (entry {}) at `{field}`",
                workflow.seq, replayed.seq
            )));
        }
        refuse_reserved(&workflow.id)?;
        let target = self.workflow_dir(&workflow.id);
        if target.exists() {
            return Err(Error::AlreadyExists {
                id: workflow.id.to_string(),
                dir: target,
            });
        }
        fsx::rename(archive, &target)?;
        make_private(&target)?;
        fsx::sync_dir(&self.root).map_err(|source| Error::MaybeSaved {
            path: target,
            source,
        })?;
        Ok(workflow.id)
    }

    /// Deletes an archive directory (only `checkpoint gc` does this).
    pub fn delete_archive(&self, archive: &Path) -> Result<()> {
        let inside = [ARCHIVE_DIR, FAILED_DIR]
            .iter()
            .any(|sub| archive.parent() == Some(self.root.join(sub).as_path()));
        if !inside {
            return Err(Error::transition(
                format!("`{}` is not an archive of this store", archive.display()),
                "only directories in `.archive/` and `failed/` can be deleted",
            ));
        }
        fs::remove_dir_all(archive).map_err(|err| Error::io("delete", archive, err))
    }
}

/// Why `dir` is not the directory of an archived workflow, when it is not: it must be a real
/// directory holding only regular files (no link to follow, no directory to move along).
fn check_archive_files(dir: &Path) -> std::result::Result<(), String> {
    let meta = fs::symlink_metadata(dir).map_err(|err| format!("it cannot be read: {err}"))?;
    if !meta.is_dir() {
        return Err("it is not a directory".into());
    }
    let entries = fs::read_dir(dir).map_err(|err| format!("it cannot be listed: {err}"))?;
    for entry in entries {
        let entry = entry.map_err(|err| format!("it cannot be listed: {err}"))?;
        let kind = entry
            .file_type()
            .map_err(|err| format!("it cannot be listed: {err}"))?;
        if !kind.is_file() {
            return Err(format!(
                "`{}` is not a regular file, and an archive holds only the files of a workflow",
                entry.file_name().to_string_lossy()
            ));
        }
    }
    Ok(())
}

/// Gives a restored workflow the modes the store creates its files with: 0700 for the
/// directory, 0600 for each file.
fn make_private(dir: &Path) -> Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let set = |path: &Path, mode: u32| {
            fs::set_permissions(path, fs::Permissions::from_mode(mode))
                .map_err(|err| Error::io("set the permissions of", path, err))
        };
        set(dir, 0o700)?;
        let entries = fs::read_dir(dir).map_err(|err| Error::io("list", dir, err))?;
        for entry in entries {
            let entry = entry.map_err(|err| Error::io("list", dir, err))?;
            set(&entry.path(), 0o600)?;
        }
    }
    #[cfg(not(unix))]
    let _ = dir;
    Ok(())
}

/// The time in an archive name `<id>_<YYYYMMDD_HHMMSS>[_<n>]`.
fn archive_time(name: &str) -> Option<DateTime<Utc>> {
    let parts: Vec<&str> = name.rsplit('_').collect();
    [(1, 0), (2, 1)].iter().find_map(|&(date, time)| {
        let stamp = format!("{}{}", parts.get(date)?, parts.get(time)?);
        chrono::NaiveDateTime::parse_from_str(&stamp, "%Y%m%d%H%M%S")
            .ok()
            .map(|naive| naive.and_utc())
    })
}

/// Refuses a new workflow whose id clashes with a name the store uses or keeps.
pub(crate) fn refuse_reserved(id: &WorkflowId) -> Result<()> {
    match id.reserved() {
        Some(name) => Err(Error::ReservedId {
            id: id.to_string(),
            name,
            names: crate::id::RESERVED_WORKFLOW_IDS
                .iter()
                .map(|name| format!("`{name}`"))
                .collect::<Vec<_>>()
                .join(", "),
        }),
        None => Ok(()),
    }
}
