//! JSON text as Python's `json.dumps` writes it (`", "` and `": "` separators, non-ASCII
//! kept, optional indent), which is what Hugging Face's `tojson` gives chat templates. The
//! rendered prompt must match the one the model was trained with byte for byte.

use serde_json::Value;

pub(crate) fn dumps(
    v: &Value,
    indent: Option<usize>,
    sort_keys: bool,
    ensure_ascii: bool,
) -> String {
    let mut out = String::new();
    write(&mut out, v, indent, sort_keys, 0);
    if ensure_ascii {
        out = escape_non_ascii(&out);
    }
    out
}

/// `ensure_ascii=True`: every non-ASCII character as `\uXXXX` (UTF-16 surrogate pairs above
/// U+FFFF). Non-ASCII only ever occurs inside strings, so the whole text can be mapped.
fn escape_non_ascii(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if c.is_ascii() {
            out.push(c);
        } else {
            let mut units = [0u16; 2];
            for u in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{:04x}", u));
            }
        }
    }
    out
}

fn newline(out: &mut String, indent: Option<usize>, level: usize) {
    if let Some(n) = indent {
        out.push('\n');
        out.push_str(&" ".repeat(n * level));
    }
}

fn write(out: &mut String, v: &Value, indent: Option<usize>, sort_keys: bool, level: usize) {
    let item_sep = if indent.is_some() { "," } else { ", " };
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&number(n)),
        Value::String(s) => string(out, s),
        Value::Array(items) => {
            if items.is_empty() {
                out.push_str("[]");
                return;
            }
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(item_sep);
                }
                newline(out, indent, level + 1);
                write(out, item, indent, sort_keys, level + 1);
            }
            newline(out, indent, level);
            out.push(']');
        }
        Value::Object(map) => {
            if map.is_empty() {
                out.push_str("{}");
                return;
            }
            let mut entries: Vec<_> = map.iter().collect();
            if sort_keys {
                entries.sort_by(|a, b| a.0.cmp(b.0));
            }
            out.push('{');
            for (i, (k, item)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push_str(item_sep);
                }
                newline(out, indent, level + 1);
                string(out, k);
                out.push_str(": ");
                write(out, item, indent, sort_keys, level + 1);
            }
            newline(out, indent, level);
            out.push('}');
        }
    }
}

/// Python's float repr: integral floats keep `.0`; exponents below 1e-4 or from 1e16 use
/// `e-05` style.
fn number(n: &serde_json::Number) -> String {
    if n.is_i64() || n.is_u64() {
        return n.to_string();
    }
    let Some(f) = n.as_f64() else {
        return n.to_string();
    };
    let a = f.abs();
    if a != 0.0 && !(1e-4..1e16).contains(&a) {
        let s = format!("{f:e}");
        if let Some((mant, exp)) = s.split_once('e') {
            let (sign, digits) = match exp.strip_prefix('-') {
                Some(d) => ('-', d),
                None => ('+', exp),
            };
            return format!("{mant}e{sign}{digits:0>2}");
        }
        return s;
    }
    if f.fract() == 0.0 {
        format!("{f:.1}")
    } else {
        format!("{f}")
    }
}

fn string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{08}' => out.push_str("\\b"),
            '\u{0c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn matches_python_json_dumps() {
        let v = json!({"name": "get_weather", "parameters": {"type": "object", "required": ["city"], "n": 1.0, "p": 0.5, "tiny": 0.00001}, "desc": "Café \"x\"\n"});
        assert_eq!(
            dumps(&v, None, false, false),
            r#"{"name": "get_weather", "parameters": {"type": "object", "required": ["city"], "n": 1.0, "p": 0.5, "tiny": 1e-05}, "desc": "Café \"x\"\n"}"#
        );
        assert_eq!(
            dumps(&json!({"a": [1, {}], "b": []}), Some(2), false, false),
            "{\n  \"a\": [\n    1,\n    {}\n  ],\n  \"b\": []\n}"
        );
        assert_eq!(
            dumps(&json!({"b": 1, "a": 2}), None, true, false),
            r#"{"a": 2, "b": 1}"#
        );
        assert_eq!(
            dumps(&json!(["é", "😀", "a"]), None, false, true),
            r#"["\u00e9", "\ud83d\ude00", "a"]"#
        );
    }
}
