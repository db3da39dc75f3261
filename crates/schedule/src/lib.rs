//! When MetaClaw may do slow learning (weight updates, heavy background work): a window
//! state machine fed by sources — sleep hours, keyboard/mouse idle, calendar meetings —
//! that the user's pause overrides. Every source sits behind [`source::Source`] and time
//! behind [`clock::Clock`], so all of it runs under a fake clock in tests.

pub mod calendar;
pub mod clock;
pub mod error;
pub mod idle;
pub mod machine;
pub mod pause;
pub mod sleep;
pub mod source;

pub use error::ScheduleError;
