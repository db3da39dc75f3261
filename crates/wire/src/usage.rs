//! Token usage of a reply in one convention for both protocols, as MetaClaw records it.
//!
//! `input_tokens` is the whole prompt: OpenAI's `prompt_tokens` (which already counts cached
//! tokens), or Anthropic's `input_tokens + cache_read_input_tokens +
//! cache_creation_input_tokens` (Anthropic's `input_tokens` counts only the uncached rest).
//! `cache_read_tokens` and `cache_write_tokens` are the parts of it read from and written to
//! the provider's prompt cache, `None` when the provider did not report them.

use serde_json::Value;

use crate::{anthropic, openai};

/// Token counts of one reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TokenUsage {
    pub input_tokens: Option<u64>,
    pub output_tokens: Option<u64>,
    pub cache_read_tokens: Option<u64>,
    pub cache_write_tokens: Option<u64>,
}

impl TokenUsage {
    /// Whether the reply said anything about tokens.
    pub fn is_known(&self) -> bool {
        self.input_tokens.is_some() || self.output_tokens.is_some()
    }
}

impl From<&openai::Usage> for TokenUsage {
    fn from(u: &openai::Usage) -> Self {
        let details = u.prompt_tokens_details.as_ref();
        TokenUsage {
            input_tokens: Some(u.prompt_tokens),
            output_tokens: Some(u.completion_tokens),
            cache_read_tokens: details.and_then(|d| d.cached_tokens),
            cache_write_tokens: details
                .and_then(|d| d.extra.get("cache_write_tokens"))
                .or_else(|| u.extra.get("cache_creation_input_tokens"))
                .and_then(Value::as_u64),
        }
    }
}

impl From<&anthropic::Usage> for TokenUsage {
    fn from(u: &anthropic::Usage) -> Self {
        let read = u.cache_read_input_tokens;
        let write = u.cache_creation_input_tokens;
        TokenUsage {
            input_tokens: Some(u.input_tokens + read.unwrap_or(0) + write.unwrap_or(0)),
            output_tokens: Some(u.output_tokens),
            cache_read_tokens: read,
            cache_write_tokens: write,
        }
    }
}

/// Usage of an assembled (or non-streamed) OpenAI reply.
pub fn usage_openai(reply: &Value) -> TokenUsage {
    reply
        .get("usage")
        .filter(|u| u.is_object())
        .and_then(|u| serde_json::from_value::<openai::Usage>(u.clone()).ok())
        .map(|u| TokenUsage::from(&u))
        .unwrap_or_default()
}

/// Usage of an assembled (or non-streamed) Anthropic reply.
pub fn usage_anthropic(reply: &Value) -> TokenUsage {
    reply
        .get("usage")
        .filter(|u| u.is_object())
        .and_then(|u| serde_json::from_value::<anthropic::Usage>(u.clone()).ok())
        .map(|u| TokenUsage::from(&u))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn openai_prompt_tokens_already_include_the_cached_part() {
        let u = usage_openai(
            &json!({"usage": {"prompt_tokens": 100, "completion_tokens": 5,
            "prompt_tokens_details": {"cached_tokens": 80}}}),
        );
        assert_eq!(
            u,
            TokenUsage {
                input_tokens: Some(100),
                output_tokens: Some(5),
                cache_read_tokens: Some(80),
                cache_write_tokens: None,
            }
        );
        assert_eq!(usage_openai(&json!({"usage": null})), TokenUsage::default());
        assert!(!usage_openai(&json!({})).is_known());
    }

    #[test]
    fn anthropic_cache_reads_and_writes_are_added_to_the_prompt() {
        let u = usage_anthropic(&json!({"usage": {"input_tokens": 10, "output_tokens": 3,
            "cache_read_input_tokens": 70, "cache_creation_input_tokens": 20}}));
        assert_eq!(
            u,
            TokenUsage {
                input_tokens: Some(100),
                output_tokens: Some(3),
                cache_read_tokens: Some(70),
                cache_write_tokens: Some(20),
            }
        );
    }
}
