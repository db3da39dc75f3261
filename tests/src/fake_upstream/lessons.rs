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

use serde_json::{Value, json};

use super::reply::content_text;

/// A rule the user stated, and the request it corrected, if any.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lesson {
    pub rule: String,
    pub context: Option<String>,
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
            if matches!(c, '.' | '!' | '?') && next_is_space {
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
    for w in text.split(|c: char| !c.is_ascii_alphanumeric()) {
        let w = w.to_lowercase();
        if w.len() > 2 && !SKIP.contains(&w.as_str()) && !out.contains(&w) {
            out.push(w);
        }
    }
    out
}

pub fn slug(rule: &str) -> String {
    let words: Vec<String> = keywords(rule).into_iter().take(4).collect();
    format!("rule-{}", words.join("-"))
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
    let rule = rule.trim_end_matches(['.', '!', '?']);
    format!("{rule}.")
}

/// Tags: the rule's words, then the corrected request's.
fn tags(lesson: &Lesson, n: usize) -> Vec<String> {
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
pub fn skills(lessons: &[Lesson]) -> Value {
    let skills: Vec<Value> = lessons
        .iter()
        .map(|l| {
            let when = match &l.context {
                Some(ctx) => format!("Use for requests like \"{}\"", one_line(ctx)),
                None => "Use whenever this standing rule applies".to_string(),
            };
            json!({
                "name": slug(&l.rule),
                "description": clip(&format!("{when}: {}", sentence(&l.rule)), DESCRIPTION_CHARS),
                "category": "productivity",
                "tags": tags(l, 6),
                "body": sentence(&l.rule),
                "improves": null
            })
        })
        .collect();
    json!({ "skills": skills })
}

/// `{"memories": [...]}`: one preference per lesson, the rule in the user's words, tagged
/// with the kind of request it was stated for.
pub fn memories(lessons: &[Lesson]) -> Value {
    let memories: Vec<Value> = lessons
        .iter()
        .map(|l| {
            json!({
                "kind": "preference",
                "content": sentence(&l.rule),
                "fact_key": format!("pref:{}", slug(&l.rule).trim_start_matches("rule-").replace('-', "_")),
                "importance": 0.8,
                "confidence": 0.9,
                "tags": tags(l, 5),
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
        let out = skills(&lessons);
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
        assert_eq!(memories(&lessons)["memories"][0]["kind"], "preference");
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
