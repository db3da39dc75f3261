//! Start phase 3: the proxy with the engine's seams plugged in (the injector, the
//! remembered-block store, the turn fan-out, the trained model), the quiet hooks that give
//! memory back when requests stop, and the listening socket.

use std::net::SocketAddr;
use std::sync::Arc;

use metaclaw_proxy::seams::TurnSink;
use metaclaw_proxy::{AppState, SharedState};
use tokio::net::TcpListener;

use crate::events::Events;
use crate::paths::Paths;
use crate::seams::{ContextInjector, LearningSink, SqliteSticky};

use super::EngineError;
use super::learners::Learners;
use super::resolve::Resolved;

pub(super) async fn build(
    resolved: &Resolved,
    learners: &Learners,
    paths: &Paths,
    events: &Events,
) -> Result<(SharedState, TcpListener, SocketAddr), EngineError> {
    let config = &resolved.config;
    let sink: Arc<dyn TurnSink> = Arc::new(LearningSink {
        recorder: learners.recorder.clone(),
        evolution: learners.evolution.clone(),
        memory: learners.memory.clone(),
        events: events.clone(),
        learning: learners.learning.clone(),
        answered: Default::default(),
    });
    let injector = ContextInjector::new(
        learners.skills.as_ref().map(|s| s.current.clone()),
        learners.semantic_query.clone(),
        learners.memory.clone(),
        config.injection.token_budget as usize,
    );
    let sticky = {
        let (db, recorder) = (paths.db.clone(), learners.recorder.clone());
        tokio::task::spawn_blocking(move || SqliteSticky::open(db, recorder))
            .await
            .map_err(|e| EngineError::Task(e.to_string()))?
            .map_err(|e| EngineError::Recorder(e.to_string()))?
    };
    let mut app_state = AppState::new(
        resolved.proxy.clone(),
        Arc::new(injector),
        sink,
        config.memory.scope.clone(),
    )
    .map_err(|e| EngineError::Bind(format!("cannot build the HTTP client: {e}")))?
    .with_sticky_store(Arc::new(sticky));
    if let Some(learning) = &learners.learning {
        app_state = app_state.with_local_model(learning.model());
    }
    let state: SharedState = Arc::new(app_state);
    if let Some(memory) = &learners.memory {
        let readers = memory.readers().clone();
        state.sessions.on_quiet(Box::new(move || readers.release()));
    }
    {
        let recorder = learners.recorder.clone();
        state
            .sessions
            .on_quiet(Box::new(move || recorder.release_memory()));
    }
    metaclaw_proxy::check_bind(&state).map_err(EngineError::Bind)?;
    let bind = state.config.bind;
    let listener = TcpListener::bind(bind).await.map_err(|e| {
        let message = format!(
            "cannot listen on {bind}: {e} (is another program using port {}? choose another with --port or `metaclaw config set proxy.port N`)",
            bind.port()
        );
        if e.kind() == std::io::ErrorKind::AddrInUse {
            EngineError::PortBusy {
                port: bind.port(),
                message,
            }
        } else {
            EngineError::Bind(message)
        }
    })?;
    let addr = listener
        .local_addr()
        .map_err(|e| EngineError::Bind(e.to_string()))?;
    Ok((state, listener, addr))
}
