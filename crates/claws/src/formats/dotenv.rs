//! Placeholder until the dotenv editor lands.

use crate::doc::{Doc, EditError};

pub fn open(_text: &str) -> Result<Box<dyn Doc>, EditError> {
    Err(EditError("the dotenv editor is not built yet".into()))
}
