//! What a learning job reads: a session's successful main turns after the last one it
//! already learned from. Each job keeps its own mark (`<job>.<session>` in the store's state),
//! so skill evolution and memory extraction move independently; `digest` reads each turn as
//! they see it (the user's own words, the answer, the tool errors).

mod digest;

pub use digest::digests;
use metaclaw_store::{End, Store, StoreError, TurnRange, TurnRow};

/// The mark's key for `job` (`skills.evolved_through`, `memory.extracted_through`).
pub fn mark_key(job: &str, session: &str) -> String {
    format!("{job}.{session}")
}

/// Turns read from the database at once for a job's older backlog.
const PAGE: usize = 200;

/// What a job reads of one session: the newest learnable turns after its mark, and how many
/// older ones wait before them (read page by page, never all at once).
#[derive(Debug)]
pub struct Backlog {
    /// Oldest first.
    pub newest: Vec<TurnRow>,
    /// Learnable turns in the range older than `newest`.
    pub older: usize,
    range: TurnRange,
}

/// Successful (2xx, no error) main turns of `session` after `job`'s mark and up to `through`
/// (a failed stretch is offered again as it was, not grown): the newest `newest` of them,
/// and a count of the rest. Blocking.
pub fn backlog(
    store: &Store,
    job: &str,
    session: &str,
    through: Option<u64>,
    newest: usize,
) -> Result<Backlog, StoreError> {
    let after: Option<u64> = store
        .state_get(&mark_key(job, session))?
        .and_then(|v| v.parse().ok());
    let range = TurnRange { after, through };
    let rows = store.learnable_turns(session, range, newest, End::Newest)?;
    let total = store.count_learnable_turns(session, range)?;
    Ok(Backlog {
        older: total.saturating_sub(rows.len()),
        newest: rows,
        range,
    })
}

impl Backlog {
    /// The turn a job that read this backlog has learned through.
    pub fn through(&self) -> Option<u64> {
        self.newest.last().map(|t| t.turn_index)
    }

    /// Hands the older turns to `f` in pages, oldest first; each page is dropped before the
    /// next is read, so a long backlog costs one page of memory. Blocking.
    pub fn for_each_older_page(
        &self,
        store: &Store,
        session: &str,
        mut f: impl FnMut(Vec<TurnRow>),
    ) -> Result<(), StoreError> {
        let Some(first) = self.newest.first().filter(|_| self.older > 0) else {
            return Ok(());
        };
        let Some(before) = first.turn_index.checked_sub(1) else {
            return Ok(());
        };
        let mut range = TurnRange {
            after: self.range.after,
            through: Some(before),
        };
        loop {
            let page = store.learnable_turns(session, range, PAGE, End::Oldest)?;
            let Some(last) = page.last() else { break };
            range.after = Some(last.turn_index);
            let full = page.len() == PAGE;
            f(page);
            if !full {
                break;
            }
        }
        Ok(())
    }
}

/// Turns sent to a learning model in one call, at most.
pub const WINDOW_TURNS: usize = 20;
/// Bytes of turn text sent in one call, at most (the newest turn always goes).
pub const WINDOW_BYTES: usize = 48 * 1024;

/// `items` (oldest first) split into those older than the window and the window itself:
/// the newest that fit [`WINDOW_TURNS`] and [`WINDOW_BYTES`] by `size`. Newest win, so a
/// backlog never grows what one call sends.
pub fn newest_window<T>(mut items: Vec<T>, size: impl Fn(&T) -> usize) -> (Vec<T>, Vec<T>) {
    let mut bytes = 0usize;
    let mut keep = 0usize;
    for item in items.iter().rev() {
        bytes = bytes.saturating_add(size(item));
        if keep >= WINDOW_TURNS || (keep > 0 && bytes > WINDOW_BYTES) {
            break;
        }
        keep += 1;
    }
    let window = items.split_off(items.len() - keep);
    (items, window)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_window_keeps_the_newest_within_count_and_bytes() {
        let (older, window) = newest_window((0..50).collect::<Vec<u32>>(), |_| 10);
        assert_eq!(older.len(), 30);
        assert_eq!(window, (30..50).collect::<Vec<_>>());
        let (older, window) = newest_window(vec![1, 2, 3], |_| WINDOW_BYTES / 2);
        assert_eq!((older, window), (vec![1], vec![2, 3]));
        let (older, window) = newest_window(vec![1, 2], |_| WINDOW_BYTES * 3);
        assert_eq!(
            (older, window),
            (vec![1], vec![2]),
            "the newest always goes"
        );
        let (older, window) = newest_window(Vec::<u8>::new(), |_| 1);
        assert!(older.is_empty() && window.is_empty());
    }

    #[test]
    fn turns_that_failed_or_were_cut_short_are_not_learned_from() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("m.db")).unwrap();
        let turn = |at: i64, status: u16, error: Option<&str>| metaclaw_store::NewTurn {
            session_id: "s".into(),
            turn_type: "main".into(),
            scope: "default".into(),
            client_protocol: "openai".into(),
            upstream_protocol: "openai".into(),
            upstream: "primary".into(),
            model: "m".into(),
            request_json: "{}".into(),
            reply_json: None,
            status,
            error: error.map(str::to_string),
            input_tokens: None,
            output_tokens: None,
            cache_read_tokens: None,
            cache_write_tokens: None,
            overhead_ms: 0.0,
            ttft_ms: None,
            total_ms: 1.0,
            created_at_ms: at,
            skill_generation: 0,
            injected_skills: Vec::new(),
            injected_memories: Vec::new(),
            injected_tokens: None,
            block_tokens: None,
            held_out: false,
        };
        store
            .insert_turns(&[
                turn(1, 200, None),
                turn(
                    2,
                    200,
                    Some("the upstream closed the stream before its final event"),
                ),
                turn(3, 500, Some("upstream answered 500")),
                turn(4, 200, None),
            ])
            .unwrap();
        let read = backlog(&store, "memory.extracted_through", "s", None, 10).unwrap();
        let kept: Vec<i64> = read.newest.iter().map(|t| t.created_at_ms).collect();
        assert_eq!(kept, [1, 4]);
        assert_eq!(read.older, 0);
        // Past the mark (turn index 0 learned from), only newer turns are read.
        store
            .state_set(&mark_key("memory.extracted_through", "s"), "0")
            .unwrap();
        let after: Vec<u64> = backlog(&store, "memory.extracted_through", "s", None, 10)
            .unwrap()
            .newest
            .iter()
            .map(|t| t.turn_index)
            .collect();
        assert_eq!(after, [3]);
    }

    #[test]
    fn a_long_backlog_is_read_newest_first_then_in_pages() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("m.db")).unwrap();
        let turns: Vec<_> = (0..1000)
            .map(|i| metaclaw_store::NewTurn {
                session_id: "s".into(),
                turn_type: "main".into(),
                scope: "default".into(),
                client_protocol: "openai".into(),
                upstream_protocol: "openai".into(),
                upstream: "u".into(),
                model: "m".into(),
                request_json: "{}".into(),
                reply_json: None,
                // Every tenth failed: never read, never counted.
                status: if i % 10 == 9 { 500 } else { 200 },
                error: None,
                input_tokens: None,
                output_tokens: None,
                cache_read_tokens: None,
                cache_write_tokens: None,
                overhead_ms: 0.0,
                ttft_ms: None,
                total_ms: 0.0,
                created_at_ms: i,
                skill_generation: 0,
                injected_skills: Vec::new(),
                injected_memories: Vec::new(),
                injected_tokens: None,
                block_tokens: None,
                held_out: false,
            })
            .collect();
        store.insert_turns(&turns).unwrap();
        store.state_set(&mark_key("job", "s"), "99").unwrap();
        // Through 899 (a failed stretch offered again as it was): turns 100..=899.
        let read = backlog(&store, "job", "s", Some(899), 20).unwrap();
        let newest: Vec<u64> = read.newest.iter().map(|t| t.turn_index).collect();
        let expected: Vec<u64> = (100..=899).filter(|i| i % 10 != 9).collect();
        assert_eq!(newest, expected[expected.len() - 20..]);
        assert_eq!(read.through(), Some(898));
        assert_eq!(read.older, expected.len() - 20);
        let mut pages = Vec::new();
        let mut older = Vec::new();
        read.for_each_older_page(&store, "s", |page| {
            pages.push(page.len());
            older.extend(page.iter().map(|t| t.turn_index));
        })
        .unwrap();
        assert_eq!(older, expected[..expected.len() - 20]);
        assert!(pages.iter().all(|&n| n <= PAGE), "{pages:?}");
    }
}
