//! The steps a request goes through before it is forwarded.

pub mod context;
pub mod fit;
pub mod holdout;
pub mod inbound;
pub mod inject;
pub mod normalize;
pub mod query;
pub mod sticky;
pub mod usage;
