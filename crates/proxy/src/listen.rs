//! Accepting connections with limits a local service still needs.
//!
//! Any local process can open connections to the proxy before presenting a key. Without
//! limits a half-sent request or an idle keep-alive connection holds a descriptor forever, so
//! each connection gets hyper's header read timeout, which also runs while a kept-alive
//! connection waits for its next request (an idle timeout). Clients close their own idle
//! connections sooner (Node's fetch after 4 s, httpx after 5 s), so a live agent never meets
//! it; `connection_timeout` in [`crate::ProxyConfig`] sets it.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;
use tower::ServiceExt;

/// Serves `app` until `shutdown` fires; open connections finish their current request first.
pub async fn accept_loop(
    listener: TcpListener,
    app: Router,
    timeout: Duration,
    shutdown: CancellationToken,
) {
    // Each connection task holds a receiver; the loop waits for all of them to drop.
    let (open_tx, open_rx) = watch::channel(());
    loop {
        let (stream, peer) = tokio::select! {
            () = shutdown.cancelled() => break,
            accepted = listener.accept() => match accepted {
                Ok(pair) => pair,
                Err(e) => {
                    // Out of descriptors and the like: back off briefly instead of spinning.
                    tracing::warn!(error = %e, "could not accept a connection");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        // SSE frames are small writes; without TCP_NODELAY each waits ~40 ms for a delayed ACK.
        if let Err(e) = stream.set_nodelay(true) {
            tracing::debug!(error = %e, "could not set TCP_NODELAY");
        }
        let app = app.clone();
        let shutdown = shutdown.clone();
        let open = open_rx.clone();
        tokio::spawn(async move {
            serve_connection(stream, peer, app, timeout, shutdown).await;
            drop(open);
        });
    }
    drop(open_rx);
    open_tx.closed().await;
}

/// Where a request's connection came from (routes for plugins answer loopback only).
#[derive(Debug, Clone, Copy)]
pub struct Peer(pub SocketAddr);

async fn serve_connection(
    stream: tokio::net::TcpStream,
    peer: SocketAddr,
    app: Router,
    timeout: Duration,
    shutdown: CancellationToken,
) {
    let service = hyper::service::service_fn(move |req: hyper::Request<Incoming>| {
        let app = app.clone();
        let mut req = req.map(Body::new);
        req.extensions_mut().insert(Peer(peer));
        async move { Ok::<_, Infallible>(infallible(app.oneshot(req).await)) }
    });
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(timeout);
    let conn = builder.serve_connection(TokioIo::new(stream), service);
    let mut conn = std::pin::pin!(conn);
    tokio::select! {
        result = conn.as_mut() => log_end(result),
        () = shutdown.cancelled() => {
            conn.as_mut().graceful_shutdown();
            log_end(conn.await);
        }
    }
}

fn log_end(result: Result<(), hyper::Error>) {
    if let Err(e) = result {
        // Timeouts and clients that hang up are routine; nothing to report above debug.
        tracing::debug!(error = %e, "connection ended");
    }
}

/// `Router`'s error type is `Infallible`; this unwraps it without a panic path.
fn infallible<T>(result: Result<T, Infallible>) -> T {
    match result {
        Ok(v) => v,
        Err(never) => match never {},
    }
}
