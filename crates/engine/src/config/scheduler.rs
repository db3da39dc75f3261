//! `scheduler:` — when weight updates may run in `madmax` mode.

use serde::{Deserialize, Serialize};

use super::de;
use super::time::TimeOfDay;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct SchedulerConfig {
    #[serde(deserialize_with = "de::flexible_bool")]
    pub enabled: bool,
    pub idle_threshold_minutes: u32,
    pub sleep_start: TimeOfDay,
    pub sleep_end: TimeOfDay,
    pub min_window_minutes: u32,
    /// While RL is not running, hold skill evolution and memory consolidation until a
    /// window is open (off: they run whenever there is work).
    #[serde(deserialize_with = "de::flexible_bool")]
    pub gate_background_learning: bool,
    pub calendar: CalendarConfig,
}

impl Default for SchedulerConfig {
    fn default() -> Self {
        Self {
            enabled: false,
            idle_threshold_minutes: 30,
            sleep_start: TimeOfDay::known(23, 0),
            sleep_end: TimeOfDay::known(7, 0),
            min_window_minutes: 15,
            gate_background_learning: false,
            calendar: CalendarConfig::default(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct CalendarConfig {
    #[serde(deserialize_with = "de::flexible_bool")]
    pub enabled: bool,
    /// Google OAuth desktop-app client secrets JSON.
    pub credentials_path: String,
    /// Legacy token file; tokens now live in the secret store. Read once for migration.
    pub token_path: String,
    /// Calendar ids whose meetings open a window (`primary` is the user's own).
    pub calendars: Vec<String>,
    /// How often events are fetched.
    pub poll_minutes: u32,
}

impl Default for CalendarConfig {
    fn default() -> Self {
        Self {
            enabled: false,
            credentials_path: String::new(),
            token_path: String::new(),
            calendars: vec!["primary".into()],
            poll_minutes: 10,
        }
    }
}
