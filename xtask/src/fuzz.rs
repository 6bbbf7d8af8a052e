//! `cargo xtask fuzz`: a bounded run of every cargo-fuzz target (libFuzzer) over its seed corpus.

use std::path::Path;

use crate::{Result, cargo, run_checked};

/// The fuzz targets in `fuzz/fuzz_targets/`, one per parser.
const TARGETS: &[&str] = &["state", "journal", "plan", "redact", "seeds"];

/// Installs cargo-fuzz if needed, then runs each target for `seconds`.
pub(crate) fn run(root: &Path, seconds: u32) -> Result {
    let installed = cargo()
        .args(["fuzz", "--version"])
        .output()
        .is_ok_and(|output| output.status.success());
    if !installed {
        run_checked(cargo().args(["install", "cargo-fuzz", "--locked"]))?;
    }
    for target in TARGETS {
        let corpus = crate::target_dir(root).join("fuzz-corpus").join(target);
        std::fs::create_dir_all(&corpus)
            .map_err(|err| format!("failed to create `{}`: {err}", corpus.display()))?;
        let seeds = root.join("fuzz").join("seeds").join(target);
        let mut command = cargo();
        command
            .args(["fuzz", "run", "--fuzz-dir", "fuzz", "-O", target])
            .arg(&corpus)
            .arg(&seeds)
            .arg("--")
            .arg(format!("-max_total_time={seconds}"))
            .arg("-print_final_stats=1")
            // cargo-fuzz asks for nightly flags; the stable toolchain accepts them with this.
            .env("RUSTC_BOOTSTRAP", "1");
        run_checked(&mut command)?;
    }
    Ok(())
}
