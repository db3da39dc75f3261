//! Error bodies in each protocol's shape.

use serde_json::{Value, json};

/// `{"error":{"message","type","code"}}`.
pub fn openai_error(message: &str, kind: &str, code: Option<&str>) -> Value {
    json!({"error": {"message": message, "type": kind, "code": code}})
}

/// `{"type":"error","error":{"type","message"}}`.
pub fn anthropic_error(kind: &str, message: &str) -> Value {
    json!({"type": "error", "error": {"type": kind, "message": message}})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes() {
        assert_eq!(
            openai_error("bad", "invalid_request_error", Some("x")),
            json!({"error":{"message":"bad","type":"invalid_request_error","code":"x"}})
        );
        assert_eq!(
            openai_error("bad", "server_error", None),
            json!({"error":{"message":"bad","type":"server_error","code":null}})
        );
        assert_eq!(
            anthropic_error("overloaded_error", "busy"),
            json!({"type":"error","error":{"type":"overloaded_error","message":"busy"}})
        );
    }
}
