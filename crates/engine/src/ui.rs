//! `/ui/`: the web UI's static files, embedded in the binary at build time (`ui/dist`, or a
//! page saying how to build it when it was not built; see `build.rs`). No admin token is
//! needed here: these are static files, and every piece of data the UI shows comes from the
//! token-guarded `/api/*`.

use axum::Router;
use axum::extract::Path;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;
use include_dir::{Dir, include_dir};

static FILES: Dir<'static> = include_dir!("$METACLAW_UI_DIR");

/// Changes whenever an embedded file does (it makes the crate recompile on a UI rebuild).
const _STAMP: &str = env!("METACLAW_UI_STAMP");

/// The page may only load what it came with and talk to this origin.
const CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; \
                   img-src 'self' data:; connect-src 'self'; object-src 'none'; \
                   base-uri 'none'; frame-ancestors 'none'";

pub fn router<S: Clone + Send + Sync + 'static>() -> Router<S> {
    Router::new()
        .route("/ui", get(|| async { Redirect::permanent("/ui/") }))
        .route("/ui/", get(|| async { file("index.html") }))
        .route(
            "/ui/{*path}",
            get(|Path(path): Path<String>| async move { file(&path) }),
        )
}

fn file(path: &str) -> Response {
    // Only plain relative names: no `..`, no absolute paths, no backslashes, no empty or
    // dot segments. The router already decoded `%2e%2e` into `..`.
    let safe = !path.is_empty()
        && !path.contains('\\')
        && path
            .split('/')
            .all(|seg| !seg.is_empty() && seg != "." && seg != "..");
    if !safe {
        return (StatusCode::BAD_REQUEST, "bad path").into_response();
    }
    let Some(f) = FILES.get_file(path) else {
        return (StatusCode::NOT_FOUND, "not found").into_response();
    };
    let cache = if path.starts_with("assets/") {
        // Vite names assets by their content hash.
        "public, max-age=31536000, immutable"
    } else {
        "no-cache"
    };
    let mut res = f.contents().into_response();
    let h = res.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(content_type(path)),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static(cache));
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    if path.ends_with(".html") {
        h.insert(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(CSP),
        );
    }
    res
}

fn content_type(path: &str) -> &'static str {
    let ext = path.rsplit_once('.').map(|(_, e)| e).unwrap_or_default();
    match ext.to_ascii_lowercase().as_str() {
        "html" => "text/html; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "json" | "map" => "application/json",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "ico" => "image/x-icon",
        "webp" => "image/webp",
        "woff2" => "font/woff2",
        "txt" => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_is_embedded_and_traversal_refused() {
        assert!(FILES.get_file("index.html").is_some());
        assert_eq!(file("index.html").status(), StatusCode::OK);
        for bad in [
            "../Cargo.toml",
            "a/../index.html",
            "/etc/passwd",
            "a//b",
            ".",
            "x\\y",
            "",
        ] {
            assert_eq!(file(bad).status(), StatusCode::BAD_REQUEST, "{bad}");
        }
        assert_eq!(file("nope.js").status(), StatusCode::NOT_FOUND);
    }

    #[test]
    fn content_types() {
        assert_eq!(content_type("index.html"), "text/html; charset=utf-8");
        assert_eq!(
            content_type("assets/index-abc.js"),
            "text/javascript; charset=utf-8"
        );
        assert_eq!(
            content_type("assets/index-abc.CSS"),
            "text/css; charset=utf-8"
        );
        assert_eq!(content_type("blob"), "application/octet-stream");
    }
}
