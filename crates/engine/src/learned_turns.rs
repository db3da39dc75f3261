//! What a learning job reads: a session's successful main turns after the last one it
//! already learned from. Each job keeps its own mark (`<job>.<session>` in the store's state),
//! so skill evolution and memory extraction move independently.

use metaclaw_store::{Store, TurnRow};

/// The mark's key for `job` (`skills.evolved_through`, `memory.extracted_through`).
pub fn mark_key(job: &str, session: &str) -> String {
    format!("{job}.{session}")
}

/// Successful (2xx, no error) main turns of `session` after `job`'s mark, oldest first. Blocking.
pub fn after_mark(store: &Store, job: &str, session: &str) -> Result<Vec<TurnRow>, String> {
    let done: Option<u64> = store
        .state_get(&mark_key(job, session))
        .map_err(|e| e.to_string())?
        .and_then(|v| v.parse().ok());
    let turns = store
        .session_turns_after(session, done)
        .map_err(|e| e.to_string())?;
    Ok(turns
        .into_iter()
        // A turn with an error (a stream cut short, a client gone) holds a partial reply:
        // nothing to learn from, even when its status was 200.
        .filter(|t| t.turn_type == "main" && (200..300).contains(&t.status) && t.error.is_none())
        .collect())
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
            overhead_ms: 0.0,
            ttft_ms: None,
            total_ms: 1.0,
            created_at_ms: at,
            skill_generation: 0,
            injected_skills: Vec::new(),
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
        let kept: Vec<i64> = after_mark(&store, "memory.extracted_through", "s")
            .unwrap()
            .iter()
            .map(|t| t.created_at_ms)
            .collect();
        assert_eq!(kept, [1, 4]);
        // Past the mark (turn index 0 learned from), only newer turns are read.
        store
            .state_set(&mark_key("memory.extracted_through", "s"), "0")
            .unwrap();
        let after: Vec<u64> = after_mark(&store, "memory.extracted_through", "s")
            .unwrap()
            .iter()
            .map(|t| t.turn_index)
            .collect();
        assert_eq!(after, [3]);
    }
}
