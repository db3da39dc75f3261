//! The benchmark's material: standing rules a user states once, later tasks of the same kind
//! worded differently, and tasks no rule is about.
//!
//! Each rule carries a `marker`: words of the rule that a compliant answer depends on and
//! that no task contains, so the scripted model can only comply when the rule reached its
//! prompt. A rule is met either stated outright in a one-turn conversation, or as a
//! correction of the answer to `corrects`. Later tasks share at most two content words with
//! the rule's sentence (the scenario's own tests check it): they name the kind of task, not
//! the rule.

use std::collections::BTreeSet;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    Format,
    Naming,
    Workflow,
    Tone,
    Language,
    Tool,
}

#[derive(Debug, Clone, Copy)]
pub struct Rule {
    pub kind: Kind,
    /// The request the rule corrects, sent first in the same conversation; `None` when the
    /// user states the rule outright.
    pub corrects: Option<&'static str>,
    pub statement: &'static str,
    /// Part of `statement` a compliant answer needs.
    pub marker: &'static str,
    /// Later tasks of the same kind, each in a new conversation.
    pub tasks: &'static [&'static str],
}

pub const fn stated(
    kind: Kind,
    statement: &'static str,
    marker: &'static str,
    tasks: &'static [&'static str],
) -> Rule {
    Rule {
        kind,
        corrects: None,
        statement,
        marker,
        tasks,
    }
}

pub const fn correction(
    kind: Kind,
    corrects: &'static str,
    statement: &'static str,
    marker: &'static str,
    tasks: &'static [&'static str],
) -> Rule {
    Rule {
        kind,
        corrects: Some(corrects),
        statement,
        marker,
        tasks,
    }
}

pub const RULES: &[Rule] = &[
    stated(
        Kind::Format,
        "From now on, write every date as DD.MM.YYYY.",
        "DD.MM.YYYY",
        &[
            "What date does the Berlin conference start?",
            "Remind me of the date of Anna's wedding.",
            "On what date was the hotel invoice issued?",
            "Which date is our apartment lease over?",
        ],
    ),
    correction(
        Kind::Format,
        "What's the weather in Rome tomorrow?",
        "Please always give temperatures in Celsius, never Fahrenheit.",
        "Celsius",
        &[
            "How will the weather be in Lisbon on Saturday?",
            "Weather check for Kyoto tomorrow morning.",
            "Is the weather in Chicago good for a run tonight?",
            "What weather should I pack for in Oslo next week?",
        ],
    ),
    stated(
        Kind::Format,
        "From now on, show money amounts with the code after the number, like 12.50 EUR.",
        "12.50 EUR",
        &[
            "How much money did we spend on travel last month?",
            "What is the total amount on the plumber's bill?",
            "How much money is left in the team budget?",
            "Add up the amounts on these three receipts.",
        ],
    ),
    stated(
        Kind::Format,
        "From now on, whenever you compare options, put them in a Markdown table.",
        "Markdown table",
        &[
            "Compare Postgres and MySQL for a small web shop.",
            "Kindle or Kobo, which suits me better? Compare them.",
            "Compare the three phone plans I sent you.",
            "Help me compare renting versus buying a flat in Lyon.",
        ],
    ),
    stated(
        Kind::Format,
        "Always use metric units for distances, kilometres not miles.",
        "kilometres",
        &[
            "What's the driving distance from Paris to Lyon?",
            "Tell me the distance of a marathon race.",
            "What distance is the airport from the old town?",
            "Estimate the walking distance between our two hotels.",
        ],
    ),
    correction(
        Kind::Naming,
        "Write a Python function that counts words in a file.",
        "Always give every Python function type hints and a one-line docstring.",
        "one-line docstring",
        &[
            "Python code to check whether a string is a palindrome?",
            "Give me a Python helper that merges two dicts.",
            "I need Python that reads a CSV into a list of rows.",
            "Show a small Python retry wrapper for flaky HTTP calls.",
        ],
    ),
    stated(
        Kind::Naming,
        "From now on, name git branches as type/ticket-summary, e.g. feat/ENG-42-login.",
        "type/ticket-summary",
        &[
            "What branch should I create for the billing bug ENG-88?",
            "Suggest a branch for adding dark mode.",
            "I need a new branch for the CSV export work.",
            "Create a branch for issue 120 about slow search.",
        ],
    ),
    stated(
        Kind::Naming,
        "Always start report file names with the ISO date, like 2026-12-03-sales.md.",
        "2026-12-03-sales.md",
        &[
            "What should I call the report for the Q3 review?",
            "I'm saving the weekly churn report now, how should I name it?",
            "Suggest how to name the incident report document.",
            "Name the report on last month's ad spend.",
        ],
    ),
    stated(
        Kind::Naming,
        "Name every test in the form it_should_X_when_Y.",
        "it_should_X_when_Y",
        &[
            "Write a unit test for the shopping cart total.",
            "Add a test that covers an empty input list.",
            "I need tests for the password reset flow.",
            "Test the retry logic of the uploader.",
        ],
    ),
    stated(
        Kind::Naming,
        "From now on, CSS class names follow BEM, like card__title--active.",
        "BEM, like card__title--active",
        &[
            "Style a pricing card with CSS.",
            "Write the CSS for a navigation bar.",
            "CSS for a modal dialog with a close button?",
            "Give me CSS that highlights the selected tab.",
        ],
    ),
    stated(
        Kind::Workflow,
        "Always back up a config file before you edit it, as a copy named <file>.bak.",
        "<file>.bak",
        &[
            "Change the nginx config to listen on port 8080.",
            "Update the redis config to allow more memory.",
            "Turn on debug logging in the app's config.",
            "Edit my ssh config to add the build server.",
        ],
    ),
    correction(
        Kind::Workflow,
        "Commit the changes to the parser.",
        "No, always run cargo nextest run before any commit and tell me the result.",
        "cargo nextest",
        &[
            "Commit what we have so far on the lexer.",
            "Please commit the refactor of the settings loader.",
            "Go ahead and commit the fix for issue 31.",
            "Make a commit with the new CLI flag.",
        ],
    ),
    stated(
        Kind::Workflow,
        "Every time you finish a feature, add a line to CHANGELOG.md under Unreleased.",
        "CHANGELOG.md",
        &[
            "The export feature is done, wrap it up.",
            "We just completed the search feature, what's next?",
            "Dark mode feature is complete. Anything left to do?",
            "Done with the login feature, close it out.",
        ],
    ),
    stated(
        Kind::Workflow,
        "Before deleting anything, always list what would go and wait for my OK.",
        "wait for my OK",
        &[
            "Delete the old log files in /var/tmp.",
            "Delete all git branches merged into main.",
            "Delete the unused S3 buckets in staging.",
            "Delete temp files older than a week.",
        ],
    ),
    stated(
        Kind::Workflow,
        "From now on, pull request descriptions must include a Testing section.",
        "Testing section",
        &[
            "Draft the pull request text for the caching change.",
            "Write up the pull request for the new API endpoint.",
            "Prepare a pull request summary for the logging cleanup.",
            "Open a pull request for the timezone fix, with a good blurb.",
        ],
    ),
    correction(
        Kind::Tone,
        "Write an email to a client about the delayed shipment.",
        "Too casual. Emails to clients must be formal and end with Kind regards, Dana.",
        "Kind regards, Dana",
        &[
            "Draft an email to a client explaining the price increase.",
            "Email our client that the signed contract is attached.",
            "Send a client a short email rescheduling Friday's call.",
            "Write to the client by email about the missing payment.",
        ],
    ),
    stated(
        Kind::Tone,
        "Always keep status updates to three bullet points at most.",
        "three bullet points",
        &[
            "Give me a status update on the migration for the team.",
            "Write my status update for tomorrow's standup.",
            "What's a good status update on the hiring pipeline?",
            "Status update for the client portal project, please.",
        ],
    ),
    stated(
        Kind::Tone,
        "Never apologise in customer support replies; state the fix directly.",
        "Never apologise",
        &[
            "Answer this support ticket: the app crashes on login.",
            "Reply to a customer whose order arrived broken.",
            "Respond to the support request about a double charge.",
            "A customer can't reset the password, what do I tell them?",
        ],
    ),
    stated(
        Kind::Language,
        "From now on, write all messages to my landlord in French.",
        "in French",
        &[
            "Tell my landlord the heating is broken.",
            "Ask the landlord when the rent contract ends.",
            "Write a note to the landlord about the leaking tap.",
            "Let my landlord know I'm moving out in March.",
        ],
    ),
    stated(
        Kind::Language,
        "When translating, always keep product names in English and add a glossary.",
        "add a glossary",
        &[
            "Translate this product page into Italian.",
            "Translate the release notes to Japanese.",
            "Can you translate the onboarding email into Dutch?",
            "Translate our FAQ into Portuguese.",
        ],
    ),
    stated(
        Kind::Language,
        "Always write code comments in British English.",
        "British English",
        &[
            "Add comments to this sorting function.",
            "Comment the tricky parts of the cache eviction code.",
            "Explain this regex in a comment above it.",
            "Put a short comment on each step of the deploy script.",
        ],
    ),
    stated(
        Kind::Tool,
        "Use ripgrep instead of grep whenever you search the codebase.",
        "ripgrep",
        &[
            "Find every place the codebase calls parse_config.",
            "Look for TODO markers across the codebase.",
            "Where in the codebase is the retry limit set?",
            "List uses of unwrap in our codebase.",
        ],
    ),
    stated(
        Kind::Tool,
        "For any JSON processing in the shell, always use jq with the -c flag.",
        "jq with the -c flag",
        &[
            "Pull the ids out of this JSON response in bash.",
            "Pretty-print the API's JSON output from a terminal.",
            "Count the items in a JSON array from a shell script.",
            "Filter a JSON log file for error entries on the command line.",
        ],
    ),
    stated(
        Kind::Tool,
        "Install Python packages with poetry add, never pip install.",
        "poetry add",
        &[
            "How do I add pandas to this project?",
            "Set up pytest so I can run the tests here.",
            "I need the httpx package in my environment.",
            "Get numpy and scipy installed for the notebook.",
        ],
    ),
];

/// Tasks no rule is about.
pub const UNRELATED: &[&str] = &[
    "Suggest a name for my new cat.",
    "What's a good recipe for lentil soup?",
    "Explain how photosynthesis works.",
    "Recommend three science fiction novels.",
    "How do I tie a bowline knot?",
    "What is the capital of Australia?",
    "Give me a 20-minute bodyweight workout.",
    "Summarise the plot of Hamlet.",
    "How do vaccines train the immune system?",
    "Write a haiku about autumn leaves.",
    "What's the difference between a virus and a bacterium?",
    "Plan a three-day itinerary for Porto.",
    "How do I fix a squeaky door hinge?",
    "Explain recursion to a ten-year-old.",
    "What causes the northern lights?",
    "Suggest a board game for six players.",
    "How do I care for a fiddle leaf fig?",
    "What's a good way to learn chess openings?",
    "Why is the sky blue?",
    "Give me tips for a job interview.",
    "How does compound interest work?",
    "Recommend a podcast about ancient history.",
    "What should I cook for a vegetarian dinner party?",
    "Explain the offside rule in football.",
];

/// Lowercase content words with a light plural/suffix stem, for counting what a task shares
/// with a rule. Deliberately simple: it only has to be the same on both sides.
pub fn content_words(text: &str) -> BTreeSet<String> {
    const STOP: &[&str] = &[
        "a", "an", "the", "and", "or", "to", "of", "in", "on", "for", "with", "as", "at", "by",
        "is", "are", "be", "it", "its", "my", "me", "i", "you", "your", "we", "our", "us", "this",
        "that", "what", "how", "which", "when", "do", "does", "did", "can", "could", "should",
        "please", "from", "now", "always", "never", "every", "any", "all", "not", "no", "before",
        "after", "like", "e", "g", "s", "t", "m", "give", "tell", "write", "about", "so", "far",
        "there", "here", "would", "will", "must", "into", "than", "whenever", "them", "they",
    ];
    text.split(|c: char| !c.is_alphanumeric())
        .map(str::to_lowercase)
        .filter(|w| !w.is_empty() && !STOP.contains(&w.as_str()))
        .map(|w| {
            let w = w.strip_suffix("es").filter(|s| s.len() > 3).unwrap_or(&w);
            let w = w.strip_suffix('s').filter(|s| s.len() > 3).unwrap_or(w);
            let w = w.strip_suffix("ing").filter(|s| s.len() > 3).unwrap_or(w);
            w.strip_suffix('e')
                .filter(|s| s.len() > 3)
                .unwrap_or(w)
                .to_string()
        })
        .collect()
}

/// Content words a task shares with its rule's statement.
pub fn shared_words(rule: &Rule, task: &str) -> usize {
    content_words(rule.statement)
        .intersection(&content_words(task))
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scenario_meets_the_benchmark_brief() {
        assert!(RULES.len() >= 20, "{} rules", RULES.len());
        assert!(UNRELATED.len() >= 20);
        let kinds: BTreeSet<Kind> = RULES.iter().map(|r| r.kind).collect();
        assert_eq!(kinds.len(), 6, "every kind of rule: {kinds:?}");
        assert!(RULES.iter().filter(|r| r.corrects.is_some()).count() >= 3);
        for r in RULES {
            assert!(r.tasks.len() >= 4, "{}", r.statement);
            assert!(r.statement.contains(r.marker), "{}", r.statement);
            for t in r.tasks {
                let shared = shared_words(r, t);
                assert!(
                    shared <= 2,
                    "{t:?} shares {shared} words with {:?}",
                    r.statement
                );
            }
        }
    }

    #[test]
    fn no_task_carries_a_marker_so_only_the_rule_can_supply_it() {
        let tasks = RULES
            .iter()
            .flat_map(|r| r.tasks.iter().chain(r.corrects.iter()))
            .chain(UNRELATED);
        for t in tasks {
            for r in RULES {
                assert!(!t.contains(r.marker), "{t:?} holds {:?}", r.marker);
            }
        }
    }
}
