//! What a request is about, for retrieval on the prompt path: the request without the
//! words that name no topic ([`GENERIC`], shared with the skills' lessons lane), so one shared
//! word is enough for a standing rule to come back and asking words never pick one. Search
//! for people (`search`) keeps every word: there the user types what they look for.

use metaclaw_wire::topic_words::GENERIC;

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
        assert_eq!(
            topic("Give me a 20-minute workout, writing three sets!"),
            " me a 20-minute workout,   sets!"
        );
        assert_eq!(topic("What's the weather?"), "What's the weather?");
        assert_eq!(topic("Suggested changes; she gave it"), " ; she  it");
    }
}
