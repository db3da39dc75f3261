#![allow(clippy::unwrap_used, clippy::panic)]

use metaclaw_skills::retrieval::{RetrievalConfig, Retriever, tokenize};
use metaclaw_skills::{Skill, Source, parse_skill};

fn skill(name: &str, category: &str, tags: &[&str], description: &str, body: &str) -> Skill {
    Skill {
        name: name.to_owned(),
        description: description.to_owned(),
        category: category.to_owned(),
        tags: tags.iter().map(|t| (*t).to_owned()).collect(),
        always: false,
        disabled: false,
        source: Source::Builtin,
        provenance: None,
        body: body.to_owned(),
        path: None,
        extra: Default::default(),
    }
}

/// A small hand-made bank; bodies are long enough that a single body mention is weak.
fn bank() -> Vec<Skill> {
    vec![
        skill(
            "debug-systematically",
            "debugging",
            &["debugging", "bug", "error"],
            "Find the root cause of a bug before changing code.",
            "Reproduce the failure, isolate it, form one hypothesis at a time, and verify the \
             fix with a regression test. Read the whole stack trace and error message.",
        ),
        skill(
            "writing-tests-first",
            "coding",
            &["testing", "tdd", "unit-tests"],
            "Write a failing test before the code that makes it pass.",
            "Start from a test that fails for the right reason. Keep tests fast and \
             deterministic. A test that cannot fail proves nothing. Check the news feed \
             parser fixtures only when the parser changes.",
        ),
        skill(
            "refactor-safely",
            "coding",
            &["refactoring", "code"],
            "Change the structure of code without changing its behaviour.",
            "Make small steps, keep the tests green after each one, and separate refactoring \
             commits from behaviour changes.",
        ),
        skill(
            "git-commit-hygiene",
            "coding",
            &["git", "commit", "branch"],
            "Small, focused commits with imperative messages.",
            "One logical change per commit. Never force-push a shared branch. Review the diff \
             before committing.",
        ),
        skill(
            "news-and-current-events",
            "research",
            &["news", "current-events", "elections"],
            "Answer questions about recent news and current events with dated sources.",
            "Search for the latest reporting, prefer primary sources and established outlets, \
             give dates, and say when information may be out of date. Elections, markets and \
             politics change quickly.",
        ),
        skill(
            "trip-planning",
            "productivity",
            &["travel", "itinerary", "flights"],
            "Plan a trip: dates, budget, transport, lodging and a daily itinerary.",
            "Ask for dates, budget and constraints, then propose flights, hotels and a day by \
             day plan with travel times.",
        ),
        skill(
            "write-clear-emails",
            "communication",
            &["email", "writing"],
            "Draft emails with a specific subject, one clear ask and a deadline.",
            "Lead with context, make the ask explicit, match the tone to the reader, keep it \
             to one screen.",
        ),
        skill(
            "secrets-handling",
            "security",
            &["secrets", "api-keys", "credentials"],
            "Never hard-code, log or commit secrets; keep keys in a secrets manager.",
            "Use environment variables or a keychain, rotate a key that leaked, scan commits \
             for tokens.",
        ),
    ]
}

fn names(r: &Retriever, q: &str) -> Vec<String> {
    r.retrieve(q).into_iter().map(|h| h.name).collect()
}

fn retriever(skills: &[Skill]) -> Retriever {
    Retriever::new(skills, RetrievalConfig::default())
}

#[test]
fn tokenizer_lowercases_splits_and_drops_stopwords() {
    assert_eq!(
        tokenize("What's the BEST way to fix this?! (e.g. foo_bar-baz)"),
        ["best", "way", "fix", "foo", "bar", "baz"]
    );
    assert!(tokenize("hi, thanks! ok").is_empty());
    assert!(
        tokenize("a b c 1 2").is_empty(),
        "1-char ASCII tokens are dropped"
    );
}

#[test]
fn tokenizer_stems_conservatively() {
    let one = |w: &str| tokenize(w).join(" ");
    assert_eq!(one("testing tests tested test"), "test test test test");
    assert_eq!(one("debugging debugged debug"), "debug debug debug");
    assert_eq!(one("queries query"), "query query");
    assert_eq!(one("write writing writes"), "writ writ writ");
    assert_eq!(one("boxes processes"), "box process");
    assert_eq!(one("weekly week"), "week week");
    assert_eq!(one("calling call"), "call call");
    // Short stems and special words stay whole.
    assert_eq!(one("news status analysis bus"), "news status analysis bus");
    assert_eq!(one("early daily reply"), "early daily reply");
    assert_eq!(one("used red"), "used red");
}

#[test]
fn tokenizer_keeps_other_scripts_and_emits_cjk_bigrams() {
    assert_eq!(tokenize("Привет МИР"), ["привет", "мир"]);
    assert_eq!(tokenize("调试程序"), ["调试", "试程", "程序"]);
    assert_eq!(tokenize("猫"), ["猫"]);
    assert_eq!(tokenize("rust调试"), ["rust", "调试"]);
    assert_eq!(tokenize("テスト"), ["テス", "スト"]);
}

#[test]
fn ranks_the_obviously_relevant_skill_first() {
    let r = retriever(&bank());
    let cases = [
        (
            "my program crashes with a weird error, help me find the bug",
            "debug-systematically",
        ),
        (
            "draft an email to my landlord about the deposit",
            "write-clear-emails",
        ),
        ("plan a 5 day trip to Lisbon with flights", "trip-planning"),
        (
            "I accidentally committed my API key to git",
            "secrets-handling",
        ),
        (
            "refactor this module without changing behaviour",
            "refactor-safely",
        ),
    ];
    for (q, want) in cases {
        let got = names(&r, q);
        assert_eq!(got.first().map(String::as_str), Some(want), "{q}: {got:?}");
    }
}

#[test]
fn hits_explain_their_matched_terms() {
    let r = retriever(&bank());
    let hits = r.retrieve("plan my travel itinerary");
    let hit = &hits[0];
    assert_eq!(hit.name, "trip-planning");
    assert!(hit.score > 0.0 && !hit.pinned);
    let mut terms = hit.matched_terms.clone();
    terms.sort();
    assert_eq!(terms, ["itinerary", "plan", "travel"]);
}

#[test]
fn unrelated_or_empty_queries_inject_nothing() {
    let r = retriever(&bank());
    for q in [
        "",
        "hi",
        "thanks!",
        "what time is it in Tokyo",
        "tell me a joke",
        "???",
    ] {
        assert!(r.retrieve(q).is_empty(), "{q}: {:?}", names(&r, q));
    }
}

#[test]
fn one_generic_shared_word_is_not_enough() {
    // "change" occurs in several bodies but is what no skill is about.
    let r = retriever(&bank());
    assert!(names(&r, "how do people change").is_empty());
}

#[test]
fn latest_news_does_not_pull_the_coding_skill_that_mentions_news() {
    let r = retriever(&bank());
    let got = names(&r, "what's the latest news about the election");
    assert_eq!(got, ["news-and-current-events"]);
    // Even without the research skill, one body mention must not inject the coding skill.
    let without: Vec<Skill> = bank()
        .into_iter()
        .filter(|s| s.name != "news-and-current-events")
        .collect();
    assert!(
        names(
            &retriever(&without),
            "what's the latest news about the election"
        )
        .is_empty()
    );
}

#[test]
fn always_skills_come_first_and_do_not_count_toward_top_k() {
    let mut skills = bank();
    skills[7].always = true; // secrets-handling
    let config = RetrievalConfig {
        top_k: 1,
        ..RetrievalConfig::default()
    };
    let r = Retriever::new(&skills, config);
    let hits = r.retrieve("plan a trip with flights");
    let got: Vec<(&str, bool)> = hits.iter().map(|h| (h.name.as_str(), h.pinned)).collect();
    assert_eq!(got, [("secrets-handling", true), ("trip-planning", false)]);
    // Pinned skills are returned even when nothing matches, and never twice.
    assert_eq!(names(&r, "hi"), ["secrets-handling"]);
    assert_eq!(
        names(&r, "rotate the leaked api key secrets"),
        ["secrets-handling"]
    );
}

#[test]
fn per_category_cap_and_top_k_bound_the_hits() {
    let skills = bank();
    let q = "refactor code, write tests first, commit to a git branch";
    let loose = RetrievalConfig {
        top_k: 5,
        task_specific_top_k: 5,
        min_relative: 0.0,
        ..RetrievalConfig::default()
    };
    let all = names(&Retriever::new(&skills, loose.clone()), q);
    assert!(all.len() >= 3, "{all:?}");
    let capped = names(
        &Retriever::new(
            &skills,
            RetrievalConfig {
                task_specific_top_k: 2,
                ..loose.clone()
            },
        ),
        q,
    );
    let coding = [
        "writing-tests-first",
        "refactor-safely",
        "git-commit-hygiene",
    ];
    assert_eq!(
        capped
            .iter()
            .filter(|n| coding.contains(&n.as_str()))
            .count(),
        2,
        "{capped:?}"
    );
    let one = names(
        &Retriever::new(&skills, RetrievalConfig { top_k: 1, ..loose }),
        q,
    );
    assert_eq!(one.len(), 1);
}

#[test]
fn disabled_skills_are_never_returned() {
    let mut skills = bank();
    skills[5].disabled = true; // trip-planning
    skills[4].disabled = true; // news-and-current-events
    skills[4].always = true;
    let r = retriever(&skills);
    assert!(names(&r, "plan a trip with flights and an itinerary").is_empty());
    assert!(r.rank("trip itinerary flights").is_empty());
    assert_eq!(r.index.len(), 6);
}

#[test]
fn rank_lists_every_match_best_first() {
    let r = retriever(&bank());
    let ranked = r.rank("test the commit");
    assert!(ranked.len() >= 2);
    assert!(ranked.windows(2).all(|w| w[0].score >= w[1].score));
}

/// The repository's built-in bank, `skills/<name>/SKILL.md`.
fn builtin_bank() -> Vec<Skill> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../skills");
    let mut skills: Vec<Skill> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path().join("SKILL.md"))
        .filter(|p| p.is_file())
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            parse_skill(&text, Some(&p)).unwrap().0
        })
        .collect();
    skills.sort_by(|a, b| a.name.cmp(&b.name));
    skills
}

#[derive(serde::Deserialize)]
struct Labelled {
    query: String,
    relevant: Vec<String>,
}

#[test]
fn retrieval_quality_on_labelled_queries() {
    let skills = builtin_bank();
    assert!(skills.len() >= 40, "bank has {} skills", skills.len());
    let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/queries.json");
    let labelled: Vec<Labelled> =
        serde_json::from_str(&std::fs::read_to_string(fixture).unwrap()).unwrap();
    assert!(labelled.len() >= 60);
    let r = retriever(&skills);

    let (mut precision_sum, mut with_relevant, mut clean) = (0.0, 0usize, 0usize);
    for l in &labelled {
        let hits = r.retrieve(&l.query);
        let got: Vec<&String> = hits.iter().map(|h| &h.name).collect();
        let relevant = got.iter().filter(|n| l.relevant.contains(n)).count();
        if relevant == got.len() {
            clean += 1;
        } else {
            let explained: Vec<String> = hits
                .iter()
                .map(|h| format!("{} {:.2} {:?}", h.name, h.score, h.matched_terms))
                .collect();
            println!(
                "irrelevant: {:?} → {explained:?} (want {:?})",
                l.query, l.relevant
            );
        }
        if !l.relevant.is_empty() {
            with_relevant += 1;
            // A query that deserved a skill but got none scores 0.
            if !got.is_empty() {
                precision_sum += relevant as f64 / got.len().min(3) as f64;
            } else {
                println!("missed: {:?} (want {:?})", l.query, l.relevant);
            }
        }
    }
    let precision = precision_sum / with_relevant as f64;
    let nothing_irrelevant = clean as f64 / labelled.len() as f64;
    println!(
        "{} queries on {} skills: precision@3 {precision:.3}, nothing irrelevant {nothing_irrelevant:.3}",
        labelled.len(),
        skills.len()
    );
    assert!(precision >= 0.85, "precision@3 {precision:.3}");
    assert!(
        nothing_irrelevant >= 0.9,
        "nothing irrelevant {nothing_irrelevant:.3}"
    );
}

#[test]
fn everyday_words_alone_bring_no_built_in() {
    let skills = builtin_bank();
    let r = retriever(&skills);
    for q in [
        "Write the log line for the stand-up meeting that began at nine this morning",
        "Log the meeting that started at nine this morning.",
        "Send a message to the team that I'm running late this morning",
    ] {
        assert!(r.retrieve(q).is_empty(), "{q:?} → {:?}", names(&r, q));
    }
    // A topical word still brings its built-in; so does an everyday word the skill is named for.
    assert!(names(&r, "Plan my morning with time-blocking").contains(&"time-blocking".to_string()));
    let learned = skill(
        "stand-up-log",
        "productivity",
        &[],
        "Write the stand-up log line.",
        "Write each log line with the time.",
    );
    let mut with_lesson = skills.clone();
    with_lesson.push(Skill {
        source: Source::Evolved,
        ..learned
    });
    let r = retriever(&with_lesson);
    assert!(
        names(&r, "Log the meeting that started at nine this morning.")
            .contains(&"stand-up-log".to_string())
    );
}
