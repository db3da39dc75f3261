//! What MetaClaw's learning does for the user: the outcome that followed each turn (a
//! correction, the same request again, or the conversation going on), read from the user's
//! next message, so skills and memories can be judged by what came after them.

pub mod follow_up;
pub mod label;
pub mod report;
