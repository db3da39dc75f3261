//! Step 9: (re)start MetaClaw in the background so it serves the new provider, then send a
//! test request the way the user's agent will: through each connected agent's own config,
//! or straight to the proxy with the proxy key when no agent is connected.

use metaclaw_engine::agents::{self, VERIFY_TIMEOUT};
use metaclaw_engine::config::Config;
use metaclaw_engine::paths::Paths;
use metaclaw_engine::runfiles::RunInfo;
use metaclaw_engine::secrets::SecretStore;
use metaclaw_engine::setup::{self, Env, Verified};
use tokio::runtime::Runtime;

use super::super::{daemon, stop};
use crate::cli::StartArgs;
use crate::exit::{Failure, Outcome};
use crate::output;

pub fn restart(paths: &Paths) -> Outcome {
    output::line("");
    if RunInfo::read(paths)?.is_some_and(|i| i.is_alive()) {
        output::line("Stopping the running MetaClaw so it picks up the new settings…");
        stop::run(paths)?;
    }
    daemon::spawn(
        paths,
        &StartArgs {
            daemon: true,
            headless: true,
            ..StartArgs::default()
        },
    )
}

pub fn test_request(
    runtime: &Runtime,
    env: &Env,
    config: &Config,
    store: &SecretStore,
    connected: &[String],
) -> Outcome {
    if connected.is_empty() {
        // Outside the runtime: reading the proxy key may use the keychain.
        let endpoint = setup::proxy_endpoint(config, store)?;
        let result = runtime.block_on(setup::verify_proxy(&endpoint));
        return outcome("Test request to MetaClaw", result);
    }
    for name in connected {
        let result = agents::endpoint(env, store, name)
            .and_then(|ep| runtime.block_on(agents::verify(name, &ep, VERIFY_TIMEOUT)));
        outcome(&format!("Test request as {name} sends it"), result)?;
    }
    Ok(())
}

fn outcome<E: std::fmt::Display>(what: &str, result: Result<Verified, E>) -> Outcome {
    match result {
        Ok(v) => {
            let model = v.model.map(|m| format!(", model {m}")).unwrap_or_default();
            output::line(format!(
                "{what}: ok (HTTP {}{model}, {} ms)",
                v.status, v.elapsed_ms
            ));
            Ok(())
        }
        Err(e) => Err(Failure::error(format!(
            "{what} failed: {e}. The config is saved; see `metaclaw logs`"
        ))),
    }
}
