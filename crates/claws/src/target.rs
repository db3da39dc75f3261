//! Where an agent should send its requests: MetaClaw's proxy.

use std::fmt;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// The wire protocol an agent speaks to its provider.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Protocol {
    /// OpenAI chat completions (`{base}/chat/completions`, base ending in `/v1`).
    OpenAi,
    /// Anthropic messages (`{base}/v1/messages`, base without `/v1`).
    Anthropic,
}

/// How an agent reaches MetaClaw.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// The agent sends its LLM requests through MetaClaw's proxy.
    Proxy,
    /// The agent talks to its provider itself and runs MetaClaw inside (hooks calling the
    /// `metaclaw` binary, which asks the engine's plugin API).
    Plugin,
}

/// The `metaclaw` command a plugin-mode agent runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginHost {
    /// The binary, by absolute path: hooks run without MetaClaw's `PATH`.
    pub program: PathBuf,
    /// `METACLAW_HOME` for the command; `None` for the default home.
    pub home: Option<PathBuf>,
    /// MetaClaw's home, absolute, whichever it is: plugin packages are written under it
    /// (`integrations/<agent>`) and find the running engine through its run files.
    pub metaclaw_home: PathBuf,
}

/// MetaClaw's proxy as agents see it.
#[derive(Clone, PartialEq, Eq)]
pub struct Target {
    /// `http://127.0.0.1:<port>/v1`.
    pub openai_base: String,
    /// `http://127.0.0.1:<port>`.
    pub anthropic_base: String,
    /// The proxy key agents present. Written into the agent's own config (it needs it),
    /// never into logs, errors or MetaClaw's config.
    pub api_key: String,
    /// The model id agents ask for (`llm.model_id`, else `metaclaw-model`).
    pub model: String,
    /// Advertised to agents that size their prompts by it.
    pub context_window: u32,
    /// Most tokens per reply advertised where the agent asks for it.
    pub max_tokens: u32,
    /// The protocol MetaClaw's own upstream speaks (`llm.api`): offered to agents that can
    /// speak either, so a request needs no translation on the way through.
    pub prefer: Protocol,
    /// The command plugin-mode agents run; `None` when this caller does not connect
    /// plugins (they are then refused, never connected half-way).
    pub plugin: Option<PluginHost>,
}

impl Target {
    pub fn local(port: u16, api_key: impl Into<String>, model: impl Into<String>) -> Self {
        Target {
            openai_base: format!("http://127.0.0.1:{port}/v1"),
            anthropic_base: format!("http://127.0.0.1:{port}"),
            api_key: api_key.into(),
            model: model.into(),
            context_window: 200_000,
            max_tokens: 8_192,
            prefer: Protocol::OpenAi,
            plugin: None,
        }
    }

    pub fn base(&self, protocol: Protocol) -> &str {
        match protocol {
            Protocol::OpenAi => &self.openai_base,
            Protocol::Anthropic => &self.anthropic_base,
        }
    }
}

impl fmt::Debug for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Target")
            .field("openai_base", &self.openai_base)
            .field("anthropic_base", &self.anthropic_base)
            .field("api_key", &"<redacted>")
            .field("model", &self.model)
            .field("context_window", &self.context_window)
            .field("max_tokens", &self.max_tokens)
            .field("plugin", &self.plugin)
            .finish()
    }
}

/// Where an agent's config currently points, read back from the file.
#[derive(Clone, PartialEq, Eq)]
pub struct Endpoint {
    pub protocol: Protocol,
    pub base: String,
    /// The key the agent will send (may be empty).
    pub api_key: String,
    pub model: String,
}

impl fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Endpoint")
            .field("protocol", &self.protocol)
            .field("base", &self.base)
            .field("api_key", &"<redacted>")
            .field("model", &self.model)
            .finish()
    }
}
