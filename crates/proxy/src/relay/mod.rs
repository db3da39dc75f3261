//! Sending the upstream's answer to the client: whole JSON bodies, or SSE streams relayed as
//! they arrive with a copy teed for the recorder.

mod finale;
pub mod headers;
pub mod json;
pub mod record;
pub mod stream;
mod withhold;
