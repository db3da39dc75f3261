//! `metaclaw models download MODEL` (or `--tokenizer`): a served model's tokenizer and chat
//! template into `$METACLAW_HOME/models/<id>/`, loaded once to prove the trained model can use
//! them.

use metaclaw_engine::config::Config;
use metaclaw_engine::paths::Paths;
use metaclaw_learn::tokenizer::{ChatTokenizer, download_tokenizer};
use serde_json::{Map, json};

use crate::exit::{Failure, Outcome};
use crate::output;

/// What `models download` was asked for on the command line.
#[derive(Debug, Clone, Default)]
pub struct DownloadArgs {
    pub model: Option<String>,
    /// The configured model's tokenizer, when no MODEL is named.
    pub tokenizer: bool,
    pub revision: Option<String>,
    pub hf_endpoint: Option<String>,
}

pub fn download(paths: &Paths, args: DownloadArgs) -> Outcome {
    let model = match non_empty(args.model.as_deref()) {
        Some(m) => m,
        None => configured_model(paths)?,
    };
    // HF_ENDPOINT and HF_TOKEN as the engine reads them; the flags win.
    let mut source = metaclaw_engine::rl::settings::model_source();
    if let Some(url) = non_empty(args.hf_endpoint.as_deref()) {
        source.base_url = url;
    }
    if let Some(rev) = non_empty(args.revision.as_deref()) {
        source.revision = rev;
    }
    output::line(format!(
        "Downloading the {model} tokenizer from {} …",
        source.base_url.trim_end_matches('/')
    ));
    let runtime = crate::admin_client::runtime()?;
    let dir = runtime
        .block_on(download_tokenizer(&source, &paths.home, &model))
        .map_err(|e| Failure::error(format!("cannot download the {model} tokenizer: {e}")))?;
    let tokenizer = ChatTokenizer::from_dir(&dir).map_err(|e| {
        Failure::error(format!(
            "the {model} tokenizer was saved to {} but does not load: {e}",
            dir.display()
        ))
    })?;
    // Rendering a one-line conversation is what serving does first; prove it works now.
    tokenizer
        .render(
            &[json!({"role": "user", "content": "Hello"})],
            None,
            true,
            &Map::new(),
        )
        .map_err(|e| {
            Failure::error(format!(
                "the {model} tokenizer was saved to {} but its chat template does not render: {e}",
                dir.display()
            ))
        })?;
    output::line(format!(
        "Saved {model} tokenizer ({} tokens, chat template ok) to {}",
        tokenizer.vocab_size(),
        dir.display()
    ));
    Ok(())
}

/// `rl.model`, else `llm.model_id`: the model the trained weights build on.
fn configured_model(paths: &Paths) -> Result<String, Failure> {
    let config = Config::load(paths)?.config;
    non_empty(Some(&config.rl.model))
        .or_else(|| non_empty(Some(&config.llm.model_id)))
        .ok_or_else(|| {
            Failure::usage(
                "no model named and none configured: give one (metaclaw models download Qwen/Qwen3-4B) or set rl.model",
            )
        })
}

fn non_empty(s: Option<&str>) -> Option<String> {
    s.map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}
