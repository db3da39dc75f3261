//! Translation between the OpenAI and Anthropic protocols.

mod cache;
pub(crate) mod ids;
mod request;
mod response;
mod stream_a2o;
mod stream_o2a;

pub use request::{anthropic_request_to_openai, openai_request_to_anthropic};
pub use response::{anthropic_response_to_openai, openai_response_to_anthropic};
pub use stream_a2o::AnthropicToOpenAiStream;
pub use stream_o2a::OpenAiToAnthropicStream;

use crate::{anthropic, openai};

/// `max_tokens` for an Anthropic upstream when the OpenAI client set no limit.
pub const DEFAULT_MAX_TOKENS: u32 = 4096;

/// OpenAI `finish_reason` → Anthropic `stop_reason`.
pub fn stop_reason_from_openai(finish_reason: &str) -> &'static str {
    match finish_reason {
        "length" => "max_tokens",
        "tool_calls" | "function_call" => "tool_use",
        "content_filter" => "refusal",
        _ => "end_turn",
    }
}

/// Anthropic `stop_reason` → OpenAI `finish_reason`.
pub fn finish_reason_from_anthropic(stop_reason: &str) -> &'static str {
    match stop_reason {
        "max_tokens" | "model_context_window_exceeded" => "length",
        "tool_use" => "tool_calls",
        "refusal" => "content_filter",
        _ => "stop",
    }
}

/// Anthropic usage → OpenAI usage: cached and cache-written tokens are part of the prompt.
pub fn usage_to_openai(u: &anthropic::Usage) -> openai::Usage {
    let read = u.cache_read_input_tokens.unwrap_or(0);
    let prompt = u.input_tokens + read + u.cache_creation_input_tokens.unwrap_or(0);
    openai::Usage {
        prompt_tokens: prompt,
        completion_tokens: u.output_tokens,
        total_tokens: prompt + u.output_tokens,
        prompt_tokens_details: u
            .cache_read_input_tokens
            .map(|c| openai::PromptTokensDetails {
                cached_tokens: Some(c),
                extra: Default::default(),
            }),
        extra: Default::default(),
    }
}

/// OpenAI usage → Anthropic usage: cached tokens move out of `input_tokens`.
pub fn usage_to_anthropic(u: &openai::Usage) -> anthropic::Usage {
    let cached = u
        .prompt_tokens_details
        .as_ref()
        .and_then(|d| d.cached_tokens);
    anthropic::Usage {
        input_tokens: u.prompt_tokens.saturating_sub(cached.unwrap_or(0)),
        output_tokens: u.completion_tokens,
        cache_creation_input_tokens: None,
        cache_read_input_tokens: cached,
        extra: Default::default(),
    }
}

/// Seconds since the Unix epoch, for `created`.
fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}
