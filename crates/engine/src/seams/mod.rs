//! The engine's side of the proxy's seams (`metaclaw_proxy::seams`), all in one place:
//!
//! - [`ContextInjector`] (`Injector`): the skills and memories that fit a turn, as one block;
//! - [`SqliteSticky`] (`StickyStore`): where those blocks are remembered, so a resent message
//!   gets its block back byte for byte;
//! - [`LearningSink`] (`TurnSink`): every finished turn and session event, fanned out to the
//!   recorder and the learners (evolution, memory, weight learning);
//! - [`TrainedModel`] (`LocalModel`): the model trained from weights, serving main turns. It
//!   lives beside the weight-learning service (`rl/serve.rs`), whose state it reads.

mod injector;
mod sticky_store;
mod turn_sink;

pub use crate::rl::TrainedModel;
pub use injector::ContextInjector;
pub use sticky_store::SqliteSticky;
pub use turn_sink::LearningSink;
