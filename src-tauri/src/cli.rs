//! Command-line interface (docs/command-line.md).

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

#[derive(Debug, Parser)]
#[command(
    name = "metaclaw",
    version = crate::VERSION,
    about = "Makes your AI agent learn from real use: a local proxy that injects skills and memories and learns from every conversation.",
    after_help = "With no command, MetaClaw starts: the tray app with its window when there is a display, else in the foreground."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    /// With no command: start in the tray without opening the window (start at login uses it).
    #[arg(long)]
    pub hidden: bool,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Connect MetaClaw to your agent and LLM provider: pick the agent, the provider, paste
    /// the key (kept in the OS keychain), test, choose the mode; re-run it to change answers.
    Setup(SetupArgs),
    /// Start MetaClaw (foreground unless --daemon).
    Start(StartArgs),
    /// Stop the running MetaClaw.
    Stop,
    /// Show whether MetaClaw runs, its upstream, mode, uptime, traffic and last error.
    Status {
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Read or change `$METACLAW_HOME/config.yaml` (secrets go to the OS keychain).
    Config(ConfigArgs),
    /// The skill library: list, show, search with scores, import, export, the quarantine.
    #[command(subcommand)]
    Skills(SkillsCommand),
    /// What MetaClaw remembers: list, search, show, add, edit, forget, pin, export, import.
    #[command(subcommand)]
    Memory(MemoryCommand),
    /// Point an agent at MetaClaw, restore it exactly, or see where agents point.
    #[command(subcommand)]
    Agent(AgentCommand),
    /// Restore every connected agent, delete MetaClaw's keychain entries and, once you
    /// confirm, its data directory.
    Uninstall {
        /// Answer yes: remove the data directory (and OpenClaw's WeChat plugin, when
        /// installed) without asking.
        #[arg(short, long)]
        yes: bool,
        /// Keep the data directory (skills, memories, history); undo everything else.
        #[arg(long, conflicts_with = "yes")]
        keep_data: bool,
    },
    /// Hold slow learning (weight updates, and background learning when gated) for a while,
    /// until a time, or until `metaclaw resume`. Survives restarts; chat is never held.
    Pause {
        /// How long: 30m, 2h, 1d, 1h30m.
        #[arg(long = "for", value_name = "DURATION", conflicts_with = "until")]
        duration: Option<String>,
        /// Until this local time: 18:00 (the next one), or 2026-12-24T09:00.
        #[arg(long, value_name = "TIME")]
        until: Option<String>,
    },
    /// End a pause now.
    Resume,
    /// The database on disk: its size, what takes the space, the retention in force and
    /// when it last ran; `prune` applies the retention now.
    Storage(StorageArgs),
    /// Whether a newer MetaClaw exists (the package's apt repository, or
    /// `updates.manifest_url` for a build from source). Nothing is downloaded or installed.
    #[command(subcommand)]
    Update(UpdateCommand),
    /// Training windows: whether one is open, why, and when the next one comes.
    #[command(subcommand)]
    Scheduler(SchedulerCommand),
    /// One weight-training step now (modes rl and madmax): judge what is due, then train on
    /// the judged samples, training window or not.
    TrainStep {
        /// Print the engine's answer as JSON.
        #[arg(long)]
        json: bool,
    },
    /// The trained model's files: its tokenizer and chat template.
    #[command(subcommand)]
    Models(ModelsCommand),
    /// What an agent's hooks run (Claude Code: `hook claude-code`, added by `agent connect
    /// claude-code --plugin`): reads the hook's JSON on stdin. Never fails the agent.
    #[command(hide = true)]
    Hook { agent: HookAgent },
    /// Print MetaClaw's log.
    Logs {
        /// Keep printing new lines as they are written.
        #[arg(short, long)]
        follow: bool,
        /// Only the last N lines.
        #[arg(short = 'n', long, default_value_t = 200)]
        lines: usize,
    },
}

/// Agents whose hooks call `metaclaw hook`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum HookAgent {
    ClaudeCode,
}

#[derive(Debug, Args, Clone, Default)]
pub struct StartArgs {
    /// Run without the desktop window and tray.
    #[arg(long)]
    pub headless: bool,
    /// Start in the tray without opening the window.
    #[arg(long, conflicts_with = "headless")]
    pub hidden: bool,
    /// Detach and run in the background; returns once MetaClaw answers health checks.
    #[arg(short, long)]
    pub daemon: bool,
    /// Where the daemon's output goes (default `$METACLAW_HOME/logs/daemon.log`).
    #[arg(long, value_name = "PATH")]
    pub log_file: Option<PathBuf>,
    /// Listen on this port for this run.
    #[arg(long)]
    pub port: Option<u16>,
    /// Use this config file instead of `$METACLAW_HOME/config.yaml`.
    #[arg(short, long = "config", value_name = "PATH")]
    pub config: Option<PathBuf>,
    /// Mode for this run: skills_only, rl, madmax (auto is an alias of madmax).
    #[arg(long)]
    pub mode: Option<String>,
    /// Log in to WeChat again (OpenClaw's WeChat plugin): shows a new QR code to scan, in
    /// the terminal and the desktop window, to link or switch the WeChat account.
    #[arg(long)]
    pub wechat_relogin: bool,
}

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct ConfigArgs {
    #[command(subcommand)]
    pub command: Option<ConfigCommand>,
    /// Legacy form: `config KEY` reads, `config KEY VALUE` writes.
    pub key: Option<String>,
    pub value: Option<String>,
}

#[derive(Debug, Subcommand)]
pub enum ConfigCommand {
    /// The effective configuration, secrets masked.
    Show,
    /// One value (secrets masked).
    Get { key: String },
    /// Set a value; secret keys (llm.api_key, proxy.api_key, …) go to the OS keychain.
    /// Leave out the value of a secret to type it without echo (or pipe it on stdin), so it
    /// stays out of shell history and the process list.
    Set { key: String, value: Option<String> },
    /// Remove a value (back to its default); secret keys are deleted from the keychain.
    Unset { key: String },
    /// Print the config file's path.
    Path,
}

#[derive(Debug, Subcommand)]
pub enum SkillsCommand {
    /// Every skill in the library, with its category and source.
    List {
        #[arg(long)]
        json: bool,
    },
    /// One skill's file.
    Show { name: String },
    /// How the library ranks for QUERY, with scores; marks what would be injected.
    Search {
        query: String,
        /// Show at most this many ranked skills.
        #[arg(short = 'n', long, default_value_t = 10)]
        limit: usize,
    },
    /// Brings skills in from PATH: a skill folder (SKILL.md inside), a folder of them, or a
    /// .zip. Each passes the safety gate; flagged ones are quarantined, not used. Exits 1
    /// when any skill was quarantined or invalid.
    Import {
        path: std::path::PathBuf,
        #[arg(long)]
        json: bool,
    },
    /// Writes the library's skills to DIR as standard skill folders, with provenance.
    Export {
        dir: std::path::PathBuf,
        /// Only the skills learned from your conversations.
        #[arg(long)]
        learned_only: bool,
    },
    /// Skills the safety gate held back, with the reasons.
    Quarantine {
        #[arg(long)]
        json: bool,
    },
    /// Moves a quarantined skill into the library: you have read it and trust it.
    Release { name: String },
    /// Deletes a quarantined skill.
    Discard { name: String },
    /// Deletes a skill from the library; with a team library, from the team's too.
    Delete { name: String },
    /// Learned skills waiting for approval (`skills.review: ask`).
    Proposals {
        #[arg(long)]
        json: bool,
    },
    /// Puts a proposed skill into the library.
    Approve {
        name: String,
        /// Approve this file instead (the proposal as you edited it; it must keep the name).
        #[arg(long)]
        file: Option<std::path::PathBuf>,
    },
    /// Discards a proposed skill.
    Reject { name: String },
    /// A skill's earlier versions, newest first, with the turns that carried each.
    History {
        name: String,
        #[arg(long)]
        json: bool,
    },
    /// Restores a skill's newest earlier version byte for byte (run again to undo).
    Rollback {
        name: String,
        /// Restore this version instead (see `skills history NAME`).
        #[arg(long)]
        to: Option<u32>,
    },
    /// Syncs with the team library (`skills.sync.remote`) now and says what moved.
    Sync {
        #[arg(long)]
        json: bool,
    },
    /// The latest skill evolutions: what was learned, improved or rejected, and why.
    Log {
        /// Show at most this many events.
        #[arg(short = 'n', long = "n", default_value_t = 10)]
        n: usize,
        /// Also print every rejected proposal with its reason.
        #[arg(long)]
        full: bool,
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum MemoryCommand {
    /// Remembered units, newest first.
    List {
        #[arg(long)]
        scope: Option<String>,
        /// preference, project_state, procedural_observation, semantic, working_summary, episodic.
        #[arg(long)]
        kind: Option<String>,
        /// Also forgotten (archived) and superseded units.
        #[arg(long)]
        all: bool,
        #[arg(short = 'n', long, default_value_t = 50)]
        limit: u32,
        #[arg(long)]
        json: bool,
    },
    /// Search with scores and the reason each unit matched.
    Search {
        query: String,
        #[arg(long)]
        scope: Option<String>,
        #[arg(short = 'n', long, default_value_t = 10)]
        limit: usize,
    },
    /// One unit with its history.
    Show {
        id: String,
    },
    /// Remember something yourself.
    Add {
        content: String,
        #[arg(long, default_value = "semantic")]
        kind: String,
        #[arg(long)]
        scope: Option<String>,
        #[arg(long)]
        pin: bool,
    },
    /// Replace a unit's text (its history keeps the old one).
    Edit {
        id: String,
        content: String,
    },
    /// Forget a unit (kept, hidden; `--purge` deletes it for good).
    Forget {
        id: String,
        #[arg(long)]
        purge: bool,
    },
    /// Always inject this unit first.
    Pin {
        id: String,
    },
    Unpin {
        id: String,
    },
    /// Write units as JSON lines to stdout.
    Export {
        #[arg(long)]
        scope: Option<String>,
        /// Also forgotten and superseded units.
        #[arg(long)]
        all: bool,
    },
    /// Read units from a JSON-lines file written by `export`.
    Import {
        file: PathBuf,
    },
    /// Counts per kind, status and scope.
    Stats {
        #[arg(long)]
        scope: Option<String>,
    },
    /// Merge duplicates, supersede old session summaries, archive expired units, decay
    /// long-unused ones (pinned units are never touched).
    Consolidate {
        #[arg(long)]
        scope: Option<String>,
    },
    /// The retrieval policy in force and how it changed (a running MetaClaw picks up a
    /// reset within 30 seconds).
    Policy {
        #[arg(long)]
        scope: Option<String>,
        /// Changes shown, newest first.
        #[arg(long, default_value_t = 10)]
        history: usize,
        /// Go back to the configured policy.
        #[arg(long)]
        reset: bool,
    },
}

#[derive(Debug, Args, Clone, Default)]
pub struct SetupArgs {
    /// Ask nothing: take every answer from flags, the current config and the defaults.
    #[arg(long)]
    pub non_interactive: bool,
    /// kimi, qwen, openai, minimax, novita, openrouter, volcengine, anthropic or custom.
    #[arg(long)]
    pub provider: Option<String>,
    /// The provider's base URL (required for `custom`; otherwise the preset's).
    #[arg(long, value_name = "URL")]
    pub api_base: Option<String>,
    /// The protocol a `custom` provider speaks: openai or anthropic (presets know theirs).
    #[arg(long, value_name = "PROTOCOL")]
    pub api: Option<String>,
    /// The model id the provider serves.
    #[arg(long)]
    pub model: Option<String>,
    /// Read the provider key from this environment variable (keys never go on the command
    /// line, where other users can see them).
    #[arg(long, value_name = "VAR")]
    pub api_key_env: Option<String>,
    /// skills_only, rl or madmax.
    #[arg(long)]
    pub mode: Option<String>,
    /// Connect this agent (repeat for several); `none` connects nothing.
    #[arg(long = "agent", value_name = "NAME")]
    pub agents: Vec<String>,
    /// Import a config.yaml written by the earlier Python MetaClaw: its settings are kept
    /// and its plaintext keys move into the keychain.
    #[arg(long = "import", value_name = "PATH")]
    pub import: Option<PathBuf>,
    /// Talk to OpenClaw from WeChat (`wechat.enabled`): on or off. MetaClaw then installs
    /// OpenClaw's WeChat plugin at start and shows a QR code to scan. OpenClaw only.
    #[arg(long, value_name = "on|off")]
    pub wechat: Option<String>,
    /// Do not test the provider connection.
    #[arg(long)]
    pub skip_test: bool,
    /// Do not (re)start MetaClaw at the end, so no test request is sent either.
    #[arg(long)]
    pub no_start: bool,
}

#[derive(Debug, Subcommand)]
pub enum AgentCommand {
    /// Point NAME (default: `claw_type` from the config) at MetaClaw, backing up every file
    /// it changes, and check the agent's own config reaches MetaClaw.
    Connect {
        name: Option<String>,
        /// Show what would change and write nothing.
        #[arg(long)]
        dry_run: bool,
        /// Run MetaClaw inside the agent (Claude Code's hooks, OpenClaw's context engine)
        /// instead of between it and its provider: the agent keeps its own provider and login.
        #[arg(long)]
        plugin: bool,
    },
    /// Restore NAME (default: every connected agent) exactly as it was before MetaClaw.
    Disconnect { name: Option<String> },
    /// Installed, connected, and where each agent's config points (keys masked).
    Status {
        name: Option<String>,
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Args)]
pub struct StorageArgs {
    #[command(subcommand)]
    pub command: Option<StorageCommand>,
    /// Print JSON instead of text.
    #[arg(long, global = true)]
    pub json: bool,
}

#[derive(Debug, Subcommand)]
pub enum StorageCommand {
    /// Drop the messages of turns older than `storage.keep_turn_bodies_days` (once learning
    /// has read them), the oldest first while over `storage.max_db_mb`, and give the space
    /// back to the disk. Figures, skills and memories stay.
    Prune,
}

#[derive(Debug, Subcommand)]
pub enum SchedulerCommand {
    /// The window state, each source's reading, the pause, and the next window.
    Status {
        #[arg(long)]
        json: bool,
    },
    /// When the next window opens and why ("tonight 23:00 (sleep)").
    NextWindow,
    /// Google Calendar: meetings you accepted open a window.
    #[command(subcommand)]
    Calendar(CalendarCommand),
}

#[derive(Debug, Subcommand)]
pub enum CalendarCommand {
    /// Sign in with Google in the browser (read-only calendar access); the token goes to the
    /// OS keychain.
    Connect {
        /// Print the sign-in address instead of opening a browser.
        #[arg(long)]
        no_browser: bool,
    },
    /// Forget the Google token (deleted from the keychain).
    Disconnect,
    /// Whether a token is stored, the calendars read, and the meetings seen next.
    Status,
}

#[derive(Debug, Subcommand)]
pub enum ModelsCommand {
    /// Without MODEL: the local embedding model that finds skills and memories by meaning
    /// (paraphrase-multilingual-MiniLM-L12-v2, checked against pinned checksums) into
    /// `$METACLAW_HOME/models/embeddings/`. With MODEL (or --tokenizer): that served model's
    /// tokenizer.json, tokenizer_config.json (and chat_template.jinja) into
    /// `$METACLAW_HOME/models/MODEL/`, for weight learning. From Hugging Face or the mirror in
    /// `HF_ENDPOINT` (`HF_TOKEN` for gated models); `METACLAW_MODELS_URL` replaces the
    /// embedding model's whole address.
    Download {
        /// A served model's id, like Qwen/Qwen3-4B, for its tokenizer.
        model: Option<String>,
        /// The tokenizer of the configured model (rl.model, else llm.model_id).
        #[arg(long, conflicts_with = "model")]
        tokenizer: bool,
        /// A branch, tag or commit of the model's repository (tokenizers).
        #[arg(long, value_name = "R")]
        revision: Option<String>,
        /// Download from this Hugging Face-compatible host instead (overrides HF_ENDPOINT).
        #[arg(long, value_name = "URL")]
        hf_endpoint: Option<String>,
    },
    /// Install an embedding model from a folder or .zip in the sentence-transformers layout
    /// (config.json, tokenizer.json, model.safetensors, 1_Pooling/config.json), for machines
    /// without the internet. Another model than the default is accepted with a warning.
    Import {
        /// The folder or archive.
        path: PathBuf,
    },
    /// The installed embedding model, and what the running MetaClaw retrieves with.
    Status,
}

#[derive(Debug, Subcommand)]
pub enum UpdateCommand {
    /// Look now, and say how to install a newer version.
    Check {
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
}
