//! The five seed systems' state files: any bytes are detected and imported or refused, and an
//! imported workflow exports again, without panicking.

#![no_main]

use std::path::Path;

use checkpoint_core::seeds::{self, ImportOptions, SeedFormat, SeedSource};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let options = ImportOptions { id: None, now: chrono::DateTime::UNIX_EPOCH };
    let path = Path::new(".claude/pipeline-state.json");
    let _ = seeds::detect(path, data);
    let source = SeedSource::new(path, data.to_vec());
    for format in SeedFormat::ALL {
        if let Ok(workflow) = seeds::import(format, &source, &options) {
            let _ = seeds::export(format, &workflow);
        }
    }
});
