//! What a request is about, for retrieval on the prompt path.
//!
//! A standing rule the user stated once ("Always give temperatures in Celsius") must come
//! back for later tasks of its kind that share a single word with it ("weather", named in
//! its tags), so one shared word has to be enough to qualify. Words of asking and doing
//! ("give", "write", "suggest"), numbers and time words then match rules they have nothing
//! to do with: "Give me a workout" would bring back the temperature rule. They say nothing
//! about what the request is about, so the prompt path leaves them out of the query. Search
//! for people (`search`) keeps every word: there the user types what they look for.

/// Words of a request that do not name its topic. Sorted.
const GENERIC: &[&str] = &[
    "add",
    "answer",
    "ask",
    "best",
    "big",
    "change",
    "check",
    "create",
    "day",
    "do",
    "eight",
    "every",
    "few",
    "find",
    "first",
    "five",
    "fix",
    "four",
    "get",
    "give",
    "go",
    "good",
    "help",
    "keep",
    "know",
    "last",
    "like",
    "list",
    "little",
    "look",
    "make",
    "many",
    "much",
    "need",
    "new",
    "next",
    "nine",
    "one",
    "plan",
    "put",
    "quick",
    "recommend",
    "say",
    "see",
    "seven",
    "short",
    "show",
    "six",
    "small",
    "something",
    "start",
    "suggest",
    "take",
    "tell",
    "ten",
    "thing",
    "three",
    "today",
    "tomorrow",
    "try",
    "two",
    "use",
    "want",
    "way",
    "week",
    "write",
];

/// Irregular forms of the generic verbs that the suffix rules below do not reach.
const IRREGULAR: &[&str] = &[
    "asked", "did", "does", "done", "found", "gave", "given", "got", "made", "said", "saw", "seen",
    "shown", "took", "written", "wrote",
];

fn generic(word: &str) -> bool {
    let w = word.to_lowercase();
    if IRREGULAR.contains(&w.as_str()) {
        return true;
    }
    let stems = [
        Some(w.as_str()),
        w.strip_suffix('s'),
        w.strip_suffix("es"),
        w.strip_suffix("ed"),
        w.strip_suffix("ing"),
    ];
    let is = |s: &str| GENERIC.binary_search(&s).is_ok();
    stems
        .into_iter()
        .flatten()
        .any(|s| is(s) || is(&format!("{s}e")))
}

/// `text` without its generic words; other characters are kept as they are.
pub fn topic(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut word = String::new();
    for c in text.chars() {
        if c.is_alphanumeric() {
            word.push(c);
            continue;
        }
        if !generic(&word) {
            out.push_str(&word);
        }
        word.clear();
        out.push(c);
    }
    if !generic(&word) {
        out.push_str(&word);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_topic_and_drops_the_asking() {
        assert!(GENERIC.windows(2).all(|p| p[0] < p[1]));
        assert_eq!(
            topic("Give me a 20-minute workout, writing three sets!"),
            " me a 20-minute workout,   sets!"
        );
        assert_eq!(topic("What's the weather?"), "What's the weather?");
        assert_eq!(topic("Suggested changes; she gave it"), " ; she  it");
    }
}
