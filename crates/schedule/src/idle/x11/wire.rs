//! Just enough of the X11 wire protocol to know Xlib would connect: open the display's socket,
//! do the connection handshake with the cookie Xlib would pick, and ask for MIT-SCREEN-SAVER.

use std::io::{Read, Write};
use std::net::{IpAddr, TcpStream, ToSocketAddrs};
use std::os::unix::net::UnixStream;
use std::time::Duration;

/// A parsed `$DISPLAY`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Display {
    /// `None` for the local Unix socket.
    pub host: Option<String>,
    pub number: u16,
}

/// `[unix/|tcp/][host]:number[.screen]`; an empty host or `unix` means the local socket.
pub(crate) fn parse(display: &str) -> Result<Display, String> {
    let bad = || format!("cannot parse display {display:?}");
    let (proto, rest) = match display.split_once('/') {
        Some((p @ ("unix" | "tcp"), rest)) => (Some(p), rest),
        // A path (XQuartz's launchd socket) is not something Linux X clients use.
        Some(_) => return Err(bad()),
        None => (None, display),
    };
    let (host, num) = rest.rsplit_once(':').ok_or_else(bad)?;
    if host.ends_with(':') {
        // `host::0` is DECnet.
        return Err(bad());
    }
    let number = num.split('.').next().unwrap_or_default();
    let number: u16 = number.parse().map_err(|_| bad())?;
    let host = match (proto, host) {
        (Some("unix"), "") | (None, "" | "unix") => None,
        (Some("unix"), _) => return Err(bad()),
        (Some("tcp"), "") => Some("localhost".to_owned()),
        (_, h) => Some(h.trim_start_matches('[').trim_end_matches(']').to_owned()),
    };
    Ok(Display { host, number })
}

enum Conn {
    Unix(UnixStream),
    Tcp(TcpStream),
}

impl Conn {
    fn stream(&mut self) -> &mut dyn ReadWrite {
        match self {
            Conn::Unix(s) => s,
            Conn::Tcp(s) => s,
        }
    }
}

trait ReadWrite: Read + Write {}
impl<T: Read + Write> ReadWrite for T {}

/// Where the auth cookie is looked up: Xauthority's family and address for this connection.
struct AuthTarget {
    family: u16,
    address: Vec<u8>,
}

const FAMILY_INTERNET: u16 = 0;
const FAMILY_INTERNET6: u16 = 6;
const FAMILY_LOCAL: u16 = 256;
const FAMILY_WILD: u16 = 65535;
const COOKIE: &[u8] = b"MIT-MAGIC-COOKIE-1";

fn local_target() -> AuthTarget {
    // Xlib (xcb) files local connections under the host name.
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    AuthTarget {
        family: FAMILY_LOCAL,
        address: host.trim().as_bytes().to_vec(),
    }
}

fn open(d: &Display, timeout: Duration) -> Result<(Conn, AuthTarget), String> {
    match &d.host {
        None => {
            let path = format!("/tmp/.X11-unix/X{}", d.number);
            let stream = match UnixStream::connect(&path) {
                Ok(s) => s,
                // Like xcb, also try the abstract socket (containers may not share /tmp).
                Err(path_err) => abstract_socket(&path)
                    .map_err(|_| format!("no X server at :{} ({path}: {path_err})", d.number))?,
            };
            stream
                .set_read_timeout(Some(timeout))
                .and_then(|()| stream.set_write_timeout(Some(timeout)))
                .map_err(|e| e.to_string())?;
            Ok((Conn::Unix(stream), local_target()))
        }
        Some(host) => {
            let port = 6000 + u32::from(d.number);
            let addrs = (
                host.as_str(),
                u16::try_from(port).map_err(|e| e.to_string())?,
            )
                .to_socket_addrs()
                .map_err(|e| format!("cannot resolve X host {host}: {e}"))?;
            let mut last = format!("no address for X host {host}");
            for addr in addrs {
                match TcpStream::connect_timeout(&addr, timeout) {
                    Ok(s) => {
                        s.set_read_timeout(Some(timeout))
                            .and_then(|()| s.set_write_timeout(Some(timeout)))
                            .map_err(|e| e.to_string())?;
                        let target = match addr.ip() {
                            ip if ip.is_loopback() => local_target(),
                            IpAddr::V4(ip) => AuthTarget {
                                family: FAMILY_INTERNET,
                                address: ip.octets().to_vec(),
                            },
                            IpAddr::V6(ip) => match ip.to_ipv4_mapped() {
                                Some(v4) => AuthTarget {
                                    family: FAMILY_INTERNET,
                                    address: v4.octets().to_vec(),
                                },
                                None => AuthTarget {
                                    family: FAMILY_INTERNET6,
                                    address: ip.octets().to_vec(),
                                },
                            },
                        };
                        return Ok((Conn::Tcp(s), target));
                    }
                    Err(e) => last = format!("no X server at {addr}: {e}"),
                }
            }
            Err(last)
        }
    }
}

fn abstract_socket(path: &str) -> std::io::Result<UnixStream> {
    use std::os::linux::net::SocketAddrExt;
    let addr = std::os::unix::net::SocketAddr::from_abstract_name(path.as_bytes())?;
    UnixStream::connect_addr(&addr)
}

/// An Xauthority entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AuthEntry {
    pub family: u16,
    pub address: Vec<u8>,
    pub number: Vec<u8>,
    pub name: Vec<u8>,
    pub data: Vec<u8>,
}

/// Parses an Xauthority file: records of a big-endian u16 family and four length-prefixed
/// fields. A truncated tail is ignored, as libXau does.
pub(crate) fn parse_xauthority(bytes: &[u8]) -> Vec<AuthEntry> {
    fn u16_at(b: &[u8], at: &mut usize) -> Option<u16> {
        let v = b.get(*at..*at + 2)?;
        *at += 2;
        Some(u16::from_be_bytes([v[0], v[1]]))
    }
    fn field(b: &[u8], at: &mut usize) -> Option<Vec<u8>> {
        let len = usize::from(u16_at(b, at)?);
        let v = b.get(*at..*at + len)?.to_vec();
        *at += len;
        Some(v)
    }
    let mut at = 0;
    let mut out = Vec::new();
    while at < bytes.len() {
        let entry = (|| {
            Some(AuthEntry {
                family: u16_at(bytes, &mut at)?,
                address: field(bytes, &mut at)?,
                number: field(bytes, &mut at)?,
                name: field(bytes, &mut at)?,
                data: field(bytes, &mut at)?,
            })
        })();
        match entry {
            Some(e) => out.push(e),
            None => break,
        }
    }
    out
}

/// The cookie Xlib would send: the first entry for this address (or a wildcard) and display
/// number (or any number) — libXau's rule — if it is an MIT-MAGIC-COOKIE-1.
fn pick_cookie(entries: &[AuthEntry], target: &AuthTarget, number: u16) -> Option<Vec<u8>> {
    let number = number.to_string();
    entries
        .iter()
        .filter(|e| {
            (e.family == FAMILY_WILD || (e.family == target.family && e.address == target.address))
                && (e.number.is_empty() || e.number == number.as_bytes())
        })
        .find(|e| e.name == COOKIE)
        .map(|e| e.data.clone())
}

fn xauthority() -> Vec<AuthEntry> {
    let path = match std::env::var_os("XAUTHORITY") {
        Some(p) if !p.is_empty() => std::path::PathBuf::from(p),
        _ => match std::env::var_os("HOME") {
            Some(h) => std::path::Path::new(&h).join(".Xauthority"),
            None => return Vec::new(),
        },
    };
    std::fs::read(path)
        .map(|b| parse_xauthority(&b))
        .unwrap_or_default()
}

fn pad(n: usize) -> usize {
    (4 - n % 4) % 4
}

fn u16le(v: usize) -> Result<[u8; 2], String> {
    u16::try_from(v)
        .map(u16::to_le_bytes)
        .map_err(|_| "X request too long".to_owned())
}

/// The connection-setup request (little-endian), with the cookie if there is one.
fn setup_request(cookie: Option<&[u8]>) -> Result<Vec<u8>, String> {
    let (name, data): (&[u8], &[u8]) = match cookie {
        Some(c) => (COOKIE, c),
        None => (b"", b""),
    };
    let mut req = vec![b'l', 0, 11, 0, 0, 0];
    req.extend(u16le(name.len())?);
    req.extend(u16le(data.len())?);
    req.extend([0, 0]);
    req.extend(name);
    req.extend(std::iter::repeat_n(0, pad(name.len())));
    req.extend(data);
    req.extend(std::iter::repeat_n(0, pad(data.len())));
    Ok(req)
}

fn query_extension_request(name: &[u8]) -> Result<Vec<u8>, String> {
    const QUERY_EXTENSION: u8 = 98;
    let words = 2 + (name.len() + pad(name.len())) / 4;
    let mut req = vec![QUERY_EXTENSION, 0];
    req.extend(u16le(words)?);
    req.extend(u16le(name.len())?);
    req.extend([0, 0]);
    req.extend(name);
    req.extend(std::iter::repeat_n(0, pad(name.len())));
    Ok(req)
}

/// Connects to `display` and checks it; returns the open, checked connection.
pub(crate) fn connect(display: &str, timeout: Duration) -> Result<Connection, String> {
    let d = parse(display)?;
    let (mut conn, target) = open(&d, timeout)?;
    let cookie = pick_cookie(&xauthority(), &target, d.number);
    handshake(conn.stream(), cookie.as_deref())
        .map_err(|e| format!("X server at {display} {e}"))?;
    Ok(Connection { _conn: conn })
}

/// A live, checked connection to an X server; closed on drop.
pub(crate) struct Connection {
    _conn: Conn,
}

fn io(e: std::io::Error) -> String {
    format!("did not complete the handshake: {e}")
}

fn handshake(s: &mut dyn ReadWrite, cookie: Option<&[u8]>) -> Result<(), String> {
    s.write_all(&setup_request(cookie)?).map_err(io)?;
    let mut head = [0u8; 8];
    s.read_exact(&mut head).map_err(io)?;
    let extra = usize::from(u16::from_le_bytes([head[6], head[7]])) * 4;
    let mut body = vec![0u8; extra];
    s.read_exact(&mut body).map_err(io)?;
    match head[0] {
        1 => {}
        0 => {
            let len = usize::from(head[1]).min(body.len());
            let reason = String::from_utf8_lossy(&body[..len]);
            return Err(format!("refused the connection: {}", reason.trim()));
        }
        2 => return Err("asks for an authentication this check cannot do".to_owned()),
        other => return Err(format!("sent an unknown setup status {other}")),
    }
    s.write_all(&query_extension_request(b"MIT-SCREEN-SAVER")?)
        .map_err(io)?;
    let mut reply = [0u8; 32];
    s.read_exact(&mut reply).map_err(io)?;
    match (reply[0], reply[8]) {
        (1, 1) => Ok(()),
        (1, _) => Err("has no MIT-SCREEN-SAVER extension".to_owned()),
        _ => Err("answered QueryExtension with an error".to_owned()),
    }
}

#[cfg(test)]
mod tests;
