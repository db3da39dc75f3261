//! Support code for MetaClaw's end-to-end tests and benchmark: local fakes of the services the
//! proxy talks to, and the load generator.

pub mod bench;
pub mod fake_google;
pub mod fake_judge;
pub mod fake_process;
pub mod fake_tinker;
pub mod fake_upstream;
pub mod fake_wechat;
pub mod toy_model;
