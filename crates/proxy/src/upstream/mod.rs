//! Talking to LLM providers: building the forwarded request and trying upstreams in order.

pub mod outbound;
pub mod send;
