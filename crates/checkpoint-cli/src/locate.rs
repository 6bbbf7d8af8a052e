//! Where things are: the project around a directory, the store in it by default, and the
//! binaries installed beside this one.

use std::path::{Path, PathBuf};

pub(crate) use checkpoint_core::store::{
    DEFAULT_STORE, default_store, effect_dir, effect_place, project_root, project_with_store,
};

/// Whether `dir` is a default store, by its last two components.
pub(crate) fn is_default_store(dir: &Path) -> bool {
    let mut parts = dir.components().rev().map(|part| part.as_os_str());
    let [parent, store] = DEFAULT_STORE;
    parts.next().is_some_and(|part| part == store)
        && parts.next().is_some_and(|part| part == parent)
}

/// The binary `name` (without its platform suffix) beside the running one, else `name` alone,
/// for a lookup on `PATH`.
pub(crate) fn sibling_binary(name: &str) -> PathBuf {
    let name = format!("{name}{}", std::env::consts::EXE_SUFFIX);
    std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|dir| dir.join(&name)))
        .filter(|path| path.is_file())
        .unwrap_or_else(|| PathBuf::from(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_store_is_recognised_by_its_last_components() {
        let store = default_store(Path::new("/work/project"));
        assert_eq!(store, Path::new("/work/project/.claude/checkpoints"));
        assert!(is_default_store(&store));
        assert!(is_default_store(Path::new(".claude/checkpoints")));
        for other in [
            "/work/project/checkpoints",
            "/work/project/.claude",
            "/work/project/claude/checkpoints",
            "/work/project/.claude/checkpoints/payments",
            "checkpoints",
            "",
        ] {
            assert!(!is_default_store(Path::new(other)), "{other}");
        }
    }

    #[test]
    fn the_project_root_is_the_nearest_directory_with_git() {
        let dir = std::env::temp_dir().join(format!("checkpoint-locate-{}", std::process::id()));
        let inner = dir.join("a").join("b");
        std::fs::create_dir_all(&inner).unwrap();
        std::fs::create_dir_all(dir.join("a").join(".git")).unwrap();
        assert_eq!(project_root(&inner), dir.join("a"));
        assert_eq!(project_root(&dir), dir);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
