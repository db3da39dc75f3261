//! Long-term memory: units of six kinds per scope, extracted from conversations, reconciled
//! with what is already known, retrieved for each turn, and browsable by people.

pub mod db;
mod error;
pub mod extract;
pub mod reconcile;
pub mod text;
pub mod unit;

pub use error::MemoryError;
pub use extract::{Candidate, TurnText};
pub use reconcile::{Decision, decide, reconcile_batch, similarity};
pub use unit::{Kind, MemoryUnit, NewUnit, Source, Status};
