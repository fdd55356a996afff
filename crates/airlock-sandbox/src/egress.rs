//! The egress proxy: an HTTP proxy on loopback (CONNECT for HTTPS and any TCP, absolute-form
//! requests for plain HTTP) through which a confined command reaches the network. Each
//! connection is decided on its own by a [`Gate`] (the granted hosts, checked again for every
//! connection so a revoked grant stops new ones at once) and recorded through it. The name is
//! resolved here, every address is checked (loopback, link-local, private and other special
//! ranges need a grant that says so), and the proxy connects to the checked address itself, so
//! a name that resolves differently the second time cannot slip past.

use std::io::{self, Read, Write};
use std::net::{
    IpAddr, Ipv4Addr, Ipv6Addr, Shutdown, SocketAddr, TcpListener, TcpStream, ToSocketAddrs,
};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// The largest request head the proxy reads.
const MAX_HEAD: usize = 16 * 1024;
const HEAD_TIMEOUT: Duration = Duration::from_secs(15);
const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);

/// What the gate says about a host and port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EgressVerdict {
    /// A grant covers it; `private`: loopback, link-local and private addresses are allowed
    /// too (the grant names an IP literal or says so).
    Allow {
        grant: String,
        private: bool,
    },
    Deny {
        reason: String,
    },
}

/// One connection decision, for the record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    pub host: String,
    pub port: u16,
    /// The address connected to (or the one refused).
    pub address: Option<SocketAddr>,
    pub allowed: bool,
    pub grant: Option<String>,
    pub reason: String,
}

/// Decides and records connections.
pub trait Gate: Send + Sync {
    /// Called for every connection, before the name is resolved.
    fn check(&self, host: &str, port: u16) -> EgressVerdict;
    /// Called once per connection with the final decision.
    fn record(&self, decision: &Decision);
}

/// A running proxy; stops accepting when dropped.
#[derive(Debug)]
pub struct Proxy {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
}

impl Proxy {
    /// Binds 127.0.0.1 on a free port and serves in background threads.
    pub fn start(gate: Arc<dyn Gate>) -> io::Result<Proxy> {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?;
        let addr = listener.local_addr()?;
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        std::thread::Builder::new()
            .name("airlock-egress".into())
            .spawn(move || {
                for conn in listener.incoming() {
                    if flag.load(Ordering::SeqCst) {
                        break;
                    }
                    let Ok(conn) = conn else { continue };
                    let gate = Arc::clone(&gate);
                    let _ = std::thread::Builder::new()
                        .name("airlock-egress-conn".into())
                        .spawn(move || {
                            let _ = serve(conn, gate.as_ref());
                        });
                }
            })?;
        Ok(Proxy { addr, stop })
    }

    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// `http://127.0.0.1:PORT`, for HTTP_PROXY and HTTPS_PROXY.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop so it sees the flag.
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_millis(200));
    }
}

/// The parsed request head.
#[derive(Debug, PartialEq, Eq)]
struct Request {
    connect: bool,
    host: String,
    port: u16,
    /// For plain HTTP: the head to send upstream (origin-form, no proxy headers).
    upstream_head: Vec<u8>,
}

fn serve(mut client: TcpStream, gate: &dyn Gate) -> io::Result<()> {
    client.set_read_timeout(Some(HEAD_TIMEOUT))?;
    let (head, rest) = read_head(&mut client)?;
    let req = match parse_head(&head) {
        Ok(r) => r,
        Err(why) => return reply(&mut client, 400, &why),
    };
    let mut decision = Decision {
        host: req.host.clone(),
        port: req.port,
        address: None,
        allowed: false,
        grant: None,
        reason: String::new(),
    };
    let upstream = match open(&req, gate, &mut decision) {
        Ok(s) => s,
        Err(code) => {
            gate.record(&decision);
            return reply(&mut client, code, &decision.reason);
        }
    };
    decision.allowed = true;
    gate.record(&decision);
    client.set_read_timeout(None)?;
    let mut upstream = upstream;
    if req.connect {
        client.write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")?;
    } else {
        upstream.write_all(&req.upstream_head)?;
    }
    if !rest.is_empty() {
        upstream.write_all(&rest)?;
    }
    splice(client, upstream)
}

/// Decides, resolves, checks and connects; on refusal the HTTP status to answer.
fn open(req: &Request, gate: &dyn Gate, d: &mut Decision) -> Result<TcpStream, u16> {
    let private_ok = match gate.check(&req.host, req.port) {
        EgressVerdict::Allow { grant, private } => {
            d.grant = Some(grant);
            private
        }
        EgressVerdict::Deny { reason } => {
            d.reason = reason;
            return Err(403);
        }
    };
    let addrs: Vec<SocketAddr> = match (req.host.as_str(), req.port).to_socket_addrs() {
        Ok(a) => a.collect(),
        Err(e) => {
            d.reason = format!("{} does not resolve: {e}", req.host);
            return Err(502);
        }
    };
    if addrs.is_empty() {
        d.reason = format!("{} has no address", req.host);
        return Err(502);
    }
    if !private_ok && let Some(bad) = addrs.iter().find(|a| special(a.ip())) {
        {
            d.address = Some(*bad);
            d.reason = format!(
                "{} resolves to {}, a loopback, link-local, private or reserved address: grant that address itself (or a grant with private addresses) to reach it",
                req.host,
                bad.ip()
            );
            return Err(403);
        }
    }
    let mut last = String::new();
    for a in &addrs {
        match TcpStream::connect_timeout(a, CONNECT_TIMEOUT) {
            Ok(s) => {
                d.address = Some(*a);
                d.reason = "granted".into();
                return Ok(s);
            }
            Err(e) => last = format!("connecting to {a}: {e}"),
        }
    }
    d.reason = last;
    Err(502)
}

/// Addresses a granted *name* must not lead to without saying so: loopback, link-local (the
/// cloud metadata service at 169.254.169.254), private, shared (CGNAT), unspecified,
/// multicast, broadcast, documentation and benchmarking ranges, and their IPv6 forms
/// (IPv4-mapped addresses are checked as IPv4).
pub fn special(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => special_v4(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => special_v4(v4),
            None => special_v6(v6),
        },
    }
}

fn special_v4(ip: Ipv4Addr) -> bool {
    let o = ip.octets();
    ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_unspecified()
        || ip.is_broadcast()
        || ip.is_multicast()
        || ip.is_documentation()
        || o[0] == 0
        || (o[0] == 100 && (o[1] & 0xc0) == 64)
        || (o[0] == 198 && (o[1] & 0xfe) == 18)
        || o[0] >= 240
}

fn special_v6(ip: Ipv6Addr) -> bool {
    let s = ip.segments();
    ip.is_loopback()
        || ip.is_unspecified()
        || ip.is_multicast()
        || (s[0] & 0xfe00) == 0xfc00
        || (s[0] & 0xffc0) == 0xfe80
        || (s[0] == 0x2001 && s[1] == 0x0db8)
        || (s[0] == 0x0064 && s[1] == 0xff9b)
}

/// Reads up to the blank line; returns the head and whatever arrived after it.
fn read_head(s: &mut TcpStream) -> io::Result<(Vec<u8>, Vec<u8>)> {
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 2048];
    loop {
        if let Some(end) = find(&buf, b"\r\n\r\n") {
            let rest = buf.split_off(end + 4);
            return Ok((buf, rest));
        }
        if buf.len() > MAX_HEAD {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "request head too long",
            ));
        }
        let n = s.read(&mut chunk)?;
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "closed before the head ended",
            ));
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

fn find(h: &[u8], n: &[u8]) -> Option<usize> {
    h.windows(n.len()).position(|w| w == n)
}

fn parse_head(head: &[u8]) -> Result<Request, String> {
    let text =
        std::str::from_utf8(head).map_err(|_| "the request head is not UTF-8".to_string())?;
    let mut lines = text.split("\r\n");
    let first = lines.next().unwrap_or_default();
    let mut parts = first.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(format!("malformed request line {first:?}"));
    };
    if !version.starts_with("HTTP/1.") {
        return Err(format!("unsupported protocol {version:?}"));
    }
    if method == "CONNECT" {
        let (host, port) = split_host_port(target, None)?;
        return Ok(Request {
            connect: true,
            host,
            port,
            upstream_head: Vec::new(),
        });
    }
    let rest = target.strip_prefix("http://").ok_or_else(|| {
        format!("{target:?} is not an absolute http:// URL (use CONNECT for https)")
    })?;
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    if authority.contains('@') {
        return Err("credentials in a proxied URL are refused".into());
    }
    let (host, port) = split_host_port(authority, Some(80))?;
    let mut up = format!("{method} {path} {version}\r\n");
    for l in lines.filter(|l| !l.is_empty()) {
        let name = l
            .split(':')
            .next()
            .unwrap_or_default()
            .trim()
            .to_ascii_lowercase();
        if name.starts_with("proxy-") || name == "connection" || name == "keep-alive" {
            continue;
        }
        up.push_str(l);
        up.push_str("\r\n");
    }
    // One request per upstream connection keeps the decision per connection exact.
    up.push_str("Connection: close\r\n\r\n");
    Ok(Request {
        connect: false,
        host,
        port,
        upstream_head: up.into_bytes(),
    })
}

/// `host:port`, `[v6]:port`, or a bare host when a default port is given.
fn split_host_port(s: &str, default: Option<u16>) -> Result<(String, u16), String> {
    let bad = || format!("{s:?} is not HOST:PORT");
    let (host, port) = if let Some(r) = s.strip_prefix('[') {
        let (h, after) = r.split_once(']').ok_or_else(bad)?;
        match after.strip_prefix(':') {
            Some(p) => (h, Some(p)),
            None if after.is_empty() => (h, None),
            None => return Err(bad()),
        }
    } else {
        match s.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (s, None),
        }
    };
    let port = match port {
        Some(p) => p.parse::<u16>().map_err(|_| bad())?,
        None => default.ok_or_else(bad)?,
    };
    if host.is_empty() || port == 0 || host.chars().any(|c| c.is_whitespace() || c == '/') {
        return Err(bad());
    }
    Ok((host.to_ascii_lowercase(), port))
}

fn reply(s: &mut TcpStream, code: u16, why: &str) -> io::Result<()> {
    let text = match code {
        400 => "Bad Request",
        403 => "Forbidden",
        _ => "Bad Gateway",
    };
    let body = format!("airlock egress: {why}\n");
    write!(
        s,
        "HTTP/1.1 {code} {text}\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
}

/// Copies both ways until both sides are done.
fn splice(client: TcpStream, upstream: TcpStream) -> io::Result<()> {
    let (mut c_read, mut u_write) = (client.try_clone()?, upstream.try_clone()?);
    let up = std::thread::spawn(move || {
        let _ = io::copy(&mut c_read, &mut u_write);
        let _ = u_write.shutdown(Shutdown::Write);
    });
    let (mut u_read, mut c_write) = (upstream, client);
    let _ = io::copy(&mut u_read, &mut c_write);
    let _ = c_write.shutdown(Shutdown::Write);
    let _ = up.join();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn special_ranges() {
        for a in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "0.0.0.0",
            "100.64.0.1",
            "255.255.255.255",
            "224.0.0.1",
            "::1",
            "fe80::1",
            "fd00::1",
            "::ffff:127.0.0.1",
            "::ffff:169.254.169.254",
            "::",
        ] {
            assert!(special(a.parse().unwrap()), "{a}");
        }
        for a in [
            "140.82.112.3",
            "1.1.1.1",
            "2606:4700::1111",
            "::ffff:8.8.8.8",
        ] {
            assert!(!special(a.parse().unwrap()), "{a}");
        }
    }

    #[test]
    fn heads() {
        let r = parse_head(b"CONNECT api.github.com:443 HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
        assert!(r.connect);
        assert_eq!((r.host.as_str(), r.port), ("api.github.com", 443));
        let r = parse_head(b"CONNECT [::1]:8080 HTTP/1.1\r\n\r\n").unwrap();
        assert_eq!((r.host.as_str(), r.port), ("::1", 8080));
        let r = parse_head(
            b"GET http://Example.com/a?b HTTP/1.1\r\nHost: example.com\r\nProxy-Authorization: x\r\nConnection: keep-alive\r\n\r\n",
        )
        .unwrap();
        assert!(!r.connect);
        assert_eq!((r.host.as_str(), r.port), ("example.com", 80));
        let up = String::from_utf8(r.upstream_head).unwrap();
        assert!(
            up.starts_with("GET /a?b HTTP/1.1\r\nHost: example.com\r\n"),
            "{up}"
        );
        assert!(!up.contains("Proxy-Authorization"));
        assert!(up.ends_with("Connection: close\r\n\r\n"));
        for bad in [
            &b"GET /relative HTTP/1.1\r\n\r\n"[..],
            b"CONNECT host HTTP/1.1\r\n\r\n",
            b"CONNECT host:0 HTTP/1.1\r\n\r\n",
            b"CONNECT host:99999 HTTP/1.1\r\n\r\n",
            b"GET http://u:p@host/ HTTP/1.1\r\n\r\n",
            b"GET https://host/ HTTP/1.1\r\n\r\n",
            b"garbage\r\n\r\n",
            b"GET http://h/ SPDY/3\r\n\r\n",
        ] {
            assert!(
                parse_head(bad).is_err(),
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
    }
}
