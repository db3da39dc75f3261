//! The tray's menu, its typed item ids, and what it says for a scheduler state (no GUI here,
//! so it is tested without a display).

use metaclaw_engine::config::Mode;
use metaclaw_engine::schedule::SchedulerStatus;

/// Every item of the tray menu; the string ids are what Tauri reports on a click.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ItemId {
    Status,
    Agent,
    Learning,
    PauseMenu,
    Pause30Min,
    Pause1Hour,
    Pause2Hours,
    PauseTomorrow,
    PauseUntilResumed,
    Resume,
    TrainNow,
    ModeMenu,
    ModeSkillsOnly,
    ModeRl,
    ModeMadmax,
    OpenDashboard,
    Settings,
    StartAtLogin,
    Quit,
    Wechat,
    WechatLogin,
    /// "Review N learned skills…": opens the Skills screen.
    Review,
    /// "Update available (N)…" (says how to install it) or "Restart MetaClaw (N)".
    Update,
}

impl ItemId {
    pub const ALL: [ItemId; 23] = [
        ItemId::Status,
        ItemId::Agent,
        ItemId::Learning,
        ItemId::PauseMenu,
        ItemId::Pause30Min,
        ItemId::Pause1Hour,
        ItemId::Pause2Hours,
        ItemId::PauseTomorrow,
        ItemId::PauseUntilResumed,
        ItemId::Resume,
        ItemId::TrainNow,
        ItemId::ModeMenu,
        ItemId::ModeSkillsOnly,
        ItemId::ModeRl,
        ItemId::ModeMadmax,
        ItemId::OpenDashboard,
        ItemId::Settings,
        ItemId::StartAtLogin,
        ItemId::Quit,
        ItemId::Wechat,
        ItemId::WechatLogin,
        ItemId::Review,
        ItemId::Update,
    ];

    /// The Mode ▸ items, in menu order.
    pub const MODES: [ItemId; 3] = [ItemId::ModeSkillsOnly, ItemId::ModeRl, ItemId::ModeMadmax];

    pub fn as_str(self) -> &'static str {
        match self {
            ItemId::Status => "status",
            ItemId::Agent => "agent",
            ItemId::Learning => "learning",
            ItemId::PauseMenu => "pause",
            ItemId::Pause30Min => "pause-30m",
            ItemId::Pause1Hour => "pause-1h",
            ItemId::Pause2Hours => "pause-2h",
            ItemId::PauseTomorrow => "pause-tomorrow",
            ItemId::PauseUntilResumed => "pause-until-resumed",
            ItemId::Resume => "resume",
            ItemId::TrainNow => "train-now",
            ItemId::ModeMenu => "mode",
            ItemId::ModeSkillsOnly => "mode-skills_only",
            ItemId::ModeRl => "mode-rl",
            ItemId::ModeMadmax => "mode-madmax",
            ItemId::OpenDashboard => "open-dashboard",
            ItemId::Settings => "settings",
            ItemId::StartAtLogin => "start-at-login",
            ItemId::Quit => "quit",
            ItemId::Wechat => "wechat",
            ItemId::WechatLogin => "wechat-login",
            ItemId::Review => "review-skills",
            ItemId::Update => "update",
        }
    }

    pub fn parse(id: &str) -> Option<ItemId> {
        ItemId::ALL.into_iter().find(|i| i.as_str() == id)
    }

    /// The label of the items whose text does not change.
    pub fn label(self) -> &'static str {
        match self {
            ItemId::Status => "MetaClaw",
            ItemId::Agent => "No agent connected",
            ItemId::Learning => "Learning",
            ItemId::PauseMenu => "Pause learning",
            ItemId::Pause30Min => "30 minutes",
            ItemId::Pause1Hour => "1 hour",
            ItemId::Pause2Hours => "2 hours",
            ItemId::PauseTomorrow => "Until tomorrow morning",
            ItemId::PauseUntilResumed => "Until resumed",
            ItemId::Resume => "Resume learning",
            ItemId::TrainNow => "Train now",
            ItemId::ModeMenu => "Mode",
            ItemId::ModeSkillsOnly => "Skills only",
            ItemId::ModeRl => "Reinforcement learning",
            ItemId::ModeMadmax => "MadMax",
            ItemId::OpenDashboard => "Open dashboard",
            ItemId::Settings => "Settings",
            ItemId::StartAtLogin => "Start at login",
            ItemId::Quit => "Quit",
            ItemId::Wechat => "WeChat",
            ItemId::WechatLogin => "Log in to WeChat again",
            ItemId::Review => "Review learned skills",
            ItemId::Update => "Update available",
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

    /// The mode a Mode ▸ item chooses.
    pub fn mode(self) -> Option<Mode> {
        match self {
            ItemId::ModeSkillsOnly => Some(Mode::SkillsOnly),
            ItemId::ModeRl => Some(Mode::Rl),
            ItemId::ModeMadmax => Some(Mode::Madmax),
            _ => None,
        }
    }
}

/// The agent line: which agents MetaClaw has connected (`names` as `claw_type` spells them).
pub fn agent_line(names: &[String]) -> String {
    match names {
        [] => ItemId::Agent.label().to_owned(),
        [one] => format!("Agent: {} connected", agent_title(one)),
        many => format!(
            "Agents: {} connected",
            many.iter()
                .map(|n| agent_title(n))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// How an agent's name is written for people.
fn agent_title(name: &str) -> String {
    let known = [
        ("openclaw", "OpenClaw"),
        ("copaw", "CoPaw"),
        ("ironclaw", "IronClaw"),
        ("picoclaw", "PicoClaw"),
        ("zeroclaw", "ZeroClaw"),
        ("nanoclaw", "NanoClaw"),
        ("nemoclaw", "NemoClaw"),
        ("hermes", "Hermes"),
    ];
    known
        .iter()
        .find(|(n, _)| *n == name)
        .map_or_else(|| name.to_owned(), |(_, t)| (*t).to_owned())
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
            TrayState::Stopped => include_bytes!("../../../icons/stopped.png"),
            TrayState::Serving => include_bytes!("../../../icons/serving.png"),
            TrayState::Waiting => include_bytes!("../../../icons/waiting.png"),
            TrayState::Training => include_bytes!("../../../icons/training.png"),
            TrayState::Paused => include_bytes!("../../../icons/paused.png"),
            TrayState::Error => include_bytes!("../../../icons/error.png"),
        }
    }
}

/// What the tray shows for one scheduler state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct View {
    pub state: TrayState,
    pub status: String,
    pub agent: String,
    pub learning: String,
    pub paused: bool,
    /// The mode the running engine uses (the checked Mode ▸ item).
    pub mode: Mode,
    /// Whether MetaClaw starts at login (the Start at login check).
    pub autostart: bool,
    /// The WeChat line, when the channel is on for OpenClaw (with "Log in to WeChat again").
    pub wechat: Option<String>,
    /// "Review N learned skills…" while skills wait for approval (`skills.review: ask`).
    pub review: Option<String>,
    /// "Update available (N)…" or "Restart MetaClaw (N)".
    pub update: Option<String>,
}

/// What the tray shows besides the scheduler: the host's own state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostView {
    pub agents: Vec<String>,
    pub mode: Mode,
    pub autostart: bool,
    pub wechat: Option<String>,
    /// Learned skills waiting for approval.
    pub proposals: usize,
    /// The update item's label, when there is one ([`update_line`]).
    pub update: Option<String>,
}

/// The tray's update item: a restart once a newer version is installed, else the newer
/// version to install (its click says how).
pub fn update_line(available: Option<&str>, restart_to: Option<&str>) -> Option<String> {
    match (restart_to, available) {
        (Some(v), _) => Some(format!("Restart MetaClaw ({v})")),
        (None, Some(v)) => Some(format!("Update available ({v})…")),
        (None, None) => None,
    }
}

/// The tray's review line for `n` proposals waiting; none when nothing waits.
pub fn review_line(n: usize) -> Option<String> {
    match n {
        0 => None,
        1 => Some("Review 1 learned skill…".to_owned()),
        n => Some(format!("Review {n} learned skills…")),
    }
}

impl View {
    pub fn of(status: &SchedulerStatus, addr: &str, host: &HostView) -> View {
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
            agent: agent_line(&host.agents),
            learning,
            paused: status.state == "paused",
            mode: host.mode,
            autostart: host.autostart,
            wechat: host.wechat.clone(),
            review: review_line(host.proposals),
            update: host.update.clone(),
        }
    }

    pub fn tooltip(&self) -> String {
        let mut tip = format!("{}\n{}\n{}", self.status, self.agent, self.learning);
        for line in [&self.wechat, &self.review, &self.update]
            .into_iter()
            .flatten()
        {
            tip.push('\n');
            tip.push_str(line.trim_end_matches('…'));
        }
        tip
    }

    /// Whether a Mode ▸ item is the checked one.
    pub fn checked(&self, id: ItemId) -> bool {
        id.mode() == Some(self.mode)
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
        assert!(ItemId::MODES.iter().all(|m| m.pause_request().is_none()));
        assert_eq!(
            ItemId::PauseUntilResumed.pause_request(),
            Some((None, None))
        );
    }

    #[test]
    fn mode_items_name_each_mode_once() {
        let modes: Vec<_> = ItemId::MODES.iter().filter_map(|m| m.mode()).collect();
        assert_eq!(modes, vec![Mode::SkillsOnly, Mode::Rl, Mode::Madmax]);
        for id in ItemId::MODES {
            assert_eq!(id.as_str(), format!("mode-{}", id.mode().unwrap()));
        }
        let others = ItemId::ALL.iter().filter(|i| i.mode().is_some()).count();
        assert_eq!(others, 3);
    }

    #[test]
    fn agent_line_names_connected_agents() {
        assert_eq!(agent_line(&[]), "No agent connected");
        assert_eq!(
            agent_line(&["openclaw".into()]),
            "Agent: OpenClaw connected"
        );
        assert_eq!(
            agent_line(&["copaw".into(), "some_new_claw".into()]),
            "Agents: CoPaw, some_new_claw connected"
        );
    }

    #[test]
    fn spec_items_have_their_labels() {
        let labels: Vec<_> = ItemId::ALL.iter().map(|i| i.label()).collect();
        for want in [
            "Pause learning",
            "Resume learning",
            "Train now",
            "Mode",
            "Open dashboard",
            "Settings",
            "Start at login",
            "Quit",
            "Log in to WeChat again",
        ] {
            assert!(labels.contains(&want), "no `{want}`");
        }
    }

    #[test]
    fn the_view_checks_its_mode_and_lists_its_lines() {
        let view = View {
            state: TrayState::Serving,
            status: "MetaClaw — serving on 127.0.0.1:30000".into(),
            agent: agent_line(&["openclaw".into()]),
            learning: "Learning: window open".into(),
            paused: false,
            mode: Mode::Rl,
            autostart: false,
            wechat: None,
            review: None,
            update: None,
        };
        let checked: Vec<_> = ItemId::ALL
            .into_iter()
            .filter(|i| view.checked(*i))
            .collect();
        assert_eq!(checked, vec![ItemId::ModeRl]);
        assert_eq!(
            view.tooltip(),
            "MetaClaw — serving on 127.0.0.1:30000\nAgent: OpenClaw connected\nLearning: window open"
        );
        let waiting = View {
            review: review_line(2),
            ..view
        };
        assert!(waiting.tooltip().ends_with("\nReview 2 learned skills"));
        let newer = View {
            update: update_line(Some("0.2.0"), None),
            ..waiting
        };
        assert!(newer.tooltip().ends_with("\nUpdate available (0.2.0)"));
    }

    #[test]
    fn the_update_item_offers_a_restart_once_installed() {
        assert_eq!(update_line(None, None), None);
        assert_eq!(
            update_line(Some("0.2.0"), None).as_deref(),
            Some("Update available (0.2.0)…")
        );
        assert_eq!(
            update_line(Some("0.2.0"), Some("0.2.0")).as_deref(),
            Some("Restart MetaClaw (0.2.0)")
        );
    }

    #[test]
    fn the_review_line_counts_what_waits() {
        assert_eq!(review_line(0), None);
        assert_eq!(review_line(1).as_deref(), Some("Review 1 learned skill…"));
        assert_eq!(review_line(3).as_deref(), Some("Review 3 learned skills…"));
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
