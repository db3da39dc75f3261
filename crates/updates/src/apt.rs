//! The newest version in the package's apt repository: InRelease verified with the shipped
//! keyring, then the Packages index it names, checked against its SHA-256.

use sha2::{Digest, Sha256};

use crate::apt_source::AptSource;
use crate::error::UpdateError;
use crate::{packages, release, verify};

/// Metadata is a few kilobytes; these only bound a misbehaving server.
const INRELEASE_LIMIT: usize = 1024 * 1024;
const PACKAGES_LIMIT: usize = 32 * 1024 * 1024;

/// The newest `metaclaw` the repository offers for this machine (`None`: none for it).
pub async fn newest(
    client: &reqwest::Client,
    source: &AptSource,
) -> Result<Option<String>, UpdateError> {
    let dists = format!("{}/dists/{}", source.uri, source.suite);
    let signed = crate::fetch::get(client, &format!("{dists}/InRelease"), INRELEASE_LIMIT).await?;
    let text = verify::verified_text(&signed, &source.keyring).await?;
    let path = format!(
        "{}/binary-{}/Packages",
        source.component,
        packages::this_arch()
    );
    let entry = release::index_entry(&text, &source.suite, &path).map_err(UpdateError::Index)?;
    let limit = usize::try_from(entry.size)
        .unwrap_or(usize::MAX)
        .min(PACKAGES_LIMIT);
    let index = crate::fetch::get(client, &format!("{dists}/{path}"), limit).await?;
    let digest = Sha256::digest(&index);
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    if hex != entry.sha256 || index.len() as u64 != entry.size {
        return Err(UpdateError::Index(format!(
            "{path} does not match the signed Release file"
        )));
    }
    let index =
        String::from_utf8(index).map_err(|_| UpdateError::Index(format!("{path} is not UTF-8")))?;
    Ok(packages::newest(&index, packages::this_arch()))
}
