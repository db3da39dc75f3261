//! The test request setup sends when no agent is connected: one chat request to the proxy
//! with the proxy key, as an agent would send it.

use metaclaw_claws::verify::verify_agent;
use metaclaw_claws::{Endpoint, Protocol, Verified, VerifyError};

use crate::agents::{self, AgentError, VERIFY_TIMEOUT};
use crate::config::Config;
use crate::secrets::SecretStore;

/// The proxy as a client reaches it, with the proxy key (created if there is none yet).
/// Blocking: reads the keychain.
pub fn proxy_endpoint(config: &Config, store: &SecretStore) -> Result<Endpoint, AgentError> {
    let target = agents::target(config, store)?;
    Ok(Endpoint {
        protocol: Protocol::OpenAi,
        base: target.openai_base.clone(),
        api_key: target.api_key.clone(),
        model: target.model.clone(),
    })
}

pub async fn verify_proxy(endpoint: &Endpoint) -> Result<Verified, VerifyError> {
    verify_agent("MetaClaw", endpoint, VERIFY_TIMEOUT).await
}
