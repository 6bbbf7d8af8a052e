//! `state.json`: any bytes are parsed or refused; a parsed state writes back to the same state.

#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let path = Path::new("state.json");
    if let Ok(workflow) = checkpoint_core::store::parse_state(path, data) {
        let text = serde_json::to_vec_pretty(&workflow).expect("a workflow serializes");
        let again =
            checkpoint_core::store::parse_state(path, &text).expect("a written state parses");
        assert_eq!(again, workflow);
    }
});
