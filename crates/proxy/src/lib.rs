//! The hot path: agent-API routes, upstream clients, streaming relay with a tee, sessions, auth.
//!
//! Nothing here knows about skills, memory or storage: the engine plugs those in through
//! [`seams`].

mod auth;
mod config;
pub mod error;
mod listen;
mod metrics;
mod pipeline;
mod redact;
mod relay;
pub mod routes;
pub mod seams;
mod server;
mod session;
mod state;
mod stats;
mod upstream;

pub use auth::{bearer_token, require_key};
pub use config::{Placement, ProxyConfig, UpstreamConfig};
pub use pipeline::sticky::{Limits as StickyLimits, Sticky};
pub use server::{check_bind, guard, router, serve};
pub use state::{AppState, SharedState};
