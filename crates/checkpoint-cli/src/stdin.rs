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
    loop {
        let room = limit.saturating_sub(bytes.len() as u64);
        if room == 0 {
            return Ok(Payload::Ended(bytes));
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
            return Ok(Payload::Ended(bytes));
        }
        bytes.extend_from_slice(read);
        // A JSON object ends with `}`: only then can the bytes so far be a complete payload,
        // which keeps a large payload from being parsed once per chunk.
        // Checking it builds nothing: the caller parses the bytes into its own type.
        if bytes.trim_ascii_end().ends_with(b"}") {
            let mut values = serde_json::Deserializer::from_slice(&bytes).into_iter::<IgnoredAny>();
            if let Some(Ok(_)) = values.next() {
                let end = values.byte_offset();
                bytes.truncate(end);
                return Ok(Payload::Complete(bytes));
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
