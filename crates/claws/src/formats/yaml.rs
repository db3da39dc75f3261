//! YAML through `yaml-edit`, a lossless syntax tree: edits change only the entries they
//! touch, so comments, blank lines, quoting and indentation elsewhere survive (the old
//! PyYAML rewrite dropped every comment). Values are read with `serde_yaml_ng`, which
//! also validates the file, and every edit is checked by re-reading the result: an edit
//! the tree got wrong is refused rather than written.

use std::str::FromStr;

use serde_json::{Map, Number, Value};
use serde_yaml_ng::Value as Yaml;
use yaml_edit::{Mapping, YamlFile, YamlNode};

use crate::doc::{Doc, EditError};

pub fn open(text: &str) -> Result<Box<dyn Doc>, EditError> {
    let parsed = read(text)?;
    // The editor must accept it too, or later edits would fail halfway.
    YamlFile::from_str(text).map_err(|e| EditError(format!("YAML: {e}")))?;
    Ok(Box::new(YamlDoc {
        text: text.to_owned(),
        value: parsed,
    }))
}

/// The document as JSON; an empty or comment-only file is an empty mapping.
fn read(text: &str) -> Result<Value, EditError> {
    let yaml: Yaml = serde_yaml_ng::from_str(text).map_err(|e| EditError(format!("YAML: {e}")))?;
    Ok(match yaml {
        Yaml::Null => Value::Object(Map::new()),
        other => to_json(other),
    })
}

fn to_json(yaml: Yaml) -> Value {
    match yaml {
        Yaml::Null => Value::Null,
        Yaml::Bool(b) => Value::Bool(b),
        Yaml::Number(n) => {
            if let Some(u) = n.as_u64() {
                Value::Number(u.into())
            } else if let Some(i) = n.as_i64() {
                Value::Number(i.into())
            } else {
                n.as_f64()
                    .and_then(Number::from_f64)
                    .map_or(Value::Null, Value::Number)
            }
        }
        Yaml::String(s) => Value::String(s),
        Yaml::Sequence(items) => Value::Array(items.into_iter().map(to_json).collect()),
        Yaml::Mapping(map) => {
            let mut out = Map::new();
            for (k, v) in map {
                let key = match k {
                    Yaml::String(s) => s,
                    Yaml::Bool(b) => b.to_string(),
                    Yaml::Number(n) => n.to_string(),
                    // Complex keys cannot be addressed by a path; leave them out.
                    _ => continue,
                };
                out.insert(key, to_json(v));
            }
            Value::Object(out)
        }
        Yaml::Tagged(t) => to_json(t.value),
    }
}

struct YamlDoc {
    /// The current text; only edits change it, so untouched files render verbatim.
    text: String,
    value: Value,
}

fn lookup<'a>(value: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter().try_fold(value, |v, k| v.as_object()?.get(*k))
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "empty",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a mapping",
    }
}

impl Doc for YamlDoc {
    fn get(&self, path: &[&str]) -> Option<Value> {
        lookup(&self.value, path).cloned()
    }

    fn set(&mut self, path: &[&str], value: &Value) -> Result<(), EditError> {
        let Some((last, parents)) = path.split_last() else {
            return Err(EditError("cannot replace a whole YAML document".into()));
        };
        // Refuse before touching anything when a parent is not a mapping.
        let mut cur = &self.value;
        let mut existing_depth = 0;
        for key in parents {
            match cur {
                // `key:` with nothing after it is an empty section: filled like a missing one.
                Value::Object(map) => match map.get(*key).filter(|c| !c.is_null()) {
                    Some(child) => {
                        cur = child;
                        existing_depth += 1;
                    }
                    None => break,
                },
                other => {
                    return Err(EditError(format!(
                        "`{}` is {}, not a mapping",
                        path[..existing_depth].join("."),
                        kind(other)
                    )));
                }
            }
        }
        if existing_depth == parents.len() && !cur.is_object() {
            return Err(EditError(format!(
                "`{}` is {}, not a mapping",
                parents.join("."),
                kind(cur)
            )));
        }
        if lookup(&self.value, path) == Some(value) {
            return Ok(());
        }

        let file = parse_tree(&self.text)?;
        let doc = file.ensure_document();
        let Some(mut mapping) = doc.as_mapping() else {
            return Err(EditError("the YAML document is not a mapping".into()));
        };
        // Walk the parents that exist, then create the rest as one nested value.
        for key in &parents[..existing_depth] {
            mapping = mapping
                .get_mapping(*key)
                .ok_or_else(|| EditError(format!("`{key}` is not a block mapping")))?;
        }
        let missing = &path[existing_depth..];
        if let Some((first, rest)) = missing.split_first().filter(|(_, r)| !r.is_empty()) {
            let nested = rest.iter().rev().fold(value.clone(), |v, k| {
                Value::Object(Map::from_iter([((*k).to_owned(), v)]))
            });
            mapping.set(*first, node(&nested)?);
        } else {
            let current = lookup(&self.value, path);
            merge(&mapping, last, current, value)?;
        }
        self.commit(file.to_string(), path, Some(value))
    }

    fn remove(&mut self, path: &[&str]) -> Result<bool, EditError> {
        let Some((last, parents)) = path.split_last() else {
            return Err(EditError("cannot remove a whole YAML document".into()));
        };
        if lookup(&self.value, path).is_none() {
            return Ok(false);
        }
        let file = parse_tree(&self.text)?;
        let mut mapping = file
            .document()
            .and_then(|d| d.as_mapping())
            .ok_or_else(|| EditError("the YAML document is not a mapping".into()))?;
        for key in parents {
            mapping = mapping
                .get_mapping(*key)
                .ok_or_else(|| EditError(format!("`{key}` is not a mapping")))?;
        }
        if mapping.remove(*last).is_none() {
            return Ok(false);
        }
        self.commit(file.to_string(), path, None)?;
        Ok(true)
    }

    fn render(&self) -> String {
        self.text.clone()
    }
}

impl YamlDoc {
    /// Accepts `text` only if it parses and holds exactly what was asked at `path`, and
    /// nothing else moved: every other value reads back as before.
    fn commit(
        &mut self,
        text: String,
        path: &[&str],
        want: Option<&Value>,
    ) -> Result<(), EditError> {
        let after = read(&text).map_err(|e| refused(path, &e.0))?;
        let mut expected = self.value.clone();
        apply(&mut expected, path, want);
        if after != expected || YamlFile::from_str(&text).is_err() {
            return Err(refused(path, "the result did not read back as intended"));
        }
        self.text = text;
        self.value = after;
        Ok(())
    }
}

fn refused(path: &[&str], why: &str) -> EditError {
    EditError(format!(
        "could not edit `{}` in place ({why}); nothing was changed",
        path.join(".")
    ))
}

/// The JSON model of the intended edit, to compare the re-read result against.
fn apply(root: &mut Value, path: &[&str], want: Option<&Value>) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let mut cur = root;
    for key in parents {
        let Value::Object(map) = cur else { return };
        cur = map
            .entry((*key).to_owned())
            .or_insert_with(|| Value::Object(Map::new()));
        if cur.is_null() {
            *cur = Value::Object(Map::new());
        }
    }
    if let Value::Object(map) = cur {
        match want {
            Some(v) => {
                map.insert((*last).to_owned(), v.clone());
            }
            None => {
                map.remove(*last);
            }
        }
    }
}

fn parse_tree(text: &str) -> Result<YamlFile, EditError> {
    YamlFile::from_str(text).map_err(|e| EditError(format!("YAML: {e}")))
}

/// Sets `key` in `mapping` to `value` touching as little as possible: equal values
/// stay, mappings merge key by key, lists item by item (so other entries of a list keep
/// their comments), anything else is replaced.
fn merge(
    mapping: &Mapping,
    key: &str,
    current: Option<&Value>,
    value: &Value,
) -> Result<(), EditError> {
    match (current, value) {
        (Some(cur), new) if cur == new => Ok(()),
        (Some(Value::Object(cur)), Value::Object(new)) => match mapping.get_mapping(key) {
            Some(child) => merge_mapping(&child, cur, new),
            None => replace(mapping, key, value),
        },
        (Some(Value::Array(cur)), Value::Array(new)) => match mapping.get_sequence(key) {
            Some(seq) if !seq.is_flow_style() => {
                for (i, item) in new.iter().enumerate() {
                    match cur.get(i) {
                        Some(old) if old == item => {}
                        Some(Value::Object(old)) if item.is_object() => {
                            match (seq.get(i).as_ref().and_then(YamlNode::as_mapping), item) {
                                (Some(m), Value::Object(new_map)) => {
                                    merge_mapping(m, old, new_map)?
                                }
                                _ => {
                                    seq.set(i, node(item)?);
                                }
                            }
                        }
                        Some(_) => {
                            seq.set(i, node(item)?);
                        }
                        None => seq.push(node(item)?),
                    }
                }
                for i in (new.len()..cur.len()).rev() {
                    seq.remove(i);
                }
                Ok(())
            }
            _ => replace(mapping, key, value),
        },
        _ => replace(mapping, key, value),
    }
}

fn merge_mapping(
    mapping: &Mapping,
    cur: &Map<String, Value>,
    new: &Map<String, Value>,
) -> Result<(), EditError> {
    for k in cur.keys().filter(|k| !new.contains_key(*k)) {
        mapping.remove(k.as_str());
    }
    for (k, v) in new {
        merge(mapping, k, cur.get(k), v)?;
    }
    Ok(())
}

fn replace(mapping: &Mapping, key: &str, value: &Value) -> Result<(), EditError> {
    mapping.set(key, node(value)?);
    Ok(())
}

/// `value` as a YAML node, written in block style by [`emit`] and parsed back.
fn node(value: &Value) -> Result<YamlNode, EditError> {
    let mut text = String::new();
    emit(value, 0, &mut text);
    let file = parse_tree(&text)?;
    let doc = file
        .document()
        .ok_or_else(|| EditError("internal: an empty YAML value".into()))?;
    let node = match value {
        Value::Object(_) => doc.as_mapping().map(YamlNode::Mapping),
        Value::Array(_) => doc.as_sequence().map(YamlNode::Sequence),
        _ => doc.as_scalar().map(YamlNode::Scalar),
    };
    node.ok_or_else(|| EditError("internal: a YAML value did not parse back".into()))
}

/// Block-style YAML for `value` at `indent` columns (mappings and lists start on a fresh
/// line; a scalar is written alone).
fn emit(value: &Value, indent: usize, out: &mut String) {
    let pad = " ".repeat(indent);
    match value {
        Value::Object(map) if !map.is_empty() => {
            for (k, v) in map {
                out.push_str(&pad);
                out.push_str(&scalar_text(k));
                out.push(':');
                emit_child(v, indent, out);
            }
        }
        Value::Array(items) if !items.is_empty() => {
            for v in items {
                out.push_str(&pad);
                out.push('-');
                match v {
                    // `- key: value` with the rest of the mapping aligned under `key`.
                    Value::Object(map) if !map.is_empty() => {
                        let mut inner = String::new();
                        emit(v, indent + 2, &mut inner);
                        out.push(' ');
                        out.push_str(inner.trim_start());
                    }
                    _ => emit_child(v, indent, out),
                }
            }
        }
        other => {
            out.push_str(&inline(other));
            out.push('\n');
        }
    }
}

fn emit_child(v: &Value, indent: usize, out: &mut String) {
    match v {
        Value::Object(m) if !m.is_empty() => {
            out.push('\n');
            emit(v, indent + 2, out);
        }
        Value::Array(a) if !a.is_empty() => {
            out.push('\n');
            emit(v, indent + 2, out);
        }
        other => {
            out.push(' ');
            out.push_str(&inline(other));
            out.push('\n');
        }
    }
}

fn inline(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => scalar_text(s),
        Value::Array(_) => "[]".into(),
        Value::Object(_) => "{}".into(),
    }
}

/// A string plain when no YAML 1.1 or 1.2 reader could take it for anything else (agents
/// read YAML with PyYAML, where `yes` is a boolean), else double-quoted.
fn scalar_text(s: &str) -> String {
    let plain = s.starts_with(|c: char| c.is_ascii_alphabetic() || c == '/')
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:@+".contains(c))
        && !s.ends_with(':')
        && !matches!(
            s.to_ascii_lowercase().as_str(),
            "y" | "n" | "yes" | "no" | "on" | "off" | "true" | "false" | "null" | "nan" | "inf"
        );
    if plain {
        s.to_owned()
    } else {
        // A JSON string is a valid YAML double-quoted scalar.
        serde_json::to_string(s).unwrap_or_else(|_| format!("{s:?}"))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]

    use serde_json::json;

    use super::*;

    const SAMPLE: &str = "# Hermes Agent configuration\nmodel:\n  # the model used by default\n  default: anthropic/claude-opus-4   # pinned\n  provider: openrouter\n\ncustom_providers:\n  - name: local-llama   # my box\n    base_url: http://localhost:8080/v1\n    api_key: abc\n  - name: metaclaw\n    base_url: http://127.0.0.1:9/v1\n    api_key: stale\n\nterminal:\n  backend: local\n  timeout: 60   # seconds\n";

    fn doc(text: &str) -> Box<dyn Doc> {
        open(text).unwrap()
    }

    #[test]
    fn untouched_renders_byte_identical() {
        for text in [
            SAMPLE,
            "",
            "# only a comment\n",
            "a: 1",
            "a: 1\r\nb:\r\n  c: [1, 2]\r\n",
        ] {
            assert_eq!(doc(text).render(), text);
        }
    }

    #[test]
    fn get_reads_values() {
        let d = doc(SAMPLE);
        assert_eq!(d.get(&["model", "provider"]), Some(json!("openrouter")));
        assert_eq!(d.get(&["terminal", "timeout"]), Some(json!(60)));
        assert_eq!(
            d.get(&["custom_providers"])
                .unwrap()
                .as_array()
                .unwrap()
                .len(),
            2
        );
        assert_eq!(d.get(&["model", "nope"]), None);
        assert_eq!(doc("").get(&[]), Some(json!({})));
    }

    #[test]
    fn nested_scalars_change_in_place() {
        let mut d = doc(SAMPLE);
        d.set(&["model", "provider"], &json!("custom:metaclaw"))
            .unwrap();
        d.set(&["model", "default"], &json!("metaclaw-model"))
            .unwrap();
        let want = SAMPLE
            .replace(
                "default: anthropic/claude-opus-4   # pinned",
                "default: metaclaw-model   # pinned",
            )
            .replace("provider: openrouter", "provider: custom:metaclaw");
        assert_eq!(d.render(), want);
    }

    #[test]
    fn list_items_update_without_touching_their_neighbours() {
        let mut d = doc(SAMPLE);
        let mut list = d.get(&["custom_providers"]).unwrap();
        list[1] = json!({"name": "metaclaw", "base_url": "http://127.0.0.1:30000/v1", "api_key": "k",
            "models": {"metaclaw-model": {"context_length": 200000}}});
        d.set(&["custom_providers"], &list).unwrap();
        let out = d.render();
        assert!(out.contains("  - name: local-llama   # my box\n    base_url: http://localhost:8080/v1\n    api_key: abc\n  - name: metaclaw\n"), "{out}");
        assert!(out.contains("# the model used by default"));
        assert!(out.contains("timeout: 60   # seconds"));
        assert_eq!(doc(&out).get(&["custom_providers"]), Some(list.clone()));
        // Applying the same again changes nothing.
        d.set(&["custom_providers"], &list).unwrap();
        assert_eq!(d.render(), out);
    }

    #[test]
    fn appends_to_lists_and_creates_missing_parents() {
        let mut d = doc(SAMPLE);
        let mut list = d.get(&["custom_providers"]).unwrap();
        list.as_array_mut()
            .unwrap()
            .push(json!({"name": "third", "models": {"m": {"context_length": 8}}}));
        d.set(&["custom_providers"], &list).unwrap();
        d.set(&["a", "b", "c"], &json!("yes")).unwrap();
        d.set(&["terminal", "env", "PATH"], &json!("/usr/bin"))
            .unwrap();
        let out = d.render();
        let again = doc(&out);
        assert_eq!(again.get(&["custom_providers"]), Some(list));
        assert_eq!(again.get(&["a", "b", "c"]), Some(json!("yes")));
        assert_eq!(
            again.get(&["terminal"]),
            Some(json!({"backend": "local", "timeout": 60, "env": {"PATH": "/usr/bin"}}))
        );
        assert!(
            out.starts_with(&SAMPLE[..SAMPLE.find("  - name: metaclaw").unwrap()]),
            "{out}"
        );
    }

    #[test]
    fn new_lists_are_block_style_and_strings_are_safe_for_yaml_1_1() {
        let mut d = doc("# top\nterminal:\n  backend: local\n");
        let v = json!([{"name": "metaclaw", "api_key": "no", "n": "123", "e": "", "url": "http://h:1/v1"}]);
        d.set(&["custom_providers"], &v).unwrap();
        let out = d.render();
        assert!(
            out.starts_with("# top\nterminal:\n  backend: local\n"),
            "{out}"
        );
        assert!(out.contains("- name: metaclaw\n"), "{out}");
        assert!(out.contains("api_key: \"no\""), "{out}");
        assert_eq!(doc(&out).get(&["custom_providers"]), Some(v));
    }

    #[test]
    fn refuses_non_mapping_parents() {
        let mut d = doc(SAMPLE);
        let err = d.set(&["terminal", "timeout", "x"], &json!(1)).unwrap_err();
        assert!(err.0.contains("terminal.timeout"), "{}", err.0);
        assert!(d.set(&["custom_providers", "x"], &json!(1)).is_err());
        assert!(d.set(&[], &json!(1)).is_err());
        assert!(doc("- a\n- b\n").set(&["x"], &json!(1)).is_err());
        assert_eq!(d.render(), SAMPLE);
    }

    #[test]
    fn string_parent_can_be_replaced_whole() {
        let mut d = doc("model: gpt-4   # old style\nother: 1\n");
        d.set(
            &["model"],
            &json!({"default": "m", "provider": "custom:metaclaw"}),
        )
        .unwrap();
        let again = doc(&d.render());
        assert_eq!(
            again.get(&["model"]),
            Some(json!({"default": "m", "provider": "custom:metaclaw"}))
        );
        assert_eq!(again.get(&["other"]), Some(json!(1)));
    }

    #[test]
    fn remove_keeps_the_rest() {
        let mut d = doc(SAMPLE);
        assert!(!d.remove(&["model", "nope"]).unwrap());
        assert!(!d.remove(&["nope", "deeper"]).unwrap());
        assert_eq!(d.render(), SAMPLE);
        assert!(d.remove(&["model", "provider"]).unwrap());
        let out = d.render();
        assert!(!out.contains("openrouter"), "{out}");
        assert!(
            out.contains("  default: anthropic/claude-opus-4   # pinned\n"),
            "{out}"
        );
        assert!(
            out.contains("custom_providers:\n  - name: local-llama   # my box\n"),
            "{out}"
        );
    }

    #[test]
    fn corrupt_input_says_where() {
        let err = open("a: 1\nb: [unclosed\n  c: : :\n").err().unwrap();
        assert!(err.0.contains("line"), "{}", err.0);
        assert!(open("a: 1\n\tb: 2\n").is_err());
        assert!(open("a: 1\na: 2\n").is_err());
    }

    #[test]
    fn edge_shapes_hermes_configs_come_in() {
        let item = json!({"name": "metaclaw", "base_url": "http://127.0.0.1:30000/v1"});
        for text in [
            "custom_providers: []\nmodel: {}\n",
            "custom_providers:\nmodel:\n",
            "custom_providers:\n- name: a\n  base_url: x   # unindented list\nmodel:\n    default: m\n",
            "model:\n    default: m   # four spaces\ncustom_providers:\n    -   name: a\n        base_url: x\n",
            "---\nmodel: {default: m, provider: p}\n",
        ] {
            let mut d = doc(text);
            let mut list = match d.get(&["custom_providers"]) {
                Some(Value::Array(items)) => items,
                _ => Vec::new(),
            };
            list.push(item.clone());
            d.set(&["custom_providers"], &Value::Array(list.clone()))
                .unwrap();
            d.set(&["model", "provider"], &json!("custom:metaclaw"))
                .unwrap();
            d.set(&["model", "default"], &json!("metaclaw-model"))
                .unwrap();
            let out = d.render();
            let again = doc(&out);
            assert_eq!(
                again.get(&["custom_providers"]),
                Some(Value::Array(list.clone())),
                "{out}"
            );
            assert_eq!(
                again.get(&["model", "provider"]),
                Some(json!("custom:metaclaw")),
                "{out}"
            );
            assert_eq!(
                again.get(&["model", "default"]),
                Some(json!("metaclaw-model")),
                "{out}"
            );
            if text.contains("# ") {
                let comment = &text[text.find("# ").unwrap()..];
                let comment = &comment[..comment.find('\n').unwrap()];
                assert!(out.contains(comment), "{out}");
            }
        }
    }
}
