//! Shared serde helpers for the lenient shapes seen in the wild.

use serde::Deserialize;
use serde::de::{self, DeserializeOwned, Deserializer, SeqAccess, Visitor};
use serde_json::Value;
use std::fmt;
use std::marker::PhantomData;

/// Content that is either a plain string or an array of parts/blocks.
pub(crate) enum StrOrSeq<T> {
    Str(String),
    Seq(Vec<T>),
}

pub(crate) fn str_or_seq<'de, D, T>(d: D, expecting: &'static str) -> Result<StrOrSeq<T>, D::Error>
where
    D: Deserializer<'de>,
    T: DeserializeOwned,
{
    struct V<T>(&'static str, PhantomData<T>);
    impl<'de, T: DeserializeOwned> Visitor<'de> for V<T> {
        type Value = StrOrSeq<T>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str(self.0)
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
            Ok(StrOrSeq::Str(v.to_owned()))
        }
        fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
            Ok(StrOrSeq::Str(v))
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(64));
            while let Some(item) = seq.next_element()? {
                out.push(item);
            }
            Ok(StrOrSeq::Seq(out))
        }
    }
    d.deserialize_any(V(expecting, PhantomData))
}

/// Tool-call arguments: a JSON string, or (LM Studio) a JSON object that is re-encoded.
pub(crate) fn arguments<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    Ok(match Value::deserialize(d)? {
        Value::String(s) => s,
        Value::Null => String::new(),
        other => other.to_string(),
    })
}

/// Like [`arguments`], for the optional field of a streamed delta.
pub(crate) fn opt_arguments<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    Ok(match Value::deserialize(d)? {
        Value::String(s) => Some(s),
        Value::Null => None,
        other => Some(other.to_string()),
    })
}
