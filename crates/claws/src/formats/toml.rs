//! TOML through `toml_edit`, which keeps comments, spacing and table order. A key set
//! under a path lands in that path's table (top-level keys before the first `[table]`),
//! unlike the old line patcher that appended into whatever table came last.

use serde_json::{Map, Number, Value};
use toml_edit::{Array, DocumentMut, InlineTable, Item, Table, TableLike};

use crate::doc::{Doc, EditError};

pub fn open(text: &str) -> Result<Box<dyn Doc>, EditError> {
    let doc: DocumentMut = text.parse().map_err(|e| describe(text, &e))?;
    Ok(Box::new(TomlDoc {
        original: text.to_owned(),
        doc,
        edited: false,
    }))
}

/// The parser's message with a line and column, but without the quoted source line
/// `toml_edit` would add: that line may hold a key.
fn describe(text: &str, e: &toml_edit::TomlError) -> EditError {
    let message = e.message().trim_end().replace('\n', "; ");
    match e.span() {
        Some(span) => {
            let before = text.get(..span.start).unwrap_or(text);
            let line = before.matches('\n').count() + 1;
            let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
            EditError(format!("TOML: {message} at line {line}, column {column}"))
        }
        None => EditError(format!("TOML: {message}")),
    }
}

struct TomlDoc {
    /// Returned verbatim until something changes.
    original: String,
    doc: DocumentMut,
    edited: bool,
}

impl Doc for TomlDoc {
    fn get(&self, path: &[&str]) -> Option<Value> {
        let mut item = self.doc.as_item();
        for key in path {
            item = item.as_table_like()?.get(key)?;
        }
        item_to_json(item)
    }

    fn set(&mut self, path: &[&str], value: &Value) -> Result<(), EditError> {
        let Some((last, parents)) = path.split_last() else {
            return Err(EditError("cannot replace a whole TOML document".into()));
        };
        // Checked before any change so a refusal leaves the document as it was.
        check_parents(self.doc.as_item(), parents)?;
        check_representable(value, path)?;
        if self.get(path).as_ref() == Some(value) {
            return Ok(());
        }
        let mut cursor: &mut Item = self.doc.as_item_mut();
        for key in parents {
            let inline = cursor.is_inline_table();
            let table = cursor
                .as_table_like_mut()
                .ok_or_else(|| not_a_table(path, key))?;
            if table.get(key).is_none() {
                let fresh = if inline {
                    Item::Value(toml_edit::Value::InlineTable(InlineTable::new()))
                } else {
                    let mut t = Table::new();
                    // `[a.b]` alone, no empty `[a]` header.
                    t.set_implicit(true);
                    Item::Table(t)
                };
                table.insert(key, fresh);
            }
            cursor = table.get_mut(key).ok_or_else(|| not_a_table(path, key))?;
        }
        let inline = cursor.is_inline_table();
        let table = cursor
            .as_table_like_mut()
            .ok_or_else(|| not_a_table(path, last))?;
        match table.get_mut(last) {
            Some(existing) => merge(existing, value, inline)?,
            None => {
                table.insert(last, to_item(value, inline)?);
            }
        }
        self.edited = true;
        Ok(())
    }

    fn remove(&mut self, path: &[&str]) -> Result<bool, EditError> {
        let Some((last, parents)) = path.split_last() else {
            return Err(EditError("cannot remove a whole TOML document".into()));
        };
        let mut table: &mut dyn TableLike = self.doc.as_table_mut();
        for key in parents {
            match table.get_mut(key) {
                None => return Ok(false),
                Some(item) => {
                    table = item
                        .as_table_like_mut()
                        .ok_or_else(|| not_a_table(path, key))?;
                }
            }
        }
        let removed = table.remove(last).is_some();
        self.edited |= removed;
        Ok(removed)
    }

    fn render(&self) -> String {
        if self.edited {
            self.doc.to_string()
        } else {
            self.original.clone()
        }
    }
}

fn check_parents(root: &Item, parents: &[&str]) -> Result<(), EditError> {
    let mut item = root;
    for (i, key) in parents.iter().enumerate() {
        let Some(table) = item.as_table_like() else {
            return Err(not_a_table(parents, parents[i.saturating_sub(1)]));
        };
        match table.get(key) {
            None => return Ok(()),
            Some(child) if child.is_table_like() => item = child,
            Some(_) => return Err(not_a_table(parents, key)),
        }
    }
    Ok(())
}

fn not_a_table(path: &[&str], key: &str) -> EditError {
    EditError(format!(
        "`{key}` (on the way to `{}`) is not a table",
        path.join(".")
    ))
}

fn check_representable(value: &Value, path: &[&str]) -> Result<(), EditError> {
    let ok = match value {
        Value::Null => false,
        Value::Number(n) => n.is_i64() || n.is_f64(),
        Value::Array(items) => return items.iter().try_for_each(|v| check_representable(v, path)),
        Value::Object(map) => {
            return map.values().try_for_each(|v| check_representable(v, path));
        }
        Value::Bool(_) | Value::String(_) => true,
    };
    if ok {
        Ok(())
    } else {
        Err(EditError(format!(
            "`{}`: TOML cannot hold {value}",
            path.join(".")
        )))
    }
}

/// Changes `existing` into `value` touching as little as possible: equal values stay,
/// tables are merged key by key, a replaced scalar keeps its trailing comment.
fn merge(existing: &mut Item, value: &Value, inline: bool) -> Result<(), EditError> {
    if item_to_json(existing).as_ref() == Some(value) {
        return Ok(());
    }
    if let (Some(table), Value::Object(map)) = (existing.as_table_like_mut(), value) {
        let stale: Vec<String> = table
            .iter()
            .map(|(k, _)| k.to_owned())
            .filter(|k| !map.contains_key(k))
            .collect();
        for k in stale {
            table.remove(&k);
        }
        let child_inline = inline || existing.is_inline_table();
        let Some(table) = existing.as_table_like_mut() else {
            return Ok(());
        };
        for (k, v) in map {
            match table.get_mut(k) {
                Some(child) => merge(child, v, child_inline)?,
                None => {
                    table.insert(k, to_item(v, child_inline)?);
                }
            }
        }
        return Ok(());
    }
    let mut fresh = to_item(value, inline || existing.is_value())?;
    if let (Some(old), Some(new)) = (existing.as_value(), fresh.as_value_mut()) {
        *new.decor_mut() = old.decor().clone();
    }
    *existing = fresh;
    Ok(())
}

fn to_item(value: &Value, inline: bool) -> Result<Item, EditError> {
    match value {
        Value::Object(map) if !inline => {
            let mut t = Table::new();
            for (k, v) in map {
                t.insert(k, to_item(v, false)?);
            }
            Ok(Item::Table(t))
        }
        other => Ok(Item::Value(to_value(other)?)),
    }
}

fn to_value(value: &Value) -> Result<toml_edit::Value, EditError> {
    Ok(match value {
        Value::Null => return Err(EditError("TOML has no null".into())),
        Value::Bool(b) => (*b).into(),
        Value::Number(n) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => i.into(),
            (None, Some(f)) if !n.is_u64() => f.into(),
            _ => return Err(EditError(format!("TOML integers cannot hold {n}"))),
        },
        Value::String(s) => s.as_str().into(),
        Value::Array(items) => {
            let mut a = Array::new();
            for v in items {
                a.push(to_value(v)?);
            }
            toml_edit::Value::Array(a)
        }
        Value::Object(map) => {
            let mut t = InlineTable::new();
            for (k, v) in map {
                t.insert(k, to_value(v)?);
            }
            toml_edit::Value::InlineTable(t)
        }
    })
}

fn item_to_json(item: &Item) -> Option<Value> {
    match item {
        Item::None => None,
        Item::Value(v) => Some(value_to_json(v)),
        Item::Table(t) => Some(table_to_json(t)),
        Item::ArrayOfTables(a) => Some(Value::Array(a.iter().map(|t| table_to_json(t)).collect())),
    }
}

fn table_to_json(t: &dyn TableLike) -> Value {
    let mut map = Map::new();
    for (k, item) in t.iter() {
        if let Some(v) = item_to_json(item) {
            map.insert(k.to_owned(), v);
        }
    }
    Value::Object(map)
}

fn value_to_json(v: &toml_edit::Value) -> Value {
    match v {
        toml_edit::Value::String(s) => Value::String(s.value().clone()),
        toml_edit::Value::Integer(i) => Value::Number((*i.value()).into()),
        toml_edit::Value::Float(f) => {
            Number::from_f64(*f.value()).map_or(Value::Null, Value::Number)
        }
        toml_edit::Value::Boolean(b) => Value::Bool(*b.value()),
        toml_edit::Value::Datetime(d) => Value::String(d.value().to_string()),
        toml_edit::Value::Array(a) => Value::Array(a.iter().map(value_to_json).collect()),
        toml_edit::Value::InlineTable(t) => table_to_json(t),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]

    use serde_json::json;

    use super::*;

    const SAMPLE: &str = "# zeroclaw\napi_key = \"old\"   # my key\ndefault_temperature = 0.7\n\n[memory]\n# sqlite by default\nbackend = \"sqlite\"\n\n[gateway]\nport = 3000\nhost = \"127.0.0.1\"\n";

    fn doc(text: &str) -> Box<dyn Doc> {
        open(text).unwrap()
    }

    #[test]
    fn untouched_renders_byte_identical() {
        for text in [
            SAMPLE,
            "",
            "a=1",
            "x = { y = 1 }   \n\n\n# end",
            "[t]\r\nk = 'v'\r\n",
        ] {
            assert_eq!(doc(text).render(), text);
        }
    }

    #[test]
    fn setting_an_equal_value_changes_nothing() {
        let mut d = doc(SAMPLE);
        d.set(&["gateway", "port"], &json!(3000)).unwrap();
        d.set(&["api_key"], &json!("old")).unwrap();
        assert_eq!(d.render(), SAMPLE);
    }

    #[test]
    fn top_level_keys_go_before_the_first_table() {
        let mut d = doc(SAMPLE);
        d.set(&["provider"], &json!("openai-compatible")).unwrap();
        d.set(&["api_key"], &json!("sk-new")).unwrap();
        let out = d.render();
        let provider = out.find("provider = \"openai-compatible\"").unwrap();
        assert!(provider < out.find("[memory]").unwrap(), "{out}");
        // The replaced value keeps its comment; the rest is untouched.
        assert!(out.contains("api_key = \"sk-new\"   # my key\n"), "{out}");
        assert!(out.contains("[memory]\n# sqlite by default\nbackend = \"sqlite\"\n"));
        assert!(out.ends_with("[gateway]\nport = 3000\nhost = \"127.0.0.1\"\n"));
        let again = open(&out).unwrap();
        assert_eq!(again.get(&["provider"]), Some(json!("openai-compatible")));
        assert_eq!(again.get(&["gateway", "port"]), Some(json!(3000)));
    }

    #[test]
    fn nested_keys_land_in_their_table() {
        let mut d = doc(SAMPLE);
        d.set(&["memory", "path"], &json!("/tmp/m.db")).unwrap();
        d.set(
            &["providers", "metaclaw", "base_url"],
            &json!("http://x/v1"),
        )
        .unwrap();
        let out = d.render();
        let again = open(&out).unwrap();
        assert_eq!(again.get(&["memory", "path"]), Some(json!("/tmp/m.db")));
        assert_eq!(
            again.get(&["gateway"]),
            Some(json!({"port": 3000, "host": "127.0.0.1"}))
        );
        assert_eq!(
            again.get(&["providers"]),
            Some(json!({"metaclaw": {"base_url": "http://x/v1"}}))
        );
        assert!(out.contains("[providers.metaclaw]\n"), "{out}");
        assert!(!out.contains("[providers]\n"), "{out}");
        let mem = out.find("[memory]").unwrap();
        let path = out.find("path = ").unwrap();
        assert!(mem < path && path < out.find("[gateway]").unwrap(), "{out}");
    }

    #[test]
    fn inline_tables_stay_inline() {
        let mut d = doc("model = { name = \"a\", temp = 1 }\n");
        d.set(&["model", "name"], &json!("b")).unwrap();
        d.set(&["model", "extra", "x"], &json!(true)).unwrap();
        let out = d.render();
        assert!(out.starts_with("model = {"), "{out}");
        let again = open(&out).unwrap();
        assert_eq!(
            again.get(&["model"]),
            Some(json!({"name": "b", "temp": 1, "extra": {"x": true}}))
        );
    }

    #[test]
    fn objects_merge_and_replace() {
        let mut d = doc(SAMPLE);
        d.set(&["gateway"], &json!({"port": 4000, "tls": false}))
            .unwrap();
        let out = d.render();
        let again = open(&out).unwrap();
        assert_eq!(
            again.get(&["gateway"]),
            Some(json!({"port": 4000, "tls": false}))
        );
        assert!(out.contains("[gateway]\nport = 4000\n"), "{out}");
    }

    #[test]
    fn refuses_non_table_parents_and_unrepresentable_values() {
        let mut d = doc(SAMPLE);
        assert!(d.set(&["api_key", "inner"], &json!("x")).is_err());
        assert!(d.set(&["gateway", "port", "x"], &json!(1)).is_err());
        assert!(d.set(&["nothing"], &json!(null)).is_err());
        assert!(d.set(&[], &json!(1)).is_err());
        assert!(d.remove(&["api_key", "inner"]).is_err());
        assert_eq!(d.render(), SAMPLE);
    }

    #[test]
    fn remove_reports_presence() {
        let mut d = doc(SAMPLE);
        assert!(!d.remove(&["absent"]).unwrap());
        assert!(!d.remove(&["absent", "deeper"]).unwrap());
        assert_eq!(d.render(), SAMPLE);
        assert!(d.remove(&["gateway", "host"]).unwrap());
        assert!(d.remove(&["api_key"]).unwrap());
        let out = d.render();
        assert!(!out.contains("host") && !out.contains("api_key"), "{out}");
        assert!(out.contains("[gateway]\nport = 3000\n"), "{out}");
    }

    #[test]
    fn corrupt_input_says_where() {
        let err = open("a = 1\n[broken\nb = 2\n").err().unwrap();
        assert!(err.0.contains("line 2"), "{}", err.0);
        assert!(!err.0.contains('\n'));
        let err = open("api_key = \"sk-secret\" oops\n").err().unwrap();
        assert!(
            err.0.contains("line 1") && !err.0.contains("sk-secret"),
            "{}",
            err.0
        );
        assert!(open("a = 1\na = 2\n").is_err());
    }

    #[test]
    fn get_converts_values() {
        let d = doc("a = 1.5\nb = [1, \"x\"]\nc = 1979-05-27\n[[arr]]\nn = 1\n[[arr]]\nn = 2\n");
        assert_eq!(d.get(&["a"]), Some(json!(1.5)));
        assert_eq!(d.get(&["b"]), Some(json!([1, "x"])));
        assert_eq!(d.get(&["c"]), Some(json!("1979-05-27")));
        assert_eq!(d.get(&["arr"]), Some(json!([{"n": 1}, {"n": 2}])));
        assert_eq!(d.get(&["a", "b"]), None);
    }

    #[test]
    fn dotted_keys_and_crlf_stay_valid() {
        let mut d = doc("a.b = 1\r\n# note\r\n[t]\r\nx.y = \"z\"\r\n");
        d.set(&["a", "c"], &json!(2)).unwrap();
        d.set(&["t", "x", "w"], &json!("v")).unwrap();
        d.set(&["top"], &json!(true)).unwrap();
        let out = d.render();
        let again = open(&out).unwrap();
        assert_eq!(again.get(&["a"]), Some(json!({"b": 1, "c": 2})), "{out}");
        assert_eq!(
            again.get(&["t", "x"]),
            Some(json!({"y": "z", "w": "v"})),
            "{out}"
        );
        assert_eq!(again.get(&["top"]), Some(json!(true)), "{out}");
        assert!(
            out.find("top = true").unwrap() < out.find("[t]").unwrap(),
            "{out}"
        );
        assert!(out.contains("# note"), "{out}");
    }

    #[test]
    fn arrays_of_tables_are_not_parents() {
        let mut d = doc("[[routes]]\nhint = \"fast\"\n");
        assert!(d.set(&["routes", "x"], &json!(1)).is_err());
        assert_eq!(d.render(), "[[routes]]\nhint = \"fast\"\n");
    }
}
