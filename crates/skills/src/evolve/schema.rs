//! The structured-output schema the evolver is asked to follow.
//!
//! It stays within OpenAI's strict-mode subset (every property required, no extra
//! properties, optional values as nullable, no length keywords), so the same schema works
//! with `strict: true`; the limits are enforced by `decide` instead.

use serde_json::{Value, json};

use crate::skill::CATEGORIES;

/// JSON schema of the answer: `{"skills": [{name, description, category, tags, body, improves}]}`.
pub fn response_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "skills": {
                "type": "array",
                "description": "New or improved skills; empty when the turns teach nothing reusable.",
                "items": {
                    "type": "object",
                    "properties": {
                        "name": {
                            "type": "string",
                            "description": "Lowercase hyphenated slug, at most 64 characters."
                        },
                        "description": {
                            "type": "string",
                            "description": "One sentence: when the skill applies and what it achieves."
                        },
                        "category": { "type": "string", "enum": CATEGORIES },
                        "tags": {
                            "type": "array",
                            "items": { "type": "string" },
                            "description": "0 to 6 short lowercase keywords."
                        },
                        "body": {
                            "type": "string",
                            "description": "Markdown as short as the lesson: one or two sentences for a stated rule; 6 to 40 lines (title, when to use, numbered steps, anti-patterns) for a procedure."
                        },
                        "improves": {
                            "type": ["string", "null"],
                            "description": "Exact name of the existing skill this one improves, or null."
                        }
                    },
                    "required": ["name", "description", "category", "tags", "body", "improves"],
                    "additionalProperties": false
                }
            }
        },
        "required": ["skills"],
        "additionalProperties": false
    })
}

/// The whole OpenAI `response_format` value wrapping [`response_schema`].
pub fn response_format() -> Value {
    json!({
        "type": "json_schema",
        "json_schema": {
            "name": "metaclaw_skills",
            "strict": true,
            "schema": response_schema()
        }
    })
}
