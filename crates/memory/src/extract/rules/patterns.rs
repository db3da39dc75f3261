//! The phrase table of the rule-based extractor, in five languages.
//!
//! A trigger matches only at the start of a sentence (after fillers such as "ok," or
//! "please"), never in the middle: "Always use UTC." is a rule, "I always forget" is not.

use crate::unit::Kind;

/// How the content sentence is written.
#[derive(Debug, Clone, Copy)]
pub enum Form {
    /// `{}` replaced by the object: "I prefer tabs" → "The user prefers tabs."
    Template(&'static str),
    /// The user's own words from the trigger on: "please always use UTC" → "Always use UTC."
    Imperative,
}

/// Where the fact key comes from.
#[derive(Debug, Clone, Copy)]
pub enum Key {
    /// The prefix plus the first significant ASCII words of the object: `pref:tab`.
    Prefix(&'static str),
    /// One slot whatever the value: a new name replaces the old one.
    Fixed(&'static str),
}

#[derive(Debug, Clone, Copy)]
pub struct Pattern {
    /// Lowercase; matched case-insensitively. Longer triggers of a language come first.
    pub trigger: &'static str,
    pub kind: Kind,
    pub key: Key,
    pub form: Form,
    /// Objects starting with one of these words are not facts ("never mind").
    pub deny: &'static [&'static str],
    /// At most this many words in the object (0 = no limit).
    pub max_words: usize,
}

const fn p(trigger: &'static str, kind: Kind, key: Key, form: Form) -> Pattern {
    Pattern {
        trigger,
        kind,
        key,
        form,
        deny: &[],
        max_words: 0,
    }
}

const PREF: Key = Key::Prefix("pref");
const PROJECT: Key = Key::Prefix("project");
const WORKFLOW: Key = Key::Prefix("workflow");
const FACT: Key = Key::Prefix("fact");
use Form::{Imperative, Template};
use Kind::{Preference, ProceduralObservation as Procedural, ProjectState, Semantic};

pub const PATTERNS: &[Pattern] = &[
    // English
    p(
        "i'd prefer",
        Preference,
        PREF,
        Template("The user prefers {}."),
    ),
    p(
        "i would prefer",
        Preference,
        PREF,
        Template("The user prefers {}."),
    ),
    p(
        "i prefer",
        Preference,
        PREF,
        Template("The user prefers {}."),
    ),
    p(
        "my preference is",
        Preference,
        PREF,
        Template("The user prefers {}."),
    ),
    p("always", Procedural, WORKFLOW, Imperative),
    Pattern {
        deny: &["mind"],
        ..p("never", Procedural, WORKFLOW, Imperative)
    },
    p(
        "remember that",
        Semantic,
        FACT,
        Template("The user noted that {}."),
    ),
    p(
        "keep in mind that",
        Semantic,
        FACT,
        Template("The user noted that {}."),
    ),
    p(
        "we're using",
        ProjectState,
        PROJECT,
        Template("The user's project uses {}."),
    ),
    p(
        "we are using",
        ProjectState,
        PROJECT,
        Template("The user's project uses {}."),
    ),
    p(
        "we use",
        ProjectState,
        PROJECT,
        Template("The user's project uses {}."),
    ),
    p(
        "our stack is",
        ProjectState,
        PROJECT,
        Template("The user's stack is {}."),
    ),
    p("from now on", Procedural, WORKFLOW, Imperative),
    Pattern {
        deny: &[
            "back", "when", "if", "later", "tomorrow", "tonight", "at", "on",
        ],
        max_words: 4,
        ..p(
            "call me",
            Preference,
            Key::Fixed("pref:name"),
            Template("The user wants to be called {}."),
        )
    },
    // Chinese
    p("我更喜欢", Preference, PREF, Template("用户更喜欢{}。")),
    p("我喜欢", Preference, PREF, Template("用户喜欢{}。")),
    p("请总是", Procedural, WORKFLOW, Imperative),
    p("总是", Procedural, WORKFLOW, Imperative),
    p("始终", Procedural, WORKFLOW, Imperative),
    p("不要", Procedural, WORKFLOW, Imperative),
    p("记住", Semantic, FACT, Template("用户要求记住：{}。")),
    p(
        "我们使用",
        ProjectState,
        PROJECT,
        Template("用户的项目使用{}。"),
    ),
    p(
        "我们用",
        ProjectState,
        PROJECT,
        Template("用户的项目使用{}。"),
    ),
    p("以后", Procedural, WORKFLOW, Imperative),
    // Spanish
    p(
        "prefiero",
        Preference,
        PREF,
        Template("El usuario prefiere {}."),
    ),
    p("siempre", Procedural, WORKFLOW, Imperative),
    p("nunca", Procedural, WORKFLOW, Imperative),
    p(
        "recuerda que",
        Semantic,
        FACT,
        Template("El usuario indicó que {}."),
    ),
    p(
        "usamos",
        ProjectState,
        PROJECT,
        Template("El proyecto del usuario usa {}."),
    ),
    // French
    p(
        "je préfère",
        Preference,
        PREF,
        Template("L'utilisateur préfère {}."),
    ),
    p("toujours", Procedural, WORKFLOW, Imperative),
    p("ne jamais", Procedural, WORKFLOW, Imperative),
    p("jamais", Procedural, WORKFLOW, Imperative),
    p(
        "souviens-toi que",
        Semantic,
        FACT,
        Template("L'utilisateur a précisé que {}."),
    ),
    p(
        "souvenez-vous que",
        Semantic,
        FACT,
        Template("L'utilisateur a précisé que {}."),
    ),
    p(
        "nous utilisons",
        ProjectState,
        PROJECT,
        Template("Le projet de l'utilisateur utilise {}."),
    ),
    // German
    p(
        "ich bevorzuge",
        Preference,
        PREF,
        Template("Der Nutzer bevorzugt {}."),
    ),
    Pattern {
        deny: &["wenn", "noch", "mehr", "wieder"],
        ..p("immer", Procedural, WORKFLOW, Imperative)
    },
    p("niemals", Procedural, WORKFLOW, Imperative),
    p(
        "merk dir",
        Semantic,
        FACT,
        Template("Der Nutzer hat festgehalten: {}."),
    ),
    p(
        "merke dir",
        Semantic,
        FACT,
        Template("Der Nutzer hat festgehalten: {}."),
    ),
    p(
        "wir verwenden",
        ProjectState,
        PROJECT,
        Template("Das Projekt des Nutzers verwendet {}."),
    ),
];

/// Words before a trigger that do not change the sentence: "ok, also please always …".
pub const FILLERS: &[&str] = &[
    "ok",
    "okay",
    "also",
    "and",
    "btw",
    "by the way",
    "oh",
    "hey",
    "note",
    "so",
    "please",
    "pls",
    "por favor",
    "además",
    "y",
    "s'il te plaît",
    "s'il vous plaît",
    "et",
    "bitte",
    "und",
    "außerdem",
    "另外",
    "还有",
    "请",
];

/// Leading words dropped from an object: "merk dir, dass X" → "X".
pub const OBJECT_LEADS: &[&str] = &["dass", "that", "que", ":", "："];
