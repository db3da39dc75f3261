//! The tray's menu, its typed item ids, and what it says for a scheduler state (no GUI here,
//! so it is tested without a display).

use metaclaw_engine::schedule::SchedulerStatus;

/// Every item of the tray menu; the string ids are what Tauri reports on a click.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ItemId {
    Status,
    Learning,
    PauseMenu,
    Pause30Min,
    Pause1Hour,
    Pause2Hours,
    PauseTomorrow,
    PauseUntilResumed,
    Resume,
    OpenDashboard,
    Quit,
}

impl ItemId {
    pub const ALL: [ItemId; 11] = [
        ItemId::Status,
        ItemId::Learning,
        ItemId::PauseMenu,
        ItemId::Pause30Min,
        ItemId::Pause1Hour,
        ItemId::Pause2Hours,
        ItemId::PauseTomorrow,
        ItemId::PauseUntilResumed,
        ItemId::Resume,
        ItemId::OpenDashboard,
        ItemId::Quit,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ItemId::Status => "status",
            ItemId::Learning => "learning",
            ItemId::PauseMenu => "pause",
            ItemId::Pause30Min => "pause-30m",
            ItemId::Pause1Hour => "pause-1h",
            ItemId::Pause2Hours => "pause-2h",
            ItemId::PauseTomorrow => "pause-tomorrow",
            ItemId::PauseUntilResumed => "pause-until-resumed",
            ItemId::Resume => "resume",
            ItemId::OpenDashboard => "open-dashboard",
            ItemId::Quit => "quit",
        }
    }

    pub fn parse(id: &str) -> Option<ItemId> {
        ItemId::ALL.into_iter().find(|i| i.as_str() == id)
    }

    /// The label of the items whose text does not change.
    pub fn label(self) -> &'static str {
        match self {
            ItemId::Status => "MetaClaw",
            ItemId::Learning => "Learning",
            ItemId::PauseMenu => "Pause learning",
            ItemId::Pause30Min => "30 minutes",
            ItemId::Pause1Hour => "1 hour",
            ItemId::Pause2Hours => "2 hours",
            ItemId::PauseTomorrow => "Until tomorrow morning",
            ItemId::PauseUntilResumed => "Until resumed",
            ItemId::Resume => "Resume learning",
            ItemId::OpenDashboard => "Open dashboard",
            ItemId::Quit => "Quit",
        }
    }

    /// How a Pause item asks for its end, in `metaclaw pause` terms: (for, until); both
    /// `None` is until resumed.
    pub fn pause_request(self) -> Option<(Option<&'static str>, Option<&'static str>)> {
        match self {
            ItemId::Pause30Min => Some((Some("30m"), None)),
            ItemId::Pause1Hour => Some((Some("1h"), None)),
            ItemId::Pause2Hours => Some((Some("2h"), None)),
            ItemId::PauseTomorrow => Some((None, Some("08:00"))),
            ItemId::PauseUntilResumed => Some((None, None)),
            _ => None,
        }
    }
}

/// The look of the tray icon.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrayState {
    Stopped,
    Serving,
    Waiting,
    Training,
    Paused,
    Error,
}

impl TrayState {
    pub fn icon_png(self) -> &'static [u8] {
        match self {
            TrayState::Stopped => include_bytes!("../../icons/stopped.png"),
            TrayState::Serving => include_bytes!("../../icons/serving.png"),
            TrayState::Waiting => include_bytes!("../../icons/waiting.png"),
            TrayState::Training => include_bytes!("../../icons/training.png"),
            TrayState::Paused => include_bytes!("../../icons/paused.png"),
            TrayState::Error => include_bytes!("../../icons/error.png"),
        }
    }
}

/// What the tray shows for one scheduler state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct View {
    pub state: TrayState,
    pub status: String,
    pub learning: String,
    pub paused: bool,
}

impl View {
    pub fn of(status: &SchedulerStatus, addr: &str) -> View {
        let words = &status.text;
        let (state, learning) = match status.state.as_str() {
            "open" => (
                TrayState::Serving,
                format!("Learning: window {}", words.state),
            ),
            "running" => (
                TrayState::Training,
                format!("Learning: window {}", words.state),
            ),
            "paused" => (TrayState::Paused, format!("Learning: {}", words.state)),
            _ => {
                let next = words
                    .next_window
                    .strip_prefix("next window: ")
                    .unwrap_or(&words.next_window);
                (
                    TrayState::Waiting,
                    format!("Learning: waiting — next {next}"),
                )
            }
        };
        let state = if status.pause_problem.is_some() {
            TrayState::Error
        } else {
            state
        };
        View {
            state,
            status: format!("MetaClaw — serving on {addr}"),
            learning,
            paused: status.state == "paused",
        }
    }

    pub fn tooltip(&self) -> String {
        format!("{}\n{}", self.status, self.learning)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip_and_are_unique() {
        for id in ItemId::ALL {
            assert_eq!(ItemId::parse(id.as_str()), Some(id));
        }
        let mut names: Vec<_> = ItemId::ALL.iter().map(|i| i.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), ItemId::ALL.len());
        assert_eq!(ItemId::parse("nope"), None);
    }

    #[test]
    fn only_pause_items_pause() {
        let pausing: Vec<_> = ItemId::ALL
            .into_iter()
            .filter(|i| i.pause_request().is_some())
            .collect();
        assert_eq!(pausing.len(), 5);
        assert_eq!(
            ItemId::PauseUntilResumed.pause_request(),
            Some((None, None))
        );
    }

    #[test]
    fn icons_are_distinct_pngs() {
        let all = [
            TrayState::Stopped,
            TrayState::Serving,
            TrayState::Waiting,
            TrayState::Training,
            TrayState::Paused,
            TrayState::Error,
        ];
        for (i, a) in all.iter().enumerate() {
            assert!(a.icon_png().starts_with(b"\x89PNG"));
            for b in &all[i + 1..] {
                assert_ne!(a.icon_png(), b.icon_png(), "{a:?} and {b:?}");
            }
        }
    }
}
