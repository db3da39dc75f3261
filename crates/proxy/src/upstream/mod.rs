//! Talking to LLM providers: building the forwarded request and trying upstreams in order,
//! or answering from the trained model.

pub mod local;
mod local_sse;
pub mod outbound;
pub mod send;
