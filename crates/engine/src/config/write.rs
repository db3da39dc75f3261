//! Writing `config.yaml` after an edit. The file as the user wrote it is changed only where
//! the document changed — comments, order and layout stay — by the same YAML editor that
//! edits agents' configs. When that cannot reproduce the new document exactly (a shape it
//! does not edit, non-string keys), the document is re-serialised instead: correct, but
//! without the comments.

use std::path::Path;

use metaclaw_claws::Format;
use serde_yaml_ng::{Mapping, Value};

use super::ConfigError;
use crate::paths::write_private_file;

/// Writes `doc` to `path` (atomically, 0600), keeping the current file's text where `doc`
/// did not change it.
pub(crate) fn write_doc(path: &Path, doc: &Value) -> Result<(), ConfigError> {
    let write_error = |source| ConfigError::Write {
        path: path.to_owned(),
        source,
    };
    let before = std::fs::read_to_string(path).unwrap_or_default();
    let text = match edited_text(&before, doc) {
        Some(text) => text,
        None => serde_yaml_ng::to_string(doc).map_err(|e| write_error(std::io::Error::other(e)))?,
    };
    write_private_file(path, text.as_bytes()).map_err(write_error)
}

/// `before` edited into `doc`, or `None` when the editor cannot get there exactly.
fn edited_text(before: &str, doc: &Value) -> Option<String> {
    let old = match serde_yaml_ng::from_str::<Value>(before).ok()? {
        Value::Null => Value::Mapping(Mapping::new()),
        v => v,
    };
    let mut edits = Vec::new();
    diff(&old, doc, &mut Vec::new(), &mut edits)?;
    let mut text = metaclaw_claws::doc::open(Format::Yaml, before).ok()?;
    for (path, value) in &edits {
        let path: Vec<&str> = path.iter().map(String::as_str).collect();
        match value {
            Some(v) => text.set(&path, &serde_json::to_value(v).ok()?).ok()?,
            None => {
                text.remove(&path).ok()?;
            }
        }
    }
    let rendered = text.render();
    let reread = match serde_yaml_ng::from_str::<Value>(&rendered).ok()? {
        Value::Null => Value::Mapping(Mapping::new()),
        v => v,
    };
    (reread == *doc).then_some(rendered)
}

type Edit = (Vec<String>, Option<Value>);

/// The sets (`Some`) and removals (`None`) that turn `old` into `new`, section by section;
/// `None` when a key is not a string.
fn diff(old: &Value, new: &Value, at: &mut Vec<String>, out: &mut Vec<Edit>) -> Option<()> {
    let (Value::Mapping(o), Value::Mapping(n)) = (old, new) else {
        if old != new {
            out.push((at.clone(), Some(new.clone())));
        }
        return Some(());
    };
    for (k, v) in n {
        at.push(k.as_str()?.to_owned());
        match o.get(k) {
            Some(prev) => diff(prev, v, at, out)?,
            None => out.push((at.clone(), Some(v.clone()))),
        }
        at.pop();
    }
    for k in o.keys().filter(|k| !n.contains_key(*k)) {
        at.push(k.as_str()?.to_owned());
        out.push((at.clone(), None));
        at.pop();
    }
    Some(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn edit(before: &str, after: &str) -> Option<String> {
        edited_text(before, &serde_yaml_ng::from_str(after).unwrap())
    }

    #[test]
    fn comments_and_order_survive_a_changed_value() {
        let before = "# my MetaClaw\nmode: skills_only   # for now\nllm:\n  # the provider\n  api_base: https://a.example/v1\n  model_id: m1\n";
        let out = edit(
            before,
            "mode: skills_only\nllm:\n  api_base: https://a.example/v1\n  model_id: m2\n",
        )
        .unwrap();
        assert_eq!(out, before.replace("model_id: m1", "model_id: m2"));
    }

    #[test]
    fn added_and_removed_keys_keep_the_rest() {
        let before = "# top\nmode: rl # chosen\nclaw_type: copaw\n";
        let out = edit(before, "mode: rl\nproxy:\n  port: 31000\n").unwrap();
        assert!(out.starts_with("# top\nmode: rl # chosen\n"), "{out}");
        assert!(!out.contains("claw_type"), "{out}");
        let v: Value = serde_yaml_ng::from_str(&out).unwrap();
        assert_eq!(v["proxy"]["port"], Value::from(31000));
    }

    #[test]
    fn an_empty_file_gets_the_document() {
        let out = edit("", "mode: rl\n").unwrap();
        let v: Value = serde_yaml_ng::from_str(&out).unwrap();
        assert_eq!(v["mode"], Value::from("rl"));
    }

    #[test]
    fn non_string_keys_fall_back() {
        assert_eq!(edit("1: a\n", "1: b\n"), None);
    }
}
