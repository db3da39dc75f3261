//! `.env` files: `KEY=value` lines. Comments, blank lines, order, `export ` prefixes and
//! other keys stay as written; a changed key is rewritten in place (keeping its prefix and
//! trailing comment), a new one appended at the end.

use serde_json::Value;

use crate::doc::{Doc, EditError};

pub fn open(text: &str) -> Result<Box<dyn Doc>, EditError> {
    Ok(Box::new(DotenvDoc::parse(text)?))
}

/// One logical line (a quoted value may span several physical lines).
#[derive(Debug, Clone)]
enum Line {
    /// Blank, a comment, or anything kept verbatim.
    Other(String),
    Entry(Entry),
}

#[derive(Debug, Clone)]
struct Entry {
    key: String,
    /// Everything up to the value: indent, `export `, the key, `=` and spaces after it.
    head: String,
    /// The value as written (quotes included).
    raw: String,
    /// What follows the value: spaces and an inline `# comment`.
    tail: String,
    /// `\n`, `\r\n` or nothing at the end of the file.
    eol: String,
}

struct DotenvDoc {
    lines: Vec<Line>,
}

impl DotenvDoc {
    fn parse(text: &str) -> Result<DotenvDoc, EditError> {
        let mut lines = Vec::new();
        let mut rest = text;
        let mut line_no = 1usize;
        while !rest.is_empty() {
            let (line, eol, after) = split_line(rest);
            let Some((head, key, value_start)) = entry_head(line) else {
                let trimmed = line.trim_start();
                if trimmed.is_empty() || trimmed.starts_with('#') {
                    lines.push(Line::Other(format!("{line}{eol}")));
                    rest = after;
                    line_no += 1;
                    continue;
                }
                return Err(EditError(format!(
                    "line {line_no}: expected KEY=value or a # comment"
                )));
            };
            // A quoted value may run over several lines; gather until its closing quote.
            let mut logical = line.to_owned();
            let mut eol = eol;
            let mut after = after;
            let start_line = line_no;
            let quote = value_start_quote(&logical[value_start..]);
            if let Some(q) = quote {
                while closing_quote(&logical[value_start..], q).is_none() {
                    if after.is_empty() {
                        return Err(EditError(format!(
                            "line {start_line}: the value of {key} opens a {q} quote that never closes"
                        )));
                    }
                    let (next, next_eol, next_after) = split_line(after);
                    logical.push_str(eol);
                    logical.push_str(next);
                    eol = next_eol;
                    after = next_after;
                    line_no += 1;
                }
            }
            let value_part = &logical[value_start..];
            let raw_len = match quote {
                Some(q) => closing_quote(value_part, q).map_or(value_part.len(), |i| i + 1),
                None => unquoted_len(value_part),
            };
            let (raw, tail) = value_part.split_at(raw_len);
            if quote.is_some() && !tail.trim().is_empty() && !tail.trim_start().starts_with('#') {
                return Err(EditError(format!(
                    "line {start_line}: unexpected text after the quoted value of {key}"
                )));
            }
            lines.push(Line::Entry(Entry {
                key: key.to_owned(),
                head: head.to_owned(),
                raw: raw.to_owned(),
                tail: tail.to_owned(),
                eol: eol.to_owned(),
            }));
            rest = after;
            line_no += 1;
        }
        Ok(DotenvDoc { lines })
    }

    fn newline(&self) -> &'static str {
        let crlf = self.lines.iter().any(|l| match l {
            Line::Other(s) => s.ends_with("\r\n"),
            Line::Entry(e) => e.eol == "\r\n",
        });
        if crlf { "\r\n" } else { "\n" }
    }
}

/// `(line without its end, the end, what follows)`.
fn split_line(text: &str) -> (&str, &str, &str) {
    match text.find('\n') {
        Some(i) => {
            let (line, after) = (&text[..i], &text[i + 1..]);
            match line.strip_suffix('\r') {
                Some(l) => (l, &text[i - 1..=i], after),
                None => (line, &text[i..=i], after),
            }
        }
        None => (text, "", ""),
    }
}

/// For `  export KEY = value`: `(head up to the value, key, byte offset of the value)`.
fn entry_head(line: &str) -> Option<(&str, &str, usize)> {
    let indent = line.len() - line.trim_start().len();
    let mut pos = indent;
    if let Some(after) = line[pos..].strip_prefix("export")
        && after.starts_with([' ', '\t'])
    {
        pos = line.len() - after.trim_start().len();
    }
    let key_len = line[pos..]
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == '-'))
        .unwrap_or(line.len() - pos);
    if key_len == 0 || line[pos..].starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    let key = &line[pos..pos + key_len];
    let after_key = &line[pos + key_len..];
    let eq = after_key.trim_start_matches([' ', '\t']);
    let eq = eq.strip_prefix('=')?;
    let value_start = line.len() - eq.trim_start_matches([' ', '\t']).len();
    Some((&line[..value_start], key, value_start))
}

fn value_start_quote(value: &str) -> Option<char> {
    value
        .chars()
        .next()
        .filter(|c| matches!(c, '"' | '\'' | '`'))
}

/// Byte offset of the quote closing a value that starts with `q`.
fn closing_quote(value: &str, q: char) -> Option<usize> {
    let mut escaped = false;
    for (i, c) in value.char_indices().skip(1) {
        if escaped {
            escaped = false;
        } else if c == '\\' && q == '"' {
            escaped = true;
        } else if c == q {
            return Some(i);
        }
    }
    None
}

/// An unquoted value ends at ` #` (an inline comment) or trailing spaces.
fn unquoted_len(value: &str) -> usize {
    let mut end = value.len();
    let bytes = value.as_bytes();
    for (i, b) in bytes.iter().enumerate() {
        if *b == b'#' && i > 0 && matches!(bytes[i - 1], b' ' | b'\t') {
            end = i;
            break;
        }
    }
    value[..end].trim_end_matches([' ', '\t']).len()
}

fn unquote(raw: &str) -> String {
    if let Some(inner) = raw.strip_prefix('"').and_then(|r| r.strip_suffix('"')) {
        let mut out = String::with_capacity(inner.len());
        let mut chars = inner.chars();
        while let Some(c) = chars.next() {
            if c != '\\' {
                out.push(c);
                continue;
            }
            match chars.next() {
                Some('n') => out.push('\n'),
                Some('r') => out.push('\r'),
                Some('t') => out.push('\t'),
                Some(other) => out.push(other),
                None => out.push('\\'),
            }
        }
        return out;
    }
    for q in ['\'', '`'] {
        if let Some(inner) = raw.strip_prefix(q).and_then(|r| r.strip_suffix(q)) {
            return inner.to_owned();
        }
    }
    raw.to_owned()
}

/// The value as it should be written: bare when every reader takes it literally, else
/// single quotes (no expansion anywhere), else double quotes with escapes.
fn quote(value: &str) -> String {
    let bare = value
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "-_./:@%+,=~^".contains(c));
    if bare {
        return value.to_owned();
    }
    if !value.contains(['\'', '\n', '\r']) {
        return format!("'{value}'");
    }
    let mut out = String::from("\"");
    for c in value.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '$' => out.push_str("\\$"),
            '`' => out.push_str("\\`"),
            other => out.push(other),
        }
    }
    out.push('"');
    out
}

fn single_key<'a>(path: &[&'a str]) -> Result<&'a str, EditError> {
    match path {
        [key] if !key.is_empty() && entry_head(&format!("{key}=")).is_some_and(|h| h.1 == *key) => {
            Ok(key)
        }
        [key] => Err(EditError(format!("`{key}` is not a valid .env key"))),
        _ => Err(EditError(format!(
            "a .env file has one level of keys, not `{}`",
            path.join(".")
        ))),
    }
}

fn as_text(value: &Value, key: &str) -> Result<String, EditError> {
    match value {
        Value::String(s) => Ok(s.clone()),
        Value::Number(n) => Ok(n.to_string()),
        Value::Bool(b) => Ok(b.to_string()),
        _ => Err(EditError(format!(
            "{key}: a .env value is text, not {}",
            if value.is_null() {
                "null"
            } else {
                "a list or object"
            }
        ))),
    }
}

impl Doc for DotenvDoc {
    fn get(&self, path: &[&str]) -> Option<Value> {
        let [key] = path else { return None };
        // The last assignment wins, as when the file is sourced.
        self.lines.iter().rev().find_map(|l| match l {
            Line::Entry(e) if e.key == *key => Some(Value::String(unquote(&e.raw))),
            _ => None,
        })
    }

    fn set(&mut self, path: &[&str], value: &Value) -> Result<(), EditError> {
        let key = single_key(path)?;
        let text = as_text(value, key)?;
        let mut found = false;
        for line in &mut self.lines {
            if let Line::Entry(e) = line
                && e.key == key
            {
                found = true;
                if unquote(&e.raw) != text {
                    e.raw = quote(&text);
                }
            }
        }
        if !found {
            let newline = self.newline();
            if let Some(last) = self.lines.last_mut() {
                match last {
                    Line::Other(s) if !s.ends_with('\n') => s.push_str(newline),
                    Line::Entry(e) if e.eol.is_empty() => e.eol = newline.to_owned(),
                    _ => {}
                }
            }
            self.lines.push(Line::Entry(Entry {
                key: key.to_owned(),
                head: format!("{key}="),
                raw: quote(&text),
                tail: String::new(),
                eol: newline.to_owned(),
            }));
        }
        Ok(())
    }

    fn remove(&mut self, path: &[&str]) -> Result<bool, EditError> {
        let key = single_key(path)?;
        let before = self.lines.len();
        self.lines
            .retain(|l| !matches!(l, Line::Entry(e) if e.key == key));
        Ok(self.lines.len() != before)
    }

    fn render(&self) -> String {
        let mut out = String::new();
        for line in &self.lines {
            match line {
                Line::Other(s) => out.push_str(s),
                Line::Entry(e) => {
                    out.push_str(&e.head);
                    out.push_str(&e.raw);
                    out.push_str(&e.tail);
                    out.push_str(&e.eol);
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]

    use serde_json::json;

    use super::*;

    const SAMPLE: &str = "# IronClaw settings\n\nDATABASE_URL=postgres://localhost/ironclaw\nexport LLM_BACKEND=nearai   # default\nLLM_MODEL = \"gpt-4o\"\n  # indented comment\nSECRET='a b $c'\nMULTI=\"line one\nline two\"\nEMPTY=\n";

    fn doc(text: &str) -> Box<dyn Doc> {
        open(text).unwrap()
    }

    #[test]
    fn untouched_renders_byte_identical() {
        for text in [
            SAMPLE,
            "",
            "\n\n",
            "A=1",
            "A=1\r\nB=2\r\n",
            "# only\n",
            "export X=y",
        ] {
            assert_eq!(doc(text).render(), text);
        }
    }

    #[test]
    fn get_unquotes() {
        let d = doc(SAMPLE);
        assert_eq!(d.get(&["LLM_BACKEND"]), Some(json!("nearai")));
        assert_eq!(d.get(&["LLM_MODEL"]), Some(json!("gpt-4o")));
        assert_eq!(d.get(&["SECRET"]), Some(json!("a b $c")));
        assert_eq!(d.get(&["MULTI"]), Some(json!("line one\nline two")));
        assert_eq!(d.get(&["EMPTY"]), Some(json!("")));
        assert_eq!(d.get(&["MISSING"]), None);
        assert_eq!(d.get(&["A", "B"]), None);
        assert_eq!(
            doc("A=\"x \\\"q\\\" \\n\"").get(&["A"]),
            Some(json!("x \"q\" \n"))
        );
    }

    #[test]
    fn replaces_in_place_keeping_prefix_and_comment() {
        let mut d = doc(SAMPLE);
        d.set(&["LLM_BACKEND"], &json!("openai_compatible"))
            .unwrap();
        d.set(&["LLM_MODEL"], &json!("metaclaw-model")).unwrap();
        let out = d.render();
        let want = SAMPLE
            .replace(
                "export LLM_BACKEND=nearai   # default",
                "export LLM_BACKEND=openai_compatible   # default",
            )
            .replace("LLM_MODEL = \"gpt-4o\"", "LLM_MODEL = metaclaw-model");
        assert_eq!(out, want);
    }

    #[test]
    fn equal_values_change_nothing() {
        let mut d = doc(SAMPLE);
        d.set(&["LLM_MODEL"], &json!("gpt-4o")).unwrap();
        d.set(&["SECRET"], &json!("a b $c")).unwrap();
        assert_eq!(d.render(), SAMPLE);
    }

    #[test]
    fn appends_missing_keys_with_newline_fixup() {
        let mut d = doc("# c\nA=1");
        d.set(&["B"], &json!("http://127.0.0.1:30000/v1")).unwrap();
        assert_eq!(d.render(), "# c\nA=1\nB=http://127.0.0.1:30000/v1\n");
        let mut d = doc("A=1\r\n# end");
        d.set(&["B"], &json!("x")).unwrap();
        assert_eq!(d.render(), "A=1\r\n# end\r\nB=x\r\n");
        let mut d = doc("");
        d.set(&["B"], &json!("x")).unwrap();
        assert_eq!(d.render(), "B=x\n");
    }

    #[test]
    fn quotes_only_when_needed() {
        let mut d = doc("");
        d.set(&["PLAIN"], &json!("sk-abc_123.x/y:z")).unwrap();
        d.set(&["SPACE"], &json!("a b")).unwrap();
        d.set(&["DOLLAR"], &json!("p$ss#1")).unwrap();
        d.set(&["BOTH"], &json!("it's \"x\"")).unwrap();
        d.set(&["EMPTY"], &json!("")).unwrap();
        d.set(&["NUM"], &json!(5)).unwrap();
        let out = d.render();
        assert_eq!(
            out,
            "PLAIN=sk-abc_123.x/y:z\nSPACE='a b'\nDOLLAR='p$ss#1'\nBOTH=\"it's \\\"x\\\"\"\nEMPTY=\nNUM=5\n"
        );
        let again = doc(&out);
        assert_eq!(again.get(&["BOTH"]), Some(json!("it's \"x\"")));
        assert_eq!(again.get(&["DOLLAR"]), Some(json!("p$ss#1")));
        assert_eq!(again.get(&["EMPTY"]), Some(json!("")));
    }

    #[test]
    fn duplicates_all_follow_and_remove_drops_them() {
        let mut d = doc("A=1\nB=2\nA=3\n");
        assert_eq!(d.get(&["A"]), Some(json!("3")));
        d.set(&["A"], &json!("9")).unwrap();
        assert_eq!(d.render(), "A=9\nB=2\nA=9\n");
        assert!(d.remove(&["A"]).unwrap());
        assert!(!d.remove(&["A"]).unwrap());
        assert_eq!(d.render(), "B=2\n");
    }

    #[test]
    fn refuses_bad_paths_and_values() {
        let mut d = doc(SAMPLE);
        assert!(d.set(&["A", "B"], &json!("x")).is_err());
        assert!(d.set(&["BAD KEY"], &json!("x")).is_err());
        assert!(d.set(&["A"], &json!({"x": 1})).is_err());
        assert!(d.set(&["A"], &json!(null)).is_err());
        assert!(d.set(&[], &json!("x")).is_err());
        assert_eq!(d.render(), SAMPLE);
    }

    #[test]
    fn corrupt_input_says_where() {
        let err = open("A=1\nthis is not env\n").err().unwrap();
        assert!(err.0.contains("line 2"), "{}", err.0);
        let err = open("A=1\nB=\"open\nC=2\n").err().unwrap();
        assert!(err.0.contains("line 2") && err.0.contains('B'), "{}", err.0);
        assert!(open("A=\"x\" trailing\n").is_err());
    }
}
