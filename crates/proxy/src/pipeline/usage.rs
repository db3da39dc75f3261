//! Every streamed turn is recorded with its tokens: an OpenAI stream carries usage only when
//! the request sets `stream_options.include_usage`, so MetaClaw sets it. A client that did not
//! ask never sees the result (see `relay::withhold`); an Anthropic upstream never gets the
//! field (translation drops it) and reports usage on its own.

use serde_json::{Map, Value};

use crate::seams::Protocol;

/// Asks for the stream's usage in an OpenAI client's request, keeping any other
/// `stream_options` the client set.
pub fn ask_for_stream_usage(client: Protocol, body: &mut Map<String, Value>) {
    if client != Protocol::Openai {
        return;
    }
    let options = body
        .entry("stream_options")
        .or_insert_with(|| Value::Object(Map::new()));
    if !options.is_object() {
        *options = Value::Object(Map::new());
    }
    if let Some(o) = options.as_object_mut() {
        o.insert("include_usage".into(), Value::Bool(true));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn asked(client: Protocol, body: Value) -> Value {
        let mut map = body.as_object().cloned().unwrap_or_default();
        ask_for_stream_usage(client, &mut map);
        Value::Object(map)
    }

    #[test]
    fn openai_streams_ask_for_usage_and_keep_other_options() {
        assert_eq!(
            asked(Protocol::Openai, json!({"stream": true})),
            json!({"stream": true, "stream_options": {"include_usage": true}})
        );
        assert_eq!(
            asked(
                Protocol::Openai,
                json!({"stream_options": {"include_usage": false, "x": 1}})
            ),
            json!({"stream_options": {"include_usage": true, "x": 1}})
        );
        assert_eq!(
            asked(Protocol::Openai, json!({"stream_options": null})),
            json!({"stream_options": {"include_usage": true}})
        );
        assert_eq!(
            asked(Protocol::Anthropic, json!({"stream": true})),
            json!({"stream": true})
        );
    }
}
