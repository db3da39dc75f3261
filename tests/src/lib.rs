//! Support code for MetaClaw's end-to-end tests and benchmark: local fakes of the services the
//! proxy talks to, and the load generator.

pub mod bench;
pub mod fake_apt;
pub mod fake_google;
pub mod fake_judge;
pub mod fake_process;
pub mod fake_tinker;
pub mod fake_upstream;
pub mod fake_wechat;
pub mod toy_model;

/// `METACLAW_MODELS_URL` for every MetaClaw a test or benchmark starts: a closed port, so a
/// home without the embedding model never downloads it (tests import the test model).
pub const NO_MODEL_DOWNLOADS: (&str, &str) = (
    "METACLAW_MODELS_URL",
    "http://127.0.0.1:9/tests-never-download",
);
