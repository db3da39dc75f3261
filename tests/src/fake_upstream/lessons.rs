//! How the fake reads a learning prompt when told to read lessons
//! ([`crate::fake_upstream::FakeUpstream::read_lessons`]): like a model that knows no more
//! than the prompt it is shown.
//!
//! It looks only at the user's side of the turns the prompt shows (the blocks after a
//! `User:` line), never at the system prompt, the known memories or the existing skills. A
//! sentence there that gives a standing instruction ("from now on", "always", "never",
//! "every time", "whenever", "must") is a rule. When the rule came as a correction, the
//! user's request just before it says what kind of task the rule is for; the fake copies that
//! request into the skill's description and the tags, as a model would name when the rule
//! applies. It cannot paraphrase or generalise: every word it writes is from the prompt.
//!
//! In the [`Style::Terse`] style it writes like a cheap or terse model: the description only
//! restates the rule and there are no tags, so nothing it writes names the kind of task.
//! Rules in Chinese are read too (以后, 总是, 不要 …; sentences end at 。！？ as well).

use serde_json::{Value, json};

use super::reply::content_text;

/// A rule the user stated, and the request it corrected, if any.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lesson {
    pub rule: String,
    pub context: Option<String>,
}

/// How the learning model writes what it learned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// Names the request a correction was for, in the description and the tags.
    Helpful,
    /// Restates the rule and nothing else.
    Terse,
}

/// Phrases that make a sentence a standing instruction.
const CUES: &[&str] = &[
    "from now on",
    "always",
    "never",
    "every",
    "whenever",
    "must",
];
/// The same in Chinese, which has no spaces to match words by.
const CUES_ZH: &[&str] = &[
    "以后",
    "今后",
    "从现在起",
    "总是",
    "始终",
    "一律",
    "永远",
    "每次",
    "不要",
    "务必",
    "必须",
];
const DESCRIPTION_CHARS: usize = 290;

/// The user-role text of the request: what the model is asked about, without its system
/// instructions.
pub fn prompt_text(request: &Value) -> String {
    request
        .get("messages")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|m| m.get("role").and_then(Value::as_str) == Some("user"))
        .filter_map(|m| m.get("content").map(content_text))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The lessons in a prompt, in the order stated, each rule once.
pub fn read(prompt: &str) -> Vec<Lesson> {
    let mut out: Vec<Lesson> = Vec::new();
    let mut previous: Option<String> = None;
    for turn in user_turns(prompt) {
        let rules: Vec<String> = sentences(&turn)
            .into_iter()
            .filter(|s| is_rule(s))
            .collect();
        if rules.is_empty() {
            previous = Some(turn.trim().to_string());
            continue;
        }
        for rule in rules {
            if !out.iter().any(|l| l.rule == rule) {
                out.push(Lesson {
                    rule,
                    context: previous.clone(),
                });
            }
        }
    }
    out
}

/// The text of each `User:` block (inside its code fence when it has one); the whole prompt
/// when it has none.
fn user_turns(prompt: &str) -> Vec<String> {
    let lines: Vec<&str> = prompt.lines().collect();
    let mut turns = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if lines[i].trim() != "User:" {
            i += 1;
            continue;
        }
        i += 1;
        let fence = lines
            .get(i)
            .map(|l| l.trim())
            .filter(|l| l.starts_with("```"));
        if fence.is_some() {
            i += 1;
        }
        let mut text = String::new();
        while let Some(line) = lines.get(i) {
            let t = line.trim();
            let end = match fence {
                Some(f) => t == f,
                None => t.is_empty() || t == "Assistant:" || t.starts_with("Turn "),
            };
            if end {
                break;
            }
            text.push_str(line);
            text.push('\n');
            i += 1;
        }
        turns.push(text);
    }
    if turns.is_empty() {
        turns.push(prompt.to_string());
    }
    turns
}

/// Sentences end at `.`, `!` or `?` followed by a space or the end, and at line breaks, so
/// `DD.MM.YYYY` or `CHANGELOG.md` stay inside theirs.
fn sentences(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in text.lines() {
        let mut start = 0;
        let chars: Vec<(usize, char)> = line.char_indices().collect();
        for (i, &(at, c)) in chars.iter().enumerate() {
            let next_is_space = chars.get(i + 1).is_none_or(|(_, n)| n.is_whitespace());
            let ends =
                matches!(c, '.' | '!' | '?') && next_is_space || matches!(c, '。' | '！' | '？');
            if ends {
                push_sentence(&mut out, &line[start..at]);
                start = at + c.len_utf8();
            }
        }
        push_sentence(&mut out, &line[start..]);
    }
    out
}

fn push_sentence(out: &mut Vec<String>, s: &str) {
    let s = s.trim();
    if !s.is_empty() {
        out.push(s.to_string());
    }
}

fn is_rule(sentence: &str) -> bool {
    let lower = format!(" {} ", sentence.to_lowercase());
    CUES.iter()
        .any(|c| lower.contains(&format!(" {c} ")) || lower.contains(&format!(" {c},")))
        || CUES_ZH.iter().any(|c| sentence.contains(c))
}

/// Content words, lowercase, in order, each once: what a model would pick for tags. Like a
/// model asked for topic keywords, it skips function words and the words of asking and
/// doing (give, write, use, three…).
pub fn keywords(text: &str) -> Vec<String> {
    const SKIP: &[&str] = &[
        "from", "now", "always", "never", "the", "and", "with", "for", "you", "your", "please",
        "every", "must", "whenever", "that", "this", "are", "can", "what", "how", "when", "give",
        "tell", "about", "into", "like", "not", "any", "all", "our", "its", "them", "time",
        "write", "use", "make", "keep", "start", "add", "show", "three", "two", "one", "fix",
        "state", "before", "after", "instead", "most", "least", "more", "than", "which", "whose",
        "thanks", "no", "too", "let", "should", "would", "could", "will",
    ];
    let mut out: Vec<String> = Vec::new();
    for w in text.split(|c: char| !c.is_alphanumeric()) {
        let w = w.to_lowercase();
        let cjk = !w.is_ascii();
        let words: Vec<String> = if cjk {
            // Two-character chunks: the most common length of a Chinese word.
            let chars: Vec<char> = w.chars().collect();
            chars.chunks(2).map(|c| c.iter().collect()).collect()
        } else {
            vec![w]
        };
        for w in words {
            let long = if cjk {
                w.chars().count() == 2
            } else {
                w.len() > 2
            };
            if long && !SKIP.contains(&w.as_str()) && !out.contains(&w) {
                out.push(w);
            }
        }
    }
    out
}

/// A skill name: the rule's first ASCII keywords, or a number made of its text when it has
/// none (a rule in Chinese).
pub fn slug(rule: &str) -> String {
    let words: Vec<String> = keywords(rule)
        .into_iter()
        .filter(|w| w.is_ascii())
        .take(4)
        .collect();
    if words.len() >= 2 {
        return format!("rule-{}", words.join("-"));
    }
    let n = rule.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    });
    format!("rule-{:08x}", n as u32)
}

fn clip(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_string(),
    }
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn sentence(rule: &str) -> String {
    let rule = rule.trim_end_matches(['.', '!', '?', '。', '！', '？']);
    if rule.chars().last().is_some_and(|c| !c.is_ascii()) {
        return format!("{rule}。");
    }
    format!("{rule}.")
}

/// Tags: the rule's words, then the corrected request's; none from a terse model.
fn tags(lesson: &Lesson, n: usize, style: Style) -> Vec<String> {
    if style == Style::Terse {
        return Vec::new();
    }
    let mut words = keywords(&lesson.rule);
    if let Some(ctx) = &lesson.context {
        // The request names the task kind: its words come first when there is one.
        let mut first = keywords(ctx);
        first.retain(|w| !words.contains(w));
        first.append(&mut words);
        words = first;
    }
    words.truncate(n);
    words
}

/// `{"skills": [...]}`: one short skill per lesson, its body the rule itself.
pub fn skills(lessons: &[Lesson], style: Style) -> Value {
    let skills: Vec<Value> = lessons
        .iter()
        .map(|l| {
            let when = match (&l.context, style) {
                (_, Style::Terse) => None,
                (Some(ctx), _) => Some(format!("Use for requests like \"{}\"", one_line(ctx))),
                (None, _) => Some("Use whenever this standing rule applies".to_string()),
            };
            let description = match when {
                Some(when) => format!("{when}: {}", sentence(&l.rule)),
                None => sentence(&l.rule),
            };
            json!({
                "name": slug(&l.rule),
                "description": clip(&description, DESCRIPTION_CHARS),
                "category": "productivity",
                "tags": tags(l, 6, style),
                "body": sentence(&l.rule),
                "improves": null
            })
        })
        .collect();
    json!({ "skills": skills })
}

/// `{"memories": [...]}`: one preference per lesson, the rule in the user's words, tagged
/// with the kind of request it was stated for.
pub fn memories(lessons: &[Lesson], style: Style) -> Value {
    let memories: Vec<Value> = lessons
        .iter()
        .map(|l| {
            json!({
                "kind": "preference",
                "content": sentence(&l.rule),
                "fact_key": format!("pref:{}", slug(&l.rule).trim_start_matches("rule-").replace('-', "_")),
                "importance": 0.8,
                "confidence": 0.9,
                "tags": tags(l, 5, style),
                "source_turn": null
            })
        })
        .collect();
    json!({ "memories": memories })
}

#[cfg(test)]
mod tests {
    use super::*;

    const EVOLVER: &str = "## Recent turns\n\n### Turn 1\nUser:\n```\nWhat's the weather in Rome tomorrow?\n```\nAssistant:\n```\n75F and sunny.\n```\n\n### Turn 2\nUser:\n```\nPlease always give temperatures in Celsius, never Fahrenheit. Thanks!\n```\nAssistant:\n```\nNoted.\n```\n\n## Related existing skills\n\n### x (coding, built-in)\nAlways do x.\n```\nNever y.\n```\n\n## Task\n\nWrite at most 3 skill(s).";

    #[test]
    fn a_correction_carries_the_request_it_corrected() {
        let lessons = read(EVOLVER);
        assert_eq!(
            lessons,
            [Lesson {
                rule: "Please always give temperatures in Celsius, never Fahrenheit".into(),
                context: Some("What's the weather in Rome tomorrow?".into()),
            }]
        );
        let out = skills(&lessons, Style::Helpful);
        let skill = &out["skills"][0];
        assert!(
            skill["description"]
                .as_str()
                .unwrap()
                .contains("weather in Rome")
        );
        assert_eq!(skill["tags"][0], "weather");
        assert_eq!(
            skill["body"],
            "Please always give temperatures in Celsius, never Fahrenheit."
        );
        assert_eq!(
            memories(&lessons, Style::Helpful)["memories"][0]["kind"],
            "preference"
        );
        let terse = &skills(&lessons, Style::Terse)["skills"][0];
        assert_eq!(
            terse["description"],
            "Please always give temperatures in Celsius, never Fahrenheit."
        );
        assert_eq!(terse["tags"], json!([]));
    }

    #[test]
    fn rules_in_chinese_are_read_and_named() {
        let lessons = read("你好。以后所有时间都写成 ISO 8601 格式，带 +08:00 时区。谢谢！");
        assert_eq!(lessons.len(), 1);
        assert_eq!(
            lessons[0].rule,
            "以后所有时间都写成 ISO 8601 格式，带 +08:00 时区"
        );
        let skill = &skills(&lessons, Style::Terse)["skills"][0];
        assert!(skill["name"].as_str().unwrap().starts_with("rule-"));
        assert!(skill["description"].as_str().unwrap().ends_with("时区。"));
    }

    #[test]
    fn dotted_tokens_stay_inside_their_sentence_and_plain_text_is_read_whole() {
        let lessons = read("From now on, write every date as DD.MM.YYYY. See CHANGELOG.md now.");
        assert_eq!(lessons.len(), 1);
        assert_eq!(
            lessons[0].rule,
            "From now on, write every date as DD.MM.YYYY"
        );
        assert_eq!(lessons[0].context, None);
        assert!(
            read("Known memories:\n- Always be kind\n\nTurn 1\nUser:\n```\nhello\n```").is_empty()
        );
    }
}
