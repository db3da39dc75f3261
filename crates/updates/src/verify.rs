//! The repository's InRelease is trusted only as `gpgv` verifies it against the keyring the
//! package shipped, and only the text `gpgv` says it verified is read (never the bytes around
//! the signature). `gpgv` is what apt itself uses on Debian 12; the package depends on it.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::AsyncWriteExt;

use crate::error::UpdateError;

/// gpgv on a few kilobytes is instant; this only bounds a hung child.
const GPGV_DEADLINE: Duration = Duration::from_secs(20);

/// The signed text of a clearsigned `signed` file, once it verifies with `keyring`.
pub async fn verified_text(signed: &[u8], keyring: &Path) -> Result<String, UpdateError> {
    let mut child = tokio::process::Command::new("gpgv")
        .arg("--keyring")
        .arg(keyring)
        .args(["--output", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| UpdateError::Verify(format!("cannot run gpgv: {e}")))?;
    let mut stdin = child
        .stdin
        .take()
        .ok_or_else(|| UpdateError::Verify("gpgv has no input".into()))?;
    let input = signed.to_vec();
    let feed = tokio::spawn(async move {
        let _ = stdin.write_all(&input).await;
    });
    let out = tokio::time::timeout(GPGV_DEADLINE, child.wait_with_output())
        .await
        .map_err(|_| UpdateError::Verify("gpgv did not answer".into()))?
        .map_err(|e| UpdateError::Verify(format!("gpgv failed: {e}")))?;
    let _ = feed.await;
    if !out.status.success() {
        let said = String::from_utf8_lossy(&out.stderr);
        let why = said
            .lines()
            .map(|l| l.trim_start_matches("gpgv:").trim())
            .filter(|l| {
                l.contains("BAD")
                    || l.contains("No public key")
                    || l.contains("no valid OpenPGP")
                    || l.contains("not found")
                    || l.contains("Can't check")
            })
            .collect::<Vec<_>>()
            .join("; ");
        return Err(UpdateError::Verify(format!(
            "the repository's signature does not verify with {}{}",
            keyring.display(),
            if why.is_empty() {
                String::new()
            } else {
                format!(" ({why})")
            }
        )));
    }
    String::from_utf8(out.stdout)
        .map_err(|_| UpdateError::Verify("the signed text is not UTF-8".into()))
}
