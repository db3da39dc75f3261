//! The agent API's routes.

pub mod count_tokens;
pub mod info;
pub mod plugin;
pub mod turn;
