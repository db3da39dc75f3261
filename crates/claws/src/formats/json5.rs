//! JSON5 / JSONC (and plain JSON) edited in place through `jsonc-parser`'s concrete syntax
//! tree: comments, blank lines, trailing commas, unquoted keys and single-quoted strings
//! outside an edit survive untouched, and new properties take their siblings' indentation.

use jsonc_parser::ParseOptions;
use jsonc_parser::cst::{CstInputValue, CstNode, CstObject, CstObjectProp, CstRootNode};
use serde_json::Value;

use crate::doc::{Doc, EditError};

/// Parses `text`; an empty (or comment-only) document is refused because there is no
/// object to edit, and a syntax error names its line and column (never the text, which
/// may hold a key).
pub fn open(text: &str) -> Result<Box<dyn Doc>, EditError> {
    // A byte-order mark is not JSON; set it aside and put it back on render.
    let (bom, body) = match text.strip_prefix('\u{feff}') {
        Some(body) => ("\u{feff}", body),
        None => ("", text),
    };
    let root = CstRootNode::parse(body, &ParseOptions::default())
        .map_err(|e| EditError(format!("not valid JSON5: {e}")))?;
    let Some(value) = root.value() else {
        return Err(EditError(
            "the document is empty: it holds no JSON value".into(),
        ));
    };
    if value.as_object().is_none() {
        return Err(EditError(
            "the document's top level is not an object".into(),
        ));
    }
    Ok(Box::new(Json5Doc {
        root,
        bom,
        original: text.to_owned(),
        edited: false,
    }))
}

struct Json5Doc {
    /// Must outlive every node taken from it (descendants hold weak links to it).
    root: CstRootNode,
    bom: &'static str,
    original: String,
    /// Until something changes, `render` returns `original` itself, so an untouched
    /// document is byte-identical whatever the tree would print.
    edited: bool,
}

impl Json5Doc {
    fn root_object(&self) -> Option<CstObject> {
        self.root.value()?.as_object()
    }
}

/// The property named `name`; the last one when a key is repeated, since JSON5 readers
/// keep the last.
fn property(obj: &CstObject, name: &str) -> Option<CstObjectProp> {
    obj.properties()
        .into_iter()
        .rev()
        .find(|p| p.decoded_name().as_deref() == Some(name))
}

fn describe(node: &CstNode) -> &'static str {
    if node.as_array().is_some() {
        "an array"
    } else if node.as_string_lit().is_some() {
        "a string"
    } else if node.as_number_lit().is_some() {
        "a number"
    } else if node.as_boolean_lit().is_some() {
        "a boolean"
    } else if node.as_null_keyword().is_some() {
        "null"
    } else {
        "not an object"
    }
}

fn to_input(value: &Value) -> CstInputValue {
    match value {
        Value::Null => CstInputValue::Null,
        Value::Bool(b) => CstInputValue::Bool(*b),
        Value::Number(n) => CstInputValue::Number(n.to_string()),
        Value::String(s) => CstInputValue::String(s.clone()),
        Value::Array(items) => CstInputValue::Array(items.iter().map(to_input).collect()),
        Value::Object(map) => {
            CstInputValue::Object(map.iter().map(|(k, v)| (k.clone(), to_input(v))).collect())
        }
    }
}

/// `{rest[0]: {rest[1]: … value}}`: the parents a `set` creates, built as one value so
/// they are inserted (and indented) in one go.
fn nest(rest: &[&str], value: &Value) -> CstInputValue {
    match rest.split_first() {
        None => to_input(value),
        Some((first, more)) => {
            CstInputValue::Object(vec![((*first).to_owned(), nest(more, value))])
        }
    }
}

/// Makes `node` equal `value` while rewriting as little as possible: objects and arrays
/// are changed member by member, so untouched members keep their comments and layout, and
/// putting back an earlier value (a revert) restores the earlier text.
fn assign(node: CstNode, value: &Value) {
    if node.to_serde_value().as_ref() == Some(value) {
        return;
    }
    match (node.as_object(), node.as_array(), value) {
        (Some(obj), _, Value::Object(map)) => assign_object(&obj, map),
        (_, Some(arr), Value::Array(items)) => assign_array(&arr, items),
        _ => replace(node, to_input(value)),
    }
}

fn assign_object(obj: &CstObject, map: &serde_json::Map<String, Value>) {
    for prop in obj.properties() {
        if prop
            .decoded_name()
            .is_none_or(|name| !map.contains_key(&name))
        {
            prop.remove();
        }
    }
    for (key, value) in map {
        match property(obj, key) {
            Some(prop) => match prop.value() {
                Some(node) => assign(node, value),
                None => prop.set_value(to_input(value)),
            },
            None => {
                obj.append(key, to_input(value));
            }
        }
    }
}

/// Keeps the common head and tail, pairs up what differs in between, then inserts or
/// removes the rest: an upserted or dropped item leaves its neighbours alone.
fn assign_array(arr: &jsonc_parser::cst::CstArray, items: &[Value]) {
    let olds: Vec<(CstNode, Option<Value>)> = arr
        .elements()
        .into_iter()
        .map(|n| {
            let v = n.to_serde_value();
            (n, v)
        })
        .collect();
    let same = |i: usize, j: usize| olds[i].1.as_ref() == Some(&items[j]);
    let shorter = olds.len().min(items.len());
    let head = (0..shorter).take_while(|&i| same(i, i)).count();
    let tail = (0..shorter - head)
        .take_while(|&k| same(olds.len() - 1 - k, items.len() - 1 - k))
        .count();
    let old_mid = &olds[head..olds.len() - tail];
    let new_mid = &items[head..items.len() - tail];
    let paired = old_mid.len().min(new_mid.len());
    for ((node, _), value) in old_mid.iter().zip(new_mid).take(paired) {
        assign(node.clone(), value);
    }
    for (k, value) in new_mid.iter().enumerate().skip(paired) {
        arr.insert(head + k, to_input(value));
    }
    for (node, _) in old_mid.iter().skip(paired).rev() {
        node.clone().remove();
    }
}

/// Puts `value` where `node` is (a property's value or an array element).
fn replace(node: CstNode, value: CstInputValue) {
    use jsonc_parser::cst::{CstContainerNode as C, CstLeafNode as L};
    let _ = match node {
        CstNode::Container(C::Object(n)) => n.replace_with(value),
        CstNode::Container(C::Array(n)) => n.replace_with(value),
        CstNode::Leaf(L::StringLit(n)) => n.replace_with(value),
        CstNode::Leaf(L::NumberLit(n)) => n.replace_with(value),
        CstNode::Leaf(L::BooleanLit(n)) => n.replace_with(value),
        CstNode::Leaf(L::NullKeyword(n)) => n.replace_with(value),
        CstNode::Leaf(L::WordLit(n)) => n.replace_with(value),
        // Values are only ever the kinds above.
        _ => None,
    };
}

impl Doc for Json5Doc {
    fn get(&self, path: &[&str]) -> Option<Value> {
        let mut node = self.root.value()?;
        for key in path {
            node = property(&node.as_object()?, key)?.value()?;
        }
        node.to_serde_value()
    }

    fn set(&mut self, path: &[&str], value: &Value) -> Result<(), EditError> {
        let Some((last, parents)) = path.split_last() else {
            return Err(EditError("cannot replace the whole document".into()));
        };
        // Setting what is already there must leave the bytes alone (idempotent connects).
        if self.get(path).as_ref() == Some(value) {
            return Ok(());
        }
        let Some(mut obj) = self.root_object() else {
            return Err(EditError(
                "the document's top level is not an object".into(),
            ));
        };
        // Walk the existing parents first; nothing is changed until the whole path is
        // known to be editable.
        let mut chain = vec![obj.clone()];
        let mut missing = None;
        for (depth, key) in parents.iter().enumerate() {
            let Some(prop) = property(&obj, key) else {
                missing = Some(depth);
                break;
            };
            let Some(child) = prop.value() else {
                return Err(EditError(format!(
                    "`{}` has no value",
                    path[..=depth].join(".")
                )));
            };
            let Some(child_obj) = child.as_object() else {
                return Err(EditError(format!(
                    "`{}` is {}, not an object",
                    path[..=depth].join("."),
                    describe(&child)
                )));
            };
            obj = child_obj;
            chain.push(obj.clone());
        }
        let existing = match missing {
            Some(_) => None,
            None => property(&obj, last),
        };
        // A new property or a new multi-line value inside a one-line object would be
        // printed over several lines mid-line; lay the enclosing objects out one member
        // per line first (a no-op for objects that already are).
        let spans_lines = match existing.as_ref().and_then(CstObjectProp::value) {
            None => true,
            Some(node) => match value {
                Value::Object(m) => !m.is_empty() && node.as_object().is_none(),
                Value::Array(a) => !a.is_empty() && node.as_array().is_none(),
                _ => false,
            },
        };
        if spans_lines {
            for o in &chain {
                o.ensure_multiline();
            }
        }
        match (missing, existing) {
            (Some(depth), _) => {
                obj.append(parents[depth], nest(&path[depth + 1..], value));
            }
            (None, Some(prop)) => match prop.value() {
                Some(node) => assign(node, value),
                None => prop.set_value(to_input(value)),
            },
            (None, None) => {
                obj.append(last, to_input(value));
            }
        }
        self.edited = true;
        Ok(())
    }

    fn remove(&mut self, path: &[&str]) -> Result<bool, EditError> {
        let Some((last, parents)) = path.split_last() else {
            return Err(EditError("cannot remove the whole document".into()));
        };
        let Some(mut obj) = self.root_object() else {
            return Ok(false);
        };
        for key in parents {
            let Some(child) = property(&obj, key)
                .and_then(|p| p.value())
                .and_then(|v| v.as_object())
            else {
                return Ok(false);
            };
            obj = child;
        }
        let mut removed = false;
        // Every copy of a repeated key goes, or an earlier one would resurface.
        while let Some(prop) = property(&obj, last) {
            prop.remove();
            removed = true;
        }
        if removed {
            self.edited = true;
        }
        Ok(removed)
    }

    fn render(&self) -> String {
        if self.edited {
            format!("{}{}", self.bom, self.root)
        } else {
            self.original.clone()
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use super::*;
    use serde_json::json;

    const OPENCLAW_LIKE: &str = r#"// OpenClaw config — edited by hand
{
  /* gateway settings */
  gateway: {
    port: 18789, // default port
    bind: 'loopback',
  },

  // providers the user added
  models: {
    providers: {
      mine: { baseUrl: "https://example.test/v1", apiKey: 'sk-user' },
    },
  },
  agents: {
    defaults: {
      sandbox: { mode: "all" },
      model: { primary: "mine/big" },
    },
  },
}
"#;

    fn doc(text: &str) -> Box<dyn Doc> {
        open(text).unwrap()
    }

    fn open_err(text: &str) -> String {
        match open(text) {
            Ok(_) => panic!("{text:?} opened"),
            Err(e) => e.0,
        }
    }

    #[test]
    fn unchanged_render_is_the_input() {
        for text in [
            OPENCLAW_LIKE,
            "{}",
            "{\r\n  \"a\": 1,\r\n}\r\n",
            "\u{feff}{ \"a\": [1, 2,], }",
            "  {a:1}  // trailing\n\n",
        ] {
            assert_eq!(doc(text).render(), text);
        }
    }

    #[test]
    fn get_reads_json5_values() {
        let d = doc(OPENCLAW_LIKE);
        assert_eq!(d.get(&["gateway", "port"]), Some(json!(18789)));
        assert_eq!(d.get(&["gateway", "bind"]), Some(json!("loopback")));
        assert_eq!(
            d.get(&["models", "providers", "mine", "apiKey"]),
            Some(json!("sk-user"))
        );
        assert_eq!(
            d.get(&["agents", "defaults", "model"]),
            Some(json!({"primary": "mine/big"}))
        );
        assert_eq!(d.get(&["nope"]), None);
        assert_eq!(d.get(&["gateway", "port", "deeper"]), None);
        let hex = doc("{n: 0x10, s: 'it\\'s', t: \"a\\u0041\"}");
        assert_eq!(hex.get(&["n"]), Some(json!(16)));
        assert_eq!(hex.get(&["s"]), Some(json!("it's")));
        assert_eq!(hex.get(&["t"]), Some(json!("aA")));
    }

    #[test]
    fn replace_keeps_everything_else_byte_for_byte() {
        let mut d = doc(OPENCLAW_LIKE);
        d.set(
            &["agents", "defaults", "model", "primary"],
            &json!("metaclaw/m"),
        )
        .unwrap();
        let out = d.render();
        assert_eq!(
            out,
            OPENCLAW_LIKE.replace("primary: \"mine/big\"", "primary: \"metaclaw/m\"")
        );
    }

    #[test]
    fn set_creates_missing_parents_with_sibling_indentation() {
        let mut d = doc(OPENCLAW_LIKE);
        d.set(
            &["models", "providers", "metaclaw"],
            &json!({"api": "openai-completions", "models": [{"id": "m"}]}),
        )
        .unwrap();
        d.set(&["extra", "deep", "key"], &json!(true)).unwrap();
        let out = d.render();
        assert!(out.contains("      mine: { baseUrl: \"https://example.test/v1\", apiKey: 'sk-user' },\n      \"metaclaw\": {\n        \"api\": \"openai-completions\",\n"), "{out}");
        // The file uses trailing commas, so new members do too.
        assert!(
            out.contains("  \"extra\": {\n    \"deep\": {\n      \"key\": true,\n    },\n  },\n}"),
            "{out}"
        );
        // Every original line is still there, in order.
        let mut rest = out.as_str();
        for line in OPENCLAW_LIKE.lines().filter(|l| !l.trim().is_empty()) {
            let at = rest
                .find(line)
                .unwrap_or_else(|| panic!("lost {line:?} in {out}"));
            rest = &rest[at + line.len()..];
        }
        let again = doc(&out);
        assert_eq!(again.get(&["extra", "deep", "key"]), Some(json!(true)));
        assert_eq!(
            again.get(&["models", "providers", "metaclaw", "models"]),
            Some(json!([{"id": "m"}]))
        );
        assert_eq!(again.get(&["gateway", "bind"]), Some(json!("loopback")));
    }

    #[test]
    fn indentation_follows_the_file() {
        let text = "{\n\t\"a\": {\n\t\t\"b\": 1\n\t}\n}\n";
        let mut d = doc(text);
        d.set(&["a", "c"], &json!("x")).unwrap();
        assert_eq!(
            d.render(),
            "{\n\t\"a\": {\n\t\t\"b\": 1,\n\t\t\"c\": \"x\"\n\t}\n}\n"
        );

        let text = "{\n    \"a\": 1\n}";
        let mut d = doc(text);
        d.set(&["b"], &json!(2)).unwrap();
        assert_eq!(d.render(), "{\n    \"a\": 1,\n    \"b\": 2\n}");
    }

    #[test]
    fn set_same_value_twice_changes_nothing() {
        let mut d = doc(OPENCLAW_LIKE);
        let v = json!({"api": "x", "models": [{"id": "m", "input": ["text"]}]});
        d.set(&["models", "providers", "metaclaw"], &v).unwrap();
        let once = d.render();
        let mut d2 = doc(&once);
        d2.set(&["models", "providers", "metaclaw"], &v).unwrap();
        assert_eq!(d2.render(), once);
        // Equal values written differently by the user are not rewritten either.
        let mut d3 = doc(OPENCLAW_LIKE);
        d3.set(&["gateway", "bind"], &json!("loopback")).unwrap();
        assert_eq!(d3.render(), OPENCLAW_LIKE);
    }

    #[test]
    fn set_through_a_non_object_fails_and_changes_nothing() {
        let mut d = doc(OPENCLAW_LIKE);
        let err = d.set(&["gateway", "port", "x"], &json!(1)).unwrap_err();
        assert!(err.0.contains("`gateway.port` is a number"), "{}", err.0);
        let err = d.set(
            &["models", "providers", "mine", "apiKey", "x", "y"],
            &json!(1),
        );
        assert!(err.unwrap_err().0.contains("a string"));
        assert_eq!(d.render(), OPENCLAW_LIKE);
        let mut arr = doc("{list: [1, 2]}");
        assert!(
            arr.set(&["list", "a"], &json!(1))
                .unwrap_err()
                .0
                .contains("an array")
        );
        assert!(d.set(&[], &json!({})).is_err());
    }

    #[test]
    fn remove_nested_keys() {
        let mut d = doc(OPENCLAW_LIKE);
        assert!(d.remove(&["gateway", "port"]).unwrap());
        assert!(!d.remove(&["gateway", "port"]).unwrap());
        assert!(!d.remove(&["no", "such"]).unwrap());
        assert!(!d.remove(&["gateway", "bind", "deeper"]).unwrap());
        let out = d.render();
        assert!(!out.contains("port"), "{out}");
        assert!(out.contains("/* gateway settings */"));
        assert!(out.contains("bind: 'loopback'"));
        let again = doc(&out);
        assert_eq!(again.get(&["gateway"]), Some(json!({"bind": "loopback"})));
        assert_eq!(
            again.get(&["agents", "defaults", "sandbox", "mode"]),
            Some(json!("all"))
        );
    }

    #[test]
    fn set_then_remove_restores_the_original() {
        let text = "{\n  // keep me\n  \"a\": 1,\n  \"b\": {\n    \"c\": 2\n  }\n}\n";
        let mut d = doc(text);
        d.set(&["b", "new"], &json!("x")).unwrap();
        d.remove(&["b", "new"]).unwrap();
        assert_eq!(d.render(), text);
    }

    #[test]
    fn repeated_keys_read_the_last_and_remove_all() {
        let mut d = doc("{a: 1, a: 2}");
        assert_eq!(d.get(&["a"]), Some(json!(2)));
        d.set(&["a"], &json!(3)).unwrap();
        assert_eq!(d.get(&["a"]), Some(json!(3)));
        assert!(d.remove(&["a"]).unwrap());
        assert_eq!(d.get(&["a"]), None);
    }

    #[test]
    fn lists_and_objects_change_member_by_member() {
        let text = "{\n  \"list\": [\n    // first\n    {\"name\": \"a\", \"v\": 1},\n    {\"name\": \"m\", \"v\": 1}, // ours\n    {\"name\": \"z\"}\n  ],\n  \"o\": {\"keep\": 1, /* note */ \"drop\": 2, \"change\": 3}\n}\n";
        let mut d = doc(text);
        d.set(
            &["list"],
            &json!([{"name": "a", "v": 1}, {"name": "m", "v": 2}, {"name": "z"}, {"name": "new"}]),
        )
        .unwrap();
        d.set(&["o"], &json!({"keep": 1, "change": 4, "added": true}))
            .unwrap();
        let out = d.render();
        assert!(
            out.contains("    // first\n    {\"name\": \"a\", \"v\": 1},\n"),
            "{out}"
        );
        assert!(
            out.contains("{\"name\": \"m\", \"v\": 2}, // ours\n"),
            "{out}"
        );
        let again = doc(&out);
        assert_eq!(
            again.get(&["list"]),
            Some(
                json!([{"name": "a", "v": 1}, {"name": "m", "v": 2}, {"name": "z"}, {"name": "new"}])
            )
        );
        assert_eq!(
            again.get(&["o"]),
            Some(json!({"keep": 1, "change": 4, "added": true}))
        );
        // Putting the old values back gives the old text back.
        let mut back = doc(&out);
        back.set(
            &["list"],
            &json!([{"name": "a", "v": 1}, {"name": "m", "v": 1}, {"name": "z"}]),
        )
        .unwrap();
        back.set(&["o"], &json!({"keep": 1, "drop": 2, "change": 3}))
            .unwrap();
        let restored = back.render();
        assert_eq!(doc(&restored).get(&[]), doc(text).get(&[]));
        assert!(restored.contains("    // first\n"), "{restored}");
    }

    #[test]
    fn an_item_dropped_from_the_middle_leaves_its_neighbours() {
        let text = "[\n  1, // one\n  2, // two\n  3 // three\n]";
        let mut d = doc(&format!("{{\"a\": {text}}}"));
        d.set(&["a"], &json!([1, 3])).unwrap();
        assert_eq!(d.render(), "{\"a\": [\n  1, // one\n  3 // three\n]}");
    }

    #[test]
    fn one_line_objects_open_up_for_multi_line_changes() {
        let mut d = doc("{\n  a: { b: { c: \"x\" }, d: 1 },\n}\n");
        d.set(&["a", "b", "c"], &json!({"p": 1})).unwrap();
        assert_eq!(
            d.render(),
            "{\n  a: {\n    b: {\n      c: {\n        \"p\": 1\n      }\n    },\n    d: 1\n  },\n}\n"
        );
        // A scalar replaced in place keeps the line as it is.
        let mut d = doc("{\n  a: { b: 1, d: 1 },\n}\n");
        d.set(&["a", "b"], &json!(2)).unwrap();
        assert_eq!(d.render(), "{\n  a: { b: 2, d: 1 },\n}\n");
    }

    /// Odd but valid layouts: every edit leaves a document that parses back to exactly the
    /// values asked for, with nothing else changed.
    #[test]
    fn edits_on_odd_layouts_read_back() {
        let texts = [
            "{}",
            "{ }",
            "{\n}\n",
            "{a:1}",
            "{/*c*/}",
            "{\n  // only a comment\n}",
            "{\n  a: 1, // one\n  /* two */ b: [1, 2,],\n}",
            "{\r\n  \"a\": {\r\n    \"b\": 1\r\n  }\r\n}\r\n",
            "{'quoted': 'single', $id: 1, _x: +1, y: .5, z: 0xff}",
            "{\"a\": {\"b\": {}}}",
            "{\n\ta: {\n\t\tb: null,\n\t},\n}",
        ];
        let ops: [(&[&str], Option<Value>); 7] = [
            (&["a"], Some(json!(2))),
            (&["a", "b"], Some(json!({"c": [1, {"d": "e"}]}))),
            (&["new"], Some(json!({"k": "v", "l": []}))),
            (&["a", "b", "c"], None),
            (&["a"], None),
            (&["x", "y", "z"], Some(json!("deep"))),
            (&["x"], Some(json!([]))),
        ];
        for text in texts {
            let mut d = doc(text);
            let mut expect = d.get(&[]).unwrap();
            for (path, value) in &ops {
                let outcome = match value {
                    Some(v) => d.set(path, v).map(|()| true),
                    None => d.remove(path),
                };
                let rendered = d.render();
                let reread = open(&rendered)
                    .unwrap_or_else(|e| panic!("{text:?} -> {rendered:?}: {}", e.0))
                    .get(&[])
                    .unwrap();
                match (outcome, value) {
                    (Ok(_), Some(v)) => {
                        let mut at = &mut expect;
                        for key in &path[..path.len() - 1] {
                            let obj = at.as_object_mut().unwrap();
                            at = obj.entry(key.to_string()).or_insert_with(|| json!({}));
                        }
                        at.as_object_mut()
                            .unwrap()
                            .insert(path[path.len() - 1].to_owned(), v.clone());
                    }
                    (Ok(true), None) => {
                        let mut at = &mut expect;
                        for key in &path[..path.len() - 1] {
                            at = at.get_mut(*key).unwrap();
                        }
                        at.as_object_mut().unwrap().remove(path[path.len() - 1]);
                    }
                    (Ok(false), None) | (Err(_), _) => {}
                }
                assert_eq!(reread, expect, "{text:?} after {path:?} -> {rendered:?}");
            }
        }
    }

    #[test]
    fn crlf_files_stay_crlf() {
        let mut d = doc("{\r\n  \"a\": {\r\n    \"b\": 1\r\n  }\r\n}\r\n");
        d.set(&["a", "c"], &json!({"d": [1, 2]})).unwrap();
        d.set(&["e"], &json!("f")).unwrap();
        let out = d.render();
        assert_eq!(
            out.matches('\n').count(),
            out.matches("\r\n").count(),
            "{out:?}"
        );
    }

    #[test]
    fn a_byte_order_mark_survives_an_edit() {
        let mut d = doc("\u{feff}{\"a\": 1}");
        d.set(&["a"], &json!(2)).unwrap();
        assert_eq!(d.render(), "\u{feff}{\"a\": 2}");
    }

    #[test]
    fn strings_are_escaped() {
        let mut d = doc("{}");
        d.set(&["s"], &json!("quote \" backslash \\ newline \n"))
            .unwrap();
        let again = doc(&d.render());
        assert_eq!(
            again.get(&["s"]),
            Some(json!("quote \" backslash \\ newline \n"))
        );
        d.set(&["weird key \""], &json!(1)).unwrap();
        assert_eq!(doc(&d.render()).get(&["weird key \""]), Some(json!(1)));
    }

    #[test]
    fn bad_documents_are_refused_with_a_position() {
        let err = open_err("{\n  \"a\": 1,\n  \"b\": \n}");
        assert!(err.contains("on line 4 column 1"), "{err}");
        let err = open_err("{\n  apiKey: \"sk-secret\" oops\n");
        assert!(err.contains("on line 3 column 1"), "{err}");
        assert!(!err.contains("sk-secret"));
        assert!(open_err("").contains("empty"));
        assert!(open_err("  // only a comment\n").contains("empty"));
        assert!(open_err("[1, 2]").contains("not an object"));
        open_err("{\"a\": 1} {\"b\": 2}");
    }
}
