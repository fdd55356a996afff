//! Server-sent events, as far as the proxy needs them: bytes from the upstream are cut into
//! whole events (a blank line ends one, `\n` or `\r\n` line ends), and an event's `data:` lines
//! are joined. An event is kept as its raw bytes so one the proxy does not change is relayed
//! exactly as it came.

/// One event: its raw bytes (terminator included) and its data, if it has `data:` lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    pub raw: Vec<u8>,
    pub data: Option<String>,
}

/// Cuts a byte stream into events.
#[derive(Debug, Default)]
pub struct Splitter {
    buf: Vec<u8>,
}

/// The longest event accepted (a larger one is an upstream fault).
pub const MAX_EVENT: usize = 8 * 1024 * 1024;

impl Splitter {
    /// Adds bytes; returns the events completed by them.
    pub fn push(&mut self, bytes: &[u8]) -> Result<Vec<Event>, String> {
        self.buf.extend_from_slice(bytes);
        let mut out = Vec::new();
        while let Some(end) = boundary(&self.buf) {
            let raw: Vec<u8> = self.buf.drain(..end).collect();
            out.push(parse(raw));
        }
        if self.buf.len() > MAX_EVENT {
            return Err(format!("an event is larger than {MAX_EVENT} bytes"));
        }
        Ok(out)
    }

    /// What is left when the stream ends (an unterminated last event).
    pub fn finish(&mut self) -> Option<Event> {
        if self.buf.iter().all(|b| b.is_ascii_whitespace()) {
            return None;
        }
        let mut raw = std::mem::take(&mut self.buf);
        raw.extend_from_slice(b"\n\n");
        Some(parse(raw))
    }
}

/// The end (exclusive) of the first complete event: after the first empty line.
fn boundary(b: &[u8]) -> Option<usize> {
    let mut i = 0;
    let mut line_start = 0;
    while i < b.len() {
        let nl = match b[i] {
            b'\n' => Some(i + 1),
            b'\r' if b.get(i + 1) == Some(&b'\n') => Some(i + 2),
            // A lone CR ends a line too, but only once we know no LF follows.
            b'\r' if i + 1 < b.len() => Some(i + 1),
            _ => None,
        };
        if let Some(next) = nl {
            if i == line_start {
                return Some(next);
            }
            line_start = next;
            i = next;
        } else {
            i += 1;
        }
    }
    None
}

fn parse(raw: Vec<u8>) -> Event {
    let text = String::from_utf8_lossy(&raw);
    let mut data: Option<String> = None;
    for line in text.split(['\n', '\r']) {
        let value = if let Some(v) = line.strip_prefix("data:") {
            v.strip_prefix(' ').unwrap_or(v)
        } else if line == "data" {
            ""
        } else {
            continue;
        };
        match &mut data {
            Some(d) => {
                d.push('\n');
                d.push_str(value);
            }
            None => data = Some(value.to_string()),
        }
    }
    Event { raw, data }
}

/// An event carrying `json` as its data.
pub fn data_event(json: &str) -> Vec<u8> {
    format!("data: {json}\n\n").into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_across_chunks_and_line_ends() {
        let mut s = Splitter::default();
        assert!(s.push(b"data: {\"a\"").unwrap().is_empty());
        let ev = s
            .push(b":1}\n\n: ping\n\ndata: x\r\ndata: y\r\n\r\nda")
            .unwrap();
        assert_eq!(ev.len(), 3);
        assert_eq!(ev[0].data.as_deref(), Some("{\"a\":1}"));
        assert_eq!(ev[0].raw, b"data: {\"a\":1}\n\n");
        assert_eq!(ev[1].data, None);
        assert_eq!(ev[2].data.as_deref(), Some("x\ny"));
        let ev = s.push(b"ta: [DONE]\n\n").unwrap();
        assert_eq!(ev[0].data.as_deref(), Some("[DONE]"));
        assert!(s.finish().is_none());
        s.push(b"data: tail").unwrap();
        assert_eq!(s.finish().unwrap().data.as_deref(), Some("tail"));
    }
}
