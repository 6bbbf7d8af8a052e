//! Reading a hook's JSON payload from stdin with a deadline: the client may keep stdin open
//! after writing the payload, and a hook must never wait for it until the client kills it.
//!
//! The deadline is kept with `poll(2)` on the calling thread: a reader thread would cost a
//! `clone3` and a channel on every hook, the hot path of the whole tool.

use std::{
    os::fd::{AsFd, BorrowedFd},
    time::{Duration, Instant},
};

use rustix::{
    event::{PollFd, PollFlags, Timespec, poll},
    io::Errno,
};
use serde::de::IgnoredAny;

/// How long a hook waits for a complete payload: well inside the 5 s the plugin gives a hook.
pub(crate) const PAYLOAD_DEADLINE: Duration = Duration::from_millis(1500);

/// The most one `read` takes: what a pipe holds.
const CHUNK_BYTES: usize = 64 * 1024;

/// What reading stdin gave.
pub(crate) enum Payload {
    /// The bytes of a complete JSON value (what followed it, if anything, is left out).
    Complete(Vec<u8>),
    /// Stdin ended; this is everything it held (possibly nothing, or not JSON).
    Ended(Vec<u8>),
    /// Stdin held more than the limit: its strings longer than [`STRING_KEPT`] bytes (a tool's
    /// huge output) were cut, and this is the rest (complete, or all stdin held).
    Cut(Vec<u8>),
}

/// What is kept of each string of a payload over the limit, in bytes.
pub(crate) const STRING_KEPT: usize = 64 * 1024;

/// Cuts the strings of a JSON text fed to it in pieces to [`STRING_KEPT`] bytes, at a character's
/// start and never inside an escape, marking each cut.
#[derive(Default)]
struct Skim {
    in_string: bool,
    /// After a `\`: the escape's letter is next.
    escape: bool,
    /// Hex digits of a `\u` escape still to come.
    hex: u8,
    /// Bytes of the current string seen.
    run: usize,
    dropping: bool,
    cut: bool,
}

impl Skim {
    fn feed(&mut self, input: &[u8], out: &mut Vec<u8>) {
        for &byte in input {
            if !self.in_string {
                out.push(byte);
                if byte == b'"' {
                    self.in_string = true;
                    self.run = 0;
                }
                continue;
            }
            let plain = !self.escape && self.hex == 0;
            if plain && byte == b'"' {
                if self.dropping {
                    // A high surrogate kept without its low half would not parse.
                    let tail = out.len().saturating_sub(6);
                    if out[tail..].starts_with(b"\\u")
                        && matches!(out.get(tail + 2), Some(b'd' | b'D'))
                        && matches!(
                            out.get(tail + 3),
                            Some(b'8'..=b'9' | b'a'..=b'b' | b'A'..=b'B')
                        )
                    {
                        out.truncate(tail);
                    }
                    out.extend_from_slice("[… cut]".as_bytes());
                }
                out.push(byte);
                self.in_string = false;
                self.dropping = false;
                continue;
            }
            if !self.dropping && plain && byte & 0xC0 != 0x80 && self.run >= STRING_KEPT {
                self.dropping = true;
                self.cut = true;
            }
            if !self.dropping {
                out.push(byte);
            }
            self.run += 1;
            if self.escape {
                self.escape = false;
                self.hex = if byte == b'u' { 4 } else { 0 };
            } else if self.hex > 0 {
                self.hex -= 1;
            } else if byte == b'\\' {
                self.escape = true;
            }
        }
    }
}

/// Reads `input` until it ends, or until what it gave so far is a complete JSON value, or until
/// `deadline` passes; reads at most `limit` bytes.
pub(crate) fn read_payload(
    input: impl AsFd,
    limit: u64,
    deadline: Duration,
) -> Result<Payload, String> {
    let fd = input.as_fd();
    let give_up_at = Instant::now() + deadline;
    let mut bytes = Vec::new();
    // Left uninitialized (and off the stack): a payload fills a page or two of it.
    let mut chunk = Box::<[u8]>::new_uninit_slice(CHUNK_BYTES);
    // Past the limit, the rest is read through a skim that cuts long strings.
    let mut skim: Option<Skim> = None;
    loop {
        let room = limit.saturating_sub(bytes.len() as u64);
        if room == 0 {
            if skim.is_some() {
                // Over the limit even with its strings cut: no payload to keep.
                return Ok(Payload::Ended(bytes));
            }
            let mut skimmer = Skim::default();
            let mut kept = Vec::new();
            skimmer.feed(&bytes, &mut kept);
            bytes = kept;
            skim = Some(skimmer);
            continue;
        }
        if !readable_before(fd, give_up_at)? {
            return Err(format!(
                "stdin held no complete JSON payload after {} ms ({} bytes read); nothing recorded",
                deadline.as_millis(),
                bytes.len()
            ));
        }
        let want = chunk.len().min(usize::try_from(room).unwrap_or(usize::MAX));
        let read = match rustix::io::read(fd, &mut chunk[..want]) {
            Ok((read, _)) => read,
            Err(Errno::INTR | Errno::AGAIN) => continue,
            // A closed stdin reads as empty, as the standard library's `Stdin` has it.
            Err(Errno::BADF) => &mut [],
            Err(err) => return Err(format!("failed to read the payload on stdin: {err}")),
        };
        if read.is_empty() {
            return Ok(match skim {
                Some(_) => Payload::Cut(bytes),
                None => Payload::Ended(bytes),
            });
        }
        match skim.as_mut() {
            Some(skimmer) => skimmer.feed(read, &mut bytes),
            None => bytes.extend_from_slice(read),
        }
        // A JSON object ends with `}`: only then can the bytes so far be a complete payload,
        // which keeps a large payload from being parsed once per chunk.
        // Checking it builds nothing: the caller parses the bytes into its own type.
        if bytes.trim_ascii_end().ends_with(b"}") {
            let mut values = serde_json::Deserializer::from_slice(&bytes).into_iter::<IgnoredAny>();
            if let Some(Ok(_)) = values.next() {
                let end = values.byte_offset();
                bytes.truncate(end);
                return Ok(match skim {
                    Some(_) => Payload::Cut(bytes),
                    None => Payload::Complete(bytes),
                });
            }
        }
    }
}

/// Waits until `fd` can be read without blocking (data, its end, or an error to report), or
/// until `give_up_at`; false when the time ran out.
fn readable_before(fd: BorrowedFd<'_>, give_up_at: Instant) -> Result<bool, String> {
    loop {
        let left = give_up_at.saturating_duration_since(Instant::now());
        let timeout = Timespec::try_from(left).unwrap_or(Timespec {
            tv_sec: i64::MAX,
            tv_nsec: 0,
        });
        let mut fds = [PollFd::new(&fd, PollFlags::IN)];
        match poll(&mut fds, Some(&timeout)) {
            Ok(0) => return Ok(false),
            Ok(_) => return Ok(true),
            Err(Errno::INTR | Errno::AGAIN) => {}
            Err(err) => return Err(format!("failed to wait for the payload on stdin: {err}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::{self, Write};

    use serde_json::Value;

    use super::*;

    /// A pipe holding `bytes`, with its writing end still open when `close` is false, as stdin is
    /// when the client keeps it open.
    fn pipe_with(bytes: &[u8], close: bool) -> (io::PipeReader, Option<io::PipeWriter>) {
        let (reader, mut writer) = io::pipe().unwrap();
        writer.write_all(bytes).unwrap();
        (reader, (!close).then_some(writer))
    }

    /// A payload over the limit, its huge string anywhere (before or after the call), made of
    /// ASCII, multi-byte characters, escapes or surrogate pairs, stdin closed or kept open:
    /// the call is kept, each long string cut at a place that still parses, and said.
    #[test]
    fn a_payload_over_the_limit_keeps_the_call_and_cuts_its_long_strings() {
        let limit: usize = 1024 * 1024;
        for filler in ["x", "é", "\\u00e9", "\\ud83d\\ude00", "\\\"", "a\\nb"] {
            for output_first in [false, true] {
                for close in [true, false] {
                    let output = filler.repeat(3 * limit / filler.len());
                    let call = r#""tool_input": {"command": "git push origin main"}"#;
                    let response =
                        format!(r#""tool_response": {{"stdout": "{output}", "stderr": "e"}}"#);
                    let text = if output_first {
                        format!(r#"{{"tool_name": "Bash", {response}, {call}}}"#)
                    } else {
                        format!(r#"{{"tool_name": "Bash", {call}, {response}}}"#)
                    };
                    let (reader, mut writer) = io::pipe().unwrap();
                    let feeder = std::thread::spawn(move || {
                        writer.write_all(text.as_bytes()).unwrap();
                        if close {
                            drop(writer);
                            None
                        } else {
                            Some(writer)
                        }
                    });
                    let read = read_payload(reader, limit as u64, Duration::from_secs(60));
                    let _writer = feeder.join().unwrap();
                    let Ok(Payload::Cut(bytes)) = read else {
                        panic!("{filler:?} {output_first}: not cut");
                    };
                    let value: Value = serde_json::from_slice(&bytes)
                        .unwrap_or_else(|err| panic!("{filler:?}: {err}"));
                    assert_eq!(value["tool_input"]["command"], "git push origin main");
                    assert_eq!(value["tool_response"]["stderr"], "e");
                    let stdout = value["tool_response"]["stdout"].as_str().unwrap();
                    assert!(stdout.ends_with("[… cut]"), "{filler:?}");
                    assert!(
                        stdout.len() <= STRING_KEPT + 16,
                        "{filler:?}: {}",
                        stdout.len()
                    );
                }
            }
        }
    }

    #[test]
    fn a_complete_payload_is_taken_without_waiting_for_the_end() {
        let (reader, _writer) = pipe_with(br#"{"hook_event_name": "Stop"}"#, false);
        let Ok(Payload::Complete(bytes)) = read_payload(reader, 1024, Duration::from_secs(60))
        else {
            panic!("no complete payload");
        };
        assert_eq!(bytes, br#"{"hook_event_name": "Stop"}"#);
    }

    /// What follows a complete payload (more input, another value) is left out of its bytes.
    #[test]
    fn what_follows_a_complete_payload_is_left_out() {
        let (reader, _writer) = pipe_with(b"{\"a\": {\"b\": \"}\"}} {\"c\": 1}", false);
        let Ok(Payload::Complete(bytes)) = read_payload(reader, 1024, Duration::from_secs(60))
        else {
            panic!("no complete payload");
        };
        assert_eq!(bytes, br#"{"a": {"b": "}"}}"#);
    }

    #[test]
    fn an_incomplete_payload_gives_up_at_the_deadline() {
        let (reader, _writer) = pipe_with(br#"{"hook_event_name": "St"#, false);
        let Err(message) = read_payload(reader, 1024, Duration::from_millis(50)) else {
            panic!("an incomplete payload was taken");
        };
        assert!(message.contains("no complete JSON payload"), "{message}");
        assert!(message.contains("(23 bytes read)"), "{message}");
    }

    #[test]
    fn an_ended_stdin_gives_what_it_held() {
        let (reader, _) = pipe_with(b"not json", true);
        let Ok(Payload::Ended(bytes)) = read_payload(reader, 1024, Duration::from_secs(60)) else {
            panic!("stdin did not end");
        };
        assert_eq!(bytes, b"not json");
    }

    #[test]
    fn no_more_than_the_limit_is_read() {
        let (reader, _writer) = pipe_with(br#"{"hook_event_name": "Stop"}"#, false);
        let Ok(Payload::Ended(bytes)) = read_payload(reader, 5, Duration::from_secs(60)) else {
            panic!("the limit did not end the payload");
        };
        assert_eq!(bytes, br#"{"hoo"#);
    }

    #[test]
    fn a_payload_written_in_pieces_is_read_whole() {
        let (reader, mut writer) = io::pipe().unwrap();
        let writing = std::thread::spawn(move || {
            for piece in [
                &br#"{"hook_event_name":"#[..],
                br#" "Stop", "#,
                br#""x": 1}"#,
            ] {
                writer.write_all(piece).unwrap();
                std::thread::sleep(Duration::from_millis(20));
            }
            writer
        });
        let Ok(Payload::Complete(bytes)) = read_payload(reader, 1024, Duration::from_secs(60))
        else {
            panic!("no complete payload");
        };
        let value: Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(
            (value["hook_event_name"].as_str(), value["x"].as_i64()),
            (Some("Stop"), Some(1))
        );
        drop(writing.join());
    }
}
