//! Whether a newer MetaClaw exists, and whether the program on disk is already newer than the
//! one running.
//!
//! A package install carries its own signed apt source
//! ([`SOURCES_PATH`](apt_source::SOURCES_PATH)): the newest version is read from that
//! repository's `InRelease` (verified with `gpgv` against the keyring the package shipped)
//! and the `Packages` index it vouches for. A build from source reads a small JSON manifest
//! instead, when `updates.manifest_url` names one. Nothing is downloaded or installed here:
//! the system's updater (or `git pull`) applies an update; [`ExeWatch`] then sees the new
//! file and the host offers a restart.

mod apt;
mod apt_source;
mod check;
mod deb822;
mod error;
mod exe;
mod fetch;
mod manifest;
mod packages;
mod release;
mod verify;
pub mod version;

pub use apt_source::{AptSource, SOURCES_PATH};
pub use check::{APPLY_APT, APPLY_SOURCE, Outcome, Sources, check};
pub use error::UpdateError;
pub use exe::ExeWatch;
pub use notify::RecommendedWatcher;
pub use packages::{PACKAGE, this_arch};
