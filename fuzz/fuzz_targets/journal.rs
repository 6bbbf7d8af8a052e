//! `journal.jsonl`: any bytes are parsed or refused, a parsed journal replays or is refused, and
//! the tail reader, from any window, agrees with the whole-file parser whenever both read it:
//! on a valid journal they read the same entries, and an entry that skips ahead or steps back,
//! or a line that is not an entry, after the entries asked for is never read as an entry.

#![no_main]

use std::path::Path;

use checkpoint_core::journal::{self, Entry, Scan};
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
        for scan in [&whole, &window] {
            if let Scan::Done(tail) = scan {
                // Whatever the input, the entries the tail hands out follow one another.
                assert!(tail.after.windows(2).all(|pair| pair[1].seq == pair[0].seq + 1));
            }
        }
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
    // Gaps: a valid journal with an entry appended that does not follow its last one (or a
    // line that is no entry at all) is refused by the parser, and the tail reader, asked for
    // the entries after the last good one, never returns it.
    let Some(parsed) = parsed.filter(|parsed| parsed.torn.is_none()) else {
        return;
    };
    let Some(last) = parsed.entries.last() else {
        return;
    };
    let skip = u64::from(data.last().copied().unwrap_or(0));
    let seq = match skip % 3 {
        0 => last.seq.saturating_add(2 + skip),
        1 => last.seq.saturating_sub(skip % 4),
        _ => last.seq,
    };
    let mut forged = data.to_vec();
    if skip % 5 == 4 {
        forged.extend_from_slice(b"{\"foo\":1}\n");
    } else {
        let entry = Entry {
            seq,
            ..last.clone()
        };
        forged.extend_from_slice(entry.to_line().as_bytes());
    }
    assert!(journal::parse(path, &forged).is_err());
    assert!(!journal::looks_whole(&forged, true));
    let (prefix, bad) = journal::parse_prefix(path, &forged);
    assert_eq!(prefix.entries.len(), parsed.entries.len());
    assert!(bad.is_some_and(|bad| bad.last));
    let at = forged.len() / 2;
    for (bytes, start, whole) in [(&forged[..], 0, true), (&forged[at..], at as u64, false)] {
        if let Scan::Done(tail) = journal::scan_tail(bytes, start, whole, Some(last.seq)) {
            panic!("the tail reader read a forged end: {tail:?}");
        }
    }
});
