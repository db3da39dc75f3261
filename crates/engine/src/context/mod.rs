//! The context block injected into main turns, and where its blocks are remembered.

pub mod injector;
pub mod sticky_store;

pub use injector::ContextInjector;
pub use sticky_store::SqliteSticky;
