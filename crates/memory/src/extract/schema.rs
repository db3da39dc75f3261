//! The structured-output schema the extraction model is asked to follow.
//!
//! It stays within OpenAI's strict-mode subset (every property required, no extra
//! properties, optional values as nullable, no length or range keywords), so the same schema
//! works with `strict: true`; limits are enforced by `parse` instead.

use serde_json::{Value, json};

use crate::unit::Kind;

/// The kinds the model may emit: all but `working_summary`, which MetaClaw writes itself.
pub fn extractable_kinds() -> Vec<&'static str> {
    Kind::ALL
        .into_iter()
        .filter(|k| *k != Kind::WorkingSummary)
        .map(Kind::as_str)
        .collect()
}

/// JSON schema of the answer: `{"memories": [{kind, content, fact_key, importance,
/// confidence, tags, source_turn}]}`.
pub fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "memories": {
                "type": "array",
                "description": "Durable facts about the user worth remembering across sessions; empty when there are none.",
                "items": {
                    "type": "object",
                    "properties": {
                        "kind": { "type": "string", "enum": extractable_kinds() },
                        "content": {
                            "type": "string",
                            "description": "One self-contained sentence in the user's language."
                        },
                        "fact_key": {
                            "type": ["string", "null"],
                            "description": "Short lowercase slot such as pref:time_format; reuse a known slot when the value changed."
                        },
                        "importance": { "type": "number", "description": "0 to 1." },
                        "confidence": { "type": "number", "description": "0 to 1." },
                        "tags": {
                            "type": "array",
                            "items": { "type": "string" },
                            "description": "0 to 5 short lowercase keywords."
                        },
                        "source_turn": {
                            "type": ["integer", "null"],
                            "description": "The turn number the fact comes from, or null."
                        }
                    },
                    "required": ["kind", "content", "fact_key", "importance", "confidence", "tags", "source_turn"],
                    "additionalProperties": false
                }
            }
        },
        "required": ["memories"],
        "additionalProperties": false
    })
}

/// The whole OpenAI `response_format` value wrapping [`schema`].
pub fn response_format() -> Value {
    json!({
        "type": "json_schema",
        "json_schema": {
            "name": "metaclaw_memories",
            "strict": true,
            "schema": schema()
        }
    })
}
