//! The frontmatter's fields, in the current format or the earlier one (see `format`),
//! into a [`Skill`], each error at the line of the key it is about.

use std::collections::BTreeMap;
use std::path::Path;

use serde::de::DeserializeOwned;
use serde_yaml_ng::{Mapping, Value};

use super::{Location, Parsed, SkillError, Split, is_slug, key_line};
use crate::format;
use crate::skill::{CATEGORIES, Extra, Provenance, Skill, Source};

/// Turns the frontmatter mapping into a skill, with errors at the offending key's line.
pub(super) struct Reader<'a> {
    s: &'a Split<'a>,
    path: Option<&'a Path>,
    warnings: Vec<String>,
    legacy: bool,
    unkept: Vec<String>,
}

impl<'a> Reader<'a> {
    pub(super) fn new(s: &'a Split<'a>, path: Option<&'a Path>) -> Self {
        Reader {
            s,
            path,
            warnings: Vec::new(),
            legacy: false,
            unkept: Vec::new(),
        }
    }

    fn err(&self, key: &str, msg: String) -> SkillError {
        SkillError::invalid(self.path, Some(key_line(self.s, key)), msg)
    }

    /// A typed value of `key`; its errors name the key and its line.
    fn value<T: DeserializeOwned>(&self, key: &str, v: Value) -> Result<T, SkillError> {
        serde_yaml_ng::from_value(v).map_err(|e| self.err(key, format!("{key}: {e}")))
    }

    /// A text field: a string, or a number or boolean as written.
    fn text(&self, key: &str, v: Option<Value>) -> Result<Option<String>, SkillError> {
        match v {
            None | Some(Value::Null) => Ok(None),
            Some(v @ (Value::String(_) | Value::Number(_) | Value::Bool(_))) => {
                Ok(Some(format::text_of(&v)))
            }
            Some(_) => Err(self.err(key, format!("{key}: expected a string"))),
        }
    }

    pub(super) fn read(mut self, mut fm: Mapping) -> Result<Parsed, SkillError> {
        let open = self.s.open_line;
        let missing = |key: &str| SkillError::invalid(self.path, Some(open), key.to_string());
        let name = self
            .text("name", fm.remove("name"))?
            .ok_or_else(|| missing("missing required field `name`"))?;
        if !is_slug(&name) {
            let msg = format!("name: expected a slug like debug-systematically, got {name:?}");
            return Err(self.err("name", msg));
        }
        let description = self
            .text("description", fm.remove("description"))?
            .map(|d| d.split_whitespace().collect::<Vec<_>>().join(" "))
            .unwrap_or_default();
        if description.is_empty() {
            let msg = "missing required field `description`".into();
            return Err(self.err("description", msg));
        }
        let mut extra = Extra {
            license: self.text("license", fm.remove("license"))?,
            compatibility: self.text("compatibility", fm.remove("compatibility"))?,
            allowed_tools: self.allowed_tools(fm.remove("allowed-tools"))?,
            metadata: BTreeMap::new(),
        };
        let mut ours = BTreeMap::new();
        match fm.remove("metadata") {
            None | Some(Value::Null) => {}
            Some(Value::Mapping(m)) => {
                for (k, v) in m {
                    let key = format::text_of(&k);
                    if format::OURS.contains(&key.as_str()) {
                        let text = self.text(&key, Some(v))?.unwrap_or_default();
                        ours.insert(key, text);
                    } else {
                        if !matches!(v, Value::String(_)) {
                            self.legacy = true;
                        }
                        if key.starts_with("metaclaw-") {
                            self.warn(None, format!("unknown MetaClaw key `metadata.{key}` kept"));
                        }
                        extra.metadata.insert(key, format::text_of(&v));
                    }
                }
            }
            Some(_) => {
                let msg = "metadata: expected a map of keys to strings".into();
                return Err(self.err("metadata", msg));
            }
        }
        let legacy = self.legacy_fields(&mut fm)?;
        // Another tool's own top-level keys (ClawHub's `version`, `homepage`) move under
        // `metadata`, where the specification has room for them.
        for (k, v) in fm {
            let (key, value) = (format::text_of(&k), format::text_of(&v));
            self.legacy = true;
            match extra.metadata.get(&key) {
                Some(kept) if *kept != value => self.unkept.push(key),
                Some(_) => {}
                None => {
                    extra.metadata.insert(key, value);
                }
            }
        }
        // A field written both ways: the `metadata` one is used.
        for (old, new) in [
            ("category", format::CATEGORY),
            ("tags", format::TAGS),
            ("always", format::ALWAYS),
            ("disabled", format::DISABLED),
            ("source", format::SOURCE),
        ] {
            if legacy.present.contains(&old) && ours.contains_key(new) {
                self.unkept.push(old.to_string());
            }
        }
        if legacy.present.contains(&"provenance")
            && format::PROVENANCE.iter().any(|k| ours.contains_key(*k))
        {
            self.unkept.push("provenance".into());
        }

        let category = match ours.get(format::CATEGORY).or(legacy.category.as_ref()) {
            Some(c) if !c.trim().is_empty() => c.trim().to_string(),
            _ => "general".to_string(),
        };
        if !CATEGORIES.contains(&category.as_str()) {
            let line = key_line(self.s, format::CATEGORY).max(key_line(self.s, "category"));
            self.warn(
                Some(line),
                format!(
                    "category {category:?} is not one of {}",
                    CATEGORIES.join(", ")
                ),
            );
        }
        let tags = match ours.get(format::TAGS) {
            Some(t) => format::split_tags(t),
            None => legacy.tags,
        };
        let flag = |key: &str, old: Option<bool>| -> Result<bool, SkillError> {
            match ours.get(key).map(|v| v.trim()) {
                None => Ok(old.unwrap_or(false)),
                Some("true") => Ok(true),
                Some("false" | "") => Ok(false),
                Some(v) => Err(self.err(key, format!("{key}: expected true or false, got {v:?}"))),
            }
        };
        let always = flag(format::ALWAYS, legacy.always)?;
        let disabled = flag(format::DISABLED, legacy.disabled)?;
        let source = match ours.get(format::SOURCE) {
            Some(v) => self.value(format::SOURCE, Value::String(v.trim().to_string()))?,
            None => legacy.source.unwrap_or_default(),
        };
        let provenance = self.provenance(&ours, legacy.provenance)?;

        let skill = Skill {
            name,
            description,
            category,
            tags,
            always,
            disabled,
            source,
            provenance,
            body: self.s.body.join("\n").trim().to_string(),
            path: self.path.map(Path::to_path_buf),
            extra,
        };
        Ok(Parsed {
            skill,
            warnings: self.warnings,
            legacy: self.legacy,
            unkept: self.unkept,
        })
    }

    fn warn(&mut self, line: Option<usize>, msg: String) {
        let at = Location(self.path, line);
        self.warnings.push(format!("{at}{msg}"));
    }

    /// A string, or a list of tool names as some tools write it, joined by spaces.
    fn allowed_tools(&mut self, v: Option<Value>) -> Result<Option<String>, SkillError> {
        let Some(Value::Sequence(items)) = v else {
            return self.text("allowed-tools", v);
        };
        self.legacy = true;
        let names: Vec<String> = items.iter().map(format::text_of).collect();
        Ok(Some(names.join(" ")))
    }

    /// MetaClaw's fields as the earlier format had them, at the top level.
    fn legacy_fields(&mut self, fm: &mut Mapping) -> Result<LegacyFields, SkillError> {
        let mut out = LegacyFields::default();
        for key in format::LEGACY_KEYS {
            let Some(v) = fm.remove(*key) else {
                continue;
            };
            self.legacy = true;
            out.present.push(key);
            match *key {
                "category" => out.category = self.text(key, Some(v))?,
                "tags" => {
                    out.tags = match v {
                        Value::Sequence(_) => self.value::<Vec<String>>(key, v)?,
                        v => format::split_tags(&self.text(key, Some(v))?.unwrap_or_default()),
                    }
                    .into_iter()
                    .map(|t| t.trim().to_string())
                    .filter(|t| !t.is_empty())
                    .collect();
                }
                "always" => out.always = self.value(key, v)?,
                "disabled" => out.disabled = self.value(key, v)?,
                "source" => out.source = self.value(key, v)?,
                _ if v.is_null() => {}
                _ => {
                    let mut unknown = Vec::new();
                    let p: Provenance =
                        serde_ignored::deserialize(v, |p| unknown.push(p.to_string()))
                            .map_err(|e| self.err(key, format!("{key}: {e}")))?;
                    for u in unknown {
                        self.warn(None, format!("unknown key `provenance.{u}` ignored"));
                        self.unkept.push(format!("provenance.{u}"));
                    }
                    out.provenance = Some(p);
                }
            }
        }
        Ok(out)
    }

    /// Provenance from `metaclaw-*` keys, else as the earlier format wrote it.
    fn provenance(
        &self,
        ours: &BTreeMap<String, String>,
        legacy: Option<Provenance>,
    ) -> Result<Option<Provenance>, SkillError> {
        if !format::PROVENANCE.iter().any(|k| ours.contains_key(*k)) {
            return Ok(legacy);
        }
        let text = |k: &str| ours.get(k).cloned();
        let list = |k: &str| match ours.get(k) {
            None => Ok(Vec::new()),
            Some(t) => format::split_list(t).map_err(|e| self.err(k, format!("{k}: {e}"))),
        };
        let generation = match ours.get(format::GENERATION) {
            None => None,
            Some(g) => Some(g.trim().parse::<u64>().map_err(|_| {
                let msg = format!("{}: expected a whole number, got {g:?}", format::GENERATION);
                self.err(format::GENERATION, msg)
            })?),
        };
        Ok(Some(Provenance {
            sessions: list(format::SESSIONS)?,
            created_at: text(format::CREATED_AT),
            model: text(format::MODEL),
            improves: text(format::IMPROVES),
            generation,
            origin: text(format::ORIGIN),
            requests: list(format::REQUESTS)?,
        }))
    }
}

#[derive(Default)]
struct LegacyFields {
    /// The keys the file had.
    present: Vec<&'static str>,
    category: Option<String>,
    tags: Vec<String>,
    always: Option<bool>,
    disabled: Option<bool>,
    source: Option<Source>,
    provenance: Option<Provenance>,
}
