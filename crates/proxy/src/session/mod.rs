//! Sessions: which conversation a request belongs to, and when a conversation ends.

mod fingerprint;
mod registry;
mod resolve;

pub use registry::{QUIET_AFTER, QuietHook, Sessions};
pub use resolve::{RequestMeta, SessionSource, resolve};
