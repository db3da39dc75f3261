//! The one path every adapter goes through: locate the config, open it in its format,
//! apply the adapter's edits, back the original up (first connect only), write atomically,
//! restart the agent when something changed — and undo all of it on disconnect.

mod connect;
mod disconnect;
mod plan;
mod restart;
mod secrets;
mod status;
mod types;

pub use connect::{connect, connect_with, preview, preview_with};
pub use disconnect::{disconnect, disconnect_with};
pub use restart::reload;
pub use secrets::mask;
pub use status::{endpoint, endpoint_with, status, status_with};
pub use types::{
    Change, Connected, Disconnected, EndpointView, Opener, Options, Preview, Restart, Reverted,
    RevertedFile, Status,
};
