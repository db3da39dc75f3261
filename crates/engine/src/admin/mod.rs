//! The admin API (`/api/*`): JSON for the CLI, the UI and tests, behind the admin token that
//! only the user can read (`$METACLAW_HOME/run/admin_token`, mode 0600).

mod routes;
mod status;

pub use routes::{AdminState, router};
pub use status::{Status, UpstreamStatus};
