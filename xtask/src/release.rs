//! `cargo xtask release-assets` and `cargo xtask pin-checksums`: the release asset of the machine
//! it runs on (`checkpoint-<version>-<target>.tar.gz`, holding `checkpoint` and `checkpoint-mcp`),
//! its line in `SHA256SUMS`, and those checksums pinned in the plugin directory, where the
//! launcher (`plugin/bin/checkpoint`) checks every download against them.

use std::{
    fs,
    path::{Path, PathBuf},
    process::Command,
};

use crate::{Result, dist, plugin, run_checked};

/// The binaries an asset holds.
const BINARIES: [&str; 2] = ["checkpoint", "checkpoint-mcp"];
/// Where the plugin directory pins its assets' checksums, relative to it.
pub(crate) const PINNED: &str = "release/SHA256SUMS";

/// Builds this machine's asset into `out`, adds its checksum to `out/SHA256SUMS`, and unless
/// `pin` is `None` pins the checksums of `out/SHA256SUMS` for this version in that plugin
/// directory. Returns the asset's path. The asset holds the binaries of `build`: a published
/// one is always `Shipped`; the tests' own (`cargo xtask test`) is `Dev`.
pub(crate) fn assets(
    root: &Path,
    out: &Path,
    pin: Option<&Path>,
    build: dist::Build,
) -> Result<PathBuf> {
    let version = plugin::version();
    let target = dist::host_target();
    let binary = dist::build_binaries(root, build)?;
    fs::create_dir_all(out)
        .map_err(|err| format!("failed to create `{}`: {err}", out.display()))?;

    let name = asset_name(&version, &target);
    let staging = out.join(&name);
    if staging.exists() {
        fs::remove_dir_all(&staging)
            .map_err(|err| format!("failed to clean `{}`: {err}", staging.display()))?;
    }
    fs::create_dir_all(&staging)
        .map_err(|err| format!("failed to create `{}`: {err}", staging.display()))?;
    for name in BINARIES {
        let from = binary.with_file_name(name);
        fs::copy(&from, staging.join(name)).map_err(|err| {
            format!(
                "failed to copy `{}` into `{}`: {err}",
                from.display(),
                staging.display()
            )
        })?;
    }
    let archive = out.join(format!("{name}.tar.gz"));
    run_checked(
        Command::new("tar")
            .arg("-czf")
            .arg(&archive)
            .arg("-C")
            .arg(out)
            .arg(&name),
    )?;
    fs::remove_dir_all(&staging)
        .map_err(|err| format!("failed to clean `{}`: {err}", staging.display()))?;

    let sum = sha256(&archive)?;
    let sums = out.join("SHA256SUMS");
    let existing = fs::read_to_string(&sums).unwrap_or_default();
    let file_name = format!("{name}.tar.gz");
    write(&sums, &with_sum(&existing, &file_name, &sum, None))?;
    eprintln!("wrote {} ({sum})", archive.display());
    if let Some(plugin_dir) = pin {
        pin_checksums(plugin_dir, &sums)?;
    }
    Ok(archive)
}

/// Pins, in `plugin_dir`'s `release/SHA256SUMS`, every checksum of `sums` that belongs to this
/// version's assets; lines of other versions are dropped, comments kept.
pub(crate) fn pin_checksums(plugin_dir: &Path, sums: &Path) -> Result {
    let version = plugin::version();
    let text = fs::read_to_string(sums)
        .map_err(|err| format!("failed to read `{}`: {err}", sums.display()))?;
    let pinned_path = plugin_dir.join(PINNED);
    let mut pinned = fs::read_to_string(&pinned_path).unwrap_or_default();
    let prefix = format!("checkpoint-{version}-");
    let mut count = 0;
    for line in text.lines() {
        let Some((sum, file)) = parse_line(line) else {
            continue;
        };
        if file.starts_with(&prefix) && file.ends_with(".tar.gz") {
            pinned = with_sum(&pinned, file, sum, Some(&prefix));
            count += 1;
        }
    }
    if count == 0 {
        return Err(format!(
            "`{}` lists no asset of version {version} (`{prefix}<target>.tar.gz`)",
            sums.display()
        ));
    }
    write(&pinned_path, &pinned)?;
    eprintln!("pinned {count} checksum(s) in {}", pinned_path.display());
    Ok(())
}

/// `checkpoint-<version>-<target>`: the asset's name without `.tar.gz`, and its top directory.
pub(crate) fn asset_name(version: &str, target: &str) -> String {
    format!("checkpoint-{version}-{target}")
}

/// `(sum, file)` of a `sha256sum` line (`<64 hex>  <file>` or `<64 hex> *<file>`).
fn parse_line(line: &str) -> Option<(&str, &str)> {
    let (sum, file) = line.split_once(char::is_whitespace)?;
    let file = file.trim_start();
    let file = file.strip_prefix('*').unwrap_or(file);
    let valid = sum.len() == 64 && sum.bytes().all(|b| b.is_ascii_hexdigit());
    (valid && !file.is_empty()).then_some((sum, file))
}

/// `text` with the line of `file` set to `sum` (added at the end when absent); with
/// `keep_prefix`, checksum lines of files outside that prefix (other versions) are dropped.
fn with_sum(text: &str, file: &str, sum: &str, keep_prefix: Option<&str>) -> String {
    let mut out = String::new();
    for line in text.lines() {
        match parse_line(line) {
            Some((_, other)) if other == file => {}
            Some((_, other)) if keep_prefix.is_some_and(|prefix| !other.starts_with(prefix)) => {}
            _ => {
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    out.push_str(&format!("{}  {file}\n", sum.to_ascii_lowercase()));
    out
}

/// The SHA-256 of a file, from `sha256sum` or `shasum -a 256`.
fn sha256(path: &Path) -> Result<String> {
    let attempts: [(&str, &[&str]); 2] = [("sha256sum", &[]), ("shasum", &["-a", "256"])];
    for (program, args) in attempts {
        let Ok(output) = Command::new(program).args(args).arg(path).output() else {
            continue;
        };
        if output.status.success() {
            let text = String::from_utf8_lossy(&output.stdout);
            if let Some(sum) = text.split_whitespace().next() {
                return Ok(sum.to_owned());
            }
        }
    }
    Err(format!(
        "failed to hash `{}`: neither `sha256sum` nor `shasum` ran",
        path.display()
    ))
}

fn write(path: &Path, text: &str) -> Result {
    fs::write(path, text).map_err(|err| format!("failed to write `{}`: {err}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    const B: &str = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";

    #[test]
    fn a_sum_replaces_its_files_line_and_keeps_comments() {
        let text =
            format!("# pinned\n{A}  checkpoint-1.0.0-x.tar.gz\n{A}  checkpoint-1.0.0-y.tar.gz\n");
        let updated = with_sum(&text, "checkpoint-1.0.0-x.tar.gz", B, None);
        assert_eq!(
            updated,
            format!("# pinned\n{A}  checkpoint-1.0.0-y.tar.gz\n{B}  checkpoint-1.0.0-x.tar.gz\n")
        );
    }

    #[test]
    fn pinning_a_version_drops_the_sums_of_other_versions() {
        let text = format!("# pinned\n{A}  checkpoint-0.9.0-x.tar.gz\n");
        let updated = with_sum(
            &text,
            "checkpoint-1.0.0-x.tar.gz",
            B,
            Some("checkpoint-1.0.0-"),
        );
        assert_eq!(
            updated,
            format!("# pinned\n{B}  checkpoint-1.0.0-x.tar.gz\n")
        );
    }

    #[test]
    fn sha256sum_lines_parse_in_text_and_binary_mode_and_nothing_else_does() {
        assert_eq!(parse_line(&format!("{A}  f.tar.gz")), Some((A, "f.tar.gz")));
        assert_eq!(parse_line(&format!("{A} *f.tar.gz")), Some((A, "f.tar.gz")));
        assert_eq!(parse_line("# a comment"), None);
        assert_eq!(parse_line(&format!("{}  f", &A[1..])), None);
        assert_eq!(parse_line(&format!("{A}  ")), None);
    }
}
