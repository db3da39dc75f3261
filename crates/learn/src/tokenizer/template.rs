//! A Hugging Face `chat_template` rendered with minijinja, set up the way `transformers`
//! sets up Jinja2 for chat templates: `trim_blocks` and `lstrip_blocks`, loop controls,
//! Python string methods (`.strip()`, `.startswith()`, `.split()`, …), and the helpers
//! templates call: `raise_exception`, `tojson` (Python `json.dumps` formatting) and
//! `strftime_now`.

use minijinja::value::Kwargs;
use minijinja::{Environment, Error, ErrorKind, Value as JValue};
use serde_json::{Map, Value};

use super::error::TokenizerError;
use super::pyjson;

const NAME: &str = "chat_template";

pub struct ChatTemplate {
    env: Environment<'static>,
    /// `bos_token`, `eos_token`, … from `tokenizer_config.json`, passed to every render.
    special: Map<String, Value>,
}

impl std::fmt::Debug for ChatTemplate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChatTemplate").finish_non_exhaustive()
    }
}

impl ChatTemplate {
    /// Compiles `source`; `special` holds the tokenizer's named special tokens.
    pub fn new(source: &str, special: Map<String, Value>) -> Result<Self, TokenizerError> {
        let mut env = Environment::new();
        env.set_trim_blocks(true);
        env.set_lstrip_blocks(true);
        env.set_unknown_method_callback(minijinja_contrib::pycompat::unknown_method_callback);
        env.add_filter("tojson", tojson);
        env.add_function("raise_exception", raise_exception);
        env.add_function("strftime_now", strftime_now);
        env.add_template_owned(NAME, source.to_owned())
            .map_err(|e| TokenizerError::Template(describe(&e)))?;
        Ok(Self { env, special })
    }

    /// Renders `messages` (OpenAI-style message objects) with `tools` (function
    /// definitions, passed as the `tools` variable the templates expect) and
    /// `add_generation_prompt`; `extra` adds variables such as `enable_thinking`.
    pub fn render(
        &self,
        messages: &[Value],
        tools: Option<&[Value]>,
        add_generation_prompt: bool,
        extra: &Map<String, Value>,
    ) -> Result<String, TokenizerError> {
        let mut ctx = self.special.clone();
        for (k, v) in extra {
            ctx.insert(k.clone(), v.clone());
        }
        ctx.insert("messages".into(), Value::Array(messages.to_vec()));
        ctx.insert(
            "tools".into(),
            tools.map_or(Value::Null, |t| Value::Array(t.to_vec())),
        );
        ctx.insert(
            "add_generation_prompt".into(),
            Value::Bool(add_generation_prompt),
        );
        let tmpl = self
            .env
            .get_template(NAME)
            .map_err(|e| TokenizerError::Template(describe(&e)))?;
        tmpl.render(JValue::from_serialize(&ctx))
            .map_err(|e| TokenizerError::Template(describe(&e)))
    }
}

fn describe(e: &Error) -> String {
    let mut s = e.to_string();
    let mut src = std::error::Error::source(e);
    while let Some(inner) = src {
        s.push_str(": ");
        s.push_str(&inner.to_string());
        src = inner.source();
    }
    s
}

fn raise_exception(message: String) -> Result<JValue, Error> {
    Err(Error::new(ErrorKind::InvalidOperation, message))
}

/// `tojson(indent=None, ensure_ascii=False, sort_keys=False)` as in `transformers`.
fn tojson(value: JValue, kwargs: Kwargs) -> Result<JValue, Error> {
    let indent: Option<usize> = kwargs.get("indent")?;
    let sort_keys: Option<bool> = kwargs.get("sort_keys")?;
    let ensure_ascii: Option<bool> = kwargs.get("ensure_ascii")?;
    kwargs.assert_all_used()?;
    let json = serde_json::to_value(&value)
        .map_err(|e| Error::new(ErrorKind::InvalidOperation, format!("tojson: {e}")))?;
    Ok(JValue::from_safe_string(pyjson::dumps(
        &json,
        indent,
        sort_keys.unwrap_or(false),
        ensure_ascii.unwrap_or(false),
    )))
}

/// `strftime_now(format)`: the current local time (UTC when the offset is unknown) in a
/// C `strftime` format; the common specifiers are supported.
fn strftime_now(format: String) -> Result<JValue, Error> {
    let now = time::OffsetDateTime::now_local().unwrap_or_else(|_| time::OffsetDateTime::now_utc());
    Ok(JValue::from(strftime(&now, &format)))
}

pub(crate) fn strftime(t: &time::OffsetDateTime, format: &str) -> String {
    const MONTHS: [&str; 12] = [
        "January",
        "February",
        "March",
        "April",
        "May",
        "June",
        "July",
        "August",
        "September",
        "October",
        "November",
        "December",
    ];
    const DAYS: [&str; 7] = [
        "Monday",
        "Tuesday",
        "Wednesday",
        "Thursday",
        "Friday",
        "Saturday",
        "Sunday",
    ];
    let month = MONTHS[usize::from(u8::from(t.month())) - 1];
    let day = DAYS[usize::from(t.weekday().number_days_from_monday())];
    let mut out = String::new();
    let mut chars = format.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('d') => out.push_str(&format!("{:02}", t.day())),
            Some('m') => out.push_str(&format!("{:02}", u8::from(t.month()))),
            Some('Y') => out.push_str(&t.year().to_string()),
            Some('y') => out.push_str(&format!("{:02}", t.year().rem_euclid(100))),
            Some('H') => out.push_str(&format!("{:02}", t.hour())),
            Some('M') => out.push_str(&format!("{:02}", t.minute())),
            Some('S') => out.push_str(&format!("{:02}", t.second())),
            Some('j') => out.push_str(&format!("{:03}", t.ordinal())),
            Some('B') => out.push_str(month),
            Some('b') => out.push_str(&month[..3]),
            Some('A') => out.push_str(day),
            Some('a') => out.push_str(&day[..3]),
            Some('%') => out.push('%'),
            Some(other) => {
                out.push('%');
                out.push(other);
            }
            None => out.push('%'),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn strftime_formats_the_common_specifiers() {
        let t = time::macros::datetime!(2026-07-04 09:05:03 UTC);
        assert_eq!(strftime(&t, "%d %b %Y"), "04 Jul 2026");
        assert_eq!(
            strftime(&t, "%A %B %H:%M:%S %% %j"),
            "Saturday July 09:05:03 % 185"
        );
    }

    #[test]
    fn helpers_behave_like_transformers() {
        let src = "{% for m in messages %}{% if m.role == 'bad' %}{{ raise_exception('no ' + m.role) }}{% endif %}{% if loop.index > 2 %}{% break %}{% endif %}[{{ m.content.strip() }}|{{ m | tojson }}]{% endfor %}";
        let t = ChatTemplate::new(src, Map::new()).unwrap();
        let msgs = [
            json!({"role": "user", "content": "  hi  "}),
            json!({"role": "assistant", "content": "yo"}),
            json!({"role": "user", "content": "cut"}),
        ];
        let out = t.render(&msgs, None, false, &Map::new()).unwrap();
        assert_eq!(
            out,
            r#"[hi|{"role": "user", "content": "  hi  "}][yo|{"role": "assistant", "content": "yo"}]"#
        );
        let err = t
            .render(
                &[json!({"role": "bad", "content": ""})],
                None,
                false,
                &Map::new(),
            )
            .unwrap_err();
        assert!(err.to_string().contains("no bad"), "{err}");
    }
}
