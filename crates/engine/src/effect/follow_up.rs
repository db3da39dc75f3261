//! What the user's next message says about the answer before it: a correction ("no, I
//! meant …", "that's wrong"), the same request again (the answer did not do it), thanks
//! (the user's explicit word that it worked: agents have no thumbs-up button, people say
//! so), or simply the conversation going on. Read from the user's own words (`wire::reader`), never the
//! agent's envelope: a stamp or a reminder must not make every message look alike.
//!
//! A heuristic, in the open: it errs towards "continues", so a rate of corrections is a
//! lower bound. It is compared between turns with and without a skill, where its blind
//! spots fall alike on both sides.

use std::collections::HashSet;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FollowUp {
    /// The user said the answer was wrong or did not work.
    Correction,
    /// The user asked for the same thing again.
    Repeat,
    /// The user said it worked ("thanks", "perfect", "that worked").
    Thanks,
    /// Anything else: the conversation went on.
    Continues,
}

impl FollowUp {
    pub fn as_str(self) -> &'static str {
        match self {
            FollowUp::Correction => "correction",
            FollowUp::Repeat => "repeat",
            FollowUp::Thanks => "thanks",
            FollowUp::Continues => "continues",
        }
    }
}

/// Openings that mean "that was wrong", matched on whole words at the start of the message.
const OPENINGS: &[&str] = &[
    "no",
    "nope",
    "wrong",
    "incorrect",
    "not quite",
    "not what i",
    "that's wrong",
    "that is wrong",
    "that's not",
    "that is not",
    "that isn't",
    "this is wrong",
    "this is not",
    "you didn't",
    "you did not",
    "you forgot",
    "you missed",
    "you misunderstood",
    "i said",
    "i asked",
    "i meant",
    "still not",
    "still doesn't",
    "still does not",
    "still broken",
    "still failing",
    "it doesn't work",
    "it does not work",
    "doesn't work",
    "didn't work",
    "try again",
    "undo",
    "revert",
    "不对",
    "错了",
    "不是",
];

/// Openings that look like one but are not: "no worries, now …".
const NOT_CORRECTIONS: &[&str] = &["no problem", "no worries", "no rush", "no need", "no hurry"];

/// Phrases that mean the same anywhere in a short message.
const ANYWHERE: &[&str] = &[
    "not what i asked",
    "not what i meant",
    "not what i wanted",
    "that's not right",
    "that is not right",
    "i told you",
    "i already said",
    "please read my",
    "you ignored",
];

/// Openings that say the answer did it.
const THANKS: &[&str] = &[
    "thanks",
    "thank you",
    "thx",
    "ty",
    "perfect",
    "great",
    "awesome",
    "excellent",
    "nice",
    "that works",
    "that worked",
    "this works",
    "it works",
    "works now",
    "works great",
    "exactly",
    "👍",
    "谢谢",
    "完美",
];

/// Words that take the thanks back ("thanks, but it still fails"), as [`words`] splits
/// them ("doesn't" is "doesn" and "t").
const BUT: &[&str] = &[
    "but", "however", "still", "wrong", "doesn", "didn", "isn", "not",
];

/// Longer messages are new instructions that may mention an old mistake in passing.
const SHORT: usize = 400;

/// Word overlap (Jaccard) from which the next message is the same request again.
const SAME_REQUEST: f64 = 0.7;

/// How `next` follows `previous` (both the user's own words).
pub fn follow_up(previous: &str, next: &str) -> FollowUp {
    let next_lower = next.trim().to_lowercase();
    if next_lower.is_empty() {
        return FollowUp::Continues;
    }
    let polite = NOT_CORRECTIONS.iter().any(|o| opens_with(&next_lower, o));
    if (!polite && OPENINGS.iter().any(|o| opens_with(&next_lower, o)))
        || (next_lower.len() <= SHORT && ANYWHERE.iter().any(|p| next_lower.contains(p)))
    {
        return FollowUp::Correction;
    }
    let (a, b) = (words(previous), words(next));
    if THANKS.iter().any(|o| opens_with(&next_lower, o)) && !BUT.iter().any(|w| b.contains(*w)) {
        return FollowUp::Thanks;
    }
    if b.len() >= 3 && !a.is_empty() {
        let shared = a.intersection(&b).count() as f64;
        let all = a.union(&b).count() as f64;
        if shared / all >= SAME_REQUEST {
            return FollowUp::Repeat;
        }
    }
    FollowUp::Continues
}

/// `text` starts with `opening` as whole words ("no," and "no thanks", not "now").
fn opens_with(text: &str, opening: &str) -> bool {
    let Some(rest) = text.strip_prefix(opening) else {
        return false;
    };
    // Scripts without spaces between words: the phrase alone is enough.
    if !opening.is_ascii() {
        return true;
    }
    rest.chars().next().is_none_or(|c| !c.is_alphanumeric())
}

fn words(text: &str) -> HashSet<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn corrections_are_read_from_the_opening_words() {
        for next in [
            "No, I meant the other file.",
            "nope",
            "That's wrong: the port is 8080.",
            "You didn't update the tests",
            "still doesn't compile",
            "Try again with Python 3.11",
            "I said French, not Spanish",
            "不对，应该是北京",
        ] {
            assert_eq!(
                follow_up("Fix the build", next),
                FollowUp::Correction,
                "{next}"
            );
        }
    }

    #[test]
    fn a_word_that_only_starts_like_one_is_not_a_correction() {
        for next in [
            "Now add a README",
            "Nobody uses that flag; remove it",
            "Note that the API changed",
            "Undoubtedly good. Next step?",
            "No worries, now add a README",
        ] {
            assert_eq!(
                follow_up("Fix the build", next),
                FollowUp::Continues,
                "{next}"
            );
        }
    }

    #[test]
    fn a_short_message_saying_it_anywhere_is_a_correction_a_long_one_is_not() {
        assert_eq!(
            follow_up("Summarise it", "Hmm, that's not what I asked for."),
            FollowUp::Correction
        );
        let long = format!(
            "{} that's not what I asked in the first draft.",
            "Context. ".repeat(60)
        );
        assert_eq!(follow_up("Summarise it", &long), FollowUp::Continues);
    }

    #[test]
    fn thanks_is_read_from_the_opening_words_unless_taken_back() {
        for next in [
            "Thanks, that helps",
            "thank you! Now add a README",
            "Perfect.",
            "That worked, next step?",
            "👍",
            "谢谢",
        ] {
            assert_eq!(follow_up("Fix the build", next), FollowUp::Thanks, "{next}");
        }
        for next in [
            "Thanks, but it still fails",
            "Great, however the tests are red",
            "Nice try, that's not it",
            "Tyre pressure next",
            "Greater detail please",
        ] {
            assert_ne!(follow_up("Fix the build", next), FollowUp::Thanks, "{next}");
        }
    }

    #[test]
    fn the_same_request_again_is_a_repeat() {
        assert_eq!(
            follow_up(
                "Convert the CSV in data/ to JSON",
                "convert the csv in data/ to json!"
            ),
            FollowUp::Repeat
        );
        assert_eq!(
            follow_up("Convert the CSV in data/ to JSON", "Now plot the JSON"),
            FollowUp::Continues
        );
        // Too short to tell.
        assert_eq!(follow_up("ok", "ok"), FollowUp::Continues);
        assert_eq!(follow_up("Fix it", ""), FollowUp::Continues);
    }
}
