//! `journal.jsonl`: any bytes are parsed or refused, a parsed journal replays or is refused, and
//! the tail reader, from any window, agrees with the whole-file parser whenever both read it.

#![no_main]

use std::path::Path;

use checkpoint_core::journal::{self, Scan};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let path = Path::new("journal.jsonl");
    let parsed = journal::parse(path, data).ok();
    if let Some(parsed) = &parsed {
        let _ = journal::replay(path, None, &parsed.entries);
    }
    let split = data.first().map_or(0, |&b| usize::from(b) % (data.len() + 1));
    for after in [None, Some(0), Some(3)] {
        let whole = journal::scan_tail(data, 0, true, after);
        let window = journal::scan_tail(&data[split..], split as u64, split == 0, after);
        let (Some(parsed), Scan::Done(tail)) = (&parsed, &whole) else {
            continue;
        };
        assert_eq!(tail.last_seq, parsed.entries.last().map(|entry| entry.seq));
        assert_eq!(tail.torn, parsed.torn);
        let expected: Vec<_> = parsed
            .entries
            .iter()
            .filter(|entry| after.is_some_and(|after| entry.seq > after))
            .collect();
        assert_eq!(tail.after.iter().collect::<Vec<_>>(), expected);
        if let Scan::Done(windowed) = window {
            assert_eq!(&windowed, tail);
        }
    }
});
