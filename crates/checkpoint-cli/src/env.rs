//! Every environment variable `checkpoint` reads, by name: the names are the contract's
//! ([`checkpoint_contract::env`]), re-exported here; and the check of a hostile `TZ`.

pub(crate) use checkpoint_contract::env::*;

/// The directories `chrono` looks up a relative `TZ` in, in its order.
const ZONE_INFO_DIRECTORIES: [&str; 4] = [
    "/usr/share/zoneinfo",
    "/share/zoneinfo",
    "/etc/zoneinfo",
    "/usr/share/lib/zoneinfo",
];

/// The largest zone file read (real ones are a few kilobytes).
const MAX_ZONE_FILE_BYTES: u64 = 1024 * 1024;

/// Why `TZ` names a file that must not be read (a FIFO, a device, a directory, a file over
/// 1 MiB), found without opening it; `None` when it names none or a zone file.
pub(crate) fn hostile_tz(value: Option<&std::ffi::OsStr>) -> Option<String> {
    let value = value?.to_str()?;
    let name = value.strip_prefix(':').unwrap_or(value);
    if name.is_empty() || name == "localtime" {
        return None;
    }
    let path = std::path::Path::new(name);
    let candidates: Vec<std::path::PathBuf> = if path.is_absolute() {
        vec![path.to_owned()]
    } else {
        ZONE_INFO_DIRECTORIES
            .iter()
            .map(|dir| std::path::Path::new(dir).join(path))
            .collect()
    };
    // The first that exists is the one that would be read.
    let (file, meta) = candidates
        .iter()
        .find_map(|file| std::fs::metadata(file).ok().map(|meta| (file, meta)))?;
    let what = if meta.is_dir() {
        "a directory"
    } else if !meta.is_file() {
        "not a regular file"
    } else if meta.len() > MAX_ZONE_FILE_BYTES {
        "larger than any zone file"
    } else {
        return None;
    };
    Some(format!(
        "`TZ={}` names `{}`, which is {what}",
        crate::output::escape(value),
        file.display()
    ))
}
