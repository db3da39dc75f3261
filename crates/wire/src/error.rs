/// Errors of parsing and translation. Messages are meant to be shown to API clients as is.
#[derive(Debug, thiserror::Error)]
pub enum WireError {
    /// The body is not valid JSON or does not have the expected shape.
    #[error("{path}: {message}")]
    Parse { path: String, message: String },
    /// A request ended up with no messages at all.
    #[error("messages: at least one non-empty message is required")]
    EmptyMessages,
    /// A message cannot be translated.
    #[error("messages[{index}]: {reason}")]
    InvalidMessage { index: usize, reason: String },
    /// A recorded stream held no parseable event.
    #[error("stream: no parseable event")]
    EmptyStream,
}

impl WireError {
    /// Parses `bytes` as `T`, reporting the JSON path of the first problem.
    pub(crate) fn parse<T: serde::de::DeserializeOwned>(bytes: &[u8]) -> Result<T, WireError> {
        let de = &mut serde_json::Deserializer::from_slice(bytes);
        let value = serde_path_to_error::deserialize(de).map_err(|e| {
            let path = e.path().to_string();
            let path = if path == "." || path == "?" {
                "body".to_owned()
            } else {
                path
            };
            WireError::Parse {
                path,
                message: e.into_inner().to_string(),
            }
        })?;
        Ok(value)
    }
}
