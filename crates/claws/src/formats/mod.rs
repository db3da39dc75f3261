//! One editor per config format, each implementing [`crate::Doc`] without reformatting
//! what it does not touch.

pub mod dotenv;
pub mod json5;
pub mod toml;
pub mod yaml;
