//! Redaction: any text is redacted without panicking, and redacting twice changes nothing more.

#![no_main]

use checkpoint_core::redact;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut text = String::from_utf8_lossy(data).into_owned();
    redact::text(&mut text);
    let mut again = text.clone();
    assert_eq!(redact::text(&mut again), 0, "{text:?}");
    assert_eq!(again, text);
});
