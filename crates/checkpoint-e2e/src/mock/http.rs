//! The mock's HTTP/1.1: reading a request (headers, a length or chunked body, bounded) and
//! writing a reply (a JSON body, an SSE stream, the status line and headers).

use super::*;

/// Accepts connections on `listener` on a thread named `name` until `stopping` is set, serving
/// each with `serve` on a thread of its own (it ends with its connection; the client closes
/// them).
pub(super) fn spawn_accepting<S: Send + 'static>(
    listener: TcpListener,
    name: String,
    state: &Arc<Mutex<S>>,
    stopping: &Arc<AtomicBool>,
    serve: fn(TcpStream, &Mutex<S>),
) -> JoinHandle<()> {
    let (state, stopping) = (Arc::clone(state), Arc::clone(stopping));
    let connection = format!("{name}-conn");
    thread::Builder::new()
        .name(name)
        .spawn(move || {
            for stream in listener.incoming() {
                if stopping.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(stream) = stream else { continue };
                let state = Arc::clone(&state);
                let _ = thread::Builder::new()
                    .name(connection.clone())
                    .spawn(move || serve(stream, &state));
            }
        })
        .expect("spawning a thread succeeds")
}

/// A parsed HTTP request.
pub(super) struct HttpRequest {
    pub(super) method: String,
    pub(super) target: String,
    pub(super) version: String,
    pub(super) headers: Vec<(String, String)>,
    pub(super) body: Vec<u8>,
}

impl HttpRequest {
    pub(super) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(header, _)| header.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }

    pub(super) fn wants_close(&self) -> bool {
        match self.header("connection") {
            Some(value) if value.eq_ignore_ascii_case("close") => true,
            Some(value) if value.eq_ignore_ascii_case("keep-alive") => false,
            _ => self.version == "HTTP/1.0",
        }
    }
}

/// Reads one request; `Ok(None)` means the client closed the connection between requests.
pub(super) fn read_request(
    reader: &mut BufReader<TcpStream>,
    writer: &mut TcpStream,
) -> io::Result<Option<HttpRequest>> {
    let mut line = String::new();
    // Robust servers skip empty lines before a request line (RFC 9112 §2.2).
    loop {
        line.clear();
        if reader.read_line(&mut line)? == 0 {
            return Ok(None);
        }
        if !line.trim_end().is_empty() {
            break;
        }
    }
    let mut parts = line.split_whitespace();
    let (Some(method), Some(target), Some(version)) = (parts.next(), parts.next(), parts.next())
    else {
        return Err(invalid(format!(
            "malformed request line `{}`",
            line.trim_end()
        )));
    };
    let (method, target, version) = (method.to_owned(), target.to_owned(), version.to_owned());
    let headers = read_headers(reader)?;
    let mut request = HttpRequest {
        method,
        target,
        version,
        headers,
        body: Vec::new(),
    };
    if request
        .header("expect")
        .is_some_and(|value| value.eq_ignore_ascii_case("100-continue"))
    {
        writer.write_all(b"HTTP/1.1 100 Continue\r\n\r\n")?;
    }
    let chunked = request
        .header("transfer-encoding")
        .is_some_and(|value| value.to_ascii_lowercase().contains("chunked"));
    if chunked {
        request.body = read_chunked_body(reader)?;
    } else if let Some(length) = request.header("content-length") {
        let length: usize = length
            .trim()
            .parse()
            .map_err(|_| invalid(format!("bad content-length `{length}`")))?;
        if length > MAX_BODY_BYTES {
            return Err(invalid(format!("body of {length} bytes is too large")));
        }
        let mut body = vec![0; length];
        reader.read_exact(&mut body)?;
        request.body = body;
    }
    Ok(Some(request))
}

pub(super) fn read_headers(reader: &mut BufReader<TcpStream>) -> io::Result<Vec<(String, String)>> {
    let mut headers = Vec::new();
    let mut line = String::new();
    loop {
        line.clear();
        if reader.read_line(&mut line)? == 0 {
            return Err(io::Error::from(io::ErrorKind::UnexpectedEof));
        }
        let trimmed = line.trim_end_matches(['\r', '\n']);
        if trimmed.is_empty() {
            return Ok(headers);
        }
        let Some((name, value)) = trimmed.split_once(':') else {
            return Err(invalid(format!("malformed header line `{trimmed}`")));
        };
        headers.push((name.trim().to_owned(), value.trim().to_owned()));
    }
}

pub(super) fn read_chunked_body(reader: &mut BufReader<TcpStream>) -> io::Result<Vec<u8>> {
    let mut body = Vec::new();
    let mut line = String::new();
    loop {
        line.clear();
        if reader.read_line(&mut line)? == 0 {
            return Err(io::Error::from(io::ErrorKind::UnexpectedEof));
        }
        // A chunk size line may carry extensions after `;`.
        let size_text = line.trim_end().split(';').next().unwrap_or_default().trim();
        let size = usize::from_str_radix(size_text, 16)
            .map_err(|_| invalid(format!("bad chunk size `{size_text}`")))?;
        if size == 0 {
            // The trailer section, which ends with an empty line, is read and ignored.
            let _trailers = read_headers(reader)?;
            return Ok(body);
        }
        if body.len() + size > MAX_BODY_BYTES {
            return Err(invalid("chunked body is too large".to_owned()));
        }
        let start = body.len();
        body.resize(start + size, 0);
        reader.read_exact(&mut body[start..])?;
        let mut crlf = [0; 2];
        reader.read_exact(&mut crlf)?;
        if &crlf != b"\r\n" {
            return Err(invalid("chunk is not followed by CRLF".to_owned()));
        }
    }
}

pub(super) fn invalid(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message)
}

pub(super) fn write_reply(
    writer: &mut TcpStream,
    request: &HttpRequest,
    reply: Reply,
    close: bool,
) -> io::Result<()> {
    match reply {
        Reply::Empty { status } => {
            write_head(writer, status, &[("content-length", "0".to_owned())], close)
        }
        Reply::Json {
            status,
            body,
            retry_after,
            headers: extra,
        } => {
            let bytes = body.to_string().into_bytes();
            let mut headers = vec![
                ("content-type", "application/json".to_owned()),
                ("content-length", bytes.len().to_string()),
            ];
            if let Some(seconds) = retry_after {
                headers.push(("retry-after", seconds.to_string()));
            }
            headers.extend(
                extra
                    .iter()
                    .map(|(name, value)| (name.as_str(), value.clone())),
            );
            write_head(writer, status, &headers, close)?;
            if request.method != "HEAD" {
                writer.write_all(&bytes)?;
            }
            writer.flush()
        }
        Reply::Stream {
            events,
            headers: extra,
        } => {
            let mut headers = vec![
                (
                    "content-type",
                    "text/event-stream; charset=utf-8".to_owned(),
                ),
                ("cache-control", "no-cache".to_owned()),
                ("transfer-encoding", "chunked".to_owned()),
            ];
            headers.extend(
                extra
                    .iter()
                    .map(|(name, value)| (name.as_str(), value.clone())),
            );
            write_head(writer, 200, &headers, close)?;
            // One HTTP chunk per SSE event, flushed, like the real API streams them.
            for (event, data) in events {
                let frame = format!("event: {event}\ndata: {data}\n\n");
                write!(writer, "{:x}\r\n{frame}\r\n", frame.len())?;
                writer.flush()?;
            }
            writer.write_all(b"0\r\n\r\n")?;
            writer.flush()
        }
    }
}

pub(super) fn write_head(
    writer: &mut TcpStream,
    status: u16,
    headers: &[(&str, String)],
    close: bool,
) -> io::Result<()> {
    let mut head = format!("HTTP/1.1 {status} {}\r\n", reason_phrase(status));
    head.push_str("request-id: req_mock\r\n");
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str(if close {
        "connection: close\r\n"
    } else {
        "connection: keep-alive\r\n"
    });
    head.push_str("\r\n");
    writer.write_all(head.as_bytes())
}

pub(super) fn reason_phrase(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        413 => "Payload Too Large",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        529 => "Overloaded",
        _ => "Mock Status",
    }
}
