//! What every request handler shares.

use std::sync::Arc;

use crate::config::ProxyConfig;
use crate::metrics::Metrics;
use crate::pipeline::sticky::Sticky;
use crate::redact::Redactor;
use crate::seams::{ForgetOnRestart, Injector, LocalModel, StickyStore, TurnSink};
use crate::session::Sessions;
use crate::stats::Stats;

pub struct AppState {
    pub config: ProxyConfig,
    pub http: reqwest::Client,
    pub injector: Arc<dyn Injector>,
    /// Blocks already given to each session's messages (prompt-cache stickiness).
    pub sticky: Sticky,
    pub sink: Arc<dyn TurnSink>,
    pub sessions: Arc<Sessions>,
    pub metrics: Metrics,
    pub stats: Stats,
    /// Takes configured keys out of upstream texts before anyone sees them.
    pub redactor: Redactor,
    pub default_scope: String,
    /// The trained model answering main turns (modes `rl` and `madmax`).
    pub local: Option<Arc<dyn LocalModel>>,
}

impl AppState {
    /// Remembers injected blocks in `store`, so they survive a restart.
    pub fn with_sticky_store(mut self, store: Arc<dyn StickyStore>) -> Self {
        self.sticky = Sticky::new(store);
        self
    }

    /// Answers main turns from `model` first, the upstream LLM when it cannot.
    pub fn with_local_model(mut self, model: Arc<dyn LocalModel>) -> Self {
        self.local = Some(model);
        self
    }
}

pub type SharedState = Arc<AppState>;

impl AppState {
    pub fn new(
        config: ProxyConfig,
        injector: Arc<dyn Injector>,
        sink: Arc<dyn TurnSink>,
        default_scope: String,
    ) -> Result<Self, reqwest::Error> {
        let http = reqwest::Client::builder()
            .connect_timeout(config.connect_timeout)
            .tcp_nodelay(true)
            .pool_idle_timeout(std::time::Duration::from_secs(90))
            .user_agent(concat!("metaclaw/", env!("CARGO_PKG_VERSION")))
            .build()?;
        let sessions = Arc::new(Sessions::new(sink.clone(), config.session_idle_timeout));
        let redactor = Redactor::from_config(&config);
        Ok(AppState {
            config,
            http,
            injector,
            sticky: Sticky::new(Arc::new(ForgetOnRestart)),
            sink,
            sessions,
            metrics: Metrics::new(),
            stats: Stats::default(),
            redactor,
            default_scope,
            local: None,
        })
    }
}
