//! Long-term memory in the engine: read on the request path, written by one worker.

pub mod apply;
pub mod compat;
pub mod extraction;
pub mod reader;
pub mod service;

pub use extraction::Extracted;
pub use service::{Memory, MemoryConfig, MemorySettings};
