//! The prompt-cache benchmark: multi-turn agent conversations straight to a provider that
//! reports prefix-cache usage, and through MetaClaw, in every client × upstream protocol
//! combination (see `cache-bench`).

pub mod play;
pub mod report;
pub mod run;
pub mod shapes;
