//! `journal.jsonl`: any bytes are parsed or refused, a parsed journal replays or is refused, and
//! the tail reader never panics.

#![no_main]

use std::path::Path;

use checkpoint_core::journal;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let path = Path::new("journal.jsonl");
    if let Ok(parsed) = journal::parse(path, data) {
        let _ = journal::replay(path, None, &parsed.entries);
    }
    let _ = journal::last_seq_in_tail(data, true);
    let _ = journal::last_seq_in_tail(data, false);
});
