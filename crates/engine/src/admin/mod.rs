//! The admin API (`/api/*`): JSON for the CLI, the UI and tests, behind the admin token that
//! only the user can read (`$METACLAW_HOME/run/admin_token`, mode 0600).

mod agents;
mod api_error;
mod cost;
mod effect;
mod embeddings;
mod events;
mod learning;
mod learning_usage;
mod logs;
mod memory;
mod memory_policy;
mod memory_profile;
mod plugin;
mod providers;
mod routes;
mod scheduler;
mod settings;
mod setup;
mod skills;
mod skills_exchange;
mod skills_review;
mod stats;
mod status;
mod storage;
mod turn_usage;
mod updates;
mod wechat;

pub use agents::{AgentsAdmin, StartReconnect};
pub use routes::{AdminState, router};
pub use skills::{SkillsAdmin, skill_json};
pub use status::{
    Health, LearningModel, MemoryStatus, SkillsStatus, Status, TeamStatus, UpstreamStatus,
    WechatStatus,
};
