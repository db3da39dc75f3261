//! The conversations and questions, as stored in `tests/data/recall/*.json`.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};

/// Where the conversations are kept, in this crate.
pub fn default_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("data/recall")
}

#[derive(Debug, Clone, Deserialize)]
pub struct Conversation {
    /// `c1`, `c2` …
    pub id: String,
    /// `en`, `zh` or `mixed`.
    pub lang: String,
    pub title: String,
    pub sessions: Vec<Session>,
    pub questions: Vec<Question>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Session {
    pub id: String,
    /// `YYYY-MM-DD`.
    pub date: String,
    pub turns: Vec<Turn>,
}

/// One user message and the assistant's reply.
#[derive(Debug, Clone, Deserialize)]
pub struct Turn {
    /// `c1-s3-t7`.
    pub id: String,
    pub user: String,
    pub assistant: String,
}

impl Turn {
    /// The text stored as the turn's memory unit (and indexed by the baseline).
    pub fn text(&self) -> String {
        format!("User: {}\nAssistant: {}", self.user, self.assistant)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Category {
    /// One fact, asked with words of the turn that states it.
    Single,
    /// Two or more facts from different turns.
    Multi,
    /// When something happened or changed, or what was true as of a date.
    Time,
    /// One fact, asked with (almost) none of the content words of its turn.
    Paraphrase,
}

impl Category {
    pub const ALL: [Category; 4] = [
        Category::Single,
        Category::Multi,
        Category::Time,
        Category::Paraphrase,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Category::Single => "single",
            Category::Multi => "multi",
            Category::Time => "time",
            Category::Paraphrase => "paraphrase",
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
pub struct Question {
    pub id: String,
    pub category: Category,
    /// The question's language: `en` or `zh`.
    pub lang: String,
    /// Asked in another language than its evidence is (mostly) written in.
    #[serde(default)]
    pub cross_lingual: bool,
    pub question: String,
    /// Ids of the turns that hold the answer.
    pub evidence: Vec<String>,
    /// For people reading the data; not scored.
    #[serde(default)]
    pub answer: String,
}

impl Conversation {
    pub fn turns(&self) -> impl Iterator<Item = (&Session, &Turn)> {
        self.sessions
            .iter()
            .flat_map(|s| s.turns.iter().map(move |t| (s, t)))
    }

    /// Every evidence id names a turn, ids are unique, dates parse, and every question has
    /// evidence.
    pub fn validate(&self) -> Result<()> {
        let mut ids = HashSet::new();
        for s in &self.sessions {
            day_ms(&s.date).with_context(|| format!("{}: session {}", self.id, s.id))?;
            for t in &s.turns {
                if !ids.insert(t.id.as_str()) {
                    bail!("{}: turn id {} used twice", self.id, t.id);
                }
            }
        }
        for q in &self.questions {
            if q.evidence.is_empty() {
                bail!("{}: question {} has no evidence", self.id, q.id);
            }
            if let Some(e) = q.evidence.iter().find(|e| !ids.contains(e.as_str())) {
                bail!("{}: question {} names unknown turn {e}", self.id, q.id);
            }
        }
        Ok(())
    }
}

/// Every `*.json` in `dir`, sorted by file name, validated.
pub fn load_dir(dir: &Path) -> Result<Vec<Conversation>> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    paths.sort();
    if paths.is_empty() {
        bail!("no conversations (*.json) in {}", dir.display());
    }
    paths
        .iter()
        .map(|p| {
            let text =
                std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))?;
            let conv: Conversation =
                serde_json::from_str(&text).with_context(|| format!("parsing {}", p.display()))?;
            conv.validate()?;
            Ok(conv)
        })
        .collect()
}

const DAY_MS: i64 = 86_400_000;

/// Midnight UTC of an ISO date (`YYYY-MM-DD`), in milliseconds since the epoch.
pub fn day_ms(date: &str) -> Result<i64> {
    let parts: Vec<&str> = date.split('-').collect();
    let [y, m, d] = parts.as_slice() else {
        bail!("bad date {date:?}, want YYYY-MM-DD");
    };
    let (y, m, d): (i64, i64, i64) = (y.parse()?, m.parse()?, d.parse()?);
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) {
        bail!("bad date {date:?}");
    }
    // Days from civil (proleptic Gregorian), after H. Hinnant.
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    Ok((era * 146_097 + doe - 719_468) * DAY_MS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_days_since_the_epoch() {
        assert_eq!(day_ms("1970-01-01").unwrap(), 0);
        assert_eq!(day_ms("2024-03-01").unwrap(), 1_709_251_200_000);
        assert!(day_ms("2024-13-01").is_err());
    }

    #[test]
    fn the_stored_conversations_load() {
        let convs = load_dir(&default_dir()).unwrap();
        assert!(convs.len() >= 6);
        assert!(convs.iter().map(|c| c.questions.len()).sum::<usize>() >= 200);
    }
}
