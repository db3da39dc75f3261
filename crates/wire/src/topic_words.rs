//! Words of a request that do not name what it is about, for retrieval that must not pick a
//! rule or a memory for them.
//!
//! A standing rule the user stated once comes back for later tasks of its kind that share a
//! single word with it, so one shared word has to be enough to qualify. Words of asking and
//! doing ("give", "write", "suggest"), numbers and time words would then match rules they have
//! nothing to do with: "Give me a workout" would bring back "Always give temperatures in
//! Celsius". Memory's prompt-path query and the skills' lessons lane both leave them out; one
//! list, so the two never disagree on what a request is about.

/// Sorted (binary search); each entry covers its inflections where the reader stems.
pub const GENERIC: &[&str] = &[
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_list_is_sorted_and_unique() {
        assert!(GENERIC.windows(2).all(|p| p[0] < p[1]));
    }
}
