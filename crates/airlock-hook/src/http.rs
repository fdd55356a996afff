//! A small blocking HTTP/1.1 client for the daemon on this machine: plain `http://` to a
//! loopback address, one request per connection, over `std::net::TcpStream`. It is what lets the
//! lean `airlock-hook` binary hand an `ask` to `airlock serve` without an async runtime or an
//! HTTP stack. Anything else (TLS, another host) is not this client's: `for_url` declines it and
//! the caller takes another way (the full `airlock hook`).
//!
//! With the daemon's key (`proof`), every connection first proves who answers: `GET /healthz`
//! with a fresh nonce and no token, whose answer must carry the key's proof; only then, on the
//! same connection, is the real request sent with the token, and its answer must carry a proof
//! for its own nonce. A peer that cannot prove the key gets no token and is not believed.
//!
//! Every failure is an error, never a guess: a connection that does not open, an answer that
//! does not arrive before the deadline, a malformed status line or header, a body shorter than
//! its `Content-Length` or a bad chunk, and an answer larger than `MAX_BODY`.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};
use serde_json::Value;

use crate::proof::{self, DaemonKey};

/// Longest wait for a connection to open (the daemon is on this machine).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);
/// Largest answer body accepted.
pub const MAX_BODY: usize = 8 << 20;
/// Longest status or header line, and most header lines, accepted.
const MAX_LINE: usize = 16 << 10;
const MAX_HEADERS: usize = 128;

/// A daemon reached over loopback HTTP.
#[derive(Debug, Clone)]
pub struct Loopback {
    addrs: Vec<SocketAddr>,
    /// The `Host` header: the URL's authority as written.
    host: String,
    /// A path prefix from the URL (`""` or `/prefix`, no trailing slash).
    base: String,
    token: Option<String>,
    /// The daemon's key: when set, every answer must prove it, and the token goes only to a
    /// peer that has.
    key: Option<DaemonKey>,
}

/// One answer: its status, proof header (if any) and de-chunked body.
#[derive(Debug)]
struct Response {
    status: u16,
    proof: Option<String>,
    body: Vec<u8>,
}

/// A JSON API the hook can call: the loopback client here, or another one the `airlock` binary
/// supplies for daemons this client does not reach.
pub trait Transport {
    /// Sends `body` (if any) as JSON and returns the JSON answer of a 2xx response; any other
    /// status is an error carrying the daemon's error code and message.
    fn call(
        &self,
        method: &str,
        path: &str,
        body: Option<&Value>,
        timeout: Duration,
    ) -> Result<Value>;
}

impl Loopback {
    /// The client for `url`, or `None` when it is not `http://` to a loopback address
    /// (127.0.0.0/8, `::1`, `localhost`). Host names other than `localhost` are declined rather
    /// than resolved: a name can point anywhere.
    pub fn for_url(url: &str, token: Option<String>) -> Option<Loopback> {
        let scheme = url.get(..7)?;
        if !scheme.eq_ignore_ascii_case("http://") {
            return None;
        }
        let rest = &url[7..];
        let (authority, base) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, ""),
        };
        if authority.is_empty() || authority.contains('@') || base.contains(['?', '#']) {
            return None;
        }
        let (host, port) = split_authority(authority)?;
        let ips: Vec<IpAddr> = if host.eq_ignore_ascii_case("localhost") {
            vec![
                IpAddr::V4(Ipv4Addr::LOCALHOST),
                IpAddr::V6(Ipv6Addr::LOCALHOST),
            ]
        } else {
            let ip: IpAddr = host.parse().ok()?;
            if !ip.is_loopback() {
                return None;
            }
            vec![ip]
        };
        Some(Loopback {
            addrs: ips
                .into_iter()
                .map(|ip| SocketAddr::new(ip, port))
                .collect(),
            host: authority.to_string(),
            base: base.trim_end_matches('/').to_string(),
            token,
            key: None,
        })
    }

    /// Requires every answer to prove `key` (and sends the token only after one has).
    pub fn with_key(mut self, key: Option<DaemonKey>) -> Loopback {
        self.key = key;
        self
    }

    /// One request; returns the status and the (de-chunked) body.
    pub fn exchange(
        &self,
        method: &str,
        path: &str,
        body: Option<&[u8]>,
        timeout: Duration,
    ) -> Result<(u16, Vec<u8>)> {
        let deadline = Instant::now() + timeout;
        let head = self.head(method, path, body.map(<[u8]>::len), None, true)?;
        let stream = self.connect(deadline)?;
        stream.set_nodelay(true).ok();
        let mut r = BufReader::new(Deadlined {
            stream: &stream,
            deadline,
        });
        let Some(key) = &self.key else {
            send(&stream, deadline, &head, body)?;
            let resp = read_response(&mut r)?;
            return Ok((resp.status, resp.body));
        };
        // Who answers? A fresh nonce, no token, and the connection kept open for the request.
        let hello = proof::fresh_nonce().map_err(|e| anyhow!("drawing a nonce: {e}"))?;
        let head0 = self.head("GET", proof::HELLO_PATH, None, Some(&hello), false)?;
        send(&stream, deadline, &head0, None)?;
        let resp = read_response(&mut r)?;
        self.check(key, &hello, &resp)?;
        // The daemon it is: now the request, with the token, on this same connection.
        let nonce = proof::fresh_nonce().map_err(|e| anyhow!("drawing a nonce: {e}"))?;
        let head = self.head(method, path, body.map(<[u8]>::len), Some(&nonce), true)?;
        send(&stream, deadline, &head, body)?;
        let resp = read_response(&mut r)?;
        self.check(key, &nonce, &resp)?;
        Ok((resp.status, resp.body))
    }

    /// An answer without the key's proof for `nonce` is no answer from the daemon.
    fn check(&self, key: &DaemonKey, nonce: &str, resp: &Response) -> Result<()> {
        let proof = resp.proof.as_deref().unwrap_or_default();
        if key.check(nonce, resp.status, &resp.body, proof) {
            return Ok(());
        }
        bail!(
            "whatever answers at http://{} is not the airlock daemon of this data directory: its answer {} (a serve.json left by a daemon that stopped, or another program on the port)",
            self.host,
            if proof.is_empty() {
                "carries no proof of daemon.key"
            } else {
                "carries a proof that does not verify with daemon.key"
            }
        )
    }

    /// The request head. `nonce` asks for a proof (and keeps the connection open when the token
    /// is withheld: that is the first half of the handshake).
    fn head(
        &self,
        method: &str,
        path: &str,
        length: Option<usize>,
        nonce: Option<&str>,
        with_token: bool,
    ) -> Result<String> {
        if !path.starts_with('/') || !path.bytes().all(|b| b.is_ascii_graphic()) {
            bail!("not a request path: {path:?}");
        }
        let connection = if with_token { "close" } else { "keep-alive" };
        let mut head = format!(
            "{method} {}{path} HTTP/1.1\r\nHost: {}\r\nAccept: application/json\r\nConnection: {connection}\r\n",
            self.base, self.host
        );
        if let Some(n) = nonce {
            head.push_str(&format!("X-Airlock-Nonce: {n}\r\n"));
        }
        if let Some(t) = self.token.as_ref().filter(|_| with_token) {
            if t.is_empty() || !t.bytes().all(|b| b.is_ascii_graphic()) {
                bail!("the daemon token holds characters a header cannot carry");
            }
            head.push_str(&format!("Authorization: Bearer {t}\r\n"));
        }
        if let Some(n) = length {
            head.push_str(&format!(
                "Content-Type: application/json\r\nContent-Length: {n}\r\n"
            ));
        }
        head.push_str("\r\n");
        Ok(head)
    }

    fn connect(&self, deadline: Instant) -> Result<TcpStream> {
        let mut last = None;
        for addr in &self.addrs {
            let wait = left(deadline)?.min(CONNECT_TIMEOUT);
            match TcpStream::connect_timeout(addr, wait) {
                Ok(s) => return Ok(s),
                Err(e) => last = Some(e),
            }
        }
        Err(match last {
            Some(e) => anyhow!(e),
            None => anyhow!("no address"),
        })
        .with_context(|| format!("cannot reach the airlock daemon at http://{}", self.host))
    }
}

impl Transport for Loopback {
    fn call(
        &self,
        method: &str,
        path: &str,
        body: Option<&Value>,
        timeout: Duration,
    ) -> Result<Value> {
        let bytes = body.map(serde_json::to_vec).transpose()?;
        let (status, answer) = self.exchange(method, path, bytes.as_deref(), timeout)?;
        let value: Value = serde_json::from_slice(&answer).map_err(|_| {
            anyhow!(
                "the daemon at http://{} answered HTTP {status} with something that is not JSON",
                self.host
            )
        })?;
        if (200..300).contains(&status) {
            return Ok(value);
        }
        let err = &value["error"];
        bail!(
            "{} ({status}): {}",
            err["code"].as_str().unwrap_or("HTTP_ERROR"),
            err["message"].as_str().unwrap_or("")
        )
    }
}

/// Writes one request (head and body) before the deadline.
fn send(stream: &TcpStream, deadline: Instant, head: &str, body: Option<&[u8]>) -> Result<()> {
    let mut w = stream;
    w.set_write_timeout(Some(left(deadline)?))?;
    w.write_all(head.as_bytes())
        .and_then(|()| w.write_all(body.unwrap_or_default()))
        .and_then(|()| w.flush())
        .context("sending the request to the daemon")
}

/// `host:port`, `[v6]:port`, or either without a port (80).
fn split_authority(authority: &str) -> Option<(&str, u16)> {
    let (host, port) = if let Some(rest) = authority.strip_prefix('[') {
        let (host, after) = rest.split_once(']')?;
        match after {
            "" => (host, None),
            _ => (host, Some(after.strip_prefix(':')?)),
        }
    } else {
        match authority.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (authority, None),
        }
    };
    let port = match port {
        None => 80,
        Some(p) if !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) => p.parse().ok()?,
        Some(_) => return None,
    };
    (!host.is_empty()).then_some((host, port))
}

/// Time left before `deadline`, or a timeout error.
fn left(deadline: Instant) -> Result<Duration> {
    let d = deadline.saturating_duration_since(Instant::now());
    if d.is_zero() {
        bail!("the airlock daemon did not answer in time");
    }
    Ok(d)
}

/// A stream whose every read waits at most until the deadline.
struct Deadlined<'a> {
    stream: &'a TcpStream,
    deadline: Instant,
}

impl Read for Deadlined<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let wait = left(self.deadline)
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::TimedOut, e.to_string()))?;
        self.stream.set_read_timeout(Some(wait))?;
        let mut s = self.stream;
        s.read(buf)
    }
}

/// Reads one response (after any `1xx` interim ones): status, proof and body.
fn read_response(r: &mut impl BufRead) -> Result<Response> {
    loop {
        let line = read_line(r).context("reading the daemon's answer")?;
        let status = parse_status(&line)?;
        let headers = read_headers(r)?;
        if (100..200).contains(&status) && status != 101 {
            continue;
        }
        let body = if status == 204 || status == 304 {
            Vec::new()
        } else {
            read_body(r, &headers)?
        };
        return Ok(Response {
            status,
            proof: headers.proof,
            body,
        });
    }
}

/// `HTTP/1.x NNN reason`.
fn parse_status(line: &str) -> Result<u16> {
    let mut parts = line.splitn(3, ' ');
    let version = parts.next().unwrap_or_default();
    let code = parts.next().unwrap_or_default();
    if !version.starts_with("HTTP/1.") || code.len() != 3 {
        bail!("the daemon's answer is not HTTP/1.x: {:?}", clip(line));
    }
    code.parse()
        .map_err(|_| anyhow!("bad HTTP status in {:?}", clip(line)))
}

/// Framing headers of a response.
#[derive(Debug, Default)]
struct Framing {
    length: Option<usize>,
    chunked: bool,
    /// `X-Airlock-Proof`.
    proof: Option<String>,
}

fn read_headers(r: &mut impl BufRead) -> Result<Framing> {
    let mut f = Framing::default();
    for _ in 0..MAX_HEADERS {
        let line = read_line(r).context("reading the daemon's headers")?;
        if line.is_empty() {
            return Ok(f);
        }
        let Some((name, value)) = line.split_once(':') else {
            bail!("bad header line from the daemon: {:?}", clip(&line));
        };
        let value = value.trim();
        if name.eq_ignore_ascii_case("content-length") {
            let n: usize = value
                .parse()
                .map_err(|_| anyhow!("bad Content-Length from the daemon: {value:?}"))?;
            if f.length.is_some_and(|m| m != n) {
                bail!("the daemon sent two different Content-Length headers");
            }
            f.length = Some(n);
        } else if name.eq_ignore_ascii_case(proof::PROOF_HEADER) {
            if f.proof.is_some() {
                bail!("the daemon sent two proofs");
            }
            f.proof = Some(value.to_string());
        } else if name.eq_ignore_ascii_case("transfer-encoding") {
            let last = value.rsplit(',').next().unwrap_or_default().trim();
            if !last.eq_ignore_ascii_case("chunked") || value.contains(',') {
                bail!("unsupported Transfer-Encoding from the daemon: {value:?}");
            }
            f.chunked = true;
        }
    }
    bail!("the daemon sent more than {MAX_HEADERS} header lines")
}

fn read_body(r: &mut impl BufRead, f: &Framing) -> Result<Vec<u8>> {
    if f.chunked {
        return read_chunked(r);
    }
    let mut body = Vec::new();
    match f.length {
        Some(n) if n > MAX_BODY => bail!("the daemon's answer is larger than {MAX_BODY} bytes"),
        Some(n) => {
            body.resize(n, 0);
            r.read_exact(&mut body)
                .context("the daemon's answer ended before its Content-Length")?;
        }
        None => {
            // No framing: the body runs to the end of the connection.
            r.take(MAX_BODY as u64 + 1)
                .read_to_end(&mut body)
                .context("reading the daemon's answer")?;
            if body.len() > MAX_BODY {
                bail!("the daemon's answer is larger than {MAX_BODY} bytes");
            }
        }
    }
    Ok(body)
}

fn read_chunked(r: &mut impl BufRead) -> Result<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let line = read_line(r).context("reading a chunk of the daemon's answer")?;
        let size = line.split(';').next().unwrap_or_default().trim();
        let n = usize::from_str_radix(size, 16)
            .map_err(|_| anyhow!("bad chunk size from the daemon: {:?}", clip(&line)))?;
        if n == 0 {
            // Trailers, up to the empty line.
            for _ in 0..MAX_HEADERS {
                if read_line(r)?.is_empty() {
                    return Ok(body);
                }
            }
            bail!("the daemon sent too many trailer lines");
        }
        if n > MAX_BODY - body.len() {
            bail!("the daemon's answer is larger than {MAX_BODY} bytes");
        }
        let start = body.len();
        body.resize(start + n, 0);
        r.read_exact(&mut body[start..])
            .context("a chunk of the daemon's answer ended early")?;
        if !read_line(r)?.is_empty() {
            bail!("a chunk of the daemon's answer does not end where its size says");
        }
    }
}

/// One CRLF- (or LF-) terminated line without its ending; an error at end of stream.
fn read_line(r: &mut impl BufRead) -> Result<String> {
    let mut buf = Vec::new();
    let n = r.take(MAX_LINE as u64 + 1).read_until(b'\n', &mut buf)?;
    if n == 0 {
        bail!("the daemon closed the connection early");
    }
    if buf.last() != Some(&b'\n') {
        if buf.len() > MAX_LINE {
            bail!("a line of the daemon's answer is longer than {MAX_LINE} bytes");
        }
        bail!("the daemon closed the connection in the middle of a line");
    }
    buf.pop();
    if buf.last() == Some(&b'\r') {
        buf.pop();
    }
    String::from_utf8(buf).map_err(|_| anyhow!("the daemon's answer has a line that is not UTF-8"))
}

fn clip(s: &str) -> String {
    s.chars().take(80).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;
    use std::thread;

    #[test]
    fn only_plain_http_to_loopback_is_taken() {
        for url in [
            "http://127.0.0.1:7373",
            "http://127.0.0.2:1/prefix",
            "HTTP://localhost:80",
            "http://[::1]:9",
            "http://localhost",
        ] {
            assert!(Loopback::for_url(url, None).is_some(), "{url}");
        }
        for url in [
            "https://127.0.0.1:7373",
            "http://10.0.0.1:7373",
            "http://example.com:7373",
            "http://127.0.0.1.example.com",
            "http://user@127.0.0.1:1",
            "http://127.0.0.1:port",
            "http://127.0.0.1:99999",
            "http://[::1",
            "http://[::ffff:127.0.0.1]:1",
            "http://",
            "ftp://127.0.0.1",
        ] {
            assert!(Loopback::for_url(url, None).is_none(), "{url}");
        }
        let c = Loopback::for_url("http://127.0.0.1:7/api/", None).unwrap();
        assert_eq!(c.base, "/api");
        assert_eq!(c.addrs, vec!["127.0.0.1:7".parse::<SocketAddr>().unwrap()]);
    }

    /// A one-connection server that reads the request head and writes `answer`; returns the
    /// URL and a handle yielding the request it saw.
    fn serve_once(answer: &'static [u8]) -> (String, thread::JoinHandle<String>) {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", l.local_addr().unwrap());
        let h = thread::spawn(move || {
            let (mut s, _) = l.accept().unwrap();
            let mut r = BufReader::new(s.try_clone().unwrap());
            let mut head = String::new();
            let mut length = 0;
            loop {
                let mut line = String::new();
                r.read_line(&mut line).unwrap();
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap();
                }
                head.push_str(&line);
                if line == "\r\n" {
                    break;
                }
            }
            let mut body = vec![0; length];
            r.read_exact(&mut body).unwrap();
            head.push_str(&String::from_utf8(body).unwrap());
            s.write_all(answer).unwrap();
            head
        });
        (url, h)
    }

    fn call(answer: &'static [u8]) -> (Result<Value>, String) {
        let (url, h) = serve_once(answer);
        let c = Loopback::for_url(&url, Some("alk_t".into())).unwrap();
        let out = c.call(
            "POST",
            "/v1/actions",
            Some(&serde_json::json!({"a": 1})),
            Duration::from_secs(5),
        );
        (out, h.join().unwrap())
    }

    #[test]
    fn sends_a_complete_request() {
        let (out, seen) = call(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}");
        assert_eq!(out.unwrap(), serde_json::json!({}));
        assert!(seen.starts_with("POST /v1/actions HTTP/1.1\r\n"), "{seen}");
        assert!(
            seen.contains("\r\nAuthorization: Bearer alk_t\r\n"),
            "{seen}"
        );
        assert!(seen.contains("\r\nContent-Length: 7\r\n"), "{seen}");
        assert!(seen.ends_with("\r\n\r\n{\"a\":1}"), "{seen}");
    }

    #[test]
    fn reads_each_framing() {
        let chunked: &[u8] = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\
            5;ext=1\r\n{\"s\":\r\n9\r\n\"pending\"\r\n1\r\n}\r\n0\r\nX-Trailer: 1\r\n\r\n";
        assert_eq!(call(chunked).0.unwrap()["s"], "pending");
        let closed: &[u8] = b"HTTP/1.0 200 OK\r\n\r\n{\"s\":\"allowed\"}";
        assert_eq!(call(closed).0.unwrap()["s"], "allowed");
        let interim: &[u8] =
            b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\nContent-Length: 8\n\n{\"s\":1}\n";
        assert_eq!(call(interim).0.unwrap()["s"], 1);
    }

    #[test]
    fn errors_are_errors() {
        let api: &[u8] = b"HTTP/1.1 403 Forbidden\r\nContent-Length: 47\r\n\r\n\
            {\"error\":{\"code\":\"FORBIDDEN\",\"message\":\"no\"}}  ";
        let e = call(api).0.unwrap_err().to_string();
        assert_eq!(e, "FORBIDDEN (403): no");
        for bad in [
            &b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n{}"[..],
            b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nno",
            b"SSH-2.0-OpenSSH\r\n\r\n",
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n",
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\n{}\r\n0\r\n\r\n",
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n",
            b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}",
            b"HTTP/1.1 200 OK\r\nContent-Length: 999999999999\r\n\r\n{}",
            b"",
        ] {
            assert!(call(bad).0.is_err(), "{}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn a_silent_daemon_times_out() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", l.local_addr().unwrap());
        let c = Loopback::for_url(&url, None).unwrap();
        let started = Instant::now();
        let out = c.call("GET", "/v1/x", None, Duration::from_millis(300));
        assert!(out.is_err());
        assert!(started.elapsed() < Duration::from_secs(3));
        drop(l);
        // Nobody listening: refused at once.
        assert!(
            c.call("GET", "/v1/x", None, Duration::from_secs(2))
                .is_err()
        );
    }

    #[test]
    fn refuses_what_a_request_line_or_header_cannot_carry() {
        let c = Loopback::for_url("http://127.0.0.1:1", Some("a\r\nX: y".into())).unwrap();
        assert!(c.head("GET", "/x", None, None, true).is_err());
        let c = Loopback::for_url("http://127.0.0.1:1", None).unwrap();
        assert!(c.head("GET", "/x y", None, None, true).is_err());
        assert!(c.head("GET", "x", None, None, true).is_err());
    }

    /// A server for one connection that answers every request on it with `body`, proving
    /// `key` when it has one; returns the URL and a handle yielding the requests it saw.
    fn serve_conn(
        key: Option<DaemonKey>,
        body: &'static str,
    ) -> (String, thread::JoinHandle<Vec<String>>) {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", l.local_addr().unwrap());
        let h = thread::spawn(move || {
            let (mut s, _) = l.accept().unwrap();
            let mut r = BufReader::new(s.try_clone().unwrap());
            let mut seen = Vec::new();
            loop {
                let mut head = String::new();
                let (mut length, mut nonce) = (0, None);
                loop {
                    let mut line = String::new();
                    if r.read_line(&mut line).unwrap_or(0) == 0 {
                        return seen;
                    }
                    let lower = line.to_ascii_lowercase();
                    if let Some(v) = lower.strip_prefix("content-length:") {
                        length = v.trim().parse().unwrap();
                    }
                    if let Some(v) = lower.strip_prefix("x-airlock-nonce:") {
                        nonce = Some(v.trim().to_string());
                    }
                    head.push_str(&line);
                    if line == "\r\n" {
                        break;
                    }
                }
                let mut b = vec![0; length];
                r.read_exact(&mut b).unwrap();
                seen.push(head);
                let proof = match (&key, nonce) {
                    (Some(k), Some(n)) => {
                        format!("X-Airlock-Proof: {}\r\n", k.prove(&n, 200, body.as_bytes()))
                    }
                    _ => String::new(),
                };
                let answer = format!(
                    "HTTP/1.1 200 OK\r\n{proof}Content-Length: {}\r\n\r\n{body}",
                    body.len()
                );
                if s.write_all(answer.as_bytes()).is_err() {
                    return seen;
                }
            }
        });
        (url, h)
    }

    const ALLOWED: &str = "{\"status\":\"allowed\"}";

    #[test]
    fn the_token_goes_only_to_a_peer_that_proved_the_key() {
        let key = DaemonKey::generate().unwrap();
        let (url, h) = serve_conn(Some(key.clone()), ALLOWED);
        let c = Loopback::for_url(&url, Some("alk_t".into()))
            .unwrap()
            .with_key(Some(key.clone()));
        let out = c.call(
            "POST",
            "/v1/actions",
            Some(&serde_json::json!({})),
            Duration::from_secs(5),
        );
        assert_eq!(out.unwrap()["status"], "allowed");
        let seen = h.join().unwrap();
        assert_eq!(seen.len(), 2, "{seen:?}");
        assert!(seen[0].starts_with("GET /healthz HTTP/1.1\r\n"), "{seen:?}");
        assert!(!seen[0].contains("Authorization"), "{seen:?}");
        assert!(seen[1].starts_with("POST /v1/actions"), "{seen:?}");
        assert!(seen[1].contains("Authorization: Bearer alk_t"), "{seen:?}");

        // A stranger on the port (no proof, or a proof with another key): no token, no answer.
        for stranger in [None, Some(DaemonKey::generate().unwrap())] {
            let (url, h) = serve_conn(stranger, ALLOWED);
            let c = Loopback::for_url(&url, Some("alk_t".into()))
                .unwrap()
                .with_key(Some(key.clone()));
            let e = c
                .call(
                    "POST",
                    "/v1/actions",
                    Some(&serde_json::json!({})),
                    Duration::from_secs(5),
                )
                .unwrap_err();
            assert!(e.to_string().contains("is not the airlock daemon"), "{e}");
            let seen = h.join().unwrap();
            assert_eq!(seen.len(), 1, "{seen:?}");
            assert!(seen.iter().all(|r| !r.contains("alk_t")), "{seen:?}");
        }
    }
}
