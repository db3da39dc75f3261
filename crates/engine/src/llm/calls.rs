//! What learning costs the user: every call the engine makes to a provider for learning
//! (evolution, extraction, embeddings, judge), counted with the tokens the provider's
//! `usage` reported, since the engine started and for the current UTC day.
//!
//! One process-wide ledger: calls come from many workers (and from crates that only get a
//! callback), and status reads them all at once. Today's counts survive a restart: the
//! recorder (the engine's writer) saves them with its batches and restores them at start. It
//! also adds what changed since its last batch to the database's per-day, per-purpose counts
//! (`learning_usage`), which keep every day.
//!
//! Tokens follow the convention of recorded turns: `input_tokens` is the whole prompt, cache
//! reads and writes included.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};

use metaclaw_store::LearningUsage;
use metaclaw_wire::usage::{usage_anthropic, usage_openai};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Why a call was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Purpose {
    Evolution,
    Extraction,
    Embeddings,
    Judge,
    /// On-policy distillation's teacher scoring the trained model's tokens.
    Distillation,
    Other,
}

impl Purpose {
    pub fn as_str(self) -> &'static str {
        match self {
            Purpose::Evolution => "evolution",
            Purpose::Extraction => "extraction",
            Purpose::Embeddings => "embeddings",
            Purpose::Judge => "judge",
            Purpose::Distillation => "distillation",
            Purpose::Other => "other",
        }
    }
}

/// Calls and the tokens they cost.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallCounts {
    pub calls: u64,
    /// Calls that got no usable HTTP answer (network, timeout, error status, not JSON).
    pub failed: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    #[serde(default)]
    pub cache_read_tokens: u64,
    #[serde(default)]
    pub cache_write_tokens: u64,
}

impl CallCounts {
    fn add(&mut self, ok: bool, usage: Usage) {
        self.calls += 1;
        self.failed += u64::from(!ok);
        self.input_tokens += usage.input;
        self.output_tokens += usage.output;
        self.cache_read_tokens += usage.cache_read;
        self.cache_write_tokens += usage.cache_write;
    }

    fn merge(&mut self, other: &CallCounts) {
        self.calls += other.calls;
        self.failed += other.failed;
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.cache_read_tokens += other.cache_read_tokens;
        self.cache_write_tokens += other.cache_write_tokens;
    }
}

/// The ledger as status shows it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LearningCalls {
    pub since_start: CallCounts,
    /// The current UTC day (`YYYY-MM-DD`).
    pub day: String,
    pub today: CallCounts,
    /// Since start, per purpose (`evolution`, `extraction`, `embeddings`, `judge`, `other`).
    pub by_purpose: BTreeMap<String, CallCounts>,
    /// Per (day, purpose), what the database has not been given yet.
    #[serde(skip)]
    unsaved: BTreeMap<(String, String), CallCounts>,
}

/// Tokens a provider reported for one call.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    /// The whole prompt, cache reads and writes included.
    pub input: u64,
    pub output: u64,
    pub cache_read: u64,
    pub cache_write: u64,
}

impl Usage {
    /// `usage` of an OpenAI (`prompt_tokens`, `prompt_tokens_details.cached_tokens`) or
    /// Anthropic (`input_tokens` plus `cache_read_input_tokens` and
    /// `cache_creation_input_tokens`) answer, or of an embeddings answer
    /// (`prompt_tokens` only); zero where absent.
    pub fn of(reply: &Value) -> Usage {
        let openai = reply
            .get("usage")
            .is_some_and(|u| u.get("prompt_tokens").is_some());
        let u = if openai {
            usage_openai(reply)
        } else {
            usage_anthropic(reply)
        };
        Usage {
            input: u.input_tokens.unwrap_or(0),
            output: u.output_tokens.unwrap_or(0),
            cache_read: u.cache_read_tokens.unwrap_or(0),
            cache_write: u.cache_write_tokens.unwrap_or(0),
        }
    }
}

/// What changed since the last call, per day and purpose, for the database; taken only once.
pub fn take_unsaved() -> Vec<LearningUsage> {
    LEDGER
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .as_mut()
        .map(LearningCalls::take_unsaved)
        .unwrap_or_default()
}

/// Gives back what [`take_unsaved`] took when the database refused it, for the next try.
pub fn put_back(rows: Vec<LearningUsage>) {
    LEDGER
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .get_or_insert_with(LearningCalls::default)
        .put_back(rows);
}

static LEDGER: Mutex<Option<LearningCalls>> = Mutex::new(None);
/// Calls recorded since start, so a saver can tell whether anything changed.
static RECORDED: AtomicU64 = AtomicU64::new(0);

/// Calls recorded since start (changes whenever the ledger does).
pub fn version() -> u64 {
    RECORDED.load(Ordering::Relaxed)
}

/// What is saved to keep today's counts across a restart: the day and its counts.
pub fn saved_today() -> String {
    let now = snapshot();
    serde_json::json!({"day": now.day, "today": now.today}).to_string()
}

/// Takes back today's counts saved by [`saved_today`] before a restart (another day's are
/// ignored). Call once, at start.
pub fn restore_today(saved: &str) {
    #[derive(Deserialize)]
    struct Saved {
        day: String,
        today: CallCounts,
    }
    let Ok(saved) = serde_json::from_str::<Saved>(saved) else {
        return;
    };
    let mut guard = LEDGER.lock().unwrap_or_else(PoisonError::into_inner);
    let ledger = guard.get_or_insert_with(LearningCalls::default);
    ledger.restore(&today(), &saved.day, saved.today);
}

/// Counts one call. `ok` is false when no usable HTTP answer came back.
pub fn record(purpose: Purpose, ok: bool, usage: Usage) {
    LEDGER
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .get_or_insert_with(LearningCalls::default)
        .record(&today(), purpose, ok, usage);
    RECORDED.fetch_add(1, Ordering::Relaxed);
}

/// The ledger now (today's counts are zero once the day has changed).
pub fn snapshot() -> LearningCalls {
    LEDGER
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone()
        .unwrap_or_default()
        .for_day(&today())
}

impl LearningCalls {
    /// Adds `counts` saved on `day` to today's, when `day` is still today.
    fn restore(&mut self, today: &str, day: &str, counts: CallCounts) {
        if day != today {
            return;
        }
        if self.day != today {
            self.day = today.to_owned();
            self.today = CallCounts::default();
        }
        self.today.merge(&counts);
    }

    fn record(&mut self, day: &str, purpose: Purpose, ok: bool, usage: Usage) {
        if self.day != day {
            self.day = day.to_owned();
            self.today = CallCounts::default();
        }
        self.since_start.add(ok, usage);
        self.today.add(ok, usage);
        self.by_purpose
            .entry(purpose.as_str().to_owned())
            .or_default()
            .add(ok, usage);
        self.unsaved
            .entry((day.to_owned(), purpose.as_str().to_owned()))
            .or_default()
            .add(ok, usage);
    }

    fn take_unsaved(&mut self) -> Vec<LearningUsage> {
        std::mem::take(&mut self.unsaved)
            .into_iter()
            .map(|((day, purpose), c)| LearningUsage {
                day,
                purpose,
                calls: c.calls,
                failed: c.failed,
                input_tokens: c.input_tokens,
                output_tokens: c.output_tokens,
                cache_read_tokens: c.cache_read_tokens,
                cache_write_tokens: c.cache_write_tokens,
            })
            .collect()
    }

    fn put_back(&mut self, rows: Vec<LearningUsage>) {
        for r in rows {
            self.unsaved
                .entry((r.day, r.purpose))
                .or_default()
                .merge(&CallCounts {
                    calls: r.calls,
                    failed: r.failed,
                    input_tokens: r.input_tokens,
                    output_tokens: r.output_tokens,
                    cache_read_tokens: r.cache_read_tokens,
                    cache_write_tokens: r.cache_write_tokens,
                });
        }
    }

    fn for_day(mut self, day: &str) -> LearningCalls {
        if self.day != day {
            self.day = day.to_owned();
            self.today = CallCounts::default();
        }
        self
    }
}

fn today() -> String {
    let d = time::OffsetDateTime::now_utc().date();
    format!("{:04}-{:02}-{:02}", d.year(), u8::from(d.month()), d.day())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn usage_is_read_in_both_protocols() {
        let openai = json!({"usage": {"prompt_tokens": 12, "completion_tokens": 3}});
        assert_eq!(
            Usage::of(&openai),
            Usage {
                input: 12,
                output: 3,
                ..Usage::default()
            }
        );
        let anthropic = json!({"usage": {"input_tokens": 7, "output_tokens": 9}});
        assert_eq!(
            Usage::of(&anthropic),
            Usage {
                input: 7,
                output: 9,
                ..Usage::default()
            }
        );
        assert_eq!(Usage::of(&json!({})), Usage::default());
        // Cache figures, and the whole prompt in both protocols.
        let cached = json!({"usage": {"prompt_tokens": 100, "completion_tokens": 1,
            "prompt_tokens_details": {"cached_tokens": 80}}});
        assert_eq!(
            Usage::of(&cached),
            Usage {
                input: 100,
                output: 1,
                cache_read: 80,
                cache_write: 0
            }
        );
        let cached = json!({"usage": {"input_tokens": 5, "output_tokens": 1,
            "cache_read_input_tokens": 80, "cache_creation_input_tokens": 15}});
        assert_eq!(
            Usage::of(&cached),
            Usage {
                input: 100,
                output: 1,
                cache_read: 80,
                cache_write: 15
            }
        );
        let embeddings = json!({"usage": {"prompt_tokens": 6, "total_tokens": 6}});
        assert_eq!(Usage::of(&embeddings).input, 6);
    }

    #[test]
    fn calls_are_counted_per_purpose_and_day() {
        let usage = Usage {
            input: 10,
            output: 2,
            ..Usage::default()
        };
        let mut ledger = LearningCalls::default();
        ledger.record("2026-01-01", Purpose::Judge, true, usage);
        ledger.record("2026-01-01", Purpose::Judge, false, Usage::default());
        ledger.record("2026-01-01", Purpose::Evolution, true, usage);
        let judge = ledger.by_purpose["judge"];
        assert_eq!((judge.calls, judge.failed, judge.input_tokens), (2, 1, 10));
        assert_eq!(ledger.today.calls, 3);
        assert_eq!(ledger.since_start.output_tokens, 4);
        // A new day starts today's counts again; the totals go on.
        ledger.record("2026-01-02", Purpose::Other, true, usage);
        assert_eq!(ledger.today.calls, 1);
        assert_eq!(ledger.since_start.calls, 4);
        // Per day and purpose, for the database.
        let judge_day = ledger.unsaved[&("2026-01-01".to_owned(), "judge".to_owned())];
        assert_eq!((judge_day.calls, judge_day.failed), (2, 1));
        assert_eq!(ledger.unsaved.len(), 3);
        let later = ledger.for_day("2026-01-03");
        assert_eq!(later.today, CallCounts::default());
        assert_eq!(later.since_start.calls, 4);
    }

    #[test]
    fn unsaved_counts_are_taken_once_and_can_be_given_back() {
        let mut ledger = LearningCalls::default();
        let usage = Usage {
            input: 3,
            cache_read: 2,
            ..Usage::default()
        };
        ledger.record("2026-01-01", Purpose::Embeddings, true, usage);
        ledger.record("2026-01-01", Purpose::Embeddings, false, Usage::default());
        let taken = ledger.take_unsaved();
        assert_eq!(
            taken,
            [LearningUsage {
                day: "2026-01-01".into(),
                purpose: "embeddings".into(),
                calls: 2,
                failed: 1,
                input_tokens: 3,
                output_tokens: 0,
                cache_read_tokens: 2,
                cache_write_tokens: 0,
            }]
        );
        assert!(ledger.take_unsaved().is_empty(), "taken once");
        ledger.put_back(taken.clone());
        ledger.record("2026-01-01", Purpose::Embeddings, true, usage);
        let again = ledger.take_unsaved();
        assert_eq!(again[0].calls, 3);
        assert_eq!(again[0].input_tokens, 6);
    }

    #[test]
    fn only_todays_saved_counts_come_back() {
        let saved = CallCounts {
            calls: 5,
            failed: 1,
            input_tokens: 100,
            output_tokens: 20,
            ..CallCounts::default()
        };
        let mut ledger = LearningCalls::default();
        ledger.restore("2026-01-02", "2026-01-01", saved);
        assert_eq!(
            ledger.today,
            CallCounts::default(),
            "yesterday's are not today's"
        );
        ledger.restore("2026-01-02", "2026-01-02", saved);
        ledger.record("2026-01-02", Purpose::Extraction, true, Usage::default());
        assert_eq!(ledger.today.calls, 6);
        assert_eq!(ledger.today.input_tokens, 100);
        assert_eq!(ledger.since_start.calls, 1, "since start is this run's");
    }

    #[test]
    fn the_process_ledger_counts() {
        let before = snapshot().since_start.calls;
        record(Purpose::Other, true, Usage::default());
        assert!(snapshot().since_start.calls > before);
    }
}
