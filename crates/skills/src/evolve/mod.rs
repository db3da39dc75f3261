//! Skill evolution, the pure part: build the evolver's prompt from a window of turns, parse
//! its answer tolerantly, decide which proposals become new or improved skills, and write
//! the accepted ones. The caller owns the LLM call, the single-flight queue and history.
//!
//! Flow: [`build_prompt`] → LLM (with [`response_format`]) → [`parse_proposals`] →
//! [`decide`] against the current [`Library`](crate::Library) → [`apply`].

mod apply;
mod decide;
mod parse;
mod prompt;
mod requests;
mod schema;
pub mod similar;
mod substance;
mod text;
mod validate;

pub use apply::{Applied, Review, apply};
pub use decide::{Decision, Origin, decide};
pub use parse::{ParseError, Parsed, Proposal, Rejection, parse_proposals};
pub use prompt::{EvolverInput, MAX_TURNS, TurnDigest, build_prompt};
pub use requests::{MAX_REQUESTS, requests_of};
pub use schema::{response_format, response_schema};
