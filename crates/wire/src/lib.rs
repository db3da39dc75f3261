//! Wire formats of the OpenAI chat-completions and Anthropic messages APIs, translation
//! between them (requests, responses, streams), an SSE codec, stream assemblers and
//! protocol-shaped error bodies. Pure library: no I/O.
//!
//! Every struct keeps unknown fields in `extra`, so a parse → serialize round trip preserves
//! what this crate does not model. Documented normalisations: an explicit `null` on a typed
//! optional field serializes as absent, and tool-call `arguments` given as a JSON object
//! become a JSON string.

pub mod answer_json;
pub mod anthropic;
pub mod assemble;
mod de;
mod error;
pub mod errors;
pub mod openai;
pub mod reader;
mod role;
pub mod sse;
pub mod text;
pub mod tokens;
pub mod topic_words;
pub mod translate;
pub mod usage;

pub use error::WireError;
pub use role::Role;

#[cfg(test)]
mod tests;
