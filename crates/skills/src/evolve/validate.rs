//! Field rules for a proposal, each failure a plain reason. Nothing is silently "fixed" into
//! something else: normalisation is limited to case, surrounding space and line breaks.

use super::parse::Proposal;
use super::substance::says_nothing;
use crate::parse::is_slug;
use crate::skill::CATEGORIES;

pub(crate) const MAX_NAME: usize = 64;
pub(crate) const DESCRIPTION_CHARS: std::ops::RangeInclusive<usize> = 10..=300;
/// A user's standing rule fits in one sentence ("Write dates as YYYY-MM-DD."); a skill that
/// short is kept. Below this it is a fragment, not a lesson. The minimum counts a CJK
/// character as two: "以后代码注释一律用英文写，不要用中文。" is a whole rule in 18.
pub(crate) const BODY_CHARS: std::ops::RangeInclusive<usize> = 20..=8_000;
pub(crate) const MAX_TAGS: usize = 8;
pub(crate) const MAX_TAG_CHARS: usize = 32;
/// MetaClaw's injection delimiters: a body holding them is injected text leaking back.
const DELIMITERS: &[&str] = &["<metaclaw-context>", "</metaclaw-context>"];
/// Names Windows refuses as file or folder names.
const RESERVED: &[&str] = &["aux", "con", "nul", "prn"];

/// A proposal whose fields passed the rules, normalised.
#[derive(Debug, Clone)]
pub(crate) struct Valid {
    pub name: String,
    pub description: String,
    pub category: String,
    pub tags: Vec<String>,
    pub body: String,
    pub improves: Option<String>,
}

pub(crate) fn validate(p: Proposal) -> Result<Valid, String> {
    let name = name(&p.name)?;
    let description = description(&p.description)?;
    let body = body(&p.body)?;
    let category = category(&name, &p.category);
    let improves = p.improves.map(|i| i.trim().to_lowercase());
    Ok(Valid {
        name,
        description,
        category,
        tags: tags(p.tags),
        body,
        improves,
    })
}

fn name(raw: &str) -> Result<String, String> {
    let name = raw.trim().to_lowercase();
    if name.is_empty() {
        return Err("name is empty".into());
    }
    if name.chars().count() > MAX_NAME {
        return Err(format!("name is longer than {MAX_NAME} characters"));
    }
    // The Agent Skills specification also refuses a trailing or doubled hyphen.
    if !is_slug(&name) || name.ends_with('-') || name.contains("--") {
        return Err(format!(
            "name {raw:?} is not a slug (lowercase letters, digits and single inner hyphens)"
        ));
    }
    let device = name.len() == 4
        && (name.starts_with("com") || name.starts_with("lpt"))
        && name.as_bytes()[3].is_ascii_digit();
    if RESERVED.contains(&name.as_str()) || device {
        return Err(format!("name {name:?} is reserved on Windows"));
    }
    Ok(name)
}

fn description(raw: &str) -> Result<String, String> {
    let d = raw.split_whitespace().collect::<Vec<_>>().join(" ");
    let n = d.chars().count();
    if !DESCRIPTION_CHARS.contains(&n) {
        return Err(format!(
            "description has {n} characters, expected {}..={}",
            DESCRIPTION_CHARS.start(),
            DESCRIPTION_CHARS.end()
        ));
    }
    Ok(d)
}

fn body(raw: &str) -> Result<String, String> {
    let b = raw.trim().replace("\r\n", "\n");
    let lower = b.to_lowercase();
    if let Some(d) = DELIMITERS.iter().find(|d| lower.contains(*d)) {
        return Err(format!("body contains {d}: injected context leaking back"));
    }
    let n = b.chars().count();
    let cjk = b.chars().filter(|&c| crate::retrieval::is_cjk(c)).count();
    if n + cjk < *BODY_CHARS.start() || n > *BODY_CHARS.end() {
        return Err(format!(
            "body has {n} characters, expected {}..={} (CJK characters count as two)",
            BODY_CHARS.start(),
            BODY_CHARS.end()
        ));
    }
    if says_nothing(&b) {
        return Err(
            "body says nothing: no rule or step beyond filler or the instructions' template".into(),
        );
    }
    Ok(b)
}

/// A known category (spaces and hyphens read as `_`); an empty or unknown one becomes
/// `general`. Unknown is not rejected: the lesson is still worth keeping, and the category
/// only steers per-category caps in retrieval. The substitution is logged.
fn category(name: &str, raw: &str) -> String {
    let c = raw.trim().to_lowercase().replace([' ', '-'], "_");
    if CATEGORIES.contains(&c.as_str()) {
        return c;
    }
    if !c.is_empty() {
        tracing::info!("evolved skill {name}: unknown category {raw:?} recorded as general");
    }
    "general".into()
}

/// Lowercase, whitespace collapsed, deduplicated; tags that are too long or hold anything
/// but letters, digits, spaces and `-_.+#` are dropped, then the first eight kept.
fn tags(raw: Vec<String>) -> Vec<String> {
    let ok = |c: char| c.is_alphanumeric() || " -_.+#".contains(c);
    let mut out: Vec<String> = Vec::new();
    for t in raw {
        let t = t
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .to_lowercase();
        let fits = !t.is_empty() && t.chars().count() <= MAX_TAG_CHARS && t.chars().all(ok);
        if fits && !out.contains(&t) {
            out.push(t);
        }
    }
    out.truncate(MAX_TAGS);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(name("  Retry-Flaky-Calls ").unwrap(), "retry-flaky-calls");
        for bad in [
            "../../x", "a/b", ".hidden", "..", "", "x-", "con", "LPT1", "a b", "a--b",
        ] {
            assert!(name(bad).is_err(), "{bad:?}");
        }
        assert!(
            name(&"x".repeat(65))
                .unwrap_err()
                .contains("longer than 64")
        );
        assert!(name("com").is_ok() && name("console").is_ok());
    }

    #[test]
    fn categories() {
        assert_eq!(category("n", " Data Analysis "), "data_analysis");
        assert_eq!(category("n", "common-mistakes"), "common_mistakes");
        assert_eq!(category("n", ""), "general");
        assert_eq!(category("n", "cooking"), "general");
    }

    #[test]
    fn tag_cleanup() {
        let raw = [
            "Rust",
            "rust",
            "flaky  test",
            "c++",
            "a/b",
            "",
            &"t".repeat(33),
        ];
        let got = tags(raw.iter().map(|s| s.to_string()).collect());
        assert_eq!(got, ["rust", "flaky test", "c++"]);
        let many = (0..12).map(|i| format!("t{i}")).collect();
        assert_eq!(tags(many).len(), MAX_TAGS);
    }

    #[test]
    fn bodies() {
        assert!(body("short").unwrap_err().contains("5 characters"));
        // One sentence is a valid rule.
        let rule = "Always write dates as YYYY-MM-DD in reports.";
        assert_eq!(body(rule).unwrap(), rule);
        // A Chinese rule says as much in fewer characters; a fragment still is one.
        let zh = "以后代码注释一律用英文写，不要用中文。";
        assert_eq!(body(zh).unwrap(), zh);
        assert!(body("一律用英文写").is_err());
        let leak = format!("<METACLAW-CONTEXT>\n{}", "line\n".repeat(30));
        assert!(body(&leak).unwrap_err().contains("leaking back"));
    }
}
