//! Tests of the summary of a libFuzzer run.

use crate::fuzz::{Summary, summarize};

#[test]
fn a_clean_run_gives_runs_time_coverage_and_new_inputs() {
    let output = "\
   Compiling checkpoint-fuzz v0.0.0 (fuzz)
INFO: Seed: 1234
#2\tINITED cov: 310 ft: 402 corp: 12/3Kb exec/s: 0 rss: 41Mb
#4096\tpulse  cov: 355 ft: 520 corp: 20/4Kb lim: 80 exec/s: 2048 rss: 44Mb
#91234\tDONE   cov: 371 ft: 566 corp: 25/5Kb lim: 200 exec/s: 8294 rss: 60Mb
Done 91234 runs in 11 second(s)
stat::number_of_executed_units: 91234
stat::average_exec_per_sec:     8294
stat::new_units_added:          13
stat::slowest_unit_time_sec:    0
stat::peak_rss_mb:              60
";
    assert_eq!(
        summarize(output),
        Summary {
            runs: Some(91234),
            seconds: Some(11),
            coverage: Some(371),
            new_units: Some(13),
            crash: None,
        }
    );
}

#[test]
fn a_crash_names_its_input() {
    let output = "\
#2\tINITED cov: 310 ft: 402 corp: 12/3Kb exec/s: 0 rss: 41Mb
thread '<unnamed>' panicked at crates/checkpoint-core/src/journal.rs:10:5:
index out of bounds
==4242== ERROR: libFuzzer: deadly signal
SUMMARY: libFuzzer: deadly signal
MS: 1 ChangeByte-; base unit: 0000
artifact_prefix='fuzz/artifacts/journal/'; Test unit written to fuzz/artifacts/journal/crash-3f2a
";
    let summary = summarize(output);
    assert_eq!(
        summary.crash.as_deref(),
        Some("crash input in fuzz/artifacts/journal/crash-3f2a")
    );
    assert_eq!(summary.coverage, Some(310));
}

#[test]
fn a_build_failure_has_no_numbers() {
    let summary = summarize("error[E0425]: cannot find value `x` in this scope\n");
    assert_eq!(summary, Summary::default());
}
