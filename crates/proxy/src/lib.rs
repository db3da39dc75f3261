//! The hot path: agent-API routes, upstream clients, streaming relay with a tee, sessions, auth.
//!
//! Nothing here knows about skills, memory or storage: the engine plugs those in through
//! [`seams`].

pub mod auth;
pub mod config;
pub mod error;
mod listen;
pub mod metrics;
pub mod pipeline;
pub mod redact;
pub mod relay;
pub mod routes;
pub mod seams;
pub mod server;
pub mod session;
pub mod state;
pub mod stats;
pub mod upstream;

pub use config::{Placement, ProxyConfig, UpstreamConfig};
pub use server::{check_bind, guard, router, serve};
pub use state::{AppState, SharedState};
