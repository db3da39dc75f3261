//! One desktop app at a time: the first listens on a Unix socket in `$METACLAW_HOME/run/`; a
//! second launch connects, asks it to show its window, and exits. A socket rather than
//! D-Bus: it needs no session bus and dies with the process that owns it.

use std::io::{self, BufRead, BufReader, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::time::Duration;

use metaclaw_engine::paths::Paths;

const SHOW: &str = "show";
const SHOWN: &str = "shown";
/// The running app answers from its event loop; a hung one must not hang the second launch.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(10);

pub enum Claim {
    /// This process is the first: it serves the socket (removed again on drop).
    First(Listener),
    /// Another MetaClaw showed its window.
    Shown,
}

pub struct Listener {
    pub socket: UnixListener,
    path: PathBuf,
}

impl Drop for Listener {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

pub fn socket_path(paths: &Paths) -> PathBuf {
    paths.desktop_socket()
}

/// Becomes the one instance, or has the running one show its window.
pub fn claim(paths: &Paths) -> io::Result<Claim> {
    let path = socket_path(paths);
    for _ in 0..2 {
        match UnixListener::bind(&path) {
            Ok(socket) => return Ok(Claim::First(Listener { socket, path })),
            Err(e) if e.kind() == io::ErrorKind::AddrInUse => {}
            Err(e) => return Err(e),
        }
        match ask_to_show(&path) {
            Ok(()) => return Ok(Claim::Shown),
            // Left behind by an app that crashed: nobody listens, take it over.
            Err(e) if is_stale(&e) => std::fs::remove_file(&path)?,
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::other(format!(
        "cannot claim {} (another MetaClaw keeps replacing it)",
        path.display()
    )))
}

fn is_stale(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::ConnectionRefused | io::ErrorKind::NotFound
    )
}

fn ask_to_show(path: &Path) -> io::Result<()> {
    let mut stream = UnixStream::connect(path)?;
    stream.set_read_timeout(Some(ANSWER_TIMEOUT))?;
    stream.write_all(format!("{SHOW}\n").as_bytes())?;
    let mut answer = String::new();
    BufReader::new(stream).read_line(&mut answer)?;
    if answer.trim() == SHOWN {
        Ok(())
    } else {
        Err(io::Error::other(format!(
            "the running MetaClaw gave an unexpected answer: {:?}",
            answer.trim()
        )))
    }
}

/// Serves show requests until the process ends, calling `show` for each.
pub fn serve(listener: Listener, show: impl Fn() + Send + Sync + 'static) -> io::Result<()> {
    listener.socket.set_nonblocking(true)?;
    let socket = tokio::net::UnixListener::from_std(listener.socket.try_clone()?)?;
    tokio::spawn(async move {
        // Owns the guard, so the socket file goes when this task does.
        let _listener = listener;
        loop {
            let Ok((stream, _)) = socket.accept().await else {
                continue;
            };
            let mut stream = tokio::io::BufStream::new(stream);
            let mut line = String::new();
            use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
            let read = tokio::time::timeout(ANSWER_TIMEOUT, stream.read_line(&mut line)).await;
            if !matches!(read, Ok(Ok(_))) || line.trim() != SHOW {
                continue;
            }
            tracing::info!("another launch asked to show the window");
            show();
            let _ = stream.write_all(format!("{SHOWN}\n").as_bytes()).await;
            let _ = stream.flush().await;
        }
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_second_claim_shows_the_first() {
        let home = tempfile::tempdir().unwrap();
        let paths = Paths::new(home.path()).unwrap();
        paths.ensure_dirs().unwrap();
        let Claim::First(first) = claim(&paths).unwrap() else {
            panic!("the first claim must win");
        };
        let shown = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counter = shown.clone();
        serve(first, move || {
            counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        })
        .unwrap();
        let second = tokio::task::spawn_blocking(move || claim(&paths))
            .await
            .unwrap()
            .unwrap();
        assert!(matches!(second, Claim::Shown));
        assert_eq!(shown.load(std::sync::atomic::Ordering::SeqCst), 1);
    }

    #[test]
    fn a_stale_socket_is_taken_over() {
        let home = tempfile::tempdir().unwrap();
        let paths = Paths::new(home.path()).unwrap();
        paths.ensure_dirs().unwrap();
        // A socket file nobody listens on, as a crashed app leaves it.
        drop(UnixListener::bind(socket_path(&paths)).unwrap());
        assert!(socket_path(&paths).exists());
        let claimed = claim(&paths).unwrap();
        assert!(matches!(claimed, Claim::First(_)));
        drop(claimed);
        assert!(!socket_path(&paths).exists(), "removed on drop");
    }
}
