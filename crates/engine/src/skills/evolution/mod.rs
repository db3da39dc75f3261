//! Skill evolution: after every N main turns of a session, at its end, on request (admin
//! API) and from the RL trainer's low-success trigger, an evolver model reads what happened
//! and proposes skills; accepted ones are written to the library, which reloads itself.
//! One evolution at a time; failures are logged as events and never touch a chat request.

mod job;
mod worker;
pub(crate) use worker::JOB as MARK;

pub use job::{Outcome, Trigger};
pub use worker::{Evolution, EvolutionSettings, Worker};
