//! Field-level parsing and validation, run inside deserialisation so an error carries the key
//! and the line of the offending value.

use serde::de::{self, Deserializer, Unexpected};

/// YAML 1.1 configs (and hand-written ones) spell booleans `yes`/`no`/`on`/`off`; YAML 1.2,
/// which the parser follows, reads those as strings.
pub(crate) fn flexible_bool<'de, D: Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    struct V;
    impl de::Visitor<'_> for V {
        type Value = bool;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a boolean (true/false, yes/no, on/off)")
        }
        fn visit_bool<E: de::Error>(self, v: bool) -> Result<bool, E> {
            Ok(v)
        }
        fn visit_i64<E: de::Error>(self, v: i64) -> Result<bool, E> {
            match v {
                0 => Ok(false),
                1 => Ok(true),
                _ => Err(E::invalid_value(Unexpected::Signed(v), &self)),
            }
        }
        fn visit_u64<E: de::Error>(self, v: u64) -> Result<bool, E> {
            match i64::try_from(v) {
                Ok(i) => self.visit_i64(i),
                Err(_) => Err(E::invalid_value(Unexpected::Unsigned(v), &self)),
            }
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<bool, E> {
            parse_bool(v).ok_or_else(|| E::invalid_value(Unexpected::Str(v), &self))
        }
    }
    d.deserialize_any(V)
}

/// The spellings accepted for a boolean, on load and by `config set`.
pub(crate) fn parse_bool(s: &str) -> Option<bool> {
    match s.trim().to_ascii_lowercase().as_str() {
        "true" | "yes" | "on" | "1" => Some(true),
        "false" | "no" | "off" | "0" | "" => Some(false),
        _ => None,
    }
}

pub(crate) fn port<'de, D: Deserializer<'de>>(d: D) -> Result<u16, D::Error> {
    let v = d.deserialize_u64(InRange {
        min: 1,
        max: 65535,
        what: "a port between 1 and 65535",
    })?;
    u16::try_from(v).map_err(de::Error::custom)
}

pub(crate) fn max_body_mb<'de, D: Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
    let v = d.deserialize_u64(InRange {
        min: 1,
        max: 1024,
        what: "a size between 1 and 1024 (MB)",
    })?;
    u32::try_from(v).map_err(de::Error::custom)
}

/// Durations and counts that would make no sense as zero (a 0 s timeout fails every request).
pub(crate) fn positive<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    d.deserialize_u64(InRange {
        min: 1,
        max: u64::MAX,
        what: "a number greater than 0",
    })
}

/// Checks run inside the visitor, so the parser attributes an error to the value itself
/// (its key and line) rather than to the enclosing section.
struct InRange {
    min: u64,
    max: u64,
    what: &'static str,
}

impl de::Visitor<'_> for InRange {
    type Value = u64;
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.what)
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<u64, E> {
        if (self.min..=self.max).contains(&v) {
            Ok(v)
        } else {
            Err(E::invalid_value(Unexpected::Unsigned(v), &self))
        }
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<u64, E> {
        match u64::try_from(v) {
            Ok(u) => self.visit_u64(u),
            Err(_) => Err(E::invalid_value(Unexpected::Signed(v), &self)),
        }
    }
}

/// A string that must pass `check`; see [`InRange`] for why this is a visitor.
pub(crate) struct CheckedStr(pub(crate) fn(&str) -> Result<(), String>);

impl de::Visitor<'_> for CheckedStr {
    type Value = String;
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a string")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<String, E> {
        (self.0)(v).map_err(E::custom)?;
        Ok(v.to_owned())
    }
}

/// An optional base URL: empty means "not configured", anything else must be http(s).
pub(crate) fn url<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    d.deserialize_str(CheckedStr(check_url))
}

fn check_url(s: &str) -> Result<(), String> {
    if s.is_empty() {
        return Ok(());
    }
    let rest = s
        .strip_prefix("https://")
        .or_else(|| s.strip_prefix("http://"))
        .ok_or_else(|| format!("must be an http:// or https:// URL, got `{s}`"))?;
    let host = rest.split(['/', '?', '#']).next().unwrap_or_default();
    if host.is_empty() || s.chars().any(char::is_whitespace) {
        return Err(format!(
            "must be an http:// or https:// URL with a host, got `{s}`"
        ));
    }
    Ok(())
}

/// `skills.evolver_api`, `memory.extractor_api`: a typo must fail at load, not silently pick the wrong protocol. A
/// visitor (see `de::CheckedStr`) so the error names the key.
pub(super) fn api_name<'d, D: Deserializer<'d>>(d: D) -> Result<String, D::Error> {
    d.deserialize_str(CheckedStr(check_api))
}

fn check_api(s: &str) -> Result<(), String> {
    match s {
        "" | "openai" | "anthropic" => Ok(()),
        other => Err(format!(
            "must be openai, anthropic, or empty to use llm.api; got `{other}`"
        )),
    }
}

/// A positive number of minutes, whole or not (`0.5` is thirty seconds).
pub(crate) fn positive_minutes<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    d.deserialize_f64(PositiveMinutes)
}

struct PositiveMinutes;

impl de::Visitor<'_> for PositiveMinutes {
    type Value = f64;
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a number of minutes greater than 0")
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<f64, E> {
        if v.is_finite() && v > 0.0 {
            Ok(v)
        } else {
            Err(E::invalid_value(Unexpected::Float(v), &self))
        }
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<f64, E> {
        self.visit_f64(v as f64)
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<f64, E> {
        self.visit_f64(v as f64)
    }
}
