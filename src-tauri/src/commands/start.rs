//! `metaclaw start`: run the engine in the foreground until a signal or `metaclaw stop` (with the
//! `desktop` feature and a display, inside the tray app unless --headless).

use metaclaw_engine::config::{Mode, Overrides};
use metaclaw_engine::paths::Paths;
use metaclaw_engine::run::{Engine, StartOptions, Stopped};
use tokio_util::sync::CancellationToken;

use super::daemon;
use crate::cli::StartArgs;
use crate::exit::{Failure, Outcome};

pub fn run(paths: Paths, args: StartArgs) -> Outcome {
    let overrides = overrides(&args)?;
    let paths = match &args.config {
        Some(c) => {
            if !c.is_file() {
                return Err(Failure::usage(format!(
                    "config file {} does not exist",
                    c.display()
                )));
            }
            paths.with_config_file(c.clone())
        }
        None => paths,
    };
    if args.daemon {
        return daemon::spawn(&paths, &args);
    }
    if args.log_file.is_some() {
        // In the foreground, output goes to the terminal and the daily file in logs/.
        return Err(Failure::usage(
            "--log-file only applies with --daemon (it is where the daemon's output goes)",
        ));
    }
    let _logs = metaclaw_engine::logging::init_server_logging(&paths)?;
    #[cfg(feature = "desktop")]
    if !args.headless {
        if crate::desktop::display_available() {
            return crate::desktop::run(paths, overrides, args.hidden, args.wechat_relogin);
        }
        tracing::info!("no display (DISPLAY and WAYLAND_DISPLAY are unset): running headless");
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let stop = CancellationToken::new();
        {
            let stop = stop.clone();
            tokio::spawn(async move {
                wait_for_signal().await;
                tracing::info!("signal received; shutting down");
                stop.cancel();
            });
        }
        let mut options = StartOptions {
            overrides,
            wechat_relogin: args.wechat_relogin,
            ..StartOptions::default()
        };
        super::wechat_login::follow_events(&options.events);
        loop {
            let engine = Engine::start(paths.clone(), options.clone())
                .await
                .map_err(Failure::error)?;
            let (addr, token) = (engine.addr(), engine.admin_token().to_owned());
            let engine_stop = engine.shutdown_token();
            let forward = stop.clone();
            let relay = tokio::spawn(async move {
                forward.cancelled().await;
                engine_stop.cancel();
            });
            let stopped = engine.wait().await.map_err(Failure::error)?;
            relay.abort();
            if stopped == Stopped::Shutdown || stop.is_cancelled() {
                return Ok(());
            }
            tracing::info!("starting again with the new settings");
            options = options.for_restart(addr, &token);
        }
    })
}

fn overrides(args: &StartArgs) -> Result<Overrides, Failure> {
    let mode = match &args.mode {
        Some(m) => Some(Mode::parse(m).ok_or_else(|| {
            Failure::usage(format!(
                "unknown mode `{m}` (expected one of: {})",
                Mode::NAMES.join(", ")
            ))
        })?),
        None => None,
    };
    Ok(Overrides {
        mode,
        port: args.port,
    })
}

pub(crate) async fn wait_for_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
