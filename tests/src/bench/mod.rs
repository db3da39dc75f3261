//! The proxy benchmark: a closed-loop load generator comparing requests sent straight to the
//! fake upstream with the same requests sent through the proxy.

pub mod cache;
pub mod client;
pub mod conversation;
pub mod entry;
pub mod learning;
pub mod library;
pub mod library_vectors;
pub mod load;
pub mod procs;
pub mod recall;
pub mod report;
pub mod rss;
pub mod soak;
pub mod stats;
