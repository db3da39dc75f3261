//! The user's own lessons: evolved skills, ranked in a lane of their own.
//!
//! A rule the user stated once ("write dates as DD.MM.YYYY") becomes a short evolved skill
//! whose description and tags name the kind of task it is for. Later tasks of that kind
//! share few words with it — often one, the word naming the kind ("date", "commit",
//! "landlord") — while a built-in procedure on the same topic shares several. Ranked
//! together, the built-in wins and the `min_relative` cut drops the rule; idf computed over
//! the whole bank also undervalues the kind word when built-ins mention it in passing. So
//! evolved skills are also indexed on their own: idf among the lessons, their own threshold
//! and top-k, taken before the bank's hits. A lesson that fits is injected whatever the
//! built-ins score, and a built-in never has to be dropped to make room for it.
//!
//! One shared word is then enough, which is only safe if that word says what the task is
//! about: words of asking and doing ("give", "write", "suggest"), numbers and time words
//! say nothing about the kind of task, so they are left out of the lane's query (see
//! [`GENERIC`]). Without that, "Give me a workout" would bring back "Always give
//! temperatures in Celsius".

use super::bm25::Index;
use super::tokenize::for_each_token;
use crate::Skill;
use crate::skill::Source;

pub(crate) use metaclaw_wire::topic_words::GENERIC;

/// Stems of [`GENERIC`], as the tokenizer produces them.
pub(crate) fn generic_stems() -> Vec<String> {
    let mut out = Vec::new();
    for w in GENERIC {
        for_each_token(w, |t| out.push(t.to_owned()));
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// Whether a skill belongs in the lessons lane.
pub(crate) fn is_lesson(skill: &Skill) -> bool {
    skill.source == Source::Evolved && !skill.always
}

/// The lessons' own index.
pub(crate) fn index(skills: &[Skill]) -> Index {
    Index::build_where(skills, is_lesson)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse_skill;
    use crate::retrieval::{RetrievalConfig, Retriever};

    fn skill(name: &str, source: &str, description: &str, body: &str) -> Skill {
        let text = format!(
            "---\nname: {name}\ndescription: {description}\ncategory: productivity\nsource: {source}\n---\n{body}\n"
        );
        parse_skill(&text, None).unwrap().0
    }

    #[test]
    fn a_lesson_sharing_one_topic_word_comes_back_and_generic_words_select_none() {
        let skills = vec![
            skill(
                "weather-reports",
                "builtin",
                "Use when reporting the weather forecast for a city trip.",
                "# Weather\n\nGive the forecast for the city, the trip days and the rain.",
            ),
            skill(
                "rule-temperatures-celsius",
                "evolved",
                "Use for requests like the weather in Rome, give temperatures in Celsius.",
                "Always give temperatures in Celsius.",
            ),
        ];
        // The lane alone: with a budget for standing rules, this one would stand.
        let lane = RetrievalConfig {
            standing_tokens: 0,
            ..RetrievalConfig::default()
        };
        let r = Retriever::new(&skills, lane);
        let names =
            |q: &str| -> Vec<String> { r.retrieve(q).into_iter().map(|h| h.name).collect() };
        assert_eq!(
            names("Weather forecast for my city trip to Lisbon?"),
            ["rule-temperatures-celsius", "weather-reports"]
        );
        assert!(names("Give me a quick workout").is_empty());
    }

    #[test]
    fn stems_cover_inflections() {
        let stems = generic_stems();
        let mut giving = Vec::new();
        for_each_token("giving writes suggested", |t| giving.push(t.to_owned()));
        assert!(giving.iter().all(|g| stems.contains(g)), "{giving:?}");
    }
}
