//! MetaClaw's SQLite store: one database file, versioned migrations, typed queries.
//!
//! A [`Store`] owns one blocking connection. Writers live on a dedicated thread (the
//! recorder); readers (status, CLI) open their own read-only connections, which WAL lets
//! run alongside the writer.

mod blocks;
mod body_check;
mod body_conversion;
mod body_encoding;
mod body_parts;
mod body_retention;
mod body_split;
mod compression;
mod effects;
mod embeddings;
mod error;
mod follow_ups;
mod learning_steps;
mod learning_usage;
mod migrations;
mod migrations_bodies;
mod migrations_learn;
mod migrations_usage;
mod open;
mod samples;
mod series;
mod sessions;
mod skill_events;
mod space;
mod state;
mod stats;
mod turn_usage;
mod turns;
mod usage_totals;
mod vacuum;

pub use blocks::NewBlock;
pub use body_parts::DROPPED_REQUEST_JSON;
pub use body_retention::{BATCH_TURNS, BodyCounts, DropRule, DroppedStats};
pub use effects::{CarriedEffect, HoldoutArms, Outcome};
pub use error::StoreError;
pub use follow_ups::LabelTurn;
pub use learning_steps::{FinishedStep, LearningStepRow, NewLearningStep};
pub use learning_usage::LearningUsage;
pub use open::Store;
pub use samples::{BatchTake, JudgeState, NewSample, SampleCounts, SampleRow, SampleStatus};
pub use series::{Buckets, RequestBucket};
pub use sessions::SessionRow;
pub use skill_events::{NewSkillEvent, RejectedSkill, SkillEventCounts, SkillEventRow};
pub use space::{Space, SpacePart};
pub use stats::StoreStats;
pub use turn_usage::TurnUsageRow;
pub use turns::{End, NewTurn, TurnId, TurnRange, TurnRow};
pub use usage_totals::ModelUsage;

/// The schema version this binary writes and understands.
pub const SCHEMA_VERSION: i64 = migrations::MIGRATIONS.len() as i64;
