//! Checks and normalisation shared by insert, update and import, so every path stores the
//! same shapes.

use crate::MemoryError;

/// Longest content accepted, in characters: a unit is a fact, not a transcript.
pub const MAX_CONTENT_CHARS: usize = 8_000;

pub(crate) fn content(text: &str) -> Result<(), MemoryError> {
    if text.trim().is_empty() {
        return Err(MemoryError::Invalid("content is empty".to_owned()));
    }
    let chars = text.chars().count();
    if chars > MAX_CONTENT_CHARS {
        return Err(MemoryError::Invalid(format!(
            "content has {chars} characters, more than {MAX_CONTENT_CHARS}"
        )));
    }
    Ok(())
}

/// Longest scope name accepted, in characters: scopes are names (a user, a workspace).
pub const MAX_SCOPE_CHARS: usize = 200;

pub(crate) fn scope(scope: &str) -> Result<(), MemoryError> {
    if scope.trim().is_empty() {
        return Err(MemoryError::Invalid("scope is empty".to_owned()));
    }
    let chars = scope.chars().count();
    if chars > MAX_SCOPE_CHARS {
        return Err(MemoryError::Invalid(format!(
            "scope has {chars} characters, more than {MAX_SCOPE_CHARS}"
        )));
    }
    if scope.chars().any(char::is_control) {
        return Err(MemoryError::Invalid(
            "scope contains control characters".to_owned(),
        ));
    }
    Ok(())
}

/// An expiry is a moment in milliseconds since 1970; zero or negative is a mistake, not "now".
pub(crate) fn expiry(expires_ms: Option<i64>) -> Result<(), MemoryError> {
    match expires_ms {
        Some(t) if t <= 0 => Err(MemoryError::Invalid(format!(
            "expires_ms must be a time in milliseconds since 1970, not {t}"
        ))),
        _ => Ok(()),
    }
}

/// Clamps to 0..=1; NaN becomes 0 so it cannot poison scoring.
pub(crate) fn unit_interval(v: f32) -> f32 {
    if v.is_nan() { 0.0 } else { v.clamp(0.0, 1.0) }
}

/// Lowercased, trimmed, empty ones dropped, duplicates removed (first occurrence wins).
pub(crate) fn tags(tags: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(tags.len());
    for tag in tags {
        let tag = tag.trim().to_lowercase();
        if !tag.is_empty() && !out.contains(&tag) {
            out.push(tag);
        }
    }
    out
}

/// Entities keep their case (they are names) but are trimmed and deduplicated.
pub(crate) fn entities(entities: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(entities.len());
    for e in entities {
        let e = e.trim();
        if !e.is_empty() && !out.iter().any(|o| o == e) {
            out.push(e.to_owned());
        }
    }
    out
}

/// An empty fact key means none.
pub(crate) fn fact_key(key: Option<&str>) -> Option<String> {
    key.map(str::trim)
        .filter(|k| !k.is_empty())
        .map(str::to_owned)
}
