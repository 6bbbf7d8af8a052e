//! Plan files, JSON and TOML: any text is parsed or refused, and a parsed plan is validated.

#![no_main]

use std::path::Path;

use checkpoint_core::{Plan, WorkflowId};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    for name in ["plan.json", "plan.toml"] {
        if let Ok(plan) = Plan::parse(Path::new(name), text) {
            let id = WorkflowId::new("w").expect("a valid id");
            let _ = plan.into_workflow(id, None, chrono::DateTime::UNIX_EPOCH);
        }
    }
});
