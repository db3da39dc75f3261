//! Long-term memory in the engine: read on the request path, written by one worker.

pub mod apply;
pub mod compat;
pub mod error;
pub mod extraction;
pub mod policies;
pub mod reader;
pub mod service;
pub mod vectors;

pub use error::MemoryServiceError;
pub use extraction::Extracted;
pub use policies::Policies;
pub use service::{Memory, MemoryConfig, MemorySettings, TurnMemory};
pub use vectors::Vectors;
