use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum TokenizerError {
    #[error("could not read {}: {source}", .path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{} is not a usable tokenizer: {detail}", .path.display())]
    Load { path: PathBuf, detail: String },
    #[error("{} has no chat_template (and there is no chat_template.jinja next to it)", .path.display())]
    NoTemplate { path: PathBuf },
    #[error("the chat template failed: {0}")]
    Template(String),
    #[error("tokenizing failed: {0}")]
    Encode(String),
    #[error("`{0}` is not a model id (expected a name like Qwen/Qwen3-4B)")]
    InvalidModelId(String),
    #[error("{url} was not found (HTTP 404): check the model id")]
    NotFound { url: String },
    #[error("downloading {url} failed: {detail}")]
    Download { url: String, detail: String },
}
