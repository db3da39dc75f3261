//! A config file opened for editing in its own format, so unrelated settings, comments,
//! order and layout survive. Values cross this interface as JSON values.

use serde_json::Value;

/// Formats agents keep their config in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// JSON with comments, trailing commas, unquoted keys (OpenClaw's `openclaw.json`);
    /// plain JSON is a subset.
    Json5,
    Toml,
    Yaml,
    /// `KEY=value` lines (`.env`).
    Dotenv,
}

/// Why a path could not be edited.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct EditError(pub String);

/// An editable document. Paths are object keys from the root (`["models", "providers",
/// "metaclaw"]`); a `.env` file has one level. Editing never reformats what it does not
/// touch.
pub trait Doc {
    /// The value at `path`, if present.
    fn get(&self, path: &[&str]) -> Option<Value>;
    /// Sets `path` to `value`, creating missing parent objects (tables, mappings). Fails,
    /// changing nothing, when a parent exists and is not an object.
    fn set(&mut self, path: &[&str], value: &Value) -> Result<(), EditError>;
    /// Removes `path`; `false` when it was not there. Parents left empty stay.
    fn remove(&mut self, path: &[&str]) -> Result<bool, EditError>;
    /// The document's text, byte for byte what was read where nothing was edited.
    fn render(&self) -> String;
}

/// Opens `text` in `format`; the error says what does not parse (line and column where
/// the parser gives them).
pub fn open(format: Format, text: &str) -> Result<Box<dyn Doc>, EditError> {
    match format {
        Format::Json5 => crate::formats::json5::open(text),
        Format::Toml => crate::formats::toml::open(text),
        Format::Yaml => crate::formats::yaml::open(text),
        Format::Dotenv => crate::formats::dotenv::open(text),
    }
}
