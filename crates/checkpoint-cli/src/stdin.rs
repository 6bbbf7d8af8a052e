//! Reading a hook's JSON payload from stdin with a deadline: the client may keep stdin open
//! after writing the payload, and a hook must never wait for it until the client kills it.

use std::{
    io::{self, Read},
    sync::mpsc,
    thread,
    time::{Duration, Instant},
};

use serde_json::Value;

/// How long a hook waits for a complete payload: well inside the 5 s the plugin gives a hook.
pub(crate) const PAYLOAD_DEADLINE: Duration = Duration::from_millis(1500);

/// What reading stdin gave.
pub(crate) enum Payload {
    /// A complete JSON value (what followed it, if anything, is ignored).
    Complete(Value),
    /// Stdin ended; this is everything it held (possibly nothing, or not JSON).
    Ended(Vec<u8>),
}

/// Reads `reader` on a thread until it ends, or until what it gave so far is a complete JSON
/// value, or until `deadline` passes; reads at most `limit` bytes.
pub(crate) fn read_payload(
    reader: impl Read + Send + 'static,
    limit: u64,
    deadline: Duration,
) -> Result<Payload, String> {
    let started = Instant::now();
    let (sender, receiver) = mpsc::channel::<io::Result<Vec<u8>>>();
    // The thread may stay blocked in `read` after we return: the process exits soon after, and
    // that ends it.
    thread::spawn(move || {
        let mut reader = reader.take(limit);
        loop {
            let mut chunk = vec![0; 64 * 1024];
            match reader.read(&mut chunk) {
                Ok(0) => {
                    let _ = sender.send(Ok(Vec::new()));
                    return;
                }
                Ok(n) => {
                    chunk.truncate(n);
                    if sender.send(Ok(chunk)).is_err() {
                        return;
                    }
                }
                Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                Err(err) => {
                    let _ = sender.send(Err(err));
                    return;
                }
            }
        }
    });
    let mut input = Vec::new();
    loop {
        let left = deadline.saturating_sub(started.elapsed());
        let chunk = match receiver.recv_timeout(left) {
            Ok(Ok(chunk)) => chunk,
            Ok(Err(err)) => return Err(format!("failed to read the payload on stdin: {err}")),
            Err(mpsc::RecvTimeoutError::Disconnected) => return Ok(Payload::Ended(input)),
            Err(mpsc::RecvTimeoutError::Timeout) => {
                return Err(format!(
                    "stdin held no complete JSON payload after {} ms ({} bytes read); nothing recorded",
                    deadline.as_millis(),
                    input.len()
                ));
            }
        };
        if chunk.is_empty() {
            return Ok(Payload::Ended(input));
        }
        input.extend_from_slice(&chunk);
        // A JSON object ends with `}`: only then can the bytes so far be a complete payload,
        // which keeps a large payload from being parsed once per chunk.
        if input.trim_ascii_end().ends_with(b"}")
            && let Some(Ok(value)) = serde_json::Deserializer::from_slice(&input)
                .into_iter::<Value>()
                .next()
        {
            return Ok(Payload::Complete(value));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader that gives its bytes, then blocks for ever, as stdin does when the client keeps
    /// it open.
    struct NeverEnds(io::Cursor<Vec<u8>>);

    impl Read for NeverEnds {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            match self.0.read(buf)? {
                0 => loop {
                    thread::park();
                },
                n => Ok(n),
            }
        }
    }

    #[test]
    fn a_complete_payload_is_taken_without_waiting_for_the_end() {
        let reader = NeverEnds(io::Cursor::new(br#"{"hook_event_name": "Stop"}"#.to_vec()));
        let Ok(Payload::Complete(value)) = read_payload(reader, 1024, Duration::from_secs(60))
        else {
            panic!("no complete payload");
        };
        assert_eq!(value["hook_event_name"], "Stop");
    }

    #[test]
    fn an_incomplete_payload_gives_up_at_the_deadline() {
        let reader = NeverEnds(io::Cursor::new(br#"{"hook_event_name": "St"#.to_vec()));
        let Err(message) = read_payload(reader, 1024, Duration::from_millis(50)) else {
            panic!("an incomplete payload was taken");
        };
        assert!(message.contains("no complete JSON payload"), "{message}");
    }

    #[test]
    fn an_ended_stdin_gives_what_it_held() {
        let Ok(Payload::Ended(bytes)) = read_payload(
            io::Cursor::new(b"not json".to_vec()),
            1024,
            Duration::from_secs(60),
        ) else {
            panic!("stdin did not end");
        };
        assert_eq!(bytes, b"not json");
    }
}
