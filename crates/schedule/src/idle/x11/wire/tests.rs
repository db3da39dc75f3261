use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

use super::*;

#[test]
fn parses_display_names() {
    let local = |n| Display {
        host: None,
        number: n,
    };
    let host = |h: &str, n| Display {
        host: Some(h.to_owned()),
        number: n,
    };
    assert_eq!(parse(":0").unwrap(), local(0));
    assert_eq!(parse(":1.0").unwrap(), local(1));
    assert_eq!(parse("unix:12").unwrap(), local(12));
    assert_eq!(parse("unix/:3").unwrap(), local(3));
    assert_eq!(parse("localhost:10.0").unwrap(), host("localhost", 10));
    assert_eq!(parse("tcp/example.org:2").unwrap(), host("example.org", 2));
    assert_eq!(parse("[::1]:4").unwrap(), host("::1", 4));
    for bad in [
        "",
        "0",
        ":",
        ":x",
        "host::0",
        "/tmp/launch-x/org.xquartz:0",
        ":99999",
    ] {
        assert!(parse(bad).is_err(), "{bad:?} should not parse");
    }
}

fn entry(family: u16, address: &[u8], number: &str, name: &[u8], data: &[u8]) -> Vec<u8> {
    let mut b = family.to_be_bytes().to_vec();
    for f in [address, number.as_bytes(), name, data] {
        b.extend((f.len() as u16).to_be_bytes());
        b.extend(f);
    }
    b
}

#[test]
fn reads_xauthority_and_picks_the_cookie_xlib_would() {
    let mut file = entry(FAMILY_LOCAL, b"other-host", "0", COOKIE, b"wrong-host");
    file.extend(entry(FAMILY_LOCAL, b"me", "1", COOKIE, b"wrong-number"));
    file.extend(entry(
        FAMILY_LOCAL,
        b"me",
        "0",
        b"XDM-AUTHORIZATION-1",
        b"xdm",
    ));
    file.extend(entry(FAMILY_LOCAL, b"me", "0", COOKIE, b"right"));
    file.extend(entry(FAMILY_WILD, b"", "", COOKIE, b"wild"));
    file.extend([0, 1, 0]); // a truncated tail is ignored
    let entries = parse_xauthority(&file);
    assert_eq!(entries.len(), 5);
    let me = AuthTarget {
        family: FAMILY_LOCAL,
        address: b"me".to_vec(),
    };
    assert_eq!(
        pick_cookie(&entries, &me, 0).as_deref(),
        Some(&b"right"[..])
    );
    assert_eq!(
        pick_cookie(&entries, &me, 1).as_deref(),
        Some(&b"wrong-number"[..])
    );
    assert_eq!(pick_cookie(&entries, &me, 7).as_deref(), Some(&b"wild"[..]));
    assert_eq!(pick_cookie(&[], &me, 0), None);
}

#[test]
fn builds_the_setup_request_padded() {
    let req = setup_request(Some(&[7u8; 16])).unwrap();
    assert_eq!(&req[..6], &[b'l', 0, 11, 0, 0, 0]);
    assert_eq!(u16::from_le_bytes([req[6], req[7]]), 18);
    assert_eq!(u16::from_le_bytes([req[8], req[9]]), 16);
    // 12-byte header, "MIT-MAGIC-COOKIE-1" padded to 20, cookie 16.
    assert_eq!(req.len(), 12 + 20 + 16);
    assert_eq!(setup_request(None).unwrap().len(), 12);
    let q = query_extension_request(b"MIT-SCREEN-SAVER").unwrap();
    assert_eq!(q.len(), 8 + 16);
    assert_eq!(u16::from_le_bytes([q[2], q[3]]) as usize * 4, q.len());
}

/// A scripted X server on the other end of a socket pair: reads the setup request, sends
/// `setup`, and (if given) reads the QueryExtension request and sends `query`.
fn fake_server(setup: Vec<u8>, query: Option<Vec<u8>>) -> UnixStream {
    let (client, mut server) = UnixStream::pair().unwrap();
    client
        .set_read_timeout(Some(Duration::from_millis(500)))
        .unwrap();
    std::thread::spawn(move || {
        let mut head = [0u8; 12];
        server.read_exact(&mut head).unwrap();
        let n = u16::from_le_bytes([head[6], head[7]]) as usize;
        let d = u16::from_le_bytes([head[8], head[9]]) as usize;
        let mut rest = vec![0u8; n + pad(n) + d + pad(d)];
        server.read_exact(&mut rest).unwrap();
        server.write_all(&setup).unwrap();
        if let Some(q) = query {
            let mut req = [0u8; 24];
            server.read_exact(&mut req).unwrap();
            assert_eq!(req[0], 98);
            assert_eq!(&req[8..24], b"MIT-SCREEN-SAVER");
            server.write_all(&q).unwrap();
        }
        // Hold the socket open until the client is done.
        let _ = server.read(&mut [0u8; 1]);
    });
    client
}

fn success() -> Vec<u8> {
    // Status 1, protocol 11.0, 2 words of (ignored) setup data.
    let mut b = vec![1, 0, 11, 0, 0, 0, 2, 0];
    b.extend([0u8; 8]);
    b
}

fn extension_reply(present: bool) -> Vec<u8> {
    let mut b = vec![0u8; 32];
    b[0] = 1;
    b[8] = u8::from(present);
    b[9] = 140;
    b
}

#[test]
fn accepts_a_server_with_xscreensaver() {
    let mut c = fake_server(success(), Some(extension_reply(true)));
    handshake(&mut c, None).unwrap();
}

#[test]
fn rejects_a_server_without_xscreensaver() {
    let mut c = fake_server(success(), Some(extension_reply(false)));
    let e = handshake(&mut c, None).unwrap_err();
    assert!(e.contains("MIT-SCREEN-SAVER"), "{e}");
}

#[test]
fn reports_a_refused_connection_with_the_servers_reason() {
    let reason = b"Authorization required, but no authorization protocol specified\n";
    let words = reason.len().div_ceil(4);
    let mut b = vec![0, reason.len() as u8, 11, 0, 0, 0, words as u8, 0];
    b.extend(reason);
    b.resize(8 + words * 4, 0);
    let mut c = fake_server(b, None);
    let e = handshake(&mut c, Some(b"cookie")).unwrap_err();
    assert!(
        e.contains("refused") && e.contains("Authorization required"),
        "{e}"
    );
}

#[test]
fn a_server_that_never_answers_times_out() {
    let (mut client, _server) = UnixStream::pair().unwrap();
    client
        .set_read_timeout(Some(Duration::from_millis(100)))
        .unwrap();
    let started = Instant::now();
    assert!(handshake(&mut client, None).is_err());
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[test]
fn a_server_that_hangs_up_is_an_error() {
    let (mut client, server) = UnixStream::pair().unwrap();
    drop(server);
    assert!(handshake(&mut client, None).is_err());
}
