//! Sessions: which conversation a request belongs to, and when a conversation ends.

mod fingerprint;
mod registry;
mod resolve;

pub use registry::Sessions;
pub use resolve::{RequestMeta, resolve};
