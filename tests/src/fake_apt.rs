//! A signed apt repository served over HTTP, for the update tests: throwaway keys made with
//! `gpg`, an `InRelease` clearsigned with one, and the `Packages` index it vouches for, listing
//! the `metaclaw` versions asked for. Its files can be replaced or altered between requests.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex, PoisonError};

use axum::Router;
use axum::extract::{Path as UrlPath, State};
use axum::http::StatusCode;
use axum::routing::get;

/// A signing key: its gpg home and its public keyring (what a package ships).
pub struct Key {
    home: PathBuf,
    pub keyring: PathBuf,
}

impl Key {
    /// Makes an ed25519 key named `name` under `dir` (no passphrase).
    pub fn new(dir: &Path, name: &str) -> anyhow::Result<Key> {
        let home = dir.join(format!("gnupg-{name}"));
        std::fs::create_dir_all(&home)?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&home, std::fs::Permissions::from_mode(0o700))?;
        }
        let key = Key {
            keyring: dir.join(format!("{name}.gpg")),
            home,
        };
        key.gpg(&[
            "--quick-gen-key",
            &format!("{name} <{name}@example.org>"),
            "ed25519",
            "sign",
            "never",
        ])?;
        std::fs::write(&key.keyring, key.gpg(&["--export"])?)?;
        Ok(key)
    }

    fn gpg(&self, args: &[&str]) -> anyhow::Result<Vec<u8>> {
        let out = Command::new("gpg")
            .env("GNUPGHOME", &self.home)
            .args([
                "--batch",
                "--quiet",
                "--pinentry-mode",
                "loopback",
                "--passphrase",
                "",
            ])
            .args(args)
            .output()
            .map_err(|e| anyhow::anyhow!("gpg is required (scripts/deps.sh installs it): {e}"))?;
        anyhow::ensure!(
            out.status.success(),
            "gpg {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        Ok(out.stdout)
    }

    /// `text` clearsigned, as an `InRelease` file.
    pub fn clearsign(&self, text: &str) -> anyhow::Result<Vec<u8>> {
        let dir = tempfile::tempdir()?;
        let file = dir.path().join("Release");
        std::fs::write(&file, text)?;
        let path = file.to_string_lossy().into_owned();
        self.gpg(&["--clearsign", "-o", "-", &path])
    }
}

/// Debian's name for this machine's architecture.
pub fn arch() -> &'static str {
    match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        other => other,
    }
}

/// The repository's files for `suite` holding `versions` of metaclaw, signed by `key`:
/// `[InRelease, Packages]`, by path.
pub fn repository(
    key: &Key,
    suite: &str,
    versions: &[&str],
) -> anyhow::Result<Vec<(String, Vec<u8>)>> {
    use sha2::Digest;
    let arch = arch();
    let packages: String = versions
        .iter()
        .map(|v| {
            format!(
                "Package: metaclaw\nVersion: {v}\nArchitecture: {arch}\nFilename: pool/main/m/metaclaw/metaclaw_{v}_{arch}.deb\nDescription: Makes your AI agent learn from real use\n\n"
            )
        })
        .collect();
    let path = format!("main/binary-{arch}/Packages");
    let digest: String = sha2::Sha256::digest(packages.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let release = format!(
        "Origin: MetaClaw\nSuite: {suite}\nCodename: {suite}\nComponents: main\nArchitectures: {arch}\nSHA256:\n {digest} {} {path}\n",
        packages.len()
    );
    Ok(vec![
        (format!("dists/{suite}/InRelease"), key.clearsign(&release)?),
        (format!("dists/{suite}/{path}"), packages.into_bytes()),
    ])
}

/// A deb822 source for the repository at `url`, as the package installs it (a new file each
/// call).
pub fn sources_file(dir: &Path, url: &str, suite: &str, keyring: &Path) -> anyhow::Result<PathBuf> {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = dir.join(format!("metaclaw-{n}.sources"));
    std::fs::write(
        &path,
        format!(
            "Types: deb\nURIs: {url}\nSuites: {suite}\nComponents: main\nSigned-By: {}\n",
            keyring.display()
        ),
    )?;
    Ok(path)
}

type Files = Arc<Mutex<Vec<(String, Vec<u8>)>>>;

/// The HTTP server: serves whatever files were last set.
pub struct FakeApt {
    files: Files,
    pub url: String,
}

impl FakeApt {
    pub async fn start() -> anyhow::Result<FakeApt> {
        let files: Files = Arc::default();
        let app = Router::new()
            .route("/{*path}", get(file))
            .with_state(files.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let url = format!("http://{}", listener.local_addr()?);
        tokio::spawn(async move { axum::serve(listener, app).await });
        Ok(FakeApt { files, url })
    }

    /// Serves `files` from now on (and nothing else).
    pub fn serve(&self, files: Vec<(String, Vec<u8>)>) {
        *self.files.lock().unwrap_or_else(PoisonError::into_inner) = files;
    }
}

async fn file(
    State(files): State<Files>,
    UrlPath(path): UrlPath<String>,
) -> Result<Vec<u8>, StatusCode> {
    files
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .iter()
        .find(|(p, _)| *p == path)
        .map(|(_, b)| b.clone())
        .ok_or(StatusCode::NOT_FOUND)
}
