//! `/ui/` through the real binary: the embedded web UI (or, in a build made without
//! `ui/dist`, the page saying how to build it) served without the admin token, its assets
//! with the right content type, path traversal refused, and `/api/*` still guarded.

#![allow(clippy::unwrap_used, clippy::panic)] // test helpers outside #[test] fns

mod common;

use std::path::PathBuf;

use common::daemon::{Home, free_port};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

fn dist() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../ui/dist")
}

/// The first `/ui/assets/…` URL an HTML page references.
fn first_asset(html: &str) -> String {
    let start = html
        .find("/ui/assets/")
        .unwrap_or_else(|| panic!("no /ui/assets/ reference in {html}"));
    let rest = &html[start..];
    let end = rest.find(['"', '\'']).unwrap();
    rest[..end].to_string()
}

/// A request written by hand: HTTP clients normalise `..` away before sending.
async fn raw_get(port: u16, target: &str) -> (u16, String) {
    let mut s = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .unwrap();
    let req =
        format!("GET {target} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n");
    s.write_all(req.as_bytes()).await.unwrap();
    let mut out = Vec::new();
    s.read_to_end(&mut out).await.unwrap();
    let text = String::from_utf8_lossy(&out).into_owned();
    let status = text
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("no status line in {text:?}"));
    (status, text)
}

#[tokio::test]
async fn ui_is_served_from_the_binary() {
    let port = free_port();
    let home = Home::new(&format!("proxy:\n  port: {port}\n"));
    home.start_daemon().await;
    let token = home.admin_token();
    let base = format!("http://127.0.0.1:{port}");
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();

    // `/ui` sends the browser to `/ui/`.
    let r = http.get(format!("{base}/ui")).send().await.unwrap();
    assert!(r.status().is_redirection(), "{}", r.status());
    assert_eq!(r.headers()["location"], "/ui/");

    // The page, with no token at all.
    let r = http.get(format!("{base}/ui/")).send().await.unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["content-type"], "text/html; charset=utf-8");
    assert_eq!(r.headers()["cache-control"], "no-cache");
    assert!(r.headers().contains_key("content-security-policy"));
    let html = r.text().await.unwrap();
    let built = dist().join("index.html");
    let asset = first_asset(&html);
    if built.is_file() {
        // CI builds the UI before the binary: the real page, byte for byte, is embedded.
        let on_disk = std::fs::read_to_string(&built).unwrap();
        assert_eq!(
            html, on_disk,
            "the binary does not carry the current ui/dist (rebuild it: cargo build -p metaclaw)"
        );
        assert!(
            html.contains(r#"<script type="module""#) && html.contains("/ui/assets/"),
            "{html}"
        );
        let js = html
            .split('"')
            .find(|s| s.starts_with("/ui/assets/") && s.ends_with(".js"))
            .unwrap_or_else(|| panic!("no JS bundle in {html}"));
        let r = http.get(format!("{base}{js}")).send().await.unwrap();
        assert_eq!(r.status(), 200);
        assert_eq!(
            r.headers()["content-type"],
            "text/javascript; charset=utf-8"
        );
        assert!(
            r.headers()["cache-control"]
                .to_str()
                .unwrap()
                .contains("immutable")
        );
        let served = r.bytes().await.unwrap();
        let file = std::fs::read(dist().join(js.trim_start_matches("/ui/"))).unwrap();
        assert_eq!(served.as_ref(), file.as_slice());
    } else {
        // Built without npm: the page says so, and how to build the UI.
        assert!(html.contains("web UI is not built"), "{html}");
        assert!(
            html.contains("npm --prefix ui ci &amp;&amp; npm --prefix ui run build"),
            "{html}"
        );
    }
    // Whatever asset the page references is served with its type.
    let r = http.get(format!("{base}{asset}")).send().await.unwrap();
    assert_eq!(r.status(), 200, "{asset}");
    let want = if asset.ends_with(".js") {
        "text/javascript; charset=utf-8"
    } else if asset.ends_with(".css") {
        "text/css; charset=utf-8"
    } else {
        panic!("unexpected first asset {asset}")
    };
    assert_eq!(r.headers()["content-type"], want, "{asset}");
    assert_eq!(r.headers()["x-content-type-options"], "nosniff");

    // Unknown files are 404s, not the index.
    let r = http
        .get(format!("{base}/ui/assets/missing.js"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 404);

    // Traversal out of /ui/ is refused, however it is spelled.
    for target in [
        "/ui/../api/status",
        "/ui/%2e%2e/api/status",
        "/ui/..%2fapi/status",
        "/ui/assets/../../Cargo.toml",
        "/ui/%2e%2e/%2e%2e/Cargo.toml",
        "/ui/..%5c..%5cCargo.toml",
    ] {
        let (status, text) = raw_get(port, target).await;
        assert!(status == 400 || status == 404, "{target}: {status}\n{text}");
        assert!(
            !text.contains("\"pid\""),
            "{target} reached the API: {text}"
        );
        assert!(
            !text.contains("[workspace]"),
            "{target} read a file: {text}"
        );
    }

    // The data stays behind the admin token.
    let r = http.get(format!("{base}/api/status")).send().await.unwrap();
    assert_eq!(r.status(), 401);
    let r = http
        .get(format!("{base}/api/memory"))
        .bearer_auth("wrong")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
    let r = http
        .get(format!("{base}/api/status"))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
}
