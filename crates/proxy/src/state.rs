//! What every request handler shares.

use std::sync::Arc;

use crate::config::ProxyConfig;
use crate::metrics::Metrics;
use crate::seams::{Injector, TurnSink};
use crate::session::Sessions;
use crate::stats::Stats;

pub struct AppState {
    pub config: ProxyConfig,
    pub http: reqwest::Client,
    pub injector: Arc<dyn Injector>,
    pub sink: Arc<dyn TurnSink>,
    pub sessions: Arc<Sessions>,
    pub metrics: Metrics,
    pub stats: Stats,
    pub default_scope: String,
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
        Ok(AppState {
            config,
            http,
            injector,
            sink,
            sessions,
            metrics: Metrics::new(),
            stats: Stats::default(),
            default_scope,
        })
    }
}
